"""The pNLP-Mixer chapter's task data: sentences as word lists with an intent and one BIO slot tag per word.

Four sources, one shape (:class:`TaskData`: ``train`` / ``validation`` / ``test`` splits of :class:`Split`), all read
through the data layer (:mod:`hashlib_core.data`), which derives or checks the tags:

* **ATIS** (English, Goo et al. 2018 split: 4,478 / 500 / 893) - the same test set as multiATIS EN, whose split is
  4,488 / 490 / 893: ten sentences sit in ATIS's training split that multiATIS puts in its development split, so
  validation scores are on slightly different sentences, test scores on the same ones.
* **SNIPS** (Goo et al. split: 13,084 / 700 / 700).
* **MTOP in full** (``mtop-<language>``, :func:`~hashlib_core.data.load_mtop`): the release's train, eval
  (our validation) and test splits in six languages. Slot tags are the data layer's, located from the flat parse;
  intents are the parse's top-level ``IN:`` labels. §4 prints "10k, 1.5k, and 3k samples" per language
  (:data:`PAPER_MTOP_TRAIN`); the release has more (the page prints the sizes).
* **MASSIVE 1.1** (``massive-<locale>``, :func:`~hashlib_core.data.load_massive`): the official splits of the six
  MTOP locales, with the released BIO tags. Not the paper's dataset: the chapter's MASSIVE table is its own.

Label inventories are those of the training split; a validation or test label never seen in training maps to the id
:data:`UNSEEN` (-1), which no model can predict, so it counts as an error (as it would for the paper's models).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

__all__ = ["UNSEEN", "Split", "TaskData", "load_task", "outside_only_share", "TASKS", "MTOP_LANGUAGES",
           "MASSIVE_LANGUAGES", "PAPER_MTOP_TRAIN", "task_language"]

UNSEEN = -1
TASKS = ("atis", "snips", "mtop", "massive")
MTOP_LANGUAGES = ("en", "de", "es", "fr", "hi", "th")
#: MASSIVE's locales of the six MTOP languages (the data layer names them by language)
MASSIVE_LANGUAGES = MTOP_LANGUAGES
#: MTOP's training sentences per language as §4 prints them ("The train, dev, and test set for each language
#: contain 10k, 1.5k, and 3k samples."): the paper's number
PAPER_MTOP_TRAIN = "10k"


@dataclass(frozen=True)
class Split:
    """Sentences (word lists), intent ids and per-word slot-tag ids of one split."""

    words: list[list[str]]
    intents: list[int]
    slots: list[list[int]]

    def __post_init__(self) -> None:
        if not (len(self.words) == len(self.intents) == len(self.slots)):
            raise ValueError("a split needs as many intents and slot sequences as sentences")
        for i, (w, s) in enumerate(zip(self.words, self.slots)):
            if len(w) != len(s) or not w:
                raise ValueError(f"sentence {i}: {len(w)} words but {len(s)} slot tags (need one per word, >= 1)")

    def __len__(self) -> int:
        return len(self.words)

    def head(self, n: int) -> "Split":
        """The first ``n`` sentences (0: all)."""
        return self if n <= 0 else Split(self.words[:n], self.intents[:n], self.slots[:n])

    def sample(self, n: int, seed: int) -> "Split":
        """``n`` sentences drawn without replacement by ``seed`` (0, or ``n`` at least the split's size: all), kept in
        their file order. Not the first ``n``: a file may be grouped by label (MASSIVE's training files are), and a
        prefix then misses whole classes."""
        if n < 0:
            raise ValueError(f"a sample needs n >= 0 (0: every sentence), got {n}")
        if n == 0 or n >= len(self):
            return self
        keep = np.sort(np.random.default_rng(seed).choice(len(self), size=n, replace=False))
        return Split([self.words[i] for i in keep], [self.intents[i] for i in keep], [self.slots[i] for i in keep])


@dataclass(frozen=True)
class TaskData:
    """A task's three splits and its label names (``intent_names[i]``, ``slot_names[j]``)."""

    name: str
    train: Split
    validation: Split
    test: Split
    intent_names: list[str] = field(default_factory=list)
    slot_names: list[str] = field(default_factory=list)

    @property
    def num_intents(self) -> int:
        return len(self.intent_names)

    @property
    def num_slots(self) -> int:
        return len(self.slot_names)


def _encode(names: Sequence[Sequence[str]] | Sequence[str], index: dict[str, int]) -> list:
    out = []
    for item in names:
        if isinstance(item, str):
            out.append(index.get(item, UNSEEN))
        else:
            out.append([index.get(x, UNSEEN) for x in item])
    return out


def _from_names(name: str, splits: dict[str, tuple[list[list[str]], list[str], list[list[str]]]]) -> TaskData:
    """Build id-coded splits from label names; inventories from the training split (sorted, ``O`` first)."""
    words, intents, slots = splits["train"]
    intent_names = sorted(set(intents))
    slot_names = sorted({t for seq in slots for t in seq}, key=lambda t: (t != "O", t))
    i_index = {n: i for i, n in enumerate(intent_names)}
    s_index = {n: i for i, n in enumerate(slot_names)}
    built = {k: Split(w, _encode(i, i_index), _encode(s, s_index)) for k, (w, i, s) in splits.items()}
    return TaskData(name, built["train"], built["validation"], built["test"], intent_names, slot_names)


def task_language(name: str) -> tuple[str, str]:
    """``("mtop", "de")`` for ``"mtop-de"``, ``("atis", "en")`` for ``"atis"``; a clear error for an unknown task."""
    if not isinstance(name, str):
        raise TypeError(f"task name must be a str, got {type(name).__name__}")
    if name in ("atis", "snips"):
        return name, "en"
    source, _, language = name.partition("-")
    if source in ("mtop", "massive") and language in MTOP_LANGUAGES:
        return source, language
    raise ValueError(f"unknown task {name!r}; use 'atis', 'snips', 'mtop-<language>' or 'massive-<language>' with "
                     f"language in {MTOP_LANGUAGES}")


def _from_dataset(name: str, ds) -> TaskData:
    """A data-layer ``DatasetDict`` with ``tokens``, ``intent`` and ``slot_tags`` columns as a :class:`TaskData`."""
    intent_feature = ds["train"].features["intent"]
    slot_feature = ds["train"].features["slot_tags"].feature
    splits = {}
    for split in ("train", "validation", "test"):
        part = ds[split]
        splits[split] = ([list(t) for t in part["tokens"]], intent_feature.int2str(list(part["intent"])),
                         [slot_feature.int2str(list(s)) for s in part["slot_tags"]])
    return _from_names(name, splits)


def load_task(name: str) -> TaskData:
    """``"atis"``, ``"snips"``, ``"mtop-<language>"`` (``mtop-en``, ``mtop-de``, ...) or ``"massive-<language>"``.

    MTOP's tags are the data layer's (:func:`~hashlib_core.data.load_mtop`): its warning about slots whose words
    do not occur in their utterance is silenced here (those slots tag no word; the data layer's tests cover them)."""
    from hashlib_core.data import load_atis, load_massive, load_mtop, load_snips

    source, language = task_language(name)
    if source in ("atis", "snips"):
        return _from_dataset(name, {"atis": load_atis, "snips": load_snips}[source]())
    if source == "massive":
        return _from_dataset(name, load_massive(language))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="MTOP .* do not occur in their utterance")
        return _from_dataset(name, load_mtop(language))


def outside_only_share(task: TaskData, split: str = "test") -> float:
    """Percentage of ``split``'s sentences whose every gold tag is ``O``: the exact match of a tagger that always
    says ``O`` (the floor a slot model must beat)."""
    if "O" not in task.slot_names:
        return 0.0
    outside = task.slot_names.index("O")
    part: Split = getattr(task, split)
    return 100.0 * sum(all(t == outside for t in tags) for tags in part.slots) / len(part)
