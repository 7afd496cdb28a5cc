"""Sentences -> pNLP-Mixer inputs: WordPiece units from the shipped mBERT-cased vocabulary, cached MinHash
fingerprints, one counting Bloom filter per word, padded to the model's ``max_seq_len``.

The datasets (ATIS, SNIPS, MTOP) come as word lists with one slot tag per word, so a model position is a **word**:
its units are WordPiece's pieces of that word and its fingerprint is the minimum over their cached rows (§3.1; the
community code's ``encoded.words`` does the same). Words beyond ``max_seq_len`` are cut (the label of a cut word is
not scored); padding positions hold all-zero features and a 0 in ``attention_mask``.

Any projection of :mod:`hashlib_core.hashing.projections` (§5.1: MinHash, Binary, TSP, SimHash) can make the
features: ``SentenceProjector.from_projection(projection, max_seq_len)``; the MinHash constructor is unchanged.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch
from tokenizers import Tokenizer

from hashlib_core.hashing.base import check_positive_int, validate_token
from hashlib_core.hashing.minhash import FingerprintCache, MinHashFingerprinter
from hashlib_core.hashing.projections import MinHashProjection, Projection, build_projection
from hashlib_core.wordpiece import wordpiece_tokenizer  # mBERT-cased's: no lower-casing, no accent stripping

__all__ = ["wordpiece_tokenizer", "SentenceProjector"]


class SentenceProjector:
    """Word lists -> ``(input_features (B, s, m) float32, attention_mask (B, s) int64)`` for a pNLP-Mixer.

    ``cache`` holds the fingerprints of every vocabulary piece (built once: a few seconds for mBERT's 119,547 pieces
    with 64 hashes); projecting a sentence then hashes no string. ``unit_ids(word)`` gives the pieces of a word.
    Instead of ``cache`` and ``bloom_size``, pass ``projection=`` (any :class:`~hashlib_core.hashing.projections.
    Projection` built from the tokenizer's vocabulary); ``m`` is then its ``width`` (kept as ``bloom_size``).
    """

    def __init__(self, tokenizer: Tokenizer, cache: FingerprintCache | None = None, bloom_size: int | None = None,
                 max_seq_len: int | None = None, *, projection: Projection | None = None) -> None:
        owner = "SentenceProjector"
        if projection is None:
            if cache is None or bloom_size is None:
                raise TypeError(f"{owner} needs either cache and bloom_size (MinHash) or projection=")
            projection = MinHashProjection(cache, check_positive_int("bloom_size", bloom_size, owner))
        elif not isinstance(projection, Projection):
            raise TypeError(f"{owner}: projection must be a Projection (hashlib_core.hashing.projections), got "
                            f"{type(projection).__name__}")
        elif cache is not None or (bloom_size is not None and bloom_size != projection.width):
            raise ValueError(f"{owner}: with projection= pass no cache, and bloom_size only if it equals the "
                             f"projection's width ({projection.width})")
        if max_seq_len is None:
            raise TypeError(f"{owner} needs max_seq_len (the model's number of positions)")
        if tokenizer.get_vocab_size() != len(projection):
            raise ValueError(f"the tokenizer has {tokenizer.get_vocab_size()} pieces but the "
                             f"{'cache' if cache is not None else 'projection'} {len(projection)}; "
                             f"build the {'cache' if cache is not None else 'projection'} from the same vocabulary")
        self.tokenizer, self.projection = tokenizer, projection
        self.cache: FingerprintCache | None = getattr(projection, "cache", None)
        self.bloom_size = projection.width
        self.max_seq_len = check_positive_int("max_seq_len", max_seq_len, owner)
        self._unk = tokenizer.token_to_id("[UNK]")

    @classmethod
    def from_vocab(cls, vocab: Sequence[str], fingerprinter: MinHashFingerprinter, bloom_size: int,
                   max_seq_len: int) -> "SentenceProjector":
        return cls(wordpiece_tokenizer(vocab), FingerprintCache(fingerprinter, vocab), bloom_size, max_seq_len)

    @classmethod
    def from_projection(cls, projection: Projection, max_seq_len: int) -> "SentenceProjector":
        """A WordPiece tokenizer over the projection's own vocabulary, and the projection's features."""
        return cls(wordpiece_tokenizer(projection.vocab), max_seq_len=max_seq_len, projection=projection)

    @classmethod
    def with_projection(cls, name: str, vocab: Sequence[str], max_seq_len: int, **kwargs) -> "SentenceProjector":
        """``from_projection(build_projection(name, vocab, **kwargs), max_seq_len)``: name in minhash, binary,
        tsp, simhash."""
        return cls.from_projection(build_projection(name, vocab, **kwargs), max_seq_len)

    def unit_ids(self, word: str) -> list[int]:
        """WordPiece ids of one word (a word that punctuation splits gives the pieces of all its parts)."""
        if not isinstance(word, str):
            raise TypeError(f"a word must be a str, got {type(word).__name__}")
        ids = self.tokenizer.encode(validate_token(word), add_special_tokens=False).ids
        return ids or [self._unk]   # white space or control characters only: the unknown piece

    def word_fingerprints(self, words: Sequence[str]) -> np.ndarray:
        """``(len(words), n)`` fingerprints of a sentence's words (no string hashed: cached rows only)."""
        if isinstance(words, str):
            raise TypeError("pass a sentence as its list of words, e.g. text.split()")
        if self.cache is None:
            raise TypeError(f"the {self.projection.name} projection has no MinHash fingerprints; use "
                            f"word_features(words)")
        return self.cache.token_fingerprints([self.unit_ids(w) for w in words])

    def word_features(self, words: Sequence[str]) -> np.ndarray:
        """``(len(words), m)`` float32: the projection's row of each word."""
        if isinstance(words, str):
            raise TypeError("pass a sentence as its list of words, e.g. text.split()")
        return self.projection.features([self.unit_ids(w) for w in words])

    def __call__(self, sentences: Sequence[Sequence[str]]) -> dict[str, torch.Tensor]:
        if len(sentences) == 0:
            raise ValueError("SentenceProjector needs at least one sentence")
        features = np.zeros((len(sentences), self.max_seq_len, self.bloom_size), dtype=np.float32)
        mask = np.zeros((len(sentences), self.max_seq_len), dtype=np.int64)
        for b, words in enumerate(sentences):
            words = list(words)[: self.max_seq_len]
            if not words:
                raise ValueError(f"sentence {b} is empty; every sentence needs at least one word")
            features[b, : len(words)] = self.word_features(words)
            mask[b, : len(words)] = 1
        return {"input_features": torch.from_numpy(features), "attention_mask": torch.from_numpy(mask)}
