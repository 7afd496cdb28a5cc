"""The GLUE comparisons of the dynamic-embeddings chapter, read from the chosen runs' per-item dev predictions
(:class:`hashlib_core.claims.glue.GluePredictions`), each with a paired bootstrap over the dev items (every model's
seeds resampled within each draw):

* :func:`relative_gap`: a model's score against BERT-tiny's, as a relative gap in % (what the abstract's "within 4%"
  measures);
* :func:`family_view`: the hash family inside the same backbone, EELBERT-tiny with MD5 n-gram hashes against the
  blog's rolling hash, per task that learns and on their average (points);
* :func:`trend_view` / :func:`trend_figure` / :func:`trend_quoted`: EELBERT-tiny's relative gap to BERT-tiny after
  each pre-training length (the trend's shorter runs, then the profile's own);
* :func:`scratch_view` / :func:`scratch_quoted`: what the pre-training adds to each model, its score after the
  profile's pre-training minus its score from random weights (the diagnosis of the GLUE comparison).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from hashlib_core.claims import Interval
from hashlib_core.claims.glue import GluePredictions, compare, mean_difference, trend_direction
from hashlib_core.papers.dynamic_embeddings import tables
from hashlib_core.papers.dynamic_embeddings.training import trend_name

__all__ = ["REFERENCE", "DYNAMIC", "MD5", "relative_gap", "difference", "mean_score", "family_view", "trend_view",
           "trend_figure", "trend_quoted", "scratch_view", "scratch_quoted", "scratch_gaps", "quoted"]

#: the baseline, the dynamic model of the same backbone, and that model with MD5 n-gram hashes
REFERENCE, DYNAMIC, MD5 = "BERT-tiny", "EELBERT-tiny", "EELBERT-tiny (MD5)"


def relative_gap(preds: GluePredictions, model: str, tasks: Sequence[str], reference: str = REFERENCE) -> Interval:
    """``100 (mean(model) / mean(reference) - 1)`` of the scores averaged over ``tasks``, with a paired bootstrap
    over the dev items (stratified by task)."""
    return compare(preds, {"a": [model], "b": [reference]}, tasks,
                   lambda s: 100.0 * (np.mean(s["a"], axis=0) / np.mean(s["b"], axis=0) - 1.0))


def difference(preds: GluePredictions, a: str, b: str, tasks: Sequence[str]) -> Interval:
    """``mean(a) - mean(b)`` in points over ``tasks``, with the same paired bootstrap."""
    return compare(preds, {"a": [a], "b": [b]}, tasks, mean_difference)


def mean_score(preds: GluePredictions, model: str, tasks: Sequence[str]) -> float:
    """The model's score averaged over ``tasks`` (each the mean over its seeds, on every dev item)."""
    return preds.score([model], tasks)


def _learned(shown: Any) -> list[str]:
    return tables.learning_tasks(shown)[0]


def family_view(shown: Any) -> pd.DataFrame:
    """Per task that learns, then on their average: EELBERT-tiny with the rolling hash and with MD5, and MD5 minus
    rolling with its 95% interval (empty when the profile trains only one of them or no task learns)."""
    cols = ["task", f"{DYNAMIC} (rolling)", MD5, "MD5 - rolling", "low", "high"]
    glue = shown.table("glue")
    learned = _learned(shown)
    if not {DYNAMIC, MD5} <= set(glue["name"]) or not learned or not shown.has("glue_predictions"):
        return pd.DataFrame(columns=cols)
    preds = GluePredictions.from_records(shown.json("glue_predictions"))
    rows = []
    for label, tasks in [*((tables.TASK_LABELS.get(t, t), [t]) for t in learned),
                         (f"average ({', '.join(tables.TASK_LABELS.get(t, t) for t in learned)})", learned)]:
        iv = difference(preds, MD5, DYNAMIC, tasks)
        rows.append({"task": label, cols[1]: mean_score(preds, DYNAMIC, tasks), MD5: mean_score(preds, MD5, tasks),
                     "MD5 - rolling": iv.estimate, "low": iv.low, "high": iv.high})
    return pd.DataFrame(rows, columns=cols)


