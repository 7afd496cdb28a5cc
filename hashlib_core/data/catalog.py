"""The dataset catalogue: reading and validating ``data/manifest.yaml``, and the queries on it.

The manifest lies at the repository root beside the ``hashlib_core`` package (:data:`MANIFEST_PATH`). It is parsed
and validated once per path (a broken edit fails at load time with the key that is wrong) and cached; callers get
deep copies or read-only look-ups (:func:`manifest`, :func:`list_datasets`, :func:`list_configs`). The dataset
table of ``data/README.md`` is rendered from it by :func:`manifest_markdown_table`.
"""
from __future__ import annotations

import copy
import functools
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from hashlib_core.data.errors import DataError

__all__ = ["MANIFEST_PATH", "COMPRESSIONS", "FORMATS", "manifest", "list_datasets", "list_configs",
           "manifest_markdown_table"]

#: ``<repository>/data/manifest.yaml`` (this file is ``<repository>/hashlib_core/data/catalog.py``).
MANIFEST_PATH = Path(__file__).resolve().parents[2] / "data" / "manifest.yaml"
_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")

#: values a file's ``compression`` key may take (the loaders decompress these; no key: a plain file)
COMPRESSIONS = ("gzip",)
#: values a file's ``format`` key may take (no key: text). ``pickle``: a Python pickle of plain data, read only with
#: :class:`~hashlib_core.data.safe_pickle.PlainUnpickler`; its ``rows`` count the records its loader returns
FORMATS = ("pickle",)

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
            if not isinstance(spec.get("staged", True), bool):
                fail(f"dataset {name!r} file {file!r}: 'staged' must be true or false (false: not in the staged "
                     "mirror, read from the cache or downloaded)")
            if "assembled" in spec and not (isinstance(spec["assembled"], str) and spec["assembled"].strip()):
                fail(f"dataset {name!r} file {file!r}: 'assembled' must say how the file was built from its "
                     "sources (a file no single URL serves)")
            if "compression" in spec and spec["compression"] not in COMPRESSIONS:
                fail(f"dataset {name!r} file {file!r}: 'compression' is {spec['compression']!r}; use one of "
                     f"{list(COMPRESSIONS)}, or drop the key for an uncompressed file")
            if "format" in spec and spec["format"] not in FORMATS:
                fail(f"dataset {name!r} file {file!r}: 'format' is {spec['format']!r}; use one of {list(FORMATS)}, "
                     "or drop the key for a text file")
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


def _table(name: str, config: str, split: str | None) -> dict[str, Any]:
    spec = _config(name, config)
    if split is None:
        return spec["table"]
    return spec["splits"][split]


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
        unstaged = sum(not spec.get("staged", True) for spec in entry["files"].values())
        files = f"{len(entry['files'])} ({size}" + (f"; {unstaged} not staged: cache or download)" if unstaged else ")")
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
