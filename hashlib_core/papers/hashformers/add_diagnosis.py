"""Why Add stays at the majority class at small scale: its shared part drifts and drowns the word parts.

Add (Eq. 2) gives every word ``e = s + w(τ)``: a **shared part** ``s = Σ_j (B^j_0 + B^j_1) / (2γ)``, one vector for
all words, and a **word part** ``w(τ) = (τ - ½) · (B^j_1 - B^j_0) / γ``
(:meth:`~hashlib_core.embeddings.hashed.AdditiveEmbedding.parts`). Every token of every batch pushes all T
codebooks, so ``s`` moves like one parameter with a T-fold gradient. The chapter measures the norms of both parts
(at initialisation and after pre-training) and trains the same models with no gradient into ``s``
(:data:`~hashlib_core.papers.hashformers.profiles.ADD_DIAGNOSIS_MODELS`): a control, not a model of the paper.
"""
from __future__ import annotations

from typing import Sequence

import pandas as pd
import torch

from hashlib_core.chapter import RunContext
from hashlib_core.papers.hashformers.data import Resources, unit_table
from hashlib_core.papers.hashformers.pretraining import pretrain, pretraining_model
from hashlib_core.papers.hashformers.profiles import ModelSpec
from hashlib_core.profiles import seed_everything

__all__ = ["part_norms", "add_parts"]


@torch.no_grad()
def part_norms(model: torch.nn.Module, bits: torch.Tensor) -> dict[str, float]:
    """Norm of Add's shared part, mean norm of the word parts of ``bits`` ``(words, T)``, mean position row norm."""
    embeddings = model.base_model.embeddings
    shared, word = embeddings.word_embeddings.parts(bits.to(embeddings.word_embeddings.codebooks.device))
    position = embeddings.position_embeddings.weight
    return {"shared_norm": float(shared.norm()), "word_norm": float(word.norm(dim=-1).mean()),
            "position_norm": float(position.norm(dim=-1).mean()),
            "shared_over_word": float(shared.norm() / word.norm(dim=-1).mean())}


def add_parts(specs: Sequence[ModelSpec], res: Resources, ctx: RunContext) -> pd.DataFrame:
    """For each Add model: the part norms over the corpus's distinct words at initialisation and after pre-training
    (pre-training is read from its checkpoint when the GLUE experiment already ran)."""
    rows = []
    for spec in specs:
        if spec.embedding_type != "add":
            raise ValueError(f"add_parts takes Add models, got {spec.name!r} ({spec.embedding_type})")
        _, bits = unit_table(spec, res, res.word_stream)
        seed_everything(res.profile.seed)
        stages = [("initialisation", pretraining_model(spec, res.profile, 0))]
        trained, summary, _ = pretrain(spec, res, ctx)
        stages.append((f"after pre-training ({summary['steps']} steps)", trained))
        for stage, model in stages:
            rows.append({"name": spec.name, "stage": stage, "words": len(bits), **part_norms(model, bits)})
    return pd.DataFrame(rows)
