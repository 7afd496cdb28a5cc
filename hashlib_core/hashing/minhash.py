"""MinHash fingerprints of subword units and tokens, and the counting Bloom filter (pNLP-Mixer, Fusco et al., §3.1).

A fingerprint is ``n`` integers ``F_0 .. F_{n-1}``, one per hash function ``h_i``:

* a **subword unit** ``u`` of at least ``ngram_size`` characters: ``F_i^u = min_j h_i(v_j)`` over its character
  n-grams ``v_j`` (trigrams: "Bring" -> "Bri", "rin", "ing");
* a **continuation** unit (WordPiece ``##ing``) or a unit shorter than ``ngram_size``: ``h_i`` of the whole unit,
  its leading continuation marker stripped (the community code, maum-ai/pnlp-mixer ``projection.py``, strips the
  marker too; the paper says "the full subword unit" and does not say whether the marker is part of it);
* a **token** made of units ``u_0 .. u_{j-1}``: ``F_i^t = min_k F_i^{u_k}`` (MinHash's associativity: the same as
  the minimum over all the units' n-grams and whole-unit hashes).

The paper does not name its hash family. We use the community code's: ``h_i(x) = (a(x) + i * b(x)) mod (2^31 - 1)``
with ``a`` and ``b`` the little-endian integers of the SHA-256 and SHA-224 digests of ``x``'s UTF-8 bytes, computed
from ``a mod p`` and ``b mod p`` (the same values, in 64-bit integers). Every fingerprint value lies in
``[0, 2^31 - 1)``.

The token's feature is a **counting Bloom filter** of size ``m``: ``C_p = #{i : F_i mod m = p}``
(:func:`counting_bloom_filter`), so its counts sum to ``n``. :class:`FingerprintCache` holds the ``|V| x n``
fingerprints of a vocabulary, so that projecting a sentence hashes no string.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import torch

from hashlib_core._io import atomic_write_bytes
from hashlib_core.hashing.base import check_positive_int, validate_token, validate_tokens

__all__ = ["MERSENNE_31", "MinHashFingerprinter", "FingerprintCache", "counting_bloom_filter"]

#: The modulus of the hash family, 2^31 - 1 (a Mersenne prime; the community code's ``MAX_HASH_VALUE``).
MERSENNE_31 = 2**31 - 1
#: n-grams hashed per block of a long unit (bounds the temporary ``block x n`` matrix; cost stays linear).
_BLOCK = 1024
_CACHE_FORMAT = "hashlib_core.minhash/1"


def _base_hashes(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """``(a mod p, b mod p)`` per text: SHA-256 and SHA-224 of the UTF-8 bytes as little-endian integers."""
    a = np.fromiter((int.from_bytes(hashlib.sha256(t.encode("utf-8")).digest(), "little") % MERSENNE_31
                     for t in texts), dtype=np.int64, count=len(texts))
    b = np.fromiter((int.from_bytes(hashlib.sha224(t.encode("utf-8")).digest(), "little") % MERSENNE_31
                     for t in texts), dtype=np.int64, count=len(texts))
    return a, b


class MinHashFingerprinter:
    """Fingerprints of subword units and tokens with ``num_hashes`` hash functions over character ``ngram_size``-grams.

    ``continuation_prefix`` marks a continuation unit (``"##"`` for WordPiece); ``word_prefix`` marks a word-initial
    unit in SentencePiece vocabularies (``"▁"``, then every unit without it is a continuation). A unit's leading
    marker is stripped before hashing; a marker later in the unit is kept (``"##a##b"`` hashes ``"a##b"``). The
    community code removes every occurrence with ``str.replace``, which gives the same units on the WordPiece
    vocabularies of BERT and mBERT (no piece holds ``##`` past its start). The paper uses 256 hashes, the community
    code 64.
    """

    def __init__(self, num_hashes: int = 64, ngram_size: int = 3, continuation_prefix: str = "##",
                 word_prefix: str | None = None) -> None:
        owner = "MinHashFingerprinter"
        self.num_hashes = check_positive_int("num_hashes", num_hashes, owner)
        self.ngram_size = check_positive_int("ngram_size", ngram_size, owner)
        if not isinstance(continuation_prefix, str) or (word_prefix is not None and not isinstance(word_prefix, str)):
            raise TypeError(f"{owner}: continuation_prefix must be a str and word_prefix a str or None")
        self.continuation_prefix = continuation_prefix
        self.word_prefix = word_prefix
        self._steps = np.arange(self.num_hashes, dtype=np.int64)

    def __repr__(self) -> str:
        return (f"MinHashFingerprinter(num_hashes={self.num_hashes}, ngram_size={self.ngram_size}, "
                f"continuation_prefix={self.continuation_prefix!r}, word_prefix={self.word_prefix!r})")

    # ------------------------------------------------------------------------------------------------ units
    def split_unit(self, unit: str) -> tuple[str, bool]:
        """``(text to hash, is continuation)`` of a vocabulary unit: its leading marker stripped, later ones kept."""
        if not isinstance(unit, str):
            raise TypeError(f"a subword unit must be a str, got {type(unit).__name__}; pass the tokenizer's pieces")
        if not unit:
            raise ValueError("a subword unit must not be empty; an empty piece has no fingerprint")
        unit = validate_token(unit)     # hashed by its UTF-8 bytes: a lone surrogate is refused by name
        if self.word_prefix is not None:
            return unit.removeprefix(self.word_prefix), not unit.startswith(self.word_prefix)
        is_continuation = bool(self.continuation_prefix) and unit.startswith(self.continuation_prefix)
        return (unit[len(self.continuation_prefix):] if is_continuation else unit), is_continuation

    def hashed_parts(self, unit: str) -> list[str]:
        """What :meth:`unit_fingerprint` hashes: the unit's n-grams, or the whole (stripped) unit."""
        text, is_continuation = self.split_unit(unit)
        if is_continuation or len(text) <= self.ngram_size:
            return [text]
        n = self.ngram_size
        return [text[i:i + n] for i in range(len(text) - n + 1)]

    def hash_values(self, parts: Sequence[str]) -> np.ndarray:
        """``h_i(x)`` for every part ``x`` and every i: an ``(len(parts), n)`` int64 matrix."""
        a, b = _base_hashes(validate_tokens(parts))
        return (a[:, None] + self._steps[None, :] * b[:, None]) % MERSENNE_31

    def unit_fingerprint(self, unit: str) -> np.ndarray:
        """``F^u``: ``(n,)`` int64, the minimum of each hash function over the unit's parts (linear in its length)."""
        parts = self.hashed_parts(unit)
        out = np.full(self.num_hashes, MERSENNE_31, dtype=np.int64)
        for start in range(0, len(parts), _BLOCK):
            np.minimum(out, self.hash_values(parts[start:start + _BLOCK]).min(axis=0), out=out)
        return out

    def fingerprints(self, units: Iterable[str]) -> np.ndarray:
        """``(len(units), n)`` int64: one :meth:`unit_fingerprint` per unit."""
        rows = [self.unit_fingerprint(u) for u in units]
        return np.stack(rows) if rows else np.zeros((0, self.num_hashes), dtype=np.int64)

    def token_fingerprint(self, units: Sequence[str]) -> np.ndarray:
        """``F^t``: the element-wise minimum over the fingerprints of the token's units."""
        if isinstance(units, str):
            raise TypeError("token_fingerprint takes the token's list of subword units, e.g. ['Bring', '##ing']")
        if len(units) == 0:
            raise ValueError("a token needs at least one subword unit to have a fingerprint")
        return self.fingerprints(units).min(axis=0)

    def settings(self) -> dict[str, Any]:
        return {"num_hashes": self.num_hashes, "ngram_size": self.ngram_size,
                "continuation_prefix": self.continuation_prefix, "word_prefix": self.word_prefix}


class FingerprintCache:
    """The fingerprints of a whole vocabulary, ``|V| x n`` (int32: every value is below 2^31 - 1).

    ``token_fingerprints(unit_ids)`` then takes, per token, the minimum over rows: no string is hashed at inference.
    """

    def __init__(self, fingerprinter: MinHashFingerprinter, vocab: Sequence[str],
                 matrix: np.ndarray | None = None) -> None:
        if not isinstance(fingerprinter, MinHashFingerprinter):
            raise TypeError(f"FingerprintCache needs a MinHashFingerprinter, got {type(fingerprinter).__name__}")
        self.fingerprinter = fingerprinter
        self.vocab = list(vocab)
        if not self.vocab:
            raise ValueError("FingerprintCache needs a non-empty vocabulary (the tokenizer's pieces, in id order)")
        if matrix is None:
            matrix = fingerprinter.fingerprints(self.vocab)
        matrix = np.asarray(matrix)
        if matrix.shape != (len(self.vocab), fingerprinter.num_hashes):
            raise ValueError(f"FingerprintCache: matrix has shape {matrix.shape}, expected "
                             f"{(len(self.vocab), fingerprinter.num_hashes)} (vocabulary x num_hashes)")
        if matrix.size and (matrix.min() < 0 or matrix.max() >= MERSENNE_31):
            raise ValueError("FingerprintCache: fingerprint values must lie in [0, 2^31 - 1)")
        self.matrix = matrix.astype(np.int32)

    def __len__(self) -> int:
        return len(self.vocab)

    def token_fingerprints(self, unit_ids: Sequence[Sequence[int]]) -> np.ndarray:
        """``(tokens, n)`` int64: per token, the minimum over its units' cached rows (ids into ``vocab``)."""
        out = np.empty((len(unit_ids), self.fingerprinter.num_hashes), dtype=np.int64)
        size = len(self.vocab)
        for t, ids in enumerate(unit_ids):
            ids = np.asarray(ids, dtype=np.int64)
            if ids.ndim != 1 or ids.size == 0:
                raise ValueError(f"token {t}: needs a non-empty list of unit ids, got {ids.tolist()!r:.60}")
            if ids.min() < 0 or ids.max() >= size:
                raise ValueError(f"token {t}: unit ids must lie in [0, {size}) (the cached vocabulary), got "
                                 f"[{ids.min()}, {ids.max()}]")
            out[t] = self.matrix[ids].min(axis=0)
        return out

    def save(self, path: str | os.PathLike) -> Path:
        """One ``.npz`` file (vocabulary, matrix and the fingerprinter's settings); written atomically."""
        path = Path(path)
        settings = self.fingerprinter.settings()
        buffer = io.BytesIO()
        np.savez_compressed(buffer, format=np.array(_CACHE_FORMAT), matrix=self.matrix,
                            vocab=np.array(json.dumps(self.vocab)),
                            num_hashes=settings["num_hashes"], ngram_size=settings["ngram_size"],
                            continuation_prefix=np.array(settings["continuation_prefix"]),
                            word_prefix=np.array("" if settings["word_prefix"] is None else settings["word_prefix"]),
                            has_word_prefix=settings["word_prefix"] is not None)
        return atomic_write_bytes(path, buffer.getvalue())

    @classmethod
    def load(cls, path: str | os.PathLike) -> "FingerprintCache":
        """Read a file written by :meth:`save`; a missing or foreign file is a clear error."""
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"no fingerprint cache at {path}; build one with FingerprintCache(...).save(path)")
        try:
            with np.load(path, allow_pickle=False) as data:
                if str(data["format"]) != _CACHE_FORMAT:
                    raise ValueError(f"format {str(data['format'])!r}")
                fingerprinter = MinHashFingerprinter(
                    int(data["num_hashes"]), int(data["ngram_size"]), str(data["continuation_prefix"]),
                    str(data["word_prefix"]) if bool(data["has_word_prefix"]) else None)
                return cls(fingerprinter, json.loads(str(data["vocab"])), data["matrix"])
        except (OSError, KeyError, ValueError, EOFError) as exc:
            raise ValueError(f"{path} is not a fingerprint cache written by FingerprintCache.save ({exc}); "
                             f"rebuild it") from exc


