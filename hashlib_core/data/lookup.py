"""Verified file look-up: mirror, then cache, then download from the manifest's pinned source.

A manifest file is looked up in this order:

1. ``$HASHLIB_DATA_DIR/<folder>/<file>``: a local mirror laid out like the manifest (one folder per dataset).
2. ``$HASHLIB_CACHE_DIR/<folder>/<file>``: the download cache (default ``~/.cache/hashlib_core/data``,
   expanded when the look-up runs).
3. The original source URL from the manifest (a raw file at a pinned commit, or a pinned archive holding the
   file as a member). The bytes are checked against the manifest's size and sha256 *before* they are written
   (atomically) into the cache. ``HASHLIB_OFFLINE=1`` (or ``download=False``) forbids downloads.

A file found in the mirror or the cache is checked on its first use in a process: its size always, its sha256
unless ``verify=False``; a successful sha256 check is remembered per (path, size, mtime).
"""
from __future__ import annotations

import hashlib
import http.client
import io
import os
import tarfile
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hashlib_core._io import atomic_write_bytes
from hashlib_core._io import sha256_file as _sha256_file  # the name the tests patch to count hashings
from hashlib_core.data.catalog import _entry
from hashlib_core.data.errors import ChecksumMismatchError, DataFormatError, DatasetUnavailableError

__all__ = [
    "DATA_DIR_ENV", "CACHE_DIR_ENV", "OFFLINE_ENV", "DOWNLOAD_TIMEOUT_S",
    "data_dir", "cache_dir", "downloads_enabled", "fetch_bytes", "dataset_path",
]

DATA_DIR_ENV = "HASHLIB_DATA_DIR"
CACHE_DIR_ENV = "HASHLIB_CACHE_DIR"
OFFLINE_ENV = "HASHLIB_OFFLINE"
DOWNLOAD_TIMEOUT_S = 60.0
_DEFAULT_CACHE_SUBDIR = Path(".cache") / "hashlib_core" / "data"
_TRUE_WORDS = frozenset({"1", "true", "yes", "on"})


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
            _unavailable_message(name, file, searched, url, f"download from {url} failed: {exc}",
                                 "make the source reachable (network access) and run again, so that the file "
                                 "is downloaded into the cache"),
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


def _unavailable_message(name: str, file: str, searched: Sequence[Path], url: str, reason: str,
                         remedy: str) -> str:
    """The message of a :class:`DatasetUnavailableError`; ``remedy`` is the one network fix that applies."""
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
        f"or {remedy}."
    )


def _download_blockers(download: bool) -> list[str]:
    """What forbids the download now: ``download=False`` and/or the offline variable (with its value)."""
    blockers = [] if download else ["download=False"]
    if not downloads_enabled():
        blockers.append(f"{OFFLINE_ENV}={os.environ.get(OFFLINE_ENV, '').strip()}")
    return blockers


def _blocked_remedy(blockers: Sequence[str]) -> str:
    steps = []
    if any(b == "download=False" for b in blockers):
        steps.append("call it with download=True (the default)")
    if any(b.startswith(OFFLINE_ENV + "=") for b in blockers):
        steps.append(f"unset {OFFLINE_ENV}")
    return " and ".join(steps) + " so that the file is downloaded from the source into the cache"


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
    if spec.get("assembled"):
        raise DatasetUnavailableError(
            _unavailable_message(name, file, searched, spec["url"],
                                 f"no single URL serves it: it is {spec['assembled']}",
                                 "assemble it as the dataset's SOURCE.md describes (the manifest pins its sha256) "
                                 "and put it in the cache"),
            dataset=name, file=file, paths=searched, url=spec["url"],
        )
    blockers = _download_blockers(download)
    if blockers:
        reason = "downloads are disabled by " + " and ".join(blockers)
        raise DatasetUnavailableError(
            _unavailable_message(name, file, searched, spec["url"], reason, _blocked_remedy(blockers)),
            dataset=name, file=file, paths=searched, url=spec["url"],
        )
    payload = _download_verified(name, file, spec, searched)
    atomic_write_bytes(cached, payload)
    stat = cached.stat()
    _VERIFIED[(str(cached.resolve()), stat.st_size, stat.st_mtime_ns)] = spec["sha256"]
    return cached
