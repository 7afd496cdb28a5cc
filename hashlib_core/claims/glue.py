"""GLUE claims, shared by every chapter that fine-tunes on GLUE (HashFormers, dynamic embeddings): paired comparisons
of models from their per-item dev predictions, and the one rule that says which tasks a claim may read.

**Comparisons.** A chapter's fine-tuning writes a predictions record, ``{"labels": {task: [...]}, "runs": [{"name",
"task", "seed", "predictions"}, ...]}`` (:func:`hashlib_core.papers.hashformers.finetuning.predictions_record`).
From it, :func:`compare` bootstraps any statistic of groups of models over the dev items: each task's items are
resampled independently, the same draw for every model (a paired comparison); each model's fine-tuning runs (seeds)
on a task are resampled with replacement in every draw too (a two-level bootstrap: the interval covers the variation
between fine-tuning runs as well as the choice of dev items); a model's score on a task is its metric (x 100) on the
drawn items averaged over the drawn runs, and a group's score the mean over its models. The metrics are computed on
item counts (:func:`hashlib_core.claims.statistics.weighted_mcc`, ...), every resample at once.

**Tasks that learn** (:func:`learned_tasks`). A claim reads only the tasks on which some model learns, decided on
the **held-out part of the training split** (the examples that choose the learning rate and the epoch), never on the
dev items the claim tests: a model learns a task when its mean held-out score over its seeds lies above what
learning nothing scores there (:func:`held_out_floor`: the training part's majority class, or no correlation) by
more than the held-out set's own noise under no learning (one-sided 95%: :func:`floor_margin`) and more than its
spread over seeds. A model that does not is **at its floor** (:func:`at_floor`); a task on which every model is at
its floor is listed as such and never averaged in.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from hashlib_core.claims.core import NotTestable
from hashlib_core.claims.bootstrap import (DEFAULT_RESAMPLES, _percentiles, _scalar, _vector, item_counts, seed_average,
                                           weighted_mcc, weighted_ranks, weighted_spearman)
from hashlib_core.claims.statistics import Interval, _check_level, _check_resamples, _check_seed
from hashlib_core.glue import PRIMARY_METRIC, normalize_task

__all__ = ["GluePredictions", "task_metric", "weighted_task_metric", "compare", "mean_difference", "trend_direction",
           "held_out_floor", "floor_margin", "at_floor", "learned_tasks", "capped_runs", "MIN_FLOOR_MARGIN",
           "FLOOR_Z"]

#: the one-sided 95% normal quantile of the floor rule: a held-out score counts as learning when it lies this many
#: standard errors (of a model that learned nothing, on that many held-out examples) above the floor
FLOOR_Z = NormalDist().inv_cdf(0.95)
#: and at least this many GLUE points above it, however large the held-out set
MIN_FLOOR_MARGIN = 1.0


def _mcc(pred: np.ndarray, gold: np.ndarray) -> float:
    """Matthews correlation of two binary label arrays (0 when a margin is empty, as scikit-learn returns)."""
    return float(weighted_mcc(pred, gold, np.ones((1, len(gold))))[0])


def _spearman(pred: np.ndarray, gold: np.ndarray) -> float:
    """Spearman's rho (average ranks for ties); 0 when either side is constant (no correlation to speak of)."""
    return float(weighted_spearman(pred, gold, np.ones((1, len(gold))))[0])


def task_metric(task: str, pred: np.ndarray, gold: np.ndarray) -> float:
    """The task's metric as HashFormers reports it (:data:`hashlib_core.glue.PRIMARY_METRIC`), x 100, from per-item
    predictions (classes; STS-B: scores). Defined on every subset of items, as a bootstrap needs."""
    return float(weighted_task_metric(task, np.asarray(pred), np.asarray(gold), np.ones((1, len(gold))))[0])


def weighted_task_metric(task: str, pred: np.ndarray, gold: np.ndarray, counts: np.ndarray,
                         gold_ranks: np.ndarray | None = None) -> np.ndarray:
    """:func:`task_metric` on each resample given as item counts ``(resamples, items)``: ``(resamples,)``."""
    metric = PRIMARY_METRIC[normalize_task(task)]
    if metric == "accuracy":
        return 100.0 * (counts @ (pred == gold).astype(float)) / counts.sum(axis=1)
    if metric == "mcc":
        return 100.0 * weighted_mcc(pred, gold, counts)
    if metric == "spearman":
        return 100.0 * weighted_spearman(pred, gold, counts, gold_ranks)
    raise ValueError(f"no per-item metric for {task!r} ({metric})")


