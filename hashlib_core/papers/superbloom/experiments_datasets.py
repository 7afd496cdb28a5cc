"""The Superbloom chapter's deep pair on further id sets (experiment ``other_datasets``).

The deepest matched pair (Superbloom and the unhashed baseline of its size, widths matched again on each set's ids)
is trained at the learning rates chosen on the main data (seed ``seed``, at most ``other_steps`` steps) and scored
as Table 3's models are, on each of the profile's ``other_datasets``, beside the popularity ranking; Appendix E's
examples: the first ``examples`` test segments with each model's best five ids, named where the data has names
(Wikispeedia's pages, Last.fm's artists).
"""
from __future__ import annotations

from typing import Callable

import pandas as pd

from hashlib_core.chapter import RunContext
from hashlib_core.papers.superbloom.data import display_names
from hashlib_core.papers.superbloom.tables import EXAMPLE_COLUMNS, example_row, recall_table
from hashlib_core.papers.superbloom.training import (Resources, example_predictions, popularity_recall, scored,
                                                     train_run)

__all__ = ["DATASETS_OUTPUTS", "datasets_experiment"]

#: what the experiment writes
DATASETS_OUTPUTS = ("recall_datasets", "datasets_models", "datasets_curves", "datasets_examples")
#: Appendix E's examples: the best ids shown per example, and the depth within which the target's rank is given
_SHOWN, _RANK_WITHIN = 5, 100


def datasets_experiment(ctx: RunContext, chosen: Callable[[str], float]) -> dict[str, pd.DataFrame]:
    """Train and score the deep pair on each of ``other_datasets`` (``chosen(name)``: the learning rate chosen on
    the main data for the model ``name``)."""
    ks = ctx.profile.recall_at
    recalls, rows, curves, examples = [], [], [], []
    for dataset in ctx.profile.other_datasets:
        res = Resources(ctx, dataset)
        names, labels = display_names(res.sets)
        segs, dataset_rows = [], []
        for deep in res.profile.deep_models():
            spec = res.specs[deep.name]
            model, row, curve = train_run(spec, res, ctx, chosen(deep.name), res.profile.seed,
                                          steps=ctx.profile.other_steps or None)
            segs.append(scored(model.to(ctx.device), res, ks, spec.name, res.profile.seed))
            if ctx.profile.examples:
                shown = example_predictions(model, res, ctx.profile.examples, _SHOWN, _RANK_WITHIN)
                examples += [example_row(res.sets.name, spec.name, ex, names, labels) for ex in shown]
            dataset_rows.append({"dataset": res.sets.name, "train_pages": len(res.pages[0]),
                                 "validation_pages": len(res.pages[1]), "test_pages": len(res.pages[2]),
                                 "test_segments": len(res.test.segments), **row})
            curves += [{"dataset": res.sets.name, **c} for c in curve]
        table = recall_table(pd.concat(segs, ignore_index=True), ks, pd.DataFrame(dataset_rows))
        table = pd.concat([table, pd.DataFrame([popularity_recall(res, ks)])], ignore_index=True)
        table.insert(0, "dataset", res.sets.name)
        recalls.append(table)
        rows += dataset_rows
    return {"recall_datasets": pd.concat(recalls, ignore_index=True), "datasets_models": pd.DataFrame(rows),
            "datasets_curves": pd.DataFrame(curves),
            "datasets_examples": pd.DataFrame(examples, columns=EXAMPLE_COLUMNS)}
