"""Chapter "Every family on one backbone": each hash-embedding family of the catalogue in place of BERT's table
(Track A), and each hashed n-gram memory added to a small LM's table (Track B), at equal budgets.

Experiments (``python -m hashlib_core.papers.families --profile P [--only ...]``):

* ``replace_<task>_sweep``, ``replace_<task>_sweep_rest``, ``replace_<task>_sweep_rest2``, ``replace_<task>_seeds``
  and ``replace_<task>`` (``sst2``, ``massive``): Track A's runs on one task in two stages, the learning-rate sweeps
  (:func:`~.track_a.sweep_task`: first the families the claims compare, then the rest in two halves), then at the
  chosen rates the other seeds of the swept settings and the other budgets (:func:`~.track_a.finish_task`), each
  part under an hour in the ``cpu`` profile; ``replace`` merges the tasks;
* ``collisions``: every family's hash on the vocabulary against the birthday bound (no training);
* ``throughput``: each family's build (precompute) time and forward tokens per second on one CPU thread;
* ``add_sweep``, ``add_sweep_rest`` and ``add``: Track B's runs in two stages, the memories' learning-rate sweeps
  in two halves (:func:`~.track_b.sweep_memories`), then each memory's other seeds and budgets at its chosen rate
  (:func:`~.track_b.fit_memories`), each under an hour in the ``cpu`` profile;
* ``claims``: the source papers' comparative claims this backbone can test.
"""
from __future__ import annotations

import pandas as pd

from hashlib_core.chapter import Chapter, RunContext
from hashlib_core.embeddings import catalogue
from hashlib_core.embeddings.diagnostics import collisions
from hashlib_core.papers.families.profiles import PROFILES
from hashlib_core.papers.families.track_a import (TrackA, finish_task, majority_shares, sweep_families, sweep_task,
                                                task_deciles)
from hashlib_core.papers.families.track_b import fit_memories, memory_parts, sweep_memories

__all__ = ["CHAPTER", "TRACK_A_ONLY", "TRACK_B_ONLY", "TASK_PARTS"]

CHAPTER = Chapter("families", "Every family on one backbone", PROFILES, resources=lambda ctx: TrackA(ctx.profile))

#: settings only one track reads (the other track's results stay current when one changes)
TRACK_B_ONLY = ("memories", "memory_multiples", "lm_vocab", "lm_layers", "lm_hidden", "lm_heads", "lm_seq_len",
                "lm_batch", "lm_train_tokens", "lm_protocol", "lm_validation_windows")
TRACK_A_ONLY = ("tasks", "families", "massive_families", "budgets", "sweep_budget", "seeded_budgets",
                "seeded_families", "seeded_smallest", "sst2_protocol", "massive_protocol", "layers", "hidden", "heads",
                "intermediate", "max_len", "train_limit", "sst2_heldout", "sst2_report", "eval_limit", "batch",
                "length_group", "typo_rate")
_BENCH = ("bench_batch", "bench_length", "bench_repeats")
_KINDS = ("runs", "curves")
TASK_PARTS = {f"replace_{task}": task for task in ("sst2", "massive")}
_TRACK_A_PART = (*TRACK_B_ONLY, *_BENCH, "tasks")
#: settings of one task's runs only (the other task's parts stay current when they change)
_ONLY = {"sst2": ("sst2_protocol", "sst2_heldout", "sst2_report"),
         "massive": ("massive_protocol", "massive_families")}


_PART = {"claimed": "sweep", "rest": "sweep_rest", "rest2": "sweep_rest2"}


def _sweep(task: str, part: str):
    def run(ctx: RunContext) -> dict:
        """Track A on one task, first stage: the learning-rate sweep at each family's reference size (the claimed
        families, or the rest)."""
        out = sweep_task(ctx, task, part)
        return {f"{task}_{_PART[part]}": out["runs"], f"{task}_{_PART[part]}_curves": out["curves"]}
    return run


def _finish(task: str, part: str):
    def run(ctx: RunContext) -> dict:
        """Track A on one task, second stage at the chosen rates: ``seeds``, the other seeds of the swept settings
        (the runs the claims compare); then the other budgets, merged with every run of the task."""
        evidence = ctx.evidence()
        parts = [f"{task}_{_PART[p]}" for p in _PART if sweep_families(ctx.profile, p, task)]
        read = parts + ([f"{task}_seeds"] if part == "rest" else [])
        missing = [name for name in read if not evidence.has(name)]
        if missing:
            raise RuntimeError(f"{task}'s earlier stages have no results {missing}: run them first (--only "
                               f"{','.join(f'replace_{name}' for name in missing)})")
        out = finish_task(ctx, task, pd.concat([evidence.table(name) for name in read], ignore_index=True),
                          pd.concat([evidence.table(f"{name}_curves") for name in read], ignore_index=True), part)
        if part == "seeds":
            return {f"{task}_seeds": out["runs"], f"{task}_seeds_curves": out["curves"]}
        return {f"{task}_{kind}": out[kind] for kind in _KINDS}
    return run


for _name, _task in TASK_PARTS.items():
    _in = (lambda task: lambda profile: task in profile.tasks)(_task)
    _apart = (*_TRACK_A_PART, *(v for t, names in _ONLY.items() if t != _task for v in names))
    for _part, _out in _PART.items():
        _when = (lambda task, part: lambda profile: task in profile.tasks
                 and bool(sweep_families(profile, part, task)))(_task, _part)
        CHAPTER.experiment(f"replace_{_task}_{_out}", outputs=(f"{_task}_{_out}", f"{_task}_{_out}_curves"),
                           when=_when, independent_of=_apart)(_sweep(_task, _part))
    _sweeps = tuple(f"{_task}_{o}{c}" for o in _PART.values() for c in ("", "_curves"))
    CHAPTER.experiment(f"{_name}_seeds", outputs=(f"{_task}_seeds", f"{_task}_seeds_curves"), when=_in,
                       independent_of=_apart, reads=_sweeps)(_finish(_task, "seeds"))
    CHAPTER.experiment(_name, outputs=tuple(f"{_task}_{kind}" for kind in _KINDS), when=_in, independent_of=_apart,
                       reads=(*_sweeps, f"{_task}_seeds", f"{_task}_seeds_curves"))(_finish(_task, "rest"))


