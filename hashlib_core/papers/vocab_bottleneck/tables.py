"""The vocabulary-bottleneck chapter's tables and the numbers its prose quotes, from the results."""
from __future__ import annotations

import pandas as pd

from hashlib_core.params import humanize
from hashlib_core.results import load_paper_table, paper_vs_ours

__all__ = ["CLAIM_MODELS", "compare_with_claims", "shares_table", "quoted"]


#: printed model names in ``data/paper_tables/vocabulary_bottleneck.csv`` -> our :data:`MODEL_SPECS` names
CLAIM_MODELS = {
    "BERT-BASE": "BERT-base",
    "BERT-base": "BERT-base",
    "ROBERTA-BASE": "RoBERTa-base",
    "GPT2": "GPT-2",
    "Mistral 7B": "Mistral-7B",
}
_MIB_PER_UNIT = {"Mb": 1.0, "MB": 1.0, "GB": 1024.0}   # the blog divides bytes by 1024*1024 and calls it Mb/GB


def compare_with_claims(ours: pd.DataFrame) -> pd.DataFrame:
    """Each printed claim of ``vocabulary_bottleneck.csv`` beside our count, with the gap.

    Shares are compared with our *input-embedding* share (the claims count the ``V x d`` input matrix only);
    the blog's sizes are bytes at 2 bytes per parameter (fp16), in the blog's own unit (``bytes / 1024**2`` for
    "Mb", ``/ 1024**3`` for "GB").
    """
    claims = load_paper_table("vocabulary_bottleneck")
    unknown = sorted(set(claims["model"]) - set(CLAIM_MODELS))
    if unknown:
        raise KeyError(f"no model spec for printed model name(s) {unknown}; extend CLAIM_MODELS")
    claims = claims.assign(printed_model=claims["model"], model=claims["model"].map(CLAIM_MODELS))
    parts = []
    for unit, group in claims.groupby("size_unit", sort=False):
        mine = ours.assign(
            embedding_size=ours["input_embedding_params"] * 2 / 1024**2 / _MIB_PER_UNIT.get(unit, float("nan")),
            model_size=ours["total_params"] * 2 / 1024**2 / _MIB_PER_UNIT.get(unit, float("nan")),
        )
        group.attrs = claims.attrs
        table = paper_vs_ours(
            group, mine, on="model", keep=["printed_model", "source"],
            columns={"vocab_size": "vocab_size", "embedding_dim": "hidden_size",
                     "embedding_params": "input_embedding_params", "total_params": "total_params",
                     "embedding_share": "input_embedding_share_%", "embedding_size": "embedding_size",
                     "model_size": "model_size"},
        )
        parts.append(table[table["paper"] != "-"].assign(unit=unit if unit != "-" else ""))
    out = pd.concat(parts, ignore_index=True)
    out = out[out["printed_model"].notna()].reset_index(drop=True)
    out.attrs["source"] = "data/paper_tables/vocabulary_bottleneck.csv (HashFormers §1; dynamic-hash-embeddings blog)"
    return out


def shares_table(shares: pd.DataFrame) -> pd.DataFrame:
    """The page's table of models: V, d, tied head, parameter counts (humanised) and shares."""
    return pd.DataFrame({
        "model": shares["model"], "V": shares["vocab_size"], "d": shares["hidden_size"],
        "tied head": shares["tied_head"], "total": shares["total_params"].map(humanize),
        "input emb.": shares["input_embedding_params"].map(humanize),
        "vocab. params": shares["vocabulary_params"].map(humanize),
        "input share (%)": shares["input_embedding_share_%"], "vocab. share (%)": shares["vocabulary_share_%"],
        "counted on": shares["counted_on"],
    })


def quoted(shares: pd.DataFrame, claims: pd.DataFrame) -> dict[str, str]:
    """Every number the chapter's prose quotes, computed from the results."""
    row = shares.set_index("model")

    def pct(name: str, col: str = "input_embedding_share_%") -> str:
        return f"{row.loc[name, col]:.1f}%"

    return {
        "bert_total": humanize(row.loc["BERT-base", "total_params"], 2),
        "bert_share": pct("BERT-base"),
        "roberta_emb": humanize(row.loc["RoBERTa-base", "input_embedding_params"], 2),
        "gpt2_share": pct("GPT-2"),
        "mistral_share": pct("Mistral-7B"),
        "mistral_vocab_share": pct("Mistral-7B", "vocabulary_share_%"),
        "qwen_shares": ", ".join(pct(m) for m in row.index if m.startswith("Qwen3")),
        "n_agree": f"{int(claims['agrees'].sum())} of {len(claims)}",
    }
