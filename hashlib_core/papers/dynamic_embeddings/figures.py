"""The dynamic-embeddings chapter's figures, each a function of result tables returning a matplotlib figure."""
from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

__all__ = ["HASHFORMERS_TASKS", "hashformers_points", "size_vs_score", "pretraining_curves"]

#: Our task keys -> the HashFormers chapter's Table 1 columns
HASHFORMERS_TASKS = {"sst2": "SST", "cola": "CoLA", "mrpc": "MRPC", "stsb": "STS", "rte": "RTE"}


def hashformers_points(hf_glue: pd.DataFrame, tasks: list[str]) -> pd.DataFrame:
    """The HashFormers chapter's models as (name, family, float32 MB, average over ``tasks``) rows; tasks it did not
    score make its average NaN (no point)."""
    columns = [HASHFORMERS_TASKS[t] for t in tasks]
    missing = [c for c in columns if c not in hf_glue.columns]
    average = hf_glue[columns].mean(axis=1) if not missing else float("nan")
    family = hf_glue["group"].where(hf_glue["group"] != "-", "BERT baselines (HashFormers chapter)")
    return pd.DataFrame({"name": hf_glue["name"], "family": family, "size_MB": 4 * hf_glue["total_params"] / 1e6,
                         "average": average})


def size_vs_score(glue: pd.DataFrame, tasks: list[str], hashformers: pd.DataFrame | None = None):
    """GLUE average over ``tasks`` against float32 model size: this chapter's models (filled: table, dynamic) and,
    when given, the HashFormers chapter's (:func:`hashformers_points`, open markers)."""
    fig, ax = plt.subplots(figsize=(7.0, 4.3))
    ours = glue.assign(size_MB=glue["size_fp32_bytes"] / 1e6, average=glue[tasks].mean(axis=1))
    placed: dict[tuple[float, float], int] = {}       # labels of points that coincide are stacked, not overprinted
    for embedding, marker in (("table", "s"), ("dynamic", "o")):
        sub = ours[ours["name"].isin(_names(glue, embedding))]
        ax.scatter(sub["size_MB"], sub["average"], marker=marker, s=60, zorder=3,
                   label=f"this chapter: {'embedding table' if embedding == 'table' else 'dynamic embedding'}")
        for _, r in sub.iterrows():
            spot = (round(float(r["size_MB"]), 2), round(float(r["average"]), 1))
            k = placed[spot] = placed.get(spot, -1) + 1
            ax.annotate(r["name"], (r["size_MB"], r["average"]), textcoords="offset points", xytext=(6, 4 - 11 * k),
                        fontsize=8)
    if hashformers is not None:
        points = hashformers.dropna(subset=["average"])
        colours = plt.rcParams["axes.prop_cycle"].by_key()["color"][2:]
        markers = ("^", "D", "P", "v", "X")
        for i, (family, sub) in enumerate(points.groupby("family", sort=False)):
            ax.scatter(sub["size_MB"], sub["average"], s=40, marker=markers[i % len(markers)], facecolors="none",
                       edgecolors=colours[i % len(colours)], label=family, zorder=2)
    ax.set_xscale("log")
    ax.set_xlabel("model size, float32 (MB, log scale)")
    ax.set_ylabel(f"GLUE dev average over {len(tasks)} tasks")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    return fig


def _names(glue: pd.DataFrame, embedding: str) -> list[str]:
    if "embedding" in glue.columns:
        return list(glue.loc[glue["embedding"] == embedding, "name"])
    is_table = glue["emb_params"] > 0
    return list(glue.loc[is_table if embedding == "table" else ~is_table, "name"])


def pretraining_curves(curves: pd.DataFrame):
    """Masked-language-model loss against pre-training step, one line per model."""
    from hashlib_core.book import loss_curves

    return loss_curves(curves, "MLM loss (nats)", "pre-training step")
