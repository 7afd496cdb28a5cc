"""Dataset manifest, verified file look-up and loaders for every dataset used by the book.

Every dataset is described in ``data/manifest.yaml`` (provenance, license, citation, and for each file its
original source URL, sha256, size and row count). A file is looked up in this order:

1. ``$HASHLIB_DATA_DIR/<folder>/<file>``: a local mirror laid out like the manifest (one folder per dataset).
2. ``$HASHLIB_CACHE_DIR/<folder>/<file>``: the download cache (default ``~/.cache/hashlib_core/data``,
   expanded when the look-up runs).
3. The original source URL from the manifest (a raw file at a pinned commit, or a pinned archive holding the
   file as a member). The bytes are checked against the manifest's size and sha256 *before* they are written
   (atomically) into the cache. Set ``HASHLIB_OFFLINE=1`` to forbid downloads.

A file found in the mirror or the cache is verified on its first use in a process: its size always, and its
sha256 unless ``verify=False``. A successful sha256 check is remembered per (path, size, mtime), so repeated
loads in one process hash each file only once. ``verify=False`` is for speed-critical callers that re-read a
file they trust; it skips the sha256 but still checks the size.

Problems raise subclasses of :class:`DataError`: :class:`DatasetUnavailableError` (file in neither place and
not downloadable), :class:`ChecksumMismatchError` (wrong size or sha256) and :class:`DataFormatError` (content
that does not parse as documented). Each message names the dataset, the path(s), the source URL and the fix.

Split names follow the Hugging Face convention: ``train``, ``validation`` (the files called ``dev`` or
``valid``) and ``test``. Loaders with several splits return a :class:`datasets.DatasetDict`; single-table
datasets (Card-660, Stanford RW, Last.fm, a UD treebank) return a :class:`datasets.Dataset`; label
inventories and WordPiece vocabularies return ``list[str]``.
"""
from __future__ import annotations

import copy
import csv
import functools
import hashlib
import http.client
import io
import json
import os
import re
import tarfile
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from datasets import ClassLabel, Dataset, DatasetDict, DatasetInfo, Features, List, Value

from hashlib_core._io import atomic_write_bytes

__all__ = [
    "MANIFEST_PATH",
    "DATA_DIR_ENV",
    "CACHE_DIR_ENV",
    "OFFLINE_ENV",
    "DataError",
    "DatasetUnavailableError",
    "ChecksumMismatchError",
    "DataFormatError",
    "manifest",
    "list_datasets",
    "list_configs",
    "data_dir",
    "cache_dir",
    "downloads_enabled",
    "fetch_bytes",
    "dataset_path",
    "manifest_markdown_table",
    "load",
    "load_glue",
    "load_wikitext2",
    "load_card660",
    "load_stanford_rw",
    "load_atis",
    "load_snips",
    "load_mtop_xsemplr",
    "load_pnlp_mixer_labels",
    "load_wordpiece_vocab",
    "wordpiece_vocab_path",
    "load_wn18rr",
    "load_fb15k237",
    "load_lastfm",
    "load_ud_pud",
    "UPOS_TAGS",
]

MANIFEST_PATH = Path(__file__).resolve().parent.parent / "data" / "manifest.yaml"
DATA_DIR_ENV = "HASHLIB_DATA_DIR"
CACHE_DIR_ENV = "HASHLIB_CACHE_DIR"
OFFLINE_ENV = "HASHLIB_OFFLINE"
DOWNLOAD_TIMEOUT_S = 60.0
_DEFAULT_CACHE_SUBDIR = Path(".cache") / "hashlib_core" / "data"
_TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")

#: The 17 universal part-of-speech tags of Universal Dependencies v2, the class names of ``upos``.
UPOS_TAGS: tuple[str, ...] = (
    "ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM",
    "PART", "PRON", "PROPN", "PUNCT", "SCONJ", "SYM", "VERB", "X",
)


# --------------------------------------------------------------------------------------------- errors
class DataError(RuntimeError):
    """Base class of every error raised by the data layer."""


class _FileError(DataError):
    """A problem with one manifest file; keeps the facts a caller needs to fix it."""

    def __init__(self, message: str, *, dataset: str, file: str, paths: Sequence[Path], url: str) -> None:
        super().__init__(message)
        self.dataset = dataset
        self.file = file
        self.paths = tuple(paths)
        self.url = url


