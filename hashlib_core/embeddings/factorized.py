"""Embedding modules of four more compression families, and how the catalogue sizes them to a budget
(:mod:`hashlib_core.embeddings.catalogue` registers them).

* :class:`ConcatHashEmbedding` -- compositional embeddings by concatenation (thomasahle/cce ``cce/ce.py``, the "CE"
  baseline of Tsang & Ahle 2023; the hashed form of Shi et al. 2020's concatenation): ``k`` hashes of the token,
  hash ``c`` picking a row of the ``c``-th ``d / k`` columns; the token's vector is the ``k`` slices side by side.
* :class:`TensorTrainEmbedding` -- TT-Rec (Yin et al., MLSys 2021; thomasahle/cce ``cce/tt.py``): the ``V x d``
  table as a train of three cores. Id ``i`` is split by the quotient-remainder rule into three digits base
  ``n = ceil(V^(1/3))`` (no two ids share all three), ``d`` into three factors ``d' = ceil(d^(1/3))`` (the output
  is cropped to ``d``), and ``e_i[a, b, c] = sum_{s, r} S[i_0, a, s] M[i_1, b, s, r] E[i_2, c, r]``.
* :class:`LowRankEmbedding` -- the factorised table of ALBERT (Lan et al. 2020, "factorized embedding
  parameterization"; thomasahle/cce ``cce/low_dimensional.py``): a ``V x r`` table and a ``r x d`` projection with
  its bias. No hashing: the control a reader compares hashing against at the same budget.
* :class:`HashedNetEmbedding` -- HashedNets (Chen et al., ICML 2015; thomasahle/cce ``cce/hashnet.py``): every
  entry ``(i, j)`` of the virtual ``V x d`` table is ``xi(i, j) w[h(i, j)]`` for one shared array ``w`` of the
  budget's size; ``h`` and the sign ``xi`` are universal hashes of ``i d + j`` (the paper's sign hash; cce omits it).

Initialisation: every family's vectors start with coordinates of standard deviation about 0.02, as the catalogue's
tables (BERT's initialiser) do. Randomness lives in buffers, so a saved state dict reloads the same hashes.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from hashlib_core.embeddings.codes import mmh3_codes
from hashlib_core.embeddings.compressed import _P31, _check_codes, _check_ids, _positive, universal_hash

__all__ = ["ConcatHashEmbedding", "TensorTrainEmbedding", "LowRankEmbedding", "HashedNetEmbedding", "tt_shape",
           "tt_rank", "tt_minimum", "low_rank", "low_rank_minimum", "CE_CHUNKS"]

#: hashes (and slices) of the concatenated compositional embedding: cce's default ``n_chunks``
CE_CHUNKS = 4
_STD = 0.02


class ConcatHashEmbedding(nn.Module):
    """Codes ``(..., k)`` (row ``codes[c]`` for slice ``c``) -> the ``k`` slices of ``d / k`` numbers, concatenated.
    The table is ``k`` blocks of ``R`` rows (one per slice). Parameters: ``R d``."""

    def __init__(self, num_rows: int, embedding_dim: int, num_chunks: int = CE_CHUNKS) -> None:
        super().__init__()
        owner = "ConcatHashEmbedding"
        self.num_rows = _positive(owner, "num_rows", num_rows)
        self.embedding_dim = _positive(owner, "embedding_dim", embedding_dim)
        self.num_chunks = _positive(owner, "num_chunks", num_chunks)
        if embedding_dim % num_chunks:
            raise ValueError(f"{owner}: k = {num_chunks} slices must divide d = {embedding_dim}")
        self.weight = nn.Parameter(torch.empty(num_chunks * num_rows, embedding_dim // num_chunks))
        nn.init.normal_(self.weight, std=_STD)

    def embedding_parameter_count(self) -> int:
        return self.weight.numel()

    def forward(self, codes: torch.Tensor) -> torch.Tensor:
        codes = _check_codes("ConcatHashEmbedding", codes, self.num_rows)
        if codes.shape[-1] != self.num_chunks or bool((codes < 0).any()):
            raise ValueError(f"ConcatHashEmbedding: codes must be (..., {self.num_chunks}) row ids in "
                             f"[0, {self.num_rows}), got shape {tuple(codes.shape)}")
        block = torch.arange(self.num_chunks, device=codes.device) * self.num_rows
        return F.embedding(codes + block, self.weight).reshape(*codes.shape[:-1], self.embedding_dim)


def _cube_root_up(x: int) -> int:
    """The least ``k >= 1`` with ``k^3 >= x`` (integer arithmetic: no float rounding at exact cubes)."""
    k = max(1, round(x ** (1 / 3)))
    while k ** 3 < x:
        k += 1
    while k > 1 and (k - 1) ** 3 >= x:
        k -= 1
    return k


def tt_shape(num_ids: int, embedding_dim: int) -> tuple[int, int]:
    """``(n, d')``: each core's rows (``ceil(V^(1/3))``, so ``n^3 >= V``) and output factor (``ceil(d^(1/3))``)."""
    return _cube_root_up(num_ids), _cube_root_up(embedding_dim)


def _tt_count(n: int, f: int, rank: int) -> int:
    return 2 * n * f * rank + n * f * rank * rank


def tt_minimum(num_ids: int, embedding_dim: int) -> int:
    """The parameters of TT-Rec's rank 1 (the least budget it builds at)."""
    return _tt_count(*tt_shape(num_ids, embedding_dim), 1)


def tt_rank(num_ids: int, embedding_dim: int, budget: int) -> int:
    """The largest TT rank whose three cores fit ``budget``; ``ValueError`` when rank 1 does not."""
    least = tt_minimum(num_ids, embedding_dim)
    if least > budget:
        raise ValueError(f"tt-rec: rank 1 needs {least:,} parameters, over the budget {budget:,}")
    n, f = tt_shape(num_ids, embedding_dim)
    rank = 1
    while _tt_count(n, f, rank + 1) <= budget:
        rank += 1
    return rank


class TensorTrainEmbedding(nn.Module):
    """TT-Rec with three cores: ``S`` (``n x d' x r``), ``M`` (``n x d' x r x r``), ``E`` (``n x d' x r``); id ``i``
    reads ``S[i mod n]``, ``M[(i // n) mod n]``, ``E[i // n^2]`` (cce's ``QRHash`` order). Parameters:
    ``2 n d' r + n d' r^2``. Initialised uniformly as cce does, the first core then scaled so the output's
    coordinates have standard deviation 0.02."""

    def __init__(self, num_ids: int, embedding_dim: int, rank: int) -> None:
        super().__init__()
        owner = "TensorTrainEmbedding"
        self.num_ids = _positive(owner, "num_ids", num_ids)
        self.embedding_dim = _positive(owner, "embedding_dim", embedding_dim)
        self.rank = _positive(owner, "rank", rank)
        self.n, self.factor = n, f = tt_shape(num_ids, embedding_dim)
        self.start = nn.Parameter(torch.empty(n, f, rank))
        self.middle = nn.Parameter(torch.empty(n, f, rank, rank))
        self.end = nn.Parameter(torch.empty(n, f, rank))
        scale = (f * rank) ** -0.5
        nn.init.uniform_(self.middle, -scale, scale)
        nn.init.uniform_(self.end, -scale, scale)
        # cce's start core: U(+-f^-1/2), so a coordinate's variance is 1 / (27 f^3); rescaled to std 0.02
        nn.init.uniform_(self.start, -(f ** -0.5), f ** -0.5)
        with torch.no_grad():
            self.start.mul_(_STD * math.sqrt(27 * f ** 3))

    def embedding_parameter_count(self) -> int:
        return self.start.numel() + self.middle.numel() + self.end.numel()

    def digits(self, ids: torch.Tensor) -> torch.Tensor:
        """``(..., 3)``: the id's three base-``n`` digits, least significant first."""
        ids = ids.long()
        return torch.stack([ids % self.n, (ids // self.n) % self.n, ids // (self.n * self.n)], dim=-1)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        ids = _check_ids("TensorTrainEmbedding", ids, self.num_ids)
        flat = self.digits(ids.reshape(-1))
        out = torch.einsum("nas,nbsr,ncr->nabc", self.start[flat[:, 0]], self.middle[flat[:, 1]],
                           self.end[flat[:, 2]])
        return out.reshape(*ids.shape, -1)[..., : self.embedding_dim]


def low_rank_minimum(num_ids: int, embedding_dim: int) -> int:
    """The parameters of the rank-1 factorised table (the least budget it builds at)."""
    return num_ids + 2 * embedding_dim


def low_rank(num_ids: int, embedding_dim: int, budget: int) -> int:
    """The largest rank ``r`` with ``V r + r d + d <= budget``; ``ValueError`` when rank 1 does not fit."""
    rank = (budget - embedding_dim) // (num_ids + embedding_dim)
    if rank < 1:
        raise ValueError(f"low-rank: rank 1 needs {low_rank_minimum(num_ids, embedding_dim):,} parameters, over the "
                         f"budget {budget:,}")
    return rank


class LowRankEmbedding(nn.Module):
    """ALBERT's factorised table: ``Linear(r, d)(T[i])`` with ``T`` of ``V x r`` (N(0, 0.02)) and the projection's
    weights N(0, 1 / r) (so the output's coordinates have standard deviation 0.02), its bias zero.
    Parameters: ``V r + r d + d``."""

    def __init__(self, num_ids: int, embedding_dim: int, rank: int) -> None:
        super().__init__()
        owner = "LowRankEmbedding"
        self.num_ids = _positive(owner, "num_ids", num_ids)
        self.embedding_dim = _positive(owner, "embedding_dim", embedding_dim)
        self.rank = _positive(owner, "rank", rank)
        self.table = nn.Embedding(num_ids, rank)
        self.project = nn.Linear(rank, embedding_dim)
        nn.init.normal_(self.table.weight, std=_STD)
        nn.init.normal_(self.project.weight, std=rank ** -0.5)
        nn.init.zeros_(self.project.bias)

    def embedding_parameter_count(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.project(self.table(_check_ids("LowRankEmbedding", ids, self.num_ids)))


class HashedNetEmbedding(nn.Module):
    """HashedNets: entry ``(i, j)`` is ``xi(i, j) w[h(i, j)]`` with ``h = ((a k + b) mod p) mod M`` and ``xi = 1 - 2
    (((a' k + b') mod p) mod 2)`` of the key ``k = i d + j`` (``p = 2^61 - 1``; multipliers in buffers).
    Parameters: ``M``."""

    def __init__(self, num_ids: int, size: int, embedding_dim: int, seed: int = 0) -> None:
        super().__init__()
        owner = "HashedNetEmbedding"
        self.num_ids = _positive(owner, "num_ids", num_ids)
        self.size = _positive(owner, "size", size)
        self.embedding_dim = _positive(owner, "embedding_dim", embedding_dim)
        if num_ids * embedding_dim >= 1 << 31:
            raise ValueError(f"{owner}: {num_ids} ids x {embedding_dim} entries exceed the hash's 2^31 keys")
        g = torch.Generator().manual_seed(seed)
        self.register_buffer("hash_a", torch.randint(1, _P31, (2,), generator=g, dtype=torch.long))
        self.register_buffer("hash_b", torch.randint(0, _P31, (2,), generator=g, dtype=torch.long))
        self.weight = nn.Parameter(torch.empty(size))
        nn.init.normal_(self.weight, std=_STD)

    def embedding_parameter_count(self) -> int:
        return self.weight.numel()

    def slots(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(..., d)`` slots in ``w`` and ``(..., d)`` signs (+-1) of each id's entries."""
        keys = ids.long().unsqueeze(-1) * self.embedding_dim + torch.arange(self.embedding_dim, device=ids.device)
        slot = universal_hash(keys, self.hash_a[:1], self.hash_b[:1], self.size)[..., 0]
        sign = 1 - 2 * universal_hash(keys, self.hash_a[1:], self.hash_b[1:], 2)[..., 0]
        return slot, sign

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        slot, sign = self.slots(_check_ids("HashedNetEmbedding", ids, self.num_ids))
        return self.weight[slot] * sign.to(self.weight.dtype)


# ------------------------------------------------------------------------- builders (the catalogue's _Spec in, out)
def build_ce(spec):
    rows = spec.rows()
    return ConcatHashEmbedding(rows, spec.dim), mmh3_codes(spec.strings, CE_CHUNKS, rows, spec.seed)


def build_tt(spec):
    return TensorTrainEmbedding(spec.vocab_size, spec.dim, tt_rank(spec.vocab_size, spec.dim, spec.budget)), None


def build_low_rank(spec):
    return LowRankEmbedding(spec.vocab_size, spec.dim, low_rank(spec.vocab_size, spec.dim, spec.budget)), None


def build_hashed_net(spec):
    return HashedNetEmbedding(spec.vocab_size, spec.budget, spec.dim, seed=spec.seed), None
