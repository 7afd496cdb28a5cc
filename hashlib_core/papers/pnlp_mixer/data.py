"""The pNLP-Mixer chapter's task data: sentences as word lists with an intent and one BIO slot tag per word.

Three sources, one shape (:class:`TaskData`: ``train`` / ``validation`` / ``test`` splits of :class:`Split`):

* **ATIS** (English, Goo et al. 2018 split: 4,478 / 500 / 893) - the same test set as multiATIS EN, whose split is
  4,488 / 490 / 893: ten sentences sit in ATIS's training split that multiATIS puts in its development split, so
  validation scores are on slightly different sentences, test scores on the same ones.
* **SNIPS** (Goo et al. split: 13,084 / 700 / 700).
* **MTOP, XSemPLR subset** (``../shared/data/mtop_xsemplr``): only MTOP's dev and test items shared by six languages
  are staged (859 and 1,237 per language). We **train on the first 90% of the dev items** (in file order),
  **select models on the other 10%**, and **test on the test items**: a small fraction of MTOP's training split
  (:data:`PAPER_MTOP_TRAIN` per language, as §4 prints it; the page computes the fraction), so exact-match scores are
  far below and not comparable with the paper's Table 4. Slot tags are
  read off the TOP tree: every word inside a top-level ``[SL:...]`` node (nested nodes included) gets
  ``B-``/``I-`` of that slot, every other word ``O``; intents are the top-level ``IN:`` labels.

Label inventories are those of the training split; a validation or test label never seen in training maps to the id
:data:`UNSEEN` (-1), which no model can predict, so it counts as an error (as it would for the paper's models).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

__all__ = ["UNSEEN", "Split", "TaskData", "load_task", "mtop_words_and_tags", "outside_only_share", "TASKS",
           "MTOP_LANGUAGES", "PAPER_MTOP_TRAIN"]

UNSEEN = -1
TASKS = ("atis", "snips", "mtop")
MTOP_LANGUAGES = ("en", "de", "es", "fr", "hi", "th")
#: share of the staged MTOP dev items used for training (the rest selects models)
MTOP_TRAIN_SHARE = 0.9
#: MTOP's training sentences per language as §4 prints them ("The train, dev, and test set for each language
#: contain 10k, 1.5k, and 3k samples."): the paper's number, not staged here
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


def _intent_slot_task(name: str) -> TaskData:
    from hashlib_core.data import load_atis, load_snips

    ds = {"atis": load_atis, "snips": load_snips}[name]()
    intent_feature = ds["train"].features["intent"]
    slot_feature = ds["train"].features["slot_tags"].feature
    splits = {}
    for split in ("train", "validation", "test"):
        part = ds[split]
        splits[split] = ([list(t) for t in part["tokens"]], intent_feature.int2str(list(part["intent"])),
                         [slot_feature.int2str(list(s)) for s in part["slot_tags"]])
    return _from_names(name, splits)


def _mtop_split(items, intent_feature) -> tuple[list[list[str]], list[str], list[list[str]]]:
    """Words, intent names (the loader's top-level ``IN:`` labels) and BIO tags of a slice of MTOP items."""
    words, slots = [], []
    for text, tree in zip(items["text"], items["slot_intent"]):
        w, t = mtop_words_and_tags(text, tree)
        words.append(w)
        slots.append(t)
    return words, intent_feature.int2str(list(items["intent"])), slots


def _top_slot_spans(tree: str) -> list[tuple[str, list[str]]]:
    """``(slot, words)`` of every top-level ``[SL:...]`` node of a TOP tree, nested words included."""
    spans: list[tuple[str | None, list[str]]] = []
    depth = 0
    for piece in tree.split():
        if piece.startswith("["):
            depth += 1
            if depth == 2:
                spans.append((piece[4:] if piece.startswith("[SL:") else None, []))
        elif piece == "]":
            if depth == 0:
                raise ValueError(f"unbalanced TOP tree {tree[:80]!r}: a ']' closes no node")
            depth -= 1
        elif depth >= 2:
            spans[-1][1].append(piece)
    if depth:
        raise ValueError(f"unbalanced TOP tree {tree[:80]!r}: {depth} node(s) never closed")
    return [(slot, w) for slot, w in spans if slot is not None and w]


def mtop_words_and_tags(text: str, tree: str) -> tuple[list[str], list[str]]:
    """Words of the utterance and their BIO tags from its decoupled TOP tree.

    The tree keeps only the words inside slots (inside a nested intent only some of them), and in the translated
    languages not always in the utterance's order. So each top-level ``[SL:X ...]`` node's words are looked up among
    the still untagged words of the utterance (the leftmost occurrence of each, in any order); the matched words
    are tagged ``B-X`` (the leftmost) and ``I-X``; every other word is ``O`` (e.g. "with" in "dinner with Amy",
    which the nested intent leaves out). A slot word that does not occur in the utterance is skipped.

    ``("call Camilla now", "[IN:CREATE_CALL [SL:CONTACT Camilla ] ]")`` gives
    ``(["call", "Camilla", "now"], ["O", "B-CONTACT", "O"])``.
    """
    if not isinstance(text, str) or not isinstance(tree, str):
        raise TypeError("text and tree must be str")
    words = text.split()
    if not words:
        raise ValueError("an MTOP utterance has no words")
    tags = ["O"] * len(words)
    for slot, span in _top_slot_spans(tree):
        matched = []
        for word in span:
            at = next((i for i, w in enumerate(words) if w == word and tags[i] == "O" and i not in matched), None)
            if at is not None:
                matched.append(at)
        for k, i in enumerate(sorted(matched)):
            tags[i] = ("B-" if k == 0 else "I-") + slot
    return words, tags


def _mtop_task(language: str) -> TaskData:
    from hashlib_core.data import load_mtop_xsemplr

    if language not in MTOP_LANGUAGES:
        raise ValueError(f"MTOP language must be one of {MTOP_LANGUAGES}, got {language!r}")
    ds = load_mtop_xsemplr(language)
    dev, test = ds["validation"], ds["test"]
    cut = int(round(MTOP_TRAIN_SHARE * len(dev)))
    intent = dev.features["intent"]
    splits = {"train": _mtop_split(dev[:cut], intent), "validation": _mtop_split(dev[cut:], intent),
              "test": _mtop_split(test[:], intent)}
    return _from_names(f"mtop-{language}", splits)


def load_task(name: str) -> TaskData:
    """``"atis"``, ``"snips"`` or ``"mtop-<language>"`` (``mtop-en``, ``mtop-de``, ...)."""
    if not isinstance(name, str):
        raise TypeError(f"task name must be a str, got {type(name).__name__}")
    if name in ("atis", "snips"):
        return _intent_slot_task(name)
    if name.startswith("mtop-"):
        return _mtop_task(name[5:])
    raise ValueError(f"unknown task {name!r}; use 'atis', 'snips' or 'mtop-<language>' with language in "
                     f"{MTOP_LANGUAGES}")


def outside_only_share(task: TaskData, split: str = "test") -> float:
    """Percentage of ``split``'s sentences whose every gold tag is ``O``: the exact match of a tagger that always
    says ``O`` (the floor a slot model must beat)."""
    if "O" not in task.slot_names:
        return 0.0
    outside = task.slot_names.index("O")
    part: Split = getattr(task, split)
    return 100.0 * sum(all(t == outside for t in tags) for tags in part.slots) / len(part)
