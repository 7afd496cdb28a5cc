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

The file format of :meth:`SignatureRegistry.save` / :meth:`SignatureRegistry.load` is in
:mod:`hashlib_core.hashing.registry_file`.
"""
from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import torch

from hashlib_core.hashing.base import check_int, refuse_empty, validate_token, validate_tokens
from hashlib_core.hashing.multihash import (
    MAX_SEED,
    MMH3MultiHasher,
    _hash128,
    base_signatures,
    pack_rows,
)
from hashlib_core.hashing.registry_file import (
    FORMAT_NAME,
    FORMAT_VERSION,
    RegistryFileError,
    read_registry_file,
    write_registry_file,
)

__all__ = ["SignatureRegistry", "RegistryFileError", "FORMAT_NAME", "FORMAT_VERSION"]

#: A token is rehashed at most ``_MAX_REHASH_FACTOR * (B - 1)`` times. The prefix check guarantees a free value for
#: the last coordinate, and a random hash needs more than 64 * (B - 1) tries with probability below e**-64.
_MAX_REHASH_FACTOR = 64


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
                refuse_empty(tokens, "SignatureRegistry")
            start = len(self)
            self._add(new, workers)
            if len(new) == len(tokens):  # every input token was new and distinct
                return np.arange(start, start + len(new), dtype=np.int64)
        return np.fromiter(map(index.__getitem__, tokens), dtype=np.int64, count=len(tokens))

    def _base_signatures(self, tokens: list[str], workers: int) -> np.ndarray:
        """``(n, H)`` base signatures, computed here or in ``workers`` processes (same function, same result)."""
        return base_signatures(tokens, self.num_hashes, self.num_buckets - 1, workers)

    def _pack(self, sigs: np.ndarray) -> tuple[list[int], list[int]]:
        """Packed prefixes (first ``H-1`` coordinates) and packed signatures (see :func:`_pack_rows`)."""
        return pack_rows(sigs[:, :-1], self._bits), pack_rows(sigs, self._bits)

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
        header = {"num_hashes": self.num_hashes, "num_buckets": self.num_buckets, "num_tokens": len(self)}
        return write_registry_file(path, header, arrays)

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
        header, payload = read_registry_file(path, num_hashes=num_hashes, num_buckets=num_buckets)
        stored = (header["num_hashes"], header["num_buckets"])
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