@dataclass(frozen=True)
class GluePredictions:
    """A predictions record, indexed: each task's dev labels and each (model, task)'s predictions, seeds x items."""

    labels: Mapping[str, np.ndarray]
    runs: Mapping[tuple[str, str], np.ndarray]

    @classmethod
    def from_records(cls, *records: Mapping[str, Any]) -> "GluePredictions":
        """One index over several records (a chapter's main runs and, say, Table 6's), which must agree on every
        task's labels."""
        labels: dict[str, np.ndarray] = {}
        by_run: dict[tuple[str, str], dict[int, list]] = {}
        for record in records:
            for task, gold in record["labels"].items():
                gold = np.asarray(gold)
                if task in labels and not np.array_equal(labels[task], gold):
                    raise ValueError(f"the records disagree on {task}'s dev labels: they scored other items")
                labels[task] = gold
            for run in record["runs"]:
                by_run.setdefault((run["name"], run["task"]), {})[int(run["seed"])] = run["predictions"]
        runs = {key: np.asarray([seeds[s] for s in sorted(seeds)]) for key, seeds in by_run.items()}
        for (name, task), preds in runs.items():
            if preds.shape[1] != len(labels[task]):
                raise ValueError(f"{name} on {task}: {preds.shape[1]} predictions for {len(labels[task])} items")
        return cls(labels, runs)

    def require(self, names: Sequence[str], tasks: Sequence[str]) -> None:
        """Raise :class:`NotTestable` naming any (model, task) without predictions."""
        missing = [f"{n} on {t}" for n in names for t in tasks if (n, t) not in self.runs]
        if missing:
            raise NotTestable(f"no dev predictions for {', '.join(missing)}")

    def seeds(self, name: str, task: str) -> int:
        """How many fine-tuning runs (seeds) ``name`` has on ``task``."""
        return len(self.runs[(name, task)])

    def score(self, names: Sequence[str], tasks: Sequence[str]) -> float:
        """The group's score averaged over ``tasks`` (each model's metric on every dev item, averaged over its seeds,
        then over the group's models)."""
        return float(np.mean([np.mean([np.mean([task_metric(t, run, self.labels[t]) for run in self.runs[(n, t)]])
                                       for n in names]) for t in tasks]))


# One resample set per (task, items, resamples, seed), drawn from a generator of its own, so that every claim of a
# chapter reads the same draws of a task's items and each run's metric on them is computed once (cached by the run's
# predictions), however many claims read it.
_COUNTS: dict[tuple, np.ndarray] = {}
_RANKS: dict[tuple, np.ndarray] = {}
_METRICS: dict[tuple, np.ndarray] = {}
_CACHE_ENTRIES = 20_000


def _digest(values: np.ndarray) -> bytes:
    import hashlib

    arr = np.ascontiguousarray(values)
    return hashlib.blake2b(arr.tobytes() + str(arr.dtype).encode(), digest_size=16).digest()


def _task_counts(task: str, gold: np.ndarray, resamples: int, seed: int) -> tuple[tuple, np.ndarray]:
    """The item counts ``(resamples, items)`` of ``task``'s dev items, drawn from a generator seeded by ``seed`` and
    the task's name (stable whatever other tasks a claim reads), and their cache key."""
    import zlib


    key = (task, len(gold), resamples, seed, _digest(gold))
    if key not in _COUNTS:
        if len(_COUNTS) > 32:
            _COUNTS.clear(), _RANKS.clear(), _METRICS.clear()
        _COUNTS[key] = item_counts(np.random.default_rng([seed, zlib.crc32(task.encode())]), len(gold), resamples)
    return key, _COUNTS[key]


def _run_metric(task: str, run: np.ndarray, gold: np.ndarray, key: tuple, counts: np.ndarray) -> np.ndarray:
    """One fine-tuning run's metric on every resample of ``key`` (cached by the run's predictions)."""
    entry = (key, _digest(run))
    if entry not in _METRICS:
        if len(_METRICS) > _CACHE_ENTRIES:
            _METRICS.clear()
        ranks = None
        if PRIMARY_METRIC[normalize_task(task)] == "spearman":
            if key not in _RANKS:
                _RANKS[key] = weighted_ranks(np.asarray(gold, float), counts)
            ranks = _RANKS[key]
        _METRICS[entry] = weighted_task_metric(task, run, gold, counts, ranks)
    return _METRICS[entry]


