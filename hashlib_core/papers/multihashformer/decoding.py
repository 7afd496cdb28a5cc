"""MultiHashFormer's Hash Decoder (Xue, Yamaguchi & Aletras, section 3.3) and decoding with it (section 3.4).

**Cascaded predictor** (section 3.3; released code ``CascadeMixer``). Starting from the backbone's last hidden state
``c^(1) = h_t``, for each hash ``k = 1..H``::

    o^(k) = E^(k) c^(k)                         logits over the B buckets, weights tied to the input tables E^(k)
    p^(k) = softmax(o^(k))
    e^(k) = E^(k)^T p^(k)                       soft bucket embedding (k < H)
    c^(k+1) = c^(k) + W_up^(k) SiLU(W_dn^(k) [c^(k); e^(k)])     residual cascade mixer (k < H)

with ``W_dn^(k): 2d -> b`` and ``W_up^(k): b -> d`` (``b = 64`` in the paper, biases as ``nn.Linear``). Soft
embeddings are always used, also in training (no teacher forcing), as in the released code.

The training loss (``P_train``) and the streamed scoring over the valid vocabulary (``P_inf``) are shared with
other multi-hash output layers: :mod:`hashlib_core.decoding.multihash`. This module adds generation and the
valid-vocabulary perplexity of a :class:`~hashlib_core.papers.multihashformer.modeling.MultiHashFormerForCausalLM`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from hashlib_core.decoding.multihash import (
    DEFAULT_CHUNK_SIZE,
    require_valid_vocab,
    hash_log_probs,
    sample_vocab,
    score_vocab,
)
from hashlib_core.hashing.base import check_int
from hashlib_core.modeling import check_token_batch

__all__ = ["CascadedHashDecoder", "check_input_ids", "generate", "ValidVocabNLL", "valid_vocab_nll"]


class CascadedHashDecoder(nn.Module):
    """The cascade of section 3.3: ``H`` tied bucket classifiers linked by ``H - 1`` residual mixers.

    The decoder owns only the mixers; the bucket tables are passed to :meth:`forward` (they are the Hash Encoder's
    ``(H * B) x d`` table, so input and output weights stay tied). Parameters: ``(H - 1) * (2d*b + b + b*d + d)``.
    """

    def __init__(self, num_hashes: int, num_buckets: int, hidden_size: int, mixer_bottleneck: int = 64) -> None:
        super().__init__()
        for name, value in (("num_hashes", num_hashes), ("num_buckets", num_buckets),
                            ("hidden_size", hidden_size), ("mixer_bottleneck", mixer_bottleneck)):
            check_int(name, value, minimum=1)
        self.num_hashes = num_hashes
        self.num_buckets = num_buckets
        self.hidden_size = hidden_size
        self.mixer_bottleneck = mixer_bottleneck
        self.mixers = nn.ModuleList(
            nn.Sequential(nn.Linear(2 * hidden_size, mixer_bottleneck), nn.SiLU(),
                          nn.Linear(mixer_bottleneck, hidden_size))
            for _ in range(num_hashes - 1)
        )

    def forward(self, hidden: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
        """Bucket logits ``o^(1..H)`` for hidden states ``(..., d)``; returns ``(..., H, B)``.

        ``table`` is the ``(H * B) x d`` tied embedding table (``GatedCompositionalEmbedding.table.weight``).
        """
        expected = (self.num_hashes * self.num_buckets, self.hidden_size)
        if tuple(table.shape) != expected:
            raise ValueError(f"table must have shape (H*B, d) = {expected}, got {tuple(table.shape)}")
        if hidden.shape[-1] != self.hidden_size:
            raise ValueError(f"hidden states must end with d={self.hidden_size}, got shape {tuple(hidden.shape)}")
        state = hidden
        logits = []
        for k in range(self.num_hashes):
            bucket_table = table[k * self.num_buckets : (k + 1) * self.num_buckets]   # E^(k): B x d
            o_k = state @ bucket_table.T
            logits.append(o_k)
            if k < self.num_hashes - 1:
                soft = torch.softmax(o_k, dim=-1) @ bucket_table                      # e^(k) = E^T p
                state = state + self.mixers[k](torch.cat([state, soft], dim=-1))
        return torch.stack(logits, dim=-2)

    def extra_repr(self) -> str:
        return (f"num_hashes={self.num_hashes}, num_buckets={self.num_buckets}, hidden_size={self.hidden_size}, "
                f"mixer_bottleneck={self.mixer_bottleneck}")


def _check_model(model: object) -> None:
    hash_map, decoder = getattr(model, "hash_map", None), getattr(model, "hash_logits", None)
    if not (isinstance(hash_map, torch.Tensor) and callable(decoder)):
        raise TypeError(f"model must be a MultiHashFormerForCausalLM (with a hash_map and a hash decoder), got "
                        f"{type(model).__name__}; build one with MultiHashFormerForCausalLM(config) or from_pretrained")


def check_input_ids(input_ids: torch.Tensor, name: str = "input_ids") -> None:
    """A non-empty ``(batch, seq)`` tensor of integer token ids, else a clear error naming ``name`` and the fix
    (the check of ``MultiHashFormerModel.forward``, :func:`generate` and :func:`valid_vocab_nll`)."""
    check_token_batch(input_ids, name, empty_fix="start a prompt with a token such as the BOS/EOS id")


def _left_padding_mask(attention_mask: torch.Tensor | None, input_ids: torch.Tensor) -> torch.Tensor | None:
    """Validate a left-padding mask for :func:`generate`; ``None`` when there is no padding at all."""
    if attention_mask is None:
        return None
    if not isinstance(attention_mask, torch.Tensor) or attention_mask.shape != input_ids.shape:
        got = tuple(attention_mask.shape) if isinstance(attention_mask, torch.Tensor) else type(attention_mask).__name__
        raise ValueError(f"attention_mask must be a tensor of the prompt's shape {tuple(input_ids.shape)}, got {got}")
    mask = attention_mask.long()
    if bool(((mask != 0) & (mask != 1)).any()):
        raise ValueError("attention_mask must hold only 0 (padding) and 1 (token)")
    if not bool(mask[:, -1].eq(1).all()):
        raise ValueError("generation needs left-padded prompts (every row's last column a real token); pad on the "
                         "left, e.g. tokenizer.padding_side = 'left'")
    if bool((mask[:, 1:] < mask[:, :-1]).any()):
        raise ValueError("attention_mask has padding between tokens; only left padding (0s, then 1s) is supported")
    return None if bool(mask.eq(1).all()) else mask


@torch.no_grad()
def generate(
    model: nn.Module,
    input_ids: torch.Tensor,
    max_new_tokens: int,
    *,
    do_sample: bool = False,
    temperature: float = 1.0,
    top_k: int = 0,
    generator: torch.Generator | None = None,
    eos_token_id: int | None = None,
    attention_mask: torch.Tensor | None = None,
    chunk_size: int | None = DEFAULT_CHUNK_SIZE,
) -> torch.Tensor:
    """Autoregressive decoding over the valid vocabulary: only registered signatures can be emitted.

    ``model`` is a :class:`~hashlib_core.papers.multihashformer.modeling.MultiHashFormerForCausalLM`.

    ``input_ids`` is a ``(batch, seq)`` prompt. Prompts of different lengths are batched by **left** padding with
    an ``attention_mask`` (0 on the padding, then 1s; ``tokenizer.padding_side = "left"``): padding is never
    attended to and positions start at 0 on each prompt's first real token, so each row decodes as it would alone.
    Greedy (``do_sample=False``) takes the ``P_inf`` argmax; sampling draws from ``P_inf`` with ``temperature`` and
    optional ``top_k`` using ``generator``. With ``eos_token_id``, a sequence that emitted it keeps emitting it.
    Returns ``(batch, seq + max_new_tokens)`` (the padding kept in front). Uses the backbone's KV cache, so each
    step runs the backbone on one new position. An empty batch, an empty prompt, 1-D or non-integer ids raise an
    error naming ``input_ids`` and its shape or dtype; ``max_new_tokens=0`` returns the prompt.
    """
    _check_model(model)
    check_input_ids(input_ids)
    check_int("max_new_tokens", max_new_tokens, minimum=0)
    mask = _left_padding_mask(attention_mask, input_ids)
    hash_map = model.hash_map
    require_valid_vocab(hash_map)
    if eos_token_id is not None:
        check_int("eos_token_id", eos_token_id, minimum=0, maximum=hash_map.shape[0] - 1)
    if eos_token_id is not None and not bool(hash_map[eos_token_id].ne(0).any()):
        raise ValueError(f"eos_token_id {eos_token_id} has no registered signature, so it can never be generated")
    was_training = model.training
    model.eval()
    try:
        sequences = input_ids.to(hash_map.device)
        finished = torch.zeros(sequences.shape[0], dtype=torch.bool, device=sequences.device)
        step_ids, past = sequences, None
        mask = None if mask is None else mask.to(sequences.device)
        positions = None if mask is None else (mask.cumsum(-1) - 1).clamp_min(0)
        for _ in range(max_new_tokens):
            out = model(input_ids=step_ids, attention_mask=mask, position_ids=positions, past_key_values=past,
                        use_cache=True, logits_to_keep=1)
            past = out.past_key_values
            if mask is not None:
                mask = torch.cat([mask, mask.new_ones(mask.shape[0], 1)], dim=1)
                positions = positions[:, -1:] + 1
            log_probs = hash_log_probs(out.hash_logits[:, -1])                 # (batch, H, B)
            if do_sample:
                next_ids = sample_vocab(log_probs, hash_map, temperature=temperature, top_k=top_k,
                                        generator=generator, chunk_size=chunk_size)
            else:
                next_ids = score_vocab(log_probs, hash_map, top_k=1, chunk_size=chunk_size).top_ids[:, 0]
            if eos_token_id is not None:
                next_ids = torch.where(finished, torch.full_like(next_ids, eos_token_id), next_ids)
                finished |= next_ids.eq(eos_token_id)
            sequences = torch.cat([sequences, next_ids[:, None]], dim=1)
            step_ids = next_ids[:, None]
    finally:
        model.train(was_training)
    return sequences


@dataclass(frozen=True)
class ValidVocabNLL:
    """Summed negative log-likelihood under ``P_inf`` and the number of scored tokens."""

    total_nll: float
    num_tokens: int

    @property
    def mean_nll(self) -> float:
        """Mean NLL per token in nats."""
        return self.total_nll / self.num_tokens if self.num_tokens else math.nan

    @property
    def perplexity(self) -> float:
        """``exp(mean_nll)``: perplexity over the valid vocabulary."""
        return math.exp(self.mean_nll) if self.num_tokens else math.nan


@torch.no_grad()
def valid_vocab_nll(
    model: nn.Module,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor | None = None,
    *,
    chunk_size: int | None = DEFAULT_CHUNK_SIZE,
    token_chunk_size: int = 512,
) -> ValidVocabNLL:
    """Next-token NLL of ``input_ids`` under ``P_inf`` (renormalised over the valid vocabulary) for a
    :class:`~hashlib_core.papers.multihashformer.modeling.MultiHashFormerForCausalLM` ``model``.

    Position ``t`` predicts token ``t + 1``; a pair is scored only when both positions have ``attention_mask`` 1
    (right-padded batches: the first token of each sequence is context, never a target). The backbone runs
    once; the hash decoder and the vocabulary scoring then run over ``token_chunk_size`` positions at a time, so
    memory stays at ``token_chunk_size x (H*B + chunk_size)`` values beyond the backbone's activations.
    """
    _check_model(model)
    check_input_ids(input_ids)
    check_int("token_chunk_size", token_chunk_size, minimum=1)
    hash_map = model.hash_map
    device = hash_map.device
    input_ids = input_ids.to(device)
    mask = torch.ones_like(input_ids, dtype=torch.bool) if attention_mask is None else attention_mask.to(device).bool()
    if mask.shape != input_ids.shape:
        raise ValueError(f"attention_mask has shape {tuple(mask.shape)}, expected {tuple(input_ids.shape)}")
    was_training = model.training
    model.eval()
    try:
        hidden = model.encode(input_ids, attention_mask=None if attention_mask is None else mask.long())
        hidden = hidden.last_hidden_state[:, :-1].reshape(-1, hidden.last_hidden_state.shape[-1])
        targets = input_ids[:, 1:].reshape(-1)
        keep = (mask[:, :-1] & mask[:, 1:]).reshape(-1)
        hidden, targets = hidden[keep], targets[keep]
        total = 0.0
        for start in range(0, targets.shape[0], token_chunk_size):
            log_probs = hash_log_probs(model.hash_logits(hidden[start : start + token_chunk_size]))
            scores = score_vocab(log_probs, hash_map, targets=targets[start : start + token_chunk_size],
                                 chunk_size=chunk_size)
            total -= float(scores.target_log_probs.double().sum())
    finally:
        model.train(was_training)
    return ValidVocabNLL(total_nll=total, num_tokens=int(targets.shape[0]))

