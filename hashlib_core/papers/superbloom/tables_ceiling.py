"""The Superbloom page's reading of the no-training rankings through the hash (the ``yardsticks_hashed`` result of
the ``yardsticks`` experiment): for every trained Superbloom model, what the popularity and co-occurrence rankings
reach when Superbloom's decoding sees them through hash maps like the model's, and how much of the gap between the
two the model has covered (:func:`ceiling_view`, :func:`ceiling_quoted`)."""
from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd

from hashlib_core.papers.superbloom.data import DATASET_NAMES
from hashlib_core.papers.superbloom.tables_datasets import datasets_table, top_cutoff
from hashlib_core.papers.superbloom.yardsticks import COOCCURRENCE
from hashlib_core.papers.superbloom.yardsticks_hashed import COOCCURRENCE_HASHED, POPULARITY_HASHED

__all__ = ["ceiling_view", "ceiling_table", "ceiling_display", "ceiling_quoted", "LEARNED", "LARGE_IDS"]

#: the column of the share of the gap between the two rankings through the hash a model has covered
LEARNED = "covered of the gap (%)"
#: the sets the issue calls large ("a 40K+ id set"): where an unhashed table dominates a model of a million parameters
LARGE_IDS = 40_000


def ceiling_view(view: pd.DataFrame, alpha: pd.DataFrame | None, alpha_models: pd.DataFrame | None,
                 hashed: pd.DataFrame, profile_alpha: int, spread: Mapping[str, float] | None = None
                 ) -> pd.DataFrame:
    """One row per trained Superbloom model: on its dataset and at its alpha, at the largest cut-off, the popularity
    ranking through the hash, the model, the co-occurrence ranking through the hash (both averaged over the hash
    maps of the seeds measured; the counts' chosen powers) and without it, the unhashed baseline trained with the
    model (the deep pair's, of the model's size; the coarseness diagnosis's, of the size of its model at
    ``profile_alpha``; blank when none was), and the share of the gap between the two rankings through the hash the
    model has covered (``(model - popularity) / (counts - popularity)``, blank when the counts are not ahead).

    ``view``: the deep pair on every id set with the unhashed counts' rows
    (:func:`~hashlib_core.papers.superbloom.tables_datasets.datasets_table`), its Superbloom rows at
    ``profile_alpha``; ``alpha``/``alpha_models``: the coarseness diagnosis's recall and models (or None);
    ``hashed``: the rankings through the hash (``yardsticks_hashed``); ``spread``: per dataset, the standard deviation
    across seeds of its deep baseline's recall at the largest cut-off, where it was trained with several (a column,
    blank elsewhere)."""
    top = top_cutoff(view)
    spread = spread or {}

    def baseline(frame: pd.DataFrame, dataset: str) -> float:
        rows = frame[(frame["dataset"] == dataset) & frame["name"].astype(str).str.startswith("baseline")]
        return float(rows[top].iloc[0]) if len(rows) else np.nan

    trained = [(r["dataset"], r["name"], profile_alpha, r[top], baseline(view, r["dataset"]))
               for _, r in view.iterrows() if str(r["name"]).startswith("superbloom")]
    if alpha is not None and alpha_models is not None:
        alphas = alpha_models.set_index("name")["alpha"]
        trained += [(r["dataset"], r["name"], int(alphas[r["name"]]), r[top], baseline(alpha, r["dataset"]))
                    for _, r in alpha.iterrows() if r["name"] in alphas.index and int(alphas[r["name"]]) > 1]
    through = hashed.groupby(["dataset", "alpha", "name"])[top].mean()               # over the seeds' maps
    powers = (hashed[hashed["name"] == COOCCURRENCE_HASHED].groupby(["dataset", "alpha"])["power"]
              .agg(lambda p: "/".join(f"{v:g}" for v in sorted(set(p)))) if "power" in hashed else None)
    ids = view.groupby("dataset", sort=False)["ids"].first()
    counts = view[view["name"] == COOCCURRENCE].set_index("dataset")[top]
    rows = []
    for dataset, name, a, model, base in trained:
        if (dataset, a, COOCCURRENCE_HASHED) not in through.index:
            continue
        pop, kept = through[(dataset, a, POPULARITY_HASHED)], through[(dataset, a, COOCCURRENCE_HASHED)]
        rows.append({"dataset": dataset, "ids": int(ids[dataset]), "model": name, "alpha": a,
                     f"popularity via hash {top}": pop, f"Superbloom {top}": model,
                     f"counts via hash {top}": kept,
                     "counts' power": powers.get((dataset, a), "") if powers is not None else "",
                     f"unhashed baseline {top}": base,
                     f"baseline sd {top}": spread.get(dataset, np.nan) if name == _deep_name(view, dataset) else np.nan,
                     f"counts, no hash {top}": counts.get(dataset, np.nan),
                     LEARNED: 100.0 * (model - pop) / (kept - pop) if kept > pop else np.nan})
    if not rows:
        raise ValueError("no trained Superbloom model has the rankings through its hash: run yardsticks after the "
                         "models' experiments (same dataset and alpha)")
    out = pd.DataFrame(rows)
    out.attrs["top"] = top
    return out


