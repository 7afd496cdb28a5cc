"""Results as files: ``results/<chapter>/<profile>/``, each with the metadata needed to trust it.

Layout (fixed by the book's design)::

    results/<chapter>/<profile>/<name>.json        {"meta": {...}, "data": {...}}
    results/<chapter>/<profile>/<name>.csv         a table
    results/<chapter>/<profile>/<name>.meta.json   its metadata

Every file is written atomically (:mod:`hashlib_core._io`) and carries the metadata needed to trust it: device,
package versions, seed, git commit, wall time, UTC timestamp, and:

* ``data_sha256``: the SHA-256 of the data as written (the CSV's bytes; for a JSON result, its ``data`` in canonical
  JSON), checked whenever the result is read: a result edited by hand, cut short or swapped is refused with
  :class:`ResultFileError` naming the file and how to recompute it, so the book never shows a number no run
  produced. ``data_sha256_recorded`` says when the digest was taken: ``"written"`` (by the run) or, for results
  written before digests existed, the date they were sealed as committed;
* ``git_dirty`` and, when it is true, ``git_dirty_files`` (the tracked files that differed from the commit) and
  ``git_diff_sha256`` (the digest of ``git diff HEAD``), with the diff itself kept beside the results as
  ``patches/<digest>.diff``: the code of a run from a tree with uncommitted changes stays recoverable, and the page's
  provenance line and the claims that read such a result say so.

A file that does not parse (a truncated ``.meta.json``, a CSV that is not one) raises :class:`ResultFileError`
too, never a bare JSON or pandas error. The root defaults to ``results/`` at the repository root and can be moved
with the environment variable ``HASHLIB_RESULTS_DIR``.

The paper-vs-ours tables are in :mod:`hashlib_core.results.paper`.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import platform
import re
import subprocess
from datetime import datetime, timezone
from functools import lru_cache
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from hashlib_core._io import atomic_write_bytes, atomic_write_json, atomic_write_text, sha256_file

__all__ = ["repo_root", "results_root", "git_state", "git_diff", "collect_metadata", "to_jsonable", "ResultsStore",
           "ResultFileError", "data_digest", "read_benchmark"]

#: Packages whose versions are recorded with every result.
TRACKED_PACKAGES = (
    "torch", "transformers", "datasets", "tokenizers", "accelerate", "mmh3",
    "numpy", "pandas", "scipy", "scikit-learn",
)

_SLUG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def repo_root() -> Path:
    """The repository root: the folder that holds the ``hashlib_core`` package (editable install)."""
    return Path(__file__).resolve().parents[2]


def results_root() -> Path:
    """Where results live: ``$HASHLIB_RESULTS_DIR`` if set, else ``<repo>/results``."""
    env = os.environ.get("HASHLIB_RESULTS_DIR")
    return Path(env).expanduser() if env else repo_root() / "results"


def _check_slug(kind: str, value: str) -> str:
    if not isinstance(value, str) or not _SLUG.match(value):
        raise ValueError(
            f"{kind} must be a simple name of letters, digits, '_', '-' or '.', not starting with a "
            f"punctuation mark (it becomes a folder or file name); got {value!r}"
        )
    return value


#: the pathspec of the code a result's provenance covers (results themselves are data, not code)
_CODE = ("--", ".", ":(exclude)results")


def _git(*args: str) -> bytes | None:
    """The bytes ``git <args>`` writes in the repository root, or None when git is missing or fails."""
    try:
        return subprocess.run(["git", *args], cwd=repo_root(), capture_output=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None


def _git_text(*args: str) -> str | None:
    out = _git(*args)
    return None if out is None else out.decode("utf-8", errors="replace").strip()


@lru_cache(maxsize=1)
def git_state() -> dict[str, Any]:
    commit = _git_text("rev-parse", "HEAD")
    if commit is None:
        return {"git_commit": None, "git_dirty": None}
    # dirty: the code differs from the commit. Result files are left out: a run of several commands writes results
    # between them, and the next command still runs the committed code.
    status = _git_text("status", "--porcelain", "--untracked-files=no", *_CODE)
    state: dict[str, Any] = {"git_commit": commit, "git_dirty": bool(status) if status is not None else None}
    if state["git_dirty"]:
        files, diff = git_diff()
        state["git_dirty_files"] = files
        state["git_diff_sha256"] = hashlib.sha256(diff).hexdigest() if diff is not None else None
    return state


@lru_cache(maxsize=1)
def git_diff() -> tuple[list[str], bytes | None]:
    """``(changed tracked files, the bytes of git diff HEAD)`` of the code (results excluded), as the process first
    saw it (cached: the code a run imported is the code of its start). Bytes, as git writes them: a diff of a file
    that is not UTF-8, or has CRLF line ends, is kept and digested exactly, so the kept patch applies."""
    names = _git_text("diff", "HEAD", "--name-only", *_CODE) or ""
    return [n for n in names.splitlines() if n.strip()], _git("diff", "HEAD", "--binary", *_CODE)


def data_digest(data: Any) -> str:
    """The SHA-256 of a JSON result's ``data`` in canonical JSON (sorted keys, no spaces): what ``data_sha256``
    records for a ``.json`` result (its CSV's bytes for a table)."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ResultFileError(ValueError):
    """A result file that cannot be trusted: it does not parse (cut short, not JSON or CSV), or its data is not
    what the run that wrote it recorded (edited by hand, truncated, swapped). The message names the file, what is
    wrong and how to recompute or restore it."""


def _package_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for name in TRACKED_PACKAGES:
        try:
            versions[name] = importlib_metadata.version(name)
        except importlib_metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def cpu_name() -> str:
    """The CPU's model name from ``/proc/cpuinfo`` (``platform.processor()`` or the machine type elsewhere)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def cpu_capability() -> str | None:
    """The vector instruction set torch's CPU kernels use here (e.g. ``AVX2``, ``AVX512``), or None without torch.
    Two CPUs with different ones round differently, so the same seed can train to different numbers on them."""
    try:
        import torch

        return str(torch.backends.cpu.get_cpu_capability())
    except Exception:  # noqa: BLE001 - provenance only: a result is still worth writing without it
        return None


def _describe_device(device: Any) -> dict[str, Any]:
    """Device as a string plus, for CUDA, the accelerator's name (never a host name)."""
    text = str(device) if device is not None else "cpu"
    info: dict[str, Any] = {"device": text}
    if text.startswith("cuda"):
        try:
            import torch

            index = int(text.split(":")[1]) if ":" in text else torch.cuda.current_device()
            info["device_name"] = torch.cuda.get_device_name(index)
            info["cuda_version"] = torch.version.cuda
            info["device_count"] = torch.cuda.device_count()
        except Exception as exc:  # a result is still worth writing if the query fails
            info["device_name"] = f"unknown ({type(exc).__name__})"
    else:
        info["device_name"] = cpu_name()
        info["cpu_capability"] = cpu_capability()
        info["cpu_count"] = os.cpu_count()
    return info


def collect_metadata(
    *,
    seed: int | None,
    device: Any = None,
    wall_time_s: float | None = None,
    config: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Metadata stored with every result: device, versions, seed, git commit, wall time, config."""
    meta: dict[str, Any] = {
        "created_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "seed": seed,
        "wall_time_s": None if wall_time_s is None else round(float(wall_time_s), 4),
        "python": platform.python_version(),
        "platform": f"{platform.system()}-{platform.machine()}",
        "packages": _package_versions(),
        **_describe_device(device),
        **git_state(),
    }
    if config is not None:
        meta["config"] = to_jsonable(config)
    return meta


def to_jsonable(obj: Any) -> Any:
    """Round-trip ``obj`` through JSON (dataclasses, paths, numpy scalars become plain values)."""
    import dataclasses

    def default(o: Any) -> Any:
        if dataclasses.is_dataclass(o) and not isinstance(o, type):
            return dataclasses.asdict(o)
        if isinstance(o, Path):
            return str(o)
        if hasattr(o, "item") and callable(o.item):
            return o.item()
        if hasattr(o, "tolist") and callable(o.tolist):
            return o.tolist()
        raise TypeError(f"{type(o).__name__} is not JSON serialisable")

    return json.loads(json.dumps(obj, default=default))


class ResultsStore:
    """Reads and writes ``results/<chapter>/<profile>/``; every write is atomic and carries metadata.

    >>> store = ResultsStore("vocab_bottleneck", "smoke")          # doctest: +SKIP
    >>> store.write_table("shares", df, seed=0, device="cpu", wall_time_s=1.2)   # doctest: +SKIP
    """

    def __init__(self, chapter: str, profile: str, root: str | os.PathLike | None = None) -> None:
        self.chapter = _check_slug("chapter", chapter)
        self.profile = _check_slug("profile", profile)
        self.root = Path(root) if root is not None else results_root()

    @property
    def dir(self) -> Path:
        return self.root / self.chapter / self.profile

    def path(self, name: str, suffix: str) -> Path:
        return self.dir / f"{_check_slug('result name', name)}{suffix}"

    def write_json(
        self,
        name: str,
        data: Any,
        *,
        seed: int | None,
        device: Any = None,
        wall_time_s: float | None = None,
        config: Mapping[str, Any] | None = None,
        inputs: Mapping[str, str] | None = None,
        reused_compute_s: float | None = None,
    ) -> Path:
        """Write ``{"meta": ..., "data": data}`` to ``<name>.json`` (``inputs``: digests of the results it was derived
        from, see :meth:`digest`)."""
        meta = collect_metadata(seed=seed, device=device, wall_time_s=wall_time_s, config=config)
        if inputs is not None:
            meta["inputs"] = dict(inputs)
        if reused_compute_s:
            meta["reused_compute_s"] = round(float(reused_compute_s), 4)
        meta.update(chapter=self.chapter, profile=self.profile, name=name)
        data = to_jsonable(data)
        meta.update(data_sha256=data_digest(data), data_sha256_recorded="written")
        self._keep_patch(meta)
        return atomic_write_json(self.path(name, ".json"), {"meta": meta, "data": data})

    def write_table(
        self,
        name: str,
        table: pd.DataFrame,
        *,
        seed: int | None,
        device: Any = None,
        wall_time_s: float | None = None,
        config: Mapping[str, Any] | None = None,
        inputs: Mapping[str, str] | None = None,
        reused_compute_s: float | None = None,
    ) -> Path:
        """Write ``table`` to ``<name>.csv`` and its metadata to ``<name>.meta.json`` (``inputs``: digests of the
        results it was derived from, see :meth:`digest`).

        The CSV is written first and the metadata second, so a table never has metadata describing another run.
        """
        if not isinstance(table, pd.DataFrame):
            raise TypeError(f"write_table expects a pandas DataFrame, got {type(table).__name__}")
        meta = collect_metadata(seed=seed, device=device, wall_time_s=wall_time_s, config=config)
        if inputs is not None:
            meta["inputs"] = dict(inputs)
        if reused_compute_s:
            meta["reused_compute_s"] = round(float(reused_compute_s), 4)
        meta.update(chapter=self.chapter, profile=self.profile, name=name, rows=len(table),
                    columns=[str(c) for c in table.columns])
        text = table.to_csv(index=False)
        meta.update(data_sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(), data_sha256_recorded="written")
        self._keep_patch(meta)
        csv_path = atomic_write_text(self.path(name, ".csv"), text)
        atomic_write_json(self.path(name, ".meta.json"), meta)
        return csv_path

    def _keep_patch(self, meta: Mapping[str, Any]) -> None:
        """A run from a tree with uncommitted changes keeps its diff beside the results (once per digest)."""
        digest = meta.get("git_diff_sha256")
        if not digest:
            return
        path = self.dir / "patches" / f"{digest[:16]}.diff"
        if not path.exists():
            _, diff = git_diff()
            if diff is not None and hashlib.sha256(diff).hexdigest() == digest:
                atomic_write_bytes(path, diff)

    def exists(self, name: str) -> bool:
        return self.path(name, ".json").exists() or self.path(name, ".csv").exists()

    def read_json(self, name: str) -> dict[str, Any]:
        """Return ``{"meta": ..., "data": ...}``, its data checked against the digest its run recorded; a missing
        file names the command that makes it, a damaged or edited one raises :class:`ResultFileError`."""
        path = self._existing(name, ".json")
        whole = self._parse_json(path)
        if not isinstance(whole, dict) or not isinstance(whole.get("meta"), dict) or "data" not in whole:
            raise self._error(path, 'is not a result (it lacks the {"meta": ..., "data": ...} layout)')
        recorded = whole["meta"].get("data_sha256")
        if recorded is not None and data_digest(whole["data"]) != recorded:
            raise self._error(path, "holds data that is not what its run wrote (the SHA-256 of its data differs from "
                                    "the data_sha256 its metadata records): it was edited or swapped")
        return whole

    def read_table(self, name: str) -> pd.DataFrame:
        """The CSV of result ``name``, checked against the digest (and row count) its run recorded."""
        path = self._existing(name, ".csv")
        raw = path.read_bytes()
        meta_path = self.path(name, ".meta.json")
        meta = self._parse_json(meta_path) if meta_path.exists() else {}
        recorded = meta.get("data_sha256") if isinstance(meta, dict) else None
        if recorded is not None and hashlib.sha256(raw).hexdigest() != recorded:
            lines = raw.decode("utf-8", errors="replace").count("\n") - 1
            rows = (f"; its metadata records {meta['rows']:,} rows, the file holds about {max(lines, 0):,}"
                    if isinstance(meta.get("rows"), int) and meta["rows"] != lines else "")
            raise self._error(path, f"is not the table its run wrote (its SHA-256 differs from the data_sha256 "
                                    f"{meta_path.name} records{rows}): it was edited, cut short or swapped")
        try:
            return pd.read_csv(io.BytesIO(raw))
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
            raise self._error(path, f"does not read as a CSV table ({type(exc).__name__}: "
                                    f"{str(exc).strip()[:200]})") from None

    def read_meta(self, name: str) -> dict[str, Any]:
        json_path = self.path(name, ".json")
        if json_path.exists():
            return self.read_json(name)["meta"]
        path = self._existing(name, ".meta.json")
        meta = self._parse_json(path)
        if not isinstance(meta, dict):
            raise self._error(path, "is not a metadata record (a JSON object)")
        return meta

    def _parse_json(self, path: Path) -> Any:
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise self._error(path, f"is not whole JSON ({exc}; cut short or edited?)") from None

    def _error(self, path: Path, what: str) -> ResultFileError:
        try:
            shown = path.resolve().relative_to(repo_root())
        except ValueError:
            shown = path
        if self.chapter == "benchmarks":
            again = "rerun the benchmark that writes it (`python -m hashlib_core.benchmarks.<name>`)"
        else:
            again = (f"recompute it with `python -m hashlib_core.papers.{self.chapter} --profile {self.profile}` "
                     f"(`--only` the experiment that writes it)")
        return ResultFileError(f"result file {shown} {what}. The book shows only what a run produced: {again}, "
                               f"or restore the committed copy with `git checkout -- {shown}`")

    def digest(self, name: str) -> str | None:
        """The sha256 of result ``name``'s data file (its CSV, or its JSON), or None when it does not exist: what a
        derived result records of its evidence, so that it goes stale when the evidence is rewritten."""
        for suffix in (".csv", ".json"):
            p = self.path(name, suffix)
            if p.exists():
                return sha256_file(p)
        return None

    def names(self) -> list[str]:
        """Result names present in this folder (sorted)."""
        if not self.dir.exists():
            return []
        out = set()
        for p in self.dir.iterdir():
            if p.name.startswith("."):
                continue
            if p.name.endswith(".meta.json"):
                out.add(p.name[: -len(".meta.json")])
            elif p.suffix in {".json", ".csv"} and p.is_file():
                out.add(p.stem)
        return sorted(out)

    def _existing(self, name: str, suffix: str) -> Path:
        p = self.path(name, suffix)
        if not p.exists():
            raise FileNotFoundError(
                f"no result {name!r} for chapter {self.chapter!r}, profile {self.profile!r}: expected {p}. "
                f"Run the chapter's experiment first, e.g. "
                f"`python -m hashlib_core.papers.{self.chapter.replace('-', '_')} --profile {self.profile}`."
            )
        return p

    def __repr__(self) -> str:
        return f"ResultsStore(chapter={self.chapter!r}, profile={self.profile!r}, dir={str(self.dir)!r})"




def read_benchmark(name: str, mode: str = "quick") -> dict[str, Any] | None:
    """A benchmark's result, ``results/benchmarks/<mode>/<name>.json`` as ``{"meta": ..., "data": ...}`` (what
    ``python -m hashlib_core.benchmarks.<name>`` writes), or None when it was never run."""
    store = ResultsStore("benchmarks", mode)
    return store.read_json(name) if store.exists(name) else None
