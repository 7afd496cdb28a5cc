"""Atomic file writes shared by every module that persists something, and the SHA-256 of a file as read back.

A reader never sees a half-written file: the bytes go to a temporary file in the
same directory, are flushed and fsync'ed, and then ``os.replace`` swaps the file
into place (atomic on POSIX and Windows for paths on one filesystem).
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["atomic_write_bytes", "atomic_write_text", "atomic_write_json", "sha256_file"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically, creating parent folders; return the path."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"atomic_write_bytes expects bytes, got {type(data).__name__}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600 files; give the usual permissions
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def atomic_write_text(path: str | os.PathLike, text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically (UTF-8 by default)."""
    if not isinstance(text, str):
        raise TypeError(f"atomic_write_text expects str, got {type(text).__name__}")
    return atomic_write_bytes(path, text.encode(encoding))


def atomic_write_json(path: str | os.PathLike, obj: Any, *, indent: int = 2) -> Path:
    """Serialise ``obj`` as JSON (sorted keys, trailing newline) and write it atomically."""
    return atomic_write_text(path, json.dumps(obj, indent=indent, sort_keys=True, ensure_ascii=False) + "\n")


def sha256_file(path: str | os.PathLike) -> str:
    """The SHA-256 of a file's bytes, read in 1 MiB blocks (what datasets, checkpoints and results record)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
