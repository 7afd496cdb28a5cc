"""Parameter accounting: how many parameters a model has and how many its vocabulary embeddings hold.

All counts come from instantiated ``torch.nn.Module`` objects, never from formulas. Large models are built on
PyTorch's ``meta`` device (:func:`instantiate_on_meta`), which creates parameters with shapes but without storage,
so a 7B-parameter model is counted in about a second and without allocating its 14-28 GB of weights.

Tied weights (an LM head sharing the input embedding) are counted once, as ``Module.parameters()`` does.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Callable

import torch
from torch import nn

__all__ = [
    "count_parameters",
    "EmbeddingBreakdown",
    "embedding_breakdown",
    "instantiate_on_meta",
    "humanize",
]


def count_parameters(module: nn.Module, *, trainable_only: bool = False) -> int:
    """Number of scalar parameters in ``module``; a tensor shared by two sub-modules counts once."""
    if not isinstance(module, nn.Module):
        raise TypeError(f"count_parameters expects a torch.nn.Module, got {type(module).__name__}")
    seen: set[int] = set()
    total = 0
    for p in module.parameters():
        if id(p) in seen or (trainable_only and not p.requires_grad):
            continue
        seen.add(id(p))
        total += p.numel()
    return total


@dataclass(frozen=True)
class EmbeddingBreakdown:
    """Where a model's parameters sit, relative to its vocabulary."""

    total: int
    input_embedding: int      # the token-embedding matrix V x d (get_input_embeddings())
    output_embedding: int     # an untied LM head / output projection over the vocabulary; 0 when tied or absent
    vocab_size: int
    hidden_size: int
    tied: bool

    @property
    def vocabulary_parameters(self) -> int:
        """Parameters whose count grows with the vocabulary: input embedding plus an untied output head."""
        return self.input_embedding + self.output_embedding

    @property
    def input_share(self) -> float:
        return self.input_embedding / self.total

    @property
    def vocabulary_share(self) -> float:
        return self.vocabulary_parameters / self.total


def embedding_breakdown(model: nn.Module) -> EmbeddingBreakdown:
    """Split a Hugging Face model's parameters into input embedding, untied output head and the rest.

    Works for any ``PreTrainedModel`` exposing ``get_input_embeddings()`` (and ``get_output_embeddings()`` for
    LM heads). The output head counts only when its weight is a different tensor from the input embedding.
    """
    get_in = getattr(model, "get_input_embeddings", None)
    if get_in is None or get_in() is None:
        raise TypeError(
            f"{type(model).__name__} has no get_input_embeddings(); pass a Hugging Face PreTrainedModel "
            "(or wrap your model to expose its token-embedding module)"
        )
    emb = get_in()
    weight = emb.weight
    out_mod = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    out_weight = getattr(out_mod, "weight", None) if out_mod is not None else None
    tied = out_weight is not None and out_weight is weight
    output = 0
    if out_weight is not None and not tied:
        output = out_weight.numel()
        bias = getattr(out_mod, "bias", None)
        if bias is not None:
            output += bias.numel()
    return EmbeddingBreakdown(
        total=count_parameters(model),
        input_embedding=weight.numel(),
        output_embedding=output,
        vocab_size=int(weight.shape[0]),
        hidden_size=int(weight.shape[1]),
        tied=bool(tied),
    )


def instantiate_on_meta(factory: Callable[[], nn.Module]) -> nn.Module:
    """Call ``factory()`` with ``meta`` as the default device: shapes and counts without weights."""
    with torch.device("meta"):
        model = factory()
    first = next(model.parameters(), None)
    if first is not None and not first.is_meta:
        raise RuntimeError(
            f"{type(model).__name__} allocated real weights although built under torch.device('meta'); "
            "its constructor must create tensors on the default device"
        )
    return model


def humanize(n: float, decimals: int = 1) -> str:
    """``12345678 -> '12.3M'``: the K/M/B style the papers print (decimal, not binary, prefixes)."""
    if not isinstance(n, numbers.Real) or isinstance(n, bool):
        raise TypeError(f"humanize expects a number, got {type(n).__name__}")
    for div, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(n) >= div:
            return f"{n / div:.{decimals}f}{suffix}"
    return f"{n:.0f}"
