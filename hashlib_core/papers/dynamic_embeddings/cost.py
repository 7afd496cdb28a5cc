"""What the dynamic-embeddings headline claims cost to settle (:mod:`hashlib_core.claims.cost`).

The rate: the committed pre-training runs (``pretraining``: steps x batch x sequence tokens each, its wall time),
each model's parameters less its embedding table from the size table (``sizes``: the chapter's shapes are the same in
every profile). At the paper's scale each compared model is pre-trained once at the ``paper`` profile's steps, batch
and sequence; fine-tuning on GLUE is left out. The claims are about the paper's tiny models: one scale.
"""
from __future__ import annotations

from typing import Any, Sequence

from hashlib_core.claims.cost import ChapterCost, ClaimWork, Runs
from hashlib_core.papers.dynamic_embeddings.profiles import MODELS

__all__ = ["COST", "measure"]

TINY, EEL, UNO = (m.name for m in MODELS[:3])


def _params(results: Any, model: str) -> float:
    """N of ``model`` from the size table, or of the sized model of the same shape (the MD5 variant's)."""
    sizes = results.table("sizes").set_index("model")
    shape = {m.name: (m.embedding, m.layers, m.hidden, m.intermediate) for m in MODELS}
    model = next((m for m in sizes.index if m in shape and shape[m] == shape.get(model)), model)
    if model not in sizes.index:
        raise KeyError(f"{results.source('sizes')} has no row {model!r}: recompute sizes")
    return float(sizes.loc[model, "total_params"] - sizes.loc[model, "emb_params"])


def measure(results: Any) -> tuple[list[tuple[Runs, float]], str]:
    """The committed pre-training runs with their wall times."""
    table, config = results.table("pretraining"), results.config("pretraining")
    return [(Runs(str(r["name"]), _params(results, str(r["model"])),
                  float(r["steps"]) * config["pt_batch"] * config["seq_len"]), float(r["wall_time_s"]))
            for _, r in table.iterrows()], "pretraining"


def _pretraining(models: Sequence[str]):
    def work(profile: Any, results: Any) -> list[Runs]:
        tokens = float(profile.pt_steps) * profile.pt_batch * profile.seq_len
        return [Runs(f"{m} pre-trained", _params(results, m), tokens) for m in models]

    return work


COST = ChapterCost("dynamic_embeddings", "cpu", measure, {
    "eelbert-glue": ClaimWork(_pretraining([TINY, EEL])),
    "uno-glue": ClaimWork(_pretraining([TINY, UNO])),
})
