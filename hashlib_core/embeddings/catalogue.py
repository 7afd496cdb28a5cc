"""One catalogue of token-embedding families: every family built by one factory from (the vocabulary's token
strings, a parameter budget, a width ``d``), taking token ids and returning ``(..., d)`` vectors.

:func:`build` returns a :class:`CatalogueEmbedding`: the family's module and, where the family hashes the token
strings, the per-id **codes** (row ids, bits or features) in a buffer, so ids become codes by one gather and a saved
state dict reloads the same hashes (every hash is also a function of the strings and the seed: building again gives
the same codes). :data:`FAMILIES` lists each family with its source (paper, and the public code file it follows where
one exists) and how its size follows the budget:

* ``"budget"``: its table (or MLP, cores or rank) is sized to the largest shape within the budget;
* ``"fixed"``: its parameter count does not depend on the budget (HashFormers' Pool / Add / Proj over a 128-bit
  code, pNLP-Mixer's projection of a 512-wide feature): it is built whatever the budget, at its own size;
* ``"full"``: the unhashed ``V x d`` table (the control), only at a budget of at least ``V d``;
* ``"none"``: no parameters (EELBERT's computed n-gram vectors).

Token strings are a vocabulary's entries in id order; a WordPiece continuation marker (``##``) is kept in the string
a family hashes, except by the families that hash characters (T-FREE, the MinHash projection), which read the piece
without it, as their sources do.
"""
from __future__ import annotations

import functools
import math
import os
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import torch
from torch import nn

from hashlib_core.embeddings.catalogue_embedding import CatalogueEmbedding
from hashlib_core.embeddings.codes import mmh3_codes, padded, qr_modulus, strip_marker, tfree_rows, tfree_word_rows
from hashlib_core.embeddings.compressed import (DenseHashEmbedding, FeatureProjection, ImportanceHashEmbedding,
                                                QuotientRemainderEmbedding, RobeEmbedding, RowCombinationEmbedding)
from hashlib_core.hashing.base import validate_tokens
from hashlib_core.embeddings.factorized import (build_ce, build_hashed_net, build_low_rank, build_tt, low_rank_minimum,
                                                tt_minimum)

__all__ = ["Family", "FAMILIES", "CatalogueEmbedding", "build", "family", "minimum_budget", "VERSIONS", "code_version",
           "mmh3_codes", "tfree_rows", "tfree_word_rows", "qr_modulus"]


@dataclass(frozen=True)
class Family:
    """One family of the catalogue: its name, what it is, its source and how its size follows the budget."""

    name: str
    description: str
    source: str
    sizing: str          # "budget", "fixed", "full" or "none"
    builder: Callable[["_Spec"], tuple[nn.Module, torch.Tensor | None]]


