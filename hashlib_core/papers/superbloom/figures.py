"""The Superbloom chapter's figures, each a function of result tables returning a matplotlib figure."""
from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

__all__ = ["recall_by_decile", "beam_width", "training_curves"]


def recall_by_decile(deciles: pd.DataFrame, k: int = 1):
    """Fig. 3 analog: mean rec@k per decile of the target's label frequency, one line per model."""
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for name, g in deciles.groupby("name", sort=False):
        ax.plot(g["decile"], g[f"rec@{k}"], marker="o", ms=3, label=name)
    ax.set_xlabel("label-frequency decile (1: rarest targets)")
    ax.set_ylabel(f"rec@{k} (%)")
    ax.set_xticks(range(1, 11))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def beam_width(beam: pd.DataFrame):
    """Appendix B: recall@k against the beam width of one search iteration (approximate mode), with the candidates
    scored on a second axis."""
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    for column in [c for c in beam.columns if c.startswith("rec@")]:
        ax.plot(beam["beam"], beam[column], marker="o", ms=3, label=column)
    ax.set_xscale("log")
    ax.set_xlabel("beam width B (one iteration)")
    ax.set_ylabel("recall (%)")
    ax.grid(alpha=0.3)
    twin = ax.twinx()
    twin.plot(beam["beam"], beam["mean_scored"], color="grey", ls="--", label="candidates scored")
    twin.set_yscale("log")
    twin.set_ylabel("candidates scored (mean)")
    lines = ax.get_legend_handles_labels()
    extra = twin.get_legend_handles_labels()
    ax.legend(lines[0] + extra[0], lines[1] + extra[1], fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig


def training_curves(curves: pd.DataFrame):
    """Training loss (summed over the m hashes) against step, one line per model."""
    from hashlib_core.book import loss_curves

    return loss_curves(curves, "masked-item loss (nats, summed over hashes)")
