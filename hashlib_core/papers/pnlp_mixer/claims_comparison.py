"""The claims of Tables 1 and 2 (:mod:`~hashlib_core.papers.pnlp_mixer.claims`): each row's chosen runs, the
gap between two rows with a paired bootstrap over the validation sentences (each row's seeds resampled too), and
how many of the runs compared were best at their epoch cap."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pandas as pd

from hashlib_core.claims import Effect, Interval, NotTestable, kendall_tau, paired_bootstrap
from hashlib_core.papers.pnlp_mixer import tables

__all__ = ["METRICS", "convergence", "flags", "gap", "paper_gap_value"]

#: our validation metrics: what they are, the task they are read on, and the paper's column (Tables 1 and 2)
METRICS = {"val_intent_acc": ("intent accuracy", "atis", "multiATIS_EN_Intent_Acc"),
           "val_exact_match": ("slot exact match", "mtop-en", "MTOP_EN_Exact_Match_Acc")}
#: the per-sentence record of each metric (``table1_items``)
_ITEM_KEY = {"val_intent_acc": "intent", "val_exact_match": "exact_match"}
_TASK_LABEL = tables.TASK_LABELS
_T1, _T2 = tables.paper_rows("projection")[1], tables.paper_rows("encoder")[1]


def convergence(rows: pd.DataFrame) -> str:
    """How many of the runs compared were best at their epoch cap (``best_epoch`` = ``max_epochs``, or = ``epochs``
    for a table without the cap), i.e. maybe still improving when they stopped."""
    cap = rows["max_epochs"] if "max_epochs" in rows else rows["epochs"]
    last = rows["best_epoch"] >= cap
    if last.all():
        every = "both" if len(rows) == 2 else f"all {len(rows)}"
        return f"{every} runs best at their epoch cap (maybe still improving): not converged"
    if last.any():
        return f"{int(last.sum())} of {len(rows)} runs best at their epoch cap (maybe still improving)"
    return f"none of the {len(rows)} runs was best at its epoch cap"


def flags(rows: pd.DataFrame) -> tuple[str, ...]:
    """``cap`` when a compared run was best at its epoch cap; ``one-run`` when a compared row has one seed."""
    cap = rows["max_epochs"] if "max_epochs" in rows else rows["epochs"]
    out = ["cap"] if (rows["best_epoch"] >= cap).any() else []
    seeds = rows.groupby(level=0).size() if rows.index.name else pd.Series([len(rows)])
    if (seeds < 2).any():
        out.append("one-run")
    return tuple(out)


def _labels(which: str) -> dict[str, str]:
    return tables.PROJECTION_LABELS if which == "projection" else tables.ENCODER_LABELS


def _chosen(evidence: Any, name: str, which: str, needed: Any, task: str) -> pd.DataFrame:
    """``name``'s chosen runs on ``task`` (every seed; indexed by ``which``); NotTestable when the task or a needed
    row is absent."""
    table = evidence.table(name)
    rows = table[(table["task"] == task) & table["chosen"].astype(bool)].set_index(which)
    profile = evidence.profile.name
    if rows.empty:
        raise NotTestable(f"{_TASK_LABEL.get(task, task)} is not compared in the {profile} profile")
    missing = [_labels(which)[k] for k in needed if k not in rows.index]
    if missing:
        raise NotTestable(f"the {profile} profile does not train {', '.join(missing)} ({name})")
    return rows


def _means(rows: pd.DataFrame, metric: str) -> pd.Series:
    """Each row's score: the mean over its seeds."""
    return rows.groupby(level=0, sort=False)[metric].mean()


def _item_matrix(evidence: Any, name: str, which: str, row: str, task: str, metric: str) -> np.ndarray:
    """A row's chosen runs' per-sentence correctness on ``task``'s validation split, seeds x sentences (0/1)."""
    record = evidence.json(f"{name}_items")
    runs = [r for r in record["runs"] if r["task"] == task and r[which] == row]
    if not runs:
        raise NotTestable(f"no per-sentence validation record of {_labels(which)[row]} on {task} ({name}_items)")
    runs.sort(key=lambda r: r["seed"])
    return np.array([[c == "1" for c in r["items"][_ITEM_KEY[metric]]] for r in runs], dtype=float)


def gap(evidence: Any, name: str, which: str, a: str, b: str, metric: str, task: str) -> Interval:
    """Row ``a`` minus row ``b`` on ``task``'s validation ``metric`` (points; each the mean over its seeds), with a
    two-level paired bootstrap over the validation sentences, each row's seeds resampled too."""
    x, y = (_item_matrix(evidence, name, which, r, task, metric) for r in (a, b))
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"{a} and {b} were scored on different validation sentences ({x.shape[1]} vs "
                         f"{y.shape[1]})")
    labels = _labels(which)
    return paired_bootstrap(100.0 * x, 100.0 * y, items=f"{_TASK_LABEL.get(task, task)} validation sentences",
                            names=(labels.get(a, a), labels.get(b, b)))


def paper_gap_value(which: str, ours: str, column: str) -> float:
    """The paper's ``ours`` row minus its best other row in ``column``: the gap a verdict's power is read against."""
    labels, paper = _labels(which), (_T1 if which == "projection" else _T2)
    col = paper[column].map(tables.paper_number)
    return float(col[labels[ours]] - col.drop(labels[ours]).max())


