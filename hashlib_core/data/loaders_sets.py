"""Loaders of the large opaque-id sets: session-based recommendation (Diginetica, Nowplaying), Gowalla check-ins and
Wikispeedia's Wikipedia links. Each row is a context (a session, a user, a page) and the ids that go with it: the
shape of Superbloom's data (a page and the entities it links to), at 4.6K to 60K ids."""
from __future__ import annotations

from urllib.parse import unquote

from datasets import Dataset, DatasetDict, Features, List, Value

from hashlib_core.data.catalog import _config
from hashlib_core.data.errors import DataFormatError
from hashlib_core.data.lookup import dataset_path
from hashlib_core.data.readers import _dataset, _read_text, _split_lines
from hashlib_core.data.safe_pickle import int_lists, load_plain_pickle

__all__ = ["load_sessions", "load_gowalla", "load_wikispeedia"]


# ----------------------------------------------------------------------------------- sessions (pickles)
def _parse_sessions(value: object, source: str, split: str) -> dict[str, list]:
    """``train`` (``all_train_seq.txt``): a list of sessions, each a list of item ids; ``test`` (``test.txt``): a tuple
    ``(prefixes, targets)`` (SR-GNN's augmentation: every proper prefix of a test session and the item after it)."""
    if split == "train":
        return {"items": int_lists(value, source, "the sessions", min_length=1)}
    if not isinstance(value, tuple) or len(value) != 2:
        raise DataFormatError(f"{source}: expected a tuple (prefixes, targets), got {type(value).__name__}")
    prefixes = int_lists(value[0], source, "prefixes", min_length=1)
    targets = value[1]
    if not isinstance(targets, list) or len(targets) != len(prefixes) or not all(
            type(t) is int and t >= 0 for t in targets):
        raise DataFormatError(f"{source}: targets must be a list of {len(prefixes)} non-negative ints, one per prefix")
    return {"prefix": prefixes, "target": targets}


def load_sessions(config: str = "diginetica", *, verify: bool = True) -> DatasetDict:
    """Session-based recommendation data as the SR-GNN / GCE-GNN preprocessing leaves it (item ids ``1 .. N``).

    ``config``: ``diginetica`` (CIKM Cup 2016, 43,097 items) or ``nowplaying`` (60,416 tracks). Splits: ``train``
    (column ``items``: every training session, in click order, repeats kept) and ``test`` (``prefix`` and ``target``:
    each proper prefix of a test session and the item that followed it). The files are Python pickles: they are read
    with :class:`~hashlib_core.data.safe_pickle.PlainUnpickler`, which refuses every global (no code runs), and their
    contents are type-checked.
    """
    if not isinstance(config, str):
        raise TypeError(f"config must be a str, got {type(config).__name__}")
    splits = {}
    for split, table in _config("sessions", config)["splits"].items():
        path = dataset_path("sessions", table["file"], verify=verify)
        columns = _parse_sessions(load_plain_pickle(path.read_bytes(), str(path)), str(path), split)
        features = (Features({"items": List(Value("int32"))}) if split == "train"
                    else Features({"prefix": List(Value("int32")), "target": Value("int32")}))
        splits[split] = _dataset(columns, features, "sessions", config)
    return DatasetDict(splits)


# ----------------------------------------------------------------------------------------------- Gowalla
def _parse_user_items(text: str, source: str) -> dict[str, list]:
    """One line per user: the user's id, then the ids of its items in this split (space-separated, maybe none)."""
    users, items = [], []
    for number, line in enumerate(_split_lines(text), start=1):
        fields = line.split()
        if not fields or not all(f.isascii() and f.isdecimal() for f in fields):
            raise DataFormatError(f"{source} line {number} is not a user id followed by item ids: {line[:80]!r}")
        users.append(int(fields[0]))
        items.append([int(f) for f in fields[1:]])
    return {"user_id": users, "items": items}


def load_gowalla(*, verify: bool = True) -> DatasetDict:
    """Gowalla check-ins in the LightGCN split: ``train``, ``validation`` and ``test``, one row per user (29,858):
    ``user_id`` and ``items``, the location ids (of 40,981) the user checked in at in that split."""
    features = Features({"user_id": Value("int32"), "items": List(Value("int32"))})
    splits = {}
    for split, table in _config("gowalla", "default")["splits"].items():
        columns = _parse_user_items(_read_text("gowalla", table["file"], verify), table["file"])
        splits[split] = _dataset(columns, features, "gowalla")
    return DatasetDict(splits)


# ------------------------------------------------------------------------------------------- Wikispeedia
def _data_lines(text: str) -> list[str]:
    """The lines of a Wikispeedia TSV that are data: not blank, not a ``#`` comment."""
    return [line for line in _split_lines(text) if line.strip() and not line.startswith("#")]


def _parse_wikispeedia(text: str, source: str, n_fields: int) -> list[list[str]]:
    rows = []
    for number, line in enumerate(_data_lines(text), start=1):
        fields = line.split("\t")
        if len(fields) != n_fields or not all(fields):
            raise DataFormatError(f"{source} data line {number} has {len(fields)} tab-separated fields, expected "
                                  f"{n_fields} non-empty ones: {line[:80]!r}")
        rows.append([unquote(f, encoding="utf-8", errors="strict") for f in fields])
    return rows


_WIKISPEEDIA = {"links": ("source", "target"), "articles": ("article",), "categories": ("article", "category")}


def load_wikispeedia(config: str = "links", *, verify: bool = True) -> Dataset:
    """Wikispeedia (West and Leskovec 2012): Wikipedia pages of the selection for schools, names URL-decoded
    (``%C3%81ed%C3%A1n_mac_Gabr%C3%A1in`` -> ``Áedán_mac_Gabráin``). ``config``: ``links`` (``source``, ``target``:
    a link from one page to another), ``articles`` (``article``) or ``categories`` (``article``, ``category``).
    Comment lines (``#``) and blank lines are skipped."""
    if not isinstance(config, str):
        raise TypeError(f"config must be a str, got {type(config).__name__}")
    file = _config("wikispeedia", config)["table"]["file"]
    columns = _WIKISPEEDIA[config]
    try:
        rows = _parse_wikispeedia(_read_text("wikispeedia", file, verify), file, len(columns))
    except UnicodeDecodeError as exc:
        raise DataFormatError(f"wikispeedia {file}: a name does not URL-decode to UTF-8 ({exc})") from exc
    features = Features({c: Value("string") for c in columns})
    return _dataset({c: [r[i] for r in rows] for i, c in enumerate(columns)}, features, "wikispeedia", config)
