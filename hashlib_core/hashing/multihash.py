"""MurmurHash3 multi-hash signatures as in MultiHashFormer (Xue, Yamaguchi & Aletras, §3.1 "Multi-Hash Indexing").

A token ``w`` gets ``H`` coordinates, one per hash function, each in ``1 .. B-1``::

    H_i(w) = MMH3(w, seed_i) mod (B - 1) + 1        (bucket 0 is reserved for padding: H_i(pad) = 0)

Exactly as the released code (``HUIYINXUE/MHF``, ``Qwen3Model.initialize_hash_map``; implementation notes A3):
``MMH3`` is ``mmh3.hash128(token, seed=i)`` with ``seed_i = i`` for ``i = 0 .. H-1``, which is

* the **x64** variant of MurmurHash3_128 (``x64arch=True``; the x86 variant gives different numbers),
* returned **unsigned**, in ``[0, 2**128)`` (``signed=False``),
* computed over the token's **UTF-8 bytes** (``mmh3.hash128(s) == mmh3.hash128(s.encode('utf-8'))``).

This module calls mmh3 with those choices spelled out **as keywords** (``seed=, x64arch=True, signed=False``), so a
change of mmh3's defaults cannot change our numbers. Keywords are required, not style: mmh3 5.2.0 and 5.3.1 return
the *signed* value whenever a fourth positional argument is given, even ``False``.

A change of mmh3 itself could change our numbers; :func:`mmh3_fingerprint` summarises the installed mmh3 in one
string that :class:`~hashlib_core.hashing.registry.SignatureRegistry` files store and check. The golden vectors
in the tests were computed with mmh3 5.3.1; mmh3 5.2.0 (pinned by the official code) has the same fingerprint.

Tokens follow :func:`hashlib_core.hashing.base.validate_token` (any valid ``str`` incl. ``''``; lone surrogates raise
``ValueError`` *before* reaching mmh3, which crashes on them; non-``str`` raises ``TypeError``).
"""
from __future__ import annotations

import hashlib
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from importlib import metadata as importlib_metadata
from typing import Any, Iterable

import mmh3
import numpy as np

from hashlib_core.hashing.base import TokenHasher, check_int, validate_token, validate_tokens

__all__ = ["MAX_SEED", "mmh3_bucket", "mmh3_fingerprint", "mmh3_version", "MMH3MultiHasher", "base_signatures",
           "pack_rows"]

#: mmh3 seeds are unsigned 32-bit integers.
MAX_SEED = 2**32 - 1

#: Largest bucket count we accept: coordinates must fit in int64 tensors.
MAX_BUCKETS = 2**62

_HASH128 = mmh3.hash128


def _hash128(token: str, seed: int) -> int:
    """``mmh3.hash128`` exactly as MultiHashFormer calls it: x64 variant, unsigned, options passed by keyword.

    The keywords matter: in mmh3 5.2.0 and 5.3.1 any fourth *positional* argument selects the signed result
    whatever its value (``mmh3.hash128(b"abc", 5, True, False)`` is negative), which would silently change every
    bucket. Callers must have validated ``token`` (mmh3 crashes on lone surrogates).
    """
    return _HASH128(token, seed=seed, x64arch=True, signed=False)


#: Probe tokens for :func:`mmh3_fingerprint`: ASCII, empty, multi-byte UTF-8, non-BMP, NUL, long.
_PROBE_TOKENS = ("play", "plays", "", " ", "Ġthe", "日本語", "кошка", "😀🎉", "a\x00b", "x" * 1000)
_PROBE_SEEDS = (0, 1, 2, 3, 4, 5, 1000, MAX_SEED)


def mmh3_bucket(token: str, seed: int, num_buckets: int) -> int:
    """One coordinate: ``mmh3.hash128(utf8(token), seed, x64, unsigned) % (num_buckets - 1) + 1``."""
    check_int("seed", seed, minimum=0, maximum=MAX_SEED)
    check_int("num_buckets", num_buckets, minimum=2, maximum=MAX_BUCKETS)
    return _hash128(validate_token(token), seed) % (num_buckets - 1) + 1


def _column(tokens: list[str], seed: int, modulus: int) -> list[int]:
    """Bucket values for already-validated tokens (the hot loop: :func:`_hash128` inlined, one modulo per token)."""
    h = _HASH128
    return [h(t, seed=seed, x64arch=True, signed=False) % modulus + 1 for t in tokens]


def mmh3_version() -> str:
    """The installed mmh3 distribution's version string."""
    try:
        return importlib_metadata.version("mmh3")
    except importlib_metadata.PackageNotFoundError:
        return "unknown"


def mmh3_fingerprint() -> str:
    """SHA-256 (hex) of ``mmh3.hash128`` on fixed probe tokens and seeds: equal fingerprints, equal hash function.

    Two mmh3 installations with the same fingerprint give identical signatures for the probes, which cover ASCII,
    the empty string, multi-byte and non-BMP UTF-8, NUL and a long token, and seeds 0 to 2**32-1.
    """
    lines = [
        f"{t.encode('utf-8').hex()}\t{s}\t{_hash128(t, s)}\n"
        for t in _PROBE_TOKENS
        for s in _PROBE_SEEDS
    ]
    return hashlib.sha256("".join(lines).encode("ascii")).hexdigest()


