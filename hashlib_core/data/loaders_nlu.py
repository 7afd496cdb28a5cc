"""Loaders of the multilingual intent and slot data of the pNLP-Mixer chapter, one configuration per language
(en, de, es, fr, hi, th), splits ``train``, ``validation`` and ``test``:

* **MTOP in full** (:func:`load_mtop`): a reformat of the release that keeps the utterance and its flat parse but
  drops the token and slot-offset columns, so the BIO slot tags are derived here (:func:`_mtop_row`);
* **MASSIVE** (:func:`load_massive`): whitespace-tokenized utterances with one BIO slot tag per token, as released.
"""
from __future__ import annotations

import re
import unicodedata
import warnings
from typing import Any

from datasets import ClassLabel, DatasetDict, Features, List, Value

from hashlib_core.data.catalog import _config
from hashlib_core.data.errors import DataFormatError
from hashlib_core.data.readers import _dataset, _read_text, _tsv_rows

__all__ = ["load_mtop", "load_massive"]

_TOKEN_RE = re.compile(r"\S+")        # the tokens of str.split(): \s and str.split() share Unicode's whitespace


# ---------------------------------------------------------------------------------------------- MTOP
def _parse_flat(parse: str) -> tuple[str, list[tuple[str, list[str]]]]:
    """Intent and slots of a flat MTOP parse, one intent node holding slot nodes only.

    ``"[IN:GET_WEATHER [SL:LOCATION Maricopa County ] [SL:DATE_TIME this week ] ]"`` gives
    ``("IN:GET_WEATHER", [("LOCATION", ["Maricopa", "County"]), ("DATE_TIME", ["this", "week"])])``. Anything
    else (a nested node, a word outside a slot, an empty slot, unbalanced brackets) is a :class:`DataFormatError`.
    """
    pieces = parse.split()
    if not pieces or not pieces[0].startswith("[IN:") or len(pieces[0]) == len("[IN:"):
        raise DataFormatError(f"flat parse {parse!r} does not start with an [IN:...] node")
    slots: list[tuple[str, list[str]]] = []
    current: tuple[str, list[str]] | None = None
    for number, piece in enumerate(pieces[1:], start=1):
        if piece.startswith("["):
            if current is not None:
                raise DataFormatError(f"flat parse {parse!r}: node {piece!r} inside slot {current[0]!r} "
                                      "(a flat parse holds slot nodes only, each with words only)")
            if not piece.startswith("[SL:") or len(piece) == len("[SL:"):
                raise DataFormatError(f"flat parse {parse!r}: node {piece!r} is not a slot [SL:...]")
            current = (piece[len("[SL:"):], [])
        elif piece == "]":
            if current is None:
                if number != len(pieces) - 1:
                    raise DataFormatError(f"flat parse {parse!r} has text after the intent's closing bracket")
                return pieces[0][1:], slots
            if not current[1]:
                raise DataFormatError(f"flat parse {parse!r}: slot {current[0]!r} has no words")
            slots.append(current)
            current = None
        elif current is None:
            raise DataFormatError(f"flat parse {parse!r}: word {piece!r} lies outside every slot")
        else:
            current[1].append(piece)
    raise DataFormatError(f"flat parse {parse!r} has unbalanced brackets (the intent node is not closed)")


def _word_char(ch: str) -> bool:
    """Letters, digits and combining marks (Devanagari vowel signs are marks, not letters)."""
    return ch.isalnum() or unicodedata.category(ch).startswith("M")


def _at_boundary(text: str, i: int) -> bool:
    if i <= 0 or i >= len(text):
        return True
    a, b = text[i - 1], text[i]
    return a.isspace() or b.isspace() or _word_char(a) != _word_char(b)


def _occurrences(text: str, words: list[str]) -> list[tuple[int, int]]:
    """Character spans of every occurrence of a slot's words in the utterance, overlapping ones included.

    Whitespace is ignored on both sides: the parse's words are MTOP's tokens (``7 pm`` for the utterance's ``7pm``,
    ``me ?`` for ``me?``; Thai utterances are not segmented at all), so the slot's characters are matched with
    optional whitespace between any two: the utterance's non-space characters are searched for the words' characters
    (:func:`_occurrences_reference` is the same search as one regular expression per slot, 30 times slower).
    """
    needle = "".join(words)
    if not needle or any(ch.isspace() for ch in needle):
        return _occurrences_reference(text, words)
    where = [i for i, ch in enumerate(text) if not ch.isspace()]
    compact = "".join(text[i] for i in where)
    spans = []
    at = compact.find(needle)
    while at != -1:
        spans.append((where[at], where[at + len(needle) - 1] + 1))
        at = compact.find(needle, at + 1)
    return spans


def _occurrences_reference(text: str, words: list[str]) -> list[tuple[int, int]]:
    """:func:`_occurrences` as one regular expression per slot: the words' characters with optional whitespace
    between any two."""
    pattern = re.compile(r"\s*".join(re.escape(ch) for ch in "".join(words)))
    spans = []
    match = pattern.search(text)
    while match is not None:
        spans.append(match.span())
        match = pattern.search(text, match.start() + 1)
    return spans


