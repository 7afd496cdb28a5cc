"""The Superbloom chapter's length diagnosis (experiment ``longer``): does the headline comparison hold when the
models train longer?

The claims' deep pair (Superbloom and the unhashed baseline of its size, at the deepest of ``depths``) trains for at
most ``steps`` steps in Table 3, and on two CPU cores both reach that cap while their validation loss still falls.
This experiment trains the pair again with the cap at ``longer_steps``: the same learning rate (the one Table 3's
sweep chose, read from its results), seed ``seed``, data, batch, validation and early stopping, the linear decay now
reaching zero at the longer cap. Both are scored on the same test segments as Table 3, so each length's gap
(Superbloom minus baseline) gets a paired bootstrap over those segments (:mod:`~hashlib_core.papers.superbloom.
tables_longer`). No claim reads it: the claims read Table 3's seeded models; this says whether their verdict rests on
a length at which one model was further from converging than the other.
"""
from __future__ import annotations

from typing import Any

import pandas as pd

from hashlib_core.chapter import RunContext
from hashlib_core.papers.superbloom.training import chosen_rates, restored_seconds, scored, train_run

__all__ = ["LONGER_OUTPUTS", "LONGER_READS", "longer_pair", "longer_experiment"]

#: what the experiment writes: per model and cap its run, per test segment its hits, its curves
LONGER_OUTPUTS = ("longer", "longer_segments", "longer_curves")
#: Table 3's results it reads: the chosen rates, the runs at the shorter cap, their hits and curves
LONGER_READS = ("sweep", "models", "recall_segments", "curves")


def longer_pair(profile: Any) -> list[str]:
    """The models retrained: the claims' deep Superbloom and the baseline of its size."""
    roles = profile.roles()
    return [roles["superbloom_deep"], roles["baseline_deep"]]


def _short_runs(evidence: Any, names: list[str], seed: int) -> tuple[dict[str, float], pd.DataFrame, pd.DataFrame,
                                                                    pd.DataFrame]:
    """Table 3's chosen rate of each of ``names`` and, at that rate and ``seed``, its run, its hits and its curves."""
    rates = chosen_rates(evidence.table("sweep"), names)
    models = evidence.table("models")
    runs = pd.concat([models[(models["name"] == n) & (models["seed"] == seed)
                             & (models["learning_rate"] == rates[n])] for n in names], ignore_index=True)
    segs = evidence.table("recall_segments")
    hits = segs[segs["name"].isin(names) & (segs["seed"] == seed)]
    curves = evidence.table("curves")
    keep = pd.concat([curves[(curves["name"] == n) & (curves["seed"] == seed)
                             & (curves["learning_rate"] == rates[n])] for n in names], ignore_index=True)
    if len(runs) != len(names) or hits["name"].nunique() != len(names):
        raise RuntimeError(f"Table 3's results lack the seed-{seed} runs of {names} at their chosen rates: rerun "
                           f"recall")
    return rates, runs, hits, keep


def longer_experiment(ctx: RunContext) -> dict[str, pd.DataFrame]:
    """Retrain :func:`longer_pair` at ``longer_steps`` and put each run beside Table 3's (``max_steps`` tells them
    apart in every output)."""
    p, res = ctx.profile, ctx.resources
    names = longer_pair(p)
    rates, short_runs, short_hits, short_curves = _short_runs(ctx.evidence(), names, p.seed)
    rows, segs, curves = [], [], []
    for name in names:
        model, row, curve = train_run(res.specs[name], res, ctx, rates[name], p.seed, steps=p.longer_steps)
        rows.append(row)
        segs.append(scored(model.to(ctx.device), res, p.recall_at, name, p.seed).assign(max_steps=p.longer_steps))
        curves += [{**c, "max_steps": p.longer_steps} for c in curve]
    ctx.reuse(restored_seconds(rows))         # a run read back from an earlier process still cost its training time
    keep = [c for c in rows[0] if c in short_runs.columns]
    return {"longer": pd.concat([short_runs[keep], pd.DataFrame(rows)[keep]], ignore_index=True),
            "longer_segments": pd.concat([short_hits.assign(max_steps=p.steps), *segs], ignore_index=True),
            "longer_curves": pd.concat([short_curves.assign(max_steps=p.steps), pd.DataFrame(curves)],
                                       ignore_index=True)}
