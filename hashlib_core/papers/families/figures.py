"""The every-family chapter's figures, each a function of result tables (:mod:`.tables`) returning a matplotlib
figure: quality against stored parameters, bytes and throughput (one panel per task, the Pareto front drawn), the
frequency deciles, and Track B's bits per byte against added parameters."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from hashlib_core.papers.families.tables import pareto_front

__all__ = ["quality_against", "deciles_figure", "memories_figure", "STYLE"]

_MARKERS = "os^vD<>pP*XhH8d"
_TASK_TITLE = {"sst2": "SST-2 (accuracy on its report part, held out of train)",
               "massive": "MASSIVE EN intents (test accuracy)"}
_COST_LABEL = {"emb_params": "stored embedding parameters (log scale)",
               "stored_bytes": "bytes: int8 + zlib + lookup structures (log scale)",
               "tokens_per_s": "forward tokens per second, one CPU thread (log scale)"}


def STYLE(families) -> dict[str, tuple[str, str]]:
    """One (colour, marker) per family, the same in every figure."""
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    return {f: (colours[i % len(colours)], _MARKERS[i % len(_MARKERS)]) for i, f in enumerate(families)}


def _shared_legend(fig, axes):
    """One legend under a row of per-task panels (the first panel's entries: every panel draws every family)."""
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=8, fontsize=7, bbox_to_anchor=(0.5, -0.02))
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    return fig


def quality_against(table: pd.DataFrame, cost: str = "emb_params", throughput: pd.DataFrame | None = None,
                    at: float | None = None):
    """Accuracy (with its interval) against ``cost`` per task; the Pareto front (lower cost, higher accuracy; for
    throughput higher is better, so the front is taken on its negative) as a dashed line. Throughput was measured at
    one budget (``at``): only that budget's rows and the one-size families are drawn. A cost of 0 (a family with no
    parameters) is drawn at 1 on the log axis."""
    data = table.copy()
    if cost == "tokens_per_s":
        if throughput is None or at is None:
            raise ValueError("the throughput axis needs the throughput table and the budget it was measured at")
        speed = throughput.set_index("family")["tokens_per_s"]
        data = data[data["family"].isin(speed.index) & ((data["sizing"] != "budget")
                                                        | np.isclose(data["fraction"], at))]
        data["tokens_per_s"] = data["family"].map(speed)
        data["neg_speed"] = -data["tokens_per_s"]
    else:
        data[cost] = data[cost].clip(lower=1)
    tasks = list(dict.fromkeys(data["task"]))
    style = STYLE(list(dict.fromkeys(table["family"])))
    fig, axes = plt.subplots(1, len(tasks), figsize=(6.2 * len(tasks), 4.6), squeeze=False)
    for ax, task in zip(axes[0], tasks):
        rows = data[data["task"] == task]
        for family, sub in rows.groupby("family", sort=False):
            colour, marker = style[family]
            ax.errorbar(sub[cost], sub["accuracy"], yerr=[sub["accuracy"] - sub["low"], sub["high"] - sub["accuracy"]],
                        fmt=marker, color=colour, ms=6, capsize=2, lw=1, label=family,
                        ls="-" if len(sub) > 1 else "none")
        front = pareto_front(rows, "neg_speed" if cost == "tokens_per_s" else cost)
        ax.plot(front[cost], front["accuracy"], "k--", lw=1, alpha=0.6, label="Pareto front",
                drawstyle="steps-post" if cost != "tokens_per_s" else "default")
        ax.set_xscale("log")
        ax.set_xlabel(_COST_LABEL[cost])
        ax.set_ylabel("accuracy (%)")
        ax.set_title(_TASK_TITLE.get(task, task), fontsize=10)
        ax.grid(alpha=0.3)
    return _shared_legend(fig, axes)


def deciles_figure(wide: pd.DataFrame, fraction: float):
    """Accuracy by decile of the rarest piece's training count (1: rarest) for every family at ``fraction`` (and the
    one-size families), one panel per task."""
    rows = wide[np.isclose(wide["fraction"], fraction) | (wide["family"] == "full")]
    tasks = list(dict.fromkeys(rows["task"]))
    style = STYLE(list(dict.fromkeys(wide["family"])))
    columns = [c for c in wide.columns if isinstance(c, str) and c.startswith("d") and c[1:].isdigit()]
    fig, axes = plt.subplots(1, len(tasks), figsize=(6.2 * len(tasks), 4.2), squeeze=False)
    for ax, task in zip(axes[0], tasks):
        for _, r in rows[rows["task"] == task].iterrows():
            colour, marker = style[r["family"]]
            ax.plot(range(1, len(columns) + 1), r[columns].to_numpy(float), marker=marker, color=colour, ms=4,
                    lw=1.2 if r["family"] != "full" else 2.4, label=r["family"])
        ax.set_xlabel("decile of the rarest piece's training count (1 = rarest)")
        ax.set_ylabel("accuracy (%)")
        ax.set_title(_TASK_TITLE.get(task, task), fontsize=10)
        ax.grid(alpha=0.3)
    return _shared_legend(fig, axes)


def memories_figure(table: pd.DataFrame):
    """Track B: each memory's difference in test bits per byte from the control (with its bootstrap interval)
    against the parameters it adds."""
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    rows = table[table["memory"] != "none"]
    style = STYLE(list(dict.fromkeys(rows["memory"])))
    for memory, sub in rows.groupby("memory", sort=False):
        colour, marker = style[memory]
        ax.errorbar(sub["memory_params"], sub["vs_control"], yerr=[sub["vs_control"] - sub["low"],
                                                                 sub["high"] - sub["vs_control"]],
                    fmt=marker, ls="-", color=colour, capsize=3, label=memory)
    ax.axhline(0, color="k", lw=1, alpha=0.6)
    ax.set_xscale("log")
    ax.set_xlabel("parameters the memory adds (log scale)")
    ax.set_ylabel("test bits per byte minus the control's\n(below 0: the memory helps)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
