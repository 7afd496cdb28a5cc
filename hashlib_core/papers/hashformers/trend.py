"""Which way the headline gap moves with pre-training: LSH-Proj against BERT-MLM after shorter pre-training runs
(the ``trend`` experiment) and after the profile's own (Table 1's models), each with a paired bootstrap over the dev
items of the tasks that learn; and with scale: the same comparison in each committed profile (:func:`scale_view`)."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from hashlib_core.claims.glue import GluePredictions, compare, mean_difference, trend_direction
from hashlib_core.papers.hashformers.finetuning import PAPER_TASK_COLUMN, trend_name

__all__ = ["trend_view", "trend_figure", "trend_quoted", "scale_view", "scale_quoted", "SCALE_PROFILES"]

#: the committed profiles compared by scale, smallest first
SCALE_PROFILES = ("cpu", "small")

_A, _B = "LSH-Proj", "BERT-MLM"


def trend_view(shown: Any) -> pd.DataFrame:
    """One row per pre-training length: the steps, both models' final pre-training loss, their mean dev score over the
    tasks that learn (Table 1's run decides which), and LSH-Proj minus BERT-MLM with its 95% interval."""
    from hashlib_core.papers.hashformers.claims import learned_tasks

    profile = shown.profile
    learned = [t for t, c in PAPER_TASK_COLUMN.items() if c in learned_tasks(shown)[0]]
    tasks = [t for t in profile.task_keys(trend=True) if t in learned]
    if not tasks:                     # nothing to compare: an empty view, which the prose and figure say
        return pd.DataFrame(columns=["pre-training steps", f"{_A} loss (S+R)", f"{_B} loss (MLM)", _A, _B,
                                     "difference", "low", "high", "tasks"])
    pre = shown.table("pretraining").set_index("name")["final_loss"]
    runs = shown.table("trend_runs") if shown.has("trend_runs") else pd.DataFrame(columns=["pt_steps", "name"])
    points = [(steps, trend_name(_A, steps), trend_name(_B, steps), "trend_predictions")
              for steps in profile.trend_pt_steps] + [(profile.pt_steps, _A, _B, "glue_predictions")]
    rows = []
    for steps, a, b, source in points:
        if not shown.has(source):
            continue
        preds = GluePredictions.from_records(shown.json(source))
        iv = compare(preds, {"a": [a], "b": [b]}, tasks, mean_difference)
        score = {m: preds.score([m], tasks) for m in (a, b)}
        if source == "glue_predictions":
            loss = {_A: pre.get(_A, np.nan), _B: pre.get(_B, np.nan)}
        else:
            at = runs[runs["pt_steps"] == steps].groupby("name")["pt_final_loss"].first()
            loss = {_A: at.get(_A, np.nan), _B: at.get(_B, np.nan)}
        rows.append({"pre-training steps": steps, f"{_A} loss (S+R)": loss[_A], f"{_B} loss (MLM)": loss[_B],
                     _A: score[a], _B: score[b], "difference": iv.estimate, "low": iv.low, "high": iv.high,
                     "tasks": ", ".join(PAPER_TASK_COLUMN[t] for t in tasks)})
    return pd.DataFrame(rows)


def trend_figure(view: pd.DataFrame):
    """LSH-Proj minus BERT-MLM (points, 95% intervals) against pre-training steps (log scale), with the paper's gap
    as a dashed line."""
    import matplotlib.pyplot as plt

    from hashlib_core.papers.hashformers.profiles import LSH_GROUP
    from hashlib_core.results import load_paper_table, parse_printed

    if view.empty:
        fig, ax = plt.subplots(figsize=(6.2, 1.6))
        ax.text(0.5, 0.5, "no task of the trend is learned on the held-out part in Table 1's run: no gap to plot",
                ha="center", va="center", fontsize=9)
        ax.set_axis_off()
        return fig
    t1 = load_paper_table("hashformers_table1").set_index(["group", "model"])["Avg"]
    paper = parse_printed(t1[(LSH_GROUP, "Proj")]).value - parse_printed(t1[("-", "BERT-MLM")]).value
    fig, ax = plt.subplots(figsize=(6.2, 3.4))
    x = view["pre-training steps"]
    ax.errorbar(x, view["difference"], yerr=[view["difference"] - view["low"], view["high"] - view["difference"]],
                fmt="o-", capsize=4, label="ours (95% interval)")
    ax.axhline(paper, ls="--", color="grey", label="the paper (Table 1 average)")
    ax.axhline(0, color="black", lw=0.6)
    ax.set_xscale("log")
    ax.set_xticks(list(x), [f"{int(v):,}" for v in x])
    ax.xaxis.set_minor_formatter(plt.NullFormatter())      # the log axis's minor ticks unlabelled: only the lengths
    ax.set_xlabel("pre-training steps")
    ax.set_ylabel("LSH-Proj - BERT-MLM (points)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def trend_quoted(view: pd.DataFrame) -> dict[str, str]:
    """The trend's numbers for the prose."""
    if view.empty:
        return {"trend_steps": "-", "trend_gaps": "-", "trend_direction": (
            "cannot be read: no task of the trend is learned on the held-out part in Table 1's run")}
    gaps, low, high = (view[c].to_numpy() for c in ("difference", "low", "high"))
    direction = trend_direction(gaps, low, high)
    return {"trend_steps": ", ".join(f"{int(s):,}" for s in view["pre-training steps"]),
            "trend_gaps": ", ".join(f"{g:+.1f} [{lo:+.1f}, {hi:+.1f}]"
                                    for g, lo, hi in zip(gaps, view["low"], view["high"])),
            "trend_direction": direction}


def scale_view(chapter: Any, profiles: tuple[str, ...] = SCALE_PROFILES, results_root: Any = None) -> pd.DataFrame:
    """The headline comparison in each committed profile whose results are complete and current (smallest first):
    encoder, units seen in pre-training, both models' parameters, their mean dev score over the tasks that learn in
    that profile, and LSH-Proj minus BERT-MLM with its 95% interval (:func:`trend_view`'s row at the profile's own
    pre-training length)."""
    from hashlib_core.chapter import Shown

    rows = []
    for name in profiles:
        profile, store = chapter.profiles.get(name), chapter.store(name, results_root)
        if not store.names() or chapter.missing(name, results_root) or chapter.stale(name, results_root):
            continue
        view = trend_view(Shown(profile, store, "committed", ""))
        if view.empty:
            continue
        last = view.iloc[-1]
        params = store.read_table("glue").set_index("name")["total_params"]
        rows.append({"profile": name, "encoder": f"{profile.layers} x {profile.hidden}",
                     "pre-training units": profile.pt_steps * profile.pt_batch * profile.seq_len,
                     f"{_A} params": int(params[_A]), f"{_B} params": int(params[_B]), _A: last[_A], _B: last[_B],
                     "difference": last["difference"], "low": last["low"], "high": last["high"],
                     "tasks": last["tasks"]})
    return pd.DataFrame(rows, columns=["profile", "encoder", "pre-training units", f"{_A} params", f"{_B} params",
                                       _A, _B, "difference", "low", "high", "tasks"])


def scale_quoted(view: pd.DataFrame) -> dict[str, str]:
    """The comparison by scale for the prose."""
    if len(view) < 2:
        return {"scale_gaps": "-", "scale_direction": "cannot be read: fewer than two profiles have complete, current "
                                                      "results"}
    gaps, low, high = (view[c].to_numpy() for c in ("difference", "low", "high"))
    return {"scale_gaps": ", ".join(f"{p} {g:+.1f} [{lo:+.1f}, {hi:+.1f}]"
                                    for p, g, lo, hi in zip(view["profile"], gaps, low, high)),
            "scale_direction": trend_direction(gaps, low, high, over="scales")}
