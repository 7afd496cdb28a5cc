"""The dry run of a chapter's profile: sizes, data, two steps on several processes, and the plan, in seconds.

:func:`dry_run` does four things with the chapter's :class:`~hashlib_core.dry_run.spec.DryRun`:

a. builds every model of the profile on the ``meta`` device and compares its parameter count with the size the
   paper prints for it, rounded the way the paper rounds (``sizes``);
b. runs the chapter's real loaders on a few hundred records, the hub mocked by a local fixture of the same columns
   (``data``);
c. trains a tiny copy of the profile's main model for two steps on ``processes`` CPU processes through the shared
   loop, checkpoints, resumes an interrupted copy and checks it ends at the same step with the same weights
   (``training``);
d. writes the plan of the real run (models and sizes, steps, tokens, batch, data sources, checkpoint cadence).

Each table is written results-style (CSV + metadata, :class:`~hashlib_core.results.store.ResultsStore`) under
``checkpoints/dry-run/<chapter>/<profile>/``, never into ``results/``. ``DryRunReport.problems`` lists what failed;
the command line exits non-zero when it is not empty.
"""
from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from hashlib_core.dry_run.spec import DryRun, spec_of
from hashlib_core.dry_run.steps import STEPS, chapter_steps, launch
from hashlib_core.params import humanize, instantiate_on_meta
from hashlib_core.profiles import Profile
from hashlib_core.results import format_like, parse_printed
from hashlib_core.results.store import ResultsStore, repo_root

__all__ = ["DryRunReport", "dry_run", "model_sizes", "data_samples", "training_check", "DEFAULT_LIMIT"]

#: records each data source yields in the dry run (at most)
DEFAULT_LIMIT = 200


@dataclass
class DryRunReport:
    """The four tables of a dry run and what went wrong (empty: the profile is ready to launch)."""

    chapter: str
    profile: str
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    written_to: Path | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


def model_sizes(spec: DryRun, profile: Profile) -> tuple[pd.DataFrame, list[str]]:
    """One row per model of the profile, built on the meta device: its count, ours rounded as the paper prints
    it, the printed cell and whether they agree (empty where the paper prints no size)."""
    rows, problems = [], []
    built: tuple[Any, Any] = (None, None)
    for size in spec.models(profile):
        if built[0] is not size.build:          # measures of one model share its build: built once
            built = (size.build, instantiate_on_meta(size.build))
        model = built[1]
        n = int(size.counts(model))
        printed = parse_printed(size.paper) if size.paper else None
        ours = format_like(n, printed) if printed is not None else humanize(n)
        agrees = (ours == size.paper) if printed is not None else None
        if agrees is False and not size.explained:
            problems.append(f"{size.name}: {size.measure} parameters {n:,} ({ours}) differ from the paper's "
                            f"{size.paper} ({size.source})")
        rows.append({"model": size.name, "architecture": type(model).__name__, "measure": size.measure,
                     "parameters": n, "ours": ours, "paper": size.paper or "", "source": size.source,
                     "agrees": "" if agrees is None else agrees,
                     "note": size.explained if agrees is False else ""})
    if not rows:
        problems.append("the dry run names no model for this profile")
    return pd.DataFrame(rows), problems


def data_samples(spec: DryRun, profile: Profile, limit: int = DEFAULT_LIMIT) -> tuple[pd.DataFrame, list[str]]:
    """What the chapter's real loaders yielded (at most ``limit`` records per source); a loader's error is a
    problem named with its source, not a crash."""
    if spec.data is None:
        return pd.DataFrame([{"note": "this chapter reads no data"}]), []
    try:
        samples = list(spec.data(profile, limit))
    except Exception as exc:       # a loader that fails: the dry run's finding, reported with its cause
        return pd.DataFrame(), [f"data: {type(exc).__name__}: {exc}"]
    rows = [{"source": s.source, "rows": s.rows, "columns": ",".join(s.columns), "reads": ",".join(s.expected),
             "example": s.example[:100]} for s in samples]
    problems = [] if rows else ["data: the dry run loaded no data source"]
    return pd.DataFrame(rows), problems