def mean_difference(scores: Mapping[str, np.ndarray]) -> np.ndarray:
    """The usual ``combine`` of :func:`compare`: group ``a``'s score minus group ``b``'s, averaged over the tasks."""
    return np.mean(scores["a"], axis=0) - np.mean(scores["b"], axis=0)


def compare(predictions: GluePredictions, groups: Mapping[str, Sequence[str]], tasks: Sequence[str],
            combine: Callable[[Mapping[str, np.ndarray]], np.ndarray], *, resamples: int = DEFAULT_RESAMPLES,
            seed: int = 0, level: float = 0.95) -> Interval:
    """A statistic of named groups of models over ``tasks``, with a two-level paired bootstrap over the dev items and
    each model's fine-tuning runs.

    ``combine(scores)`` gets ``{group: (tasks, resamples) array}`` (its score on each task, in order, on every
    resample) and returns the statistic on every resample, ``(resamples,)`` (e.g. :func:`mean_difference`; a
    retention ``100 * scores["a"].mean(0) / scores["b"].mean(0)``). Each task's items are resampled on their own,
    the same draw for every model; in every resample each model's runs on a task are drawn with replacement and its
    score is the mean of the drawn runs' metrics; a group's score is the mean over its models."""
    _check_resamples(resamples)
    _check_level(level)
    _check_seed(seed)
    names = [n for members in groups.values() for n in members]
    predictions.require(names, tasks)
    if not tasks:
        raise ValueError("compare needs at least one task")
    units = np.random.default_rng([seed, 1])
    estimate: dict[str, list[float]] = {g: [] for g in groups}
    draws: dict[str, list[np.ndarray]] = {g: [] for g in groups}
    for task in tasks:
        gold = predictions.labels[task]
        if len(gold) < 2:
            raise ValueError(f"{task}: a bootstrap needs at least 2 dev items, got {len(gold)}")
        key, counts = _task_counts(task, gold, resamples, seed)
        for group, members in groups.items():
            estimate[group].append(float(np.mean([np.mean([task_metric(task, run, gold) for run in
                                                           predictions.runs[(m, task)]]) for m in members])))
            per_model = [seed_average(np.stack([_run_metric(task, run, gold, key, counts)
                                                for run in predictions.runs[(m, task)]], axis=1), units)
                         for m in members]
            draws[group].append(np.mean(per_model, axis=0))
    point = _scalar(combine({g: np.asarray(v, float)[:, None] for g, v in estimate.items()}), 1)
    values = _vector(combine({g: np.stack(v) for g, v in draws.items()}), resamples)
    low, high = _percentiles(values, point, level)
    sizes = [len(predictions.labels[t]) for t in tasks]
    what = (f"{sizes[0]:,} dev items" if len(tasks) == 1
            else f"{' + '.join(f'{n:,}' for n in sizes)} dev items of {', '.join(tasks)}")
    seeds = sorted({len(predictions.runs[(n, t)]) for n in names for t in tasks})
    how = (f"{resamples:,} resamples" + (", each set resampled on its own" if len(tasks) > 1 else "")
           + f"; each model's fine-tuning runs ({'/'.join(map(str, seeds))} seeds per task) resampled too")
    several = max(seeds) > 1
    return Interval(point, low, high, f"paired bootstrap over {what} ({how})", sum(sizes), level,
                    ("items", "seeds") if several else ("items",))


# ------------------------------------------------------------------------------------------- tasks that learn
@functools.lru_cache(maxsize=64)
def held_out_floor(task: str, train_limit: int, validation: int, seed: int) -> float:
    """What learning nothing scores on a task's held-out part (the examples of its training split that choose the
    learning rate and the epoch, :func:`hashlib_core.glue.held_out`): the training part's majority class predicted
    throughout (on a two-class accuracy task, the other constant prediction too, when higher); MCC and STS-B: 0."""
    from hashlib_core.glue import held_out, majority_score, num_labels

    key = normalize_task(task)
    (_, train_labels), (_, held_labels) = held_out(key, train_limit, validation, seed)
    base = majority_score(key, train_labels, held_labels)
    if np.isnan(base):
        return 0.0
    if PRIMARY_METRIC[key] == "accuracy" and num_labels(key) == 2:
        return max(base, 100.0 - base)
    return base


