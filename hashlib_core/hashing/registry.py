"""A vocabulary of MultiHashFormer signatures in which every token's signature is unique (MHF §3.1, §5 expansion).

MultiHashFormer (Xue, Yamaguchi & Aletras, §3.1) gives every token an ``H``-coordinate MurmurHash3 signature (see
:mod:`hashlib_core.hashing.multihash`) and guarantees "a collision-free multi-hash ID" by "an iterative rehashing
strategy": if a new token's signature is already taken, the seed of the final hash function is changed until an
unused signature is found. Vocabulary expansion (§5) registers new tokens "without adding new parameters" and the
official code asserts that old signatures do not change.

The rule implemented here, for the ``j``-th registered token ``w`` (ids count from 0 in registration order):

* coordinates ``i = 0 .. H-2`` are ``mmh3.hash128(w, seed=i) % (B-1) + 1`` and never change;
* the last coordinate uses seed ``H-1+r`` for the **smallest** ``r = 0, 1, 2, ...`` such that the whole signature
  differs from the signature of **every** token registered before ``w``. ``r`` is the token's *rehash count*;
  ``H-1+r`` its *last seed*.

The official code (``Qwen3Model.initialize_hash_map``, implementation notes A3) checks a rehashed token only against
the last token seen with the same prefix (it overwrites a set with a one-element dict), so two tokens can end up
with the same signature. Here every registered signature is kept, packed into one Python ``int``, in a ``set``, and
uniqueness is global. Because a token's signature depends only on the tokens before it, registering tokens later
(vocabulary expansion) never changes an existing signature, and registering a list in several calls gives exactly
the same table as registering it in one call.

Rehashing changes only the last coordinate, so at most ``B-1`` tokens can share a prefix (their first ``H-1``
coordinates); :meth:`SignatureRegistry.register` checks this (and the total capacity ``(B-1)**H``) before changing
anything, and refuses with a clear error. Registration is all-or-nothing: on any error the registry is unchanged.

Training needs no string work: :meth:`SignatureRegistry.table` exports the ``V x H`` signatures as a ``torch.long``
tensor, and a batch of token ids becomes a batch of signatures by one gather (``table[ids]``).

Token contract: as :func:`hashlib_core.hashing.base.validate_token` (UTF-8 bytes of any valid ``str``; lone
surrogates raise ``ValueError``; non-``str`` raises ``TypeError``), except that the registry **refuses the empty
string** with ``ValueError``: an empty token is almost always a tokenisation bug, and a vocabulary entry that
matches no text would silently take a signature.

File format (``save``/``load``), version 1, one file written atomically::

    HLCSIGREG\\n                  magic line
    <n>\\n                        byte length of the header, in decimal
    <header JSON, n bytes>\\n     H, B, the hashing and rehash rules, mmh3 version and fingerprint, array layout,
                                 and the SHA-256 of (canonical header without "sha256") + payload
    <payload>                    token_offsets (int64, V+1, in code points), token_text (UTF-8),
                                 signatures (int64, V x H), rehash_counts (int64, V), little-endian, in that order
"""
from __future__ import annotations

import hashlib
import io
import json
import multiprocessing
import os
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import torch

from hashlib_core._io import atomic_write_bytes
from hashlib_core.hashing.base import check_int, validate_token, validate_tokens
from hashlib_core.hashing.multihash import (
    MAX_SEED,
    MMH3MultiHasher,
    _column,
    _hash128,
    mmh3_fingerprint,
    mmh3_version,
)

__all__ = ["SignatureRegistry", "RegistryFileError", "FORMAT_NAME", "FORMAT_VERSION"]

FORMAT_NAME = "hashlib_core.SignatureRegistry"
FORMAT_VERSION = 1
_MAGIC = b"HLCSIGREG\n"

#: A token is rehashed at most ``_MAX_REHASH_FACTOR * (B - 1)`` times. The prefix check guarantees a free value for
#: the last coordinate, and a random hash needs more than 64 * (B - 1) tries with probability below e**-64.
_MAX_REHASH_FACTOR = 64

_SEED_RULE = "coordinate i < H-1 uses seed i; the last coordinate uses seed H-1+r, r = rehash count (0 = none)"
_BUCKET_RULE = "mmh3.hash128(utf8(token), seed, x64arch=True, signed=False) % (num_buckets - 1) + 1"
_UNIQUENESS_RULE = (
    "r is the smallest value such that the signature differs from that of every token registered earlier"
)
_ARRAYS = (("token_offsets", "<i8"), ("token_text", "|u1"), ("signatures", "<i8"), ("rehash_counts", "<i8"))


