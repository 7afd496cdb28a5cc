"""Loaders of the labelled task data: intent and slot sets (ATIS, SNIPS, MTOP), pNLP-Mixer label inventories,
WordPiece vocabularies, and the Parallel UD treebanks (CoNLL-U)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from datasets import ClassLabel, Dataset, DatasetDict, Features, List, Value

from hashlib_core.data.catalog import _config, _table
from hashlib_core.data.errors import DataFormatError
from hashlib_core.data.lookup import dataset_path
from hashlib_core.data.readers import _dataset, _read_text, _split_lines

__all__ = ["load_atis", "load_snips", "load_mtop_xsemplr", "load_pnlp_mixer_labels", "load_wordpiece_vocab",
           "wordpiece_vocab_path", "load_ud_pud", "UPOS_TAGS"]

#: The 17 universal part-of-speech tags of Universal Dependencies v2, the class names of ``upos``.
UPOS_TAGS: tuple[str, ...] = (
    "ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM",
    "PART", "PRON", "PROPN", "PUNCT", "SCONJ", "SYM", "VERB", "X",
)


# ---------------------------------------------------------------------------------- intent and slots
def _load_intent_slot(name: str, verify: bool) -> DatasetDict:
    raw: dict[str, tuple[list[list[str]], list[list[str]], list[str]]] = {}
    for split, table in _config(name, "default")["splits"].items():
        seq_in, seq_out, label = (_split_lines(_read_text(name, f, verify)) for f in table["files"])
        if not len(seq_in) == len(seq_out) == len(label):
            raise DataFormatError(
                f"dataset {name!r} split {split!r}: {table['files']} have {len(seq_in)}, {len(seq_out)} and "
                f"{len(label)} lines; they must be line-aligned"
            )
        tokens = [line.split() for line in seq_in]
        tags = [line.split() for line in seq_out]
        for number, (tok, tag) in enumerate(zip(tokens, tags), start=1):
            if len(tok) != len(tag):
                raise DataFormatError(
                    f"dataset {name!r} split {split!r} line {number}: {len(tok)} tokens but {len(tag)} slot tags"
                )
        raw[split] = (tokens, tags, [line.strip() for line in label])
    intents = sorted({i for _, _, labels in raw.values() for i in labels})
    slot_tags = sorted({t for _, tags, _ in raw.values() for line in tags for t in line})
    features = Features({"tokens": List(Value("string")), "slot_tags": List(ClassLabel(names=slot_tags)),
                         "intent": ClassLabel(names=intents)})
    return DatasetDict({
        split: _dataset({"tokens": tokens, "slot_tags": tags, "intent": labels}, features, name)
        for split, (tokens, tags, labels) in raw.items()
    })


_INTENT_SLOT_DOC = """

    Splits ``train``, ``validation`` (the ``valid`` folder) and ``test``. Columns: ``tokens`` (the
    whitespace-split ``seq.in`` line), ``slot_tags`` (a ClassLabel sequence, one BIO tag per token, from
    ``seq.out``) and ``intent`` (a ClassLabel, from ``label``). The class names are the sorted union over
    all three splits, because the test split holds labels unseen in train; read them with
    ``ds["train"].features["intent"].names`` and ``ds["train"].features["slot_tags"].feature.names``.
    Multi-intent utterances keep their ``#``-joined label as one class, as in the pNLP-Mixer label files.
    """


def load_atis(*, verify: bool = True) -> DatasetDict:
    return _load_intent_slot("atis", verify)


def load_snips(*, verify: bool = True) -> DatasetDict:
    return _load_intent_slot("snips", verify)


load_atis.__doc__ = "ATIS (English) intent and slot data in the Goo et al. (NAACL 2018) split." + _INTENT_SLOT_DOC
load_snips.__doc__ = "SNIPS intent and slot data in the Goo et al. (NAACL 2018) split." + _INTENT_SLOT_DOC


# ---------------------------------------------------------------------------------------------- MTOP
def _parse_top_tree(tree: str) -> tuple[str, list[str]]:
    """Top-level intent and all slot types (in order, at any depth) of a bracketed TOP tree.

    ``"[IN:CREATE_CALL [SL:CONTACT Camilla ] ]"`` gives ``("IN:CREATE_CALL", ["SL:CONTACT"])``.
    """
    pieces = tree.split()
    if not pieces or not pieces[0].startswith("[IN:"):
        raise DataFormatError(f"TOP tree {tree!r} does not start with an [IN:...] node")
    depth = 0
    slots = []
    for piece in pieces:
        if piece.startswith("["):
            depth += 1
            if piece.startswith("[SL:"):
                slots.append(piece[1:])
        elif piece == "]":
            depth -= 1
            if depth < 0:
                break
    if depth != 0:
        raise DataFormatError(f"TOP tree {tree!r} has unbalanced brackets")
    return pieces[0][1:], slots


def load_mtop_xsemplr(language: str = "en", *, verify: bool = True) -> DatasetDict:
    """The XSemPLR packaging of MTOP for one language: ``validation`` (dev.json) and ``test`` splits.

    ``language`` is one of en, de, es, fr, hi, th; the items are aligned across languages through ``id``.
    Columns: ``id``, ``text`` (the utterance; Thai is pre-segmented), ``intent`` (ClassLabel over the sorted
    top-level intents of both splits, e.g. ``IN:CREATE_CALL``), ``slot_types`` (every ``SL:`` node of the tree,
    in order, at any depth) and ``slot_intent`` (the bracketed TOP tree). This is a 6-language-aligned subset
    of MTOP dev/test; its scores are not comparable with pNLP-Mixer's published MTOP numbers.
    """
    if not isinstance(language, str):
        raise TypeError(f"language must be a str, got {type(language).__name__}")
    splits_spec = _config("mtop_xsemplr", language)["splits"]
    raw: dict[str, list[dict[str, Any]]] = {}
    for split, table in splits_spec.items():
        file = table["file"]
        try:
            items = json.loads(_read_text("mtop_xsemplr", file, verify))
        except json.JSONDecodeError as exc:
            raise DataFormatError(f"MTOP (XSemPLR) file {file!r} is not valid JSON: {exc}") from exc
        records = []
        for number, item in enumerate(items, start=1):
            try:
                text = item["question"][language]
                tree = item["mr"]["slot_intent"][language]
                item_id = item["id"]
            except (KeyError, TypeError) as exc:
                raise DataFormatError(
                    f"MTOP (XSemPLR) file {file!r} item {number} lacks {exc} for language {language!r}"
                ) from None
            intent, slots = _parse_top_tree(tree)
            records.append({"id": str(item_id), "text": text, "intent": intent, "slot_types": slots,
                            "slot_intent": tree})
        raw[split] = records
    intents = sorted({r["intent"] for records in raw.values() for r in records})
    features = Features({"id": Value("string"), "text": Value("string"), "intent": ClassLabel(names=intents),
                         "slot_types": List(Value("string")), "slot_intent": Value("string")})
    return DatasetDict({
        split: _dataset({c: [r[c] for r in records] for c in features}, features, "mtop_xsemplr", language)
        for split, records in raw.items()
    })


# ------------------------------------------------------------------------------- label lists, vocabs
def _line_list(name: str, config: str, verify: bool) -> list[str]:
    file = _table(name, config, None)["file"]
    lines = _split_lines(_read_text(name, file, verify))
    if any(line == "" for line in lines):
        raise DataFormatError(f"dataset {name!r} file {file!r} has an empty line")
    return lines


def load_pnlp_mixer_labels(inventory: str, *, verify: bool = True) -> list[str]:
    """A pNLP-Mixer label inventory from maum-ai/pnlp-mixer, in file order.

    ``inventory="matis"``: MultiATIS intent labels, including ``#``-joined multi-intent combinations.
    ``inventory="mtop"``: the BIO slot tags (``O``, ``B-AGE``, ``I-AGE``, ...) used for MTOP slot tagging.
    The files' last line has no trailing newline; it is still a label.
    """
    if not isinstance(inventory, str):
        raise TypeError(f"inventory must be a str, got {type(inventory).__name__}")
    return _line_list("pnlp_mixer_labels", inventory, verify)


def wordpiece_vocab_path(name: str, *, verify: bool = True) -> Path:
    """Verified path of a WordPiece ``vocab.txt``, e.g. for ``tokenizers.BertWordPieceTokenizer(path)``.

    ``name`` is ``"bert-base-uncased"`` or ``"bert-base-multilingual-cased"``.
    """
    if not isinstance(name, str):
        raise TypeError(f"vocabulary name must be a str, got {type(name).__name__}")
    return dataset_path("wordpiece_vocab", _table("wordpiece_vocab", name, None)["file"], verify=verify)


def load_wordpiece_vocab(name: str, *, verify: bool = True) -> list[str]:
    """The tokens of a WordPiece vocabulary; list index = token id (file line number minus 1).

    ``name`` is ``"bert-base-uncased"`` (30,522 tokens) or ``"bert-base-multilingual-cased"`` (119,547).
    """
    if not isinstance(name, str):
        raise TypeError(f"vocabulary name must be a str, got {type(name).__name__}")
    return _line_list("wordpiece_vocab", name, verify)


# --------------------------------------------------------------------------------------- UD (CoNLL-U)
def _parse_conllu(text: str, source: str) -> dict[str, list[Any]]:
    """Parse CoNLL-U sentences; multiword-token ranges (``3-4``) and empty nodes (``5.1``) are skipped,
    so ``tokens`` are the syntactic words with integer ids."""
    columns: dict[str, list[Any]] = {k: [] for k in ("sent_id", "text", "tokens", "lemmas", "upos", "head",
                                                        "deprel")}

    def flush(comments: dict[str, str], words: list[list[str]], line_number: int) -> None:
        if not words:
            return
        if "sent_id" not in comments or "text" not in comments:
            raise DataFormatError(f"{source}: sentence ending at line {line_number} lacks '# sent_id' or '# text'")
        columns["sent_id"].append(comments["sent_id"])
        columns["text"].append(comments["text"])
        columns["tokens"].append([w[1] for w in words])
        columns["lemmas"].append([w[2] for w in words])
        columns["upos"].append([w[3] for w in words])
        columns["head"].append([int(w[6]) for w in words])
        columns["deprel"].append([w[7] for w in words])

    comments: dict[str, str] = {}
    words: list[list[str]] = []
    lines = _split_lines(text)
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            flush(comments, words, number)
            comments, words = {}, []
        elif line.startswith("#"):
            key, sep, value = line[1:].partition("=")
            if sep:
                comments.setdefault(key.strip(), value.strip())
        else:
            fields = line.split("\t")
            if len(fields) != 10:
                raise DataFormatError(f"{source} line {number} has {len(fields)} fields, expected 10")
            if not fields[0].isdigit():
                continue
            if fields[3] not in UPOS_TAGS:
                raise DataFormatError(f"{source} line {number}: UPOS {fields[3]!r} is not a UD v2 tag")
            if not fields[6].isdigit():
                raise DataFormatError(f"{source} line {number}: HEAD {fields[6]!r} is not an integer")
            words.append(fields)
    flush(comments, words, len(lines))
    return columns


def load_ud_pud(language: str, *, verify: bool = True) -> Dataset:
    """One Parallel UD (PUD) treebank, 1,000 sentences; ``language`` is ar, en, hi or zh.

    Columns: ``sent_id`` (aligned across languages), ``text`` (the ``# text =`` line), and per syntactic word
    ``tokens`` (FORM), ``lemmas``, ``upos`` (ClassLabel over :data:`UPOS_TAGS`), ``head`` (0 = root) and
    ``deprel``. Multiword-token ranges and empty nodes are skipped.
    """
    if not isinstance(language, str):
        raise TypeError(f"language must be a str, got {type(language).__name__}")
    file = _table("ud_pud", language, None)["file"]
    columns = _parse_conllu(_read_text("ud_pud", file, verify), f"UD file {file!r}")
    features = Features({
        "sent_id": Value("string"), "text": Value("string"), "tokens": List(Value("string")),
        "lemmas": List(Value("string")), "upos": List(ClassLabel(names=list(UPOS_TAGS))),
        "head": List(Value("int32")), "deprel": List(Value("string")),
    })
    return _dataset(columns, features, "ud_pud", language)
