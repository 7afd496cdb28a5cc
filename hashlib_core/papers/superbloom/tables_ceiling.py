"""The Superbloom page's reading of the no-training rankings through the hash (the ``yardsticks_hashed`` result of
the ``yardsticks`` experiment): for every trained Superbloom model, what the popularity and co-occurrence rankings
reach when Superbloom's decoding sees them through that model's hash maps, and how much of the gap between the two
the model has learned (:func:`ceiling_view`, :func:`ceiling_quoted`)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from hashlib_core.papers.superbloom.tables_datasets import datasets_table
from hashlib_core.papers.superbloom.yardsticks import COOCCURRENCE, COOCCURRENCE_HASHED, POPULARITY_HASHED

__all__ = ["ceiling_view", "ceiling_table", "ceiling_quoted", "LEARNED"]

#: the column of the share of the hash-kept context a model has learned
LEARNED = "learned of the context kept (%)"


def _top(frame: pd.DataFrame) -> str:
    return max((c for c in frame.columns if c.startswith("rec@")), key=lambda c: int(c[4:]))


def ceiling_view(view: pd.DataFrame, alpha: pd.DataFrame | None, alpha_models: pd.DataFrame | None,
                 hashed: pd.DataFrame, profile_alpha: int) -> pd.DataFrame:
    """One row per trained Superbloom model: on its dataset and at its alpha, at the largest cut-off, the popularity
    ranking through its hash, the model, the co-occurrence ranking through its hash and without it, and the share of
    the gap between the two rankings through the hash the model has covered
    (``(model - popularity) / (counts - popularity)``, blank when the counts are not ahead), beside the unhashed
    baseline trained with it (the deep pair's, of the model's size; the coarseness diagnosis's, of the size of its
    model at ``profile_alpha``; blank when none was).

    ``view``: the deep pair on every id set with the unhashed counts' rows
    (:func:`~hashlib_core.papers.superbloom.tables_datasets.datasets_table`), its Superbloom rows at
    ``profile_alpha``; ``alpha``/``alpha_models``: the coarseness diagnosis's recall and models (or None);
    ``hashed``: the rankings through the hash (``yardsticks_hashed``)."""
    top = _top(view)

    def baseline(frame: pd.DataFrame, dataset: str) -> float:
        rows = frame[(frame["dataset"] == dataset) & frame["name"].astype(str).str.startswith("baseline")]
        return float(rows[top].iloc[0]) if len(rows) else np.nan

    trained = [(r["dataset"], r["name"], profile_alpha, r[top], baseline(view, r["dataset"]))
               for _, r in view.iterrows() if str(r["name"]).startswith("superbloom")]
    if alpha is not None and alpha_models is not None:
        alphas = alpha_models.set_index("name")["alpha"]
        trained += [(r["dataset"], r["name"], int(alphas[r["name"]]), r[top], baseline(alpha, r["dataset"]))
                    for _, r in alpha.iterrows() if r["name"] in alphas.index and int(alphas[r["name"]]) > 1]
    through = hashed.set_index(["dataset", "alpha", "name"])[top]
    ids = view.groupby("dataset", sort=False)["ids"].first()
    counts = view[view["name"] == COOCCURRENCE].set_index("dataset")[top]
    rows = []
    for dataset, name, a, model, base in trained:
        if (dataset, a, COOCCURRENCE_HASHED) not in through.index:
            continue
        pop, kept = through[(dataset, a, POPULARITY_HASHED)], through[(dataset, a, COOCCURRENCE_HASHED)]
        rows.append({"dataset": dataset, "ids": int(ids[dataset]), "model": name, "alpha": a,
                     f"popularity via hash {top}": pop, f"Superbloom {top}": model,
                     f"counts via hash {top}": kept, f"unhashed baseline {top}": base,
                     f"counts, no hash {top}": counts.get(dataset, np.nan),
                     LEARNED: 100.0 * (model - pop) / (kept - pop) if kept > pop else np.nan})
    if not rows:
        raise ValueError("no trained Superbloom model has the rankings through its hash: run yardsticks after the "
                         "models' experiments (same dataset and alpha)")
    return pd.DataFrame(rows)


def ceiling_table(shown) -> pd.DataFrame:
    """:func:`ceiling_view` of the shown results (the deep pair on every id set, the coarseness diagnosis when run,
    the rankings through the hash)."""
    has_alpha = shown.has("alpha")
    return ceiling_view(datasets_table(shown), shown.table("alpha") if has_alpha else None,
                        shown.table("alpha_models") if has_alpha else None, shown.table("yardsticks_hashed"),
                        shown.profile.alpha)


def ceiling_quoted(ceiling: pd.DataFrame, profile_alpha: int, large: int = 40_000) -> dict[str, str]:
    """The numbers the ceiling paragraph quotes, from :func:`ceiling_view` (its first row: the main dataset's deep
    model): at ``profile_alpha``, on each dataset, the share of the counts' recall the hash keeps and the share of the
    kept context the deep model learned; on the main dataset, whether the counts through the hash stay below the
    unhashed baseline of the model's size; on the sets of at least ``large`` ids, the largest share learned and a reading of it; across
    the alphas of the coarseness diagnosis (rows named ``-a<alpha>-``), the kept recall and the share learned."""
    top = next(c for c in ceiling.columns if c.startswith("counts via hash ")).rsplit(" ", 1)[1]
    kept, base = f"counts via hash {top}", f"unhashed baseline {top}"
    at = ceiling[ceiling["alpha"] == profile_alpha].drop_duplicates("dataset")
    keep = 100.0 * at[kept] / at[f"counts, no hash {top}"]
    big = at[at["ids"] >= large]
    most = big[LEARNED].max() if len(big) else np.nan
    if not len(big):
        reading = f"no set here has {large:,} ids or more"
    elif most <= 0:
        reading = ("there the hash keeps much of what the counts know, yet the model has not even reached the "
                   "popularity ranking through its hash, let alone the context: what holds Superbloom back on the "
                   "large sets is learning (steps and batch), not information the hash destroys")
    elif most < 10:
        reading = ("there the hash keeps much of what the counts know, yet the model has learned little beyond the "
                   "popularity the hash lets through: what holds Superbloom back on the large sets is learning "
                   "(steps and batch), not information the hash destroys")
    else:
        reading = "there the model has learned part of what the hash keeps"
    main = ceiling.iloc[0]
    capped = main[base] > main[kept]
    sweep = ceiling[ceiling["model"].astype(str).str.contains(r"-a\d+-", regex=True)].sort_values("alpha",
                                                                                              ascending=False)
    return {**_sweep_quoted(sweep, kept), "c_top": top, "c_alpha": str(profile_alpha), "c_large": f"{large:,}",
            "c_keep": "; ".join(f"{d} {k:.0f}%" for d, k in zip(at["dataset"], keep)),
            "c_learned": "; ".join(f"{d} {v:.0f}%" if np.isfinite(v) else f"{d} (counts not ahead)"
                                   for d, v in zip(at["dataset"], at[LEARNED])),
            "c_big_most": f"{most:.0f}%" if np.isfinite(most) else "not measured",
            "c_reading": reading, "c_main": str(main["dataset"]), "c_main_kept": f"{main[kept]:.1f}%",
            "c_main_base": f"{main[base]:.1f}%" if np.isfinite(main[base]) else "not measured",
            "c_main_reading": ("so at this alpha even a Superbloom model that predicted each hash's distribution as "
                               "well as the counts do would stay below the unhashed baseline of its size" if capped
                               else "so a Superbloom model that predicted each hash's distribution as well as the "
                               "counts do would pass the unhashed baseline of its size"),
}


def _sweep_quoted(sweep: pd.DataFrame, kept: str) -> dict[str, str]:
    """The coarseness diagnosis's models (alpha decreasing): what the hash keeps and the share learned at each
    alpha, and a reading of both trends."""
    if not len(sweep):
        return {"c_sweep_dataset": "not run", "c_sweep": "not run", "c_sweep_reading": "not measured"}
    keeps, learned = sweep[kept].to_numpy(), sweep[LEARNED].to_numpy()
    finer_keeps = bool((np.diff(keeps) > 0).all())
    finer_learns = bool((np.diff(learned) > 0).all())
    trend = ("a finer hash keeps more of the counts' recall" if finer_keeps else
             "a finer hash does not keep steadily more of the counts' recall")
    trend += (", and the same steps learn a larger share of it" if finer_learns else
              ", but the share the same steps learn does not grow steadily")
    limit = ("; the share learned stays below half at every alpha, so at these steps learning, not the hash, is "
             "the limit there" if np.nanmax(learned) < 50 else
             "; at the finest hash the model learns most of what it keeps")
    return {"c_sweep_dataset": str(sweep["dataset"].iloc[0]),
            "c_sweep": "; ".join(f"α = {int(r['alpha'])}: {r[kept]:.1f}% kept, {r[LEARNED]:.0f}% learned"
                                 for _, r in sweep.iterrows()),
            "c_sweep_reading": trend + limit}
