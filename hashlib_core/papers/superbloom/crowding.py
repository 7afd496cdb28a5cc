"""Why Superbloom's lead is at the top of its list only (experiment ``crowding``): how much of a model's ranked list
is made of the ids that collide with its best guess.

Algorithm 1 ranks an id by ``γ(s) = Σ_j log p_j(h_j(s))``. Every id that shares one hash token with the best guess
inherits that token's log-probability, so when a map's distribution is peaked, the ``α - 1`` ids behind its top
token in each map can fill the list after the best guess whatever their other token says. This module measures it:
for each test segment, the share of the ids ranked 2 to ``k`` that share at least one hash token with the id ranked
first (under Superbloom's maps), for Superbloom and for the unhashed baseline of its size. The baseline's lists know
nothing of the maps, so its share is what chance gives (:func:`chance_share` is the same, computed).
"""
from __future__ import annotations

from typing import Any, Sequence

import pandas as pd
import torch

from hashlib_core.hashing.bloom import BloomHashMaps
from hashlib_core.papers.superbloom.training import test_log_probs

__all__ = ["sibling_share", "chance_share", "ranked_ids", "crowding_rows", "crowding_view", "crowding_quoted",
           "every_k_quoted"]


def sibling_share(ids: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    """``(n,)``: for each row of ``ids`` (``(n, k)``, best first, k >= 2), the share of ``ids[:, 1:]`` that share at
    least one hash token with ``ids[:, 0]``; ``table`` is the maps' ``(N, m)`` token table."""
    if ids.dim() != 2 or ids.shape[1] < 2:
        raise ValueError(f"ids must be (n, k) with k >= 2 ranked ids per row, got {tuple(ids.shape)}")
    tokens = table[ids]                                              # (n, k, m)
    shared = (tokens[:, 1:, :] == tokens[:, :1, :]).any(dim=-1)      # (n, k - 1)
    return shared.float().mean(dim=1)


def chance_share(maps: BloomHashMaps) -> float:
    """The probability that another id, drawn uniformly, shares at least one token with a given id: one minus the
    chance it avoids the given id's token in every map (each map puts ``α - 1`` of the other ``N - 1`` ids with it;
    the maps are independent permutations)."""
    n = maps.num_ids
    block = torch.bincount(maps.table[:, 0]).max().item()           # ids per token (α; the last token may hold fewer)
    return 1.0 - (1.0 - (block - 1) / (n - 1)) ** maps.num_hashes


def ranked_ids(model: Any, res: Any, k: int) -> torch.Tensor:
    """``(segments, k)``: each test segment's ``k`` best ids by the certified search."""
    log_probs = test_log_probs(model, res, len(res.test.segments))
    return model.decode(log_probs, k).ids.cpu()


def crowding_rows(models: dict[str, Any], maps: BloomHashMaps, res: Any, ks: Sequence[int]) -> pd.DataFrame:
    """Per model and cut-off ``k`` (of ``ks``, each >= 2): the mean share of its ids ranked 2..k that collide with its
    best guess under ``maps`` (%), chance's share (%), and its recall@k (%) on the test segments."""
    ks = sorted(k for k in ks if k >= 2)
    if not ks:
        raise ValueError("crowding needs a cut-off k >= 2")
    targets = torch.as_tensor(res.test.targets)
    rows = []
    for name, model in models.items():
        ids = ranked_ids(model, res, max(ks))
        for k in ks:
            rows.append({"name": name, "alpha": int(model.config.alpha), "num_hashes": int(model.config.num_hashes),
                         "k": k,
                         "sibling_share": 100.0 * float(sibling_share(ids[:, :k], maps.table).mean()),
                         "chance_share": 100.0 * chance_share(maps),
                         "recall": 100.0 * float((ids[:, :k] == targets[:, None]).any(dim=1).float().mean()),
                         "segments": len(targets)})
    return pd.DataFrame(rows)


def crowding_quoted(crowding: pd.DataFrame) -> dict[str, str]:
    """The numbers the crowding sentence quotes: at the largest k, Superbloom's share, the baseline's, chance's."""
    top = crowding[crowding["k"] == crowding["k"].max()]
    sb, base = top[top["alpha"] > 1].iloc[0], top[top["alpha"] == 1].iloc[0]
    return {"cr_k": str(int(sb["k"])), "cr_after": str(int(sb["k"]) - 1), "cr_sb": f"{sb['sibling_share']:.0f}%",
            "cr_base": f"{base['sibling_share']:.1f}%", "cr_chance": f"{sb['chance_share']:.1f}%",
            "cr_colliders": str(int(sb["num_hashes"]) * (int(sb["alpha"]) - 1))}


def crowding_view(crowding: pd.DataFrame) -> pd.DataFrame:
    """The reader's table: per model and k, the share of its ids ranked 2..k colliding with its best guess, chance's
    share and recall@k (%)."""
    return pd.DataFrame({"model": crowding["name"], "k": crowding["k"],
                         "ranks 2..k sharing a token with rank 1 (%)": crowding["sibling_share"],
                         "by chance (%)": crowding["chance_share"], "rec@k (%)": crowding["recall"]})


def every_k_quoted(recall: pd.DataFrame, popularity: pd.DataFrame, superbloom: str, baseline: str) -> dict[str, str]:
    """Superbloom minus the baseline of its size at every cut-off (means over seeds, points), and at the largest
    cut-off both models' recall beside the popularity ranking's."""
    rows = recall.set_index("name")
    ks = sorted(int(c[4:]) for c in recall.columns if c.startswith("rec@"))
    top = f"rec@{ks[-1]}"
    return {"ek_gaps": ", ".join(f"{rows.loc[superbloom, f'rec@{k}'] - rows.loc[baseline, f'rec@{k}']:+.1f} at "
                                 f"rec@{k}" for k in ks),
            "ek_top": top, "ek_sb_top": f"{rows.loc[superbloom, top]:.1f}%",
            "ek_base_top": f"{rows.loc[baseline, top]:.1f}%", "ek_pop_top": f"{popularity[top].iloc[0]:.1f}%"}
