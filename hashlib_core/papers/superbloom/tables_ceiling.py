"""The Superbloom page's reading of the no-training rankings through the hash (the ``yardsticks_hashed`` result of
the ``yardsticks`` experiment): for every trained Superbloom model, what the popularity and co-occurrence rankings
reach when Superbloom's decoding sees them through that model's hash maps, and how much of the gap between the two
the model has learned (:func:`ceiling_view`, :func:`ceiling_quoted`)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from hashlib_core.papers.superbloom.yardsticks import COOCCURRENCE, COOCCURRENCE_HASHED, POPULARITY_HASHED

__all__ = ["ceiling_view", "ceiling_quoted", "LEARNED"]

#: the column of the share of the hash-kept context a model has learned
LEARNED = "learned of the context kept (%)"


def _top(frame: pd.DataFrame) -> str:
    return max((c for c in frame.columns if c.startswith("rec@")), key=lambda c: int(c[4:]))


def ceiling_view(view: pd.DataFrame, alpha: pd.DataFrame | None, alpha_models: pd.DataFrame | None,
                 hashed: pd.DataFrame, profile_alpha: int) -> pd.DataFrame:
    """One row per trained Superbloom model: on its dataset and at its alpha, at the largest cut-off, the popularity
    ranking through its hash, the model, the co-occurrence ranking through its hash and without it, and the share of
    the gap between the two rankings through the hash the model has covered
    (``(model - popularity) / (counts - popularity)``, blank when the counts are not ahead).

    ``view``: the deep pair on every id set with the unhashed counts' rows
    (:func:`~hashlib_core.papers.superbloom.tables_datasets.datasets_table`), its Superbloom rows at
    ``profile_alpha``; ``alpha``/``alpha_models``: the coarseness diagnosis's recall and models (or None);
    ``hashed``: the rankings through the hash (``yardsticks_hashed``)."""
    top = _top(view)
    trained = [(r["dataset"], r["name"], profile_alpha, r[top]) for _, r in view.iterrows()
               if str(r["name"]).startswith("superbloom")]
    if alpha is not None and alpha_models is not None:
        alphas = alpha_models.set_index("name")["alpha"]
        trained += [(r["dataset"], r["name"], int(alphas[r["name"]]), r[top]) for _, r in alpha.iterrows()
                    if r["name"] in alphas.index and int(alphas[r["name"]]) > 1]
    through = hashed.set_index(["dataset", "alpha", "name"])[top]
    ids = view.groupby("dataset", sort=False)["ids"].first()
    counts = view[view["name"] == COOCCURRENCE].set_index("dataset")[top]
    rows = []
    for dataset, name, a, model in trained:
        if (dataset, a, COOCCURRENCE_HASHED) not in through.index:
            continue
        pop, kept = through[(dataset, a, POPULARITY_HASHED)], through[(dataset, a, COOCCURRENCE_HASHED)]
        rows.append({"dataset": dataset, "ids": int(ids[dataset]), "model": name, "alpha": a,
                     f"popularity via hash {top}": pop, f"Superbloom {top}": model,
                     f"counts via hash {top}": kept,
                     f"counts, no hash {top}": counts.get(dataset, np.nan),
                     LEARNED: 100.0 * (model - pop) / (kept - pop) if kept > pop else np.nan})
    if not rows:
        raise ValueError("no trained Superbloom model has the rankings through its hash: run yardsticks after the "
                         "models' experiments (same dataset and alpha)")
    return pd.DataFrame(rows)


def ceiling_quoted(ceiling: pd.DataFrame, profile_alpha: int, large: int = 40_000) -> dict[str, str]:
    """The numbers the ceiling paragraph quotes, from :func:`ceiling_view`: on each dataset, at ``profile_alpha``, the
    share of the counts' recall the hash keeps and the share of the kept context the deep model learned; on the sets
    of at least ``large`` ids, the largest such share and a reading of it."""
    top = next(c for c in ceiling.columns if c.startswith("counts via hash ")).rsplit(" ", 1)[1]
    at = ceiling[ceiling["alpha"] == profile_alpha].drop_duplicates("dataset")
    keep = 100.0 * at[f"counts via hash {top}"] / at[f"counts, no hash {top}"]
    big = at[at["ids"] >= large]
    most = big[LEARNED].max() if len(big) else np.nan
    if not len(big):
        reading = f"no set here has {large:,} ids or more"
    elif most < 10:
        reading = ("on the large sets the hash keeps much of what the counts know, yet the model has learned only "
                   "the popularity the hash lets through: what holds Superbloom back there is learning (steps and "
                   "batch), not information the hash destroys")
    else:
        reading = "on the large sets the model has learned part of what the hash keeps"
    return {"c_top": top, "c_alpha": str(profile_alpha), "c_large": f"{large:,}",
            "c_keep": "; ".join(f"{d} {k:.0f}%" for d, k in zip(at["dataset"], keep)),
            "c_learned": "; ".join(f"{d} {v:.0f}%" if np.isfinite(v) else f"{d} (counts not ahead)"
                                   for d, v in zip(at["dataset"], at[LEARNED])),
            "c_big_most": f"{most:.0f}%" if np.isfinite(most) else "not measured",
            "c_reading": reading}