def counting_bloom_filter(fingerprints: np.ndarray | torch.Tensor, size: int) -> np.ndarray | torch.Tensor:
    """``(..., n)`` fingerprints -> ``(..., size)`` float32 counts: ``C_p = #{i : F_i mod size = p}``.

    Numpy in, numpy out; a tensor in, a tensor out (on its device). The counts of each token sum to ``n``.
    """
    size = check_positive_int("size", size, "counting_bloom_filter")
    if isinstance(fingerprints, torch.Tensor):
        if fingerprints.is_floating_point() or fingerprints.dim() < 1:
            raise TypeError("counting_bloom_filter: fingerprints must be an integer tensor of shape (..., n)")
        if fingerprints.numel() and int(fingerprints.min()) < 0:
            raise ValueError("counting_bloom_filter: fingerprint values must be non-negative")
        slots = (fingerprints.long() % size)
        out = torch.zeros(*fingerprints.shape[:-1], size, dtype=torch.float32, device=fingerprints.device)
        return out.scatter_add_(-1, slots, torch.ones_like(slots, dtype=torch.float32))
    array = np.asarray(fingerprints)
    if array.ndim < 1 or not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"counting_bloom_filter: fingerprints must be integers of shape (..., n), got "
                        f"{array.dtype} {array.shape}")
    if array.size and array.min() < 0:
        raise ValueError("counting_bloom_filter: fingerprint values must be non-negative")
    lead = array.shape[:-1]
    rows = int(np.prod(lead)) if lead else 1
    flat = (np.arange(rows, dtype=np.int64)[:, None] * size + array.reshape(rows, -1).astype(np.int64) % size)
    counts = np.bincount(flat.ravel(), minlength=rows * size).astype(np.float32)
    return counts.reshape(*lead, size)
