"""Superbloom's α-to-one hash maps: every token holds α ids, inverses invert, determinism, persistence, bad input."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hashlib_core.hashing.bloom import BloomHashMaps


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 400), st.integers(1, 40), st.integers(1, 4), st.integers(0, 10**6))
def test_every_token_holds_alpha_ids_and_inverses_invert(num_ids, alpha, m, seed):
    if alpha > num_ids:
        return
    maps = BloomHashMaps(num_ids, alpha, m, seed)
    t = maps.tokens_per_map
    assert t == -(-num_ids // alpha)
    for j in range(m):
        counts = np.bincount(maps.table[:, j].numpy(), minlength=t)
        assert counts[:-1].tolist() == [alpha] * (t - 1)                  # every token but the last: exactly α
        assert counts[-1] == num_ids - (t - 1) * alpha                     # the last holds the remainder
        for token in range(t):
            ids = maps.ids_of(j, token)
            assert (maps.table[ids, j] == token).all()                   # the inverse inverts
        assert sorted(maps.inverse[j][maps.inverse[j] >= 0].tolist()) == list(range(num_ids))
    assert maps.counts.tolist() == np.bincount(maps.table[:, 0].numpy(), minlength=t).tolist()
    blocks = maps.inverse_tokens()                                         # every id's tokens, by (map, token)
    assert blocks.shape == (m, t, alpha, m)
    real = maps.inverse >= 0
    assert torch.equal(blocks[real], maps.table[maps.inverse[real]])
    for j in range(m):
        assert (blocks[j][real[j]][:, j] == torch.arange(t)[:, None].expand(t, alpha)[real[j]]).all()
    assert maps.inverse_tokens() is blocks                                 # built once


def test_golden_and_deterministic_maps():
    a, b = BloomHashMaps(20, 5, 2, seed=7), BloomHashMaps(20, 5, 2, seed=7)
    assert torch.equal(a.table, b.table)
    assert a.table[:5].tolist() == BloomHashMaps(20, 5, 2, seed=7).table[:5].tolist()
    assert not torch.equal(a.table[:, 0], a.table[:, 1])                 # independent permutations per map
    order = np.random.default_rng(7).permutation(20)                      # the documented construction
    assert a.table[order, 0].tolist() == (np.arange(20) // 5).tolist()


def test_global_layout_and_special_tokens():
    maps = BloomHashMaps(100, 10, 3)
    assert maps.vocab_size == 3 * (4 + 10)
    assert maps.special_ids("[MASK]") == [9, 10, 11]                     # [MASK_1] .. [MASK_3]
    digest = maps.digest(torch.tensor([[0, 99]]))
    assert digest.shape == (1, 2, 3)
    specials = {i for t in maps.special_tokens for i in maps.special_ids(t)}
    assert specials.isdisjoint(digest.flatten().tolist())
    for j in range(3):
        assert maps.offset(j) <= int(digest[0, 0, j]) < maps.offset(j) + 10


def test_save_load_round_trip(tmp_path):
    maps = BloomHashMaps(1000, 50, 2, seed=3)
    maps.save(tmp_path / "maps.npz")
    loaded = BloomHashMaps.load(tmp_path / "maps.npz")
    assert torch.equal(maps.table, loaded.table) and loaded.config() == maps.config()


def test_bad_input_names_the_fix(tmp_path):
    maps = BloomHashMaps(100, 10, 2)
    with pytest.raises(ValueError, match=r"\[0, 100\)"):
        maps.digest(torch.tensor([100]))
    with pytest.raises(ValueError, match=r"\[0, 100\)"):
        maps.local(torch.tensor([-1]))
    with pytest.raises(TypeError, match="integers"):
        maps.digest(torch.tensor([1.0]))
    with pytest.raises(ValueError, match="num_hashes"):
        BloomHashMaps(100, 10, 0)
    with pytest.raises(ValueError, match="alpha"):
        BloomHashMaps(10, 11, 2)
    with pytest.raises(ValueError, match="num_ids"):
        BloomHashMaps(0, 1, 2)
    with pytest.raises(KeyError, match="not a special token"):
        maps.special_ids("[UNK]")
    with pytest.raises(FileNotFoundError, match="BloomHashMaps.save"):
        BloomHashMaps.load(tmp_path / "missing.npz")
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a saved BloomHashMaps"):
        BloomHashMaps.load(tmp_path / "bad.npz")
    assert maps.digest(torch.zeros((0,), dtype=torch.long)).shape == (0, 2)    # an empty set digests to nothing