def _place_slots(text: str, slots: list[list[str]]) -> list[tuple[int, int] | None]:
    """One character span per slot (None where its words do not occur in the utterance).

    A flat parse lists its slots in the order they occur in the utterance (even where the row's decoupled parse
    does not). So the slots are placed in that order, each starting at or after the previous one's end, choosing
    among all placements the one that places the most slots, then the most slots that begin and end on a word
    boundary (a clitic ``me`` inside ``recuérdame`` does not, the word ``me`` does), then the earliest (least sum of
    starts). A slot left out (its words claimed by another slot, or out of order) then takes its best occurrence
    anywhere: one that overlaps no placed slot, then one on word boundaries, then the first.
    """
    found = [_occurrences(text, words) for words in slots]
    aligned = [[_at_boundary(text, s) and _at_boundary(text, e) for s, e in spans] for spans in found]
    # end of the last placed slot -> (score, placement); score = (slots placed, of them aligned, -sum of starts)
    paths: dict[int, tuple[tuple[int, int, int], list[int | None]]] = {0: ((0, 0, 0), [])}
    for spans, flags in zip(found, aligned):
        grown: dict[int, tuple[tuple[int, int, int], list[int | None]]] = {}
        for end, (score, choice) in paths.items():
            options = [(end, (score, choice + [None]))]
            options += [(e, ((score[0] + 1, score[1] + flag, score[2] - s), choice + [k]))
                        for k, ((s, e), flag) in enumerate(zip(spans, flags)) if s >= end]
            for key, value in options:
                if key not in grown or value[0] > grown[key][0]:
                    grown[key] = value
        paths = grown
    choice = max(paths.values(), key=lambda value: value[0])[1]
    placed: list[tuple[int, int] | None] = [found[i][k] if k is not None else None for i, k in enumerate(choice)]
    for i, spans in enumerate(found):
        if placed[i] is None and spans:
            taken = [p for p in placed if p is not None]
            placed[i] = min(spans, key=lambda sp: (any(sp[0] < e and s < sp[1] for s, e in taken),
                                                  not (_at_boundary(text, sp[0]) and _at_boundary(text, sp[1])),
                                                  sp[0]))
    return placed


def _mtop_row(text: str, parse: str) -> dict[str, Any]:
    """One MTOP utterance with its flat parse as ``intent``, ``tokens``, ``slot_tags``, ``slots``, ``unmatched_slots``.

    ``tokens`` are the utterance's whitespace tokens. Each slot of the parse is located in the utterance
    (:func:`_place_slots`); ``slots`` lists the located ones in parse order as ``{"label", "start", "end"}``
    character spans of ``text``. The tokens overlapping a slot's span that no earlier slot (in parse order) tagged
    are tagged ``B-<label>`` (the first) and ``I-<label>`` (the rest). So where one whitespace token holds several
    slots (unsegmented Thai, ``Workout-Timers``), or the parse repeats or nests a slot, only ``slots`` has them all.
    A slot whose words do not occur in the utterance is counted in ``unmatched_slots`` and tags nothing.
    """
    intent, parsed = _parse_flat(parse)
    tokens = [(m.start(), m.end()) for m in _TOKEN_RE.finditer(text)]
    tags = ["O"] * len(tokens)
    slots: list[dict[str, Any]] = []
    unmatched = 0
    for (label, _words), span in zip(parsed, _place_slots(text, [words for _, words in parsed])):
        if span is None:
            unmatched += 1
            continue
        start, end = span
        slots.append({"label": label, "start": start, "end": end})
        free = [k for k, (s, e) in enumerate(tokens) if s < end and e > start and tags[k] == "O"]
        for j, k in enumerate(free):
            tags[k] = ("B-" if j == 0 else "I-") + label
    return {"intent": intent, "tokens": [text[s:e] for s, e in tokens], "slot_tags": tags, "slots": slots,
            "unmatched_slots": unmatched}


def _parse_mtop(text: str, file: str) -> list[dict[str, Any]]:
    """The rows of one MTOP file (utterance, flat parse, decoupled parse, domain, locale per line)."""
    records = []
    for number, (utterance, parse, _decoupled, domain, _locale) in enumerate(_tsv_rows("mtop", file, text, 5),
                                                                            start=1):
        try:
            row = _mtop_row(utterance, parse)
        except DataFormatError as exc:
            raise DataFormatError(f"MTOP file {file!r} line {number}: {exc}; the file is not in the flat-parse "
                                  "format of nlu_data/mtop_flat_simple (see the dataset's SOURCE.md)") from None
        if not row["tokens"]:
            raise DataFormatError(f"MTOP file {file!r} line {number} has an empty utterance")
        records.append({"text": utterance, **row, "domain": domain, "parse": parse})
    return records


