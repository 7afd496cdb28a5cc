"""MultiHashFormer's trigram LSH coordinates and mixed LSH/MMH3 signature tables."""
from __future__ import annotations


import mmh3
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hashlib_core.hashing import MMH3MultiHasher, hasher_from_config
from hashlib_core.hashing.lsh_trigram import (
    PROJECTION_DIM, TrigramLSHHasher, char_trigrams, mixed_signature_table,
)


@pytest.fixture(scope="module")
def lsh() -> TrigramLSHHasher:
    return TrigramLSHHasher(2, 512)


def test_char_trigrams():
    assert char_trigrams("playing") == ["pla", "lay", "ayi", "yin", "ing"]
    assert char_trigrams("ab") == ["ab"] and char_trigrams("") == [""]
    assert char_trigrams("ĠThe") == ["ĠTh", "The"]


def test_codes_are_signs_scaled_to_unit_norm(lsh):
    z = lsh.codes(["playing", "x", "日本語"], 0)
    assert z.shape == (3, PROJECTION_DIM)
    assert z.dtype == torch.float32     # the released code's precision: its rounding decides signs near 0
    assert set(torch.unique(z.abs()).tolist()) == {float(torch.tensor(PROJECTION_DIM ** -0.5, dtype=torch.float32))}
    assert torch.allclose(z.norm(dim=1), torch.ones(3))


def test_buckets_depend_only_on_the_trigram_multiset(lsh):
    # "abcab" and "cabca" both have the trigrams {abc, bca, cab}
    assert lsh.hash("abcab") == lsh.hash("cabca")
    assert lsh.hash("abcab") != lsh.hash("abcabx")


def test_similar_spellings_have_similar_codes(lsh):
    a, b, far = lsh.codes(["internationalization", "internationalisation", "zebra"], 0)
    agree = lambda u, v: float((u == v).double().mean())
    assert agree(a, b) > 0.75
    assert agree(a, far) < 0.65


def test_coordinates_use_different_trigram_seeds(lsh):
    tokens = [f"tok{i}" for i in range(200)]
    table = lsh.hash_batch(tokens)
    assert table.shape == (200, 2) and table.dtype == np.int64
    assert table.min() >= 1 and table.max() <= 511
    assert (table[:, 0] != table[:, 1]).mean() > 0.9


def test_batch_equals_single_and_chunking(lsh, monkeypatch):
    from hashlib_core.hashing import lsh_trigram

    tokens = ["a", "bb", "ccc", "dddd", "the", "Ġthe", "😀🎉x"]
    whole = lsh.hash_batch(tokens)
    monkeypatch.setattr(lsh_trigram, "CHUNK", 3)
    assert np.array_equal(lsh.hash_batch(tokens), whole)
    assert [lsh.hash(t) for t in tokens] == [tuple(r) for r in whole.tolist()]


def test_config_round_trip_and_validation(lsh):
    assert hasher_from_config(lsh.config()) == lsh
    with pytest.raises(ValueError, match="num_buckets"):
        TrigramLSHHasher(1, 1)
    with pytest.raises(TypeError, match="must be a str"):
        lsh.hash_batch([b"bytes"])
    with pytest.raises(ValueError, match=r"would draw .* GiB of random tensors.*fewer LSH coordinates"):
        TrigramLSHHasher(64, 65536)              # refused before any tensor is drawn


def test_mixed_table_columns():
    tokens = [f"w{i}" for i in range(300)]
    table = mixed_signature_table(tokens, 2, 4, 64)
    assert table.shape == (300, 4)
    assert torch.unique(table, dim=0).shape[0] == 300                    # collision-free
    assert np.array_equal(table[:, :2].numpy(), TrigramLSHHasher(2, 64).hash_batch(tokens))
    assert table[:, 2].tolist() == [mmh3.hash128(t, seed=2, signed=False) % 63 + 1 for t in tokens]
    mmh3_only = mixed_signature_table(tokens, 0, 3, 64)
    assert np.array_equal(mmh3_only.numpy(), MMH3MultiHasher(3, 64).batch(tokens))


def test_all_lsh_table_rehashes_the_last_coordinate():
    # near-identical spellings collide under pure LSH with few buckets; the last coordinate is rehashed (MMH3)
    tokens = [f"aaaa{c}" for c in "abcdefghij"] + ["aaaa"]
    raw = torch.from_numpy(TrigramLSHHasher(2, 32).hash_batch(tokens))
    assert torch.unique(raw, dim=0).shape[0] < len(tokens)
    table = mixed_signature_table(tokens, 2, 2, 32)
    assert torch.unique(table, dim=0).shape[0] == len(tokens)
    assert torch.equal(table[:, 0], raw[:, 0])                            # only the last coordinate moves


@settings(max_examples=25, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=30, unique=True), st.integers(0, 3))
def test_mixed_table_is_unique_and_in_range(tokens, num_lsh):
    table = mixed_signature_table(tokens, num_lsh, 3, 32)
    assert table.min() >= 1 and table.max() <= 31
    assert torch.unique(table, dim=0).shape[0] == len(tokens)


def test_mixed_table_validation():
    with pytest.raises(ValueError, match="num_lsh"):
        mixed_signature_table(["a"], 5, 4, 16)
    with pytest.raises(ValueError, match="distinct"):
        mixed_signature_table(["a", "a"], 1, 2, 16)
    with pytest.raises(ValueError, match="no free signature"):
        mixed_signature_table([f"t{i}" for i in range(10)], 0, 1, 4)   # 10 tokens, 3 possible signatures


def test_the_empty_token_is_refused_like_the_registry_refuses_it(lsh):
    for call in (lambda: lsh.hash(""), lambda: lsh.hash_batch(["a", ""]), lambda: lsh.codes([""], 0),
                 lambda: mixed_signature_table(["a", ""], 1, 2, 16), lambda: mixed_signature_table([""], 0, 2, 16)):
        with pytest.raises(ValueError, match="is the empty string.*\\[t for t in tokens if t\\]"):
            call()
