"""Ranking ids from m hash distributions: exhaustive scoring and Superbloom's certified beam search (§2.5, Alg. 1).

At one output position the model gives ``m`` distributions ``p_j`` over the tokens of map ``j``; an id ``s`` scores
``γ(s) = Σ_j log p_j(η_j(s))``. :func:`exhaustive_topk` scores all ``N`` ids (in chunks, so memory stays bounded).
:func:`beam_topk` is Algorithm 1: with beam width ``b``, the candidates are the ids whose token is among the ``b``
most likely of some ``p_j`` (read from the inverse maps), and every other id scores at most
``Σ_j log p_j^{(b+1)}``, the sum of each distribution's (b+1)-th largest value. (The paper states the bound with the
b-th largest value, which is also valid but looser; the (b+1)-th holds because an id outside the candidates has, in
every map, a token ranked b+1 or lower.) When the k-th best candidate reaches that bound, the top k are exact: a
**certificate**. Otherwise the beam is doubled and the search repeated, up to ``max_iterations`` (approximate mode);
a beam that covers a whole map scores everything and is exact. Every answer reports whether it is certified, how many
candidate scorings it took, and its final beam.

Both functions are batched over positions and run on the tensors' device (CPU or GPU).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from hashlib_core.hashing.bloom import BloomHashMaps

__all__ = ["TopK", "check_log_probs", "score_ids", "exhaustive_topk", "beam_topk"]

#: ids scored at once by :func:`exhaustive_topk` (bounds its temporaries to batch x chunk floats)
EXHAUSTIVE_CHUNK = 1 << 16
#: :func:`beam_topk` ranks at least this many of each distribution's best tokens at once, so that the widenings of
#: small beams (1, 2, 4, ... 32) reuse one ranking instead of running ``topk`` over all T tokens each time
RANK_AHEAD = 64


@dataclass
class TopK:
    """The top-k ids of each position, best first, with how they were found."""

    ids: torch.Tensor          # (batch, k) int64
    scores: torch.Tensor       # (batch, k) γ of each id
    certified: torch.Tensor    # (batch,) bool: the answer is the exact top k
    scored: torch.Tensor       # (batch,) int64: candidate scorings done (all iterations)
    beam: torch.Tensor         # (batch,) int64: final beam width (the number of tokens per map for exhaustive)
    iterations: torch.Tensor   # (batch,) int64


#: how far above 0 a log-probability may read from rounding (log of probabilities normalised in low precision)
_LOG_PROB_SLACK = 1e-3


def check_log_probs(log_probs: torch.Tensor, maps: BloomHashMaps, k: int) -> torch.Tensor:
    """``(batch, m, T)`` float scores for ``maps`` and a valid ``k``, else a clear error."""
    if not isinstance(log_probs, torch.Tensor) or not log_probs.is_floating_point():
        raise TypeError("log_probs must be a float tensor of shape (batch, m, tokens per map); take log_softmax of "
                        "each map's logits")
    shape = (maps.num_hashes, maps.tokens_per_map)
    if log_probs.dim() != 3 or tuple(log_probs.shape[1:]) != shape:
        raise ValueError(f"log_probs must have shape (batch, {shape[0]}, {shape[1]}) for these maps "
                         f"(m = {shape[0]}, T = {shape[1]}), got {tuple(log_probs.shape)}")
    if log_probs.shape[0] == 0:
        raise ValueError("log_probs has no position (batch size 0): give at least one distribution per map")
    peak = log_probs.amax()                                           # amax propagates NaN: one pass, no mask
    if torch.isnan(peak):
        raise ValueError("log_probs contains NaN: check the model's outputs (a NaN score cannot be ranked)")
    if peak > _LOG_PROB_SLACK:
        # +inf is no log-probability (those are <= 0), and +inf + -inf = NaN would rank first and be "certified";
        # a finite positive value means logits were passed
        what = "+inf" if peak == float("inf") else f"{float(peak):.3g}"
        raise ValueError(f"log_probs contains {what}, and a log-probability is at most 0: pass log_softmax of each "
                         "map's logits, not the logits or probabilities")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= maps.num_ids:
        raise ValueError(f"k must be an int in [1, {maps.num_ids}] (the number of ids), got {k!r}")
    return log_probs


def _tokens_of(maps: BloomHashMaps, ids: torch.Tensor) -> torch.Tensor:
    """The ``(batch, m, C)`` local tokens of ``ids`` ``(batch, C)`` (ids ``< 0`` read id 0's): one row gather of the
    contiguous ``(N, m)`` table (much faster than indexing its transpose)."""
    batch, count = ids.shape
    rows = maps.table.to(ids.device).index_select(0, ids.clamp(min=0).reshape(-1))
    return rows.reshape(batch, count, maps.num_hashes).permute(0, 2, 1)


def score_ids(log_probs: torch.Tensor, maps: BloomHashMaps, ids: torch.Tensor,
              tokens: torch.Tensor | None = None) -> torch.Tensor:
    """``γ`` of ``ids`` ``(batch, C)`` (any id ``< 0`` scores ``-inf``); ``tokens``: their ``(batch, m, C)`` local
    tokens when already looked up."""
    if tokens is None:
        tokens = _tokens_of(maps, ids)
    return log_probs.gather(2, tokens).sum(dim=1).masked_fill_(ids < 0, float("-inf"))


def exhaustive_topk(log_probs: torch.Tensor, maps: BloomHashMaps, k: int) -> TopK:
    """Score every id and keep the top ``k`` (exact by construction)."""
    log_probs = check_log_probs(log_probs, maps, k)
    batch, device = log_probs.shape[0], log_probs.device
    best_scores = torch.full((batch, 0), float("-inf"), device=device, dtype=log_probs.dtype)
    best_ids = torch.zeros((batch, 0), dtype=torch.long, device=device)
    table = maps.table.to(device)
    for start in range(0, maps.num_ids, EXHAUSTIVE_CHUNK):
        stop = min(start + EXHAUSTIVE_CHUNK, maps.num_ids)
        chunk = table[start:stop]                                            # the same ids for every row
        scores = sum(log_probs[:, j].index_select(1, chunk[:, j]) for j in range(maps.num_hashes))
        ids = torch.arange(start, stop, device=device).expand(batch, -1)
        scores = torch.cat([best_scores, scores], dim=1)
        pool = torch.cat([best_ids, ids], dim=1)
        best_scores, where = scores.topk(min(k, scores.shape[1]), dim=1)
        best_ids = pool.gather(1, where)
    full = torch.full((batch,), maps.num_ids, dtype=torch.long, device=device)
    return TopK(best_ids, best_scores, torch.ones(batch, dtype=torch.bool, device=device), full,
                torch.full((batch,), maps.tokens_per_map, dtype=torch.long, device=device),
                torch.ones(batch, dtype=torch.long, device=device))


def _beam_step(log_probs: torch.Tensor, maps: BloomHashMaps, k: int, beam: int,
               ranked: tuple[torch.Tensor, torch.Tensor]
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """One iteration of Algorithm 1 at beam ``beam < T`` for every row: (ids, scores, certified, distinct scored).

    ``ranked``: the rows' ``L > beam`` largest values and their tokens, best first (``topk``, linear in T, instead
    of a sort); the first ``beam`` tokens give the candidates, value ``beam`` the bound.
    """
    values, top = ranked                                                     # (batch, m, L), L >= b + 1
    batch, m, _ = values.shape
    top = top[:, :, :beam]
    tokens_per_map = maps.tokens_per_map
    # which tokens each map proposed; the duplicate check below reads it for every map but the last
    in_top = torch.zeros((batch, m - 1, tokens_per_map), dtype=torch.bool, device=top.device)
    in_top.scatter_(2, top[:, : m - 1], True)
    maps_index = torch.arange(m, device=top.device)
    flat = (top + (maps_index * tokens_per_map)[None, :, None]).reshape(-1)     # row of each (map, token)
    inverse = maps.inverse.to(top.device).reshape(m * tokens_per_map, maps.alpha)
    candidates = inverse.index_select(0, flat).reshape(batch, -1)             # (batch, m b α)
    blocks = maps.inverse_tokens(top.device).reshape(m * tokens_per_map, maps.alpha * m)
    # (batch, m, C): contiguous reads of the blocks, then one transposing copy (gathers with a contiguous index are
    # several times faster than with a strided one, and two gathers read it)
    tokens = blocks.index_select(0, flat).reshape(batch, -1, m).transpose(1, 2).contiguous()
    # a candidate proposed by map j is a duplicate when an earlier map (< j) proposed it too: its token there is
    # among that map's top b (map 0's block has no earlier map; only the earlier maps' tokens are read)
    block = beam * maps.alpha
    duplicate = torch.zeros_like(candidates, dtype=torch.bool)
    for j in range(1, m):
        part = slice(j * block, (j + 1) * block)
        duplicate[:, part] = in_top[:, :j].gather(2, tokens[:, :j, part]).any(dim=1)
    candidates.masked_fill_(duplicate, -1)
    scores = score_ids(log_probs, maps, candidates, tokens)
    take = min(k, scores.shape[1])
    best, where = scores.topk(take, dim=1)
    ids = candidates.gather(1, where)
    if take < k:                                                              # fewer candidates than k
        pad = k - take
        best = torch.cat([best, best.new_full((batch, pad), float("-inf"))], dim=1)
        ids = torch.cat([ids, ids.new_full((batch, pad), -1)], dim=1)
    bound = values[:, :, beam].sum(dim=1)                                    # every unscored id scores <= bound
    kth = best[:, k - 1]
    certified = (kth >= bound) & torch.isfinite(kth)
    return ids, best, certified, (candidates >= 0).sum(dim=1)


def beam_topk(log_probs: torch.Tensor, maps: BloomHashMaps, k: int, beam: int | None = None,
              max_iterations: int | None = None, growth: int = 2) -> TopK:
    """Algorithm 1: the top ``k`` ids by beam search, exact where ``certified``.

    ``beam`` starts at ``k`` by default (Appendix B: B = k suffices); an uncertified row is searched again with
    the beam multiplied by ``growth``, until it is certified or ``max_iterations`` searches were made (``None``: no
    limit, so every answer is exact: a beam covering a whole map falls back to exhaustive scoring).
    """
    log_probs = check_log_probs(log_probs, maps, k)
    beam = k if beam is None else beam
    if isinstance(beam, bool) or not isinstance(beam, int) or beam < 1:
        raise ValueError(f"beam must be an int >= 1, got {beam!r}")
    if max_iterations is not None and (not isinstance(max_iterations, int) or max_iterations < 1):
        raise ValueError(f"max_iterations must be None or an int >= 1, got {max_iterations!r}")
    if isinstance(growth, bool) or not isinstance(growth, int) or growth < 2:
        raise ValueError(f"growth must be an int >= 2 (the beam must widen), got {growth!r}")
    batch, device, tokens = log_probs.shape[0], log_probs.device, maps.tokens_per_map
    out = TopK(torch.full((batch, k), -1, dtype=torch.long, device=device),
               torch.full((batch, k), float("-inf"), dtype=log_probs.dtype, device=device),
               torch.zeros(batch, dtype=torch.bool, device=device), torch.zeros(batch, dtype=torch.long, device=device),
               torch.zeros(batch, dtype=torch.long, device=device), torch.zeros(batch, dtype=torch.long, device=device))
    todo = torch.arange(batch, device=device)
    iteration = 0
    rows = log_probs                                                          # the rows of todo (no copy at first)
    ranked: tuple[torch.Tensor, torch.Tensor] | None = None                  # their top-L values and tokens
    while todo.numel():
        iteration += 1
        if beam >= tokens:                                                     # the beam covers every token: score all
            exact = exhaustive_topk(rows, maps, k)
            out.ids[todo], out.scores[todo], out.certified[todo] = exact.ids, exact.scores, True
            out.scored[todo] += maps.num_ids
            out.beam[todo], out.iterations[todo] = tokens, iteration
            break
        if ranked is None or ranked[0].shape[2] <= beam:
            # one topk serves the next widenings too: it ranks at least RANK_AHEAD tokens (cost grows with L)
            ranked = rows.topk(min(tokens, max(beam + 1, RANK_AHEAD)), dim=2)
        ids, scores, certified, scored = _beam_step(rows, maps, k, beam, ranked)
        out.ids[todo], out.scores[todo], out.certified[todo] = ids, scores, certified
        out.scored[todo] += scored
        out.beam[todo], out.iterations[todo] = beam, iteration
        if max_iterations is not None and iteration >= max_iterations:
            break
        keep = (~certified).nonzero().squeeze(1)
        if keep.numel() < todo.numel():          # the rows still searched, copied once (contiguous reads after)
            todo, rows = todo[keep], rows.index_select(0, keep)
            ranked = (ranked[0].index_select(0, keep), ranked[1].index_select(0, keep))
        beam *= growth
    return out
