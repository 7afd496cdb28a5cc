"""Paper numbers beside ours: printed cells, transcribed tables, and the comparison every chapter shows.

Paper numbers live in ``data/paper_tables/`` as CSV transcriptions (cells exactly as printed, e.g. ``"99.1K"``),
indexed by ``data/paper_tables/index.yaml`` with the table and page they come from. :func:`paper_vs_ours` puts our
computed numbers beside them, rounds ours the way the paper printed its own, and reports the gap.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import pandas as pd

from hashlib_core.results.store import repo_root

__all__ = ["PrintedNumber", "parse_printed", "format_like", "paper_tables_dir", "paper_table_index",
           "load_paper_table", "paper_vs_ours"]

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
    """Format ``value`` with the suffix and number of decimals of a printed number (``12345678`` like "38.6M" gives
    "12.3M"). With ``signed``, a value that rounds to zero at that precision has no sign ("0.0K", not "-0.0K")."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if like is None:
        return f"{value:+.4g}" if signed else f"{value:.4g}"
    scaled = value / _SUFFIX[like.suffix]
    body = f"{scaled:{'+' if signed else ''}.{like.decimals}f}"
    if signed and float(body) == 0:
        body = body.lstrip("+-")
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
