"""Hashed n-gram memories that **add** to a language model's token table: each maps a batch of token ids
``(batch, length)`` to ``(batch, length, d)`` vectors computed from the causal n-grams ending at each position, to be
added to the token embedding (the every-family chapter's Track B).

* :class:`BLTHashNgramEmbedding` -- BLT's hash n-gram embeddings (Pagnoni et al. 2024; facebookresearch/blt
  ``bytelatent/model/blt.py``: ``byte_group_hash_function``, ``rolling_polynomial_hash``): for every group size ``n``
  and hash function ``f``, the window of the ``n`` ids ending at each position (left-padded with zeros) is hashed by
  ``sum_k x_k p_f^k`` in int64 with two's-complement wrap-around (``p_f^3`` already overflows), taken ``% max_hash``,
  and looked up in its own ``nn.Embedding(max_hash, d)``; all are summed.
* :class:`OverEncodingEmbedding` -- over-encoding (Huang et al., ICML 2025): for each order ``n = 2..N`` and each
  of its ``k`` tables, the ``i``-th table of all ``k (N-1)`` in turn of size ``m_i = m + 2 i`` (as marin's
  ``OverEncoding``), id ``(x_t + x_{t-1} V + ... + x_{t-n+1} V^{n-1}) mod m_i``; each table ``d / (k (N-1))`` wide,
  projected to ``d``, the projections summed.
* :class:`EngramMemory` -- an Engram-style gated n-gram memory (DeepSeek 2026; deepseek-ai/Engram
  ``engram_demo_v1.py``, the gate as AI-Hypercomputer/maxtext ``src/MaxText/layers/engram.py``): token ids are first
  mapped to canonical ids (each token's decoded text under NFKC, NFD, accents stripped, lower case, whitespace
  collapsed and stripped, as the released ``CompressedTokenizer``: "The", " the" and "the" share one), then for ``n = 2, 3`` ``mix = XOR_k (c_{t-k} * mult_{n,k})`` with odd random int64 multipliers, and each of
  ``H`` heads per order looks up ``mix % prime_h`` (distinct primes) in its own table; the heads are concatenated to
  ``e``; a gate ``g = sigmoid(sign(s) sqrt|s|)``, ``s = <RMSNorm(W_k e), RMSNorm(h)> / sqrt(d)`` against the hidden
  state ``h`` scales ``v = W_v e``, and the output is ``v + ShortConv(v)`` (a causal depthwise convolution).
* :class:`BigramHashEmbedding` -- the bigram hash of the parameter-golf records (openai/parameter-golf): ``(36313 t_i
  XOR 27191 t_{i-1}) mod (B - 1)``, position 0 -> ``B - 1``, a ``B x w`` table projected to ``d`` and scaled by a
  learned scalar (0.05 at start). The projection starts at zero, so the memory adds nothing until it has learned;
  the table starts N(0, 0.02): were both zero, neither would ever get a gradient.

Every module counts its parameters with ``embedding_parameter_count()``; :func:`blt_ngram_hashes` and
:func:`over_encoding_ids` are the hashes alone (no parameters), tested against the references' rules.
"""
from __future__ import annotations

import re
import unicodedata
from typing import Sequence

import numpy as np
import torch
from torch import nn

__all__ = ["BLT_PRIMES", "blt_ngram_hashes", "BLTHashNgramEmbedding", "over_encoding_ids", "OverEncodingEmbedding",
           "bigram_hash_ids", "BigramHashEmbedding", "ResidualBigramEmbedding", "canonical_ids", "engram_key",
           "primes_above", "engram_mix", "EngramMemory"]

#: BLT's hash multipliers (``primes`` in ``bytelatent/model/blt.py``)
BLT_PRIMES = (1000000007, 5915587277, 1500450271, 3267000013, 5754853343, 4093082899, 9576890767, 3628273133,
              2860486313, 5463458053, 3367900313)


