"""Superbloom on natural language (§4, Tables 4 and 5): a vocabulary of frequent unigrams and bigrams on top of a
WordPiece base, hashed α-to-one, and masked-token prediction.

The paper builds a 1M vocabulary as the union of BERT's WordPiece vocabulary (about 30K) with the most frequent
unigrams and bigrams of its corpus, hashes it with α = 40 and m = 2, and compares two unhashed BERT baselines
(d = 256 and d = 64) with two Superbloom models of similar sizes by recall of masked tokens. Ours, at the book's
scale: a WordPiece of ``wordpiece_size`` pieces trained locally (``tokenizers``) on the WikiText-2 validation split,
plus its ``unigrams`` most frequent words and ``bigrams`` most frequent word pairs; the text is tokenised greedily
(a vocabulary bigram, else a vocabulary word, else the word's WordPiece pieces). Models train on the validation
split and are scored on the test split: one masked token per window of ``window`` tokens.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from hashlib_core.papers.superbloom.data import TestSegments

__all__ = ["TextVocabulary", "build_vocabulary", "tokenize", "windows", "masked_windows"]


@dataclass
class TextVocabulary:
    """Token strings in id order (WordPiece pieces, then unigrams, then bigrams "a b"), their index, the WordPiece
    tokenizer for words outside the vocabulary."""

    tokens: list[str]
    index: dict[str, int]
    wordpiece: object
    pieces: int
    unigrams: int
    bigrams: int

    def __len__(self) -> int:
        return len(self.tokens)


def build_vocabulary(lines: Sequence[str], wordpiece_size: int, unigrams: int, bigrams: int) -> TextVocabulary:
    """The union of a locally trained WordPiece and the most frequent words and word pairs of ``lines``."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    if not lines:
        raise ValueError("no text to build a vocabulary from")
    wordpiece = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    wordpiece.normalizer = normalizers.NFC()
    wordpiece.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    wordpiece.train_from_iterator(lines, trainers.WordPieceTrainer(vocab_size=wordpiece_size,
                                                                   special_tokens=["[UNK]"], show_progress=False))
    vocab = wordpiece.get_vocab()
    tokens = sorted(vocab, key=vocab.get)
    words = Counter(w for line in lines for w in line.split())
    pairs = Counter(f"{a} {b}" for line in lines for a, b in zip(line.split(), line.split()[1:]))
    seen = set(tokens)
    new_words = [w for w, _ in words.most_common() if w not in seen][:unigrams]
    seen |= set(new_words)
    new_pairs = [p for p, _ in pairs.most_common(bigrams) if p not in seen]
    tokens = tokens + new_words + new_pairs
    return TextVocabulary(tokens, {t: i for i, t in enumerate(tokens)}, wordpiece, len(vocab), len(new_words),
                          len(new_pairs))


def tokenize(vocab: TextVocabulary, line: str) -> list[int]:
    """Greedy: a vocabulary bigram, else a vocabulary word, else the word's WordPiece pieces."""
    words, out, i = line.split(), [], 0
    while i < len(words):
        pair = f"{words[i]} {words[i + 1]}" if i + 1 < len(words) else None
        if pair is not None and pair in vocab.index:
            out.append(vocab.index[pair])
            i += 2
            continue
        if words[i] in vocab.index:
            out.append(vocab.index[words[i]])
        else:
            out += [vocab.index.get(p, vocab.index["[UNK]"]) for p in vocab.wordpiece.encode(words[i]).tokens]
        i += 1
    return out


def windows(ids: np.ndarray, length: int) -> list[np.ndarray]:
    """Consecutive windows of ``length`` tokens (the last partial one dropped)."""
    if length < 2:
        raise ValueError(f"window length must be >= 2, got {length}")
    return [ids[i:i + length] for i in range(0, len(ids) - length + 1, length)]


def masked_windows(ids: np.ndarray, length: int, seed: int, limit: int = 0) -> TestSegments:
    """Test windows, each with one masked position drawn with ``seed`` (``limit``: at most that many; 0: all)."""
    segs = windows(ids, length)
    if limit:
        segs = segs[:limit]
    rng = np.random.default_rng(seed)
    positions = rng.integers(0, length, size=len(segs))
    targets = np.array([s[p] for s, p in zip(segs, positions)], dtype=np.int64)
    return TestSegments(segs, targets, positions.astype(np.int64))
