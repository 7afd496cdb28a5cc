"""What a chapter tells the dry run: its models at the profile's sizes, its data sources, a tiny model to train, and
its plan.

Every chapter package has a module ``dry_run`` holding ``DRY_RUN = DryRun(...)``; :func:`spec_of` finds it by that
convention, so the chapter skeleton (:meth:`hashlib_core.chapter.Chapter.main`) needs nothing per chapter.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from torch import nn

from hashlib_core.params import count_parameters
from hashlib_core.profiles import Profile

__all__ = ["ModelSize", "DataSample", "DryRun", "spec_of", "glue_samples"]


@dataclass(frozen=True)
class ModelSize:
    """One model a profile builds, and what the paper prints for its size (when it prints one).

    ``build`` makes the model (the dry run calls it under the ``meta`` device: shapes, no memory); ``paper`` is the
    printed cell as transcribed in ``data/paper_tables/`` (``"86.8M"``) or ``None`` where the paper prints no size
    for it; ``counts`` is what the printed number counts (every parameter by default; a chapter passes its own
    rule, e.g. embedding parameters only); ``source`` names the table and column it comes from."""

    name: str
    build: Callable[[], nn.Module]
    paper: str | None = None
    source: str = ""
    counts: Callable[[nn.Module], int] = count_parameters
    #: what ``counts`` counts, shown beside the number ("total", "embedding", ...)
    measure: str = "total"
    #: where our count and the print differ for a reason the chapter's table code already gives (its note): the
    #: difference is shown with this note and is not a failure of the dry run
    explained: str = ""


@dataclass(frozen=True)
class DataSample:
    """What the real loading code yielded for one data source in the dry run: a few hundred records at most."""

    source: str
    rows: int
    columns: tuple[str, ...]
    #: the column names the chapter's code reads from each record (checked present)
    expected: tuple[str, ...] = ()
    example: str = ""

    def __post_init__(self) -> None:
        missing = sorted(set(self.expected) - set(self.columns))
        if missing:
            raise ValueError(f"data source {self.source!r} yielded records without the columns {missing} the "
                             f"chapter reads (it has {list(self.columns)}): the loader or its fixture changed schema")
        if self.rows < 1:
            raise ValueError(f"data source {self.source!r} yielded no records: check the loader and its split")


@dataclass(frozen=True)
class DryRun:
    """A chapter's dry run (see the module docstring).

    * ``models(profile)``: every model the profile trains, at the profile's sizes (:class:`ModelSize`);
    * ``data(profile, limit)`` (None: the chapter reads no data): runs the chapter's real loaders on at most
      ``limit`` records per source, the hub mocked by a local fixture (:func:`hashlib_core.dry_run.hub.mock_hub`),
      and returns what they yielded;
    * ``tiny(profile)`` (None: the chapter trains nothing): a scaled-down copy of the profile's main model (same
      classes, tiny sizes) and a ``DataLoader`` of batches of its inputs, which the dry run trains for two steps on
      two processes through :func:`hashlib_core.training.train`; it must be deterministic (same weights and batches
      at every call under the same torch seed);
    * ``plan(profile)``: rows ``{"item": ..., "value": ...}`` saying what a run of the profile does (steps, tokens,
      batch, data sources, checkpoint cadence).
    """

    models: Callable[[Profile], Sequence[ModelSize]]
    #: None: the chapter reads no data (a counting chapter)
    data: Callable[[Profile, int], Sequence[DataSample]] | None
    #: None: the chapter trains nothing (a counting chapter); the two-step run is skipped and the plan says so
    tiny: Callable[[Profile], tuple[nn.Module, Any]] | None
    plan: Callable[[Profile], Sequence[dict[str, Any]]]

    @property
    def trains(self) -> bool:
        return self.tiny is not None


def glue_samples(tasks: Sequence[str], limit: int) -> list[DataSample]:
    """One :class:`DataSample` per GLUE task: the first ``limit`` records of its training split, read through the
    data layer's loader (what the GLUE chapters' fine-tuning reads)."""
    from hashlib_core.data import load_glue

    samples = []
    for task in tasks:
        split = load_glue(task)["train"]
        first = split.select(range(min(limit, len(split))))
        samples.append(DataSample(f"GLUE {task} train (data mirror)", len(first), tuple(first.column_names),
                                  ("label",), str(first[0])))
    return samples


def spec_of(slug: str) -> DryRun:
    """The ``DRY_RUN`` of chapter ``slug`` (``hashlib_core.papers.<slug>.dry_run``)."""
    name = f"hashlib_core.papers.{slug}.dry_run"
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name == f"hashlib_core.papers.{slug}":
            raise LookupError(f"there is no chapter {slug!r}: name a package of hashlib_core/papers/") from None
        if exc.name != name:
            raise
        raise LookupError(f"chapter {slug!r} has no dry run: add {name} with DRY_RUN = DryRun(...) "
                          f"(see hashlib_core.dry_run.spec)") from None
    spec = getattr(module, "DRY_RUN", None)
    if not isinstance(spec, DryRun):
        raise LookupError(f"{name} must define DRY_RUN = DryRun(...), got {type(spec).__name__}")
    return spec
