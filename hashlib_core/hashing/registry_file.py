"""The file format of :class:`~hashlib_core.hashing.registry.SignatureRegistry` (``save`` / ``load``).

File format (``save``/``load``), version 1, one file written atomically::

    HLCSIGREG\\n                  magic line
    <n>\\n                        byte length of the header, in decimal
    <header JSON, n bytes>\\n     H, B, the hashing and rehash rules, mmh3 version and fingerprint, array layout,
                                 and the SHA-256 of (canonical header without "sha256") + payload
    <payload>                    token_offsets (int64, V+1, in code points), token_text (UTF-8),
                                 signatures (int64, V x H), rehash_counts (int64, V), little-endian, in that order

A file that cannot be read raises :class:`RegistryFileError` (a ``ValueError``) naming the file and the fix.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from hashlib_core._io import atomic_write_bytes
from hashlib_core.hashing.base import check_int
from hashlib_core.hashing.multihash import mmh3_fingerprint, mmh3_version

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "RegistryFileError", "write_registry_file", "read_registry_file"]

FORMAT_NAME = "hashlib_core.SignatureRegistry"
FORMAT_VERSION = 1
_MAGIC = b"HLCSIGREG\n"

_SEED_RULE = "coordinate i < H-1 uses seed i; the last coordinate uses seed H-1+r, r = rehash count (0 = none)"
_BUCKET_RULE = "mmh3.hash128(utf8(token), seed, x64arch=True, signed=False) % (num_buckets - 1) + 1"
_UNIQUENESS_RULE = (
    "r is the smallest value such that the signature differs from that of every token registered earlier"
)
_ARRAYS = (("token_offsets", "<i8"), ("token_text", "|u1"), ("signatures", "<i8"), ("rehash_counts", "<i8"))



class RegistryFileError(ValueError):
    """A registry file that cannot be loaded: corrupted, another format, or written for other settings."""



def write_registry_file(path: str | os.PathLike, fields: dict[str, Any], arrays: dict[str, np.ndarray]) -> Path:
    """Write a registry atomically: ``fields`` (``num_hashes``, ``num_buckets``, ``num_tokens``) and the four arrays,
    with the format, the hashing rules, the mmh3 version and fingerprint, and a checksum."""
    header = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        **fields,
        "seed_rule": _SEED_RULE,
        "bucket_rule": _BUCKET_RULE,
        "uniqueness_rule": _UNIQUENESS_RULE,
        "mmh3_version": mmh3_version(),
        "mmh3_fingerprint": mmh3_fingerprint(),
    }
    return atomic_write_bytes(path, _encode_file(header, arrays))


def read_registry_file(path: Path, *, num_hashes: int | None = None, num_buckets: int | None = None
                       ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Read and check a registry file: format, checksum, the asked-for settings, and the mmh3 that wrote it."""
    header, payload = _decode_file(path)
    stored = (header["num_hashes"], header["num_buckets"])
    asked = (
        num_hashes if num_hashes is not None else stored[0],
        num_buckets if num_buckets is not None else stored[1],
    )
    if asked != stored:
        raise RegistryFileError(
            f"{path} holds a registry with num_hashes={stored[0]}, num_buckets={stored[1]}, but "
            f"num_hashes={asked[0]}, num_buckets={asked[1]} was asked for; load it without these arguments, "
            f"pick the file made for your settings, or build a new SignatureRegistry({asked[0]}, {asked[1]})"
        )
    if header["mmh3_fingerprint"] != mmh3_fingerprint():
        raise RegistryFileError(
            f"{path} was written with mmh3 {header['mmh3_version']}, whose hash values differ from those of "
            f"the installed mmh3 {mmh3_version()} (fingerprints {header['mmh3_fingerprint'][:12]}... vs "
            f"{mmh3_fingerprint()[:12]}...): its signatures cannot be reproduced or safely expanded here. "
            f"Install the writer's version (pip install mmh3=={header['mmh3_version']}), or rebuild the "
            f"registry from its tokens, which changes signatures and invalidates models trained on them"
        )
    return header, payload