def trend_view(shown: Any) -> pd.DataFrame:
    """One row per pre-training length (the trend's, then the profile's own): both models' final MLM loss, their
    mean dev score over the trend's tasks that learn in the main run, and EELBERT-tiny's relative gap to BERT-tiny
    (%) with its 95% interval."""
    cols = ["pre-training steps", f"{REFERENCE} loss", f"{DYNAMIC} loss", REFERENCE, DYNAMIC, "relative gap (%)",
            "low", "high", "tasks"]
    p = shown.profile
    tasks = [t for t in p.task_keys(trend=True) if t in _learned(shown)]
    if not tasks:
        return pd.DataFrame(columns=cols)
    points = [(s, "trend_predictions", "trend_pretraining", trend_name(REFERENCE, s), trend_name(DYNAMIC, s))
              for s in p.trend_pt_steps] + [(p.pt_steps, "glue_predictions", "pretraining", REFERENCE, DYNAMIC)]
    rows = []
    for steps, source, pretraining, ref, dyn in points:
        if not (shown.has(source) and shown.has(pretraining)):
            continue
        preds = GluePredictions.from_records(shown.json(source))
        if any((name, t) not in preds.runs for name in (ref, dyn) for t in tasks):
            continue
        loss = shown.table(pretraining).set_index("name")["final_loss"]
        iv = relative_gap(preds, dyn, tasks, reference=ref)
        rows.append({"pre-training steps": steps, cols[1]: loss.get(ref, np.nan), cols[2]: loss.get(dyn, np.nan),
                     REFERENCE: mean_score(preds, ref, tasks), DYNAMIC: mean_score(preds, dyn, tasks),
                     "relative gap (%)": iv.estimate, "low": iv.low, "high": iv.high,
                     "tasks": ", ".join(tables.TASK_LABELS.get(t, t) for t in tasks)})
    return pd.DataFrame(rows, columns=cols)


def _with_scratch(shown: Any) -> tuple[GluePredictions | None, list[str]]:
    """The main runs' and the from-scratch runs' predictions in one index, and the trend's tasks that learn in the
    main run (None and the tasks when there is nothing to compare)."""
    tasks = [t for t in shown.profile.task_keys(trend=True) if t in _learned(shown)]
    if not tasks or not (shown.has("scratch_predictions") and shown.has("glue_predictions")):
        return None, tasks
    return GluePredictions.from_records(shown.json("glue_predictions"), shown.json("scratch_predictions")), tasks


def scratch_view(shown: Any) -> pd.DataFrame:
    """Per model of the trend, on the trend's tasks that learn in the main run: its mean dev score after the
    profile's pre-training and from random weights, and the difference (points) with its 95% paired interval."""
    cols = ["model", "pre-trained", "random weights", "pre-training adds (points)", "low", "high", "tasks"]
    preds, tasks = _with_scratch(shown)
    if preds is None:
        return pd.DataFrame(columns=cols)
    rows = []
    for model in (REFERENCE, DYNAMIC):
        scratch = trend_name(model, 0)
        if any((name, t) not in preds.runs for name in (model, scratch) for t in tasks):
            continue
        iv = difference(preds, model, scratch, tasks)
        rows.append({"model": model, "pre-trained": mean_score(preds, model, tasks),
                     "random weights": mean_score(preds, scratch, tasks), cols[3]: iv.estimate, "low": iv.low,
                     "high": iv.high, "tasks": ", ".join(tables.TASK_LABELS.get(t, t) for t in tasks)})
    return pd.DataFrame(rows, columns=cols)


def scratch_gaps(shown: Any) -> dict[str, str]:
    """EELBERT-tiny's relative gap to BERT-tiny (%) pre-trained and from random weights, each with its 95% paired
    interval, on the trend's tasks that learn: whether the gap is there without any pre-training."""
    preds, tasks = _with_scratch(shown)
    if preds is None:
        return {"scratch_gap": "-", "pretrained_gap": "-", "gap_reading": "cannot be compared: no control run"}
    out, ivs = {}, {}
    for key, (dyn, ref) in {"pretrained_gap": (DYNAMIC, REFERENCE),
                            "scratch_gap": (trend_name(DYNAMIC, 0), trend_name(REFERENCE, 0))}.items():
        if any((name, t) not in preds.runs for name in (dyn, ref) for t in tasks):
            out[key] = "-"
            continue
        iv = ivs[key] = relative_gap(preds, dyn, tasks, reference=ref)
        out[key] = f"{iv.estimate:+.1f}% [{iv.low:+.1f}, {iv.high:+.1f}]"
    if len(ivs) < 2:
        out["gap_reading"] = "cannot be compared: a control run is missing"
    elif ivs["pretrained_gap"].low <= ivs["scratch_gap"].high and ivs["scratch_gap"].low <= ivs["pretrained_gap"].high:
        out["gap_reading"] = ("the two intervals overlap: pre-training does not change the gap, so what separates the "
                              "two models here lies in what a table and the hashed n-gram embedding learn from the "
                              "task's own examples")
    else:
        out["gap_reading"] = "the intervals do not overlap: pre-training changes the gap"
    return out


