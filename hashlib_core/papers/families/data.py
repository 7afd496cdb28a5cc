"""Track A's data: SST-2 and MASSIVE EN through BERT's uncased WordPiece (30,522 pieces), tokenised once.

Each task has a ``train`` part (what the models fit), one selection part (the learning-rate choice and early stopping
read it) and one or more report parts (what the tables print; never read while training or choosing), named as the
task's protocol names them (:mod:`hashlib_core.protocol`):

* ``sst2``: GLUE SST-2. Its test labels are not public, and its 872 dev items resolve only gaps of several points,
  so two parts of the training split (a fixed shuffle) are held out
  (:func:`hashlib_core.glue_protocol.held_out_parts`, the GLUE chapters' shared cut): ``heldout`` (selection) and
  ``report`` (10,000 items in the cpu profile), and the ``dev`` split is a second report. Training items whose text
  equals a held-out item's are dropped (SST-2's training split repeats some phrases). The training split holds
  phrases of the treebank's sentences as well as whole sentences, so ``report`` scores phrases, ``dev`` whole
  sentences.
* ``massive``: MASSIVE 1.1 EN intents (60 classes): ``train`` / ``validation`` / ``test`` as released (validation
  selects, test reports).

:func:`typo_texts` injects character noise into the first report part (the robustness axis) and
:func:`frequency_deciles` groups its items by their rarest piece's training count.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import torch

__all__ = ["TASKS", "TaskData", "load_task", "heldout_size", "encode", "collate", "typo_texts", "frequency_deciles"]

#: task -> (what it is, metric, its parts besides ``train``: the selection part first, then the report parts)
TASKS = {"sst2": ("GLUE SST-2 sentiment (2 classes)", "accuracy", ("heldout", "report", "dev")),
         "massive": ("MASSIVE 1.1 EN intent (60 classes)", "accuracy", ("validation", "test"))}


@dataclass
class TaskData:
    """One task, tokenised: ``{part: (list of id lists, labels)}``, the texts of every part but ``train``, and the
    class count."""

    name: str
    parts: dict[str, tuple[list[list[int]], np.ndarray]]
    texts: dict[str, list[str]]
    num_labels: int

    def train_counts(self, vocab_size: int) -> np.ndarray:
        """How often each piece occurs in the training part."""
        flat = np.fromiter((i for ids in self.parts["train"][0] for i in ids), dtype=np.int64)
        return np.bincount(flat, minlength=vocab_size)


def encode(tokenizer, texts: Sequence[str], max_len: int) -> list[list[int]]:
    """``[CLS] pieces [SEP]`` of every text, cut to ``max_len`` ids."""
    return [list(ids) for ids in tokenizer(list(texts), truncation=True, max_length=max_len)["input_ids"]]


def _sample(part: tuple[list, list], limit: int, seed: int) -> tuple[list, list]:
    """At most ``limit`` items of a split (0: all), a seeded sample kept in file order (MASSIVE's files are grouped
    by intent, so their first rows miss some)."""
    texts, labels = part
    if not limit or limit >= len(texts):
        return texts, labels
    keep = np.sort(np.random.default_rng([seed, limit]).permutation(len(texts))[:limit])
    return [texts[i] for i in keep], [labels[i] for i in keep]


def _listed(part: tuple[list, np.ndarray]) -> tuple[list, list]:
    return list(part[0]), part[1].tolist()


def _texts_labels(task: str, train_limit: int, heldout: int, seed: int, eval_limit: int = 0, report: int = 0):
    from hashlib_core.data import load_glue, load_massive

    if task == "sst2":
        from hashlib_core.glue_protocol import held_out_parts

        parts = held_out_parts("sst2", heldout, report, train_limit, seed)
        dev = load_glue("sst2")["validation"]
        return {"train": _listed(parts["train"]), "heldout": _listed(parts["selection"]),
                "report": _listed(parts["report"]),
                "dev": _sample((list(dev["sentence"]), list(dev["label"])), eval_limit, seed)}, 2
    if task == "massive":
        ds = load_massive("en")
        part = lambda split: (list(ds[split]["text"]), list(ds[split]["intent"]))  # noqa: E731
        train = part("train")
        if train_limit:   # a seeded sample: the released file is grouped by intent, its first rows miss some
            keep = np.sort(np.random.default_rng(seed).permutation(len(train[0]))[:train_limit])
            train = ([train[0][i] for i in keep], [train[1][i] for i in keep])
        return {"train": train, "validation": _sample(part("validation"), eval_limit, seed),
                "test": _sample(part("test"), eval_limit, seed)}, \
            ds["train"].features["intent"].num_classes
    raise ValueError(f"unknown task {task!r}; choose one of {sorted(TASKS)}")


def heldout_size(task: str, profile: Any) -> int:
    """How many held-out examples choose the learning rate and the step of ``task`` (SST-2: the profile's
    ``sst2_heldout``; MASSIVE: its validation split)."""
    if task == "sst2":
        return int(profile.sst2_heldout)
    if task == "massive":
        from hashlib_core.data import load_massive

        size = len(load_massive("en")["validation"])
        return min(size, profile.eval_limit) if profile.eval_limit else size
    raise ValueError(f"unknown task {task!r}; choose one of {sorted(TASKS)}")


def load_task(task: str, tokenizer, max_len: int, train_limit: int = 0, heldout: int = 1000, seed: int = 0, *,
              eval_limit: int = 0, report: int = 10000) -> TaskData:
    """Task ``task`` tokenised with ``tokenizer`` (``train_limit`` > 0 keeps that many training examples;
    ``eval_limit`` > 0 scores that many validation and test items of MASSIVE, dev items of SST-2; ``heldout`` and
    ``report``: the sizes of SST-2's two held-out parts of its training split)."""
    raw, num_labels = _texts_labels(task, train_limit, heldout, seed, eval_limit, report)
    parts = {name: (encode(tokenizer, texts, max_len), np.asarray(labels, dtype=np.int64))
             for name, (texts, labels) in raw.items()}
    return TaskData(task, parts, {name: list(texts) for name, (texts, _) in raw.items() if name != "train"},
                    num_labels)


def collate(rows: Sequence[tuple[list[int], int]]) -> dict[str, torch.Tensor]:
    """Pad a batch of ``(ids, label)`` to its longest row (pad id 0, BERT's ``[PAD]``)."""
    width = max(len(ids) for ids, _ in rows)
    ids = torch.zeros(len(rows), width, dtype=torch.long)
    mask = torch.zeros(len(rows), width, dtype=torch.long)
    for i, (row, _) in enumerate(rows):
        ids[i, :len(row)] = torch.tensor(row)
        mask[i, :len(row)] = 1
    return {"input_ids": ids, "attention_mask": mask, "labels": torch.tensor([label for _, label in rows])}


_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _typo(word: str, rng: np.random.Generator) -> str:
    """One edit of ``word``: swap two neighbours, delete, insert or substitute a letter (uniformly)."""
    i = int(rng.integers(len(word)))
    kind = int(rng.integers(4)) if len(word) > 1 else 2
    letter = _LETTERS[int(rng.integers(26))]
    if kind == 0:
        i = min(i, len(word) - 2)
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    if kind == 1:
        return word[:i] + word[i + 1:]
    if kind == 2:
        return word[:i] + letter + word[i:]
    return word[:i] + letter + word[i + 1:]


def typo_texts(texts: Sequence[str], rate: float, seed: int = 0) -> list[str]:
    """Every alphabetic word of length >= 3 edited once with probability ``rate`` (one fixed random stream)."""
    if not 0 <= rate <= 1:
        raise ValueError(f"rate must be in [0, 1], got {rate}")
    rng = np.random.default_rng(seed)
    out = []
    for text in texts:
        words = text.split(" ")
        out.append(" ".join(_typo(w, rng) if len(w) >= 3 and w.isalpha() and rng.random() < rate else w
                            for w in words))
    return out


def frequency_deciles(report_ids: Sequence[Sequence[int]], counts: np.ndarray, special: int = 999) -> np.ndarray:
    """Each report item's decile (1 = rarest, 10 = most common) of its rarest piece's training count (ids below
    ``special``, BERT's ``[PAD]``, ``[unused]`` and other special pieces, ignored), ties broken by position: ten
    groups of equal size. An item with no other piece gets 0 (in no decile)."""
    rarest = np.array([min((counts[i] for i in ids if i >= special), default=np.inf) for ids in report_ids])
    scored = np.isfinite(rarest)
    out = np.zeros(len(rarest), dtype=np.int64)
    n = int(scored.sum())
    ranks = np.empty(n, dtype=np.int64)
    ranks[np.argsort(rarest[scored], kind="stable")] = np.arange(n)
    out[scored] = 1 + (ranks * 10) // max(1, n)
    return out
