"""The HashFormers chapter's figures, each a function of result tables returning a matplotlib figure."""
from __future__ import annotations

from typing import Sequence

import matplotlib

matplotlib.use("Agg")  # figures are saved to PNG for the book, never shown in a window
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from hashlib_core.glue import normalize_task
from hashlib_core.papers.hashformers.finetuning import PAPER_TASK_COLUMN
from hashlib_core.papers.hashformers.tables import shown_names

__all__ = ["bucket_sharing", "morphology", "pretraining_curves", "params_vs_score"]


def bucket_sharing(sharing: pd.DataFrame):
    """Share of the corpus words that share an Emb bucket, against N, for MD5, LSH and a uniform random hash."""
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, group in sharing.groupby("hash"):
        ax.plot(group["num_buckets"], 100 * group["words_sharing"] / group["words"], "o-", label=name)
    uniform = sharing[sharing["hash"] == "MD5"]
    ax.plot(uniform["num_buckets"], 100 * uniform["expected_sharing_uniform"] / uniform["words"], "k--",
            label="uniform random hash (expected)")
    ax.set_xscale("log")
    ax.set_xlabel("number of buckets N (log scale)")
    ax.set_ylabel("% of words sharing a bucket")
    ax.grid(alpha=0.3, which="both")
    ax.legend()
    fig.tight_layout()
    return fig


def morphology(morph: pd.DataFrame):
    """Hamming distance between the 128-bit codes of a word and of each of its variants, MD5 vs LSH."""
    fig, ax = plt.subplots(figsize=(8, 3.8))
    x = np.arange(len(morph))
    ax.bar(x - 0.2, morph["md5_hamming"], width=0.4, label="MD5")
    ax.bar(x + 0.2, morph["lsh_hamming"], width=0.4, label="LSH (T = 128)")
    ax.axhline(64, color="k", ls="--", lw=1, label="unrelated codes (64 of 128)")
    ax.set_xticks(x, [f"{b}/{w}" for b, w in zip(morph["base"], morph["word"])], rotation=60, ha="right", fontsize=8)
    ax.set_ylabel("bits that differ")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def pretraining_curves(curves: pd.DataFrame):
    """Pre-training loss of every model (S+R: 3-way cross-entropy; BERT-MLM: MLM cross-entropy)."""
    fig, ax = plt.subplots(figsize=(7.5, 4))
    for name, group in curves.groupby("name", sort=False):
        ax.plot(group["step"], group["loss"], label=name, lw=1)
    ax.set_xlabel("pre-training step")
    ax.set_ylabel("training loss (S+R: 3-way CE; BERT-MLM: MLM CE)")
    ax.set_yscale("log")
    ax.legend(fontsize=7, ncol=2)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


_MARKERS = {"-": "s", "HashFormers-MD (Ours)": "o", "HashFormers-LSH (Ours)": "^"}


def params_vs_score(glue: pd.DataFrame, points: pd.DataFrame, tasks: Sequence[str], label: str):
    """GLUE dev average against embedding parameters: ours (filled, ``label``) and the paper's (hollow; Table 1
    averaged over the same tasks, Table 2's embedding counts)."""
    columns = [PAPER_TASK_COLUMN[normalize_task(t)] for t in tasks]
    fig, ax = plt.subplots(figsize=(8, 4.8))
    for (_, r), name in zip(glue.iterrows(), shown_names(glue)):
        ax.scatter(r["emb_params"], r["Avg"], marker=_MARKERS[r["group"]], color="tab:blue")
        ax.annotate(name, (r["emb_params"], r["Avg"]), textcoords="offset points", xytext=(4, 3), fontsize=6,
                    color="tab:blue")
    for _, r in points.iterrows():
        ax.scatter(r["emb_params"], r["avg"], marker=_MARKERS[r["group"]], color="tab:red", facecolors="none")
        name = ("MD-" if "MD" in r["group"] else "LSH-" if "LSH" in r["group"] else "") + r["model"]
        ax.annotate(name, (r["emb_params"], r["avg"]), textcoords="offset points", xytext=(4, -8), fontsize=6,
                    color="tab:red")
    ax.scatter([], [], color="tab:blue", label=f"ours ({label})")
    ax.scatter([], [], color="tab:red", facecolors="none", label="paper (BERT-base; Table 1 mean over the same tasks)")
    ax.set_xscale("log")
    ax.set_xlabel("embedding parameters (Appendix B; log scale)")
    ax.set_ylabel(f"GLUE dev average over {', '.join(columns)}")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig
