"""Every public entry that hashes a string, on arbitrary Python strings (lone surrogates included).

The contract (:mod:`hashlib_core.hashing.base`): a string that encodes to UTF-8 is hashed; one that does not (it
holds a lone surrogate) is refused with a ``ValueError`` that names the surrogate and the fix, before it reaches a C
extension (mmh3 kills the interpreter on one) or a library that raises its own error (``UnicodeEncodeError``, the
tokenizers' ``TextInputSequence must be str``). The rolling hash is the one documented exception: it reads code
points, so a lone surrogate is an ordinary character there (``tests/dynamic_embeddings/test_rolling.py``).

A crash here kills the test worker: that is the failure this file guards against.
"""
from __future__ import annotations

from functools import cache
from typing import Any, Callable

import pytest
from hypothesis import given, settings, strategies as st

from hashlib_core.embeddings.catalogue import FAMILIES, build
from hashlib_core.embeddings.codes import mmh3_codes, tfree_word_rows
from hashlib_core.embeddings.dynamic import DynamicHashEmbedding, dynamic_vectors
from hashlib_core.hashing import (KeyedMD5Hasher, MinHashFingerprinter, MMH3MultiHasher, SignatureRegistry,
                                  TrigramLSHHasher, md5_digest, mmh3_bucket)
from hashlib_core.hashing.minhash import FingerprintCache
from hashlib_core.hashing.ngram_md5 import md5_ngram_hash, md5_ngram_hashes_many
from hashlib_core.hashing.projections import PROJECTIONS, TSPProjection
from hashlib_core.hashing.rolling import ngram_hashes_many

#: Any code point, lone surrogates included, mixed with plain letters so that most strings are long enough to have
#: n-grams and a surrogate sits at any position.
ANY_TEXT = st.text(alphabet=st.one_of(st.characters(min_codepoint=0, max_codepoint=0x10FFFF, categories=None),
                                      st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF, categories=None),
                                      st.sampled_from("abc")),
                   min_size=1, max_size=12)


def encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@cache
def _sentence_projector():
    from hashlib_core.papers.pnlp_mixer.projection import SentenceProjector

    return SentenceProjector.from_vocab(["[UNK]", "a", "b", "##a", "##b"], MinHashFingerprinter(num_hashes=8), 16, 4)


#: the families of the catalogue that hash the token strings (the others read ids only)
STRING_FAMILIES = ("hashing-trick", "bloom", "hash-embedding", "ce-concat", "md5-emb", "md5-pool", "md5-add",
                   "md5-proj", "lsh-emb", "gated-signatures", "t-free", "minhash-projection")

ENTRIES: dict[str, Callable[[str], Any]] = {
    "md5_digest": md5_digest,
    "KeyedMD5Hasher.index": lambda s: KeyedMD5Hasher(num_buckets=64).index(s),
    "MMH3MultiHasher.signature": lambda s: MMH3MultiHasher(num_hashes=2, num_buckets=64).signature(s),
    "mmh3_bucket": lambda s: mmh3_bucket(s, 0, 64),
    "SignatureRegistry.register": lambda s: SignatureRegistry(2, 64).register(["z", s]),
    "TrigramLSHHasher.hash": lambda s: TrigramLSHHasher(num_lsh=2, num_buckets=64).hash(s),
    "MinHashFingerprinter.unit_fingerprint": lambda s: MinHashFingerprinter(num_hashes=4).unit_fingerprint(s),
    "MinHashFingerprinter.hash_values": lambda s: MinHashFingerprinter(num_hashes=4).hash_values([s]),
    "MinHashFingerprinter.hashed_parts": lambda s: MinHashFingerprinter(num_hashes=4).hashed_parts(s),
    "FingerprintCache": lambda s: FingerprintCache(MinHashFingerprinter(num_hashes=4), ["a", s]),
    "md5_ngram_hash": md5_ngram_hash,
    "md5_ngram_hashes_many": lambda s: md5_ngram_hashes_many(["ab", s], 2),
    "TSPProjection.hash_surface": lambda s: TSPProjection(["a"], width=16).hash_surface(s),
    "TSPProjection.features_from_units": lambda s: TSPProjection(["a"], width=16).features_from_units([[s]]),
    **{f"{name}.from_vocab": (lambda s, name=name: PROJECTIONS[name].from_vocab(["a", s]))
       for name in PROJECTIONS},
    "SentenceProjector.unit_ids": lambda s: _sentence_projector().unit_ids(s),
    "SentenceProjector.__call__": lambda s: _sentence_projector()([["a", s]]),
    "mmh3_codes": lambda s: mmh3_codes(["a", s], 2, 64),
    "tfree_word_rows": lambda s: tfree_word_rows(s, 64),
    "dynamic_vectors(md5)": lambda s: dynamic_vectors(["a", s], DynamicHashEmbedding.make_seeds(6, 0),
                                                      ngram_hash="md5"),
    # two distinct strings (gated signatures refuse a vocabulary that repeats one)
    **{f"catalogue.build({name})": (lambda s, name=name: build(name, [s, s + "a"], 1 << 16, 16))
       for name in STRING_FAMILIES},
}


#: the rolling n-gram hash reads code points: every string has a defined result (its documented rule)
CODE_POINT_ENTRIES_FAMILIES = ("dynamic-ngram",)
CODE_POINT_ENTRIES: dict[str, Callable[[str], Any]] = {
    "ngram_hashes_many": lambda s: ngram_hashes_many(["ab", s], 2),
    "dynamic_vectors(rolling)": lambda s: dynamic_vectors(["a", s], DynamicHashEmbedding.make_seeds(6, 0)),
    "DynamicHashEmbedding": lambda s: DynamicHashEmbedding(["a", s], 12),
    "catalogue.build(dynamic-ngram)": lambda s: build("dynamic-ngram", ["a", s], 1 << 16, 12),
}


def test_every_string_family_is_listed():
    # a new family that hashes strings joins STRING_FAMILIES (the others are built from ids: unaffected by text)
    id_families = {"full", "quotient-remainder", "robe", "dhe", "hashed-nets", "tt-rec", "low-rank", "superbloom"}
    assert set(FAMILIES) == set(STRING_FAMILIES) | set(CODE_POINT_ENTRIES_FAMILIES) | id_families


@pytest.mark.parametrize("entry", sorted(ENTRIES))
@settings(max_examples=60, deadline=None)
@given(text=ANY_TEXT)
def test_valid_text_hashes_and_lone_surrogates_are_refused(entry, text):
    call = ENTRIES[entry]
    if encodable(text):
        call(text)
        return
    with pytest.raises(ValueError, match="lone surrogate") as info:
        call(text)
    assert "errors='replace'" in str(info.value)


@pytest.mark.parametrize("entry", sorted(CODE_POINT_ENTRIES))
@settings(max_examples=30, deadline=None)
@given(text=ANY_TEXT)
def test_the_code_point_hash_reads_every_string(entry, text):
    assert CODE_POINT_ENTRIES[entry](text) is not None


@pytest.mark.parametrize("entry", sorted(ENTRIES))
def test_a_lone_surrogate_is_refused_by_name(entry):
    # the one case the issue reproduced (mmh3 crashed the interpreter on it), without hypothesis' search
    with pytest.raises(ValueError, match="lone surrogate"):
        ENTRIES[entry]("a\ud800")
