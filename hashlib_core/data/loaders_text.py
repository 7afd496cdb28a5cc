"""Loaders of the text benchmarks: GLUE, WikiText-2, Penn Treebank, and the rare-word similarity sets (Card-660,
Stanford RW)."""
from __future__ import annotations

import gzip
import zlib
from typing import Any

from datasets import ClassLabel, Dataset, DatasetDict, Features, List, Value

from hashlib_core.data.catalog import _config, _table
from hashlib_core.data.errors import DataFormatError
from hashlib_core.data.lookup import _file_spec, dataset_path
from hashlib_core.data.readers import _dataset, _read_text, _split_lines, _tsv_rows

__all__ = ["load_glue", "load_wikitext2", "load_ptb", "load_card660", "load_stanford_rw"]


# ----------------------------------------------------------------------------------------------- GLUE
_GLUE_TASKS = ("cola", "sst2", "mrpc", "stsb", "rte", "qnli")
_GLUE_HEADERS: dict[str, list[str] | None] = {
    "cola": None,
    "sst2": ["sentence", "label"],
    "mrpc": ["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"],
    "stsb": ["index", "genre", "filename", "year", "old_index", "source1", "source2", "sentence1", "sentence2",
             "score"],
    "rte": ["index", "sentence1", "sentence2", "label"],
    "qnli": ["index", "question", "sentence", "label"],
}
_GLUE_FIELDS = {"cola": 4, "sst2": 2, "mrpc": 5, "stsb": 10, "rte": 4, "qnli": 4}
_GLUE_LABEL_NAMES: dict[str, tuple[str, ...]] = {
    "cola": ("unacceptable", "acceptable"),
    "sst2": ("negative", "positive"),
    "mrpc": ("not_equivalent", "equivalent"),
    "rte": ("entailment", "not_entailment"),
    "qnli": ("entailment", "not_entailment"),
}


def _glue_features(task: str) -> Features:
    if task == "stsb":
        label: Value | ClassLabel = Value("float32")
    else:
        label = ClassLabel(names=list(_GLUE_LABEL_NAMES[task]))
    if task == "cola":
        return Features({"sentence": Value("string"), "label": label, "idx": Value("int32"),
                         "source": Value("string")})
    if task == "sst2":
        return Features({"sentence": Value("string"), "label": label, "idx": Value("int32")})
    if task == "qnli":
        return Features({"question": Value("string"), "sentence": Value("string"), "label": label,
                         "idx": Value("int32")})
    return Features({"sentence1": Value("string"), "sentence2": Value("string"), "label": label,
                     "idx": Value("int32")})


def _glue_label(task: str, raw: str, file: str, number: int) -> int | float:
    if task == "stsb":
        try:
            return float(raw)
        except ValueError:
            raise DataFormatError(f"GLUE {file!r} row {number}: score {raw!r} is not a number") from None
    names = _GLUE_LABEL_NAMES[task]
    if task in ("cola", "sst2", "mrpc"):
        if raw not in ("0", "1"):
            raise DataFormatError(f"GLUE {file!r} row {number}: label {raw!r} is not 0 or 1")
        return int(raw)
    if raw not in names:
        raise DataFormatError(f"GLUE {file!r} row {number}: label {raw!r} is not one of {list(names)}")
    return names.index(raw)


def _glue_record(task: str, row: list[str], position: int, file: str) -> dict[str, Any]:
    number = position + 1
    if task == "cola":
        source, raw_label, _original_mark, sentence = row
        return {"sentence": sentence, "label": _glue_label(task, raw_label, file, number), "idx": position,
                "source": source}
    if task == "sst2":
        return {"sentence": row[0], "label": _glue_label(task, row[1], file, number), "idx": position}
    if task == "mrpc":
        return {"sentence1": row[3], "sentence2": row[4], "label": _glue_label(task, row[0], file, number),
                "idx": position}
    if task == "stsb":
        return {"sentence1": row[7], "sentence2": row[8], "label": _glue_label(task, row[9], file, number),
                "idx": int(row[0])}
    if task == "rte":
        return {"sentence1": row[1], "sentence2": row[2], "label": _glue_label(task, row[3], file, number),
                "idx": int(row[0])}
    return {"question": row[1], "sentence": row[2], "label": _glue_label(task, row[3], file, number),
            "idx": int(row[0])}


def _glue_split(task: str, file: str, verify: bool) -> list[dict[str, Any]]:
    spec = _file_spec("glue", file)
    text = _read_text("glue", file, verify, encoding=spec.get("encoding", "utf-8"))
    rows = _tsv_rows("glue", file, text, _GLUE_FIELDS[task])
    expected_header = _GLUE_HEADERS[task]
    if expected_header is not None:
        if not rows or rows[0] != expected_header:
            raise DataFormatError(
                f"GLUE file {file!r} header is {rows[0] if rows else None}, expected {expected_header}"
            )
        rows = rows[1:]
    return [_glue_record(task, row, position, file) for position, row in enumerate(rows)]


