"""Pre-training pieces shared by the encoder chapters (HashFormers' BERT baselines, dynamic hash embeddings).

* :func:`wikitext_lines`: the staged WikiText-2 text as non-empty lines, headings (``= ... =``) dropped;
  :func:`ptb_lines`: a Penn Treebank split's sentences;
* :func:`corpus_lines`: the lines of a pre-training corpus a profile names (:data:`CORPUS_NAMES`: WikiText-2's
  validation split, Penn Treebank's train split, or both; 16.25M words of 2015 English Wikipedia, less every
  hundredth article, which ``enwiki2015-heldout`` holds for measuring a pre-trained model on text it never saw);
* :class:`Sequences`: fixed-length windows of a token stream, as a ``Dataset`` of ``int64`` rows;
* :func:`with_specials`: ``<s>`` and ``</s>`` (or another pair of special ids) around each row;
* :func:`pretraining_flatness`: whether a loss curve had flattened (the share of its decrease in its second half);
* :class:`MLMObjective`: BERT's masked-language-modelling corruption (15% of the tokens: 80% ``<mask>``, 10% random,
  10% kept) with its own seeded generator, special ids (the tokenizer's ``all_special_ids``) never
  chosen.
"""
from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np
import pandas as pd
import torch

from hashlib_core.bpe import BOS_ID, EOS_ID

__all__ = ["CORPUS_NAMES", "ENWIKI_HELDOUT_EVERY", "wikitext_lines", "ptb_lines", "corpus_lines", "Sequences",
           "with_specials", "pretraining_flatness", "MLMObjective"]


#: the pre-training corpora a profile can name; ``a+b`` is corpus ``a``'s lines, then ``b``'s
CORPUS_NAMES = ("wikitext2-validation", "ptb-train", "ptb-train+wikitext2-validation", "enwiki2015",
                "enwiki2015-heldout")
#: every this-many-th article of the Wikipedia corpus (its last of each run of this many) is held out
ENWIKI_HELDOUT_EVERY = 100


def _wikitext_stream(split: str) -> Iterator[str]:
    """Stripped non-empty lines of a WikiText-2 split, its headings (``= ... =``) dropped."""
    from hashlib_core.data import load_wikitext2

    for line in load_wikitext2()[split]["text"]:
        line = line.strip()
        if line and not line.startswith("="):
            yield line


def _ptb_stream(split: str) -> Iterator[str]:
    """Stripped non-empty lines (sentences) of a Penn Treebank split."""
    from hashlib_core.data import load_ptb

    for line in load_ptb()[split]["text"]:
        line = line.strip()
        if line:
            yield line


@functools.lru_cache(maxsize=1)
def _enwiki_columns() -> tuple[list[int], list[str]]:
    """The Wikipedia corpus's article ids and text lines, read once per process."""
    from hashlib_core.data import load_enwiki2015

    wiki = load_enwiki2015()
    return wiki["doc_id"][:], wiki["text"][:]


def _enwiki_stream(heldout: bool) -> Iterator[str]:
    """Stripped text lines of the Wikipedia corpus (:func:`hashlib_core.data.load_enwiki2015`: tag and blank lines
    already dropped), article by article: every :data:`ENWIKI_HELDOUT_EVERY`-th article only (``heldout``), or
    every other one."""
    article, previous = -1, None
    for doc_id, line in zip(*_enwiki_columns()):
        if doc_id != previous:
            article, previous = article + 1, doc_id
        if (article % ENWIKI_HELDOUT_EVERY == ENWIKI_HELDOUT_EVERY - 1) == heldout:
            line = line.strip()
            if line:
                yield line


_CORPUS_PARTS: dict[str, Callable[[], Iterator[str]]] = {
    "wikitext2-validation": lambda: _wikitext_stream("validation"),
    "ptb-train": lambda: _ptb_stream("train"),
    "enwiki2015": lambda: _enwiki_stream(heldout=False),
    "enwiki2015-heldout": lambda: _enwiki_stream(heldout=True),
}


def _first_words(lines: Iterable[str], max_words: int) -> list[str]:
    """The lines up to and including the one that reaches ``max_words`` words (0: all lines)."""
    out, words = [], 0
    for line in lines:
        out.append(line)
        words += len(line.split())
        if max_words and words >= max_words:
            break
    return out


def wikitext_lines(split: str = "validation", max_words: int = 0) -> list[str]:
    """Non-empty lines of a staged WikiText-2 split without its headings; stop after ``max_words`` words (0: all)."""
    return _first_words(_wikitext_stream(split), max_words)


def ptb_lines(split: str = "train", max_words: int = 0) -> list[str]:
    """Non-empty, stripped lines (sentences) of a Penn Treebank split (``train``, ``validation`` or ``test``); stop
    after ``max_words`` words (0: all)."""
    return _first_words(_ptb_stream(split), max_words)


