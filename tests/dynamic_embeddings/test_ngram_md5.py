"""The MD5 n-gram hash family: golden vectors from RFC 1321, the rolling hash's windows, the embedding built on it."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hashlib_core.embeddings.dynamic import DynamicHashEmbedding, dynamic_vectors
from hashlib_core.hashing.ngram_md5 import md5_ngram_hash, md5_ngram_hashes_many
from hashlib_core.hashing.rolling import ngram_hashes_many

# RFC 1321, appendix A.5: MD5 test suite
RFC1321 = {"": "d41d8cd98f00b204e9800998ecf8427e", "a": "0cc175b9c0f1b6a831c399e269772661",
           "abc": "900150983cd24fb0d6963f7d28e17f72", "message digest": "f96b697d7cb7938d525a2f31aaf161d0"}


@pytest.mark.parametrize("text", sorted(RFC1321))
def test_golden_vectors_are_the_digests_first_eight_bytes_little_endian(text):
    head = int.from_bytes(bytes.fromhex(RFC1321[text])[:8], "little")
    assert md5_ngram_hash(text, modulus=2**64) == head
    assert md5_ngram_hash(text, modulus=1_000_000_007) == head % 1_000_000_007


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(max_size=12), max_size=6), st.integers(1, 4))
def test_the_windows_are_the_rolling_hashs(texts, n):
    md5 = md5_ngram_hashes_many(texts, n)
    rolling = ngram_hashes_many(texts, n)
    assert [len(h) for h in md5] == [len(h) for h in rolling]
    for text, hashes in zip(texts, md5):
        assert hashes.tolist() == [md5_ngram_hash(text[i : i + n]) for i in range(len(text) - n + 1)]
        assert all(0 <= h < 1_000_000_007 for h in hashes.tolist())


def test_bad_input_is_refused_by_name():
    with pytest.raises(ValueError, match="n must be an int >= 1"):
        md5_ngram_hashes_many(["abc"], 0)
    with pytest.raises(TypeError, match="texts must be str"):
        md5_ngram_hashes_many([b"abc"], 2)
    with pytest.raises(ValueError, match="modulus must be an int >= 2"):
        md5_ngram_hash("a", 1)
    with pytest.raises(ValueError, match="ngram_hash must be one of"):
        DynamicHashEmbedding(["a"], 6, ngram_hash="sha1")


def test_the_embedding_keeps_its_shape_and_bounds_with_either_family():
    vocab = ["the", "##ing", "[PAD]", "a", "x" * 40]
    seeds = DynamicHashEmbedding.make_seeds(12, 42)
    rolling = dynamic_vectors(vocab, seeds, ngram_hash="rolling")
    md5 = dynamic_vectors(vocab, seeds, ngram_hash="md5")
    assert md5.shape == rolling.shape == (5, 12) and np.abs(md5).max() <= 1.0
    assert not np.allclose(md5, rolling)
    # a one-character token has no 2- or 3-grams: those partitions are zero in both families
    widths = (2, 4, 6)
    assert np.all(md5[3, widths[0]:] == 0) and np.all(rolling[3, widths[0]:] == 0)
    emb = DynamicHashEmbedding(vocab, 12, ngram_hash="md5")
    assert np.allclose(emb.cache.numpy(), md5) and np.allclose(emb.embed(["the"]).numpy(), md5[:1])
