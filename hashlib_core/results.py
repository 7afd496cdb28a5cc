"""Results as files, and the paper-vs-ours tables every chapter shows.

Layout (fixed by the book's design)::

    results/<chapter>/<profile>/<name>.json        {"meta": {...}, "data": {...}}
    results/<chapter>/<profile>/<name>.csv         a table
    results/<chapter>/<profile>/<name>.meta.json   its metadata

Every file is written atomically (:mod:`hashlib_core._io`) and carries the metadata needed to trust it: device,
package versions, seed, git commit (and whether the tree was dirty), wall time, UTC timestamp. The root defaults to
``results/`` at the repository root and can be moved with the environment variable ``HASHLIB_RESULTS_DIR``.

Paper numbers live in ``data/paper_tables/`` as CSV transcriptions (cells exactly as printed, e.g. ``"99.1K"``),
indexed by ``data/paper_tables/index.yaml`` with the table and page they come from. :func:`paper_vs_ours` puts our
computed numbers beside them, rounds ours the way the paper printed its own, and reports the gap.
"""
from __future__ import annotations

import json
import math
import os
import platform
import re
import subprocess
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import pandas as pd

from hashlib_core._io import atomic_write_json, atomic_write_text

__all__ = [
    "repo_root",
    "results_root",
    "collect_metadata",
    "ResultsStore",
    "PrintedNumber",
    "parse_printed",
    "format_like",
    "paper_tables_dir",
    "paper_table_index",
    "load_paper_table",
    "paper_vs_ours",
    "style_comparison",
]

#: Packages whose versions are recorded with every result.
TRACKED_PACKAGES = (
    "torch", "transformers", "datasets", "tokenizers", "accelerate", "mmh3",
    "numpy", "pandas", "scipy", "scikit-learn",
)

_SLUG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def repo_root() -> Path:
    """The repository root: the folder that holds the ``hashlib_core`` package (editable install)."""
    return Path(__file__).resolve().parent.parent


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
def _git_state() -> dict[str, Any]:
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
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"git_commit": commit, "git_dirty": bool(status) if status is not None else None}


def _package_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for name in TRACKED_PACKAGES:
        try:
            versions[name] = importlib_metadata.version(name)
        except importlib_metadata.PackageNotFoundError:
            versions[name] = None
    return versions


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
        info["device_name"] = platform.processor() or platform.machine()
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
        **_git_state(),
    }
    if config is not None:
        meta["config"] = _jsonable(config)
    return meta


def _jsonable(obj: Any) -> Any:
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
    ) -> Path:
        """Write ``{"meta": ..., "data": data}`` to ``<name>.json``."""
        meta = collect_metadata(seed=seed, device=device, wall_time_s=wall_time_s, config=config)
        meta.update(chapter=self.chapter, profile=self.profile, name=name)
        return atomic_write_json(self.path(name, ".json"), {"meta": meta, "data": _jsonable(data)})

    def write_table(
        self,
        name: str,
        table: pd.DataFrame,
        *,
        seed: int | None,
        device: Any = None,
        wall_time_s: float | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> Path:
        """Write ``table`` to ``<name>.csv`` and its metadata to ``<name>.meta.json``.

        The CSV is written first and the metadata second, so a table never has metadata describing another run.
        """
        if not isinstance(table, pd.DataFrame):
            raise TypeError(f"write_table expects a pandas DataFrame, got {type(table).__name__}")
        meta = collect_metadata(seed=seed, device=device, wall_time_s=wall_time_s, config=config)
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
                f"`python -m hashlib_core.experiments.{self.chapter.replace('-', '_')} --profile {self.profile}`."
            )
        return p

    def __repr__(self) -> str:
        return f"ResultsStore(chapter={self.chapter!r}, profile={self.profile!r}, dir={str(self.dir)!r})"


# --------------------------------------------------------------------------------------------------------------
# Printed numbers: "99.1K", "38.6M", "0.9B", "94.7", "30%", "-"
# --------------------------------------------------------------------------------------------------------------

_SUFFIX = {"": 1.0, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12}
_PRINTED = re.compile(r"^\s*(?P<approx>~|≈)?\s*(?P<sign>[-+−])?(?P<num>\d[\d,]*(?:\.\d+)?|\.\d+)\s*"
                      r"(?P<suffix>[KMBGT])?\s*(?P<pct>%)?\s*$")


