"""The fine-tuning protocol the encoder chapters share (HashFormers' Table 1, the dynamic-embeddings chapter):

* :func:`tuned_task`: one model on one task, every learning rate of a sweep with the first seed, the rate with the
  best score on the held-out part of the training split chosen (ties: the smaller rate), then every other seed at it;
* :func:`tuned_tasks`: one model on several tasks, swept on each, or on one task whose chosen rate the others reuse;
* :func:`predictions_record`: the chosen runs' per-item dev predictions as a JSON-able record, what a paired
  bootstrap over the dev items reads (:class:`hashlib_core.claims.glue.GluePredictions`).

A chapter supplies ``run(task, seed, learning_rate) -> (row, dev predictions)``: its own model, tokenisation and
checkpoints; ``row`` must hold ``validation_score``, the held-out score the choice reads (NaN: a run that never
produced a finite score, never chosen over one that did). GLUE dev, what the papers report, is never read here.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import numpy as np

__all__ = ["RunFn", "check_protocol", "tuned_task", "tuned_tasks", "predictions_record"]

#: ``(task, seed, learning_rate) -> (row, per-item dev predictions)``
RunFn = Callable[[str, int, float], "tuple[dict[str, Any], np.ndarray]"]


def _check(seeds: Sequence[int], rates: Sequence[float]) -> None:
    if not seeds:
        raise ValueError("fine-tuning needs at least one seed")
    if not rates or any(not (isinstance(r, (int, float)) and r > 0) for r in rates):
        raise ValueError(f"the learning-rate sweep needs at least one rate, each > 0, got {list(rates)!r}")


def check_protocol(tasks: Sequence[str], lrs: Sequence[float], validation_examples: int, patience: int,
                   epochs: float, sweep_task: str = "") -> None:
    """A profile's fine-tuning protocol, checked: distinct positive learning rates, at least one held-out example,
    patience >= 0, a positive epoch cap, and a sweep task (empty: sweep on every task) among ``tasks``."""
    if not lrs or any(lr <= 0 for lr in lrs) or len(set(lrs)) != len(lrs):
        raise ValueError(f"ft_lrs must list distinct positive learning rates, got {lrs}")
    if validation_examples < 1 or patience < 0 or epochs <= 0:
        raise ValueError("ft_validation_examples must be >= 1, ft_patience >= 0 and ft_epochs > 0")
    if sweep_task and sweep_task not in tasks:
        raise ValueError(f"ft_sweep_task {sweep_task!r} must be one of the tasks {list(tasks)} (or empty: sweep on "
                         "every task)")


def tuned_task(run: RunFn, task: str, seeds: Sequence[int], rates: Sequence[float],
               swept_on: str | None = None) -> tuple[list[dict[str, Any]], dict[int, np.ndarray]]:
    """``run`` at every rate of ``rates`` with ``seeds[0]``, the best held-out ``validation_score`` chosen (ties:
    the smaller rate), then ``seeds[1:]`` at the chosen rate. Returns every run's row, with ``learning_rate``,
    ``chosen`` (the runs at the chosen rate) and ``swept_on`` (the task the rate was chosen on: ``task``, or
    ``swept_on`` when ``rates`` is another task's choice), and the chosen runs' dev predictions by seed."""
    _check(seeds, rates)
    first, *others = seeds
    sweep = [run(task, first, lr) for lr in rates]
    score = [r["validation_score"] if np.isfinite(r["validation_score"]) else -np.inf for r, _ in sweep]
    chosen = max(range(len(sweep)), key=lambda i: (score[i], -rates[i]))
    lr = rates[chosen]
    where = swept_on or task
    rows = [{**r, "learning_rate": rates[i], "chosen": i == chosen, "swept_on": where}
            for i, (r, _) in enumerate(sweep)]
    preds = {first: sweep[chosen][1]}
    for seed in others:
        row, p = run(task, seed, lr)
        rows.append({**row, "learning_rate": lr, "chosen": True, "swept_on": where})
        preds[seed] = p
    return rows, preds


def tuned_tasks(run: RunFn, tasks: Sequence[str], seeds: Sequence[int], rates: Sequence[float],
                sweep_task: str | None = None, log: Callable[[str], None] | None = None
                ) -> tuple[list[dict[str, Any]], dict[tuple[str, int], np.ndarray]]:
    """:func:`tuned_task` on every task of ``tasks``: swept on each, or (``sweep_task`` among ``tasks``) swept on
    that task first and its chosen rate used for every seed of the others. Returns every run's row and the chosen
    runs' dev predictions by ``(task, seed)``."""
    order = [sweep_task, *[t for t in tasks if t != sweep_task]] if sweep_task in tasks else list(tasks)
    rows_all: list[dict[str, Any]] = []
    preds: dict[tuple[str, int], np.ndarray] = {}
    chosen_lr = None
    for task in order:
        task_rates = list(rates) if chosen_lr is None else [chosen_lr]
        if log is not None:
            log(f"fine-tuning on {task} (learning rates {task_rates}, seeds {list(seeds)})")
        rows, by_seed = tuned_task(run, task, seeds, task_rates, swept_on=None if chosen_lr is None else sweep_task)
        if task == sweep_task:
            chosen_lr = next(r["learning_rate"] for r in rows if r["chosen"])
        rows_all += rows
        preds.update({(task, seed): p for seed, p in by_seed.items()})
    return rows_all, preds


def predictions_record(preds: Mapping[tuple[str, str, int], np.ndarray], labels: Mapping[str, Sequence[Any]]
                       ) -> dict[str, Any]:
    """``{"labels": {task: dev labels}, "runs": [{"name", "task", "seed", "predictions"}, ...]}`` from the chosen
    runs' predictions by ``(model name, task, seed)`` (classes for classification, scores for STS-B)."""
    for (name, task, seed), p in preds.items():
        if task not in labels:
            raise ValueError(f"no dev labels for task {task!r} (run {name!r}, seed {seed}): pass every task's labels")
        if len(p) != len(labels[task]):
            raise ValueError(f"run {name!r} on {task!r} (seed {seed}) has {len(p)} predictions for "
                             f"{len(labels[task])} dev items")
    runs = [{"name": name, "task": task, "seed": int(seed), "predictions": np.asarray(p).tolist()}
            for (name, task, seed), p in preds.items()]
    return {"labels": {t: np.asarray(v).tolist() for t, v in labels.items()}, "runs": runs}
