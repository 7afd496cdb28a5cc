"""Scoring, sampling and training loss for models that predict a token as H bucket distributions.

A multi-hash output layer gives, at each position, ``H`` distributions ``p^(1..H)`` over ``B`` buckets, and every
vocabulary entry ``v`` has a signature ``(H_1(v), ..., H_H(v))`` (a row of the ``V x H`` table ``hash_map``; an
all-zero row is padding or unregistered). MultiHashFormer (sections 3.3-3.4) and Superbloom (section 2.5, the score
``gamma(s)``) both score a token by the sum of its signature's log-probabilities.

**Training** (MultiHashFormer section 3.4, ``P_train``): ``log P_train(w) = sum_k log p^(k)[H_k(w)]``; the loss is
the sum over the ``H`` coordinates of the cross-entropy, averaged over the (non-ignored) tokens
(:func:`multihash_loss`). This is what MultiHashFormer's released trainer (``CustomHashTrainer``) computes: a CE
over all (token, hash) pairs normalised by the token count.

**Inference** (section 3.4, ``P_inf``): the same product renormalised over the valid vocabulary ``V_actl``
(ids with a registered, non-zero signature)::

    log P_inf(w) = sum_k log p^(k)[H_k(w)] - logsumexp_{w' in V_actl} sum_k log p^(k)[H_k(w')]

MultiHashFormer's released code materialises ``sum_k log p^(k)[hash_map[v, k]]`` as a float32 tensor of shape
``batch x seq x V``, and includes the all-zero (padding) rows of ``hash_map`` in the softmax. Here the vocabulary is
streamed in chunks (:func:`iter_vocab_scores`): the log-normaliser is an online ``logaddexp``, top-k is merged
chunk by chunk, and sampling uses the Gumbel-max trick per chunk, so memory is ``tokens x chunk_size`` rather than
``tokens x V``; ids with an all-zero signature get probability exactly 0 and are never emitted.

MultiHashFormer's cascaded decoder and its generation loop are in :mod:`hashlib_core.papers.multihashformer.decoding`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterator

import torch
from torch import nn

from hashlib_core.hashing.base import check_int

__all__ = [
    "IGNORE_INDEX",
    "auto_chunk_size",
    "row_tile_size",
    "scoring_layout",
    "hash_log_probs",
    "multihash_loss",
    "iter_vocab_scores",
    "VocabScores",
    "score_vocab",
    "vocab_log_probs",
    "sample_vocab",
]

#: Label value that the loss and the perplexity skip (the Hugging Face convention).
IGNORE_INDEX = -100
#: Scores held at once when the chunking is left to the library (``chunk_size=None``). On CPU at most 4 MiB of
#: float32 in tiles of :data:`CPU_ROW_TILE` positions, so that a tile's ``H x B`` log-probabilities and its scores
#: stay in cache while the ``H`` gathers add into them (for 2,048 positions and V = 32,768 this is 2-4x faster than
#: scoring all positions against fixed 4,096-id chunks; tiles of 8-16 rows measured best, 64 rows 2x slower; see
#: :mod:`hashlib_core.benchmarks.multihash_decoding`). On an accelerator 256 MiB and no row tiling: fewer, larger
#: kernels win there.
CPU_CHUNK_ELEMENTS = 1 << 20
CPU_ROW_TILE = 16
ACCELERATOR_CHUNK_ELEMENTS = 1 << 26
#: The smallest automatic chunk (per-chunk overhead dominates below it).
MIN_AUTO_CHUNK = 256
#: Default of every ``chunk_size`` argument: ``None`` lets :func:`scoring_layout` choose the tiles and chunks.
DEFAULT_CHUNK_SIZE = None


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


def row_tile_size(num_rows: int, device: torch.device | str = "cpu") -> int:
    """Positions scored together when the chunking is left to the library: :data:`CPU_ROW_TILE` on CPU, all of
    them on an accelerator."""
    check_int("num_rows", num_rows, minimum=0)
    return max(1, min(num_rows, CPU_ROW_TILE) if torch.device(device).type == "cpu" else num_rows)


def auto_chunk_size(num_rows: int, vocab_size: int, device: torch.device | str = "cpu") -> int:
    """Vocabulary ids per chunk for a tile of ``num_rows`` positions when the caller gives no ``chunk_size``.

    ``num_rows * chunk`` stays near :data:`CPU_CHUNK_ELEMENTS` on CPU (cache-sized) or
    :data:`ACCELERATOR_CHUNK_ELEMENTS` elsewhere, never below :data:`MIN_AUTO_CHUNK` ids nor above ``vocab_size``.
    Any chunk size gives the same scores up to float rounding; only speed and peak memory change.
    """
    check_int("num_rows", num_rows, minimum=0)
    check_int("vocab_size", vocab_size, minimum=1)
    budget = CPU_CHUNK_ELEMENTS if torch.device(device).type == "cpu" else ACCELERATOR_CHUNK_ELEMENTS
    return max(1, min(vocab_size, max(MIN_AUTO_CHUNK, budget // max(num_rows, 1))))


def scoring_layout(num_rows: int, vocab_size: int, chunk_size: int | None = DEFAULT_CHUNK_SIZE,
                   device: torch.device | str = "cpu") -> tuple[int, int]:
    """``(positions per tile, vocabulary ids per chunk of a full tile)`` that :func:`score_vocab` and
    :func:`sample_vocab` use for ``num_rows`` positions: one tile of every row against ``chunk_size`` ids when the
    caller fixes ``chunk_size``, else :func:`row_tile_size` rows against :func:`auto_chunk_size` ids (a shorter last
    tile gets the chunk sized for its own rows)."""
    if chunk_size is not None:
        return max(1, num_rows), chunk_size
    tile = row_tile_size(num_rows, device)
    return tile, auto_chunk_size(tile, max(1, vocab_size), device)


def _row_tiles(rows: torch.Tensor, vocab_size: int, chunk_size: int | None) -> Iterator[torch.Tensor]:
    """The tiles of ``rows`` that are scored together (see :func:`scoring_layout`)."""
    tile, _ = scoring_layout(rows.shape[0], vocab_size, chunk_size, rows.device)
    for start in range(0, rows.shape[0], tile):
        yield rows[start : start + tile]


def iter_vocab_scores(
    log_probs: torch.Tensor, hash_map: torch.Tensor, chunk_size: int | None = DEFAULT_CHUNK_SIZE
) -> Iterator[tuple[int, torch.Tensor]]:
    """Stream ``log P_train(v) = sum_k log_probs[n, k, hash_map[v, k]]`` over the vocabulary in chunks.

    ``log_probs`` has shape ``(N, H, B)`` (rows are positions). Yields ``(start, scores)`` with ``scores`` of shape
    ``(N, min(chunk_size, V - start))`` for ids ``start, start+1, ...``; ids with an all-zero signature (padding,
    unregistered) score ``-inf``. Peak memory is ``N x chunk_size`` values; ``chunk_size=None`` picks
    :func:`auto_chunk_size` for ``N`` and the device. (:func:`score_vocab` and :func:`sample_vocab` also tile the
    rows on CPU; this function scores all ``N`` rows of each chunk together.)
    """
    if log_probs.dim() != 3:
        raise ValueError(f"log_probs must have shape (N, H, B), got {tuple(log_probs.shape)}")
    table, unregistered = _prepared(log_probs, hash_map, chunk_size)
    yield from _stream_scores(log_probs, table, unregistered, _tile_chunk(log_probs, len(table), chunk_size))


class _Workspace:
    """Buffers reused by every tile and chunk of one scoring call, so that streaming allocates nothing per chunk
    (fresh multi-MiB tensors per chunk cost page faults that can dominate on CPU)."""

    def __init__(self) -> None:
        self._buffers: dict[str, torch.Tensor] = {}

    def get(self, name: str, shape: tuple[int, ...], like: torch.Tensor) -> torch.Tensor:
        numel = math.prod(shape)
        buf = self._buffers.get(name)
        if buf is None or buf.numel() < numel or buf.dtype != like.dtype or buf.device != like.device:
            buf = self._buffers[name] = torch.empty(numel, dtype=like.dtype, device=like.device)
        return buf[:numel].view(shape)


def _stream_scores(log_probs: torch.Tensor, hash_map: torch.Tensor, unregistered: torch.Tensor, chunk_size: int,
                   workspace: _Workspace | None = None) -> Iterator[tuple[int, torch.Tensor]]:
    """:func:`iter_vocab_scores` without the checks: ``hash_map`` on the device of ``log_probs``, ``unregistered``
    its precomputed all-zero-row mask ``(V,)``. With a ``workspace`` the yielded scores are a reused buffer: use
    (or modify) them before asking for the next chunk."""
    # Each id's score gathers one column per hash from the contiguous (N, B) matrix of that hash: with N a tile
    # of a few positions the rows gathered from stay in cache (hash-major copy: whole rows of B values move).
    n, num_hashes, num_buckets = log_probs.shape
    if workspace is None:
        per_hash = log_probs.transpose(0, 1).contiguous()                      # (H, N, B)
    else:
        per_hash = workspace.get("per_hash", (num_hashes, n, num_buckets), log_probs)
        per_hash.copy_(log_probs.transpose(0, 1))
    for start in range(0, hash_map.shape[0], chunk_size):
        signatures = hash_map[start : start + chunk_size]                      # (C, H)
        if workspace is None:
            scores = per_hash[0].index_select(1, signatures[:, 0])             # a fresh (N, C) tensor
            for k in range(1, num_hashes):
                scores.add_(per_hash[k].index_select(1, signatures[:, k]))
        else:
            shape = (n, signatures.shape[0])
            scores = torch.index_select(per_hash[0], 1, signatures[:, 0],
                                        out=workspace.get("scores", shape, log_probs))
            gathered = workspace.get("gathered", shape, log_probs)
            for k in range(1, num_hashes):
                scores.add_(torch.index_select(per_hash[k], 1, signatures[:, k], out=gathered))
        scores.masked_fill_(unregistered[start : start + chunk_size], -math.inf)
        yield start, scores


def _logsumexp_(scores: torch.Tensor) -> torch.Tensor:
    """``logsumexp`` over the last dimension of a 2-D tensor, overwriting it (no temporary of its size)."""
    peak = scores.amax(dim=-1, keepdim=True)
    peak = torch.where(torch.isfinite(peak), peak, torch.zeros_like(peak))   # rows of -inf stay -inf
    return scores.sub_(peak).exp_().sum(dim=-1).log_().add_(peak[:, 0])


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


def require_valid_vocab(hash_map: torch.Tensor) -> None:
    if not bool(hash_map.ne(0).any()):
        raise ValueError("hash_map has no registered signature (all rows are zero); install a signature table "
                         "with model.set_signature_table(registry.table())")


def _prepared(rows: torch.Tensor, hash_map: torch.Tensor, chunk_size: int | None
              ) -> tuple[torch.Tensor, torch.Tensor]:
    """Check ``hash_map`` against ``(N, H, B)`` rows, and ``chunk_size``, once; return ``hash_map`` on the rows'
    device and its unregistered (all-zero) mask ``(V,)``."""
    _check_hash_map(hash_map, rows.shape[1], rows.shape[2])
    if chunk_size is not None:
        check_int("chunk_size", chunk_size, minimum=1)
    hash_map = hash_map.to(rows.device)
    return hash_map, hash_map.eq(0).all(-1)


def _tile_chunk(rows: torch.Tensor, vocab_size: int, chunk_size: int | None) -> int:
    return chunk_size if chunk_size is not None else auto_chunk_size(rows.shape[0], max(1, vocab_size), rows.device)


def _score_rows(rows: torch.Tensor, hash_map: torch.Tensor, unregistered: torch.Tensor, k: int,
                chunk_size: int | None, workspace: _Workspace) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Online log-normaliser and top-``k`` (values, ids) of ``P_train`` for one tile of rows ``(n, H, B)``."""
    n = rows.shape[0]
    log_norm = torch.full((n,), -math.inf, dtype=rows.dtype, device=rows.device)
    best_vals = torch.empty((n, 0), dtype=rows.dtype, device=rows.device)
    best_ids = torch.empty((n, 0), dtype=torch.long, device=rows.device)
    chunks = _stream_scores(rows, hash_map, unregistered, _tile_chunk(rows, len(hash_map), chunk_size), workspace)
    for start, scores in chunks:
        if k:
            ids = torch.arange(start, start + scores.shape[1], device=rows.device).expand(n, -1)
            vals = torch.cat([best_vals, scores], dim=1)
            cand = torch.cat([best_ids, ids], dim=1)
            best_vals, pos = vals.topk(min(k, vals.shape[1]), dim=1)
            best_ids = cand.gather(1, pos)
        log_norm = torch.logaddexp(log_norm, _logsumexp_(scores))               # overwrites scores
    return log_norm, best_vals, best_ids