@dataclass(frozen=True)
class PrintedNumber:
    """A number as a paper printed it: its value, how many decimals were shown, and its suffix."""

    text: str
    value: float          # in base units (e.g. 99.1K -> 99100.0; 30% -> 30.0)
    decimals: int         # digits shown after the decimal point
    suffix: str           # "", "K", "M", "B"
    percent: bool

    @property
    def resolution(self) -> float:
        """Half a unit in the last printed place, in base units: the rounding error of the printed figure."""
        return 0.5 * 10 ** (-self.decimals) * _SUFFIX[self.suffix]


def parse_printed(text: Any) -> PrintedNumber | None:
    """Parse a printed cell ("99.1K", "38.6M", "0.9B", "94.7", "30%", "1,024"); ``None`` for "-" or empty.

    Raises ``ValueError`` for text that is neither a number nor an empty marker, naming the text.
    """
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return None
    s = str(text).strip()
    if s in {"", "-", "–", "—", "n/a", "N/A", "NA"}:
        return None
    m = _PRINTED.match(s)
    if not m:
        raise ValueError(f"cannot read {s!r} as a printed number (expected forms like 94.7, 99.1K, 38.6M, 30%)")
    num = m.group("num").replace(",", "")
    decimals = len(num.split(".")[1]) if "." in num else 0
    suffix = m.group("suffix") or ""
    sign = -1.0 if m.group("sign") in {"-", "−"} else 1.0
    return PrintedNumber(s, sign * float(num) * _SUFFIX[suffix], decimals, suffix, bool(m.group("pct")))