def ceiling_display(ceiling: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The page's form of :func:`ceiling_view`: short column names (every recall at the one cut-off the caption
    names), without the ids (the other id sets' table gives them); and its caption."""
    top = ceiling.attrs.get("top") or _top_of(ceiling)
    names = {f"popularity via hash {top}": "popularity via hash", f"Superbloom {top}": "Superbloom",
             f"counts via hash {top}": "counts via hash", "counts' power": "power",
             f"unhashed baseline {top}": "baseline", f"baseline sd {top}": "baseline sd",
             f"counts, no hash {top}": "counts, no hash", LEARNED: "covered (%)"}
    caption = (f"Each trained Superbloom model beside the two rankings that train nothing, passed through hash maps "
               f"like its own (the counts at the power chosen on validation), the unhashed baseline trained with it "
               f"(its sd across seeds where it has several) and the counts without the hash: {top} (%). The rows whose "
               f"model names carry their alpha are the coarseness diagnosis's, at its own cap; their baseline is sized "
               f"to its model at the chapter's alpha")
    return ceiling.drop(columns="ids").rename(columns=names), caption


def _top_of(ceiling: pd.DataFrame) -> str:
    return next(c for c in ceiling.columns if c.startswith("counts via hash ")).rsplit()[-1]


def _deep_name(view: pd.DataFrame, dataset: str) -> str | None:
    names = [n for n in view.loc[view["dataset"] == dataset, "name"] if str(n).startswith("superbloom")]
    return names[0] if names else None


def ceiling_table(shown) -> pd.DataFrame:
    """:func:`ceiling_view` of the shown results (the deep pair on every id set, the coarseness diagnosis when run,
    the rankings through the hash), with the spread across seeds of the main set's deep baseline."""
    has_alpha = shown.has("alpha")
    view = datasets_table(shown)
    top = top_cutoff(view)
    recall = shown.table("recall").set_index("name")
    base = shown.profile.roles()["baseline_deep"]
    spread = ({DATASET_NAMES[shown.profile.dataset]: float(recall.loc[base, f"sd {top}"])}
              if base in recall.index and f"sd {top}" in recall else {})
    return ceiling_view(view, shown.table("alpha") if has_alpha else None,
                        shown.table("alpha_models") if has_alpha else None, shown.table("yardsticks_hashed"),
                        shown.profile.alpha, spread)


def _share(value: float) -> str:
    return f"{value:.0f}%" if np.isfinite(value) else "(counts not ahead)"


def _large_reading(big: pd.DataFrame, top: str) -> str:
    """What the large sets' shares say: the model's place between the two rankings through the hash."""
    if not len(big):
        return f"no set here has {LARGE_IDS:,} ids or more"
    shares = big[LEARNED].dropna()
    if not len(shares):
        return ("there the counts through the hash are not ahead of popularity through it, so this measurement does "
                "not separate the hash from the training")
    reach = " and ".join(f"{k:.1f}% on {d}" for d, k in zip(big["dataset"], big[f"counts via hash {top}"]))
    model = " and ".join(f"{k:.1f}%" for k in big[f"Superbloom {top}"])
    most = shares.max()
    if most <= 0:
        return (f"there the model ({model} at {top}) is below even the popularity ranking through its own hash, while "
                f"the counts through the same hash reach {reach}: at this training the hash is not yet what holds "
                f"the model back")
    if most < 10:
        return (f"there the model ({model} at {top}) has covered under a tenth of the gap, while the counts through "
                f"the same hash reach {reach}: at this training the hash is not yet what holds the model back")
    return "there the model has covered a part of the gap"


def _main_sentence(main: pd.Series, top: str) -> str:
    """Where the main set's deep model stands, and whether the counts through the hash pass its baseline (a
    difference within the baseline's spread across seeds, where known, is read as level)."""
    kept, base, share = main[f"counts via hash {top}"], main[f"unhashed baseline {top}"], main[LEARNED]
    sd = main.get(f"baseline sd {top}", np.nan)
    head = (f"On {main['dataset']} the model has covered {_share(share)} of the gap"
            if np.isfinite(share) else f"On {main['dataset']} the counts through the hash are not ahead of popularity")
    if not np.isfinite(base):
        return f"{head}; no unhashed baseline was trained beside it"
    margin = sd if np.isfinite(sd) else 0.0
    against = (f"the counts through the hash reach {kept:.1f}% at {top}, the unhashed baseline of its size "
               f"{base:.1f}%" + (f" (sd {sd:.1f} across seeds)" if np.isfinite(sd) else ""))
    if base - kept > margin:
        return (f"{head}; {against}: at this alpha even a Superbloom model that predicted each hash's distribution as "
                f"well as the counts do would stay below that baseline")
    if kept - base > margin:
        return f"{head}; {against}: the hash leaves room to pass that baseline"
    return (f"{head}; {against}: a Superbloom model that predicted each hash's distribution as well as the counts "
            f"do would come about level with that baseline, within its spread across seeds")


def _sweep_quoted(sweep: pd.DataFrame, kept: str) -> dict[str, str]:
    """The coarseness diagnosis's models (alpha decreasing): what the hash keeps and the share covered at each
    alpha, and a reading of both trends and of the finest hash."""
    if not len(sweep):
        return {"c_sweep_dataset": "not run", "c_sweep": "not run", "c_sweep_reading": "not measured"}
    listed = "; ".join(f"α = {int(r['alpha'])}: {r[kept]:.1f}% through the hash, "
                       + (f"{r[LEARNED]:.0f}% covered" if np.isfinite(r[LEARNED]) else "counts not ahead")
                       for _, r in sweep.iterrows())
    out = {"c_sweep_dataset": str(sweep["dataset"].iloc[0]), "c_sweep": listed}
    if len(sweep) < 2:
        return {**out, "c_sweep_reading": "one alpha only, so no trend"}
    keeps, covered = sweep[kept].to_numpy(), sweep[LEARNED].to_numpy()
    reading = ("a finer hash lets more of the counts' recall through" if (np.diff(keeps) > 0).all() else
               "a finer hash does not let steadily more of the counts' recall through")
    if np.isfinite(covered).all():
        reading += (", and the model (larger at each finer alpha) covers a larger share of the gap"
                    if (np.diff(covered) > 0).all() else ", but the share of the gap covered does not grow steadily")
    finest = sweep.iloc[-1]
    if np.isfinite(finest[LEARNED]):
        reading += (f"; even at α = {int(finest['alpha'])} it covers {finest[LEARNED]:.0f}% of it, so there too the "
                    f"training, not the hash, is what falls short" if finest[LEARNED] < 50 else
                    f"; at α = {int(finest['alpha'])} it covers most of it")
    return {**out, "c_sweep_reading": reading}


def ceiling_quoted(ceiling: pd.DataFrame, profile_alpha: int) -> dict[str, str]:
    """The numbers the ceiling paragraph quotes, from :func:`ceiling_view` (its first row: the main dataset's deep
    model): at ``profile_alpha``, on each dataset, the share of the counts' recall left through the hash and the share
    of the gap the deep model covered; a sentence on the main dataset; on the sets of at least :data:`LARGE_IDS` ids,
    a reading of their shares; across the alphas of the coarseness diagnosis (rows named ``-a<alpha>-``), the rankings'
    recall through the hash and the share covered, with a reading."""
    top = ceiling.attrs.get("top") or _top_of(ceiling)
    kept = f"counts via hash {top}"
    at = ceiling[ceiling["alpha"] == profile_alpha].drop_duplicates("dataset")
    kept_share = 100.0 * at[kept] / at[f"counts, no hash {top}"]
    big = at[at["ids"] >= LARGE_IDS]
    sweep = ceiling[ceiling["model"].astype(str).str.contains(r"-a\d+-", regex=True)].sort_values(
        "alpha", ascending=False)
    return {**_sweep_quoted(sweep, kept), "c_top": top, "c_alpha": str(profile_alpha), "c_large": f"{LARGE_IDS:,}",
            "c_keep": "; ".join(f"{d} {k:.0f}%" for d, k in zip(at["dataset"], kept_share)),
            "c_learned": "; ".join(f"{d} {_share(v)}" for d, v in zip(at["dataset"], at[LEARNED])),
            "c_reading": _large_reading(big, top), "c_main_sentence": _main_sentence(ceiling.iloc[0], top)}
