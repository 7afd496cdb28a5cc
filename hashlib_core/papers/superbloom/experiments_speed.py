"""The Superbloom chapter's speed experiments: decoding at the paper's |S| with a trained model (§2.5, experiment
``decoding``) and the training step of the unhashed model against Superbloom's as the id space grows (§2.4,
experiment ``train_time``). Both time in alternation, so that the two sides see the same state of a shared machine
(:mod:`~hashlib_core.benchmarks.superbloom_decoding`, :mod:`~hashlib_core.benchmarks.superbloom_train_step`)."""
from __future__ import annotations

import pandas as pd
import torch

from hashlib_core.chapter import RunContext
from hashlib_core.papers.superbloom.training import evaluate, test_log_probs, train_run

__all__ = ["decoding_rows", "train_time_rows"]


def decoding_rows(ctx: RunContext) -> dict:
    """§2.5 at the paper's |S| with a trained model: the deep Superbloom model trained on the main dataset's sets in
    an id space of ``decode_ids`` ids, scored like ``recall`` (certified beam search), then exhaustive scoring and
    beam search timed in alternation on its distributions at ``decode_positions`` test positions."""
    from hashlib_core.benchmarks.superbloom_decoding import compare_decoders

    res = ctx.resources
    p = res.profile
    spec = res.specs[p.roles()["superbloom_deep"]]
    model, row, _ = train_run(spec, res, ctx, res.chosen(spec), p.seed, steps=p.decode_steps or None,
                              num_ids=p.decode_ids)
    model = model.to(ctx.device)
    hits = evaluate(model, res, p.recall_at)
    log_probs = test_log_probs(model, res, p.decode_positions)
    rows = []
    for k in p.recall_at:
        timing = compare_decoders(log_probs, model.maps, k, p.decode_repeats, ctx.device)
        low, high = timing.pop("speedup_range_paired")
        rows.append({"name": spec.name, "num_ids": p.decode_ids, "data_ids": res.sets.num_ids,
                     "tokens_per_map": model.maps.tokens_per_map, "steps": row["steps"],
                     "final_loss": row["final_loss"], "test_segments": len(hits),
                     **{f"rec@{c}": 100.0 * hits[f"hit@{c}"].mean() for c in p.recall_at},
                     "recall_certified_%": 100.0 * hits["certified"].mean(),
                     "recall_mean_scored": hits["scored"].mean(), **timing,
                     "speedup_min_paired": low, "speedup_max_paired": high,
                     "train_wall_time_s": row["wall_time_s"], "train_converged": row["converged"],
                     "torch_threads": torch.get_num_threads()})
    return {"decoding_trained": pd.DataFrame(rows)}


def train_time_rows(ctx: RunContext) -> dict:
    """§2.4: a training step of the unhashed model and of Superbloom (the same Transformer) over the main data's ids
    and each larger id space of ``train_time_ids``, timed in alternation; no model is kept."""
    from hashlib_core.benchmarks.superbloom_train_step import compare_train_steps, train_time_spaces, train_time_specs

    res, p, rows = ctx.resources, ctx.profile, []
    for n in train_time_spaces(p, res.sets.num_ids):
        rows += compare_train_steps(train_time_specs(p), p, n, res.train_segments, p.train_time_repeats,
                                    p.train_time_steps, ctx.device)
    return {"train_time": pd.DataFrame(rows).assign(data_ids=res.sets.num_ids, torch_threads=torch.get_num_threads())}
