"""Reading helpers shared by the loaders: verified text, line and TSV splitting, and Dataset construction."""
from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from typing import Any

from datasets import Dataset, DatasetInfo, Features

from hashlib_core.data.catalog import _entry
from hashlib_core.data.errors import DataFormatError
from hashlib_core.data.lookup import dataset_path


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
