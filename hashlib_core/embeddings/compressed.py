"""Embedding modules of the compression families that no chapter of the book builds (the catalogue,
:mod:`hashlib_core.embeddings.catalogue`, wires them to token strings and parameter budgets).

Every module maps **codes** of shape ``(..., k)`` (int64; ``-1`` pads a short code) or token ids to ``(..., d)``
vectors and counts its parameters with ``embedding_parameter_count()`` (:class:`~.base.TokenEmbedding`).

* :class:`RowCombinationEmbedding` -- each token reads ``k`` rows of one table and averages or sums them: the hashing
  trick (Weinberger et al. 2009: one row), Bloom embeddings (Serra & Karatzoglou 2017: the mean of ``k`` rows;
  maciejkula/spotlight ``spotlight/layers.py`` ``BloomEmbedding``), Superbloom's input side (the sum of ``m`` rows)
  and T-FREE (Deiseroth et al. 2024: the sum of a word's active rows, a variable number; Aleph-Alpha/trigrams
  ``components/embedding.py``).
* :class:`ImportanceHashEmbedding` -- hash embeddings (Svenstrup, Hansen & Winther, NeurIPS 2017;
  YannDubs/Hash-Embeddings ``hashembed/embedding.py``): ``k`` rows of a shared pool, combined with ``k`` learned
  importance weights that a second hash of the token picks from a weight table.
* :class:`QuotientRemainderEmbedding` -- the quotient-remainder trick (Shi et al., KDD 2020; facebookresearch/dlrm
  ``tricks/qr_embedding_bag.py``): id ``i`` reads row ``i // M`` of one table and row ``i % M`` of another, combined
  by an element-wise product (the paper's default), a sum or a concatenation.
* :class:`RobeEmbedding` -- ROBE-Z (Desai et al., MLSys 2022; thomasahle/cce ``cce/robe.py``): one shared 1-D array;
  a token's vector is ``d / Z`` chunks of ``Z`` consecutive numbers read at hashed offsets (wrapping at the end).
* :class:`DenseHashEmbedding` -- DHE (Kang et al., KDD 2021; thomasahle/cce ``cce/dhe.py``): ``k`` universal hashes
  of the id scaled to ``[-1, 1]``, then an MLP with ReLU (no table).
* :class:`FeatureProjection` -- fixed per-token features (a buffer) through a learned bottleneck: pNLP-Mixer's MinHash
  counting Bloom filter into a dense layer, Leaky ReLU and LayerNorm (Fusco et al. 2023, §3.1-3.2).

Randomness (hash multipliers, offsets) lives in buffers, so a saved state dict reloads the same hashes.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["RowCombinationEmbedding", "ImportanceHashEmbedding", "QuotientRemainderEmbedding", "RobeEmbedding",
           "DenseHashEmbedding", "FeatureProjection", "universal_hash", "MERSENNE_61"]

#: the prime of the universal hashes below (2^61 - 1): products of two values under 2^31 stay inside int64
MERSENNE_61 = (1 << 61) - 1
_P31 = (1 << 31) - 1


def _positive(owner: str, name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{owner}: {name} must be an int >= 1, got {value!r:.40}")
    return value


def _check_codes(owner: str, codes: torch.Tensor, rows: int) -> torch.Tensor:
    if not isinstance(codes, torch.Tensor) or codes.dtype not in (torch.int64, torch.int32):
        got = codes.dtype if isinstance(codes, torch.Tensor) else type(codes).__name__
        raise TypeError(f"{owner}: codes must be an int64 tensor of row ids (-1 pads), got {got}; build them with "
                        f"the catalogue (hashlib_core.embeddings.catalogue)")
    if codes.dim() < 1:
        raise ValueError(f"{owner}: codes need a last dimension (k rows per token), got a scalar")
    if codes.numel():
        low, high = (int(v) for v in torch.aminmax(codes))
        if low < -1 or high >= rows:
            raise ValueError(f"{owner}: codes must lie in [-1, {rows}) (-1 pads), got values in [{low}, {high}]; "
                             f"build them for a table of {rows} rows")
    return codes.long()


def _check_ids(owner: str, ids: torch.Tensor, num_ids: int | None = None) -> torch.Tensor:
    if not isinstance(ids, torch.Tensor) or ids.dtype not in (torch.int64, torch.int32):
        got = ids.dtype if isinstance(ids, torch.Tensor) else type(ids).__name__
        raise TypeError(f"{owner}: ids must be an int64 tensor, got {got}; convert with torch.as_tensor(ids).long()")
    if ids.numel():
        low, high = (int(v) for v in torch.aminmax(ids))
        if low < 0 or (num_ids is not None and high >= num_ids):
            bound = f"[0, {num_ids})" if num_ids is not None else ">= 0"
            raise ValueError(f"{owner}: ids must lie in {bound}, got values in [{low}, {high}]")
    return ids.long()


def universal_hash(values: torch.Tensor, a: torch.Tensor, b: torch.Tensor, modulus: int) -> torch.Tensor:
    """``((a x + b) mod p) mod modulus`` with ``p = 2^61 - 1`` for every pair (a, b) (the last dimension of the
    result). ``values`` must lie in ``[0, 2^31)`` and ``a``, ``b`` in ``[0, 2^31)``, so no product leaves int64."""
    x = values.long().unsqueeze(-1)
    return ((a * x + b) % MERSENNE_61) % modulus


class RowCombinationEmbedding(nn.Module):
    """``k`` codes per token -> the mean (``combine="mean"``) or sum (``"sum"``) of those rows of an ``R x d`` table;
    ``-1`` codes are skipped (a token with none gets a zero vector). Parameters: ``R d``."""

    COMBINE = ("mean", "sum")

    def __init__(self, num_rows: int, embedding_dim: int, combine: str = "mean") -> None:
        super().__init__()
        owner = "RowCombinationEmbedding"
        self.num_rows = _positive(owner, "num_rows", num_rows)
        self.embedding_dim = _positive(owner, "embedding_dim", embedding_dim)
        if combine not in self.COMBINE:
            raise ValueError(f"{owner}: combine must be one of {self.COMBINE}, got {combine!r}")
        self.combine = combine
        self.weight = nn.Parameter(torch.empty(num_rows, embedding_dim))
        nn.init.normal_(self.weight, std=0.02)

    def embedding_parameter_count(self) -> int:
        return self.weight.numel()

    def forward(self, codes: torch.Tensor) -> torch.Tensor:
        codes = _check_codes("RowCombinationEmbedding", codes, self.num_rows)
        present = codes >= 0
        if codes.numel() == 0:
            total = self.weight.new_zeros(*codes.shape[:-1], self.embedding_dim)
        else:   # one bag per token: the present rows summed (embedding_bag: no (..., k, d) intermediate)
            flat = codes.reshape(-1, codes.shape[-1])
            total = F.embedding_bag(flat.clamp(min=0), self.weight, mode="sum",
                                    per_sample_weights=present.reshape(flat.shape).to(self.weight.dtype))
            total = total.reshape(*codes.shape[:-1], self.embedding_dim)
        if self.combine == "sum":
            return total
        return total / present.sum(dim=-1, keepdim=True).clamp(min=1).to(total.dtype)


class ImportanceHashEmbedding(nn.Module):
    """Hash embeddings: ``e_w = sum_i p_w[i] E[h_i(w)]`` with ``k`` rows of a shared pool ``E`` (``B x d``) and the
    importance weights ``p_w`` = row ``h_0(w)`` of ``P`` (``K x k``). Codes ``(..., k + 1)``: the ``k`` pool rows,
    then the weight row. Parameters: ``B d + K k``."""

    def __init__(self, num_buckets: int, embedding_dim: int, num_hashes: int = 2, num_weight_rows: int | None = None
                 ) -> None:
        super().__init__()
        owner = "ImportanceHashEmbedding"
        self.num_buckets = _positive(owner, "num_buckets", num_buckets)
        self.embedding_dim = _positive(owner, "embedding_dim", embedding_dim)
        self.num_hashes = _positive(owner, "num_hashes", num_hashes)
        self.num_weight_rows = _positive(owner, "num_weight_rows", num_weight_rows or num_buckets)
        self.pool = nn.Parameter(torch.empty(self.num_buckets, embedding_dim))
        self.importance = nn.Parameter(torch.empty(self.num_weight_rows, num_hashes))
        nn.init.normal_(self.pool, std=0.02)
        # the reference draws the importance weights from N(0, 0.0005) (hashembed/embedding.py); here, so that a
        # token starts as the plain mean of its rows, every weight starts at 1 / k
        nn.init.constant_(self.importance, 1.0 / num_hashes)

    def embedding_parameter_count(self) -> int:
        return self.pool.numel() + self.importance.numel()

    def forward(self, codes: torch.Tensor) -> torch.Tensor:
        owner = "ImportanceHashEmbedding"
        if not isinstance(codes, torch.Tensor) or codes.dim() < 1 or codes.shape[-1] != self.num_hashes + 1:
            shape = tuple(codes.shape) if isinstance(codes, torch.Tensor) else type(codes).__name__
            raise ValueError(f"{owner}: codes must end with k + 1 = {self.num_hashes + 1} entries (k pool rows, then "
                             f"the weight row), got {shape}")
        rows = _check_codes(owner, codes[..., :-1], self.num_buckets)
        weight_row = _check_codes(owner, codes[..., -1:], self.num_weight_rows)[..., 0]
        weights = self.importance[weight_row.clamp(min=0)]                       # (..., k)
        return (weights.unsqueeze(-1) * self.pool[rows.clamp(min=0)]).sum(dim=-2)


class QuotientRemainderEmbedding(nn.Module):
    """Id ``i`` -> row ``i // M`` of ``Q`` (``ceil(V / M) x d``) and row ``i % M`` of ``R`` (``M x d``), combined by
    ``"mult"`` (element-wise product, the paper's default), ``"add"`` or ``"concat"`` (each table ``d / 2`` wide).
    With one ``M`` as divisor and modulus no two ids share both rows (:meth:`collisions` counts them: 0).
    Parameters: ``(ceil(V / M) + M) d`` (half that width for ``"concat"``)."""

    OPERATIONS = ("mult", "add", "concat")

    def __init__(self, num_ids: int, modulus: int, embedding_dim: int, operation: str = "mult") -> None:
        super().__init__()
        owner = "QuotientRemainderEmbedding"
        self.num_ids = _positive(owner, "num_ids", num_ids)
        self.modulus = _positive(owner, "modulus", modulus)
        self.embedding_dim = _positive(owner, "embedding_dim", embedding_dim)
        if operation not in self.OPERATIONS:
            raise ValueError(f"{owner}: operation must be one of {self.OPERATIONS}, got {operation!r}")
        if operation == "concat" and embedding_dim % 2:
            raise ValueError(f"{owner}: 'concat' splits d = {embedding_dim} into two halves; use an even d")
        self.operation = operation
        width = embedding_dim // 2 if operation == "concat" else embedding_dim
        self.quotient = nn.Parameter(torch.empty(-(-num_ids // modulus), width))
        self.remainder = nn.Parameter(torch.empty(modulus, width))
        if operation == "mult":   # products of two N(0, s) numbers have spread s^2: start each near one instead
            nn.init.normal_(self.quotient, mean=1.0, std=0.02)
        else:
            nn.init.normal_(self.quotient, std=0.02)
        nn.init.normal_(self.remainder, std=0.02)

    def embedding_parameter_count(self) -> int:
        return self.quotient.numel() + self.remainder.numel()

    def collisions(self) -> int:
        """Pairs of ids that share both their quotient and their remainder row (0 when divisor = modulus)."""
        ids = torch.arange(self.num_ids)
        pairs = (ids // self.modulus) * self.modulus + ids % self.modulus
        return self.num_ids - int(torch.unique(pairs).numel())

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        ids = _check_ids("QuotientRemainderEmbedding", ids, self.num_ids)
        q, r = self.quotient[ids // self.modulus], self.remainder[ids % self.modulus]
        return {"mult": lambda: q * r, "add": lambda: q + r, "concat": lambda: torch.cat([q, r], dim=-1)}[
            self.operation]()


class RobeEmbedding(nn.Module):
    """ROBE-Z: a flat parameter array of ``M`` numbers; chunk ``c`` of id ``i``'s vector is the ``Z`` numbers from
    offset ``h(i, c) mod M`` on (indices taken mod ``M``). The chunk offsets are universal hashes of ``i * (d / Z) +
    c``, their multipliers in buffers. Parameters: ``M``."""

    def __init__(self, num_ids: int, size: int, embedding_dim: int, chunk: int = 16, seed: int = 0) -> None:
        super().__init__()
        owner = "RobeEmbedding"
        self.num_ids = _positive(owner, "num_ids", num_ids)
        self.size = _positive(owner, "size", size)
        self.embedding_dim = _positive(owner, "embedding_dim", embedding_dim)
        self.chunk = _positive(owner, "chunk", chunk)
        if embedding_dim % chunk:
            raise ValueError(f"{owner}: the chunk size Z = {chunk} must divide d = {embedding_dim}")
        if num_ids * (embedding_dim // chunk) >= 1 << 31:
            raise ValueError(f"{owner}: {num_ids} ids x {embedding_dim // chunk} chunks exceed the hash's 2^31 keys")
        g = torch.Generator().manual_seed(seed)
        self.register_buffer("hash_a", torch.randint(1, _P31, (1,), generator=g, dtype=torch.long))
        self.register_buffer("hash_b", torch.randint(0, _P31, (1,), generator=g, dtype=torch.long))
        self.weight = nn.Parameter(torch.empty(size))
        # each number is read by about d V / M chunks; N(0, 0.02) as every other table of the catalogue
        nn.init.normal_(self.weight, std=0.02)

    def embedding_parameter_count(self) -> int:
        return self.weight.numel()

    def offsets(self, ids: torch.Tensor) -> torch.Tensor:
        """``(..., d / Z)`` start offsets of each id's chunks."""
        chunks = self.embedding_dim // self.chunk
        keys = ids.long().unsqueeze(-1) * chunks + torch.arange(chunks, device=ids.device)
        return universal_hash(keys, self.hash_a, self.hash_b, self.size)[..., 0]

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        ids = _check_ids("RobeEmbedding", ids, self.num_ids)
        start = self.offsets(ids)
        index = (start.unsqueeze(-1) + torch.arange(self.chunk, device=ids.device)) % self.size
        return self.weight[index].reshape(*ids.shape, self.embedding_dim)


class DenseHashEmbedding(nn.Module):
    """DHE: ``k`` universal hashes of the id into ``[0, m)``, mapped uniformly to ``[-1, 1]``, then
    ``Linear(k, h)``, ReLU, ``Linear(h, d)`` (the paper stacks more layers; one hidden layer here, its width set by
    the budget). Hash multipliers are buffers. Parameters: ``k h + h + h d + d``."""

    def __init__(self, num_ids: int, embedding_dim: int, hidden: int, num_hashes: int = 1024,
                 buckets: int = 1_000_000, seed: int = 0) -> None:
        super().__init__()
        owner = "DenseHashEmbedding"
        self.num_ids = _positive(owner, "num_ids", num_ids)
        self.embedding_dim = _positive(owner, "embedding_dim", embedding_dim)
        self.hidden = _positive(owner, "hidden", hidden)
        self.num_hashes = _positive(owner, "num_hashes", num_hashes)
        self.buckets = _positive(owner, "buckets", buckets)
        g = torch.Generator().manual_seed(seed)
        self.register_buffer("hash_a", torch.randint(1, _P31, (num_hashes,), generator=g, dtype=torch.long))
        self.register_buffer("hash_b", torch.randint(0, _P31, (num_hashes,), generator=g, dtype=torch.long))
        self.mlp = nn.Sequential(nn.Linear(num_hashes, hidden), nn.ReLU(), nn.Linear(hidden, embedding_dim))

    def embedding_parameter_count(self) -> int:
        return sum(p.numel() for p in self.mlp.parameters())

    def encode(self, ids: torch.Tensor) -> torch.Tensor:
        """The ``(..., k)`` dense hash encoding in ``[-1, 1]`` (the paper's uniform transform)."""
        h = universal_hash(ids, self.hash_a, self.hash_b, self.buckets)
        return h.to(torch.float32) * (2.0 / (self.buckets - 1)) - 1.0

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        ids = _check_ids("DenseHashEmbedding", ids, self.num_ids)
        return self.mlp(self.encode(ids).to(self.mlp[0].weight.dtype))


class FeatureProjection(nn.Module):
    """Fixed features ``(..., F)`` (e.g. a MinHash counting Bloom filter) -> ``Linear(F, d)``, Leaky ReLU, LayerNorm
    (pNLP-Mixer's bottleneck, §3.2). Parameters: ``F d + d`` (dense) ``+ 2 d`` (LayerNorm)."""

    def __init__(self, num_features: int, embedding_dim: int) -> None:
        super().__init__()
        self.num_features = _positive("FeatureProjection", "num_features", num_features)
        self.embedding_dim = _positive("FeatureProjection", "embedding_dim", embedding_dim)
        self.dense = nn.Linear(num_features, embedding_dim)
        self.norm = nn.LayerNorm(embedding_dim)

    def embedding_parameter_count(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        if not isinstance(features, torch.Tensor) or features.shape[-1:] != (self.num_features,):
            shape = tuple(features.shape) if isinstance(features, torch.Tensor) else type(features).__name__
            raise ValueError(f"FeatureProjection: features must end with {self.num_features} entries, got {shape}")
        x = features.to(self.dense.weight.dtype)
        return self.norm(F.leaky_relu(self.dense(x)))

