"""The Superbloom chapter's figures, each a function of result tables returning a matplotlib figure."""
from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

__all__ = ["recall_by_depth", "recall_by_decile", "beam_width", "training_curves", "language_curves",
           "alpha_curves", "train_step_times", "longer_curves"]


def recall_by_depth(recall: pd.DataFrame, k: int = 1):
    """Table 3 as a figure: rec@k against depth for Superbloom and the unhashed baseline of its size (mean of the
    seeds, bars one standard deviation), and the one-layer Superbloom as large as the deep model it is matched to,
    where trained."""
    from hashlib_core.papers.superbloom.tables import depth_rows

    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    rows = depth_rows(recall)
    for family, label, marker in (("superbloom", "Superbloom", "o"), ("baseline", "unhashed, Superbloom's size", "s")):
        g = rows[rows["family"] == family].sort_values("layers")
        ax.errorbar(g["layers"], g[f"rec@{k}"], yerr=g[f"sd rec@{k}"].fillna(0.0), marker=marker, ms=4, capsize=3,
                    label=label)
    wide = recall[recall["name"] == "superbloom-wide-L1"]
    if len(wide):
        width, match = int(wide["hidden"].iloc[0]), str(wide["matched_to"].iloc[0])
        ax.errorbar([1], wide[f"rec@{k}"], yerr=wide[f"sd rec@{k}"].fillna(0.0), marker="^", ms=6, capsize=3,
                    ls="none", color="grey", label=f"one-layer Superbloom as large as {match} (d = {width})")
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(rows["layers"].unique()))
    ax.get_xaxis().set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xlabel("layers")
    ax.set_ylabel(f"rec@{k} (%)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


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
    """Validation loss (summed over the m hashes) against step, one line per model."""
    from hashlib_core.book import loss_curves

    return loss_curves(curves, "validation masked-item loss (nats, summed over hashes)")


def language_curves(curves: pd.DataFrame, models: pd.DataFrame, entropy: float):
    """§4's unhashed baselines at their chosen learning rate (first seed): validation loss against step, beside
    ``entropy`` (nats), the loss of predicting the training tokens' frequencies whatever the context: a curve that
    flattens on that line learned no context, one below it did."""
    from hashlib_core.book import loss_curves

    first = models.groupby("name", sort=False)[["learning_rate", "seed"]].first()
    chosen = first[first.index.str.startswith("baseline")].reset_index()
    val = curves[curves["kind"] == "validation loss"].merge(chosen, on=["name", "learning_rate", "seed"])
    val = val.assign(model=[f"{n} (lr {lr:g})" for n, lr in zip(val["name"], val["learning_rate"])])
    fig = loss_curves(val, "validation masked-token loss (nats)", by="model")
    fig.axes[0].axhline(entropy, color="black", ls="--", lw=1, label="training-token frequencies (no context)")
    fig.axes[0].legend(fontsize=7)
    return fig


def alpha_curves(curves: pd.DataFrame):
    """The coarseness diagnosis: the share of a uniform guess's validation loss each model has removed, against
    step (0: it predicts no better than uniform), one line per model."""
    from hashlib_core.book import loss_curves

    val = curves[curves["kind"] == "validation loss"]
    fig = loss_curves(val.assign(loss=100.0 * (1.0 - val["loss"] / val["uniform_loss"])),
                      "validation loss below uniform (%)")
    fig.axes[0].axhline(0.0, color="black", lw=0.8)
    return fig


def train_step_times(train_time: pd.DataFrame):
    """§2.4 as a figure: milliseconds per training step against the id space (both axes logarithmic), for the
    unhashed model and Superbloom (the same Transformer), each point labelled with its softmax's size."""
    from hashlib_core.papers.superbloom.tables_train_time import train_time_pairs

    pairs = train_time_pairs(train_time)
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    for prefix, label, marker in (("base", "unhashed (one token per id)", "s"),
                                  ("sb", f"Superbloom (alpha = {int(train_time['alpha'].max())})", "o")):
        ax.plot(pairs["num_ids"], pairs[f"{prefix}_ms_per_step"], marker=marker, ms=5, label=label)
        for n, ms, v in zip(pairs["num_ids"], pairs[f"{prefix}_ms_per_step"], pairs[f"{prefix}_vocab_size"]):
            ax.annotate(f"{v:,} tokens", (n, ms), textcoords="offset points", xytext=(4, -10), fontsize=6)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(pairs["num_ids"].tolist(), [f"{n:,}" for n in pairs["num_ids"]])
    ax.minorticks_off()
    ax.margins(x=0.12, y=0.15)
    ax.set_xlabel("ids in the id space |S|")
    ax.set_ylabel("ms per training step (median)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def longer_curves(curves: pd.DataFrame):
    """The length diagnosis: validation loss against step for each model of the claims' deep pair, dashed at Table
    3's cap and solid at the longer one (the same rate and seed)."""
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    val = curves[curves["kind"] == "validation loss"]
    caps = sorted(int(c) for c in val["max_steps"].unique())
    for i, (name, g) in enumerate(val.groupby("name", sort=False)):
        for cap in caps:
            run = g[g["max_steps"] == cap].sort_values("step")
            ax.plot(run["step"], run["loss"], color=f"C{i}", ls="-" if cap == caps[-1] else "--",
                    label=f"{name}, cap {cap:,}")
    ax.set_xlabel("training step")
    ax.set_ylabel("validation masked-item loss\n(nats; Superbloom's summed over its hashes)", fontsize=8)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