def load_glue(task: str, *, verify: bool = True) -> DatasetDict:
    """Load one GLUE task as a DatasetDict with ``train`` and ``validation`` splits (QNLI: ``validation`` only).

    ``task`` is one of cola, sst2, mrpc, stsb, rte, qnli (case and hyphens ignored: ``"SST-2"`` works).
    The ``validation`` split is GLUE's public *dev* set. The GLUE "test" numbers that HashFormers and EELBERT
    report are computed on this dev split (the official test labels are hidden), so compare our validation
    scores with their "test" columns. Columns follow the Hugging Face ``nyu-mll/glue`` layout: text columns,
    ``label`` (a ClassLabel; STS-B a float32 score in [0, 5]) and ``idx`` (the file's index column, or the
    0-based row number where the file has none). CoLA also keeps its ``source`` column (source code such as
    ``gj04``). Files are read with ``csv.QUOTE_NONE``; the MRPC files start with a UTF-8 BOM.
    """
    if not isinstance(task, str):
        raise TypeError(f"task must be a str, got {type(task).__name__}")
    config = task.lower().replace("-", "").replace("_", "")
    if config not in _GLUE_TASKS:
        raise ValueError(f"unknown GLUE task {task!r}; choose one of {list(_GLUE_TASKS)}")
    features = _glue_features(config)
    splits = {}
    for split, table in _config("glue", config)["splits"].items():
        records = _glue_split(config, table["file"], verify)
        columns = {column: [record[column] for record in records] for column in features}
        splits[split] = _dataset(columns, features, "glue", config)
    return DatasetDict(splits)


# ------------------------------------------------------------------------------------------ WikiText-2
def load_wikitext2(*, verify: bool = True) -> DatasetDict:
    """WikiText-2 (tokenized) ``validation`` and ``test`` splits, one row per line of the file.

    The single ``text`` column holds each line verbatim without its newline: paragraphs of space-separated
    tokens, ``" = Heading = "`` lines, and ``" "`` blank separators. The standard word-level LM stream
    (pytorch/examples) is ``line.split() + ["<eos>"]`` for every line. The train split is not part of the
    staged data (see the manifest notes).
    """
    return _line_splits("wikitext2", verify)


# ------------------------------------------------------------------------------------ Penn Treebank
def _read_compressed_text(name: str, file: str, verify: bool, encoding: str = "utf-8") -> str:
    """The verified file's text, decompressed first when its manifest entry says ``compression: gzip``."""
    compression = _file_spec(name, file).get("compression")
    if compression is None:
        return _read_text(name, file, verify, encoding=encoding)
    path = dataset_path(name, file, verify=verify)
    try:
        raw = gzip.decompress(path.read_bytes())
    except (OSError, EOFError, zlib.error) as exc:
        raise DataFormatError(
            f"dataset {name!r} file {path} is marked 'compression: {compression}' in the manifest but does not "
            f"decompress ({exc}); fix the manifest entry, or restore the file from its source"
        ) from exc
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        raise DataFormatError(f"dataset {name!r} file {path} is not valid {encoding} once unzipped: {exc}") from exc


def load_ptb(*, verify: bool = True) -> DatasetDict:
    """Penn Treebank in Mikolov's language-modelling form: ``train``, ``validation`` and ``test``, a row per line.

    The files are stored gzip-compressed (as in their source) and unzipped in memory. The single ``text``
    column holds each line verbatim without its newline: one sentence of space-separated tokens (numbers as
    ``N``, out-of-vocabulary words as ``<unk>``), with the file's leading and trailing space. The standard
    word-level LM stream (pytorch/examples) is ``line.split() + ["<eos>"]`` for every line.
    """
    return _line_splits("ptb", verify)


