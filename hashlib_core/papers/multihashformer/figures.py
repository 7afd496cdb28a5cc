"""The MultiHashFormer chapter's figures, each a function of result tables returning a matplotlib figure."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # figures are saved to PNG for the book, never shown in a window
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

__all__ = ["training_curves", "hb_sweep", "rank_spectrum", "expansion_bpb", "scaling_gaps"]


def training_curves(curves: pd.DataFrame):
    """Training loss of the language models (MHF: the sum of the H per-coordinate cross-entropies)."""
    fig, ax = plt.subplots(figsize=(8.5, 3.8))
    for name, g in curves[~curves["model"].str.endswith("CPT")].groupby("model", sort=False):
        ax.plot(g["step"], g["loss"], marker=".", label=name)
    ax.set_xlabel("optimiser step")
    ax.set_ylabel("training loss (nats; MHF: sum of H cross-entropies)")
    ax.set_yscale("log")
    ax.legend(fontsize=7, ncol=1, loc="center left", bbox_to_anchor=(1, 0.5))
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def hb_sweep(sweep: pd.DataFrame, lm: pd.DataFrame, svm: pd.DataFrame):
    """Test accuracy and perplexity against embedding parameters for every (H, B) trained; Standard dotted."""
    extra = pd.concat([lm[lm["built_as"] != "baseline"], svm[svm["H"] == 4]], ignore_index=True)
    points = pd.concat([sweep, extra[extra["H"] > 1]], ignore_index=True).drop_duplicates("model")
    std_row = points[points["model"] == "Standard"].iloc[0]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for ax, col, label in ((axes[0], "test_accuracy_%", "test accuracy (%)"),
                           (axes[1], "test_perplexity", "test perplexity")):
        for h, g in points[points["H"] > 1].groupby("H"):
            g = g.sort_values("emb_params")
            ax.plot(g["emb_params"], g[col], "o-", label=f"H{h}")
            for _, r in g.iterrows():
                ax.annotate(r["model"], (r["emb_params"], r[col]), textcoords="offset points", xytext=(4, 4),
                            fontsize=7)
        ax.axhline(std_row[col], ls=":", color="black", label="Standard")
        ax.set_xscale("log")
        ax.set_xlabel("embedding parameters (log scale)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3, which="both")
    axes[1].set_yscale("log")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def rank_spectrum(spectrum: pd.DataFrame, rank: pd.DataFrame, rtol: float):
    """Singular values of each model's log-probability matrix (relative to the largest), with d + 1, each MHF
    model's bound min(B, H d) and the rank threshold."""
    fig, ax = plt.subplots(figsize=(7.5, 4))
    for name, g in spectrum.groupby("model", sort=False):
        ax.semilogy(g["index"], g["singular_value_rel"], label=name)
    r = rank.set_index("model")
    d = int(r["d"].iloc[0])
    ax.axvline(d + 1, color="grey", ls="--", lw=1)
    ax.text(d + 1, 1e-2, " d + 1", fontsize=8)
    for name, row in r[r["H"] > 1].iterrows():
        ax.axvline(row["paper_bound"], ls=":", lw=1, color="black")
        ax.text(row["paper_bound"], 1e-4, f" min(B, H·d) {name}", fontsize=7, rotation=90, va="bottom")
    ax.axhline(rtol, color="red", lw=0.8)
    ax.text(1, rtol * 2, "rank threshold", color="red", fontsize=8)
    ax.set_xlabel("singular value index")
    ax.set_ylabel("singular value / largest")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def expansion_bpb(exp: pd.DataFrame):
    """Bits per UTF-8 byte on held-out PUD sentences, before and after expansion and continual pre-training: with
    ``P_inf`` as defined (left) and at the temperatures fitted on training text (right)."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), sharey=False)
    langs = list(dict.fromkeys(exp["language"]))
    width = 0.2
    for ax, suffix, title in ((axes[0], "", "as defined (P_inf for MHF)"), (axes[1], "_calibrated", "calibrated")):
        for i, (name, g) in enumerate(exp.groupby("model", sort=False)):
            g = g.set_index("language").loc[langs]
            x = np.arange(len(langs)) + i * 2 * width
            ax.bar(x, g[f"bpb_before{suffix}"], width, alpha=0.35, label=f"{name} before")
            ax.bar(x + width, g[f"bpb_after{suffix}"], width, label=f"{name} after CPT")
        ax.set_xticks(np.arange(len(langs)) + 1.5 * width, langs)
        ax.set_title(title, fontsize=9)
        ax.grid(alpha=0.3, axis="y")
    axes[0].set_ylabel("bits per UTF-8 byte (held-out PUD)")
    axes[1].legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return fig


def scaling_gaps(gaps: pd.DataFrame):
    """MHF minus each Standard model against the Standard model's total parameters, one line per pair: next-token
    accuracy (left) and calibrated cross-entropy (right; below zero: MHF better), with 95% paired bootstrap
    intervals; zero dashed."""
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.8))
    for (mhf, base), g in gaps.groupby(["mhf", "baseline"], sort=False):
        x = g["baseline_total_params"].to_numpy()
        style = "--" if base.startswith("Standard+") else "-"
        for ax, col in zip(axes, ("accuracy_gap", "ce_gap")):
            est = g[col].to_numpy()
            err = np.vstack([est - g[f"{col}_low"].to_numpy(), g[f"{col}_high"].to_numpy() - est])
            ax.errorbar(x, est, yerr=err, marker="o", linestyle=style, capsize=3, label=f"{mhf} - {base}")
    for ax, label in zip(axes, ("accuracy gap (points)", "calibrated cross-entropy gap (nats/token)")):
        ax.axhline(0.0, color="black", linestyle=":", linewidth=1)
        ax.set_xscale("log")
        ax.set_xlabel("the Standard model's total parameters")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1, 0.5))
    fig.tight_layout()
    return fig