def load_mtop(language: str = "en", *, verify: bool = True) -> DatasetDict:
    """MTOP in full for one language: ``train``, ``validation`` (eval.txt) and ``test``.

    ``language`` is one of en, de, es, fr, hi, th. Columns: ``text`` (the utterance), ``tokens`` (its whitespace
    tokens), ``slot_tags`` (ClassLabel sequence, one BIO tag per token, e.g. ``B-LOCATION`` as in pNLP-Mixer's
    label file), ``intent`` (ClassLabel, the parse's top-level intent, e.g. ``IN:GET_WEATHER`` as in
    :func:`~hashlib_core.data.load_mtop_xsemplr`), ``slots`` (the located slots as character spans of ``text``),
    ``unmatched_slots`` (slots whose words were not found in the utterance), ``domain`` and ``parse`` (the flat
    parse). Class names are the sorted union over the language's three splits; compare languages by name, not id.

    The tags are derived, not released: see :func:`_mtop_row`. Thai utterances are not segmented, so a Thai
    whitespace token often holds a phrase and its tag is coarse; the character spans in ``slots`` are exact.
    A split with unmatched slots warns (a ``UserWarning`` naming the first); a malformed line raises
    :class:`~hashlib_core.data.DataFormatError` with the file and line.
    """
    if not isinstance(language, str):
        raise TypeError(f"language must be a str, got {type(language).__name__}")
    raw: dict[str, list[dict[str, Any]]] = {}
    for split, table in _config("mtop", language)["splits"].items():
        records = _parse_mtop(_read_text("mtop", table["file"], verify), table["file"])
        unmatched = [(n, r) for n, r in enumerate(records, start=1) if r["unmatched_slots"]]
        if unmatched:
            number, first = unmatched[0]
            warnings.warn(f"MTOP {table['file']}: {sum(r['unmatched_slots'] for _, r in unmatched)} slots in "
                          f"{len(unmatched)} rows do not occur in their utterance (first: line {number}, "
                          f"{first['parse']!r}); they tag no token, and the rows' unmatched_slots count them",
                          stacklevel=2)
        raw[split] = records
    intents = sorted({r["intent"] for records in raw.values() for r in records})
    tags = sorted({t for records in raw.values() for r in records for t in r["slot_tags"]})
    features = Features({
        "text": Value("string"), "tokens": List(Value("string")), "slot_tags": List(ClassLabel(names=tags)),
        "intent": ClassLabel(names=intents),
        "slots": List({"label": Value("string"), "start": Value("int32"), "end": Value("int32")}),
        "unmatched_slots": Value("int32"), "domain": Value("string"), "parse": Value("string"),
    })
    return DatasetDict({
        split: _dataset({c: [r[c] for r in records] for c in features}, features, "mtop", language)
        for split, records in raw.items()
    })


# ------------------------------------------------------------------------------------------- MASSIVE
def _parse_massive(text: str, file: str) -> list[dict[str, Any]]:
    """The rows of one MASSIVE ``_raw`` file (utterance, intent, BIO tags, domain, locale per line)."""
    records = []
    for number, (utterance, intent, tag_line, domain, _locale) in enumerate(_tsv_rows("massive", file, text, 5),
                                                                           start=1):
        tokens, tags = utterance.split(), tag_line.split()
        where = f"MASSIVE file {file!r} line {number}"
        if not tokens or len(tokens) != len(tags):
            raise DataFormatError(f"{where}: {len(tokens)} tokens but {len(tags)} slot tags; the third column must "
                                  "hold one BIO tag per whitespace token of the first")
        bad = [t for t in tags if t != "O" and not (t[:2] in ("B-", "I-") and len(t) > 2)]
        if bad:
            raise DataFormatError(f"{where}: slot tag {bad[0]!r} is not O, B-<slot> or I-<slot>")
        if not intent.strip():
            raise DataFormatError(f"{where} has an empty intent")
        records.append({"text": utterance, "tokens": tokens, "slot_tags": tags, "intent": intent, "domain": domain})
    return records


def load_massive(language: str = "en", *, verify: bool = True) -> DatasetDict:
    """MASSIVE 1.1 for one locale: ``train``, ``validation`` (dev) and ``test``, the official splits.

    ``language`` is one of en, de, es, fr, hi, th (the six MTOP languages; the locales are parallel translations).
    Columns: ``text`` (the utterance, whitespace-tokenized; Thai is segmented), ``tokens``, ``slot_tags``
    (ClassLabel sequence, the released BIO tags, e.g. ``B-time``), ``intent`` (ClassLabel, e.g. ``alarm_set``)
    and ``domain``. Class names are the sorted union over the locale's three splits.
    """
    if not isinstance(language, str):
        raise TypeError(f"language must be a str, got {type(language).__name__}")
    raw = {split: _parse_massive(_read_text("massive", table["file"], verify), table["file"])
           for split, table in _config("massive", language)["splits"].items()}
    intents = sorted({r["intent"] for records in raw.values() for r in records})
    tags = sorted({t for records in raw.values() for r in records for t in r["slot_tags"]})
    features = Features({"text": Value("string"), "tokens": List(Value("string")),
                         "slot_tags": List(ClassLabel(names=tags)), "intent": ClassLabel(names=intents),
                         "domain": Value("string")})
    return DatasetDict({
        split: _dataset({c: [r[c] for r in records] for c in features}, features, "massive", language)
        for split, records in raw.items()
    })
