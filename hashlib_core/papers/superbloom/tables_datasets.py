"""The Superbloom page's tables of the deep pair on the other id sets (:func:`datasets_view`, :func:`datasets_quoted`),
with the no-training yardsticks: the co-occurrence ranking's rows beside the deep pair's on every id set
(:func:`with_yardsticks`, :func:`datasets_table`) and the sentence that reads them (:func:`yardsticks_quoted`)."""
from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd

from hashlib_core.papers.superbloom.data import DATASET_NAMES, MASK_SHARE
from hashlib_core.papers.superbloom.training import POPULARITY
from hashlib_core.papers.superbloom.yardsticks import COOCCURRENCE

__all__ = ["top_cutoff", "datasets_view", "uniform_loss", "datasets_quoted", "datasets_table", "with_yardsticks",
           "yardsticks_quoted", "step_caps", "shapes_view", "shapes_quoted"]


def top_cutoff(frame: pd.DataFrame) -> str:
    """The column of the largest recall cut-off (``rec@k``) of ``frame``."""
    cutoffs = [c for c in frame.columns if str(c).startswith("rec@")]
    if not cutoffs:
        raise ValueError(f"no rec@k column among {list(frame.columns)}")
    return max(cutoffs, key=lambda c: int(c[4:]))


def datasets_view(recall: pd.DataFrame, models: pd.DataFrame, other: pd.DataFrame,
                  other_models: pd.DataFrame, main_dataset: str, popularity: pd.DataFrame | None = None
                  ) -> pd.DataFrame:
    """The deep models' recall@k (%) on the main dataset (``main_dataset``: its display name; ``popularity``: its
    context-free ranking's row) and on every other dataset, with each dataset's ids and test segments."""
    main = recall[recall["name"].isin(other["name"])]
    main = pd.concat([main, popularity], ignore_index=True) if popularity is not None else main.copy()
    main.insert(0, "dataset", main_dataset)
    ids = {**{d: n for d, n in zip(other_models["dataset"], other_models["num_ids"])},
           main_dataset: int(models["num_ids"].iloc[0])}
    out = pd.concat([main, other], ignore_index=True)
    out.insert(1, "ids", out["dataset"].map(ids).astype(int))
    gain = pd.concat([models.assign(dataset=main_dataset), other_models], ignore_index=True)
    gain = gain.groupby(["dataset", "name"], sort=False).first()
    out["below uniform (nats)"] = [uniform_loss(gain.loc[(d, n)]) + gain.loc[(d, n), "best_validation"]
                                   if (d, n) in gain.index else np.nan for d, n in zip(out["dataset"], out["name"])]
    recalls = [c for c in recall.columns if c.startswith("rec@")]
    return out[["dataset", "ids", "name", *recalls, "below uniform (nats)", "segments"]].rename(
        columns={"segments": "test segments"})


