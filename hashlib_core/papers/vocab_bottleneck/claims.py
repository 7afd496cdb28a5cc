"""The vocabulary-bottleneck chapter's claims: every printed size and share of ``vocabulary_bottleneck.csv``
(HashFormers §1, the dynamic-hash-embeddings blog), each a :func:`~hashlib_core.claims.value` claim whose verdict
says whether our count, from a model instantiated from its configuration, rounds to the printed figure.

The claims are built from the transcribed table itself (its quote and location columns), so the sentence quoted
and the number compared can never drift apart.
"""
from __future__ import annotations

from typing import Any

from hashlib_core.claims import ClaimSet, Effect, NotTestable, value
from hashlib_core.params import humanize
from hashlib_core.results import load_paper_table

__all__ = ["CLAIMS", "claim_rows"]

#: (printed model name, printed column, our column, what is claimed, claim id)
_CHECKED = (
    ("BERT-BASE", "embedding_params", "input_embedding_params", "BERT-base's embedding matrix holds 23.4M parameters",
     "bert-emb"),
    ("BERT-BASE", "total_params", "total_params", "BERT-base has 110M parameters", "bert-total"),
    ("ROBERTA-BASE", "embedding_params", "input_embedding_params",
     "RoBERTa-base's embedding matrix holds 38M parameters", "roberta-emb"),
    ("ROBERTA-BASE", "total_params", "total_params", "RoBERTa-base has 125M parameters", "roberta-total"),
    ("GPT2", "embedding_share", "input_embedding_share_%", "GPT-2's embedding is about 30% of its weights",
     "gpt2-share"),
    ("Mistral 7B", "embedding_share", "input_embedding_share_%", "Mistral-7B's embedding is about 2.5% of its "
     "weights", "mistral-share"),
    ("BERT-base", "embedding_share", "input_embedding_share_%", "BERT-base's embedding layer is 88% of the model "
     "(attributed to EELBERT)", "bert-88"),
)
_WHERE = {"xue2022hashformers": "HashFormers", "julian2023dynamic": "Dynamic-embeddings blog"}


def claim_rows() -> list[dict[str, Any]]:
    """The transcribed rows the claims read, one per checked figure (printed text, quote, location)."""
    from hashlib_core.papers.vocab_bottleneck.tables import CLAIM_MODELS

    paper = load_paper_table("vocabulary_bottleneck").set_index("model")
    rows = []
    for printed_model, column, ours_column, statement, claim_id in _CHECKED:
        row = paper.loc[printed_model]
        rows.append({"id": claim_id, "model": CLAIM_MODELS[printed_model], "printed": row[column],
                     "ours_column": ours_column, "statement": statement,
                     "where": f"{_WHERE[row['source']]}, {row['quote_location']}", "quote": row["quote"]})
    return rows


def _count(model: str, column: str):
    def effect(evidence: Any) -> Effect:
        shares = evidence.table("embedding_shares").set_index("model")
        if model not in shares.index:
            raise NotTestable(f"{model} is not among the counted models")
        number = float(shares.loc[model, column])
        if column.endswith("_%"):
            ours = f"{number:.1f}%"
        else:
            ours = f"{humanize(number, 2)} ({int(number):,})"
        return Effect.exactly(number, ours, unit="%" if column.endswith("_%") else "parameters",
                              method="exact: counted from the instantiated model")
    return effect


def _scale(profile: Any) -> str:
    checked = profile.materialize_up_to
    real = (f"; models up to {humanize(checked)} parameters also built with real bf16 weights and recounted"
            if checked else "")
    return f"{profile.name} profile: every model instantiated from its configuration on the meta device{real}"


CLAIMS = ClaimSet("vocab_bottleneck", "The vocabulary bottleneck", [
    value(r["id"], r["statement"], printed=r["printed"], where=r["where"], quote=r["quote"],
          effect=_count(r["model"], r["ours_column"]), reads=("embedding_shares",), section="vb-printed")
    for r in claim_rows()
], scale=_scale, brief=lambda p: "configurations counted on the meta device")
