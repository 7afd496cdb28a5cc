"""MD5 hashes of character n-grams: the second n-gram hash family the dynamic hash embedding can use.

The dynamic embedding (:mod:`hashlib_core.embeddings.dynamic`) maps every character n-gram ``g`` of a token to an
integer ``H(g)`` in ``[0, M)`` and derives its columns from it. EELBERT's blog uses the polynomial rolling hash
(:mod:`hashlib_core.hashing.rolling`), which is cheap and slides over a string but is linear in the characters: two
n-grams that differ in one character differ by a multiple of a power of the base. Here ``H(g)`` is the first eight
bytes of the MD5 digest of ``g``'s UTF-8 bytes, read little-endian, modulo ``M``: a hash with no algebraic relation
between related n-grams, the other end of the spectrum (the HashFormers chapter's MD5 token hash, applied to
n-grams). The n-grams are those of the rolling hash: the ``len(text) - n + 1`` windows of ``n`` code points.
"""
from __future__ import annotations

import hashlib
from typing import Sequence

import numpy as np

from hashlib_core.hashing.base import validate_token
from hashlib_core.hashing.rolling import DEFAULT_MODULUS

__all__ = ["md5_ngram_hash", "md5_ngram_hashes_many"]


def _check_modulus(modulus: int) -> int:
    if isinstance(modulus, bool) or not isinstance(modulus, (int, np.integer)) or modulus < 2:
        raise ValueError(f"modulus must be an int >= 2, got {modulus!r}")
    return int(modulus)


def _md5(ngram: str, modulus: int) -> int:
    return int.from_bytes(hashlib.md5(ngram.encode("utf-8")).digest()[:8], "little") % modulus


def md5_ngram_hash(ngram: str, modulus: int = DEFAULT_MODULUS) -> int:
    """``int.from_bytes(md5(ngram.encode("utf-8")).digest()[:8], "little") % modulus``."""
    if not isinstance(ngram, str):
        raise TypeError(f"an n-gram is a str, got {type(ngram).__name__}")
    return _md5(validate_token(ngram), _check_modulus(modulus))


def md5_ngram_hashes_many(texts: Sequence[str], n: int, modulus: int = DEFAULT_MODULUS) -> list[np.ndarray]:
    """Per text, the int64 hashes of its ``len(text) - n + 1`` character n-grams in order (empty when shorter):
    the same windows as :func:`hashlib_core.hashing.rolling.ngram_hashes_many`. Cost linear in the total length;
    each distinct n-gram is hashed once."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be an int >= 1, got {n!r}")
    modulus = _check_modulus(modulus)      # once, not per n-gram
    seen: dict[str, int] = {}
    out = []
    for text in texts:
        if not isinstance(text, str):
            raise TypeError(f"texts must be str, got {type(text).__name__}")
        text = validate_token(text)     # MD5 reads UTF-8 bytes: a lone surrogate is refused by name
        grams = [text[i : i + n] for i in range(len(text) - n + 1)]
        for g in grams:
            if g not in seen:
                seen[g] = _md5(g, modulus)
        out.append(np.fromiter((seen[g] for g in grams), dtype=np.int64, count=len(grams)))
    return out
