"""Results as files: ``results/<chapter>/<profile>/``, each with the metadata needed to trust it.

Layout (fixed by the book's design)::

    results/<chapter>/<profile>/<name>.json        {"meta": {...}, "data": {...}}
    results/<chapter>/<profile>/<name>.csv         a table
    results/<chapter>/<profile>/<name>.meta.json   its metadata

Every file is written atomically (:mod:`hashlib_core._io`) and carries the metadata needed to trust it: device,
package versions, seed, git commit (and whether the tree was dirty), wall time, UTC timestamp. The root defaults to
``results/`` at the repository root and can be moved with the environment variable ``HASHLIB_RESULTS_DIR``.

The paper-vs-ours tables are in :mod:`hashlib_core.results.paper`.
"""
from __future__ import annotations

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

from hashlib_core._io import atomic_write_json, atomic_write_text

__all__ = ["repo_root", "results_root", "git_state", "collect_metadata", "to_jsonable", "ResultsStore",
           "read_benchmark"]

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


@lru_cache(maxsize=1)
def git_state() -> dict[str, Any]:
    root = repo_root()

    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(
                ["git", *args], cwd=root, capture_output=True, text=True, timeout=10, check=True
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout.strip()

    commit = git("rev-parse", "HEAD")
    if commit is None:
        return {"git_commit": None, "git_dirty": None}
    # dirty: the code differs from the commit. Result files are left out: a run of several commands writes results
    # between them, and the next command still runs the committed code.
    status = git("status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)results")
    return {"git_commit": commit, "git_dirty": bool(status) if status is not None else None}


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
        return atomic_write_json(self.path(name, ".json"), {"meta": meta, "data": to_jsonable(data)})

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
        csv_path = atomic_write_text(self.path(name, ".csv"), table.to_csv(index=False))
        atomic_write_json(self.path(name, ".meta.json"), meta)
        return csv_path

    def exists(self, name: str) -> bool:
        return self.path(name, ".json").exists() or self.path(name, ".csv").exists()

    def read_json(self, name: str) -> dict[str, Any]:
        """Return ``{"meta": ..., "data": ...}``; a missing file names the command that makes it."""
        return json.loads(self._existing(name, ".json").read_text(encoding="utf-8"))

    def read_table(self, name: str) -> pd.DataFrame:
        return pd.read_csv(self._existing(name, ".csv"))

    def read_meta(self, name: str) -> dict[str, Any]:
        json_path = self.path(name, ".json")
        if json_path.exists():
            return self.read_json(name)["meta"]
        return json.loads(self._existing(name, ".meta.json").read_text(encoding="utf-8"))

    def digest(self, name: str) -> str | None:
        """The sha256 of result ``name``'s data file (its CSV, or its JSON), or None when it does not exist: what a
        derived result records of its evidence, so that it goes stale when the evidence is rewritten."""
        import hashlib

        for suffix in (".csv", ".json"):
            p = self.path(name, suffix)
            if p.exists():
                return hashlib.sha256(p.read_bytes()).hexdigest()
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
            elif p.suffix in {".json", ".csv"}:
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