def corpus_lines(name: str, max_words: int = 0) -> list[str]:
    """Non-empty, stripped lines of the pre-training corpus ``name`` (one of :data:`CORPUS_NAMES`).

    ``"wikitext2-validation"``: WikiText-2's validation split without its headings (as :func:`wikitext_lines`);
    ``"ptb-train"``: Penn Treebank's train split, a sentence per line; ``"ptb-train+wikitext2-validation"``: the
    PTB lines, then the WikiText-2 lines; ``"enwiki2015"``: the Wikipedia articles' text lines (titles, headings,
    paragraphs) but every :data:`ENWIKI_HELDOUT_EVERY`-th article's, which ``"enwiki2015-heldout"`` holds. With
    ``max_words > 0`` the list ends with the line that brings the (whitespace-split) word count to ``max_words`` or
    beyond; later corpora are then not read at all.
    """
    if not isinstance(name, str):
        raise TypeError(f"corpus name must be a str, got {type(name).__name__}; choose one of {list(CORPUS_NAMES)}")
    if name not in CORPUS_NAMES:
        raise ValueError(f"unknown corpus {name!r}; choose one of {list(CORPUS_NAMES)}")
    if isinstance(max_words, bool) or not isinstance(max_words, int) or max_words < 0:
        raise ValueError(f"max_words must be a non-negative int (0: the whole corpus), got {max_words!r}")
    streams = (_CORPUS_PARTS[part]() for part in name.split("+"))
    return _first_words(itertools.chain.from_iterable(streams), max_words)


class Sequences(torch.utils.data.Dataset):
    """Fixed-length chunks of a unit stream, as rows of unit indices (``int64``)."""

    def __init__(self, unit_ids: np.ndarray, length: int) -> None:
        rows = len(unit_ids) // length
        if rows == 0:
            raise ValueError(f"the corpus has {len(unit_ids)} units, fewer than one sequence of {length}")
        self.rows = torch.from_numpy(np.ascontiguousarray(unit_ids[: rows * length].reshape(rows, length)))

    def __len__(self) -> int:
        return self.rows.shape[0]

    def __getitem__(self, i: int) -> torch.Tensor:
        return self.rows[i]


def with_specials(body: torch.Tensor, first: int = BOS_ID, last: int = EOS_ID) -> torch.Tensor:
    """``(rows, L)`` ids -> ``(rows, L + 2)`` with ``first`` before and ``last`` after each row (``<s>`` and ``</s>``
    of :func:`hashlib_core.bpe.train_bpe`'s vocabulary; BERT's WordPiece: ``[CLS]`` and ``[SEP]``)."""
    rows = body.shape[0]
    return torch.cat([torch.full((rows, 1), first, dtype=torch.long), body,
                      torch.full((rows, 1), last, dtype=torch.long)], dim=1)


def pretraining_flatness(curves: pd.DataFrame) -> pd.DataFrame:
    """Per model (``name``) of a loss curve (``step``, ``loss``): its loss at the first log point, halfway and at
    the end, and the share of its whole decrease that came in the second half of the steps (near 0: the loss had
    flattened; large: still falling)."""
    rows = []
    for name, c in curves.groupby("name", sort=False):
        c = c.sort_values("step")
        half = c.iloc[(c["step"] - c["step"].max() / 2).abs().argmin()]
        first, last = c["loss"].iloc[0], c["loss"].iloc[-1]
        drop = first - last
        rows.append({"name": name, "first logged loss": first, "loss halfway": half["loss"], "final loss": last,
                     "share of the decrease in the second half (%)":
                         100.0 * (half["loss"] - last) / drop if drop > 0 else np.nan})
    return pd.DataFrame(rows)


class MLMObjective:
    """BERT-MLM's corruption (15% of tokens: 80% ``<mask>``, 10% random, 10% kept) with its own seeded generator."""

    def __init__(self, tokenizer: Any, seed: int) -> None:
        from transformers import DataCollatorForLanguageModeling

        self.collator = DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15)
        self.collator.generator = torch.Generator().manual_seed(seed)
        #: never masked: the tokenizer's special ids (0-4 for train_bpe; roberta-base's 0-3 and 50,264)
        self.special_ids = torch.tensor(sorted(tokenizer.all_special_ids), dtype=torch.long)

    def __call__(self, batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        ids = batch["input_ids"]
        special = torch.isin(ids, self.special_ids)
        input_ids, labels = self.collator.torch_mask_tokens(ids.clone(), special_tokens_mask=special)
        return {**batch, "input_ids": input_ids, "labels": labels}