class MMH3MultiHasher(TokenHasher):
    """``H`` MurmurHash3 functions with ``B`` buckets each: a token's signature is ``(H_0(w), ..., H_{H-1}(w))``.

    Coordinate ``i`` is ``mmh3.hash128(token, seed=i) % (B - 1) + 1`` (MultiHashFormer §3.1), so every coordinate
    lies in ``1 .. B-1`` and 0 stays free for padding. These are the *base* signatures: distinct tokens may share
    one. :class:`~hashlib_core.hashing.registry.SignatureRegistry` makes them unique by rehashing the last coordinate.

    Parameters
    ----------
    num_hashes:
        ``H >= 1``.
    num_buckets:
        ``B >= 2`` (``B = 2`` leaves a single usable bucket per coordinate).

    ``hash(token)`` is :meth:`signature` (a tuple); ``hash_batch(tokens)`` is :meth:`batch` (an ``(n, H)`` array).
    """

    name = "mmh3_multi"

    def __init__(self, num_hashes: int, num_buckets: int) -> None:
        self.num_hashes = check_int(
            "num_hashes", num_hashes, minimum=1, maximum=MAX_SEED + 1,
            fix="a signature needs at least one hash function",
        )
        self.num_buckets = check_int(
            "num_buckets", num_buckets, minimum=2, maximum=MAX_BUCKETS,
            fix="bucket 0 is reserved for padding, so at least one more bucket is needed",
        )

    @property
    def seeds(self) -> tuple[int, ...]:
        """The seed of each coordinate: ``(0, 1, ..., H-1)``."""
        return tuple(range(self.num_hashes))

    def coordinate(self, token: str, seed: int) -> int:
        """The bucket of ``token`` under ``seed`` (used for the registry's rehashing with seeds ``>= H``)."""
        return mmh3_bucket(token, seed, self.num_buckets)

    def signature(self, token: str) -> tuple[int, ...]:
        """The base signature of one token, a tuple of ``H`` ints in ``1 .. B-1``."""
        token = validate_token(token)
        m = self.num_buckets - 1
        return tuple(_hash128(token, s) % m + 1 for s in self.seeds)

    def columns(self, tokens: Iterable[str]) -> list[list[int]]:
        """Base coordinates column by column: ``columns(tokens)[i][j]`` is coordinate ``i`` of token ``j``."""
        tokens = validate_tokens(tokens)
        return [_column(tokens, s, self.num_buckets - 1) for s in self.seeds]

    def batch(self, tokens: Iterable[str]) -> np.ndarray:
        """Base signatures of many tokens as an ``int64`` array of shape ``(n, H)``."""
        cols = self.columns(tokens)
        out = np.empty((len(cols[0]), self.num_hashes), dtype=np.int64)
        for i, col in enumerate(cols):
            out[:, i] = col
        return out

    def hash(self, token: str) -> tuple[int, ...]:
        return self.signature(token)

    def hash_batch(self, tokens: Iterable[str]) -> np.ndarray:
        return self.batch(tokens)

    def params(self) -> dict[str, Any]:
        return {"num_hashes": self.num_hashes, "num_buckets": self.num_buckets}


# ---------------------------------------------------------------------------------------------- registry workers
def _signature_rows(tokens: list[str], num_hashes: int, modulus: int) -> np.ndarray:
    """Base signatures of validated tokens as an ``(n, H)`` int64 array (``modulus = B - 1``)."""
    out = np.empty((len(tokens), num_hashes), dtype=np.int64)
    for seed in range(num_hashes):
        out[:, seed] = _column(tokens, seed, modulus)
    return out


_WORKER_TOKENS: list[str] = []


def _init_worker(tokens: list[str]) -> None:
    """Pool initialiser: keep the tokens in the worker (inherited without pickling under ``fork``)."""
    global _WORKER_TOKENS
    _WORKER_TOKENS = tokens


def _base_signatures_range(args: tuple[int, int, int, int]) -> np.ndarray:
    """Process-pool task: base signatures of ``_WORKER_TOKENS[start:stop]``."""
    start, stop, num_hashes, modulus = args
    return _signature_rows(_WORKER_TOKENS[start:stop], num_hashes, modulus)


def _pool_context() -> multiprocessing.context.BaseContext:
    # fork starts workers in milliseconds and without re-importing torch; the workers only call mmh3.
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")



def base_signatures(tokens: list[str], num_hashes: int, modulus: int, workers: int = 1) -> np.ndarray:
    """``(n, H)`` base signatures (``mmh3.hash128(token, seed=i) % modulus + 1``, validated tokens), computed in
    this process or in ``workers`` processes (the same function on slices: bit-identical results)."""
    check_int("workers", workers, minimum=1)
    if workers == 1 or len(tokens) < 2:
        return _signature_rows(tokens, num_hashes, modulus)
    size = -(-len(tokens) // workers)
    ranges = [(i, min(i + size, len(tokens)), num_hashes, modulus) for i in range(0, len(tokens), size)]
    with ProcessPoolExecutor(
        max_workers=len(ranges), mp_context=_pool_context(), initializer=_init_worker, initargs=(tokens,)
    ) as pool:
        return np.concatenate(list(pool.map(_base_signatures_range, ranges)), axis=0)


def pack_rows(rows: np.ndarray, bits: int) -> list[int]:
    """Pack each row of non-negative ints below ``2**bits`` into one Python int: column ``i`` at bit ``i*bits``.

    Packing is injective (equal keys <=> equal rows). Up to ``64 // bits`` columns are packed at a time in numpy
    (uint64); wider rows combine those 64-bit parts with Python's unbounded ints. A row of zero columns packs to 0.
    """
    n, width = rows.shape
    if width == 0:
        return [0] * n
    per = 64 // bits
    keys: list[int] = []
    for start in range(0, width, per):
        block = rows[:, start : start + per].astype(np.uint64)
        packed = np.zeros(n, dtype=np.uint64)
        for i in range(block.shape[1]):
            packed |= block[:, i] << np.uint64(i * bits)
        part = packed.tolist()
        shift = start * bits
        keys = part if start == 0 else [k | (p << shift) for k, p in zip(keys, part)]
    return keys
