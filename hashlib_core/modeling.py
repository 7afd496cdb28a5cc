"""The Hugging Face surface every model of the book offers, so evaluation code never branches on the model type.

Every model is a ``transformers.PreTrainedModel`` with a config, ``save_pretrained`` / ``from_pretrained``, a
``base_model`` (the encoder or decoder stack) whose ``forward`` accepts ``input_ids``, ``attention_mask`` and
``output_hidden_states``, and ``get_input_embeddings()``. On top of that the book uses a small protocol; a model
implements a method when the generic rule does not apply to it:

``embedding_parameter_count()``
    parameters that build the vector of a non-special token (the papers' "#Emb"). Generic rule: the input
    embedding matrix, plus an output head that is not tied to it.
``vocab_log_probs(hidden)``
    log-probabilities of the next token over the vocabulary, ``(..., V)``, from final hidden states. Generic rule:
    ``log_softmax`` of the output embeddings (the LM head). A multi-hash model renormalises its hash
    distributions over the valid vocabulary instead (MultiHashFormer's ``P_inf``).

:func:`hidden_states`, :func:`embedding_parameter_count` and :func:`vocab_log_probs` apply the protocol to any model.
"""
from __future__ import annotations

from typing import Any

import torch
from torch import nn

__all__ = ["check_token_batch", "hidden_states", "embedding_parameter_count", "vocab_log_probs", "decoder_layers",
           "run_encoder"]


def check_token_batch(input_ids: Any, name: str = "input_ids", *,
                      convert: str = "torch.as_tensor(ids, dtype=torch.long)",
                      empty_fix: str = "start a sequence with a token such as the BOS/EOS id") -> None:
    """A non-empty ``(batch, seq)`` tensor of integer token ids, else a clear error naming ``name`` and the fix
    (``convert``: how to build such a tensor; ``empty_fix``: what to do about an empty batch or sequence)."""
    if not isinstance(input_ids, torch.Tensor):
        raise TypeError(f"{name} must be a (batch, seq) torch.Tensor of token ids, got {type(input_ids).__name__}; "
                        f"use {convert}")
    if input_ids.dim() != 2:
        raise ValueError(f"{name} must be a (batch, seq) tensor of token ids, got shape {tuple(input_ids.shape)}; "
                         f"add a batch dimension with {name}[None] for a single sequence")
    if input_ids.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"{name} must be int64 (or int32) token ids, got dtype {input_ids.dtype}; convert with "
                        f"{name}.long()")
    if input_ids.shape[0] == 0 or input_ids.shape[1] == 0:
        raise ValueError(f"{name} has shape {tuple(input_ids.shape)}: a batch needs at least one sequence of at "
                         f"least one token; {empty_fix}")


def hidden_states(model: nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None,
                  **inputs: Any) -> tuple[torch.Tensor, ...]:
    """The base model's hidden states: the embedding output, then every layer's (the last one is what the head
    reads: after the final norm for decoders)."""
    out = model.base_model(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True, **inputs)
    if out.hidden_states is None:
        raise TypeError(f"{type(model.base_model).__name__} returned no hidden states for output_hidden_states=True")
    return tuple(out.hidden_states)


def embedding_parameter_count(model: nn.Module) -> int:
    """The model's ``embedding_parameter_count()``, or its input embedding matrix plus an untied output head."""
    if hasattr(model, "embedding_parameter_count"):
        return int(model.embedding_parameter_count())
    inputs = model.get_input_embeddings().weight
    total = inputs.numel()
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    if head is not None and head.weight is not inputs:
        total += head.weight.numel()
    return total


def vocab_log_probs(model: nn.Module, hidden: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """``(..., V)`` next-token log-probabilities (float32) from hidden states ``(..., d)``.

    ``temperature`` divides the model's scores before they are normalised (the logits of an LM head, the summed
    hash log-probabilities of a multi-hash model): 1 is the model itself; a fitted value calibrates it without
    changing which token is most likely.
    """
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature!r}")
    if hasattr(model, "vocab_log_probs"):
        return model.vocab_log_probs(hidden, temperature=temperature).float()
    head = model.get_output_embeddings()
    if head is None:
        raise TypeError(f"{type(model).__name__} has no language-model head (get_output_embeddings() is None)")
    return torch.log_softmax(head(hidden).float() / temperature, dim=-1)


def decoder_layers(model: nn.Module) -> nn.ModuleList:
    """The Transformer layers of the base model (``layers`` of a decoder, ``encoder.layer`` of an encoder)."""
    base = model.base_model
    if hasattr(base, "layers"):
        return base.layers
    if hasattr(base, "encoder") and hasattr(base.encoder, "layer"):
        return base.encoder.layer
    raise TypeError(f"cannot find the Transformer layers of {type(base).__name__}")


def run_encoder(config: Any, layers: nn.ModuleList, hidden: torch.Tensor, attention_mask: torch.Tensor | None,
                output_hidden_states: bool) -> Any:
    """``hidden`` (the embedding output) through bidirectional encoder ``layers`` (BERT / RoBERTa layers) under
    ``attention_mask``; a ``BaseModelOutput`` whose ``hidden_states`` (when asked) are the embedding output and every
    layer's output."""
    from transformers.masking_utils import create_bidirectional_mask
    from transformers.modeling_outputs import BaseModelOutput

    mask = create_bidirectional_mask(config=config, inputs_embeds=hidden, attention_mask=attention_mask)
    states = [hidden] if output_hidden_states else None
    for layer in layers:
        hidden = layer(hidden, mask)
        if states is not None:
            states.append(hidden)
    return BaseModelOutput(last_hidden_state=hidden, hidden_states=tuple(states) if states is not None else None)
