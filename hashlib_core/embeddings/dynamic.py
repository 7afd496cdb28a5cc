"""Dynamic hash embeddings (EELBERT, Cohn et al., EMNLP 2023 Industry; the function as the blog describes it).

A token's vector is **computed** from its characters, with no trainable table:

1. the output width ``d`` is cut into partitions, one per n-gram length ``n = 1..N``, of widths proportional to
   ``n`` (the blog: ``d / (1 + 2 + ... + N)`` columns per part, ``n`` parts for n-grams; when ``d`` is not a
   multiple of ``N(N+1)/2`` the remainder goes to the widest partition, :func:`partition_widths`);
2. every output column ``k`` has a fixed random seed ``h_k`` in ``[1, M)`` (numpy PCG64 from one integer seed);
3. for every character n-gram ``g`` of the token (the polynomial rolling hash ``H(g)``,
   :mod:`hashlib_core.hashing.rolling`) and every column ``k`` of n's partition: ``v = (H(g) * h_k) mod b``
   (``b`` the bucket size; the blog's ``b = 10^9 + 7``), shifted to ``(-b/2, b/2]`` and divided by ``b/2``, so
   ``v`` lies in ``[-1, 1]``;
4. column ``k`` is the mean of ``v`` over the token's n-grams of length n; a token shorter than n has none and its
   partition is zero (our choice; the blog's ``jnp.mean`` of an empty array is NaN).

Strings that share n-grams share terms of these means, so they land closer than strings that do not. The vector
depends only on the string, so it is computed **per token** (per vocabulary entry: the community code embeds a whole
sentence) and **cached**: :class:`DynamicHashEmbedding` computes every vocabulary entry once into a buffer that is
not saved with the model, and ``forward(input_ids)`` indexes it. An optional learned ``Linear(d, d)`` projection
follows (``projection=True``); it is the only trainable part, and the only one :meth:`embedding_parameter_count`
counts. Products ``H(g) * h_k`` stay below ``M^2 < 2^60``, so int64 arithmetic is exact (the community JAX code
overflows int32 here).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch
from torch import nn

from hashlib_core.hashing.ngram_md5 import md5_ngram_hashes_many
from hashlib_core.hashing.rolling import DEFAULT_BASE, DEFAULT_MODULUS, ngram_hashes_many

__all__ = ["NGRAM_HASHES", "partition_widths", "dynamic_vectors", "DynamicHashEmbedding"]

#: the n-gram hash families ``H``: the blog's polynomial rolling hash, or MD5 (:mod:`hashlib_core.hashing.ngram_md5`)
NGRAM_HASHES = ("rolling", "md5")

#: Rows of n-gram x column products formed at once (bounds the int64 temporary to about 64 MB at d = 768).
_CHUNK_ROWS = 1 << 14


def partition_widths(dim: int, max_n: int) -> tuple[int, ...]:
    """Columns of each n-gram length ``1..max_n``: ``dim * n // T`` with ``T = max_n (max_n + 1) / 2``, the
    remainder on the last (the blog's split when ``dim`` is a multiple of T)."""
    for name, value in (("dim", dim), ("max_n", max_n)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be an int >= 1, got {value!r}")
    total = max_n * (max_n + 1) // 2
    widths = [dim * n // total for n in range(1, max_n + 1)]
    widths[-1] += dim - sum(widths)
    if min(widths) == 0:
        raise ValueError(f"dim = {dim} is too small for n-grams up to {max_n}: every n needs a column; use dim >= "
                         f"{total} or a smaller max_n")
    return tuple(widths)


def _check_strings(strings: Sequence[str]) -> list[str]:
    if isinstance(strings, str) or not isinstance(strings, Sequence):
        raise TypeError(f"expected a sequence of str (one per token), got {type(strings).__name__}; wrap a single "
                        f"token in a list")
    out = list(strings)
    for i, s in enumerate(out):
        if not isinstance(s, str):
            raise TypeError(f"token {i} is a {type(s).__name__}, not a str; decode bytes or map ids to strings first")
        if not s:
            raise ValueError(f"token {i} is the empty string, which has no character n-grams to hash: drop it, or "
                             f"give special tokens a non-empty name such as '<pad>'")
    return out


def dynamic_vectors(strings: Sequence[str], seeds: np.ndarray, max_n: int = 3, buckets: int = DEFAULT_MODULUS,
                    base: int = DEFAULT_BASE, modulus: int = DEFAULT_MODULUS, ngram_hash: str = "rolling"
                    ) -> np.ndarray:
    """The ``(len(strings), len(seeds))`` float32 dynamic embeddings of ``strings`` (steps 1-4 of the module doc),
    vectorised over all strings; cost linear in their total length. ``ngram_hash`` picks ``H``: ``"rolling"`` (the
    blog's) or ``"md5"`` (``base`` unused)."""
    strings = _check_strings(strings)
    if ngram_hash not in NGRAM_HASHES:
        raise ValueError(f"ngram_hash must be one of {NGRAM_HASHES}, got {ngram_hash!r}")
    seeds = np.asarray(seeds, dtype=np.int64)
    if seeds.ndim != 1 or (seeds < 1).any() or (seeds >= modulus).any():
        raise ValueError(f"seeds must be a 1-d array of ints in [1, {modulus}); build them with "
                         f"DynamicHashEmbedding.make_seeds")
    if isinstance(buckets, bool) or not isinstance(buckets, (int, np.integer)) or not 2 <= buckets <= modulus:
        raise ValueError(f"buckets must be an int in [2, modulus = {modulus}], got {buckets!r}")
    widths = partition_widths(seeds.shape[0], max_n)
    out = np.zeros((len(strings), seeds.shape[0]), dtype=np.float64)
    half = buckets / 2.0
    column = 0
    for n, width in zip(range(1, max_n + 1), widths):
        cols = seeds[column : column + width]
        per_string = (ngram_hashes_many(strings, n, base, modulus) if ngram_hash == "rolling"
                      else md5_ngram_hashes_many(strings, n, modulus))
        counts = np.array([h.shape[0] for h in per_string], dtype=np.int64)
        hashes = np.concatenate(per_string) if per_string else np.zeros(0, dtype=np.int64)
        running = np.zeros((1, width), dtype=np.float64)
        sums = [running]
        for start in range(0, hashes.shape[0], _CHUNK_ROWS):
            v = (hashes[start : start + _CHUNK_ROWS, None] * cols[None, :]) % buckets  # exact: both < 2^30
            v = (v - buckets * (v > half)) / half
            part = np.cumsum(v, axis=0) + running
            running = part[-1:]
            sums.append(part)
        prefix = np.concatenate(sums)  # prefix[i] = sum of the first i rows
        ends = np.cumsum(counts)
        totals = prefix[ends] - prefix[ends - counts]
        out[:, column : column + width] = totals / np.maximum(counts, 1)[:, None]
        column += width
    return out.astype(np.float32)


class DynamicHashEmbedding(nn.Module):
    """Token ids -> computed (cached) dynamic hash embeddings, optionally followed by a learned projection.

    Parameters
    ----------
    vocabulary:
        The token strings, in id order (every id gets the vector of its string; duplicates are allowed). ``None``
        builds the module without its cache (counting parameters, e.g. on the ``meta`` device): give
        ``num_embeddings`` then; ``forward`` raises until a vocabulary is given.
    num_embeddings:
        V, checked against ``len(vocabulary)`` when both are given.
    embedding_dim:
        d, the width of the vectors.
    max_n:
        Longest character n-gram (the blog: 3).
    buckets, base, modulus:
        b, p and M (see :mod:`hashlib_core.hashing.rolling`).
    seed:
        Seed of the per-column multipliers ``h_k`` (the blog: 42; ours come from numpy, not JAX's PRNG).
    ngram_hash:
        The n-gram hash ``H``: ``"rolling"`` (the blog's) or ``"md5"``.
    projection:
        Add a learned ``Linear(d, d)`` after the computed vectors.
    """

    def __init__(self, vocabulary: Sequence[str] | None, embedding_dim: int, *, num_embeddings: int | None = None,
                 max_n: int = 3,
                 buckets: int = DEFAULT_MODULUS, base: int = DEFAULT_BASE, modulus: int = DEFAULT_MODULUS,
                 seed: int = 42, projection: bool = False, ngram_hash: str = "rolling") -> None:
        super().__init__()
        if ngram_hash not in NGRAM_HASHES:
            raise ValueError(f"ngram_hash must be one of {NGRAM_HASHES}, got {ngram_hash!r}")
        self.ngram_hash = ngram_hash
        self.embedding_dim, self.max_n = int(embedding_dim), int(max_n)
        self.buckets, self.base, self.modulus, self.seed = int(buckets), int(base), int(modulus), int(seed)
        self.widths = partition_widths(self.embedding_dim, self.max_n)
        # Plain attributes, not buffers: they are functions of the strings and the settings, never saved, and
        # recomputed here when a model is loaded (transformers' loader would leave non-persistent buffers empty).
        self.seeds = self.make_seeds(self.embedding_dim, self.seed, self.modulus)
        if vocabulary is None:
            if isinstance(num_embeddings, bool) or not isinstance(num_embeddings, int) or num_embeddings < 1:
                raise ValueError("without a vocabulary, give num_embeddings (an int >= 1): the number of token ids")
            self.num_embeddings, self._cache = num_embeddings, None
        else:
            vocabulary = _check_strings(vocabulary)
            if not vocabulary:
                raise ValueError("the vocabulary is empty: give the token strings in id order")
            if num_embeddings is not None and num_embeddings != len(vocabulary):
                raise ValueError(f"num_embeddings = {num_embeddings} but the vocabulary has {len(vocabulary)} "
                                 f"strings; leave num_embeddings out or make them agree")
            self.num_embeddings = len(vocabulary)
            with torch.device("cpu"):
                self._cache = torch.from_numpy(dynamic_vectors(vocabulary, self.seeds, self.max_n, self.buckets,
                                                               self.base, self.modulus, ngram_hash))
        self._on_device: dict[str, torch.Tensor] = {}
        self.projection = nn.Linear(self.embedding_dim, self.embedding_dim) if projection else None

    @staticmethod
    def make_seeds(dim: int, seed: int, modulus: int = DEFAULT_MODULUS) -> np.ndarray:
        """The per-column multipliers ``h_k``: ``dim`` ints uniform in ``[1, modulus)`` from ``seed``."""
        return np.random.default_rng(seed).integers(1, modulus, size=dim, dtype=np.int64)

    @property
    def cache(self) -> torch.Tensor | None:
        """The ``(V, d)`` float32 vectors of the vocabulary (on the CPU; ``None`` when built without one)."""
        return self._cache

    def _cache_on(self, device: torch.device) -> torch.Tensor:
        key = str(device)
        if key not in self._on_device:
            self._on_device[key] = self._cache.to(device)
        return self._on_device[key]

    def embed(self, strings: Sequence[str], device: torch.device | str = "cpu") -> torch.Tensor:
        """Vectors of arbitrary strings, computed now (the uncached path; equal to the cache for vocabulary
        entries)."""
        vectors = torch.from_numpy(dynamic_vectors(strings, self.seeds, self.max_n, self.buckets, self.base,
                                                   self.modulus, self.ngram_hash))
        return self._project(vectors.to(device))

    def _project(self, vectors: torch.Tensor) -> torch.Tensor:
        if self.projection is None:
            return vectors
        return self.projection(vectors.to(self.projection.weight.dtype))

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        if not isinstance(input_ids, torch.Tensor) or input_ids.dtype not in (torch.int64, torch.int32):
            raise TypeError("input_ids must be an int64 tensor of vocabulary ids; use torch.as_tensor(ids).long()")
        if input_ids.numel() and (int(input_ids.min()) < 0 or int(input_ids.max()) >= self.num_embeddings):
            raise ValueError(f"input_ids must lie in [0, {self.num_embeddings}) (the vocabulary this embedding was "
                             f"built from), got [{int(input_ids.min())}, {int(input_ids.max())}]; tokenise with "
                             f"the same vocabulary")
        if self._cache is None:
            raise RuntimeError("this DynamicHashEmbedding was built without a vocabulary (for counting only): "
                               "build it with the token strings to embed ids, or call embed(strings)")
        return self._project(self._cache_on(input_ids.device)[input_ids])

    def embedding_parameter_count(self) -> int:
        """Trainable parameters that build a token's vector: the projection's, or none."""
        return 0 if self.projection is None else sum(p.numel() for p in self.projection.parameters())

    def extra_repr(self) -> str:
        return (f"{self.num_embeddings} tokens, d={self.embedding_dim}, n=1..{self.max_n} (widths {self.widths}), "
                f"b={self.buckets}, p={self.base}, M={self.modulus}, seed={self.seed}, "
                f"projection={self.projection is not None}")
