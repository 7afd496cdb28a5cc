"""The morphological feature vector of a word for HashFormers-LSH (§3.3, released ``free_tokenizer.py``).

See :mod:`hashlib_core.hashing.lsh` for the definition (steps 1-3): the BPE subwords of
``word_variants(w) = w-w[:1]-w[1:]-...-w[:n-1]-w[n-1:]``, counted, with weight ``count / max(len(w) + 1 - len(s),
1)``. Taken literally this costs O(len(w)**2) time and memory, since ``word_variants(w)`` has about
``len(w)**2`` characters; :func:`subword_features_reference` keeps that literal algorithm.

:func:`subword_features` returns the same ids and weights, bit for bit. Words of up to :data:`LINEAR_MIN_LENGTH`
characters (almost every real word) take the literal algorithm, the faster one at that size. Longer words take a
path linear in ``len(w)`` (:mod:`hashlib_core.hashing.lsh_cuts`) when

* the tokenizer is of the :func:`hashlib_core.bpe.train_bpe` or :func:`hashlib_core.bpe.roberta_bpe` kind
  (byte-level BPE, no normaliser or ``Lowercase``; :attr:`~hashlib_core.hashing.lsh_cuts.CutEncoder.reason` says
  why another one is not), and
* every character of the word is a letter or a digit (the words of
  :func:`~hashlib_core.papers.hashformers.tokenization.word_tokenize` are, apart from ``_`` and punctuation runs)
  and its bytes are in the vocabulary.

Other words take the literal algorithm up to :data:`MAX_REFERENCE_LENGTH` characters and raise ``ValueError``
beyond it, instead of running for minutes: for them (e.g. a run of 10,000 ``'='``) ``word_variants`` is one
pre-token of ``len(w)**2`` characters whose BPE encoding has no shortcut.
"""
from __future__ import annotations

from collections import Counter
from functools import lru_cache
from typing import Any

import numpy as np
from tokenizers import Tokenizer

from hashlib_core.hashing.base import validate_token
from hashlib_core.hashing.lsh_cuts import CutEncoder

__all__ = [
    "MAX_REFERENCE_LENGTH",
    "LINEAR_MIN_LENGTH",
    "word_variants",
    "subword_features",
    "subword_features_reference",
    "SubwordFeatureExtractor",
]

#: Longest word (in characters) given to the quadratic reference when the linear path does not apply.
MAX_REFERENCE_LENGTH = 256
#: Words up to this length take the literal algorithm: it encodes at most ~1,100 characters and is faster there
#: than the linear path's fixed cost (both give the same result; crossover near 30 characters).
LINEAR_MIN_LENGTH = 32


def word_variants(word: str) -> str:
    """``w`` and its single-hyphen splits joined by ``'-'``: ``'play' -> 'play-p-lay-pl-ay-pla-y'``.

    The result has ``len(w)**2 + 2 len(w) - 2`` characters: mind long words.
    """
    word = validate_token(word)
    return "-".join([word] + [word[:i] + "-" + word[i:] for i in range(1, len(word))])


def _check_tokenizer(tokenizer: Any) -> Tokenizer:
    if not isinstance(tokenizer, Tokenizer):
        raise TypeError(
            f"tokenizer must be a tokenizers.Tokenizer (roberta-base's from hashlib_core.bpe.roberta_bpe(), or one "
            f"trained with hashlib_core.bpe.train_bpe), got "
            f"{type(tokenizer).__name__}"
        )
    return tokenizer


def _check_word(word: Any) -> str:
    word = validate_token(word)
    if not word:
        raise ValueError("token '' is empty: the empty string has no subwords, so it has no LSH features; skip empty "
                         "tokens before hashing, e.g. [t for t in tokens if t]")
    return word


def _too_long(word: str, why: str) -> ValueError:
    return ValueError(
        f"token of {len(word)} characters ({word[:20]!r}...): {why}, so its LSH features would cost time and "
        f"memory quadratic in its length; tokens like this are limited to MAX_REFERENCE_LENGTH = "
        f"{MAX_REFERENCE_LENGTH} characters. Truncate it (token[:{MAX_REFERENCE_LENGTH}]) or split it before hashing"
    )