def training_check(slug: str, profile: Profile, processes: int = 2, root: str | Path | None = None
                   ) -> tuple[pd.DataFrame, list[str]]:
    """Two steps of the chapter's tiny model on ``processes`` processes (one: in this process), a checkpoint per
    step, and a resume from the first; one row per rank."""
    with tempfile.TemporaryDirectory(prefix="dry-run-steps-", dir=root) as tmp:
        try:
            if processes == 1:
                results = [chapter_steps(slug, profile, root=tmp)]
            else:
                results = launch("hashlib_core.dry_run.steps:chapter_steps", (slug, profile), tmp, processes)
        except Exception as exc:   # a rank's failure: reported with its traceback's last line
            return pd.DataFrame(), [f"training: {type(exc).__name__}: {exc}"]
    table = pd.DataFrame(results)
    problems = []
    for r in results:
        if r["steps"] != STEPS or r["resumed_steps"] != STEPS or r["resumed_from_step"] != 1:
            problems.append(f"training: rank {r['rank']} ran {r['steps']} steps and resumed from step "
                            f"{r['resumed_from_step']} to {r['resumed_steps']}, expected {STEPS} steps from step 1")
        if r["resumed_weights"] != r["weights"]:
            problems.append(f"training: rank {r['rank']}'s resumed weights differ from the uninterrupted run's")
        if r["processes"] != processes:
            problems.append(f"training: rank {r['rank']} saw {r['processes']} processes, expected {processes}")
    if len({r["weights"] for r in results}) > 1:
        problems.append("training: the ranks ended with different weights (gradients were not synchronised)")
    return table, problems


def dry_run(chapter: Any, profile: Profile, *, processes: int = 2, limit: int = DEFAULT_LIMIT,
            out: str | Path | None = None, write: bool = True) -> DryRunReport:
    """The dry run of ``profile`` of ``chapter`` (a :class:`~hashlib_core.chapter.Chapter`); see the module
    docstring. ``out``: the folder the tables go under (default ``checkpoints/dry-run``); ``write=False`` writes
    nothing."""
    spec = spec_of(chapter.slug)
    report = DryRunReport(chapter.slug, profile.name)
    start = time.perf_counter()
    for name, (table, problems) in (
            ("sizes", model_sizes(spec, profile)),
            ("data", data_samples(spec, profile, limit)),
            ("training", training_check(chapter.slug, profile, processes) if spec.trains else
             (pd.DataFrame([{"note": "this chapter trains no model"}]), []))):
        report.tables[name] = table
        report.problems += problems
    report.tables["plan"] = plan_table(spec, profile)
    if write:
        store = ResultsStore(chapter.slug, profile.name, root=Path(out) if out else repo_root() / "checkpoints" /
                             "dry-run")
        wall = time.perf_counter() - start
        for name, table in report.tables.items():
            store.write_table(name, table, seed=profile.seed, device="cpu", wall_time_s=wall,
                              config=profile.to_dict())
        report.written_to = store.dir
    return report


def plan_table(spec: DryRun, profile: Profile) -> pd.DataFrame:
    """The chapter's plan rows (``item``, ``value``), values as text."""
    rows = [{"item": str(r["item"]), "value": str(r["value"])} for r in spec.plan(profile)]
    if spec.trains:
        rows.append({"item": "batch under N processes", "value": "per process: N processes train on N times the "
                                                                 "batch at every step (accelerate's default)"})
    else:
        rows.append({"item": "training", "value": "none: the chapter counts parameters of models it builds"})
    return pd.DataFrame(rows, columns=["item", "value"])


def render(report: DryRunReport) -> str:
    """The report as text: every table, then the verdict."""
    parts = [f"dry run of {report.chapter}, profile {report.profile}"]
    for name, table in report.tables.items():
        short = table.map(lambda v: v if not isinstance(v, str) or len(v) <= 70 else v[:67] + "...")
        parts.append(f"\n== {name}\n{short.to_string(index=False) if len(table) else '(empty)'}")
    if report.written_to is not None:
        parts.append(f"\nwritten to {report.written_to}")
    parts.append("\nready: every check passed" if report.ok else
                 "\nNOT READY:\n" + "\n".join(f"  - {p}" for p in report.problems))
    return "\n".join(parts)

