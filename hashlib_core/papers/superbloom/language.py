"""Superbloom on natural language (§4, Tables 4 and 5): a vocabulary of frequent unigrams and bigrams on top of a
WordPiece base, hashed α-to-one, and masked-token prediction.

The paper builds a 1M vocabulary as the union of BERT's WordPiece vocabulary (about 30K) with the most frequent
unigrams and bigrams of its corpus, hashes it with α = 40 and m = 2, and compares two unhashed BERT baselines
(d = 256 and d = 64) with two Superbloom models of similar sizes by recall of masked tokens. Ours, at the book's
scale: a WordPiece of ``wordpiece_size`` pieces trained locally (``tokenizers``) on Penn Treebank's train split,
plus its ``unigrams`` most frequent words and ``bigrams`` most frequent word pairs; the text is tokenised greedily
(a vocabulary bigram, else a vocabulary word, else the word's WordPiece pieces). Models train on the train split,
stop early on the validation split and are scored on the test split: one masked token per window of ``window``
tokens.

:func:`context_free_recall` scores what a model that ignores the context can reach on the same test windows: the
tokens ranked by their frequency in the training windows (a model that learned only the unigram distribution), and,
as an upper bound for any context-free ranking, the tokens ranked by their frequency among the test targets
themselves (rec@1: the share of the most frequent target, the best constant prediction).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from hashlib_core.papers.superbloom.data import TestSegments

__all__ = ["TextVocabulary", "build_vocabulary", "tokenize", "windows", "masked_windows", "context_free_recall",
           "TRAINING_FREQUENCY", "TEST_FREQUENCY"]

#: names of :func:`context_free_recall`'s two rankings
TRAINING_FREQUENCY = "training-token frequency"
TEST_FREQUENCY = "test-target frequency (oracle)"


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
    """The union of a locally trained WordPiece and the most frequent words and word pairs of ``lines``, numbered the
    same way on every call: ``[UNK]``, the pieces in sorted order, the words, then the pairs (by frequency)."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    if not lines:
        raise ValueError("no text to build a vocabulary from")
    wordpiece = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    wordpiece.normalizer = normalizers.NFC()
    wordpiece.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    wordpiece.train_from_iterator(lines, trainers.WordPieceTrainer(vocab_size=wordpiece_size,
                                                                   special_tokens=["[UNK]"], show_progress=False))
    vocab = wordpiece.get_vocab()
    # the trainer numbers its pieces in an order that changes from run to run (ties in its hash maps): ids follow a
    # canonical order instead ([UNK], then the pieces sorted), so every process and checkpoint sees the same ids
    tokens = ["[UNK]", *sorted(t for t in vocab if t != "[UNK]")]
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


def context_free_recall(train_ids: np.ndarray, targets: np.ndarray, tokens: Sequence[str], ks: Sequence[int]
                        ) -> list[dict]:
    """Recall@k (%) on the masked ``targets`` of two rankings that read no context: every token by its frequency in
    ``train_ids`` (ties by id), and by its frequency among ``targets`` (the oracle). Each row also names its top
    token, its hits (test windows) at each k, and the entropy (nats) of the frequencies it ranks by: the training
    loss of a model that predicts the training-token frequencies whatever the context."""
    targets = np.asarray(targets, dtype=np.int64)
    if targets.size == 0:
        raise ValueError("no test targets to score")
    rows = []
    for name, ids in ((TRAINING_FREQUENCY, np.asarray(train_ids, dtype=np.int64)), (TEST_FREQUENCY, targets)):
        counts = np.bincount(ids, minlength=len(tokens))
        order = np.argsort(-counts, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        shares = counts[counts > 0] / counts.sum()
        row = {"name": name, **{f"rec@{k}": 100.0 * float((rank[targets] < k).mean()) for k in ks},
               **{f"hits@{k}": int((rank[targets] < k).sum()) for k in ks}, "segments": int(targets.size),
               "top_token": str(tokens[order[0]]), "entropy_nats": float(-(shares * np.log(shares)).sum())}
        rows.append(row)
    return rows
