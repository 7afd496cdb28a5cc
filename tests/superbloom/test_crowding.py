"""The crowding diagnosis: how much of a ranked list collides with its best guess (hand-checkable shares, chance's
share from the maps, the rows, table and words on fixed inputs)."""
from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest
import torch

from hashlib_core.hashing.bloom import BloomHashMaps
from hashlib_core.papers.superbloom import crowding
from hashlib_core.papers.superbloom.crowding import (
    chance_share,
    crowding_quoted,
    crowding_rows,
    crowding_view,
    every_k_quoted,
    sibling_share,
)


def test_sibling_share_counts_ids_sharing_a_token_with_the_first():
    table = torch.tensor([[0, 10], [0, 11], [1, 10], [2, 12], [3, 13]])   # id -> (token in map 1, token in map 2)
    ids = torch.tensor([[0, 1, 2, 3], [3, 4, 1, 2]])
    # row 0: id 1 shares map 1's token, id 2 map 2's, id 3 neither; row 1: no id shares a token with id 3
    assert sibling_share(ids, table).tolist() == pytest.approx([2 / 3, 0.0])
    with pytest.raises(ValueError, match="k >= 2 ranked ids per row"):
        sibling_share(torch.tensor([[0], [1]]), table)


def test_chance_share_is_the_union_over_the_maps():
    maps = BloomHashMaps(1_000, 10, 2, seed=0)
    assert chance_share(maps) == pytest.approx(1 - (1 - 9 / 999) ** 2)
    # the empirical share of random pairs agrees
    g = torch.Generator().manual_seed(0)
    a, b = torch.randint(1_000, (20_000,), generator=g), torch.randint(1_000, (20_000,), generator=g)
    keep = a != b
    shared = (maps.table[a[keep]] == maps.table[b[keep]]).any(dim=1).float().mean().item()
    assert shared == pytest.approx(chance_share(maps), abs=0.005)


def test_rows_view_and_words_on_fixed_lists(monkeypatch):
    maps = BloomHashMaps(1_000, 10, 2, seed=0)
    first = 5
    siblings = [i for i in range(1_000) if i != first and (maps.table[i] == maps.table[first]).any()][:3]
    strangers = [i for i in range(1_000) if i != first and not (maps.table[i] == maps.table[first]).any()][:3]
    lists = {"sb": torch.tensor([[first, *siblings, *strangers[:1]]] * 2),          # 3 of 4 after rank 1 collide
             "base": torch.tensor([[first, *strangers, siblings[0]]] * 2)}          # 1 of 4
    monkeypatch.setattr(crowding, "ranked_ids", lambda model, res, k: lists[model.tag][:, :k])
    models = {"sb": SimpleNamespace(tag="sb", config=SimpleNamespace(alpha=10, num_hashes=2)),
              "base": SimpleNamespace(tag="base", config=SimpleNamespace(alpha=1, num_hashes=1))}
    res = SimpleNamespace(test=SimpleNamespace(targets=[siblings[0], strangers[0]]))
    rows = crowding_rows(models, maps, res, (1, 3, 5))
    assert rows[["name", "k"]].values.tolist() == [["sb", 3], ["sb", 5], ["base", 3], ["base", 5]]
    assert rows["sibling_share"].tolist() == pytest.approx([100.0, 75.0, 0.0, 25.0])
    assert rows["recall"].tolist() == pytest.approx([50.0, 100.0, 50.0, 100.0])
    assert crowding_view(rows).columns.tolist()[2] == "ranks 2..k sharing a token with rank 1 (%)"
    q = crowding_quoted(rows)
    assert (q["cr_k"], q["cr_after"], q["cr_sb"], q["cr_base"], q["cr_colliders"]) == ("5", "4", "75%", "25.0%", "18")
    with pytest.raises(ValueError, match="cut-off k >= 2"):
        crowding_rows(models, maps, res, (1,))


def test_every_cut_off_words():
    recall = pd.DataFrame({"name": ["sb", "base"], "rec@1": [10.0, 4.0], "rec@10": [15.0, 18.0],
                           "rec@100": [20.0, 35.0]})
    q = every_k_quoted(recall, pd.DataFrame({"rec@100": [28.4]}), "sb", "base")
    assert q["ek_gaps"] == "+6.0 at rec@1, -3.0 at rec@10, -15.0 at rec@100"
    assert (q["ek_top"], q["ek_sb_top"], q["ek_base_top"], q["ek_pop_top"]) == ("rec@100", "20.0%", "35.0%", "28.4%")
