"""The Superbloom chapter's §4 tables: masked-token recall of the text models, the context-free rankings beside
them, and the numbers the language paragraphs quote."""
from __future__ import annotations

import pandas as pd

__all__ = ["language_view", "prior_view", "training_entropy", "prior_quoted", "language_quoted"]


def _mean_sd(mean: float, sd: float) -> str:
    """``12.3 ± 0.4`` (the spread across seeds), or ``12.3`` for one seed."""
    return f"{mean:.1f}" if pd.isna(sd) else f"{mean:.1f} ± {sd:.1f}"


def language_view(language: pd.DataFrame, models: pd.DataFrame) -> pd.DataFrame:
    """§4's Table 4 (sizes) and Table 5 (recall) in one: each model's width, tokens, parameters, chosen learning rate,
    seeds, whether every seed stopped before the cap, and recall@k (mean ± standard deviation across seeds)."""
    sizes = models.groupby("name", sort=False)[["alpha", "vocab_size"]].first()
    out = language.set_index("name").drop(columns=[c for c in ("alpha",) if c in language]).join(sizes).reset_index()
    ks = [c[4:] for c in language.columns if c.startswith("rec@")]
    view = out[["name", "hidden", "alpha", "vocab_size", "total_params", "learning_rate", "seeds"]].rename(
        columns={"hidden": "d", "vocab_size": "tokens", "total_params": "parameters", "learning_rate": "lr"})
    view["lr"] = [f"{lr:g}" for lr in view["lr"]]
    view["before cap"] = ["yes" if c else "no (cap)" for c in out["converged"]]
    for k in ks:
        view[f"rec@{k}"] = [_mean_sd(m, sd) for m, sd in zip(out[f"rec@{k}"], out[f"sd rec@{k}"])]
    view["candidates scored"] = out["mean_scored"]
    return view


def prior_view(prior: pd.DataFrame) -> pd.DataFrame:
    """The context-free rankings' recall@k (%) on the language test windows, with their top token."""
    recalls = [c for c in prior.columns if c.startswith("rec@")]
    return prior[["name", *recalls, "top_token", "entropy_nats"]].rename(
        columns={"name": "ranking (no context)", "top_token": "its first token", "entropy_nats": "entropy (nats)"})


def training_entropy(prior: pd.DataFrame) -> float:
    """The entropy (nats) of the training tokens' frequencies: the loss of a model that reads no context."""
    from hashlib_core.papers.superbloom.language import TRAINING_FREQUENCY

    return float(prior.set_index("name").loc[TRAINING_FREQUENCY, "entropy_nats"])


def prior_quoted(language: pd.DataFrame, models: pd.DataFrame, prior: pd.DataFrame) -> dict[str, str]:
    """The numbers the language paragraph quotes: the baselines' rec@1 in test windows, the context-free rankings'
    (training frequency; test frequency, the oracle), which models beat the training-frequency ranking at every k,
    and the baselines' lowest validation losses (first seed) beside the training tokens' entropy."""
    from hashlib_core.papers.superbloom.language import TEST_FREQUENCY, TRAINING_FREQUENCY

    ks = sorted(int(c[4:]) for c in language.columns if c.startswith("rec@"))
    rows = prior.set_index("name")
    train, oracle = rows.loc[TRAINING_FREQUENCY], rows.loc[TEST_FREQUENCY]
    n = int(train["segments"])
    lang = language.set_index("name")
    base = [m for m in lang.index if m.startswith("baseline")]
    beat = [m for m in lang.index if all(lang.loc[m, f"rec@{k}"] > train[f"rec@{k}"] for k in ks)]
    below = [m for m in lang.index if all(lang.loc[m, f"rec@{k}"] < train[f"rec@{k}"] for k in ks)]
    losses = models.groupby("name", sort=False)["best_validation"].first().mul(-1.0)   # the first seed's

    def hits(name: str) -> str:
        return f"{round(lang.loc[name, 'rec@1'] * n / 100):,}"

    def names(group: list[str], verb: str, none: str) -> str:
        return f"{' and '.join(group)} {verb}{'s' if len(group) == 1 else ''}" if group else none

    verdict = (names(beat, "beat", "no model beats") + " it at every k, "
               + names(below, "fall", "no model falls") + " below it at every k")
    return {"lm_segments": f"{n:,}", "lm_base_hits": " and ".join(hits(m) for m in base),
            "lm_base_names": " and ".join(base), "prior_hits": f"{int(train['hits@1']):,}",
            "prior_top": str(train["top_token"]), "oracle_hits": f"{int(oracle['hits@1']):,}",
            "oracle_top": str(oracle["top_token"]), "prior_verdict": verdict,
            "prior_entropy": f"{train['entropy_nats']:.2f}",
            "lm_base_losses": " and ".join(f"{losses[m]:.2f}" for m in base)}


def language_quoted(profile, models: pd.DataFrame) -> dict[str, str]:
    """The protocol numbers §4's paragraph quotes: the vocabulary, windows, cap, interval, rates, seeds and how many
    of the text models' seeds stopped before the cap."""
    first = models.iloc[0]
    runs = models.groupby("name", sort=False)
    return {"lm_vocab": f"{int(first['vocabulary']):,}", "lm_pieces": f"{int(first['wordpiece_pieces']):,}",
            "lm_unigrams": f"{int(first['unigrams']):,}", "lm_bigrams": f"{int(first['bigrams']):,}",
            "lm_windows": f"{int(first['train_windows']):,}", "lm_val_windows": f"{int(first['validation_windows']):,}",
            "lm_alpha": str(profile.lm_alpha), "lm_steps": f"{profile.lm_steps:,}", "lm_layers": str(profile.lm_layers),
            "lm_eval_every": f"{profile.lm_eval_every:,}", "lm_seeds": str(profile.lm_seeds),
            "lm_rates": ", ".join(f"{lr:g}" for lr in profile.lm_learning_rates),
            "lm_chosen": "; ".join(f"{name} {float(g['learning_rate'].iloc[0]):g}" for name, g in runs),
            "lm_capped": f"{int((~models['converged'].astype(bool)).sum())} of {len(models)}"}