def _canonical(header: dict[str, Any]) -> bytes:
    return json.dumps(header, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def _encode_file(header: dict[str, Any], arrays: dict[str, np.ndarray]) -> bytes:
    """Container bytes: magic, header length, header (with layout and checksum), payload."""
    payload = io.BytesIO()
    layout = []
    for name, dtype in _ARRAYS:
        data = np.ascontiguousarray(arrays[name], dtype=np.dtype(dtype))
        layout.append({"name": name, "dtype": dtype, "shape": list(data.shape)})
        payload.write(data.tobytes())
    header = {**header, "arrays": layout}
    body = payload.getvalue()
    header["sha256"] = hashlib.sha256(_canonical(header) + body).hexdigest()
    head = json.dumps(header, sort_keys=True, indent=1, ensure_ascii=True).encode("ascii")
    return _MAGIC + f"{len(head)}\n".encode("ascii") + head + b"\n" + body


def _decode_file(path: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Parse and check a container file; return its header and arrays (see :func:`_encode_file`)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"no registry file at {path}; create one with SignatureRegistry.save") from None
    fix = "restore it from a copy, or rebuild the registry by registering its tokens again in the original order"
    if not data.startswith(_MAGIC):
        raise RegistryFileError(f"{path} is not a signature-registry file (wrong magic bytes); {fix}")
    try:
        rest = data[len(_MAGIC) :]
        length_line, rest = rest.split(b"\n", 1)
        length = int(length_line.decode("ascii"))
        header = json.loads(rest[:length].decode("ascii"))
        if rest[length : length + 1] != b"\n" or not isinstance(header, dict):
            raise ValueError("header not followed by a newline")
        body = rest[length + 1 :]
    except (ValueError, UnicodeDecodeError):
        raise RegistryFileError(f"{path} is corrupted: its header cannot be read; {fix}") from None
    if header.get("format") != FORMAT_NAME:
        raise RegistryFileError(f"{path} is not a signature-registry file (format {header.get('format')!r}); {fix}")
    if header.get("format_version") != FORMAT_VERSION:
        raise RegistryFileError(
            f"{path} uses registry format version {header.get('format_version')!r}, but this code reads version "
            f"{FORMAT_VERSION}; load it with the hashlib_core version that wrote it, or rebuild the registry by "
            f"registering its tokens again in the original order and saving it"
        )
    stored = header.pop("sha256", None)
    computed = hashlib.sha256(_canonical(header) + body).hexdigest()
    if stored != computed:
        raise RegistryFileError(
            f"{path} is corrupted: its SHA-256 checksum does not match its content (stored {str(stored)[:12]}..., "
            f"computed {computed[:12]}...); the file was truncated or modified after it was written; {fix}"
        )
    try:
        arrays: dict[str, np.ndarray] = {}
        offset = 0
        for spec, (name, dtype) in zip(header["arrays"], _ARRAYS):
            if spec["name"] != name or spec["dtype"] != dtype:
                raise ValueError(f"unexpected array {spec['name']!r}")
            count = int(np.prod(spec["shape"], dtype=np.int64))
            arrays[name] = np.frombuffer(body, dtype=np.dtype(dtype), count=count, offset=offset).reshape(spec["shape"])
            offset += count * np.dtype(dtype).itemsize
        if offset != len(body) or len(arrays) != len(_ARRAYS):
            raise ValueError("payload size mismatch")
        check_int("num_hashes", header["num_hashes"], minimum=1)
        check_int("num_buckets", header["num_buckets"], minimum=2)
        check_int("num_tokens", header["num_tokens"], minimum=0)
        if not isinstance(header["mmh3_fingerprint"], str) or not isinstance(header["mmh3_version"], str):
            raise ValueError("mmh3_version and mmh3_fingerprint must be strings")
    except (KeyError, TypeError, ValueError) as exc:
        raise RegistryFileError(
            f"{path} has an inconsistent layout ({exc}); it was not written by SignatureRegistry.save"
        ) from None
    return header, arrays