def _paper_gap(which: str, ours: str, column: str) -> str:
    """The paper's ``ours`` row against its best other row in ``column``, as printed: "MinHash 98.57 vs SimHash
    98.38"."""
    labels, paper = _labels(which), (_T1 if which == "projection" else _T2)
    col = paper[column].map(tables.paper_number)
    rival = col.drop(labels[ours]).idxmax()
    return f"{labels[ours]} {paper.loc[labels[ours], column]} vs {rival} {paper.loc[rival, column]}"


def _best_of(name: str, which: str, ours: str, metric: str) -> Callable[[Any], Effect]:
    """``ours`` minus the best other row (every row the paper's table has; the best by the mean over seeds) on the
    metric's task (MTOP EN exact match, ATIS intent accuracy), validation, with a paired bootstrap."""
    labels = _labels(which)
    what, task, _ = METRICS[metric]

    def effect(evidence: Any) -> Effect:
        rows = _chosen(evidence, name, which, (ours,), task)
        means = _means(rows, metric)
        others = means.drop(ours)
        if others.empty:
            raise NotTestable(f"the {evidence.profile.name} profile trains no other row on {_TASK_LABEL[task]}")
        rival = others.idxmax()
        iv = gap(evidence, name, which, ours, rival, metric, task)
        seeds = rows.groupby(level=0).size()
        text = (f"{labels[ours]} {means[ours]:.1f} ({seeds[ours]} seed(s)) vs the best other, {labels[rival]}, "
                f"{others[rival]:.1f} ({seeds[rival]} seed(s)): {iv.estimate:+.1f} points ({_TASK_LABEL[task]} "
                f"validation {what})")
        missing = [labels[k] for k in labels if k not in means.index]
        if missing:   # a profile that trains the headline rows alone on this task
            text += f"; {', '.join(missing)} not trained on {_TASK_LABEL[task]} in this profile"
        return Effect(iv, text, unit="points", note=convergence(rows.loc[[ours, rival]]),
                      flags=flags(rows.loc[[ours, rival]]))
    return effect


def _t1_order(evidence: Any) -> Effect:
    rows = _chosen(evidence, "table1", "projection", tables.PROJECTION_LABELS, "atis")
    names = list(tables.PROJECTION_LABELS)
    paper = [tables.paper_number(_T1.loc[tables.PROJECTION_LABELS[n], "multiATIS_EN_Intent_Acc"]) for n in names]
    means = _means(rows, "val_intent_acc")
    ours = [float(means[n]) for n in names]
    tau = kendall_tau(paper, ours)
    order = " < ".join(f"{tables.PROJECTION_LABELS[n]} {s:.1f}" for s, n in sorted(zip(ours, names)))
    return Effect(Interval(tau, method="a rank statistic of the rows' means over seeds: no interval"),
                  f"ours (ATIS validation intent): {order}; tau {tau:+.2f}", unit="tau", note=convergence(rows),
                  flags=flags(rows))


def _mixer_minus(other: str, metrics: tuple[str, ...]) -> Callable[[Any], Effect]:
    """The Mixer minus ``other`` (Table 2, validation, each metric on its task), the smaller gap over ``metrics``,
    with a paired bootstrap."""
    def effect(evidence: Any) -> Effect:
        label = tables.ENCODER_LABELS[other]
        gaps, texts, notes, params, marks = {}, [], [], "", set()
        trained = evidence.table("table2")
        available = [m for m in metrics
                     if ((trained["task"] == METRICS[m][1]) & (trained["encoder"] == other)).any()]
        if not available:
            return _mixer_minus_all(evidence, other, metrics)     # raises NotTestable naming what is missing
        for m in available:
            what, task, _ = METRICS[m]
            rows = _chosen(evidence, "table2", "encoder", ("mixer", other), task)
            means = _means(rows, m)
            gaps[m] = gap(evidence, "table2", "encoder", "mixer", other, m, task)
            texts.append(f"{_TASK_LABEL[task]} {what}: MLP-Mixer {means['mixer']:.1f} vs {label} {means[other]:.1f} "
                         f"({gaps[m].estimate:+.1f})")
            notes.append(f"{_TASK_LABEL[task]}: {convergence(rows.loc[['mixer', other]])}")
            marks |= set(flags(rows.loc[["mixer", other]]))
            params = (f"parameters as trained ({_TASK_LABEL[task]}): MLP-Mixer "
                      f"{int(rows.loc[['mixer'], 'parameters'].iloc[0]):,}, {label} "
                      f"{int(rows.loc[[other], 'parameters'].iloc[0]):,}")
        worst = min(gaps, key=lambda m: gaps[m].estimate)
        text = "; ".join(texts)
        if len(available) > 1:
            text += f"; the effect is the smaller gap ({METRICS[worst][0]})"
        skipped = [m for m in metrics if m not in available]
        if skipped:   # a profile that trains the headline rows alone on a task
            text += "; " + ", ".join(f"{label} not trained on {_TASK_LABEL[METRICS[m][1]]} in this profile"
                                     for m in skipped)
        return Effect(gaps[worst], text, unit="points", note="; ".join(notes + [params]),
                      flags=tuple(f for f in ("cap", "one-run") if f in marks))
    return effect


def _mixer_minus_all(evidence: Any, other: str, metrics: tuple[str, ...]) -> Effect:
    """NotTestable: ``other`` is trained on none of the metrics' tasks (named)."""
    for m in metrics:
        _chosen(evidence, "table2", "encoder", ("mixer", other), METRICS[m][1])
    raise NotTestable(f"the {evidence.profile.name} profile does not train {tables.ENCODER_LABELS[other]}")
