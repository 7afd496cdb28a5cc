"""Tables 1 and 2 trained in parts and merged (:mod:`~hashlib_core.papers.pnlp_mixer.experiments` registers them).

Each comparison task (``mtop-en``, ``atis``, ``snips``) is trained in up to three parts, so that no experiment of
the cpu profile runs for more than an hour:

``mixer_<task>``
    the MinHash Mixer, a row of both tables (trained once, read by both merges);
``projections_<task>``
    the other projections with the Mixer (Table 1);
``architectures_<task>``
    the other encoders on the MinHash projection (Table 2).

Each part writes ``<part>_runs`` (one row per training run, :func:`~hashlib_core.papers.pnlp_mixer.runs.run_row`),
``<part>_curves`` (the per-epoch validation curves of the chosen point's first-seed runs) and ``<part>_items`` (the
chosen runs' per-sentence validation correctness). The merges ``projections`` and ``architectures`` concatenate the
parts of the profile's comparison tasks into ``table1`` / ``table2`` (with ``_curves`` and ``_items``), in the
profile's order of tasks and rows.
"""
from __future__ import annotations

from typing import Any

import pandas as pd

__all__ = ["PART_KINDS", "MERGES", "part_name", "part_pairs", "part_enabled", "curves", "items_record", "run_part",
           "merge_parts"]

#: the parts of each comparison task, in the order they are registered
PART_KINDS = ("mixer", "projections", "architectures")
#: each merge: the table it writes, the column that names its rows, the part kind that holds its other rows
MERGES = {"projections": ("table1", "projection", "projections"),
          "architectures": ("table2", "encoder", "architectures")}


def part_name(kind: str, task: str) -> str:
    """``"projections_mtop_en"`` for (``"projections"``, ``"mtop-en"``)."""
    if kind not in PART_KINDS:
        raise ValueError(f"unknown part kind {kind!r}; choose from {PART_KINDS}")
    return f"{kind}_{task.replace('-', '_')}"


def part_pairs(profile: Any, kind: str, task: str | None = None) -> list[tuple[str, str]]:
    """The (projection, encoder) rows a part trains under ``profile``: the MinHash Mixer when either table has it;
    the profile's other projections with the Mixer; its other encoders on MinHash. On MTOP (``task``) with
    ``comparison_mtop_rows="headline"``, only the headline projections and encoders."""
    if kind not in PART_KINDS:
        raise ValueError(f"unknown part kind {kind!r}; choose from {PART_KINDS}")
    if kind == "mixer":
        return [("minhash", "mixer")] if "minhash" in profile.projections or "mixer" in profile.encoders else []
    only_headline = (task is not None and task.startswith("mtop")
                     and getattr(profile, "comparison_mtop_rows", "all") == "headline")
    if kind == "projections":
        return [(p, "mixer") for p in profile.projections
                if p != "minhash" and (not only_headline or p in profile.headline_projections)]
    return [("minhash", e) for e in profile.encoders
            if e != "mixer" and (not only_headline or e in profile.headline_encoders)]


def part_enabled(profile: Any, kind: str, task: str) -> bool:
    """Whether ``profile`` runs the part: it compares on ``task`` and the part has rows to train."""
    return task in profile.comparison_tasks and bool(part_pairs(profile, kind, task))


def curves(runs: list[tuple[dict, dict]]) -> pd.DataFrame:
    """The per-epoch validation curves of the chosen point's first-seed run of every row (columns ``task``,
    ``projection``, ``encoder`` and the curve's)."""
    if not runs:
        return pd.DataFrame(columns=["task", "projection", "encoder", "epoch"])
    first = min(r["seed"] for r, _ in runs)
    return pd.DataFrame([{"task": r["task"], "projection": r["projection"], "encoder": r["encoder"], **point}
                         for r, s in runs if r["chosen"] and r["seed"] == first for point in s["curve"]])


def items_record(runs: list[tuple[dict, dict]]) -> dict[str, Any]:
    """The chosen runs' per-sentence validation correctness (``"0110..."`` per metric, one character per
    sentence): what a paired bootstrap over the validation sentences reads
    (:func:`~hashlib_core.papers.pnlp_mixer.claims_comparison.gap`)."""
    return {"runs": [{k: r[k] for k in ("task", "projection", "encoder", "seed")} | {"items": s["items"]}
                     for r, s in runs if r["chosen"]]}


def run_part(res: Any, kind: str, task: str) -> dict[str, Any]:
    """Train one part (every run of each of its rows, :meth:`~hashlib_core.papers.pnlp_mixer.runs.Resources.row_runs`)
    and return its three outputs."""
    profile = res.profile
    name = part_name(kind, task)
    if task not in profile.comparison_tasks:
        raise ValueError(f"{name}: the {profile.name} profile does not compare on {task} (comparison_tasks "
                         f"{profile.comparison_tasks})")
    pairs = part_pairs(profile, kind, task)
    if not pairs:
        raise ValueError(f"{name}: the {profile.name} profile has no row to train in this part")
    runs = [run for projection, encoder in pairs for run in res.row_runs(task, projection, encoder)]
    return {f"{name}_runs": pd.DataFrame([r for r, _ in runs]), f"{name}_curves": curves(runs),
            f"{name}_items": items_record(runs)}


def _ordered(frame: pd.DataFrame, which: str, tasks: tuple[str, ...], rows: tuple[str, ...]) -> pd.DataFrame:
    """``frame``'s rows of the profile's tasks and table rows, in the profile's order (stable within a row)."""
    keep = frame[frame["task"].isin(tasks) & frame[which].isin(rows)]
    key = keep["task"].map(tasks.index) * len(rows) + keep[which].map(rows.index)
    return keep.iloc[key.argsort(kind="stable")].reset_index(drop=True)


def merge_parts(evidence: Any, profile: Any, merge: str) -> dict[str, Any]:
    """Table 1 (``merge="projections"``) or Table 2 (``"architectures"``) from the parts of the profile's
    comparison tasks: every run, the curves and the per-sentence records, rows in the profile's order. A part the
    profile runs but whose results are missing is an error that names it."""
    stem, which, kind = MERGES[merge]
    rows = tuple(profile.projections if which == "projection" else profile.encoders)
    other = {"projection": ("encoder", "mixer"), "encoder": ("projection", "minhash")}[which]
    parts = [part_name(k, t) for t in profile.comparison_tasks for k in ("mixer", kind) if part_enabled(profile, k, t)]
    missing = [p for p in parts if not evidence.has(f"{p}_runs")]
    if missing:
        raise RuntimeError(f"{stem} needs the results of {', '.join(missing)}: run them first (for example --only "
                           f"{','.join(missing)}, which also reruns {merge})")
    tasks = tuple(profile.comparison_tasks)

    def table(suffix: str) -> pd.DataFrame:
        frames = [f for f in (evidence.table(f"{p}_{suffix}") for p in parts) if len(f)]
        if not frames:
            raise RuntimeError(f"{stem}: the {profile.name} profile trains no row of it (comparison_tasks "
                               f"{profile.comparison_tasks}, {which}s {rows})")
        frame = pd.concat(frames, ignore_index=True)
        return _ordered(frame[frame[other[0]] == other[1]], which, tasks, rows)

    records = [r for p in parts for r in evidence.json(f"{p}_items")["runs"]
               if r["task"] in tasks and r[which] in rows and r[other[0]] == other[1]]
    records.sort(key=lambda r: (tasks.index(r["task"]), rows.index(r[which]), r["seed"]))
    return {stem: table("runs"), f"{stem}_curves": table("curves"), f"{stem}_items": {"runs": records}}
