"""The dynamic hash embedding: golden vectors, range, partitions, cache == uncached, and bad input."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hashlib_core.embeddings import dynamic as dyn
from hashlib_core.embeddings.dynamic import DynamicHashEmbedding, dynamic_vectors, partition_widths
from hashlib_core.hashing.rolling import DEFAULT_MODULUS, ngram_hashes

SEEDS = DynamicHashEmbedding.make_seeds(12, 42)
NONEMPTY = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF), min_size=1, max_size=30)


def test_golden_seeds_and_vectors():
    assert SEEDS[:4].tolist() == [89250955, 773956054, 654571523, 438878443]
    v = dynamic_vectors(["hashing", "a"], SEEDS)
    np.testing.assert_allclose(v[0], [0.426275, 0.170645, 0.089584, 0.1872, -0.139115, 0.05851, -0.089796,
                                      -0.110558, -0.326736, 0.214557, 0.084413, 0.23609], atol=1e-6)
    # "a" has one 1-gram and no 2- or 3-grams: its 2- and 3-gram parts are zero
    assert v[1, 2:].tolist() == [0.0] * 10 and np.all(v[1, :2] != 0)


def test_definition_on_one_column():
    # column 0 belongs to n = 1: the mean over the characters of phi((H(c) h_0) mod b)
    b = DEFAULT_MODULUS
    values = [(int(h) * int(SEEDS[0])) % b for h in ngram_hashes("hashing", 1)]
    phi = [(v - b * (v > b / 2)) / (b / 2) for v in values]
    assert dynamic_vectors(["hashing"], SEEDS)[0, 0] == pytest.approx(np.mean(phi), abs=1e-6)


def test_partition_widths():
    assert partition_widths(768, 3) == (128, 256, 384)        # the blog's split, d a multiple of 6
    assert partition_widths(128, 3) == (21, 42, 65)           # remainder to the widest part
    assert partition_widths(5, 1) == (5,)
    with pytest.raises(ValueError, match="too small"):
        partition_widths(5, 3)


@settings(max_examples=100, deadline=None)
@given(st.lists(NONEMPTY, min_size=1, max_size=6))
def test_any_string_gives_a_bounded_finite_vector(strings):
    v = dynamic_vectors(strings, SEEDS)
    assert v.shape == (len(strings), 12) and v.dtype == np.float32
    assert np.isfinite(v).all() and v.min() >= -1.0 and v.max() <= 1.0


@settings(max_examples=50, deadline=None)
@given(st.lists(NONEMPTY, min_size=1, max_size=6))
def test_batch_equals_one_by_one_and_is_deterministic(strings):
    together = dynamic_vectors(strings, SEEDS)
    alone = np.stack([dynamic_vectors([s], SEEDS)[0] for s in strings])
    np.testing.assert_array_equal(together, alone)


def test_chunked_products_equal_unchunked(monkeypatch):
    words = ["word%d" % i for i in range(50)] + ["x" * 300]
    full = dynamic_vectors(words, SEEDS)
    monkeypatch.setattr(dyn, "_CHUNK_ROWS", 7)
    np.testing.assert_allclose(dynamic_vectors(words, SEEDS), full, atol=1e-6)


def test_shared_ngrams_are_closer():
    v = dynamic_vectors(["embedding", "embeddings", "xylophone"], DynamicHashEmbedding.make_seeds(128, 42))
    cos = lambda a, b: float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))  # noqa: E731
    assert cos(v[0], v[1]) > 0.8 > cos(v[0], v[2])


def test_module_cache_equals_uncached_and_counts_no_parameters():
    vocab = ["<s>", "<pad>", "the", "##ing", "\U0001F469\u200D\U0001F4BB"]
    emb = DynamicHashEmbedding(vocab, 12)
    ids = torch.tensor([[0, 2, 3, 4]])
    assert torch.equal(emb(ids)[0], emb.embed([vocab[i] for i in ids[0]]))
    assert emb.embedding_parameter_count() == 0 and sum(p.numel() for p in emb.parameters()) == 0
    projected = DynamicHashEmbedding(vocab, 12, projection=True)
    assert projected.embedding_parameter_count() == 12 * 12 + 12
    assert torch.allclose(projected(ids)[0], projected.embed([vocab[i] for i in ids[0]]))


def test_bad_input_names_the_fix():
    emb = DynamicHashEmbedding(["a", "b"], 6)
    with pytest.raises(ValueError, match="empty string"):
        dynamic_vectors(["ok", ""], SEEDS)
    with pytest.raises(TypeError, match="wrap a single token in a list"):
        dynamic_vectors("token", SEEDS)
    with pytest.raises(TypeError, match="not a str"):
        dynamic_vectors(["a", 3], SEEDS)
    with pytest.raises(ValueError, match=r"must lie in \[0, 2\)"):
        emb(torch.tensor([[0, 2]]))
    with pytest.raises(TypeError, match="int64 tensor"):
        emb(torch.tensor([[0.0]]))
    with pytest.raises(ValueError, match="vocabulary is empty"):
        DynamicHashEmbedding([], 6)
    with pytest.raises(ValueError, match="num_embeddings"):
        DynamicHashEmbedding(None, 6)
    with pytest.raises(ValueError, match="agree"):
        DynamicHashEmbedding(["a"], 6, num_embeddings=2)
    with pytest.raises(RuntimeError, match="without a vocabulary"):
        DynamicHashEmbedding(None, 6, num_embeddings=3)(torch.tensor([[0]]))
    with pytest.raises(ValueError, match="seeds must be"):
        dynamic_vectors(["a"], np.array([0, 1, 2]))
    with pytest.raises(ValueError, match="buckets"):
        dynamic_vectors(["a"], SEEDS, buckets=1)
    assert emb(torch.zeros((0, 3), dtype=torch.long)).shape == (0, 3, 6)   # an empty batch is empty, not an error
