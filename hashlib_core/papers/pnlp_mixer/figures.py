"""The pNLP-Mixer chapter's figures, each a function of result tables returning a matplotlib figure."""
from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from hashlib_core.papers.pnlp_mixer.tables import (
    ENCODER_LABELS,
    PROJECTION_LABELS,
    TASK_LABELS,
    paper_number,
    paper_rows,
    scaling_view,
)

__all__ = ["accuracy_vs_size", "validation_curves", "length_curves", "cost_vs_length"]


#: a marker per comparison task, in the order the figures draw them
_TASK_MARKERS = {"mtop-en": "s", "atis": "o", "snips": "^"}
#: the validation score each comparison task's models are chosen on (MTOP EN: slot exact match; the others: intents)
_TASK_METRIC = {"mtop-en": ("val_exact_match", "slot exact match (%)"), "atis": ("val_intent_acc", "intent accuracy (%)"),
                "snips": ("val_intent_acc", "intent accuracy (%)")}


def _tasks(table: pd.DataFrame, task: str | None) -> list[str]:
    """``[task]``, or every comparison task in ``table`` (ATIS first) when ``task`` is None."""
    if task is not None:
        return [task]
    present = set(table["task"])
    tasks = [t for t in _TASK_MARKERS if t in present]
    if not tasks:
        raise ValueError(f"no comparison task in the table (tasks: {sorted(present)}); expected one of "
                         f"{tuple(_TASK_MARKERS)}")
    return tasks


def accuracy_vs_size(table2: pd.DataFrame, sizes: pd.DataFrame, task: str | None = None):
    """Validation intent accuracy against parameters for Table 2's architectures: ours (filled: a circle on ATIS, a
    triangle on SNIPS; every intent task in ``table2`` unless ``task`` names one; each the mean over its chosen
    runs) and the paper's (open, multiATIS EN)."""
    paper = paper_rows("encoder")[1]
    params = sizes.set_index("encoder")["parameters"]
    tasks = [t for t in _tasks(table2, task) if _TASK_METRIC.get(t, ("val_intent_acc",))[0] == "val_intent_acc"]
    if "chosen" in table2:
        table2 = table2[table2["chosen"].astype(bool)]
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    colours = {}
    for t in tasks:
        ours = table2[table2["task"] == t].groupby("encoder")["val_intent_acc"].mean()
        for encoder, label in ENCODER_LABELS.items():
            if encoder not in ours.index:
                continue
            point = ax.scatter(params[encoder], ours[encoder], s=45, zorder=3,
                               marker=_TASK_MARKERS.get(t, "o"), color=colours.get(encoder))
            if encoder not in colours:
                colours[encoder] = point.get_facecolor()[0]
                ax.scatter(paper_number(paper.loc[label, "#Param."]),
                           paper_number(paper.loc[label, "multiATIS_EN_Intent_Acc"]),
                           s=45, facecolors="none", edgecolors=[colours[encoder]], zorder=3)
            if t == tasks[0]:
                ax.annotate(label, (params[encoder], ours[encoder]),
                            textcoords="offset points", xytext=(5, -11), fontsize=8)
        ax.scatter([], [], s=45, color="grey", marker=_TASK_MARKERS.get(t, "o"),
                   label=f"ours ({TASK_LABELS.get(t, t)} validation)")
    ax.scatter([], [], s=45, facecolors="none", edgecolors="grey", label="paper (multiATIS EN validation)")
    ax.set_xscale("log")
    ax.set_xlabel("parameters (18-intent head)")
    ax.set_ylabel("intent accuracy (%)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


def validation_curves(curves: pd.DataFrame, by: str, task: str | None = None):
    """The validation score each task's models are chosen on (MTOP EN: slot exact match; ATIS, SNIPS: intent
    accuracy) per epoch, for each row of Table 1 (``by="projection"``) or Table 2 (``by="encoder"``): one panel per
    task (every task in ``curves`` unless ``task`` names one)."""
    labels = PROJECTION_LABELS if by == "projection" else ENCODER_LABELS
    tasks = _tasks(curves, task)
    fig, axes = plt.subplots(1, len(tasks), figsize=(4.6 * len(tasks), 3.4), squeeze=False)
    for ax, t in zip(axes[0], tasks):
        metric, title = _TASK_METRIC.get(t, ("val_intent_acc", "intent accuracy (%)"))
        for name, g in curves[curves["task"] == t].groupby(by, sort=False):
            ax.plot(g["epoch"], g[metric], marker="o", ms=3, label=labels.get(name, name))
        ax.set_xlabel("epoch")
        ax.set_title(f"{TASK_LABELS.get(t, t)} validation: {title}", fontsize=9)
        ax.grid(alpha=0.3)
        ax.xaxis.get_major_locator().set_params(integer=True)
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def length_curves(curves: pd.DataFrame | None, profile: str = ""):
    """The length diagnosis (``longer_mtop_curves``): MTOP EN validation exact match per epoch of each model, dashed
    at the tables' cap and solid at the longer one, a colour per encoder; a note when ``curves`` is None (the
    ``profile`` does not run the diagnosis)."""
    fig, ax = plt.subplots(figsize=(6.0, 3.4))
    if curves is None or curves.empty:
        ax.text(0.5, 0.5, f"the {profile} profile does not run the length diagnosis", ha="center", va="center")
        ax.set_axis_off()
        return fig
    caps = sorted(curves["max_epochs"].unique())
    for i, (encoder, g) in enumerate(curves.groupby("encoder", sort=False)):
        for cap, c in g.groupby("max_epochs"):
            ax.plot(c["epoch"], c["val_exact_match"], color=f"C{i}", ls="-" if cap == caps[-1] else "--",
                    marker="o", ms=2.5, label=f"{ENCODER_LABELS.get(encoder, encoder)}, cap {cap}")
    ax.set_xlabel("epoch")
    ax.set_ylabel("slot exact match (%)")
    ax.set_title("MTOP EN validation, first seed", fontsize=9)
    ax.grid(alpha=0.3)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def cost_vs_length(bench: dict, chapter_length: int = 64):
    """The scaling benchmark (:mod:`hashlib_core.benchmarks.pnlp_mixer_scaling`): matrix-product MFLOP per sentence
    (left) and median milliseconds at batch 1 on one thread (right) against the number of positions, for the
    Mixer (eager and lean path) and the Transformer of Table 2 (the faster of its fused and unfused paths); a dotted
    line marks the chapter's length."""
    view = scaling_view(bench)
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.0, 3.6))
    left.plot(view.index, view["Mixer MFLOP"], marker="o", ms=3, label="MLP-Mixer")
    left.plot(view.index, view["Transformer MFLOP"], marker="s", ms=3, label="Transformer")
    right.plot(view.index, view["Mixer ms"], marker="o", ms=3, label="MLP-Mixer (eager)")
    if "lean ms" in view:
        right.plot(view.index, view["lean ms"], marker="o", ms=3, ls="--", label="MLP-Mixer (lean path)")
    right.plot(view.index, view["Transformer ms"], marker="s", ms=3, label="Transformer (faster path)")
    for ax, title in ((left, "matrix-product MFLOP per sentence"), (right, "median ms per sentence")):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("positions per sentence")
        ax.set_title(title, fontsize=9)
        ax.grid(alpha=0.3, which="both")
        if view.index.min() <= chapter_length <= view.index.max():
            ax.axvline(chapter_length, color="grey", ls=":", lw=1)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