def floor_margin(task: str, floor: float, examples: int) -> float:
    """How far above ``floor`` a held-out score over ``examples`` items must lie before it is more than what a model
    that learned nothing scores by chance (one-sided 95%): :data:`FLOOR_Z` standard errors of that score under no
    learning (an accuracy at the floor's rate: ``100 sqrt(p (1 - p) / n)``; a correlation, MCC or Spearman, at zero:
    ``100 / sqrt(n - 1)``), and at least :data:`MIN_FLOOR_MARGIN` points."""
    if examples < 2:
        raise ValueError(f"{task}: a held-out set of {examples} example(s) cannot tell learning from chance")
    if PRIMARY_METRIC[normalize_task(task)] == "accuracy":
        p = min(max(floor / 100.0, 0.0), 1.0)
        se = 100.0 * math.sqrt(p * (1 - p) / examples)
    else:
        se = 100.0 / math.sqrt(examples - 1)
    return max(MIN_FLOOR_MARGIN, FLOOR_Z * se)


def _chosen_runs(runs: Any, task: str) -> Any:
    rows = runs[runs["task"] == task]
    return rows[rows["chosen"].astype(bool)] if "chosen" in rows.columns else rows


def at_floor(runs: Any, task: str, profile: Any) -> dict[str, bool]:
    """``{model: at its floor}`` on ``task``, decided on the held-out part of the training split (the chosen runs'
    ``validation_score``, one per seed): a model is at its floor unless its mean held-out score lies above
    :func:`held_out_floor` by more than :func:`floor_margin` and its own standard deviation over seeds. ``profile``
    gives the held-out split (``ft_train_examples``, ``ft_validation_examples``, ``seed``)."""
    if "validation_score" not in runs.columns:
        raise NotTestable("the fine-tuning runs have no held-out scores to tell which tasks some model learns")
    rows = _chosen_runs(runs, task)
    if rows.empty:
        return {}
    floor = held_out_floor(task, profile.ft_train_examples, profile.ft_validation_examples, profile.seed)
    examples = int(rows["validation_examples"].iloc[0]) if "validation_examples" in rows.columns \
        else int(profile.ft_validation_examples)
    margin = floor_margin(task, floor, examples)
    stats = rows.groupby("name", sort=False)["validation_score"].agg(["mean", "std"])
    return {name: not (r["mean"] > floor + max(margin, 0.0 if math.isnan(r["std"]) else r["std"]))
            for name, r in stats.iterrows()}


def learned_tasks(runs: Any, tasks: Sequence[str], profile: Any) -> tuple[list[str], list[str]]:
    """``(tasks on which some model learns, tasks on which every model is at its floor)``, in ``tasks``' order,
    decided on held-out data (:func:`at_floor`)."""
    learned, stuck = [], []
    for task in tasks:
        floors = at_floor(runs, task, profile)
        (learned if floors and not all(floors.values()) else stuck).append(task)
    return learned, stuck


def capped_runs(runs: Any, names: Sequence[str], tasks: Sequence[str]) -> tuple[int, int]:
    """``(chosen runs of models ``names`` on ``tasks`` that were best at their last allowed epoch, all of them)``: a
    run best at its cap may still have been improving when it stopped."""
    rows = runs[runs["name"].isin(list(names)) & runs["task"].isin(list(tasks))]
    rows = rows[rows["chosen"].astype(bool)] if "chosen" in rows.columns else rows
    if rows.empty or "best_epoch" not in rows.columns:
        return 0, len(rows)
    cap = rows["max_epochs"] if "max_epochs" in rows.columns else rows["epochs_run"]
    return int((rows["best_epoch"] >= np.floor(cap)).sum()), len(rows)


def trend_direction(gaps: Sequence[float], low: Sequence[float], high: Sequence[float], unit: str = "points",
                    over: str = "lengths") -> str:
    """How a gap moves from its first to its last measurement (each with its interval), in words: no clear trend
    when the first and last intervals overlap, else whether it changes sign, narrows or widens. ``over``: what the
    measurements range over (pre-training lengths, model scales)."""
    if len(gaps) < 2:
        return "-"
    g0, g1 = float(gaps[0]), float(gaps[-1])
    if high[0] >= low[-1] and high[-1] >= low[0]:        # the first and last intervals overlap
        return (f"moves by {g1 - g0:+.1f} {unit}, but the first and last intervals overlap: no clear trend at these "
                f"{over}")
    if (high[0] < 0 < low[-1]) or (high[-1] < 0 < low[0]):
        return f"changes sign (from {g0:+.1f} to {g1:+.1f} {unit}; the intervals do not overlap)"
    way = "narrows" if abs(g1) < abs(g0) else "widens"
    return f"{way} (from {g0:+.1f} to {g1:+.1f} {unit}; the intervals do not overlap)"