def format_like(value: float | None, like: PrintedNumber | None, *, signed: bool = False) -> str:
    """Format ``value`` with the suffix and number of decimals of a printed number (``38603520`` like "38.6M")."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if like is None:
        return f"{value:+.4g}" if signed else f"{value:.4g}"
    scaled = value / _SUFFIX[like.suffix]
    body = f"{scaled:{'+' if signed else ''}.{like.decimals}f}"
    return f"{body}{like.suffix}{'%' if like.percent else ''}"


# --------------------------------------------------------------------------------------------------------------
# Paper tables
# --------------------------------------------------------------------------------------------------------------

def paper_tables_dir() -> Path:
    return repo_root() / "data" / "paper_tables"


def paper_table_index() -> dict[str, dict[str, Any]]:
    """``data/paper_tables/index.yaml`` as ``{file stem: entry}``."""
    import yaml

    path = paper_tables_dir() / "index.yaml"
    if not path.exists():
        raise FileNotFoundError(f"the paper-table index is missing: expected {path}")
    entries = yaml.safe_load(path.read_text(encoding="utf-8"))
    if isinstance(entries, dict) and "tables" in entries:
        entries = entries["tables"]
    if not isinstance(entries, list):
        raise ValueError(f"{path} must hold a list of table entries (or a mapping with key 'tables')")
    return {Path(e["file"]).stem: e for e in entries}


def load_paper_table(stem: str) -> pd.DataFrame:
    """A transcribed paper table, every cell a string exactly as printed.

    ``df.attrs["source"]`` holds its index entry (paper, table, page, caption, notes).
    """
    index = paper_table_index()
    if stem not in index:
        raise KeyError(f"no paper table {stem!r}; known tables: {', '.join(sorted(index))}")
    df = pd.read_csv(paper_tables_dir() / index[stem]["file"], dtype=str, keep_default_na=False)
    df.attrs["source"] = index[stem]
    return df


def _citation(entry: Mapping[str, Any] | None) -> str:
    if not entry:
        return ""
    page = entry.get("page")
    where = entry.get("table", "")
    if page not in (None, ""):
        where += f", p. {page}"
    return f"{entry.get('paper', '')}, {where}".strip(", ")


def paper_vs_ours(
    paper: pd.DataFrame,
    ours: pd.DataFrame,
    on: str | Sequence[str],
    columns: Mapping[str, str] | Iterable[str],
    *,
    ours_scale: Mapping[str, float] | None = None,
    keep: Sequence[str] = (),
) -> pd.DataFrame:
    """Put our numbers beside a paper's, with the gap, one row per (key, metric).

    Parameters
    ----------
    paper:
        A table from :func:`load_paper_table` (cells as printed).
    ours:
        Our computed table, numeric columns in base units (e.g. a parameter count as an integer, an accuracy in %).
    on:
        Key column(s) present in both tables (e.g. ``"model"``).
    columns:
        Metric columns to compare: a list of names present in both, or ``{paper column: our column}``.
    ours_scale:
        Optional multiplier per paper column to bring ours to the paper's units (e.g. ``100`` for a fraction
        compared with a percentage).
    keep:
        Extra paper columns to carry into the output beside the keys (e.g. ``"source"``).

    Returns a DataFrame with the keys, ``metric``, ``paper`` (as printed), ``ours`` (formatted the way the paper
    prints), ``ours_exact``, ``gap`` (ours - paper, same format), ``gap_rel_%`` and ``agrees`` (True when ours
    rounds to the printed figure). Keys missing on either side appear with ``-`` rather than being dropped.
    """
    keys = [on] if isinstance(on, str) else list(on)
    mapping = dict(columns) if isinstance(columns, Mapping) else {c: c for c in columns}
    for k in keys:
        for name, df in (("paper", paper), ("ours", ours)):
            if k not in df.columns:
                raise KeyError(f"key column {k!r} missing from the {name} table (columns: {list(df.columns)})")
    for p_col, o_col in mapping.items():
        if p_col not in paper.columns:
            raise KeyError(f"paper table has no column {p_col!r} (columns: {list(paper.columns)})")
        if o_col not in ours.columns:
            raise KeyError(f"our table has no column {o_col!r} (columns: {list(ours.columns)})")
    scale = dict(ours_scale or {})
    for c in keep:
        if c not in paper.columns:
            raise KeyError(f"paper table has no column {c!r} to keep (columns: {list(paper.columns)})")
    left = paper[keys + [c for c in keep if c not in keys] + list(mapping)].astype({k: str for k in keys})
    right = ours[keys + list(dict.fromkeys(mapping.values()))].astype({k: str for k in keys})
    merged = left.merge(right, on=keys, how="outer", suffixes=("", "__ours"), indicator=True, sort=False)

    rows = []
    for _, r in merged.iterrows():
        for p_col, o_col in mapping.items():
            o_key = f"{o_col}__ours" if o_col in mapping else o_col  # merge suffixed the name clash
            printed = parse_printed(r[p_col]) if r["_merge"] != "right_only" else None
            ours_val = r.get(o_key) if r["_merge"] != "left_only" else None
            ours_val = None if ours_val is None or pd.isna(ours_val) else float(ours_val) * scale.get(p_col, 1.0)
            gap = None if printed is None or ours_val is None else ours_val - printed.value
            rows.append({
                **{k: r[k] for k in keys},
                **{c: r[c] for c in keep if c not in keys},
                "metric": p_col,
                "paper": r[p_col] if printed is not None else "-",
                "ours": format_like(ours_val, printed),
                "ours_exact": ours_val,
                "gap": format_like(gap, printed, signed=True),
                "gap_rel_%": None if gap is None or printed.value == 0 else round(100 * gap / abs(printed.value), 2),
                "agrees": None if gap is None else bool(format_like(ours_val, printed) == format_like(printed.value, printed)),
            })
    out = pd.DataFrame(rows)
    out.attrs["source"] = _citation(paper.attrs.get("source"))
    return out


def style_comparison(table: pd.DataFrame, caption: str | None = None):
    """A pandas Styler for a :func:`paper_vs_ours` table: agreement in green, disagreement in orange."""
    def colour(v: Any) -> str:
        if v is True:
            return "background-color: #d9f2d9"
        if v is False:
            return "background-color: #ffe0b3"
        return ""

    shown = table.drop(columns=["ours_exact"], errors="ignore")
    styler = shown.style.map(colour, subset=["agrees"]).hide(axis="index")
    styler = styler.format({"gap_rel_%": lambda v: "-" if v is None or pd.isna(v) else f"{v:+.2f}"})
    cap = caption or ""
    if table.attrs.get("source"):
        cap = f"{cap} (paper: {table.attrs['source']})".strip()
    return styler.set_caption(cap) if cap else styler
