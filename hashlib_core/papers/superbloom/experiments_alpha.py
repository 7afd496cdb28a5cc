"""The Superbloom chapter's diagnosis of the hash's coarseness on a large id set (experiment ``alpha``).

On the 41K-id sets the deep Superbloom model at the paper's alpha = 50 stays near a uniform guess while the unhashed
baseline of its size learns (``other_datasets``). ``alpha`` isolates the hashing: the same Transformer (the deepest
depth, width ``hidden``), the same data, learning rate and cap, with ``alphas`` ids per hash token, beside the
unhashed baseline of the size of the alpha = ``alpha`` model. If the models learn more as alpha falls, what holds
Superbloom back is the coarseness of its digests (how many ids share each token) at this training length, not the
Transformer or the masking.
"""
from __future__ import annotations

import pandas as pd

from hashlib_core.chapter import RunContext
from hashlib_core.papers.superbloom.data import DATASET_NAMES
from hashlib_core.papers.superbloom.tables import recall_table, uniform_loss
from hashlib_core.papers.superbloom.training import Resources, popularity_recall, resolve, scored, train_run

__all__ = ["alpha_experiment", "ALPHA_OUTPUTS", "ALPHA_SETTINGS"]

#: what the experiment writes
ALPHA_OUTPUTS = ("alpha", "alpha_models", "alpha_segments", "alpha_curves")
#: its own knobs (the other experiments do not read them)
ALPHA_SETTINGS = ("alpha_dataset", "alphas", "alpha_steps")


def alpha_experiment(ctx: RunContext, chosen) -> dict:
    """Train and score the coarseness diagnosis's models on ``alpha_dataset`` (one seed; ``chosen(spec_name)``: the
    learning rate chosen on the main data for the deep Superbloom or baseline model)."""
    p = ctx.profile
    res = Resources(ctx, p.alpha_dataset)
    roles = p.roles()
    rows, segs, curves = [], [], []
    for spec in resolve(p.alpha_models(), res.profile, res.sets.num_ids):
        lr = chosen(roles["superbloom_deep"] if spec.alpha > 1 else roles["baseline_deep"])
        model, row, curve = train_run(spec, res, ctx, lr, p.seed, steps=p.alpha_steps or None)
        segs.append(scored(model.to(ctx.device), res, p.recall_at, spec.name, p.seed))
        uniform = uniform_loss(pd.Series(row))
        rows.append({**row, "dataset": res.sets.name, "tokens_per_map": -(-res.sets.num_ids // spec.alpha),
                     "uniform_loss": uniform, "below_uniform": 1.0 + row["best_validation"] / uniform})
        curves += [{**c, "dataset": res.sets.name, "alpha": spec.alpha, "uniform_loss": uniform} for c in curve]
    models = pd.DataFrame(rows)
    segments = pd.concat(segs, ignore_index=True)
    table = recall_table(segments, p.recall_at, models)
    table = pd.concat([table, pd.DataFrame([popularity_recall(res, p.recall_at)])], ignore_index=True)
    table.insert(0, "dataset", DATASET_NAMES[p.alpha_dataset])
    return {"alpha": table, "alpha_models": models, "alpha_segments": segments, "alpha_curves": pd.DataFrame(curves)}