def score_vocab(
    log_probs: torch.Tensor,
    hash_map: torch.Tensor,
    *,
    targets: torch.Tensor | None = None,
    top_k: int = 0,
    chunk_size: int | None = DEFAULT_CHUNK_SIZE,
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
        Vocabulary ids scored at once; any positive value gives the same result up to float rounding; ``None``
        picks :func:`auto_chunk_size`.
    """
    rows, lead = _flatten_rows(log_probs)
    require_valid_vocab(hash_map)
    check_int("top_k", top_k, minimum=0)
    k = min(top_k, hash_map.shape[0])
    table, unregistered = _prepared(rows, hash_map, chunk_size)
    workspace = _Workspace()
    parts = [_score_rows(tile, table, unregistered, k, chunk_size, workspace)
             for tile in _row_tiles(rows, len(table), chunk_size)]
    if parts:
        log_norm, best_vals, best_ids = (torch.cat(list(t)) for t in zip(*parts))
    else:                                                                      # no positions at all
        log_norm, best_vals = rows.new_empty((0,)), rows.new_empty((0, k))
        best_ids = torch.empty((0, k), dtype=torch.long, device=rows.device)

    target_lp = None
    if targets is not None:
        if targets.shape != lead:
            raise ValueError(f"targets have shape {tuple(targets.shape)}, expected {lead}")
        flat = targets.reshape(-1).to(rows.device)
        if flat.numel() and (int(flat.min()) < 0 or int(flat.max()) >= hash_map.shape[0]):
            raise ValueError(f"targets must be ids in [0, {hash_map.shape[0]}), got values in "
                             f"[{int(flat.min())}, {int(flat.max())}]")
        signatures = table[flat]                                                # (N, H)
        if bool(signatures.eq(0).all(-1).any()):
            bad = flat[signatures.eq(0).all(-1)][:5].tolist()
            raise ValueError(f"targets {bad} have no registered signature, so P_inf gives them probability 0")
        target_train = rows.gather(2, signatures.unsqueeze(-1)).squeeze(-1).sum(-1)
        target_lp = (target_train - log_norm).reshape(lead)

    top_vals = (best_vals - log_norm.unsqueeze(1)).reshape(*lead, k) if k else None
    top_ids = best_ids.reshape(*lead, k) if k else None
    return VocabScores(log_norm.reshape(lead), target_lp, top_vals, top_ids)


def vocab_log_probs(
    log_probs: torch.Tensor, hash_map: torch.Tensor, *, chunk_size: int | None = DEFAULT_CHUNK_SIZE
) -> torch.Tensor:
    """The full ``log P_inf`` distribution, shape ``(..., V)`` (``-inf`` for unregistered ids).

    This *does* materialise ``tokens x V``: use it for one decoding step or small vocabularies (plots, tests);
    use :func:`score_vocab` or :func:`sample_vocab` for long inputs.
    """
    rows, lead = _flatten_rows(log_probs)
    require_valid_vocab(hash_map)
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
    chunk_size: int | None = DEFAULT_CHUNK_SIZE,
) -> torch.Tensor:
    """Draw one id per position from ``P_inf`` (optionally top-k truncated, with temperature); shape ``(...)``.

    Exact sampling from ``softmax(log P_inf / temperature)`` by the Gumbel-max trick, streamed over vocabulary
    chunks (or over the ``top_k`` candidates from :func:`score_vocab`). Unregistered ids have score ``-inf`` and
    are never drawn. The same ``generator`` state and ``chunk_size`` give the same draws (with ``chunk_size=None``:
    the same number of positions on the same kind of device).
    """
    rows, lead = _flatten_rows(log_probs)
    require_valid_vocab(hash_map)
    if not isinstance(temperature, (int, float)) or isinstance(temperature, bool) or not temperature > 0:
        raise ValueError(f"temperature must be a positive number, got {temperature!r}; use greedy decoding for 0")
    check_int("top_k", top_k, minimum=0)
    if top_k:
        top = score_vocab(rows, hash_map, top_k=top_k, chunk_size=chunk_size)
        perturbed = top.top_log_probs / temperature + _gumbel(tuple(top.top_log_probs.shape), rows, generator)
        return top.top_ids.gather(1, perturbed.argmax(1, keepdim=True)).reshape(lead)
    table, unregistered = _prepared(rows, hash_map, chunk_size)
    workspace = _Workspace()
    drawn = [_sample_rows(tile, table, unregistered, temperature, generator, chunk_size, workspace)
             for tile in _row_tiles(rows, len(table), chunk_size)]
    ids = torch.cat(drawn) if drawn else torch.empty(0, dtype=torch.long, device=rows.device)
    return ids.reshape(lead)


def _sample_rows(rows: torch.Tensor, hash_map: torch.Tensor, unregistered: torch.Tensor, temperature: float,
                 generator: torch.Generator | None, chunk_size: int | None, workspace: _Workspace) -> torch.Tensor:
    """Gumbel-max draw over the streamed vocabulary for one tile of rows ``(n, H, B)``."""
    n = rows.shape[0]
    best = torch.full((n,), -math.inf, dtype=rows.dtype, device=rows.device)
    best_ids = torch.zeros(n, dtype=torch.long, device=rows.device)
    chunks = _stream_scores(rows, hash_map, unregistered, _tile_chunk(rows, len(hash_map), chunk_size), workspace)
    for start, scores in chunks:
        perturbed = scores / temperature + _gumbel(tuple(scores.shape), rows, generator)
        vals, pos = perturbed.max(dim=1)
        better = vals > best
        best = torch.where(better, vals, best)
        best_ids = torch.where(better, pos + start, best_ids)
    return best_ids