class RegistryFileError(ValueError):
    """A registry file that cannot be loaded: corrupted, another format, or written for other settings."""


def _base_signatures(tokens: list[str], num_hashes: int, modulus: int) -> np.ndarray:
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
    return _base_signatures(_WORKER_TOKENS[start:stop], num_hashes, modulus)


def _pack_rows(rows: np.ndarray, bits: int) -> list[int]:
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


def _pool_context() -> multiprocessing.context.BaseContext:
    # fork starts workers in milliseconds and without re-importing torch; the workers only call mmh3.
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


class SignatureRegistry:
    """Token -> id -> globally unique MultiHashFormer signature, expandable, exportable and saveable.

    Parameters
    ----------
    num_hashes:
        ``H >= 1`` hash functions (coordinates per signature).
    num_buckets:
        ``B >= 2`` buckets per function; coordinates lie in ``1 .. B-1`` (0 is padding, which has no id here).

    Examples
    --------
    >>> reg = SignatureRegistry(num_hashes=4, num_buckets=16384)
    >>> reg.register(["the", "cat", "the"]).tolist()
    [0, 1, 0]
    >>> reg.table().shape
    torch.Size([2, 4])
    """

    def __init__(self, num_hashes: int, num_buckets: int) -> None:
        self.hasher = MMH3MultiHasher(num_hashes, num_buckets)
        self.num_hashes = self.hasher.num_hashes
        self.num_buckets = self.hasher.num_buckets
        self._bits = (self.num_buckets - 1).bit_length()
        self._last_shift = (self.num_hashes - 1) * self._bits
        self._prefix_mask = (1 << self._last_shift) - 1
        self._tokens: list[str] = []
        self._index: dict[str, int] = {}
        self._sigs = np.zeros((0, self.num_hashes), dtype=np.int64)  # rows beyond len(self) are spare capacity
        self._rehash_counts = np.zeros(0, dtype=np.int64)
        self._keys: set[int] = set()  # every registered signature, packed by _pack
        self._prefix_counts: Counter[int] = Counter()
        self._max_prefix_count = 0

    # ------------------------------------------------------------------------------------------------------
    # Registration
    # ------------------------------------------------------------------------------------------------------
    @property
    def capacity(self) -> int:
        """``(B-1)**H``: the number of distinct signatures, hence the most tokens a registry can hold."""
        return (self.num_buckets - 1) ** self.num_hashes

    def register(self, tokens: Iterable[str], *, workers: int = 1) -> np.ndarray:
        """Register ``tokens`` (in order) and return the id of every input token as an ``int64`` array.

        New tokens get ids ``len(self), len(self)+1, ...`` in order of first appearance; a token already
        registered, or repeated within ``tokens``, gets its existing id. Existing signatures never change.

        Parameters
        ----------
        tokens:
            An iterable of ``str`` (not a single ``str``). See the module docstring for the token contract.
        workers:
            ``1`` computes everything in this process. ``k > 1`` computes the base coordinates in a pool of ``k``
            processes, then runs the same sequential uniqueness pass: the result is bit-identical to ``workers=1``.

        Raises
        ------
        TypeError
            ``tokens`` is a ``str`` or holds a non-``str``.
        ValueError
            A token is ``''`` or holds a lone surrogate; or the tokens do not fit (more than ``(B-1)**H`` in all,
            or more than ``B-1`` sharing their first ``H-1`` coordinates). The registry is then unchanged.
        """
        workers = check_int("workers", workers, minimum=1)
        tokens = validate_tokens(tokens)
        index = self._index
        unique = dict.fromkeys(tokens)
        new = [t for t in unique if t not in index] if index else list(unique)
        if new:
            if "" in new:
                raise ValueError(
                    f"token at position {tokens.index('')} is the empty string, which the registry refuses "
                    f"(a vocabulary entry that matches no text is almost always a tokenisation bug); drop empty "
                    f"strings before registering, e.g. [t for t in tokens if t]"
                )
            start = len(self)
            self._add(new, workers)
            if len(new) == len(tokens):  # every input token was new and distinct
                return np.arange(start, start + len(new), dtype=np.int64)
        return np.fromiter(map(index.__getitem__, tokens), dtype=np.int64, count=len(tokens))

    def _base_signatures(self, tokens: list[str], workers: int) -> np.ndarray:
        """``(n, H)`` base signatures, computed here or in ``workers`` processes (same function, same result)."""
        modulus = self.num_buckets - 1
        if workers == 1:
            return _base_signatures(tokens, self.num_hashes, modulus)
        size = -(-len(tokens) // workers)
        ranges = [(i, min(i + size, len(tokens)), self.num_hashes, modulus) for i in range(0, len(tokens), size)]
        with ProcessPoolExecutor(
            max_workers=len(ranges), mp_context=_pool_context(), initializer=_init_worker, initargs=(tokens,)
        ) as pool:
            return np.concatenate(list(pool.map(_base_signatures_range, ranges)), axis=0)

    def _pack(self, sigs: np.ndarray) -> tuple[list[int], list[int]]:
        """Packed prefixes (first ``H-1`` coordinates) and packed signatures (see :func:`_pack_rows`)."""
        return _pack_rows(sigs[:, :-1], self._bits), _pack_rows(sigs, self._bits)

    def _unpack_prefix(self, prefix: int) -> tuple[int, ...]:
        mask = (1 << self._bits) - 1
        return tuple((prefix >> (i * self._bits)) & mask for i in range(self.num_hashes - 1))

    def _check_fits(self, new: list[str], prefixes: list[int]) -> Counter[int]:
        """Refuse tokens that cannot all get unique signatures; return the new tokens' prefix counts."""
        limit = self.num_buckets - 1
        total = len(self._tokens) + len(new)
        if total > self.capacity:
            raise ValueError(
                f"cannot register {len(new)} new tokens: with num_hashes={self.num_hashes} and "
                f"num_buckets={self.num_buckets} only (B-1)**H = {self.capacity} distinct signatures exist and "
                f"{len(self._tokens)} are taken; use more buckets or more hash functions"
            )
        counts = Counter(prefixes)
        if max(counts.values()) + self._max_prefix_count > limit:
            existing = self._prefix_counts
            for prefix, count in counts.items():
                if count + existing.get(prefix, 0) > limit:
                    example = new[prefixes.index(prefix)]
                    if self.num_hashes == 1:
                        reason = f"with num_hashes=1 at most num_buckets-1 = {limit} tokens fit"
                    else:
                        reason = (
                            f"{count + existing.get(prefix, 0)} tokens (e.g. {example!r:.60}) share the first "
                            f"{self.num_hashes - 1} coordinates {self._unpack_prefix(prefix)}, but rehashing "
                            f"changes only the last coordinate, which has num_buckets-1 = {limit} values"
                        )
                    raise ValueError(
                        f"cannot give every token a unique signature: {reason}; use more buckets or more hash "
                        f"functions (the registry is unchanged)"
                    )
        return counts

    def _find_free_last(self, token: str, prefix: int, seen: set[int]) -> tuple[int, int, int]:
        """Smallest ``r >= 1`` whose last coordinate makes the signature unseen: ``(key, r, coordinate)``."""
        modulus = self.num_buckets - 1
        shift, first = self._last_shift, self.num_hashes - 1
        attempts = min(_MAX_REHASH_FACTOR * modulus, MAX_SEED - first)
        for r in range(1, attempts + 1):
            coordinate = _hash128(token, first + r) % modulus + 1
            key = prefix | (coordinate << shift)
            if key not in seen:
                return key, r, coordinate
        raise RuntimeError(
            f"token {token!r:.60} still collides after {attempts} rehashes of its last coordinate although a free "
            f"value exists; this is astronomically unlikely for MurmurHash3; use more buckets"
        )

    def _add(self, new: list[str], workers: int) -> None:
        sigs = self._base_signatures(new, workers)
        prefixes, keys = self._pack(sigs)
        counts = self._check_fits(new, prefixes)

        # Sequential uniqueness pass: token j must differ from every earlier token, old or new.
        seen = self._keys
        last = self.num_hashes - 1
        rehashed: dict[int, int] = {}
        mask = self._prefix_mask
        j = 0
        try:
            for j, key in enumerate(keys):
                if key in seen:
                    key, rehashed[j], sigs[j, last] = self._find_free_last(new[j], key & mask, seen)
                    keys[j] = key
                seen.add(key)
            j = len(keys)
        except BaseException:
            seen.difference_update(keys[:j])
            raise

        # Commit (nothing above changed the registry's other state).
        start, n = len(self._tokens), len(new)
        self._tokens.extend(new)
        self._index.update(zip(new, range(start, start + n)))
        self._reserve(start + n)
        self._sigs[start : start + n] = sigs
        self._rehash_counts[start : start + n] = 0
        for j, r in rehashed.items():
            self._rehash_counts[start + j] = r
        was_empty = not self._prefix_counts
        self._prefix_counts.update(counts)
        if was_empty:
            self._max_prefix_count = max(counts.values())
        else:
            self._max_prefix_count = max(self._max_prefix_count, max(map(self._prefix_counts.__getitem__, counts)))

    def _reserve(self, size: int) -> None:
        """Grow the arrays (amortised doubling) so that they hold at least ``size`` rows."""
        old = self._sigs.shape[0]
        if size <= old:
            return
        capacity = max(size, 2 * old, 1024)
        sigs = np.zeros((capacity, self.num_hashes), dtype=np.int64)
        rehash = np.zeros(capacity, dtype=np.int64)
        sigs[:old] = self._sigs
        rehash[:old] = self._rehash_counts
        self._sigs, self._rehash_counts = sigs, rehash

    # ------------------------------------------------------------------------------------------------------
    # Lookup and export
    # ------------------------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._tokens)

    def __contains__(self, token: object) -> bool:
        return isinstance(token, str) and token in self._index

    @property
    def tokens(self) -> list[str]:
        """The registered tokens in id order (a copy)."""
        return list(self._tokens)

    def id(self, token: str) -> int:
        """The id of a registered token; ``KeyError`` (naming the fix) if it is not registered."""
        token = validate_token(token)
        try:
            return self._index[token]
        except KeyError:
            raise KeyError(f"token {token!r:.60} is not registered; add it with .register([token])") from None

    def ids(self, tokens: Iterable[str]) -> np.ndarray:
        """Ids of many registered tokens as ``int64``; ``KeyError`` names the first unknown one and its position."""
        tokens = validate_tokens(tokens)
        index = self._index
        try:
            return np.fromiter(map(index.__getitem__, tokens), dtype=np.int64, count=len(tokens))
        except KeyError:
            position = next(i for i, t in enumerate(tokens) if t not in index)
            raise KeyError(
                f"token {tokens[position]!r:.60} at position {position} is not registered; register it first"
            ) from None

    def signature(self, token: str) -> tuple[int, ...]:
        """The (unique) signature of a registered token."""
        return tuple(int(c) for c in self._sigs[self.id(token)])

    def table(self) -> torch.Tensor:
        """The ``V x H`` signatures as a new ``torch.long`` tensor; row ``i`` belongs to id ``i``.

        Training turns ids into signatures with a gather, ``table[ids]``, and never touches strings.
        """
        return torch.from_numpy(self._sigs[: len(self)].copy())

    def rehash_counts(self) -> np.ndarray:
        """Per id, how often the last coordinate was rehashed (0 = base signature kept), as ``int64``."""
        return self._rehash_counts[: len(self)].copy()

    def last_seeds(self) -> np.ndarray:
        """Per id, the mmh3 seed of the last coordinate: ``H - 1 + rehash count``."""
        return self.rehash_counts() + (self.num_hashes - 1)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SignatureRegistry):
            return NotImplemented
        n = len(self)
        return (
            (self.num_hashes, self.num_buckets) == (other.num_hashes, other.num_buckets)
            and self._tokens == other._tokens
            and np.array_equal(self._sigs[:n], other._sigs[: len(other)])
            and np.array_equal(self._rehash_counts[:n], other._rehash_counts[: len(other)])
        )

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return f"SignatureRegistry(num_hashes={self.num_hashes}, num_buckets={self.num_buckets}, tokens={len(self)})"

    # ------------------------------------------------------------------------------------------------------
    # Persistence
    # ------------------------------------------------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> Path:
        """Write the registry to ``path`` atomically (format in the module docstring); return the path."""
        text = "".join(self._tokens)
        offsets = np.zeros(len(self) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, self._tokens), dtype=np.int64, count=len(self)), out=offsets[1:])
        arrays = {
            "token_offsets": offsets,
            "token_text": np.frombuffer(text.encode("utf-8"), dtype=np.uint8),
            "signatures": self._sigs[: len(self)],
            "rehash_counts": self._rehash_counts[: len(self)],
        }
        header = {
            "format": FORMAT_NAME,
            "format_version": FORMAT_VERSION,
            "num_hashes": self.num_hashes,
            "num_buckets": self.num_buckets,
            "num_tokens": len(self),
            "seed_rule": _SEED_RULE,
            "bucket_rule": _BUCKET_RULE,
            "uniqueness_rule": _UNIQUENESS_RULE,
            "mmh3_version": mmh3_version(),
            "mmh3_fingerprint": mmh3_fingerprint(),
        }
        return atomic_write_bytes(path, _encode_file(header, arrays))

    @classmethod
    def load(
        cls,
        path: str | os.PathLike,
        *,
        num_hashes: int | None = None,
        num_buckets: int | None = None,
        verify: bool = False,
    ) -> "SignatureRegistry":
        """Read a registry written by :meth:`save`.

        Parameters
        ----------
        num_hashes, num_buckets:
            If given, the file must hold exactly these settings (a model built for H4B16K must not silently load
            an H3B10K registry).
        verify:
            Also rebuild the registry from its tokens with the installed mmh3 and require identical signatures
            and rehash counts (costs about as much as registering the tokens).

        Raises
        ------
        RegistryFileError
            (a ``ValueError``) The file is not a registry file, is of another format version, fails its SHA-256
            checksum, holds other ``num_hashes``/``num_buckets`` than asked for, or was written with an mmh3 whose
            hash values differ from the installed one. The message names the file and the fix.
        """
        path = Path(path)
        header, payload = _decode_file(path)
        stored = (header["num_hashes"], header["num_buckets"])
        asked = (
            num_hashes if num_hashes is not None else stored[0],
            num_buckets if num_buckets is not None else stored[1],
        )
        if asked != stored:
            raise RegistryFileError(
                f"{path} holds a registry with num_hashes={stored[0]}, num_buckets={stored[1]}, but "
                f"num_hashes={asked[0]}, num_buckets={asked[1]} was asked for; load it without these arguments, "
                f"pick the file made for your settings, or build a new SignatureRegistry({asked[0]}, {asked[1]})"
            )
        if header["mmh3_fingerprint"] != mmh3_fingerprint():
            raise RegistryFileError(
                f"{path} was written with mmh3 {header['mmh3_version']}, whose hash values differ from those of "
                f"the installed mmh3 {mmh3_version()} (fingerprints {header['mmh3_fingerprint'][:12]}... vs "
                f"{mmh3_fingerprint()[:12]}...): its signatures cannot be reproduced or safely expanded here. "
                f"Install the writer's version (pip install mmh3=={header['mmh3_version']}), or rebuild the "
                f"registry from its tokens, which changes signatures and invalidates models trained on them"
            )
        registry = cls(*stored)
        registry._restore(path, header, payload)
        if verify:
            rebuilt = cls(*stored)
            rebuilt.register(registry._tokens)
            if rebuilt != registry:
                raise RegistryFileError(
                    f"{path} passed its checksum but its signatures differ from those the installed mmh3 computes "
                    f"for its tokens; it was written by other code. Rebuild it with SignatureRegistry.register"
                )
        return registry

    def _restore(self, path: Path, header: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        n, h = header["num_tokens"], self.num_hashes
        offsets, sigs, rehash = arrays["token_offsets"], arrays["signatures"], arrays["rehash_counts"]
        try:
            text = arrays["token_text"].tobytes().decode("utf-8")
        except UnicodeDecodeError:
            raise RegistryFileError(f"{path}: the token text is not valid UTF-8; the file is damaged") from None
        bounds = offsets.tolist()
        if (
            offsets.shape != (n + 1,) or sigs.shape != (n, h) or rehash.shape != (n,)
            or bounds[0] != 0 or bounds[-1] != len(text) or np.any(np.diff(offsets) <= 0)
            or (n and (sigs.min() < 1 or sigs.max() > self.num_buckets - 1 or rehash.min() < 0))
        ):
            raise RegistryFileError(
                f"{path}: array shapes or values are inconsistent with num_tokens={n}, num_hashes={h}, "
                f"num_buckets={self.num_buckets}; the file was not written by SignatureRegistry.save"
            )
        tokens = [text[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
        prefixes, keys = self._pack(sigs)
        self._tokens = tokens
        self._index = dict(zip(tokens, range(n)))
        self._keys = set(keys)
        if len(self._index) != n or len(self._keys) != n:
            raise RegistryFileError(
                f"{path} holds duplicate tokens or duplicate signatures; it was not written by SignatureRegistry.save"
            )
        self._sigs = sigs.astype(np.int64, copy=True)
        self._rehash_counts = rehash.astype(np.int64, copy=True)
        self._prefix_counts = Counter(prefixes)
        self._max_prefix_count = max(self._prefix_counts.values(), default=0)


def _canonical(header: dict[str, Any]) -> bytes:
    return json.dumps(header, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def _encode_file(header: dict[str, Any], arrays: dict[str, np.ndarray]) -> bytes:
    """Container bytes: magic, header length, header (with layout and checksum), payload."""
    payload = io.BytesIO()
    layout = []
    for name, dtype in _ARRAYS:
        data = np.ascontiguousarray(arrays[name], dtype=np.dtype(dtype))
        layout.append({"name": name, "dtype": dtype, "shape": list(data.shape)})
        payload.write(data.tobytes())
    header = {**header, "arrays": layout}
    body = payload.getvalue()
    header["sha256"] = hashlib.sha256(_canonical(header) + body).hexdigest()
    head = json.dumps(header, sort_keys=True, indent=1, ensure_ascii=True).encode("ascii")
    return _MAGIC + f"{len(head)}\n".encode("ascii") + head + b"\n" + body


def _decode_file(path: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Parse and check a container file; return its header and arrays (see :func:`_encode_file`)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"no registry file at {path}; create one with SignatureRegistry.save") from None
    fix = "restore it from a copy, or rebuild the registry by registering its tokens again in the original order"
    if not data.startswith(_MAGIC):
        raise RegistryFileError(f"{path} is not a signature-registry file (wrong magic bytes); {fix}")
    try:
        rest = data[len(_MAGIC) :]
        length_line, rest = rest.split(b"\n", 1)
        length = int(length_line.decode("ascii"))
        header = json.loads(rest[:length].decode("ascii"))
        if rest[length : length + 1] != b"\n" or not isinstance(header, dict):
            raise ValueError("header not followed by a newline")
        body = rest[length + 1 :]
    except (ValueError, UnicodeDecodeError):
        raise RegistryFileError(f"{path} is corrupted: its header cannot be read; {fix}") from None
    if header.get("format") != FORMAT_NAME:
        raise RegistryFileError(f"{path} is not a signature-registry file (format {header.get('format')!r}); {fix}")
    if header.get("format_version") != FORMAT_VERSION:
        raise RegistryFileError(
            f"{path} uses registry format version {header.get('format_version')!r}, but this code reads version "
            f"{FORMAT_VERSION}; load it with the hashlib_core version that wrote it, or rebuild the registry by "
            f"registering its tokens again in the original order and saving it"
        )
    stored = header.pop("sha256", None)
    computed = hashlib.sha256(_canonical(header) + body).hexdigest()
    if stored != computed:
        raise RegistryFileError(
            f"{path} is corrupted: its SHA-256 checksum does not match its content (stored {str(stored)[:12]}..., "
            f"computed {computed[:12]}...); the file was truncated or modified after it was written; {fix}"
        )
    try:
        arrays: dict[str, np.ndarray] = {}
        offset = 0
        for spec, (name, dtype) in zip(header["arrays"], _ARRAYS):
            if spec["name"] != name or spec["dtype"] != dtype:
                raise ValueError(f"unexpected array {spec['name']!r}")
            count = int(np.prod(spec["shape"], dtype=np.int64))
            arrays[name] = np.frombuffer(body, dtype=np.dtype(dtype), count=count, offset=offset).reshape(spec["shape"])
            offset += count * np.dtype(dtype).itemsize
        if offset != len(body) or len(arrays) != len(_ARRAYS):
            raise ValueError("payload size mismatch")
        check_int("num_hashes", header["num_hashes"], minimum=1)
        check_int("num_buckets", header["num_buckets"], minimum=2)
        check_int("num_tokens", header["num_tokens"], minimum=0)
        if not isinstance(header["mmh3_fingerprint"], str) or not isinstance(header["mmh3_version"], str):
            raise ValueError("mmh3_version and mmh3_fingerprint must be strings")
    except (KeyError, TypeError, ValueError) as exc:
        raise RegistryFileError(
            f"{path} has an inconsistent layout ({exc}); it was not written by SignatureRegistry.save"
        ) from None
    return header, arrays
