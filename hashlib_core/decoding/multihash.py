"""MultiHashFormer's Hash Decoder and its probability model (Xue, Yamaguchi & Aletras, sections 3.3-3.4, App. A).

**Cascaded predictor** (section 3.3; released code ``CascadeMixer``). Starting from the backbone's last hidden state
``c^(1) = h_t``, for each hash ``k = 1..H``::

    o^(k) = E^(k) c^(k)                         logits over the B buckets, weights tied to the input tables E^(k)
    p^(k) = softmax(o^(k))
    e^(k) = E^(k)^T p^(k)                       soft bucket embedding (k < H)
    c^(k+1) = c^(k) + W_up^(k) SiLU(W_dn^(k) [c^(k); e^(k)])     residual cascade mixer (k < H)

with ``W_dn^(k): 2d -> b`` and ``W_up^(k): b -> d`` (``b = 64`` in the paper, biases as ``nn.Linear``). Soft
embeddings are always used, also in training (no teacher forcing), as in the released code.

**Training** (section 3.4, ``P_train``): ``log P_train(w) = sum_k log p^(k)[H_k(w)]``; the loss is the sum over the
``H`` coordinates of the cross-entropy, averaged over the (non-ignored) tokens. This is what the released trainer
(``CustomHashTrainer``) computes: a CE over all (token, hash) pairs normalised by the token count.

**Inference** (section 3.4, ``P_inf``): the same product renormalised over the valid vocabulary ``V_actl``
(ids with a registered, non-zero signature)::

    log P_inf(w) = sum_k log p^(k)[H_k(w)] - logsumexp_{w' in V_actl} sum_k log p^(k)[H_k(w')]

The released code materialises ``sum_k log p^(k)[hash_map[v, k]]`` as a float32 tensor of shape
``batch x seq x V``, and includes the all-zero (padding) rows of ``hash_map`` in the softmax. Here the vocabulary is
streamed in chunks (:func:`iter_vocab_scores`): the log-normaliser is an online ``logaddexp``, top-k is merged
chunk by chunk, and sampling uses the Gumbel-max trick per chunk, so memory is ``tokens x chunk_size`` rather than
``tokens x V``; ids with an all-zero signature get probability exactly 0 and are never emitted.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

import torch
import torch.nn.functional as F
from torch import nn

from hashlib_core.hashing.base import check_int

if TYPE_CHECKING:
    from hashlib_core.models.multihashformer import MultiHashFormerForCausalLM

__all__ = [
    "IGNORE_INDEX",
    "CascadedHashDecoder",
    "hash_log_probs",
    "multihash_loss",
    "iter_vocab_scores",
    "VocabScores",
    "score_vocab",
    "vocab_log_probs",
    "sample_vocab",
    "generate",
    "ValidVocabNLL",
    "valid_vocab_nll",
]

#: Label value that the loss and the perplexity skip (the Hugging Face convention).
IGNORE_INDEX = -100
#: Default number of vocabulary ids scored at once.
DEFAULT_CHUNK_SIZE = 4096


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


def hash_log_probs(hash_logits: torch.Tensor) -> torch.Tensor:
    """``log p^(k)`` from bucket logits ``(..., H, B)``, in float32 (float64 stays float64)."""
    dtype = torch.float64 if hash_logits.dtype == torch.float64 else torch.float32
    return torch.log_softmax(hash_logits.to(dtype), dim=-1)


def _check_hash_map(hash_map: torch.Tensor, num_hashes: int, num_buckets: int | None = None) -> None:
    if not isinstance(hash_map, torch.Tensor) or hash_map.dim() != 2 or hash_map.dtype != torch.long:
        raise TypeError("hash_map must be an int64 tensor of shape (vocab_size, num_hashes), e.g. model.hash_map")
    if hash_map.shape[1] != num_hashes:
        raise ValueError(f"hash_map has {hash_map.shape[1]} hash columns but the scores have H={num_hashes}")
    if num_buckets is not None and hash_map.numel() and int(hash_map.max()) >= num_buckets:
        raise ValueError(f"hash_map holds bucket {int(hash_map.max())} but the scores have only B={num_buckets}")


def multihash_loss(hash_logits: torch.Tensor, labels: torch.Tensor, hash_map: torch.Tensor) -> torch.Tensor:
    """Training loss ``-log P_train`` (section 3.4): sum over hashes of the per-hash CE, mean over tokens.

    ``hash_logits`` has shape ``(..., H, B)``, ``labels`` the leading shape ``(...)`` with token ids or
    :data:`IGNORE_INDEX`. Labels must be registered tokens (a non-zero signature). Returns a scalar; ``nan`` when
    every label is ignored (as ``torch.nn.functional.cross_entropy`` does).
    """
    num_hashes, num_buckets = hash_logits.shape[-2], hash_logits.shape[-1]
    _check_hash_map(hash_map, num_hashes)
    if labels.shape != hash_logits.shape[:-2]:
        raise ValueError(f"labels have shape {tuple(labels.shape)} but hash_logits have leading shape "
                         f"{tuple(hash_logits.shape[:-2])}; shift labels and logits to the same length first")
    labels = labels.reshape(-1)
    keep = labels.ne(IGNORE_INDEX)
    kept = labels[keep]
    if kept.numel() and (int(kept.min()) < 0 or int(kept.max()) >= hash_map.shape[0]):
        raise ValueError(f"labels must be token ids in [0, {hash_map.shape[0]}) or {IGNORE_INDEX}, "
                         f"got values in [{int(kept.min())}, {int(kept.max())}]")
    targets = hash_map[kept]                                                   # (n, H)
    if targets.numel() and bool(targets.eq(0).all(-1).any()):
        bad = kept[targets.eq(0).all(-1)][:5].tolist()
        raise ValueError(f"labels {bad} have no registered signature (all-zero row of hash_map); mask them with "
                         f"{IGNORE_INDEX} or register the tokens")
    logits = hash_logits.reshape(-1, num_hashes, num_buckets)[keep]            # (n, H, B)
    per_pair = nn.functional.cross_entropy(
        logits.reshape(-1, num_buckets).float(), targets.reshape(-1), reduction="sum"
    )
    return per_pair / keep.sum()


def iter_vocab_scores(
    log_probs: torch.Tensor, hash_map: torch.Tensor, chunk_size: int = DEFAULT_CHUNK_SIZE
) -> Iterator[tuple[int, torch.Tensor]]:
    """Stream ``log P_train(v) = sum_k log_probs[n, k, hash_map[v, k]]`` over the vocabulary in chunks.

    ``log_probs`` has shape ``(N, H, B)`` (rows are tokens). Yields ``(start, scores)`` with ``scores`` of shape
    ``(N, min(chunk_size, V - start))`` for ids ``start, start+1, ...``; ids with an all-zero signature (padding,
    unregistered) score ``-inf``. Peak memory is ``N x chunk_size`` values.
    """
    if log_probs.dim() != 3:
        raise ValueError(f"log_probs must have shape (N, H, B), got {tuple(log_probs.shape)}")
    check_int("chunk_size", chunk_size, minimum=1)
    num_hashes = log_probs.shape[1]
    _check_hash_map(hash_map, num_hashes, log_probs.shape[2])
    hash_map = hash_map.to(log_probs.device)
    # (H, B, N): bucket-major, so that each id's score is a gather of whole contiguous rows of N values (an
    # embedding lookup), which is much faster than gathering columns of an (N, B) matrix.
    per_hash = log_probs.permute(1, 2, 0).contiguous()
    for start in range(0, hash_map.shape[0], chunk_size):
        signatures = hash_map[start : start + chunk_size]                      # (C, H)
        scores = F.embedding(signatures[:, 0], per_hash[0])                    # a fresh (C, N) tensor
        for k in range(1, num_hashes):
            scores.add_(F.embedding(signatures[:, k], per_hash[k]))
        scores.masked_fill_(signatures.eq(0).all(-1, keepdim=True), -math.inf)
        yield start, scores.T                                                  # (N, C) view


@dataclass(frozen=True)
class VocabScores:
    """Statistics of ``P_inf`` over the valid vocabulary, for each of ``N`` positions (see :func:`score_vocab`).

    Attributes
    ----------
    log_normalizer:
        ``(N,)``: ``logsumexp_{v in V_actl} log P_train(v)``, the log of the training probability mass that lands
        on registered signatures (``<= 0``; the rest "leaks" to unassigned signatures, section 3.4).
    target_log_probs:
        ``(N,)`` ``log P_inf(target)``, or ``None`` when no targets were given.
    top_log_probs, top_ids:
        ``(N, k)`` the ``k`` most likely ids under ``P_inf`` and their log-probabilities (descending), or ``None``.
    """

    log_normalizer: torch.Tensor
    target_log_probs: torch.Tensor | None
    top_log_probs: torch.Tensor | None
    top_ids: torch.Tensor | None


def _flatten_rows(log_probs: torch.Tensor) -> tuple[torch.Tensor, tuple[int, ...]]:
    if log_probs.dim() < 2:
        raise ValueError(f"log_probs must have shape (..., H, B), got {tuple(log_probs.shape)}")
    lead = tuple(log_probs.shape[:-2])
    return log_probs.reshape(-1, *log_probs.shape[-2:]), lead


def _require_valid_vocab(hash_map: torch.Tensor) -> None:
    if not bool(hash_map.ne(0).any()):
        raise ValueError("hash_map has no registered signature (all rows are zero); install a signature table "
                         "with model.set_signature_table(registry.table())")


def score_vocab(
    log_probs: torch.Tensor,
    hash_map: torch.Tensor,
    *,
    targets: torch.Tensor | None = None,
    top_k: int = 0,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
) -> VocabScores:
    """Renormalised inference scores (``P_inf``, section 3.4) without materialising ``tokens x V``.

    Parameters
    ----------
    log_probs:
        ``(..., H, B)`` per-hash log-probabilities (:func:`hash_log_probs`).
    hash_map:
        ``(V, H)`` signature table; all-zero rows are excluded from the valid vocabulary.
    targets:
        Optional ids of shape ``(...)``; each must have a registered signature.
    top_k:
        If positive, also return the ``top_k`` best ids (``top_k`` may exceed the number of valid ids: the extra
        slots hold ``-inf`` and arbitrary invalid ids).
    chunk_size:
        Vocabulary ids scored at once; any positive value gives the same result up to float rounding.
    """
    rows, lead = _flatten_rows(log_probs)
    _require_valid_vocab(hash_map)
    check_int("top_k", top_k, minimum=0)
    n = rows.shape[0]
    log_norm = torch.full((n,), -math.inf, dtype=rows.dtype, device=rows.device)
    k = min(top_k, hash_map.shape[0])
    best_vals = torch.empty((n, 0), dtype=rows.dtype, device=rows.device)
    best_ids = torch.empty((n, 0), dtype=torch.long, device=rows.device)
    for start, scores in iter_vocab_scores(rows, hash_map, chunk_size):
        log_norm = torch.logaddexp(log_norm, torch.logsumexp(scores, dim=-1))
        if k:
            ids = torch.arange(start, start + scores.shape[1], device=rows.device).expand(n, -1)
            vals = torch.cat([best_vals, scores], dim=1)
            cand = torch.cat([best_ids, ids], dim=1)
            best_vals, pos = vals.topk(min(k, vals.shape[1]), dim=1)
            best_ids = cand.gather(1, pos)

    target_lp = None
    if targets is not None:
        if targets.shape != lead:
            raise ValueError(f"targets have shape {tuple(targets.shape)}, expected {lead}")
        flat = targets.reshape(-1).to(rows.device)
        if flat.numel() and (int(flat.min()) < 0 or int(flat.max()) >= hash_map.shape[0]):
            raise ValueError(f"targets must be ids in [0, {hash_map.shape[0]}), got values in "
                             f"[{int(flat.min())}, {int(flat.max())}]")
        signatures = hash_map.to(rows.device)[flat]                             # (N, H)
        if bool(signatures.eq(0).all(-1).any()):
            bad = flat[signatures.eq(0).all(-1)][:5].tolist()
            raise ValueError(f"targets {bad} have no registered signature, so P_inf gives them probability 0")
        target_train = rows.gather(2, signatures.unsqueeze(-1)).squeeze(-1).sum(-1)
        target_lp = (target_train - log_norm).reshape(lead)

    top_vals = (best_vals - log_norm.unsqueeze(1)).reshape(*lead, k) if k else None
    top_ids = best_ids.reshape(*lead, k) if k else None
    return VocabScores(log_norm.reshape(lead), target_lp, top_vals, top_ids)


def vocab_log_probs(
    log_probs: torch.Tensor, hash_map: torch.Tensor, *, chunk_size: int = DEFAULT_CHUNK_SIZE
) -> torch.Tensor:
    """The full ``log P_inf`` distribution, shape ``(..., V)`` (``-inf`` for unregistered ids).

    This *does* materialise ``tokens x V``: use it for one decoding step or small vocabularies (plots, tests);
    use :func:`score_vocab` or :func:`sample_vocab` for long inputs.
    """
    rows, lead = _flatten_rows(log_probs)
    _require_valid_vocab(hash_map)
    full = torch.cat([scores for _, scores in iter_vocab_scores(rows, hash_map, chunk_size)], dim=1)
    return torch.log_softmax(full, dim=-1).reshape(*lead, hash_map.shape[0])


def _gumbel(shape: tuple[int, ...], like: torch.Tensor, generator: torch.Generator | None) -> torch.Tensor:
    exp = torch.empty(shape, dtype=like.dtype, device=like.device).exponential_(generator=generator)
    return -exp.log()


def sample_vocab(
    log_probs: torch.Tensor,
    hash_map: torch.Tensor,
    *,
    temperature: float = 1.0,
    top_k: int = 0,
    generator: torch.Generator | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
) -> torch.Tensor:
    """Draw one id per position from ``P_inf`` (optionally top-k truncated, with temperature); shape ``(...)``.

    Exact sampling from ``softmax(log P_inf / temperature)`` by the Gumbel-max trick, streamed over vocabulary
    chunks (or over the ``top_k`` candidates from :func:`score_vocab`). Unregistered ids have score ``-inf`` and
    are never drawn. The same ``generator`` state and ``chunk_size`` give the same draws.
    """
    rows, lead = _flatten_rows(log_probs)
    _require_valid_vocab(hash_map)
    if not isinstance(temperature, (int, float)) or isinstance(temperature, bool) or not temperature > 0:
        raise ValueError(f"temperature must be a positive number, got {temperature!r}; use greedy decoding for 0")
    check_int("top_k", top_k, minimum=0)
    if top_k:
        top = score_vocab(rows, hash_map, top_k=top_k, chunk_size=chunk_size)
        perturbed = top.top_log_probs / temperature + _gumbel(tuple(top.top_log_probs.shape), rows, generator)
        return top.top_ids.gather(1, perturbed.argmax(1, keepdim=True)).reshape(lead)
    n = rows.shape[0]
    best = torch.full((n,), -math.inf, dtype=rows.dtype, device=rows.device)
    best_ids = torch.zeros(n, dtype=torch.long, device=rows.device)
    for start, scores in iter_vocab_scores(rows, hash_map, chunk_size):
        perturbed = scores / temperature + _gumbel(tuple(scores.shape), rows, generator)
        vals, pos = perturbed.max(dim=1)
        better = vals > best
        best = torch.where(better, vals, best)
        best_ids = torch.where(better, pos + start, best_ids)
    return best_ids.reshape(lead)


@torch.no_grad()
def generate(
    model: "MultiHashFormerForCausalLM",
    input_ids: torch.Tensor,
    max_new_tokens: int,
    *,
    do_sample: bool = False,
    temperature: float = 1.0,
    top_k: int = 0,
    generator: torch.Generator | None = None,
    eos_token_id: int | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
) -> torch.Tensor:
    """Autoregressive decoding over the valid vocabulary: only registered signatures can be emitted.

    ``input_ids`` is a ``(batch, seq)`` prompt without padding. Greedy (``do_sample=False``) takes the ``P_inf``
    argmax; sampling draws from ``P_inf`` with ``temperature`` and optional ``top_k`` using ``generator``.
    With ``eos_token_id``, a sequence that emitted it keeps emitting it. Returns ``(batch, seq + max_new_tokens)``.
    Uses the backbone's KV cache, so each step runs the backbone on one new position.
    """
    if not isinstance(input_ids, torch.Tensor) or input_ids.dim() != 2 or input_ids.shape[1] == 0:
        raise ValueError("input_ids must be a non-empty (batch, seq) tensor of token ids (no padding)")
    check_int("max_new_tokens", max_new_tokens, minimum=0)
    hash_map = model.hash_map
    _require_valid_vocab(hash_map)
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
        for _ in range(max_new_tokens):
            out = model(input_ids=step_ids, past_key_values=past, use_cache=True, logits_to_keep=1)
            past = out.past_key_values
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
    model: "MultiHashFormerForCausalLM",
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor | None = None,
    *,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    token_chunk_size: int = 512,
) -> ValidVocabNLL:
    """Next-token NLL of ``input_ids`` under ``P_inf`` (renormalised over the valid vocabulary).

    Position ``t`` predicts token ``t + 1``; a pair is scored only when both positions have ``attention_mask`` 1
    (right-padded batches: the first token of each sequence is context, never a target). The backbone runs
    once; the hash decoder and the vocabulary scoring then run over ``token_chunk_size`` positions at a time, so
    memory stays at ``token_chunk_size x (H*B + chunk_size)`` values beyond the backbone's activations.
    """
    if not isinstance(input_ids, torch.Tensor) or input_ids.dim() != 2:
        raise ValueError("input_ids must be a (batch, seq) tensor of token ids")
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