@CHAPTER.experiment("replace", outputs=("runs", "curves", "deciles", "majority"),
                    independent_of=(*TRACK_B_ONLY, *_BENCH),
                    reads=tuple(f"{task}_{kind}" for task in TASK_PARTS.values() for kind in _KINDS))
def _replace(ctx: RunContext) -> dict:
    """Track A's tasks concatenated (no training), each chosen run's accuracy by frequency decile, and each task's
    majority-class share of its held-out and report items (the floor a stuck model sits at)."""
    evidence = ctx.evidence()
    tasks = list(ctx.profile.tasks)
    missing = [t for t in tasks if not evidence.has(f"{t}_runs")]
    if missing:
        raise RuntimeError(f"Track A's tasks {missing} have no results: run them first (--only "
                           f"{','.join(f'replace_{t}_sweep,replace_{t}' for t in missing)},replace)")
    out = {kind: pd.concat([evidence.table(f"{t}_{kind}") for t in tasks], ignore_index=True) for kind in _KINDS}
    out["deciles"] = pd.concat([task_deciles(ctx.resources, t, evidence.table(f"{t}_runs")) for t in tasks],
                               ignore_index=True)
    out["majority"] = pd.DataFrame([{"task": t, **majority_shares(ctx.resources.task(t), ctx.profile.protocol(t))}
                                    for t in tasks])
    return out


@CHAPTER.experiment("collisions", outputs=("collisions",),
                    independent_of=(*_TRACK_A_PART, *_ONLY["sst2"], *_ONLY["massive"], "length_group"))
def _collisions(ctx: RunContext) -> dict:
    """Every (family, budget) of Track A built once (seed 0): tokens sharing their whole signature, against the
    birthday bound's expectation for a uniform hash into the family's code space."""
    res: TrackA = ctx.resources
    from hashlib_core.papers.families.track_a import settings

    rows = []
    for s in settings(ctx.profile, len(res.vocab)):
        emb = catalogue.build(s.family, res.vocab, res.budget(s.family, s.fraction), ctx.profile.hidden, seed=0)
        rows.append({"family": s.family, "fraction": s.fraction, "emb_params": emb.embedding_parameter_count(),
                     **collisions(emb)})
    return {"collisions": pd.DataFrame(rows)}


@CHAPTER.experiment("throughput", outputs=("throughput",),
                    independent_of=(*TRACK_B_ONLY, "tasks", *_ONLY["sst2"], *_ONLY["massive"], "length_group"))
def _throughput(ctx: RunContext) -> dict:
    """Each family at the sweep budget: build time (hashing the vocabulary once) and forward tokens per second on
    one CPU thread (:mod:`hashlib_core.benchmarks.families`)."""
    import torch

    from hashlib_core.benchmarks.families import run_benchmark

    p = ctx.profile
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        out = run_benchmark(list(p.families), p.sweep_budget, p.hidden, p.bench_batch, p.bench_length,
                            p.bench_repeats, p.seed)
    finally:
        torch.set_num_threads(threads)
    return {"throughput": pd.DataFrame(out["results"])}


_LM_PART = {"first": "lm_sweep", "rest": "lm_sweep_rest"}


def _add_sweep(part: str):
    def run(ctx: RunContext) -> dict:
        """Track B, first stage: one part of the memories' learning-rate sweeps on PTB (first seed, first added
        budget)."""
        out = sweep_memories(ctx, part)
        return {_LM_PART[part]: out["lm_sweep"], f"{_LM_PART[part]}_curves": out["lm_sweep_curves"]}
    return run


for _part, _out in _LM_PART.items():
    CHAPTER.experiment("add_sweep" if _part == "first" else "add_sweep_rest", outputs=(_out, f"{_out}_curves"),
                       when=(lambda part: lambda profile: bool(memory_parts(profile, part)))(_part),
                       independent_of=(*TRACK_A_ONLY, *_BENCH))(_add_sweep(_part))


@CHAPTER.experiment("add", outputs=("lm_runs", "lm_curves", "lm_windows"), independent_of=(*TRACK_A_ONLY, *_BENCH),
                    reads=tuple(f"{o}{c}" for o in _LM_PART.values() for c in ("", "_curves")))
def _add(ctx: RunContext) -> dict:
    """Track B, second stage: every memory's other seeds and larger budgets at its chosen rate."""
    evidence = ctx.evidence()
    parts = [o for part, o in _LM_PART.items() if memory_parts(ctx.profile, part)]
    missing = [o for o in parts if not evidence.has(o)]
    if missing:
        raise RuntimeError(f"Track B's sweep has no results {missing}: run it first (--only "
                           f"{','.join('add_sweep' if o == 'lm_sweep' else 'add_sweep_rest' for o in missing)})")
    return fit_memories(ctx, pd.concat([evidence.table(o) for o in parts], ignore_index=True),
                        pd.concat([evidence.table(f"{o}_curves") for o in parts], ignore_index=True))


from hashlib_core.papers.families.claims import CLAIMS  # noqa: E402  (registered last: it reads the rest)

CLAIMS.register(CHAPTER)
