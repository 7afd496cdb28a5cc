"""Why Add stays at the majority class when stored as the paper's codebooks and trained at our learning rates.

Add (Eq. 2) gives every word ``e = s + w(τ)``: a **shared part** ``s = Σ_j (B^j_0 + B^j_1) / (2γ)``, one vector for
all words, and a **word part** ``w(τ) = (τ - ½) · (B^j_1 - B^j_0) / γ``
(:meth:`~hashlib_core.embeddings.hashed.AdditiveEmbedding.parts`). Stored as the paper's ``2 T d`` codebooks, every
token of every batch pushes all T pairs the same way along ``s``; Adam steps each pair by about the learning rate,
so ``s`` moves about ``T / γ = √T`` times as far as a single vector with the same gradient. The model has one: the
hashed-word marker (special-token row 5), added to every word as ``s`` is, so it receives exactly ``s``'s gradient.
:func:`add_parts` measures both movements over pre-training, and the part norms, for Table 1's Add (the profile's
storage) and for :data:`~hashlib_core.papers.hashformers.profiles.ADD_DIAGNOSIS_MODELS` (the codebooks as they are,
and with no gradient into ``s``: a control, not a model of the paper).
"""
from __future__ import annotations

from typing import Sequence

import pandas as pd
import torch

from hashlib_core.chapter import RunContext
from hashlib_core.papers.hashformers.data import Resources, unit_table
from hashlib_core.papers.hashformers.pretraining import pretrain, pretraining_model
from hashlib_core.papers.hashformers.profiles import ModelSpec
from hashlib_core.papers.hashformers.tokenization import HASHED_TOKEN_ID
from hashlib_core.profiles import seed_everything

__all__ = ["part_norms", "add_parts"]


@torch.no_grad()
def _vectors(model: torch.nn.Module, bits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(shared part, word parts of ``bits``, hashed-word marker row) of an Add model."""
    embeddings = model.base_model.embeddings
    shared, word = embeddings.word_embeddings.parts(bits.to(embeddings.position_embeddings.weight.device))
    return shared.detach(), word.detach(), embeddings.special_token_embeddings.weight[HASHED_TOKEN_ID].detach()


@torch.no_grad()
def part_norms(model: torch.nn.Module, bits: torch.Tensor) -> dict[str, float]:
    """Norm of Add's shared part, mean norm of the word parts of ``bits`` ``(words, T)``, mean position row norm."""
    shared, word, _ = _vectors(model, bits)
    position = model.base_model.embeddings.position_embeddings.weight
    return {"shared_norm": float(shared.norm()), "word_norm": float(word.norm(dim=-1).mean()),
            "position_norm": float(position.norm(dim=-1).mean()),
            "shared_over_word": float(shared.norm() / word.norm(dim=-1).mean())}


def add_parts(specs: Sequence[ModelSpec], res: Resources, ctx: RunContext) -> pd.DataFrame:
    """For each Add model: the part norms over the corpus's distinct words at initialisation and after pre-training
    (pre-training is read from its checkpoint when the GLUE experiment already ran), and how far pre-training moved
    the shared part and the hashed-word marker (the same gradient; their ratio is Adam's extra speed of ``s``)."""
    rows = []
    for spec in specs:
        if spec.embedding_type != "add":
            raise ValueError(f"add_parts takes Add models, got {spec.name!r} ({spec.embedding_type})")
        _, bits = unit_table(spec, res, res.word_stream)
        seed_everything(res.profile.seed)
        initial = pretraining_model(spec, res.profile, 0)
        trained, summary, _ = pretrain(spec, res, ctx)
        shared0, _, marker0 = _vectors(initial, bits)
        shared1, _, marker1 = _vectors(trained, bits)
        moved = {"shared_moved": float((shared1 - shared0.to(shared1.device)).norm()),
                 "marker_moved": float((marker1 - marker0.to(marker1.device)).norm())}
        moved["shared_over_marker_moved"] = moved["shared_moved"] / moved["marker_moved"]
        common = {"name": spec.name, "storage": trained.config.add_storage, "num_bits": trained.config.num_bits,
                  "words": len(bits)}
        rows.append({**common, "stage": "initialisation", **part_norms(initial, bits)})
        rows.append({**common, "stage": f"after pre-training ({summary['steps']} steps)", **part_norms(trained, bits),
                     **moved})
    return pd.DataFrame(rows)
