"""Appendix E's qualitative examples: the rows the examples experiment writes and how the page shows them."""
from __future__ import annotations

from typing import Any

import pandas as pd

__all__ = ["EXAMPLE_COLUMNS", "CONTEXT_SHOWN", "example_row", "example_subset", "examples_view", "examples_quoted"]

#: Appendix E's example table: one row per (example, model); ids shown by their names where the data has them
EXAMPLE_COLUMNS = ["dataset", "example", "model", "context", "target", "predicted", "target_rank", "certified",
                   "labels"]
#: context items shown per example (the rest are counted)
CONTEXT_SHOWN = 6


def example_row(dataset: str, model: str, example: dict[str, Any], names: list[str], labels: str) -> dict[str, Any]:
    """One example (:func:`~hashlib_core.papers.superbloom.training.example_predictions`) with its ids named."""
    context = [names[i] for i in example["context"]]
    more = len(context) - CONTEXT_SHOWN
    shown = "; ".join(context[:CONTEXT_SHOWN]) + (f"; ... (+{more} more)" if more > 0 else "")
    return {"dataset": dataset, "example": example["example"], "model": model, "context": shown,
            "target": names[example["target"]], "predicted": "; ".join(names[i] for i in example["predicted"]),
            "target_rank": example["target_rank"], "certified": example["certified"], "labels": labels}


#: the datasets whose examples the page shows, in order of preference: ids a reader can read (page titles, names)
_NAMED_FIRST = ("Wikispeedia", "Last.fm")


def example_subset(examples: pd.DataFrame) -> pd.DataFrame:
    """The examples of one dataset: the first of :data:`_NAMED_FIRST` present (ids with readable names), else the
    first dataset's."""
    present = list(dict.fromkeys(examples["dataset"]))
    dataset = next((d for d in _NAMED_FIRST if d in present), present[0])
    return examples[examples["dataset"] == dataset]


def examples_view(examples: pd.DataFrame) -> pd.DataFrame:
    """The examples as the page shows them: the target's rank among the best 100 (or "> 100")."""
    out = examples.sort_values("example", kind="stable").copy()          # each example's models side by side
    out["target_rank"] = [str(r) if r else "> 100" for r in out["target_rank"]]
    return out[["example", "model", "context", "target", "predicted", "target_rank"]].rename(
        columns={"context": "visible items (shuffled)", "target": "masked item",
                 "predicted": "best five (certified beam search)", "target_rank": "rank of the masked item"})


def examples_quoted(examples: pd.DataFrame) -> dict[str, str]:
    """The numbers the examples paragraph quotes: how many examples, where their labels come from, and for each
    model in how many of them the masked item is among the best 100."""
    out = {"ex_count": str(int(examples["example"].nunique())), "ex_dataset": str(examples["dataset"].iloc[0]),
           "ex_labels": str(examples["labels"].iloc[0])}
    for model, rows in examples.groupby("model", sort=False):
        family = "base" if model.startswith("baseline") else "sb"
        out[f"ex_found_{family}"] = str(int((rows["target_rank"] > 0).sum()))
        out[f"ex_top5_{family}"] = str(int(rows["target_rank"].between(1, 5).sum()))
    return out