def scratch_quoted(view: pd.DataFrame) -> dict[str, str]:
    """The diagnosis in words: how much pre-training adds to each model, and what that makes of the comparison."""
    if view.empty:
        return {"scratch_adds": "-", "scratch_reading": "cannot be read: no task of the trend learns in the main run"}
    adds = "; ".join(f"{r.model} {r['pre-trained']:.1f} pre-trained against {r['random weights']:.1f} from random "
                     f"weights ({r['pre-training adds (points)']:+.1f} points [{r.low:+.1f}, {r.high:+.1f}])"
                     for _, r in view.iterrows())
    helped = [r.model for _, r in view.iterrows() if r.low > 0]
    if not helped:
        reading = ("the pre-training adds nothing measurable to either model (every interval includes zero): at this "
                   "scale the GLUE comparison measures the two embeddings fine-tuned from scratch on the task's "
                   "examples, not what masked-language pre-training taught them, which is what the abstract's claim "
                   "is about")
    elif len(helped) == len(view):
        reading = ("the pre-training helps both models (every interval above zero), so the comparison does read what "
                   "it taught them")
    else:
        others = [m for m in view["model"] if m not in helped]
        reading = (f"the pre-training helps {', '.join(helped)} (interval above zero) but not measurably "
                   f"{', '.join(others)}: the gap between them is partly a gap in what pre-training taught")
    return {"scratch_adds": adds, "scratch_reading": reading}


def trend_figure(view: pd.DataFrame, bound: float):
    """EELBERT-tiny's relative gap to BERT-tiny (points with 95% intervals) against pre-training steps (log scale),
    with the abstract's bound (``-bound`` %) dashed."""
    import matplotlib.pyplot as plt

    if view.empty:
        fig, ax = plt.subplots(figsize=(6.2, 1.6))
        ax.text(0.5, 0.5, "no task of the trend learns in the main run: no gap to plot", ha="center", va="center",
                fontsize=9)
        ax.set_axis_off()
        return fig
    fig, ax = plt.subplots(figsize=(6.2, 3.4))
    x, gap = view["pre-training steps"], view["relative gap (%)"]
    ax.errorbar(x, gap, yerr=[gap - view["low"], view["high"] - gap], fmt="o-", capsize=4, label="ours (95% interval)")
    ax.axhline(-bound, ls="--", color="grey", label=f"the abstract's bound (-{bound:g}%)")
    ax.axhline(0, color="black", lw=0.6)
    ax.set_xscale("log")
    ax.set_xticks(list(x), [f"{int(v):,}" for v in x])
    ax.xaxis.set_minor_formatter(plt.NullFormatter())      # the log axis's minor ticks unlabelled: only the lengths
    ax.set_xlabel("pre-training steps")
    ax.set_ylabel(f"{DYNAMIC} vs {REFERENCE} (%)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def trend_quoted(view: pd.DataFrame) -> dict[str, str]:
    """The trend's numbers for the prose."""
    if view.empty:
        return {"trend_points": "-", "trend_gaps": "-",
                "trend_direction": "cannot be read: no task of the trend learns in the main run"}
    gaps, low, high = (view[c].to_numpy() for c in ("relative gap (%)", "low", "high"))
    return {"trend_points": ", ".join(f"{int(s):,}" for s in view["pre-training steps"]),
            "trend_gaps": ", ".join(f"{g:+.1f}% [{lo:+.1f}, {hi:+.1f}]" for g, lo, hi in zip(gaps, low, high)),
            "trend_direction": trend_direction(gaps, low, high, unit="%")}


def quoted(shown: Any) -> dict[str, str]:
    """The hash-family comparison (MD5 minus rolling on the tasks that learn) and the trend, for the prose."""
    out = {**trend_quoted(trend_view(shown)), **scratch_quoted(scratch_view(shown)), **scratch_gaps(shown)}
    fam = family_view(shown)
    if fam.empty:
        return {**out, "family_average": "-",
                "family_verdict": "not measured: the profile trains only one family, or no task learns"}
    r = fam.iloc[-1]
    if r["low"] > 0 or r["high"] < 0:
        verdict = f"the interval excludes zero: {'MD5' if r['low'] > 0 else 'the rolling hash'} does better"
    else:
        verdict = "the interval includes zero: no difference this run can tell apart"
    return {**out, "family_average": f"{r['MD5 - rolling']:+.1f} [{r['low']:+.1f}, {r['high']:+.1f}]",
            "family_verdict": verdict}