def load_enwiki2015(*, verify: bool = True) -> Dataset:
    """English Wikipedia (2015 dump, the first 100 WikiExtractor files): one row per text line of an article.

    The ``<doc ...>`` and ``</doc>`` tag lines and the blank lines are dropped; each row keeps its line (``text``:
    the article's title line, its section headings and one paragraph per line, as WikiExtractor wrote them) and
    its article's ``doc_id`` and ``title`` (from the tag line), so that a held-out part can be cut by article. A
    line outside any article, or a tag line that does not parse, is a :class:`DataFormatError`.
    """
    import re

    name, file = "enwiki2015", _config("enwiki2015", "default")["table"]["file"]
    tag = re.compile(r'<doc id="(\d+)" url="[^"]*" title="(.*)">$')
    ids: list[int] = []
    titles: list[str] = []
    texts: list[str] = []
    current: tuple[int, str] | None = None
    for number, line in enumerate(_split_lines(_read_compressed_text(name, file, verify)), start=1):
        if line.startswith("<doc "):
            match = tag.match(line)
            if match is None or current is not None:
                raise DataFormatError(f"dataset {name!r} file {file!r} line {number}: "
                                      f"{'an unparsable' if match is None else 'a nested'} article tag {line[:80]!r}")
            current = (int(match.group(1)), match.group(2))
        elif line == "</doc>":
            if current is None:
                raise DataFormatError(f"dataset {name!r} file {file!r} line {number}: '</doc>' outside an article")
            current = None
        elif line.strip():
            if current is None:
                raise DataFormatError(f"dataset {name!r} file {file!r} line {number}: text outside an article")
            ids.append(current[0])
            titles.append(current[1])
            texts.append(line)
    features = Features({"doc_id": Value("int64"), "title": Value("string"), "text": Value("string")})
    return _dataset({"doc_id": ids, "title": titles, "text": texts}, features, name)


def _line_splits(name: str, verify: bool) -> DatasetDict:
    """A line-per-row text dataset (WikiText-2, Penn Treebank): one ``text`` column per split, each file unzipped
    first when its manifest entry says so."""
    features = Features({"text": Value("string")})
    splits = {}
    for split, table in _config(name, "default")["splits"].items():
        lines = _split_lines(_read_compressed_text(name, table["file"], verify))
        splits[split] = _dataset({"text": lines}, features, name)
    return DatasetDict(splits)


# ------------------------------------------------------------------------------ rare-word similarity
def _float(name: str, file: str, number: int, raw: str) -> float:
    try:
        return float(raw)
    except ValueError:
        raise DataFormatError(f"dataset {name!r} file {file!r} row {number}: {raw!r} is not a number") from None


def load_card660(*, verify: bool = True) -> Dataset:
    """Card-660 rare-word similarity pairs (Pilehvar et al., EMNLP 2018) as one Dataset of 660 rows.

    Columns: ``word1``, ``word2`` (multi-word terms joined by ``_``), ``score`` (gold similarity in
    [0, 4], the mean of the annotators) and ``annotator_scores`` (the line-aligned row of ``scores.tsv``).
    """
    pair_file, score_file = _table("card660", "default", None)["files"]
    pairs = _tsv_rows("card660", pair_file, _read_text("card660", pair_file, verify), 3)
    scores = _tsv_rows("card660", score_file, _read_text("card660", score_file, verify), None)
    if len(pairs) != len(scores):
        raise DataFormatError(f"Card-660: {pair_file} has {len(pairs)} rows but {score_file} has {len(scores)}")
    widths = {len(row) for row in scores}
    if len(widths) != 1:
        raise DataFormatError(f"Card-660: {score_file} rows have differing numbers of annotators {sorted(widths)}")
    columns = {
        "word1": [row[0] for row in pairs],
        "word2": [row[1] for row in pairs],
        "score": [_float("card660", pair_file, i + 1, row[2]) for i, row in enumerate(pairs)],
        "annotator_scores": [[_float("card660", score_file, i + 1, v) for v in row] for i, row in enumerate(scores)],
    }
    features = Features({"word1": Value("string"), "word2": Value("string"), "score": Value("float64"),
                         "annotator_scores": List(Value("float64"))})
    return _dataset(columns, features, "card660")


def load_stanford_rw(*, verify: bool = True) -> Dataset:
    """Stanford Rare Word pairs (Luong et al., CoNLL 2013) as one Dataset of 2,034 rows.

    Columns: ``word1``, ``word2``, ``score`` (mean rating in [0, 10]) and ``ratings`` (the 7 to 10
    individual ratings that follow on the line).
    """
    file = _table("stanford_rw", "default", None)["file"]
    rows = _tsv_rows("stanford_rw", file, _read_text("stanford_rw", file, verify), None)
    for number, row in enumerate(rows, start=1):
        if len(row) < 4:
            raise DataFormatError(f"Stanford RW {file!r} row {number} has {len(row)} fields, expected at least 4")
    columns = {
        "word1": [row[0] for row in rows],
        "word2": [row[1] for row in rows],
        "score": [_float("stanford_rw", file, i + 1, row[2]) for i, row in enumerate(rows)],
        "ratings": [[_float("stanford_rw", file, i + 1, v) for v in row[3:]] for i, row in enumerate(rows)],
    }
    features = Features({"word1": Value("string"), "word2": Value("string"), "score": Value("float64"),
                         "ratings": List(Value("float64"))})
    return _dataset(columns, features, "stanford_rw")