def _check_batch(owner: str, ids: torch.Tensor, vocab_size: int | None = None) -> torch.Tensor:
    if not isinstance(ids, torch.Tensor) or ids.dtype not in (torch.int64, torch.int32) or ids.dim() != 2:
        got = f"{ids.dtype} {tuple(ids.shape)}" if isinstance(ids, torch.Tensor) else type(ids).__name__
        raise TypeError(f"{owner}: ids must be an int64 tensor (batch, length) of token ids, got {got}")
    if ids.numel():
        low, high = (int(v) for v in torch.aminmax(ids))
        if low < 0 or (vocab_size is not None and high >= vocab_size):
            bound = f"[0, {vocab_size})" if vocab_size is not None else ">= 0"
            raise ValueError(f"{owner}: token ids must lie in {bound}, got values in [{low}, {high}]")
    return ids.long()


def _positive(owner: str, name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{owner}: {name} must be an int >= 1, got {value!r:.40}")
    return value


def _windows(ids: torch.Tensor, n: int) -> torch.Tensor:
    """``(batch, length, n)``: the ``n`` ids ending at each position, oldest first, left-padded with zeros."""
    prefix = torch.zeros(ids.shape[0], n - 1, dtype=torch.int64, device=ids.device)
    return torch.cat([prefix, ids], dim=1).unfold(1, n, 1)


def blt_ngram_hashes(ids: torch.Tensor, group_size: int, hash_func_nb: int = 0, max_hash: int = 30000
                     ) -> torch.Tensor:
    """BLT's ``byte_group_hash_function``: ``(sum_k w_k p^k) % max_hash`` over each causal window ``w`` (oldest id
    first, ``k = 0..n-1``), in int64 with wrap-around; values in ``[0, max_hash)``."""
    ids = _check_batch("blt_ngram_hashes", ids)
    if not 0 <= hash_func_nb < len(BLT_PRIMES):
        raise ValueError(f"hash_func_nb must be in [0, {len(BLT_PRIMES)}) (BLT has {len(BLT_PRIMES)} primes)")
    prime = torch.tensor(BLT_PRIMES[hash_func_nb], dtype=torch.int64, device=ids.device)
    powers = torch.stack([prime ** i for i in range(group_size)])
    return (_windows(ids, group_size) * powers).sum(dim=-1) % max_hash


class BLTHashNgramEmbedding(nn.Module):
    """The sum over group sizes ``n`` and hash functions ``f`` of ``E_{f,n}[blt hash]``, each table ``max_hash x d``.
    Parameters: ``len(sizes) * num_functions * max_hash * d``."""

    def __init__(self, embedding_dim: int, max_hash: int, sizes: Sequence[int] = (3, 4, 5), num_functions: int = 1
                 ) -> None:
        super().__init__()
        owner = "BLTHashNgramEmbedding"
        self.embedding_dim = _positive(owner, "embedding_dim", embedding_dim)
        self.max_hash = _positive(owner, "max_hash", max_hash)
        self.sizes = tuple(_positive(owner, "group size", n) for n in sizes)
        self.num_functions = _positive(owner, "num_functions", num_functions)
        if num_functions > len(BLT_PRIMES):
            raise ValueError(f"{owner}: at most {len(BLT_PRIMES)} hash functions (BLT's primes)")
        self.tables = nn.ModuleList(nn.Embedding(max_hash, embedding_dim)
                                    for _ in range(num_functions) for _ in self.sizes)
        for table in self.tables:
            nn.init.normal_(table.weight, std=0.02)

    def embedding_parameter_count(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        ids = _check_batch("BLTHashNgramEmbedding", ids)
        out = torch.zeros(*ids.shape, self.embedding_dim, device=ids.device, dtype=self.tables[0].weight.dtype)
        i = 0
        for f in range(self.num_functions):
            for n in self.sizes:
                out = out + self.tables[i](blt_ngram_hashes(ids, n, f, self.max_hash))
                i += 1
        return out


def over_encoding_ids(ids: torch.Tensor, vocab_size: int, order: int, modulus: int) -> torch.Tensor:
    """``(x_t + x_{t-1} V + ... + x_{t-n+1} V^{n-1}) mod modulus`` at every position (ids before the start count as
    0), with the powers of ``V`` reduced mod ``modulus`` first so nothing overflows."""
    ids = _check_batch("over_encoding_ids", ids, vocab_size)
    windows = _windows(ids, order)                                 # oldest first: x_{t-n+1} .. x_t
    powers = [pow(vocab_size, order - 1 - k, modulus) for k in range(order)]
    weights = torch.tensor(powers, dtype=torch.int64, device=ids.device)
    return ((windows % modulus) * weights % modulus).sum(dim=-1) % modulus


class OverEncodingEmbedding(nn.Module):
    """Orders ``2..N``, ``k`` tables per order, the ``k (N-1)`` tables of sizes ``m, m + 2, m + 4, ...`` in turn (the
    bigram tables first), each ``d / (k (N-1))`` wide and projected
    to ``d`` (bias-free); the projections are summed. Parameters: tables plus projections."""

    def __init__(self, vocab_size: int, embedding_dim: int, modulus: int, max_order: int = 3, tables_per_order: int = 4
                 ) -> None:
        super().__init__()
        owner = "OverEncodingEmbedding"
        self.vocab_size = _positive(owner, "vocab_size", vocab_size)
        self.embedding_dim = _positive(owner, "embedding_dim", embedding_dim)
        self.modulus = _positive(owner, "modulus", modulus)
        if max_order < 2:
            raise ValueError(f"{owner}: max_order must be >= 2 (bigrams and up), got {max_order}")
        self.max_order, self.tables_per_order = max_order, _positive(owner, "tables_per_order", tables_per_order)
        count = tables_per_order * (max_order - 1)
        if embedding_dim % count:
            raise ValueError(f"{owner}: d = {embedding_dim} must split into k (N - 1) = {count} equal widths")
        width = embedding_dim // count
        # one running index over every (order, table) pair: m, m + 2, m + 4, ... (marin's OverEncoding, whose test
        # asserts (17, 19, 21, 23) for m = 17, k = 2, N = 3), so no two tables share a modulus
        self.sizes = tuple(modulus + 2 * j for j in range((max_order - 1) * tables_per_order))
        self.tables = nn.ModuleList(nn.Embedding(size, width) for size in self.sizes)
        self.projections = nn.ModuleList(nn.Linear(width, embedding_dim, bias=False) for _ in self.sizes)
        for table in self.tables:
            nn.init.normal_(table.weight, std=0.02)

    def embedding_parameter_count(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        ids = _check_batch("OverEncodingEmbedding", ids, self.vocab_size)
        out, i = 0, 0
        for n in range(2, self.max_order + 1):
            for _ in range(self.tables_per_order):
                out = out + self.projections[i](self.tables[i](over_encoding_ids(ids, self.vocab_size, n,
                                                                                  self.sizes[i])))
                i += 1
        return out


def bigram_hash_ids(ids: torch.Tensor, buckets: int) -> torch.Tensor:
    """``(36313 t_i XOR 27191 t_{i-1}) mod (buckets - 1)``; position 0 gets ``buckets - 1``."""
    ids = _check_batch("bigram_hash_ids", ids)
    if buckets < 2:
        raise ValueError(f"bigram_hash_ids: buckets must be >= 2, got {buckets}")
    out = torch.full_like(ids, buckets - 1)
    out[:, 1:] = torch.bitwise_xor(36313 * ids[:, 1:], 27191 * ids[:, :-1]) % (buckets - 1)
    return out


class BigramHashEmbedding(nn.Module):
    """``scale * W E[bigram hash]``: a ``B x w`` table (N(0, 0.02)), a ``w -> d`` projection (zero at start) and a
    learned scale (0.05). Parameters: ``B w + w d + 1``."""

    def __init__(self, embedding_dim: int, buckets: int = 4096, width: int = 128) -> None:
        super().__init__()
        owner = "BigramHashEmbedding"
        self.embedding_dim = _positive(owner, "embedding_dim", embedding_dim)
        self.buckets = _positive(owner, "buckets", buckets)
        self.table = nn.Embedding(buckets, _positive(owner, "width", width))
        self.projection = nn.Linear(width, embedding_dim, bias=False)
        nn.init.normal_(self.table.weight, std=0.02)
        nn.init.zeros_(self.projection.weight)
        self.scale = nn.Parameter(torch.tensor(0.05))

    def embedding_parameter_count(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.scale * self.projection(self.table(bigram_hash_ids(ids, self.buckets)))


class ResidualBigramEmbedding(nn.Module):
    """The bigram table in the form of the public speedruns (KellerJordan/modded-nanogpt, record
    2026-01-19_BigramHashEmbedding): a ``B x d`` table at the model's full width, **zero** at start, indexed by
    :func:`bigram_hash_ids`, and added to the residual stream before **every** block ``i`` with its own learned
    scale ``lambdas[i]`` (0.1 at start). :meth:`forward` returns the looked-up rows; the model adds
    ``lambdas[i] * rows`` before block ``i``. Parameters: ``B d + layers``."""

    def __init__(self, embedding_dim: int, buckets: int, layers: int) -> None:
        super().__init__()
        owner = "ResidualBigramEmbedding"
        self.embedding_dim = _positive(owner, "embedding_dim", embedding_dim)
        self.buckets = _positive(owner, "buckets", buckets)
        self.table = nn.Embedding(buckets, embedding_dim)
        nn.init.zeros_(self.table.weight)
        self.lambdas = nn.Parameter(torch.full((_positive(owner, "layers", layers),), 0.1))

    def embedding_parameter_count(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.table(bigram_hash_ids(ids, self.buckets))


_ENGRAM_SPACES = re.compile(r"[ \t\r\n]+")


def engram_key(token: str, text: str | None = None) -> str:
    """The key Engram's ``CompressedTokenizer`` gives a token (deepseek-ai/Engram ``engram_demo_v1.py``): its
    decoded ``text`` (``tokenizer.decode([id])``; the token string itself for a vocabulary of plain words) under
    NFKC, NFD, accents stripped, lower case, runs of spaces, tabs and line breaks made one space, then stripped,
    except that a text that is a single space stays one; an empty result keeps the text, and a text holding U+FFFD
    (a piece that is part of a character) keeps the raw token string. So a byte-level ``Ġthe`` (" the") and ``the``
    share a key, and ``Ġ`` (" ") stays apart from ``g``."""
    text = token if text is None else text
    if "\ufffd" in text:
        return token
    norm = unicodedata.normalize("NFD", unicodedata.normalize("NFKC", text))
    norm = _ENGRAM_SPACES.sub(" ", "".join(c for c in norm if unicodedata.category(c) != "Mn").lower())
    norm = " " if norm == " " else norm.strip()
    return norm or text


def canonical_ids(strings: Sequence[str], texts: Sequence[str] | None = None) -> torch.Tensor:
    """``(V,)`` int64: each token's canonical id, the first id with the same :func:`engram_key`. ``texts`` are the
    tokens' decoded texts (a byte-level BPE's ``decode([id])``); without them the strings are read as text."""
    if texts is not None and len(texts) != len(strings):
        raise ValueError(f"canonical_ids: {len(texts)} decoded texts for {len(strings)} tokens; pass one per token")
    first: dict[str, int] = {}
    keys = (engram_key(w) for w in strings) if texts is None else (engram_key(w, t) for w, t in zip(strings, texts))
    return torch.tensor([first.setdefault(k, i) for i, k in enumerate(keys)], dtype=torch.int64)


def primes_above(start: int, count: int) -> list[int]:
    """The ``count`` smallest primes greater than ``start`` (trial division)."""
    out, n = [], start
    while len(out) < count:
        n += 1
        if n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1)):
            out.append(n)
    return out


def engram_mix(ids: torch.Tensor, multipliers: torch.Tensor) -> torch.Tensor:
    """``XOR_k (c_{t-k} * mult_k)`` in int64 (wrapping), ``k = 0..n-1`` (``c_{t-k}`` = 0 before the start)."""
    n = multipliers.numel()
    windows = _windows(ids, n).flip(-1)                           # newest first: c_t, c_{t-1}, ...
    products = windows * multipliers
    out = products[..., 0]
    for k in range(1, n):
        out = torch.bitwise_xor(out, products[..., k])
    return out


class EngramMemory(nn.Module):
    """Orders 2 and 3 (``orders``), ``heads`` heads per order each with a table of ``prime_h`` rows ``head_width``
    wide (primes just above ``rows``), the gate and the short convolution; ``forward(ids, hidden)``. Parameters:
    tables, ``W_k``, ``W_v`` (``e -> d``), two RMSNorm scales and the convolution."""

    def __init__(self, strings: Sequence[str], embedding_dim: int, rows: int, heads: int = 8, head_width: int = 16,
                 orders: Sequence[int] = (2, 3), kernel: int = 4, seed: int = 0, layer_id: int = 0,
                 texts: Sequence[str] | None = None) -> None:
        super().__init__()
        owner = "EngramMemory"
        self.embedding_dim = _positive(owner, "embedding_dim", embedding_dim)
        self.rows, self.heads = _positive(owner, "rows", rows), _positive(owner, "heads", heads)
        self.orders = tuple(_positive(owner, "order", n) for n in orders)
        self.register_buffer("canonical", canonical_ids(list(strings), None if texts is None else list(texts)))
        rng = np.random.default_rng(seed + 10007 * layer_id)
        mults = [rng.integers(1, 2**62, size=n, dtype=np.int64) * 2 + 1 for n in self.orders]   # odd
        for n, m in zip(self.orders, mults):
            self.register_buffer(f"mult_{n}", torch.from_numpy(m))
        self.primes = tuple(primes_above(rows, heads * len(self.orders)))
        self.tables = nn.ModuleList(nn.Embedding(p, head_width) for p in self.primes)
        for table in self.tables:
            nn.init.normal_(table.weight, std=0.02)
        width = head_width * len(self.primes)
        self.key, self.value = nn.Linear(width, embedding_dim, bias=False), nn.Linear(width, embedding_dim, bias=False)
        self.key_norm, self.hidden_norm = nn.RMSNorm(embedding_dim), nn.RMSNorm(embedding_dim)
        self.conv = nn.Conv1d(embedding_dim, embedding_dim, kernel, groups=embedding_dim, padding=kernel - 1)
        nn.init.zeros_(self.conv.weight)
        nn.init.zeros_(self.conv.bias)

    def embedding_parameter_count(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def retrieve(self, ids: torch.Tensor) -> torch.Tensor:
        """``e``: the concatenated head vectors ``(batch, length, heads * len(orders) * head_width)``."""
        ids = _check_batch("EngramMemory", ids, self.canonical.numel())
        canon = self.canonical[ids]
        parts, i = [], 0
        for n in self.orders:
            mix = engram_mix(canon, getattr(self, f"mult_{n}"))
            for _ in range(self.heads):
                parts.append(self.tables[i](mix % self.primes[i]))
                i += 1
        return torch.cat(parts, dim=-1)

    def forward(self, ids: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor:
        e = self.retrieve(ids)
        if hidden.shape != (*ids.shape, self.embedding_dim):
            raise ValueError(f"EngramMemory: hidden must be (batch, length, d) = {(*ids.shape, self.embedding_dim)}, "
                             f"got {tuple(hidden.shape)}")
        s = (self.key_norm(self.key(e)) * self.hidden_norm(hidden)).sum(-1, keepdim=True) / self.embedding_dim ** 0.5
        v = torch.sigmoid(torch.sign(s) * s.abs().sqrt()) * self.value(e)
        conv = self.conv(v.transpose(1, 2))[..., : v.shape[1]].transpose(1, 2)      # causal: the first L outputs
        return v + conv
