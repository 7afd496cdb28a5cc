"""Polynomial rolling hashes of character n-grams (the dynamic hash embeddings of EELBERT, as the blog describes).

The hash of a string ``c_0 c_1 ... c_{n-1}`` is the standard polynomial rolling hash

    H = (c_0 p^(n-1) + c_1 p^(n-2) + ... + c_{n-1}) mod M,

computed with Horner's rule ``h <- (h p + c) mod M``. Our choices, documented because neither the blog nor the
EELBERT abstract fixes them for arbitrary text:

* ``c`` is the Unicode code point **plus one**, so no character maps to 0 (with ``c = 0`` the n-grams ``"\\0ab"``
  and ``"ab"`` would share a value);
* the base ``p`` = :data:`DEFAULT_BASE` = 1,114,117, the smallest prime above the largest ``c`` (0x110000), so two
  n-grams of the same length have the same exact polynomial value only if they are equal (cp-algorithms' advice: a
  prime at least the alphabet size; the blog's ``p = 31`` suits lower-case ASCII only);
* the modulus ``M`` = :data:`DEFAULT_MODULUS` = 10^9 + 7 (the blog's).

Every intermediate value stays below ``M * p < 2^51`` (and ``M^2 < 2^60`` in the products the embedding forms), so
int64 arithmetic is exact: :func:`ngram_hashes` equals the Python big-integer :func:`reference_hash` on every input.

The community JAX code (notes A4; the blog's ``rolling_hash``) differs in two ways, both reproduced here so the
tests can show them against the big-integer reference: its scan starts from the state ``(first character, power =
n)`` and adds ``(c - 96) * power`` with ``power <- power * 31`` (not a polynomial hash of the n-gram:
:func:`community_rolling_hash`), and JAX's default int32 arithmetic wraps the product ``hash * seed`` that the
embedding forms (:func:`wrap_int32`).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ["DEFAULT_BASE", "DEFAULT_MODULUS", "char_codes", "reference_hash", "ngram_hashes", "ngram_hashes_many",
           "community_rolling_hash", "wrap_int32"]

#: The smallest prime above 0x110000 (the largest code point + 1).
DEFAULT_BASE = 1_114_117
#: The blog's modulus, 10^9 + 7 (prime).
DEFAULT_MODULUS = 1_000_000_007
_INT64_SAFE = 2**62


def _check_parameters(base: int, modulus: int) -> None:
    for name, value in (("base", base), ("modulus", modulus)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 2:
            raise ValueError(f"{name} must be an int >= 2, got {value!r}")
    if int(base) * int(modulus) >= _INT64_SAFE:
        raise ValueError(f"base * modulus = {int(base) * int(modulus)} must stay below 2^62 so int64 arithmetic "
                         f"is exact; use a modulus below {_INT64_SAFE // int(base)}")


def char_codes(text: str) -> np.ndarray:
    """``ord(c) + 1`` for every character of ``text`` (int64). Lone surrogates and NUL are ordinary characters."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}; decode bytes first (bytes.decode('utf-8'))")
    # UTF-32 keeps every code point (surrogatepass lets lone surrogates through) in one fixed-width unit
    raw = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    return raw.astype(np.int64) + 1


def reference_hash(text: str, base: int = DEFAULT_BASE, modulus: int = DEFAULT_MODULUS) -> int:
    """The polynomial hash of the whole of ``text`` with Python's unbounded integers (the definition, unreduced
    until the end)."""
    _check_parameters(base, modulus)
    value = 0
    for code in char_codes(text).tolist():
        value = value * base + code
    return value % modulus


def ngram_hashes(text: str, n: int, base: int = DEFAULT_BASE, modulus: int = DEFAULT_MODULUS) -> np.ndarray:
    """Hashes of the ``len(text) - n + 1`` character n-grams of ``text``, in order (int64; empty if shorter)."""
    return ngram_hashes_many([text], n, base, modulus)[0]


def _window_hashes(codes: np.ndarray, starts: np.ndarray, n: int, base: int, modulus: int) -> np.ndarray:
    """Horner's rule over the windows ``codes[s:s+n]`` for every ``s`` in ``starts``, all at once."""
    value = np.zeros(starts.shape[0], dtype=np.int64)
    for k in range(n):
        value = (value * base + codes[starts + k]) % modulus
    return value


def ngram_hashes_many(texts: Sequence[str], n: int, base: int = DEFAULT_BASE, modulus: int = DEFAULT_MODULUS
                      ) -> list[np.ndarray]:
    """:func:`ngram_hashes` of every text, vectorised over all texts (cost linear in their total length)."""
    _check_parameters(base, modulus)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be an int >= 1, got {n!r}")
    codes_per_text = [char_codes(t) for t in texts]
    lengths = np.array([c.shape[0] for c in codes_per_text], dtype=np.int64)
    codes = np.concatenate(codes_per_text) if codes_per_text else np.zeros(0, dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]) if len(lengths) else np.zeros(0, dtype=np.int64)
    windows = np.maximum(lengths - n + 1, 0)
    starts = np.repeat(offsets, windows) + (np.arange(windows.sum()) - np.repeat(np.cumsum(windows) - windows,
                                                                                    windows))
    values = _window_hashes(codes, starts.astype(np.int64), n, int(base), int(modulus))
    return np.split(values, np.cumsum(windows)[:-1]) if len(texts) else []


def community_rolling_hash(window: Sequence[int], p: int = 31, m: int = DEFAULT_MODULUS) -> int:
    """The blog's ``rolling_hash`` of one window of code points (``ord``, no +1), with unbounded integers.

    ``jax.lax.scan(body_fn, (encoded[0], encoded.shape[0]), encoded[1:])`` where the window is a column of
    ``igrams.T``: the state starts at the first character's raw code and ``power = n``; each later character adds
    ``(c - 96) * power``. For n = 1 the hash is the raw code point.
    """
    window = [int(c) for c in window]
    if not window:
        raise ValueError("a window needs at least one character")
    value, power = window[0], len(window)
    for c in window[1:]:
        value = (value + (c - 96) * power) % m
        power = (power * p) % m
    return value


def wrap_int32(values: np.ndarray | int) -> np.ndarray:
    """What two's-complement int32 arithmetic (JAX's default, without ``jax_enable_x64``) keeps of exact
    integers: ``((x + 2^31) mod 2^32) - 2^31``."""
    x = np.asarray(values, dtype=object)
    wrapped = (x + 2**31) % 2**32 - 2**31
    return np.asarray(wrapped, dtype=np.int64)