def subword_features_reference(
    word: str, tokenizer: Tokenizer, max_length: int | None = MAX_REFERENCE_LENGTH
) -> tuple[np.ndarray, np.ndarray]:
    """The literal, quadratic algorithm: BPE-encode ``word_variants(word)`` and count (the module docstring).

    ``max_length`` (characters) guards against its cost; ``None`` lifts the guard (for tests and benchmarks).
    """
    tokenizer = _check_tokenizer(tokenizer)
    word = _check_word(word)
    if max_length is not None and len(word) > max_length:
        raise _too_long(word, "the reference algorithm encodes a string of len(token)**2 characters")
    pieces = tokenizer.encode(word_variants(word), add_special_tokens=False).tokens
    counts = Counter(pieces)
    if len(counts) > 1:
        counts.pop("-", None)
    span = len(word) + 1
    ids, weights = [], []
    for piece, count in counts.items():
        piece_id = tokenizer.token_to_id(piece)
        if piece_id is None:  # cannot happen with a byte-level BPE; a guard for foreign tokenizers
            raise ValueError(f"subword {piece!r} of {word!r} is not in the tokenizer's vocabulary")
        ids.append(piece_id)
        weights.append(count / max(span - len(piece), 1))
    return np.asarray(ids, dtype=np.int64), np.asarray(weights, dtype=np.float64)


def _features(word: str, encoder: CutEncoder) -> tuple[np.ndarray, np.ndarray]:
    if len(word) <= LINEAR_MIN_LENGTH:
        return subword_features_reference(word, encoder.tokenizer, max_length=None)
    fast = encoder.features(word)
    if fast is not None:
        return fast
    if len(word) > MAX_REFERENCE_LENGTH:
        if encoder.reason is not None:
            why = f"the tokenizer is not of the kind the linear algorithm handles ({encoder.reason})"
        else:
            odd = next((ch for ch in word if not ch.isalnum()), None)
            why = (f"it holds {odd!r}, which is not a letter or digit" if odd is not None
                   else "it holds characters outside the tokenizer's vocabulary or its letter/digit classes")
        raise _too_long(word, why)
    return subword_features_reference(word, encoder.tokenizer, max_length=None)


def subword_features(word: str, tokenizer: Tokenizer) -> tuple[np.ndarray, np.ndarray]:
    """The morphological feature vector of ``word`` as ``(ids, weights)`` (:mod:`hashlib_core.hashing.lsh`, 1-3).

    Returns the BPE ids (``int64``) of the distinct subwords in order of first occurrence and their weights
    (``float64``), equal to :func:`subword_features_reference`; linear in ``len(word)`` for letter/digit words
    (module docstring). Raises ``ValueError`` for the empty word, which has no subwords, and for a word of more
    than :data:`MAX_REFERENCE_LENGTH` characters that the linear algorithm cannot take.
    """
    tokenizer = _check_tokenizer(tokenizer)
    return _features(_check_word(word), CutEncoder(tokenizer))


class SubwordFeatureExtractor:
    """:func:`subword_features` bound to one BPE tokenizer, with a per-word cache and the linear path's memos."""

    def __init__(self, tokenizer: Tokenizer, cache_size: int = 1 << 16) -> None:
        self.tokenizer = _check_tokenizer(tokenizer)
        self.encoder = CutEncoder(tokenizer)
        self._cached = lru_cache(maxsize=cache_size)(self._compute)

    def _compute(self, word: str) -> tuple[np.ndarray, np.ndarray]:
        ids, weights = _features(_check_word(word), self.encoder)
        ids.setflags(write=False)
        weights.setflags(write=False)
        return ids, weights

    def __call__(self, word: str) -> tuple[np.ndarray, np.ndarray]:
        return self._cached(validate_token(word))

    @property
    def vocab_size(self) -> int:
        return self.tokenizer.get_vocab_size()
