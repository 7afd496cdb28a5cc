"""Errors of the data layer: every problem raises a :class:`DataError` whose message names the fix."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

__all__ = ["DataError", "DatasetUnavailableError", "ChecksumMismatchError", "DataFormatError"]


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
