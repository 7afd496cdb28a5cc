"""MinHash fingerprints and the counting Bloom filter (pNLP-Mixer §3.1): golden values, associativity, the cache."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hashlib_core.hashing.minhash import MERSENNE_31, FingerprintCache, MinHashFingerprinter, counting_bloom_filter


def literal_fingerprint(unit: str, n: int) -> list[int]:
    """The community code's formula with Python big integers: h_i = (sha256 + i * sha224) mod (2^31 - 1), min over
    trigrams unless the unit is a continuation ("##") or shorter than 4 characters (then the whole unit, its leading
    "##" stripped; the community code's replace() strips every "##", the same on BERT's vocabularies)."""
    def h(x: str) -> list[int]:
        a = int.from_bytes(hashlib.sha256(x.encode("utf-8")).digest(), "little")
        b = int.from_bytes(hashlib.sha224(x.encode("utf-8")).digest(), "little")
        return [(a + i * b) % MERSENNE_31 for i in range(n)]

    text = unit[2:] if unit.startswith("##") else unit
    if unit.startswith("##") or len(text) < 4:
        return h(text)
    return [min(col) for col in zip(*(h(text[i:i + 3]) for i in range(len(text) - 2)))]


# golden vectors, first four hash functions (computed with literal_fingerprint, i.e. independently of the module)
GOLDEN = {
    "Bring": [21262830, 158843416, 612885331, 725311990],
    "##ing": [470804523, 158843416, 1994365956, 1682404849],
    "the": [752538576, 840202199, 927865822, 1015529445],
    "Straße": [1507920172, 730132964, 81614257, 206118508],
}


def test_golden_fingerprints():
    fp = MinHashFingerprinter(num_hashes=4)
    for unit, expected in GOLDEN.items():
        assert fp.unit_fingerprint(unit).tolist() == expected, unit
        assert literal_fingerprint(unit, 4) == expected, unit


@pytest.mark.parametrize("unit", ["Bring", "##ing", "a", "ab", "abc", "abcd", "x" * 3000, "東京タワー", "naïve",
                                  "##", "😀😀😀😀", "a\x00bc", "##a##b", "a##bc"])
def test_vectorised_hashing_equals_the_literal_formula(unit):
    assert MinHashFingerprinter(num_hashes=16).unit_fingerprint(unit).tolist() == literal_fingerprint(unit, 16)


def test_continuation_and_short_units_are_hashed_whole():
    fp = MinHashFingerprinter(num_hashes=8)
    assert fp.hashed_parts("##ing") == ["ing"] and fp.hashed_parts("the") == ["the"]
    assert fp.hashed_parts("Bring") == ["Bri", "rin", "ing"]
    # "##bring" is one whole-unit hash, "bring" the minimum over three trigrams: different fingerprints
    assert fp.unit_fingerprint("##bring").tolist() != fp.unit_fingerprint("bring").tolist()
    sp = MinHashFingerprinter(num_hashes=8, word_prefix="▁")
    assert sp.hashed_parts("▁Bring") == ["Bri", "rin", "ing"] and sp.hashed_parts("ing") == ["ing"]


def test_only_the_leading_marker_is_stripped():
    fp = MinHashFingerprinter(num_hashes=8)
    assert fp.split_unit("##a##b") == ("a##b", True) and fp.hashed_parts("##a##b") == ["a##b"]
    assert fp.split_unit("a##b") == ("a##b", False) and fp.hashed_parts("a##bc") == ["a##", "##b", "#bc"]
    assert fp.unit_fingerprint("##a##b").tolist() != fp.unit_fingerprint("##ab").tolist()
    sp = MinHashFingerprinter(num_hashes=8, word_prefix="▁")
    assert sp.split_unit("▁a▁b") == ("a▁b", False) and sp.split_unit("a▁b") == ("a▁b", True)


@pytest.mark.parametrize("name", ["bert-base-multilingual-cased", "bert-base-uncased"])
def test_wordpiece_units_equal_the_community_codes_replace(mirror, name):
    """On BERT's WordPiece vocabularies, stripping the leading "##" gives the units of the community code's
    ``unit.replace("##", "")``: no piece holds "##" past its start, so the fix changes no fingerprint there."""
    from hashlib_core.data import load_wordpiece_vocab

    fp = MinHashFingerprinter(num_hashes=1)
    vocab = load_wordpiece_vocab(name)
    assert [fp.split_unit(unit)[0] for unit in vocab] == [unit.replace("##", "") for unit in vocab]


def _direct_token_fingerprint(fp: MinHashFingerprinter, units: list[str]) -> np.ndarray:
    """The minimum over every part of every unit at once (no per-unit fingerprints)."""
    parts = [p for u in units for p in fp.hashed_parts(u)]
    return fp.hash_values(parts).min(axis=0)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(alphabet="abcdefgh#éß", min_size=1, max_size=12), min_size=1, max_size=5))
def test_token_fingerprint_is_the_minimum_over_all_parts(units):
    """MinHash associativity: min over the units' fingerprints == min over all their hashed parts."""
    fp = MinHashFingerprinter(num_hashes=12)
    token = fp.token_fingerprint(units)
    assert token.tolist() == _direct_token_fingerprint(fp, units).tolist()
    assert (token <= fp.fingerprints(units)).all()
    assert ((0 <= token) & (token < MERSENNE_31)).all()