def uniform_loss(row: pd.Series) -> float:
    """The validation loss of a model that predicts every token of its softmax alike: m log(N / alpha) for Superbloom
    (one term per hash), log N for an unhashed model; a trained model's distance below it is what it learned."""
    tokens = -(-int(row["num_ids"]) // int(row["alpha"]))
    return int(row["num_hashes"]) * float(np.log(tokens))


def datasets_quoted(other: pd.DataFrame, other_models: pd.DataFrame) -> dict[str, str]:
    """The numbers the other-datasets paragraph quotes: how many further datasets, and on which of them Superbloom
    is ahead of the baseline of its size at rec@1 and at the largest cut-off."""
    top = top_cutoff(other)
    ahead: dict[str, list[str]] = {"rec@1": [], top: []}
    above: list[str] = []
    datasets = list(dict.fromkeys(other["dataset"]))
    for dataset in datasets:
        rows = other[other["dataset"] == dataset].set_index("name")
        base = next(n for n in rows.index if n.startswith("baseline"))
        sb = next(n for n in rows.index if n.startswith("superbloom"))
        for k in ahead:
            if rows.loc[sb, k] > rows.loc[base, k]:
                ahead[k].append(dataset)
        if POPULARITY in rows.index and max(rows.loc[base, top], rows.loc[sb, top]) > rows.loc[POPULARITY, top]:
            above.append(dataset)

    def which(names: list[str]) -> str:
        return f"{len(names)} of {len(datasets)}" + (f" ({', '.join(names)})" if names else "")

    return {"other_count": str(len(datasets)), "other_top": top, "other_ahead_rec1": which(ahead["rec@1"]),
            "other_ahead_top": which(ahead[top]), "other_above_prior": which(above)}


def datasets_table(shown) -> pd.DataFrame:
    """The page's table of the deep pair on every id set (:func:`~hashlib_core.papers.superbloom.tables.
    datasets_view`), with the co-occurrence rows when the shown results have the ``yardsticks``."""
    view = datasets_view(shown.table("recall"), shown.table("models"), shown.table("recall_datasets"),
                         shown.table("datasets_models"), DATASET_NAMES[shown.profile.dataset],
                         shown.table("popularity"))
    return with_yardsticks(view, shown.table("yardsticks")) if shown.has("yardsticks") else view


def with_yardsticks(view: pd.DataFrame, yardsticks: pd.DataFrame) -> pd.DataFrame:
    """``view`` (:func:`datasets_view`) with, after each dataset's rows, the
    co-occurrence ranking's row from ``yardsticks`` (its recall@k and test segments; nothing learned, so no
    "below uniform"). Datasets the yardsticks lack keep their rows alone."""
    counts = yardsticks[yardsticks["name"] == COOCCURRENCE].set_index("dataset")
    recalls = [c for c in view.columns if c.startswith("rec@")]
    parts = []
    for dataset, rows in view.groupby("dataset", sort=False):
        parts.append(rows)
        if dataset in counts.index:
            row = counts.loc[dataset]
            parts.append(pd.DataFrame([{"dataset": dataset, "ids": rows["ids"].iloc[0], "name": COOCCURRENCE,
                                        **{c: row[c] for c in recalls}, "test segments": row["segments"]}]))
    return pd.concat(parts, ignore_index=True)[view.columns]


def yardsticks_quoted(view: pd.DataFrame, yardsticks: pd.DataFrame) -> dict[str, str]:
    """The numbers the yardsticks' sentences quote, from :func:`with_yardsticks`'s table: on which datasets the
    count ranking is ahead of both trained models at the largest cut-off, and on the set with the most ids its
    recall there beside the better trained model's and the popularity ranking's, and how many id pairs its count
    table holds (from ``yardsticks``)."""
    top = top_cutoff(view)
    sets = {d: rows.set_index("name") for d, rows in view.groupby("dataset", sort=False)
            if COOCCURRENCE in set(rows["name"])}
    if not sets:
        raise ValueError("no dataset of the table has the co-occurrence ranking's row: run yardsticks")

    def trained(by: pd.DataFrame) -> pd.DataFrame:
        return by.drop(index=[n for n in (COOCCURRENCE, POPULARITY) if n in by.index])

    ahead = [d for d, by in sets.items() if by.loc[COOCCURRENCE, top] > trained(by)[top].max()]
    big = max(sets, key=lambda d: int(sets[d]["ids"].iloc[0]))
    by = sets[big]
    rivals = trained(by)
    best = rivals[top].idxmax()
    cooc, model = by.loc[COOCCURRENCE, top], rivals.loc[best, top]
    pairs = yardsticks.loc[(yardsticks["dataset"] == big) & (yardsticks["name"] == COOCCURRENCE), "pairs"]
    return {"ys_top": top, "ys_ahead": f"{len(ahead)} of {len(sets)}" + (f" ({', '.join(ahead)})" if ahead else ""),
            "ys_big": big, "ys_big_ids": f"{int(by['ids'].iloc[0]):,}", "ys_big_cooc": f"{cooc:.1f}%",
            "ys_big_model": f"{model:.1f}% ({best})", "ys_big_pairs": f"{int(pairs.iloc[0]):,}",
            "ys_big_pop": f"{by.loc[POPULARITY, top]:.1f}%" if POPULARITY in by.index else "not measured",
            "ys_big_reading": ("the set's contexts give away far more than the trained pair has learned; the models "
                               "fall short of the data, not the data of the task"
                               if cooc > 2 * model else "the trained pair has learned much of what the counts hold"
                               if cooc > model else "the trained pair has learned at least what the counts hold")}


def step_caps(profile) -> dict[str, int]:
    """The cap on steps of the runs on each id set the profile trains on (display names): ``steps`` on the main set,
    ``other_steps`` (0: ``steps``) on the other sets, ``alpha_steps`` (0: ``steps``) on the coarseness diagnosis's set
    when it is neither (a set keeps the first cap it gets in that order)."""
    caps = {DATASET_NAMES[profile.dataset]: profile.steps}
    for d in profile.other_datasets:
        caps.setdefault(DATASET_NAMES[d], profile.other_steps or profile.steps)
    if profile.alpha_dataset:
        caps.setdefault(DATASET_NAMES[profile.alpha_dataset], profile.alpha_steps or profile.steps)
    return caps


def _passes(shapes: pd.DataFrame, caps: Mapping[str, int]) -> pd.Series:
    """How many times a run at its cap on steps (``caps``: per dataset's display name) sees each training segment on
    average: cap x batch / training segments."""
    missing = sorted(set(shapes["dataset"]) - set(caps))
    if missing:
        raise ValueError(f"no cap on steps given for {missing}")
    return shapes["dataset"].map(caps) * shapes["batch"] / shapes["train_segments"]


def shapes_view(shapes: pd.DataFrame, caps: Mapping[str, int]) -> pd.DataFrame:
    """What a training step holds on each id set (the ``set_shapes`` result), and how many passes over its training
    segments a run makes at its cap on steps (``caps``: per dataset's display name), for the page."""
    return pd.DataFrame({"dataset": shapes["dataset"], "ids": shapes["ids"], "training pages": shapes["train_pages"],
                         "training segments": shapes["train_segments"],
                         "items per segment": shapes["items_per_segment"],
                         "masked items per segment": shapes["masked_per_segment"],
                         "masked items per step": shapes["masked_per_step"],
                         "cap on steps": shapes["dataset"].map(caps),
                         "passes over the segments at the cap": _passes(shapes, caps)})


def shapes_quoted(shapes: pd.DataFrame, view: pd.DataFrame, caps: Mapping[str, int]) -> dict[str, str]:
    """The numbers the step-shape sentences quote: the batch, each set's masked items per step and passes over its
    segments at its cap (``caps``, as for :func:`shapes_view`), and on the set with the fewest targets per step
    (``view``: :func:`datasets_table`'s rows) how many times fewer than the main set (the first row) and where its
    better trained model and the two rankings end at the largest cut-off, with a reading: whether the trained models
    stay at the popularity ranking while the counts read from the same pages more than double it."""
    top = top_cutoff(view)
    passes = _passes(shapes, caps)
    main = shapes.iloc[0]
    where = shapes["masked_per_step"].idxmin()
    fewest = shapes.loc[where]
    rows = view[view["dataset"] == fewest["dataset"]].set_index("name")
    trained = rows.drop(index=[n for n in (COOCCURRENCE, POPULARITY) if n in rows.index])

    def at(name: str) -> str:
        return f"{rows.loc[name, top]:.1f}%" if name in rows.index else "not measured"

    ratio = main["masked_per_step"] / fewest["masked_per_step"]
    best = trained[top].max() if len(trained) else np.nan
    pop = rows.loc[POPULARITY, top] if POPULARITY in rows.index else np.nan
    cooc = rows.loc[COOCCURRENCE, top] if COOCCURRENCE in rows.index else np.nan
    if where == shapes.index[0] or not ratio > 1:
        reading = f"{main['dataset']} itself has the fewest targets per step, so no other set is trained on fewer"
    elif np.isfinite(best) and np.isfinite(pop) and np.isfinite(cooc) and best <= pop and cooc > 2 * pop:
        reading = (f"no trained model passes the popularity ranking there, while the counts read from the same pages "
                   f"more than double it: that set's rows measure a short training ({passes[where]:.2f} passes over "
                   f"its segments, {ratio:.1f} times fewer targets per step than on {main['dataset']}), not what its "
                   f"data allows")
    elif np.isfinite(best) and np.isfinite(pop) and best > pop:
        reading = "a trained model passes the popularity ranking there even so"
    else:
        reading = "the rankings do not separate the data from the training there"
    return {"sh_reading": reading, "sh_batch": str(int(main["batch"])), "sh_main": str(main["dataset"]),
            "sh_mask_share": f"{MASK_SHARE:.0%}",
            "sh_masked": "; ".join(f"{d} {m:.0f}" for d, m in zip(shapes["dataset"], shapes["masked_per_step"])),
            "sh_items": "; ".join(f"{d} {m:.1f}" for d, m in zip(shapes["dataset"], shapes["items_per_segment"])),
            "sh_passes": "; ".join(f"{d} {x:.2f}" for d, x in zip(shapes["dataset"], passes)),
            "sh_fewest": str(fewest["dataset"]), "sh_ratio": f"{ratio:.1f}",
            "sh_fewest_model": f"{best:.1f}% ({trained[top].idxmax()})" if len(trained) else "not measured",
            "sh_fewest_pop": at(POPULARITY), "sh_fewest_cooc": at(COOCCURRENCE), "sh_top": top}
