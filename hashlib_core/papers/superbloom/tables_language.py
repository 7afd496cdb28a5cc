"""The Superbloom chapter's §4 tables: masked-token recall of the text models, the context-free rankings beside
them, and the numbers the language paragraphs quote."""
from __future__ import annotations

import pandas as pd

__all__ = ["language_view", "prior_view", "training_entropy", "prior_quoted"]


def language_view(language: pd.DataFrame, models: pd.DataFrame) -> pd.DataFrame:
    """§4's Table 4 (sizes) and Table 5 (recall) in one: each model's width, tokens, parameters and recall@k."""
    sizes = models.set_index("name")[["hidden", "alpha", "vocab_size", "total_params"]]
    out = language.set_index("name").join(sizes).reset_index()
    recalls = [c for c in language.columns if c.startswith("rec@")]
    return out[["name", "hidden", "alpha", "vocab_size", "total_params", *recalls, "mean_scored"]].rename(
        columns={"hidden": "d", "vocab_size": "tokens", "total_params": "parameters",
                 "mean_scored": "candidates scored"})


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
    and the baselines' final training losses beside the training tokens' entropy."""
    from hashlib_core.papers.superbloom.language import TEST_FREQUENCY, TRAINING_FREQUENCY

    ks = sorted(int(c[4:]) for c in language.columns if c.startswith("rec@"))
    rows = prior.set_index("name")
    train, oracle = rows.loc[TRAINING_FREQUENCY], rows.loc[TEST_FREQUENCY]
    n = int(train["segments"])
    lang = language.set_index("name")
    base = [m for m in lang.index if m.startswith("baseline")]
    beat = [m for m in lang.index if all(lang.loc[m, f"rec@{k}"] > train[f"rec@{k}"] for k in ks)]
    below = [m for m in lang.index if all(lang.loc[m, f"rec@{k}"] < train[f"rec@{k}"] for k in ks)]
    losses = models.set_index("name")["final_loss"]

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