@settings(max_examples=30, deadline=None)
@given(st.text(min_size=1, max_size=30))
def test_fingerprints_are_deterministic_across_instances(unit):
    a = MinHashFingerprinter(num_hashes=8).unit_fingerprint(unit)
    b = MinHashFingerprinter(num_hashes=8).unit_fingerprint(unit)
    assert a.tolist() == b.tolist() and a.dtype == np.int64


def test_counting_bloom_filter_counts_each_hash_once():
    fingerprints = np.array([[3, 7, 11, 3], [0, 4, 8, 12]])
    counts = counting_bloom_filter(fingerprints, 4)
    assert counts.dtype == np.float32 and counts.shape == (2, 4)
    assert counts.tolist() == [[0.0, 0.0, 0.0, 4.0], [4.0, 0.0, 0.0, 0.0]]
    counts = counting_bloom_filter(fingerprints, 5)
    assert counts.tolist() == [[0.0, 1.0, 1.0, 2.0, 0.0], [1.0, 0.0, 1.0, 1.0, 1.0]]   # mod 5: 3,2,1,3 and 0,4,3,2
    fp = MinHashFingerprinter(num_hashes=64)
    batch = fp.fingerprints(["Bring", "##ing", "the", "Straße"]).reshape(2, 2, 64)
    counts = counting_bloom_filter(batch, 1024)
    assert counts.shape == (2, 2, 1024) and (counts.sum(-1) == 64).all()
    as_tensor = counting_bloom_filter(torch.as_tensor(batch), 1024)
    assert isinstance(as_tensor, torch.Tensor) and torch.equal(as_tensor, torch.as_tensor(counts))


def test_cache_equals_uncached_fingerprints_and_round_trips(tmp_path):
    vocab = ["[PAD]", "Bring", "##ing", "the", "Straße", "##s", "東京"]
    fp = MinHashFingerprinter(num_hashes=32)
    cache = FingerprintCache(fp, vocab)
    assert cache.matrix.shape == (7, 32) and cache.matrix.dtype == np.int32
    tokens = [[1, 2], [3], [4, 5], [6]]
    expected = np.stack([fp.token_fingerprint([vocab[i] for i in ids]) for ids in tokens])
    assert np.array_equal(cache.token_fingerprints(tokens), expected)
    path = cache.save(tmp_path / "cache.npz")
    loaded = FingerprintCache.load(path)
    assert loaded.vocab == vocab and np.array_equal(loaded.matrix, cache.matrix)
    assert loaded.fingerprinter.settings() == fp.settings()


def test_bad_input_gets_a_clear_error(tmp_path):
    fp = MinHashFingerprinter(num_hashes=4)
    with pytest.raises(ValueError, match="num_hashes must be a positive int"):
        MinHashFingerprinter(num_hashes=0)
    with pytest.raises(ValueError, match="ngram_size must be a positive int"):
        MinHashFingerprinter(ngram_size=True)
    with pytest.raises(TypeError, match="subword unit must be a str"):
        fp.unit_fingerprint(3)
    with pytest.raises(ValueError, match="must not be empty"):
        fp.unit_fingerprint("")
    with pytest.raises(TypeError, match="list of subword units"):
        fp.token_fingerprint("Bringing")
    with pytest.raises(ValueError, match="at least one subword unit"):
        fp.token_fingerprint([])
    cache = FingerprintCache(fp, ["a", "b"])
    with pytest.raises(ValueError, match=r"unit ids must lie in \[0, 2\)"):
        cache.token_fingerprints([[0, 2]])
    with pytest.raises(ValueError, match="non-empty list of unit ids"):
        cache.token_fingerprints([[]])
    with pytest.raises(ValueError, match="non-empty vocabulary"):
        FingerprintCache(fp, [])
    with pytest.raises(ValueError, match="size must be a positive int"):
        counting_bloom_filter(np.zeros((1, 4), dtype=np.int64), 0)
    with pytest.raises(TypeError, match="must be integers"):
        counting_bloom_filter(np.zeros((1, 4)), 8)
    with pytest.raises(ValueError, match="non-negative"):
        counting_bloom_filter(np.array([[-1, 2]]), 8)
    with pytest.raises(FileNotFoundError, match="no fingerprint cache"):
        FingerprintCache.load(tmp_path / "missing.npz")
    (tmp_path / "bad.npz").write_bytes(b"not a zip file")
    with pytest.raises(ValueError, match="not a fingerprint cache"):
        FingerprintCache.load(tmp_path / "bad.npz")