@dataclass(frozen=True)
class _Spec:
    strings: tuple[str, ...]
    budget: int
    dim: int
    seed: int

    @property
    def vocab_size(self) -> int:
        return len(self.strings)

    def rows(self, per_row: int | None = None) -> int:
        """Rows of ``per_row`` numbers (default ``d``) within the budget (at least 1)."""
        return max(1, self.budget // (per_row or self.dim))


# --------------------------------------------------------------------------------------------------------- builders
class _FullTable(nn.Module):
    """The unhashed table: ``nn.Embedding(V, d)`` with the catalogue's N(0, 0.02) initialisation."""

    def __init__(self, vocab_size: int, embedding_dim: int) -> None:
        super().__init__()
        self.embedding_dim = embedding_dim
        self.table = nn.Embedding(vocab_size, embedding_dim)
        nn.init.normal_(self.table.weight, std=0.02)

    def embedding_parameter_count(self) -> int:
        return self.table.weight.numel()

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.table(ids)


def _full(s: _Spec):
    if s.budget < s.vocab_size * s.dim:
        raise ValueError(f"the full table needs {s.vocab_size * s.dim:,} parameters, over the budget {s.budget:,}")
    return _FullTable(s.vocab_size, s.dim), None


def _rows(num_hashes: int, combine: str):
    def build(s: _Spec):
        rows = s.rows()
        return RowCombinationEmbedding(rows, s.dim, combine), mmh3_codes(s.strings, num_hashes, rows, s.seed)
    return build


def _md5_emb(s: _Spec):
    from hashlib_core.hashing.md5 import KeyedMD5Hasher

    rows = s.rows()
    codes = KeyedMD5Hasher(num_buckets=rows, offset=0).batch_index(s.strings).unsqueeze(-1)
    return RowCombinationEmbedding(rows, s.dim, "sum"), codes


@functools.lru_cache(maxsize=8)
def _lsh_codes(rows: int, strings: tuple[str, ...]) -> torch.Tensor:
    """The LSH row of every vocabulary string (deterministic: the released draws, no seed), computed once per
    (rows, vocabulary) in a process: a chapter builds the same family at one size for several learning rates and
    seeds, and the permutation LSH of a 30K-piece vocabulary takes seconds."""
    from hashlib_core.bpe import roberta_bpe
    from hashlib_core.hashing.lsh import LSHBucketHasher

    hasher = LSHBucketHasher(roberta_bpe(), num_buckets=rows, offset=0)
    return hasher.batch_index([strip_marker(w) for w in strings]).unsqueeze(-1)


def _lsh_emb(s: _Spec):
    rows = s.rows()
    return RowCombinationEmbedding(rows, s.dim, "sum"), _lsh_codes(rows, s.strings).clone()


def _importance(s: _Spec):
    k = 2
    rows = s.rows(s.dim + k)      # K = B weight rows of k numbers beside B pool rows of d
    codes = torch.cat([mmh3_codes(s.strings, k, rows, s.seed), mmh3_codes(s.strings, 1, rows, s.seed + k)], dim=-1)
    return ImportanceHashEmbedding(rows, s.dim, k, rows), codes


def _qr(s: _Spec):
    return QuotientRemainderEmbedding(s.vocab_size, qr_modulus(s.vocab_size, s.rows()), s.dim, "mult"), None


def _robe(s: _Spec):
    return RobeEmbedding(s.vocab_size, s.budget, s.dim, chunk=min(16, s.dim), seed=s.seed), None


def _dhe(s: _Spec):
    k = 1024
    hidden = math.floor((s.budget - s.dim) / (k + 1 + s.dim))
    if hidden < 1:
        raise ValueError(f"DHE with k = {k} hashes needs at least {k + 1 + 2 * s.dim:,} parameters")
    return DenseHashEmbedding(s.vocab_size, s.dim, hidden, k, seed=s.seed), None


def _superbloom(s: _Spec):
    from hashlib_core.hashing.bloom import BloomHashMaps

    m = 2
    per_map = max(1, s.rows() // m)
    alpha = -(-s.vocab_size // per_map)
    maps = BloomHashMaps(s.vocab_size, alpha, m, seed=s.seed, special_tokens=())
    # the offsets on the table's own device: a model built under a meta-device context (from_pretrained) would
    # otherwise add a meta arange to a CPU table
    codes = maps.table + torch.arange(m, device=maps.table.device) * maps.tokens_per_map
    return RowCombinationEmbedding(m * maps.tokens_per_map, s.dim, "sum"), codes


def _tfree(s: _Spec):
    rows = s.rows()
    population = min(10, rows)
    return (RowCombinationEmbedding(rows, s.dim, "sum"),
            padded([tfree_word_rows(strip_marker(w), rows, population, shared=min(2, population))
                    for w in s.strings]))


def _bits(kind: str):
    def build(s: _Spec):
        from hashlib_core.embeddings.hashed import AdditiveEmbedding, PearsonProjection, PoolEmbedding
        from hashlib_core.hashing.md5 import KeyedMD5Hasher

        bits = KeyedMD5Hasher(offset=0).batch_bits(s.strings)
        module = {"pool": lambda: PoolEmbedding(128, s.dim, codeword_dropout=0.0),
                  # Add stores its T differences (the HashFormers chapter's profiles do too): the shared part of
                  # the paper's codebooks outruns the word parts under Adam, and BERT's token-type row, added to
                  # every token, carries it instead
                  "add": lambda: AdditiveEmbedding(128, s.dim, storage="differences"),
                  "proj": lambda: PearsonProjection(128, s.dim)}[kind]()
        return module, bits
    return build


#: gated signatures: hashes per token and the gate's width
_GATED_H, _GATED_DZ = 2, 64


def _gated_fixed(dim: int) -> int:
    """The gate's and the adapter's parameters (what the budget pays before any bucket)."""
    return dim * _GATED_DZ + 2 * _GATED_DZ + 1 + dim * dim + dim


def _gated(s: _Spec):
    from hashlib_core.embeddings.multihash import GatedCompositionalEmbedding
    from hashlib_core.hashing.registry import SignatureRegistry

    h, dz = _GATED_H, _GATED_DZ
    buckets = (s.budget - _gated_fixed(s.dim)) // (h * s.dim)
    # the registry needs room: at most half of the (B - 1)^h signatures taken (near full, rehashing one coordinate
    # of a crowded prefix can exhaust its tries)
    if buckets < 2 or (buckets - 1) ** h < 2 * s.vocab_size:
        raise ValueError(f"gated signatures: {max(buckets, 0)} buckets x {h} hashes leave too few free signatures for "
                         f"{s.vocab_size:,} tokens (at most half of them may be taken); raise the budget to "
                         f"{minimum_budget('gated-signatures', s.vocab_size, s.dim):,}")
    registry = SignatureRegistry(h, buckets)
    ids = registry.register(s.strings)
    if len(registry) != s.vocab_size:          # the signatures must be collision-free: one per distinct string
        again = next(i for i, k in enumerate(ids.tolist()) if k != i)
        raise ValueError(f"gated signatures give every token its own signature, but the vocabulary repeats "
                         f"{s.strings[again]!r} (ids {int(ids[again])} and {again}); pass distinct strings")
    module = GatedCompositionalEmbedding(s.vocab_size, h, buckets, s.dim, dz)
    module.set_signature_table(registry.table())
    return _IdsOnly(module), None


class _IdsOnly(nn.Module):
    """A module that embeds ids itself (its signatures are its own buffer)."""

    def __init__(self, module: nn.Module) -> None:
        super().__init__()
        self.inner, self.embedding_dim = module, module.embedding_dim

    def embedding_parameter_count(self) -> int:
        return self.inner.embedding_parameter_count()

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.inner(ids)


def _dynamic(s: _Spec):
    from hashlib_core.embeddings.dynamic import DynamicHashEmbedding

    return _IdsOnly(DynamicHashEmbedding(list(s.strings), s.dim)), None


def _minhash(s: _Spec):
    from hashlib_core.hashing.minhash import MinHashFingerprinter, counting_bloom_filter

    fingerprinter = MinHashFingerprinter(num_hashes=256)
    prints = np.stack([fingerprinter.token_fingerprint([w]) for w in s.strings])
    counts = counting_bloom_filter(prints, 512).astype(np.int16)
    return FeatureProjection(512, s.dim), torch.from_numpy(counts)


FAMILIES: dict[str, Family] = {f.name: f for f in (
    Family("full", "the unhashed V x d table (the control)", "-", "full", _full),
    Family("hashing-trick", "one MurmurHash3 of the string into B rows", "Weinberger et al. 2009", "budget",
           _rows(1, "sum")),
    Family("bloom", "k = 2 hashes into B rows, their mean", "Serra & Karatzoglou 2017; maciejkula/spotlight "
           "spotlight/layers.py BloomEmbedding", "budget", _rows(2, "mean")),
    Family("hash-embedding", "k = 2 rows of a shared pool weighted by k learned importance weights of a hashed row",
           "Svenstrup et al. 2017; YannDubs/Hash-Embeddings hashembed/embedding.py", "budget", _importance),
    Family("quotient-remainder", "rows i // M and i % M of two tables, multiplied", "Shi et al. 2020; "
           "facebookresearch/dlrm tricks/qr_embedding_bag.py", "budget", _qr),
    Family("robe", "d / Z chunks of Z numbers at hashed offsets of one shared array", "Desai et al. 2022; "
           "thomasahle/cce cce/robe.py", "budget", _robe),
    Family("dhe", "1,024 dense hash values in [-1, 1] through an MLP (no table)", "Kang et al. 2021; "
           "thomasahle/cce cce/dhe.py", "budget", _dhe),
    Family("hashed-nets", "every entry of the virtual V x d table a signed, hashed share of one array",
           "Chen et al. 2015 (HashedNets); thomasahle/cce cce/hashnet.py", "budget", build_hashed_net),
    Family("ce-concat", "k = 4 hashes, each choosing a row of its own d / 4 columns; the slices concatenated",
           "Shi et al. 2020 (concatenation); thomasahle/cce cce/ce.py", "budget", build_ce),
    Family("tt-rec", "a train of three cores indexed by the id's base-n digits (rank set by the budget)",
           "Yin et al. 2021 (TT-Rec); thomasahle/cce cce/tt.py", "budget", build_tt),
    Family("low-rank", "ALBERT's factorised table: V x r, then a projection to d (no hashing)",
           "Lan et al. 2020 (ALBERT); thomasahle/cce cce/low_dimensional.py", "budget", build_low_rank),
    Family("md5-emb", "HashFormers' Emb: the (HMAC-)MD5 digest mod B rows", "Xue & Aletras 2022, §3.1",
           "budget", _md5_emb),
    Family("lsh-emb", "HashFormers' LSH-Emb: the released permutation LSH of the word's roberta-base BPE "
           "features, mod B rows (its released draws: the seed does not change it)", "Xue & Aletras 2022, §3.3",
           "budget", _lsh_emb),
    Family("md5-pool", "HashFormers' Pool over the 128-bit MD5 code", "Xue & Aletras 2022, Eq. 1", "fixed",
           _bits("pool")),
    Family("md5-add", "HashFormers' Add over the 128-bit MD5 code, stored as its 128 codebook differences",
           "Xue & Aletras 2022, Eq. 2", "fixed",
           _bits("add")),
    Family("md5-proj", "HashFormers' Proj over the 128-bit MD5 code", "Xue & Aletras 2022, Eq. 3", "fixed",
           _bits("proj")),
    Family("gated-signatures", "MultiHashFormer's H = 2 unique signatures, gated mixture and adapter",
           "Xue, Yamaguchi & Aletras, §3.1", "budget", _gated),
    Family("superbloom", "m = 2 alpha-to-one maps, the sum of the two rows (input side)", "Anonymous (ICLR 2020 "
           "submission), Superbloom §3", "budget", _superbloom),
    Family("t-free", "the sum of the rows its byte trigrams activate (10 per trigram, 2 shared with lower case)",
           "Deiseroth et al. 2024; Aleph-Alpha/trigrams trigram_tokenizer.py", "budget", _tfree),
    Family("dynamic-ngram", "EELBERT's computed n-gram vectors (no parameters)", "EELBERT blog; "
           "hashlib_core.embeddings.dynamic", "none", _dynamic),
    Family("minhash-projection", "pNLP-Mixer's MinHash counting Bloom filter (256 hashes, 512 counters) through its "
           "bottleneck", "Fusco et al. 2023, §3.1-3.2", "fixed", _minhash),
)}


#: each family's code version where it is not 1: raised whenever a change alters what a family computes (its codes,
#: rows or shapes), so that the checkpoints keyed on it (:func:`code_version`) are retrained, not silently reused.
#: t-free 2: the released lower-case sharing rule (the last 2 sorted rows, letters and spaces only).
VERSIONS: dict[str, int] = {"t-free": 2}


def code_version(name: str) -> tuple[str, ...]:
    """What a checkpoint's digest adds for family ``name``: ``()`` at version 1 (so the checkpoints of unchanged
    families stay valid), else ``("v<n>",)``."""
    family(name)
    version = VERSIONS.get(name, 1)
    return () if version == 1 else (f"v{version}",)


def minimum_budget(name: str, vocab_size: int, dim: int) -> int:
    """The least budget within which family ``name`` builds for ``vocab_size`` tokens at width ``dim``: :func:`build`
    refuses any smaller one. The gated signatures need enough buckets for distinct signatures, the quotient-remainder
    pair two tables that tell every id apart, DHE one hidden unit, TT-Rec and the low-rank table rank 1; every other
    budget family its smallest shape (one row of ``d`` for a row table, plus the importance weights of the hash
    embedding, two rows for Superbloom's). A family whose size does not follow the
    budget (``"fixed"``, ``"none"``) gives 1; the full table ``V d``."""
    if name == "gated-signatures":
        buckets = math.isqrt(2 * vocab_size - 1) + 2            # the least B with (B - 1)^2 >= 2 V
        return _gated_fixed(dim) + _GATED_H * dim * buckets
    if name == "quotient-remainder":
        return dim * min(m + -(-vocab_size // m) for m in range(1, math.isqrt(vocab_size) + 2))
    if name == "dhe":
        return 1024 + 1 + 2 * dim
    if name == "tt-rec":
        return tt_minimum(vocab_size, dim)
    if name == "low-rank":
        return low_rank_minimum(vocab_size, dim)
    if name == "full":
        return vocab_size * dim
    if family(name).sizing != "budget":
        return 1
    return _LEAST.get(name, lambda v, d: d)(vocab_size, dim)       # a row table: one row of d


#: the smallest shapes of the budget families that are not one row of ``d`` (the test builds every family at its
#: minimum and one parameter under it): ROBE's and HashedNets' shared arrays take the budget itself, the hash
#: embedding's one row of d comes with its k = 2 importance weights, Superbloom's two maps one row each
_LEAST: dict[str, Callable[[int, int], int]] = {"robe": lambda v, d: 1, "hashed-nets": lambda v, d: 1,
                                               "hash-embedding": lambda v, d: d + 2,
                                               "superbloom": lambda v, d: 2 * d}


#: bytes a parameter takes (float32): a budget whose parameters cannot fit in this machine's memory is refused
_PARAMETER_BYTES = 4


def _memory_bytes() -> int | None:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return None


def family(name: str) -> Family:
    """The family called ``name``; ``KeyError`` naming the known ones."""
    if name not in FAMILIES:
        raise KeyError(f"unknown family {name!r}; the catalogue has {', '.join(FAMILIES)}")
    return FAMILIES[name]


def build(name: str, strings: Sequence[str], budget: int, embedding_dim: int, seed: int = 0) -> CatalogueEmbedding:
    """Family ``name`` for the vocabulary ``strings`` (in id order), sized to at most ``budget`` parameters (a
    ``"fixed"`` family: its own size; ``"none"``: no parameters), ``d = embedding_dim`` wide, its hashes drawn with
    ``seed``."""
    spec_family = family(name)
    if isinstance(strings, (str, bytes)):
        raise TypeError("build: strings must be the vocabulary's list of token strings in id order, got a single "
                        f"{type(strings).__name__}; wrap it in a list")
    strings = tuple(strings)
    if not strings or not all(isinstance(w, str) and w for w in strings):
        raise ValueError("build: strings must be the vocabulary's non-empty token strings, in id order")
    if spec_family.name != "dynamic-ngram":     # the rolling n-gram hash reads code points (its documented rule)
        strings = tuple(validate_tokens(strings))
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ValueError(f"build: budget must be a positive number of parameters, got {budget!r:.40}")
    if isinstance(embedding_dim, bool) or not isinstance(embedding_dim, int) or embedding_dim < 1:
        raise ValueError(f"build: embedding_dim must be an int >= 1, got {embedding_dim!r:.40}")
    memory = _memory_bytes()
    if spec_family.sizing == "budget" and memory is not None and budget * _PARAMETER_BYTES > memory:
        raise ValueError(f"build: {name} sized to a budget of {budget:,} parameters needs "
                         f"{budget * _PARAMETER_BYTES / 2**30:,.1f} GiB of float32 weights, more than this machine's "
                         f"{memory / 2**30:,.1f} GiB of memory; give a smaller budget")
    torch_state = torch.random.get_rng_state()
    try:
        torch.manual_seed(seed)
        module, codes = spec_family.builder(_Spec(strings, budget, embedding_dim, seed))
    finally:
        torch.random.set_rng_state(torch_state)
    count = module.embedding_parameter_count()
    if spec_family.sizing == "budget" and count > budget:
        raise ValueError(f"build: {name}'s smallest shape for {len(strings):,} tokens at d = {embedding_dim} holds "
                         f"{count:,} parameters, over the budget {budget:,}; give a budget of at least "
                         f"{count:,} (minimum_budget({name!r}, {len(strings)}, {embedding_dim}))")
    return CatalogueEmbedding(name, module, codes, len(strings))