class DatasetUnavailableError(_FileError):
    """The file is in neither the mirror nor the cache and could not be downloaded."""


class ChecksumMismatchError(_FileError):
    """A file (or downloaded payload) does not have the size or sha256 recorded in the manifest."""


class DataFormatError(DataError):
    """A verified file does not parse in the documented format."""


# ------------------------------------------------------------------------------------------- manifest
_DATASET_KEYS = ("title", "folder", "loader", "used_for", "license", "citation", "source", "files", "configs")


@functools.lru_cache(maxsize=4)
def _read_manifest(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise DataError(
            f"dataset manifest not found at {path}; it ships with the repository as data/manifest.yaml "
            "next to the hashlib_core package (reinstall from a full checkout)"
        )
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    _validate_manifest(data, path)
    return data


def _validate_manifest(data: Any, path: Path) -> None:
    """Check the manifest's structure so that a broken edit fails at load time with a precise message."""

    def fail(msg: str) -> None:
        raise DataError(f"invalid dataset manifest {path}: {msg}")

    if not isinstance(data, dict) or not isinstance(data.get("datasets"), dict) or not data["datasets"]:
        fail("expected a mapping with a non-empty 'datasets' mapping")
    for name, entry in data["datasets"].items():
        if not isinstance(entry, dict):
            fail(f"dataset {name!r} must be a mapping")
        missing = [k for k in _DATASET_KEYS if k not in entry]
        if missing:
            fail(f"dataset {name!r} lacks keys {missing}")
        for file, spec in entry["files"].items():
            if not isinstance(spec, dict) or not isinstance(spec.get("url"), str):
                fail(f"dataset {name!r} file {file!r} needs a 'url'")
            if not _SHA256_RE.match(str(spec.get("sha256", ""))):
                fail(f"dataset {name!r} file {file!r} needs a 64-hex-digit lower-case 'sha256'")
            if not isinstance(spec.get("bytes"), int) or spec["bytes"] < 0:
                fail(f"dataset {name!r} file {file!r} needs a non-negative integer 'bytes'")
            archive = spec.get("archive")
            if archive is not None and not (
                isinstance(archive, dict)
                and _SHA256_RE.match(str(archive.get("sha256", "")))
                and isinstance(archive.get("bytes"), int)
                and isinstance(archive.get("member"), str)
            ):
                fail(f"dataset {name!r} file {file!r}: 'archive' needs sha256, bytes and member")
        if not isinstance(entry["configs"], dict) or not entry["configs"]:
            fail(f"dataset {name!r} needs at least one config")
        for config, spec in entry["configs"].items():
            if not isinstance(spec, dict) or len(spec.keys() & {"splits", "table"}) != 1:
                fail(f"dataset {name!r} config {config!r} needs exactly one of 'splits' or 'table'")
            tables = spec["splits"] if "splits" in spec else {"table": spec["table"]}
            for split, table in tables.items():
                for file in _table_files(table):
                    if file not in entry["files"]:
                        fail(f"dataset {name!r} config {config!r} split {split!r} names unknown file {file!r}")
                member = table.get("member")
                if member is not None and member not in entry["files"][table["file"]].get("members", {}):
                    fail(f"dataset {name!r} config {config!r} split {split!r} names unknown member {member!r}")


def _table_files(table: Mapping[str, Any]) -> list[str]:
    """The files a split or table is read from (``file: x`` or ``files: [x, y]``)."""
    if "files" in table:
        return list(table["files"])
    return [table["file"]]


def manifest() -> dict[str, Any]:
    """Return a deep copy of the parsed manifest (``{"schema_version": ..., "datasets": {...}}``)."""
    return copy.deepcopy(_read_manifest(MANIFEST_PATH))


def _entry(name: str) -> dict[str, Any]:
    if not isinstance(name, str):
        raise TypeError(f"dataset name must be a str, got {type(name).__name__}")
    datasets_ = _read_manifest(MANIFEST_PATH)["datasets"]
    if name not in datasets_:
        raise ValueError(f"unknown dataset {name!r}; choose one of {list(datasets_)}")
    return datasets_[name]


def list_datasets() -> list[str]:
    """Names of all datasets in the manifest, in manifest order."""
    return list(_read_manifest(MANIFEST_PATH)["datasets"])


def list_configs(name: str) -> list[str]:
    """Configuration names of dataset ``name`` (``["default"]`` for single-configuration datasets)."""
    return list(_entry(name)["configs"])


def _config(name: str, config: str) -> dict[str, Any]:
    configs = _entry(name)["configs"]
    if config not in configs:
        raise ValueError(f"unknown config {config!r} for dataset {name!r}; choose one of {list(configs)}")
    return configs[config]


# -------------------------------------------------------------------------------------------- look-up
def data_dir() -> Path | None:
    """The local mirror named by ``$HASHLIB_DATA_DIR`` (``~`` expanded), or ``None`` when unset or empty."""
    value = os.environ.get(DATA_DIR_ENV, "").strip()
    return Path(value).expanduser() if value else None


def cache_dir() -> Path:
    """The download cache: ``$HASHLIB_CACHE_DIR``, else ``~/.cache/hashlib_core/data`` expanded now."""
    value = os.environ.get(CACHE_DIR_ENV, "").strip()
    if value:
        return Path(value).expanduser()
    return Path(os.path.expanduser("~")) / _DEFAULT_CACHE_SUBDIR


def downloads_enabled() -> bool:
    """False when ``$HASHLIB_OFFLINE`` is set to 1/true/yes/on (case-insensitive)."""
    return os.environ.get(OFFLINE_ENV, "").strip().lower() not in _TRUE_WORDS


def fetch_bytes(url: str, timeout: float = DOWNLOAD_TIMEOUT_S) -> bytes:
    """Download ``url`` with urllib and return its body; network errors propagate as ``OSError``."""
    if not isinstance(url, str) or not url:
        raise TypeError(f"url must be a non-empty str, got {url!r}")
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.read()


# (resolved path, size, mtime_ns) -> sha256 that was verified for exactly that file state.
_VERIFIED: dict[tuple[str, int, int], str] = {}


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _file_spec(name: str, file: str) -> dict[str, Any]:
    if not isinstance(file, str):
        raise TypeError(f"file must be a str, got {type(file).__name__}")
    files = _entry(name)["files"]
    if file not in files:
        raise ValueError(f"dataset {name!r} has no file {file!r}; its files are {list(files)}")
    return files[file]


def _mismatch_fix(path: Path) -> str:
    return (
        f"Fix: delete {path} and restore it: re-copy the mirror file, or let the loader download it again "
        f"into the cache ({CACHE_DIR_ENV}); if the source itself changed, the manifest must be updated."
    )


def _check_file(path: Path, spec: Mapping[str, Any], name: str, file: str, verify: bool) -> None:
    stat = path.stat()
    if stat.st_size != spec["bytes"]:
        raise ChecksumMismatchError(
            f"dataset {name!r} file {file!r} at {path} has {stat.st_size} bytes, expected {spec['bytes']} "
            f"(sha256 {spec['sha256']}); source: {spec['url']}. {_mismatch_fix(path)}",
            dataset=name, file=file, paths=[path], url=spec["url"],
        )
    if not verify:
        return
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if _VERIFIED.get(key) == spec["sha256"]:
        return
    actual = _sha256_file(path)
    if actual != spec["sha256"]:
        raise ChecksumMismatchError(
            f"dataset {name!r} file {file!r} at {path} has sha256 {actual}, expected {spec['sha256']}; "
            f"source: {spec['url']}. {_mismatch_fix(path)}",
            dataset=name, file=file, paths=[path], url=spec["url"],
        )
    _VERIFIED[key] = actual


def _tar_member(archive: bytes, member: str) -> bytes:
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:*") as tar:
        return _read_tar_member(tar, member)


def _read_tar_member(tar: tarfile.TarFile, member: str) -> bytes:
    """Read a regular-file member, accepting a leading ``./`` in the archive's member names."""
    for info in tar.getmembers():
        if info.isfile() and info.name.removeprefix("./") == member:
            handle = tar.extractfile(info)
            if handle is None:
                break
            return handle.read()
    raise DataFormatError(f"archive has no regular-file member {member!r}; members: {tar.getnames()}")


def _download_verified(name: str, file: str, spec: Mapping[str, Any], searched: list[Path]) -> bytes:
    url = spec["url"]
    try:
        payload = fetch_bytes(url, timeout=DOWNLOAD_TIMEOUT_S)
    except (OSError, http.client.HTTPException, ValueError) as exc:
        raise DatasetUnavailableError(
            _unavailable_message(name, file, searched, url, f"download from {url} failed: {exc}"),
            dataset=name, file=file, paths=searched, url=url,
        ) from exc
    archive = spec.get("archive")
    if archive is not None:
        _check_payload(payload, archive["bytes"], archive["sha256"], name, file, url, searched, what="archive")
        try:
            payload = _tar_member(payload, archive["member"])
        except (tarfile.TarError, DataFormatError) as exc:
            raise DataFormatError(f"dataset {name!r}: archive {url} cannot provide {file!r}: {exc}") from exc
    _check_payload(payload, spec["bytes"], spec["sha256"], name, file, url, searched, what="file")
    return payload


def _check_payload(
    payload: bytes, size: int, sha256: str, name: str, file: str, url: str, searched: list[Path], *, what: str
) -> None:
    actual = hashlib.sha256(payload).hexdigest()
    if len(payload) != size or actual != sha256:
        raise ChecksumMismatchError(
            f"dataset {name!r} file {file!r}: the {what} downloaded from {url} has {len(payload)} bytes and "
            f"sha256 {actual}, expected {size} bytes and sha256 {sha256}; nothing was written to the cache. "
            f"Fix: point {DATA_DIR_ENV} at a verified mirror; if the source changed on purpose, update the manifest.",
            dataset=name, file=file, paths=searched, url=url,
        )


def _unavailable_message(name: str, file: str, searched: Sequence[Path], url: str, reason: str) -> str:
    mirror = data_dir()
    mirror_note = (
        f"{searched[0]} ({DATA_DIR_ENV})" if mirror is not None else f"no mirror ({DATA_DIR_ENV} is not set)"
    )
    return (
        f"dataset {name!r} file {file!r} is not available.\n"
        f"  looked in: {mirror_note}; {searched[-1]} (cache, {CACHE_DIR_ENV})\n"
        f"  source: {url}\n"
        f"  {reason}\n"
        f"Fix: set {DATA_DIR_ENV} to a local mirror laid out as <mirror>/{_entry(name)['folder']}/{file}, "
        f"or allow network access (unset {OFFLINE_ENV}) so the file is downloaded into the cache."
    )


def dataset_path(name: str, file: str, *, verify: bool = True, download: bool = True) -> Path:
    """Return a verified local path of ``file`` (a key of the dataset's ``files`` in the manifest).

    Look-up order: mirror (``$HASHLIB_DATA_DIR``), then cache, then download into the cache (see the
    module docstring). A corrupt file in the mirror or the cache raises :class:`ChecksumMismatchError`
    rather than being silently replaced. ``download=False`` (or ``$HASHLIB_OFFLINE``) forbids the network.
    """
    entry = _entry(name)
    spec = _file_spec(name, file)
    relative = Path(entry["folder"], *file.split("/"))
    searched: list[Path] = []
    mirror = data_dir()
    if mirror is not None:
        candidate = mirror / relative
        searched.append(candidate)
        if candidate.is_file():
            _check_file(candidate, spec, name, file, verify)
            return candidate
    cached = cache_dir() / relative
    searched.append(cached)
    if cached.is_file():
        _check_file(cached, spec, name, file, verify)
        return cached
    if not download or not downloads_enabled():
        reason = "downloads are disabled " + (f"by {OFFLINE_ENV}" if download else "by download=False")
        raise DatasetUnavailableError(
            _unavailable_message(name, file, searched, spec["url"], reason),
            dataset=name, file=file, paths=searched, url=spec["url"],
        )
    payload = _download_verified(name, file, spec, searched)
    atomic_write_bytes(cached, payload)
    stat = cached.stat()
    _VERIFIED[(str(cached.resolve()), stat.st_size, stat.st_mtime_ns)] = spec["sha256"]
    return cached


# ------------------------------------------------------------------------------------ reading helpers
def _read_text(name: str, file: str, verify: bool, encoding: str = "utf-8") -> str:
    path = dataset_path(name, file, verify=verify)
    try:
        return path.read_bytes().decode(encoding)
    except UnicodeDecodeError as exc:
        raise DataFormatError(f"dataset {name!r} file {path} is not valid {encoding}: {exc}") from exc


def _split_lines(text: str) -> list[str]:
    """Split on ``\\n`` only (never on other Unicode separators), dropping one ``\\r`` per line end.

    A final line without a trailing newline still counts; a trailing newline does not add an empty line.
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _tsv_rows(name: str, file: str, text: str, n_fields: int | None) -> list[list[str]]:
    """Tab-separated rows with ``csv.QUOTE_NONE`` (quotes are literal characters)."""
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter="\t", quoting=csv.QUOTE_NONE))
    if n_fields is not None:
        for number, row in enumerate(rows, start=1):
            if len(row) != n_fields:
                raise DataFormatError(
                    f"dataset {name!r} file {file!r} row {number} has {len(row)} tab-separated fields, "
                    f"expected {n_fields}"
                )
    return rows


def _dataset(columns: Mapping[str, list[Any]], features: Features, name: str, config: str | None = None) -> Dataset:
    """Build an in-memory Dataset whose info carries the manifest's title, notes, citation and license."""
    entry = _entry(name)
    description = entry["title"] + (f" [{config}]" if config and config != "default" else "")
    notes = entry.get("notes") or []
    if notes:
        description += ". " + " ".join(notes)
    info = DatasetInfo(description=description, citation=entry["citation"], license=entry["license"],
                       features=features)
    return Dataset.from_dict(dict(columns), features=features, info=info)


def _table(name: str, config: str, split: str | None) -> dict[str, Any]:
    spec = _config(name, config)
    if split is None:
        return spec["table"]
    return spec["splits"][split]


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
    features = Features({"text": Value("string")})
    splits = {}
    for split, table in _config("wikitext2", "default")["splits"].items():
        lines = _split_lines(_read_text("wikitext2", table["file"], verify))
        splits[split] = _dataset({"text": lines}, features, "wikitext2")
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


# ---------------------------------------------------------------------------- opaque-id datasets
_TRIPLE_FEATURES = Features({"head": Value("string"), "relation": Value("string"), "tail": Value("string")})


def _triples(name: str, source: str, text: str) -> dict[str, list[str]]:
    heads, relations, tails = [], [], []
    for number, line in enumerate(_split_lines(text), start=1):
        fields = line.split("\t")
        if len(fields) != 3:
            raise DataFormatError(f"dataset {name!r} {source} line {number} has {len(fields)} fields, expected 3")
        heads.append(fields[0])
        relations.append(fields[1])
        tails.append(fields[2])
    return {"head": heads, "relation": relations, "tail": tails}


def load_wn18rr(*, verify: bool = True) -> DatasetDict:
    """WN18RR triples (Dettmers et al., AAAI 2018): ``train``/``validation``/``test`` with string columns
    ``head``, ``relation``, ``tail``. Entity ids are 8-digit synset offsets kept as opaque strings."""
    splits = {}
    for split, table in _config("wn18rr", "default")["splits"].items():
        columns = _triples("wn18rr", table["file"], _read_text("wn18rr", table["file"], verify))
        splits[split] = _dataset(columns, _TRIPLE_FEATURES, "wn18rr")
    return DatasetDict(splits)


def load_fb15k237(*, verify: bool = True) -> DatasetDict:
    """FB15k-237 triples (Toutanova and Chen, 2015), read from the members of ``FB15k-237.tar.gz`` in memory.

    Splits ``train``/``validation``/``test`` with string columns ``head``, ``relation``, ``tail`` (Freebase
    ids such as ``/m/027rn``). The members' CRLF line endings are stripped. Nothing is extracted to disk.
    """
    splits_spec = _config("fb15k237", "default")["splits"]
    archives: dict[str, tarfile.TarFile] = {}
    splits = {}
    try:
        for split, table in splits_spec.items():
            source = f"{table['file']}:{table['member']}"
            try:
                if table["file"] not in archives:
                    path = dataset_path("fb15k237", table["file"], verify=verify)
                    archives[table["file"]] = tarfile.open(path, mode="r:gz")
                text = _read_tar_member(archives[table["file"]], table["member"]).decode("utf-8")
            except (tarfile.TarError, UnicodeDecodeError) as exc:
                raise DataFormatError(f"FB15k-237: cannot read {source}: {exc}") from exc
            splits[split] = _dataset(_triples("fb15k237", source, text), _TRIPLE_FEATURES, "fb15k237")
    finally:
        for archive in archives.values():
            archive.close()
    return DatasetDict(splits)


def load_lastfm(*, verify: bool = True) -> Dataset:
    """Last.fm HetRec 2011 user-artist pairs as one Dataset of 92,834 rows.

    Columns: ``user_id`` and ``artist_id`` (int32 opaque ids) and ``weight`` (int64 listening count).
    Fields are stripped of the stray spaces that 8 lines of the file carry around their numbers.
    A user's artists (at most 50) form the "set of ids per context" of the Superbloom chapter.
    """
    file = _table("lastfm", "default", None)["file"]
    users, artists, weights = [], [], []
    for number, line in enumerate(_split_lines(_read_text("lastfm", file, verify)), start=1):
        fields = [field.strip() for field in line.split("\t")]
        if len(fields) != 3 or not all(field.isdigit() for field in fields):
            raise DataFormatError(f"Last.fm {file!r} line {number} is not three tab-separated integers: {line!r}")
        users.append(int(fields[0]))
        artists.append(int(fields[1]))
        weights.append(int(fields[2]))
    features = Features({"user_id": Value("int32"), "artist_id": Value("int32"), "weight": Value("int64")})
    return _dataset({"user_id": users, "artist_id": artists, "weight": weights}, features, "lastfm")


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


# -------------------------------------------------------------------------------------------- dispatch
_LOADERS: dict[str, Callable[..., Any]] = {
    "glue": load_glue,
    "wikitext2": load_wikitext2,
    "card660": load_card660,
    "stanford_rw": load_stanford_rw,
    "atis": load_atis,
    "snips": load_snips,
    "mtop_xsemplr": load_mtop_xsemplr,
    "pnlp_mixer_labels": load_pnlp_mixer_labels,
    "wordpiece_vocab": load_wordpiece_vocab,
    "wn18rr": load_wn18rr,
    "fb15k237": load_fb15k237,
    "lastfm": load_lastfm,
    "ud_pud": load_ud_pud,
}


def load(name: str, config: str | None = None, *, verify: bool = True) -> DatasetDict | Dataset | list[str]:
    """Load dataset ``name`` (see :func:`list_datasets`) through its named loader.

    Single-configuration datasets take no ``config`` (or ``"default"``); the others need one of
    :func:`list_configs` (GLUE task, MTOP or UD language, label inventory, vocabulary name).
    Returns a DatasetDict, a Dataset or a list of strings, as the named loader does.
    """
    entry = _entry(name)
    if name not in _LOADERS:
        raise DataError(f"dataset {name!r} is in the manifest but has no loader in hashlib_core.data")
    loader = _LOADERS[name]
    configs = list(entry["configs"])
    if configs == ["default"]:
        if config not in (None, "default"):
            raise ValueError(f"dataset {name!r} has no configs; call load({name!r}) without config={config!r}")
        return loader(verify=verify)
    if config is None:
        raise ValueError(f"dataset {name!r} needs a config: one of {configs}")
    if config not in configs:
        raise ValueError(f"unknown config {config!r} for dataset {name!r}; choose one of {configs}")
    return loader(config, verify=verify)


# -------------------------------------------------------------------------------------------- README
def _split_rows(entry: Mapping[str, Any], table: Mapping[str, Any]) -> int:
    spec = entry["files"][table["file"] if "file" in table else table["files"][0]]
    if "member" in table:
        return int(spec["members"][table["member"]]["rows"])
    return int(spec["rows"])


def manifest_markdown_table() -> str:
    """The dataset table of ``data/README.md``, rendered from the manifest (a test keeps them equal)."""
    lines = [
        "| name | dataset | used for | source | license | files | rows |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, entry in _read_manifest(MANIFEST_PATH)["datasets"].items():
        sources = "; ".join(
            f"`{s['repository']}` @ `{s['commit'][:8]}`" if s.get("commit") else f"`{s['repository']}`"
            for s in entry["source"]
        )
        total = sum(spec["bytes"] for spec in entry["files"].values())
        size = f"{total / 1e6:.1f} MB" if total >= 1e6 else f"{total / 1e3:.0f} KB"
        files = f"{len(entry['files'])} ({size})"
        configs_by_counts: dict[str, list[str]] = {}
        for config, spec in entry["configs"].items():
            if "table" in spec:
                counts = f"{_split_rows(entry, spec['table']):,}"
            else:
                counts = " / ".join(f"{split} {_split_rows(entry, t):,}" for split, t in spec["splits"].items())
            configs_by_counts.setdefault(counts, []).append(config)
        rows = "; ".join(
            counts if configs == ["default"] else f"{', '.join(configs)}: {counts}"
            for counts, configs in configs_by_counts.items()
        )
        cells = [f"`{name}`", entry["title"], entry["used_for"], sources, entry["license"], files, rows]
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines) + "\n"
