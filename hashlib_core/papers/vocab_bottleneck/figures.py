"""The vocabulary-bottleneck chapter's figure."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # figures are saved to PNG, never shown in a window
import matplotlib.pyplot as plt
import pandas as pd

__all__ = ["share_vs_size"]


def share_vs_size(shares: pd.DataFrame, claims: pd.DataFrame):
    """Input-embedding share against model size (log scale), one line per family, printed claims as crosses."""
    row = shares.set_index("model")
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for family, group in shares.groupby("family", sort=False):
        ax.plot(group["total_params"], group["input_embedding_share_%"], "o-", label=family)
        for i, (_, r) in enumerate(group.iterrows()):
            dy = {"BERT": -12, "RoBERTa": 6, "GPT-2": -12 if i % 2 else 8}.get(family, 6)
            ax.annotate(r["model"].replace(" (MHF Table 7)", ""), (r["total_params"], r["input_embedding_share_%"]),
                        textcoords="offset points", xytext=(5, dy), fontsize=7)
    claimed = claims[claims["metric"] == "embedding_share"]
    ax.scatter([row.loc[m, "total_params"] for m in claimed["model"]],
               [float(p.strip("~%")) for p in claimed["paper"]],
               marker="x", s=60, color="black", zorder=5, label="printed claim")
    ax.set_xscale("log")
    ax.set_xlabel("total parameters (log scale)")
    ax.set_ylabel("input embedding share of parameters (%)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
