"""Paired comparisons of GLUE models from their per-item dev predictions (what HashFormers and the dynamic-embedding
chapter keep of every fine-tuning run).

A chapter's fine-tuning writes a predictions record, ``{"labels": {task: [...]}, "runs": [{"name", "task", "seed",
"predictions"}, ...]}`` (:func:`hashlib_core.papers.hashformers.finetuning.predictions_record`). From it,
:func:`compare` bootstraps any statistic of groups of models over the dev items: each task's items are resampled
independently, the same draw for every model (a paired comparison); each model's fine-tuning runs (seeds) on a task
are resampled with replacement in every draw too (a two-level bootstrap: the interval covers the variation between
fine-tuning runs as well as the choice of dev items); a model's score on a task is its metric (x 100) on the drawn
items averaged over the drawn runs, and a group's score the mean over its models.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from hashlib_core.claims.core import NotTestable
from hashlib_core.claims.statistics import DEFAULT_RESAMPLES, Interval, stratified_bootstrap
from hashlib_core.glue import PRIMARY_METRIC, normalize_task

__all__ = ["GluePredictions", "task_metric", "compare", "trend_direction"]


def _mcc(pred: np.ndarray, gold: np.ndarray) -> float:
    """Matthews correlation of two binary label arrays (0 when a margin is empty, as scikit-learn returns)."""
    tp = float(np.sum((pred == 1) & (gold == 1)))
    tn = float(np.sum((pred == 0) & (gold == 0)))
    fp = float(np.sum((pred == 1) & (gold == 0)))
    fn = float(np.sum((pred == 0) & (gold == 1)))
    den = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
    return 0.0 if den == 0 else (tp * tn - fp * fn) / float(np.sqrt(den))


def _spearman(pred: np.ndarray, gold: np.ndarray) -> float:
    """Spearman's rho (average ranks for ties); 0 when either side is constant (no correlation to speak of)."""
    from scipy.stats import rankdata

    a, b = rankdata(pred), rankdata(gold)
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return 0.0
    return float(np.corrcoef(a, b)[0, 1])


def task_metric(task: str, pred: np.ndarray, gold: np.ndarray) -> float:
    """The task's metric as HashFormers reports it (:data:`hashlib_core.glue.PRIMARY_METRIC`), x 100, from per-item
    predictions (classes; STS-B: scores). Defined on every subset of items, as a bootstrap needs."""
    key = normalize_task(task)
    metric = PRIMARY_METRIC[key]
    if metric == "accuracy":
        return 100.0 * float(np.mean(pred == gold))
    if metric == "mcc":
        return 100.0 * _mcc(pred, gold)
    if metric == "spearman":
        return 100.0 * _spearman(pred, gold)
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

    def group_score(self, names: Sequence[str], task: str) -> Callable[[np.ndarray, Any], float]:
        """``score(indices, rng)``: the group's metric on those dev items (mean over its models of their mean over
        seeds). With a generator ``rng``, each model's seeds are resampled with replacement first (a two-level
        bootstrap: fine-tuning runs, then items); ``None`` keeps every seed once. Accuracy is linear, so each seed's
        per-item correctness is precomputed; other metrics are recomputed per draw."""
        gold = self.labels[task]
        stacks = [self.runs[(n, task)] for n in names]

        def seeds(stack: np.ndarray, rng: Any) -> np.ndarray:
            return np.arange(len(stack)) if rng is None else rng.integers(0, len(stack), len(stack))

        if PRIMARY_METRIC[normalize_task(task)] == "accuracy":
            correct = [(s == gold).astype(float) for s in stacks]
            return lambda idx, rng=None: 100.0 * float(np.mean([c[seeds(c, rng)][:, idx].mean() for c in correct]))
        return lambda idx, rng=None: float(np.mean([np.mean([task_metric(task, s[k][idx], gold[idx])
                                                             for k in seeds(s, rng)]) for s in stacks]))


def compare(predictions: GluePredictions, groups: Mapping[str, Sequence[str]], tasks: Sequence[str],
            combine: Callable[[Mapping[str, list[float]]], float], *, resamples: int = DEFAULT_RESAMPLES,
            seed: int = 0) -> Interval:
    """A statistic of named groups of models over ``tasks``, with a paired bootstrap over the dev items.

    ``combine(scores)`` gets ``{group: [its score on each task, in order]}`` and returns the statistic (e.g. the mean
    over tasks of ``A - B``; a retention ``100 * mean(A) / mean(B)``)."""
    names = [n for members in groups.values() for n in members]
    predictions.require(names, tasks)
    scorers = {t: {g: predictions.group_score(members, t) for g, members in groups.items()} for t in tasks}

    def part(task: str):
        return len(predictions.labels[task]), lambda idx, rng: [scorers[task][g](idx, rng) for g in groups]

    def statistic(values: list[list[float]]) -> float:
        return combine({g: [v[i] for v in values] for i, g in enumerate(groups)})

    seeds = sorted({len(predictions.runs[(n, t)]) for n in names for t in tasks})
    return stratified_bootstrap([part(t) for t in tasks], statistic, resamples=resamples, seed=seed,
                                items="dev items" if len(tasks) == 1 else f"dev items of {', '.join(tasks)}",
                                nested=f"each model's fine-tuning runs ({'/'.join(map(str, seeds))} seeds per task)")


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
