"""The chapter skeleton: what every paper's chapter is made of, and the plumbing it gets for free.

A chapter declares its profiles and registers its experiments with the results each one writes::

    CHAPTER = Chapter("hashformers", "HashFormers", PROFILES, resources=Resources)

    @CHAPTER.experiment("table2", outputs=("table2",))
    def table2(ctx: RunContext) -> dict[str, pd.DataFrame]:
        return {"table2": hashformers_table2()}

and gets, without writing any of it:

* :meth:`Chapter.run` -- run the profile's experiments (or ``only`` some) and write their results to
  ``results/<slug>/<profile>/`` (one CSV or JSON per output, with device, versions, seed, git commit and wall time),
  from the main process only when launched with ``accelerate launch`` / ``torchrun``;
* :meth:`Chapter.load_or_run` -- what a notebook computing a profile live calls: results of the same configuration
  at the same clean commit are reused, ``paper`` results are shown as they are;
* :meth:`Chapter.show` -- what the book calls: the richest committed results (paper > small > cpu) that are not
  stale, or a live run with a banner saying so;
* :meth:`Chapter.main` -- the command line ``python -m hashlib_core.papers.<slug> --profile P [--device D]
  [--only a,b] [--key=value ...]`` (lists comma-separated);
* a :class:`RunContext` per run: the profile, the device, lazily built shared resources (corpus, tokenizers, ...),
  and checkpoint folders digested from the settings that change trained weights only.

A result is **stale** when the profile configuration it was computed with differs from the chapter's profile of the
same name today: the code would not reproduce it, so the book does not show it (and a test fails).
"""
from __future__ import annotations

import inspect
import time
from dataclasses import dataclass, fields
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import pandas as pd

from hashlib_core.profiles import RUN_SETTINGS, Profile, ProfileSet, seed_everything, select_device
from hashlib_core.results import store as results_store
from hashlib_core.results.banner import results_banner
from hashlib_core.results.shown import Shown
from hashlib_core.results.store import ResultsStore, repo_root, to_jsonable
from hashlib_core.training import config_digest

__all__ = ["Chapter", "Experiment", "RunContext", "Shown", "COMMITTED_ORDER", "is_main_process"]

#: Committed profiles in the order the book prefers them.
COMMITTED_ORDER = ("paper", "small", "cpu")


def is_main_process() -> bool:
    """True in a single process, and on the main process of an ``accelerate launch`` / ``torchrun`` job."""
    from accelerate import PartialState

    return PartialState().is_main_process


@dataclass(frozen=True)
class Experiment:
    """One registered experiment: its name, the results it writes, and the function computing them."""

    name: str
    outputs: tuple[str, ...]
    fn: Callable[["RunContext"], Mapping[str, Any]]
    #: ``when(profile)`` False skips the experiment in that profile (None: always runs)
    when: Callable[[Profile], bool] | None = None
    #: profile settings this experiment's results do not depend on: changing one leaves them current (not stale)
    independent_of: frozenset[str] = frozenset()
    #: results of other experiments this one derives its outputs from (e.g. the claims' verdicts): a run that
    #: rewrites one of them reruns this experiment too, and its outputs are stale once one of them changed
    reads: tuple[str, ...] = ()
    #: profile settings only this experiment reads (e.g. a diagnosis's own sizes): every other experiment's results
    #: are independent of them, and its checkpoint folders are not keyed by them
    owns: frozenset[str] = frozenset()

    @property
    def doc(self) -> str:
        return inspect.getdoc(self.fn) or ""

    def enabled(self, profile: Profile) -> bool:
        return self.when is None or bool(self.when(profile))


class RunContext:
    """What an experiment receives: the profile, the device, shared resources, checkpoint folders."""

    def __init__(self, chapter: "Chapter", profile: Profile, *, progress: bool = False,
                 checkpoint_root: str | Path | None = None, results_root: str | Path | None = None) -> None:
        self.chapter = chapter
        self.profile = profile
        self.progress = progress
        self.checkpoint_root = Path(checkpoint_root) if checkpoint_root else repo_root() / "checkpoints"
        self.results_root = results_root
        #: seconds of compute an experiment reused from finished runs of earlier processes (see :meth:`reuse`)
        self.reused_s = 0.0
        #: the experiment running now (None outside :meth:`Chapter.run`)
        self.experiment: Experiment | None = None

    def reuse(self, seconds: float) -> None:
        """Report that a finished run's outcome was read back instead of computed (a resumed chapter run): its
        recorded wall time is added to the experiment's, so the results say what the experiment cost, not what
        the last process spent (the reused share is kept apart in the metadata as ``reused_compute_s``)."""
        self.reused_s += float(seconds)

    def evidence(self) -> "Shown":
        """The results this run writes, as far as they are written (what a derived experiment such as the claims'
        verdicts reads)."""
        return Shown(self.profile, self.chapter.store(self.profile.name, self.results_root), "run", "",
                     stale=self.chapter.stale(self.profile.name, self.results_root, profile=self.profile))

    @cached_property
    def device(self):
        """The ``torch.device`` of the profile (``auto``: CUDA when present)."""
        return select_device(self.profile.device)

    @cached_property
    def resources(self) -> Any:
        """The chapter's shared resources, built on first use and kept for the whole run."""
        if self.chapter.resources_factory is None:
            raise AttributeError(f"chapter {self.chapter.slug!r} declares no resources")
        return self.chapter.resources_factory(self)

    @property
    def is_main_process(self) -> bool:
        return is_main_process()

    def log(self, message: str) -> None:
        """Print a progress line (main process only, and only when the run shows progress)."""
        if self.progress and self.is_main_process:
            print(f"[{self.chapter.slug}] {message}", flush=True)

    def checkpoint_dir(self, name: str, *parts: Any, settings: Sequence[str] | None = None) -> Path:
        """``checkpoints/<slug>/<profile>/<name>-<digest>``: the digest covers the profile's weight settings
        (:meth:`Profile.weight_settings` less those other experiments own, or only ``settings``) and ``parts`` (e.g. a
        ``TrainConfig``), so a run resumes from, and reuses, exactly the checkpoints written under the same
        weight-affecting settings."""
        weights = self.profile.weight_settings(settings)
        if settings is None:
            foreign = self.chapter.owned_settings() - (self.experiment.owns if self.experiment else frozenset())
            weights = {k: v for k, v in weights.items() if k not in foreign}
        digest = config_digest({"profile": weights,
                                "parts": [to_jsonable(p.__dict__ if hasattr(p, "__dataclass_fields__") else p)
                                          for p in parts]})
        safe = "".join(c if c.isalnum() or c in "+-_" else "_" for c in name)
        return self.checkpoint_root / self.chapter.slug / self.profile.name / f"{safe}-{digest}"


class Chapter:
    """A paper's chapter: its profiles and experiments (see the module docstring)."""

    def __init__(self, slug: str, title: str, profiles: ProfileSet, *,
                 resources: Callable[[RunContext], Any] | None = None) -> None:
        self.slug = slug
        self.title = title
        self.profiles = profiles
        self.resources_factory = resources
        self.experiments: dict[str, Experiment] = {}

    # ------------------------------------------------------------------------------------------------ declaring
    def experiment(self, name: str, outputs: Sequence[str], *, when: Callable[[Profile], bool] | None = None,
                   independent_of: Sequence[str] = (), reads: Sequence[str] = (), owns: Sequence[str] = ()):
        """Decorator registering ``fn(ctx) -> {output name: DataFrame or JSON-able}`` as experiment ``name``.

        ``independent_of``: profile settings the experiment never reads (e.g. another experiment's epochs), so that
        changing one of them does not make this experiment's committed results stale. ``reads``: results of the
        experiments registered before this one that it derives its outputs from (through ``ctx.evidence()``); each
        output records their digests, and is stale once one of them changes. ``owns``: profile settings no other
        experiment reads; the others' results stay current when one changes, and their checkpoints are kept."""
        if name in self.experiments:
            raise ValueError(f"chapter {self.slug!r} already has an experiment {name!r}")
        taken = {o for e in self.experiments.values() for o in e.outputs}
        clash = sorted(taken & set(outputs))
        if clash:
            raise ValueError(f"outputs {clash} are already written by another experiment of {self.slug!r}")
        unknown = sorted(set(reads) - taken)
        if unknown:
            raise ValueError(f"experiment {name!r} of {self.slug!r} reads {unknown}, which no experiment registered "
                             f"before it writes")

        def register(fn: Callable[[RunContext], Mapping[str, Any]]):
            example = self.profiles.smoke          # a section's name stands for its dotted settings
            self.experiments[name] = Experiment(name, tuple(outputs), fn, when, example.expand(independent_of),
                                                tuple(reads), example.expand(owns))
            return fn
        return register

    def owned_settings(self) -> frozenset[str]:
        """The settings some experiment declares its own (``owns``)."""
        return frozenset(k for e in self.experiments.values() for k in e.owns)

    # ------------------------------------------------------------------------------------------------ selecting
    def selected(self, profile: Profile, only: Iterable[str] | None = None) -> list[Experiment]:
        """The experiments a run of ``profile`` performs (all enabled ones, or those named in ``only``)."""
        if isinstance(only, str):
            names = [o.strip() for o in only.split(",") if o.strip()]
            if not names:       # "" or ",": not "everything" (leave only out for that)
                raise ValueError(f"{only!r} names no experiment; name some ({', '.join(self.experiments)}), or "
                                 f"leave it out to run them all")
            only = names
        if only:
            unknown = sorted(set(only) - set(self.experiments))
            if unknown:
                raise ValueError(f"unknown experiment(s) {unknown} of chapter {self.slug!r}; choose from "
                                 f"{', '.join(self.experiments)}")
            return [self.experiments[n] for n in self.experiments if n in set(only)]
        return [e for e in self.experiments.values() if e.enabled(profile)]

    def with_dependents(self, profile: Profile, chosen: Sequence[Experiment]) -> list[Experiment]:
        """``chosen`` and, in registration order, every enabled experiment that reads an output of one chosen
        before it (so that ``--only glue`` also recomputes the verdicts that read ``glue``)."""
        names = {e.name for e in chosen}
        written: set[str] = set()
        out = []
        for exp in self.experiments.values():
            if exp.name in names or (exp.enabled(profile) and set(exp.reads) & written):
                out.append(exp)
                written |= set(exp.outputs)
        return out

    def result_names(self, profile: Profile, only: Iterable[str] | None = None) -> list[str]:
        return [o for e in self.selected(profile, only) for o in e.outputs]

    def profile(self, name: str, **overrides: Any) -> Profile:
        return self.profiles.get(name, **overrides)

    def store(self, profile_name: str, root: str | Path | None = None) -> ResultsStore:
        return ResultsStore(self.slug, profile_name, root=root)

    # ------------------------------------------------------------------------------------------------ running
    def run(self, profile: Profile, only: Iterable[str] | None = None, *, progress: bool = True,
            results_root: str | Path | None = None, checkpoint_root: str | Path | None = None,
            dependents: bool = True) -> ResultsStore:
        """Run the selected experiments of ``profile``; every output is written (main process only) as it is done.
        ``dependents=False``: exactly the experiments of ``only``, not those that read them (a parallel job's share
        of a run, :mod:`hashlib_core.parallel`)."""
        store = self.store(profile.name, results_root)
        ctx = RunContext(self, profile, progress=progress, checkpoint_root=checkpoint_root,
                         results_root=results_root)
        seed_everything(profile.seed)
        chosen = self.selected(profile, only)
        for exp in (self.with_dependents(profile, chosen) if dependents else chosen):
            ctx.log(f"{exp.name}: running")
            ctx.reused_s = 0.0
            ctx.experiment = exp
            start = time.perf_counter()
            produced = dict(exp.fn(ctx))
            if set(produced) != set(exp.outputs):
                raise RuntimeError(f"experiment {exp.name!r} of {self.slug!r} returned {sorted(produced)}, "
                                   f"declared {sorted(exp.outputs)}")
            wall = time.perf_counter() - start + ctx.reused_s
            if not ctx.is_main_process:
                continue
            device = ctx.device if "device" in ctx.__dict__ else "cpu"   # experiments that never asked ran on CPU
            inputs = {name: store.digest(name) for name in exp.reads} if exp.reads else None
            for name in exp.outputs:
                value = produced[name]
                kwargs = dict(seed=profile.seed, device=device, wall_time_s=wall, config=profile.to_dict(),
                              inputs=inputs, reused_compute_s=ctx.reused_s)
                if isinstance(value, pd.DataFrame):
                    store.write_table(name, value, **kwargs)
                else:
                    store.write_json(name, value, **kwargs)
        return store

    def is_current(self, store: ResultsStore, names: Sequence[str], profile: Profile, *,
                   allow_dirty: bool = False) -> bool:
        """Results of ``profile``'s configuration written at this git commit from a clean tree (reusable);
        ``allow_dirty``: also those written from this commit with uncommitted changes (what a page gathering other
        chapters' results in the same build reads, see :func:`hashlib_core.claims.scorecard.gather`)."""
        state = results_store.git_state()
        if state["git_commit"] is None or (state["git_dirty"] is not False and not allow_dirty):
            return False
        config = to_jsonable(profile.to_dict())
        for name in names:
            if not store.exists(name):
                return False
            meta = store.read_meta(name)
            if (meta.get("config") != config or meta.get("git_commit") != state["git_commit"]
                    or (meta.get("git_dirty") is not False and not allow_dirty)):
                return False
        return True

    def load_or_run(self, profile: Profile, only: Iterable[str] | None = None, *, progress: bool = False,
                    results_root: str | Path | None = None, allow_dirty: bool = False) -> ResultsStore:
        """The results of ``profile``, computed now unless they can be reused.

        ``paper``: the results files of a long run (committed, or written by the chapter's command) are shown as
        they are; ``run`` only if one is missing. Other profiles: computed in-process, except that results written by
        the **same configuration at the same git commit from a clean tree** are reused (so that continuous
        integration can execute a notebook twice without training twice); ``allow_dirty`` also reuses those written
        at this commit with uncommitted changes.
        """
        store = self.store(profile.name, results_root)
        names = self.result_names(profile, only)
        if profile.name == "paper":
            ready = all(store.exists(n) for n in names)
        else:
            ready = self.is_current(store, names, profile, allow_dirty=allow_dirty)
        if not ready:
            self.run(profile, only, progress=progress, results_root=results_root)
            missing = [n for n in names if not store.exists(n)]
            if missing:
                raise RuntimeError(f"the run did not write {missing} in {store.dir}")
        return store

    # ------------------------------------------------------------------------------------------------ committed
    def stale(self, profile_name: str, results_root: str | Path | None = None, *,
              profile: Profile | None = None) -> dict[str, list[str]]:
        """``{result name: [settings that differ]}`` for results of ``profile_name`` whose configuration is not the
        chapter's profile of that name today (the code would not reproduce them). Settings of the run only
        (:data:`~hashlib_core.profiles.RUN_SETTINGS`: the device it ran on, its time budget) are not compared; the
        device is recorded in each result's metadata. Nor are the settings its experiment declares itself
        ``independent_of``. A result derived from others (an experiment's ``reads``) is also stale when one of them
        changed or vanished since it was computed: it is listed with ``"evidence: <name>"``. A setting the result's
        config lacks (added later) counts at its default, which must keep the old behaviour. ``profile``: compare
        with this profile (a run's, overrides included) instead of the chapter's of that name."""
        store = self.store(profile_name, results_root)
        whole = profile or self.profiles.get(profile_name)
        current = to_jsonable(whole.to_dict())
        # a job's share: absent from a result written before it existed means the whole run (its default); any value
        # other than the default is a partial result, even under a profile that sets it
        share = {f.name: to_jsonable(f.default) for f in fields(whole) if f.name in whole.SHARE_SETTINGS}
        defaults = to_jsonable(type(whole).default_settings())
        owned = self.owned_settings()
        ignored = {o: e.independent_of | (owned - e.owns) for e in self.experiments.values() for o in e.outputs}
        reads = {o: e.reads for e in self.experiments.values() for o in e.outputs}
        out: dict[str, list[str]] = {}
        for name in store.names():
            meta = store.read_meta(name)
            config = {**defaults, **share, **(meta.get("config") or {})}
            skip = RUN_SETTINGS | ignored.get(name, frozenset())
            differ = sorted(k for k in set(config) | set(current)
                            if k not in skip and config.get(k) != (share[k] if k in share else current.get(k)))
            recorded = meta.get("inputs") or {}
            differ += [f"evidence: {r}" for r in reads.get(name, ())
                       if r not in recorded or recorded[r] != store.digest(r)]
            if differ:
                out[name] = differ
        return out

    def missing(self, profile_name: str, results_root: str | Path | None = None) -> list[str]:
        """The results today's profile ``profile_name`` writes that its results folder lacks."""
        store = self.store(profile_name, results_root)
        return [n for n in self.result_names(self.profiles.get(profile_name)) if not store.exists(n)]

    def committed(self, results_root: str | Path | None = None) -> tuple[Profile | None, list[str]]:
        """The richest committed profile (paper > small > cpu) whose results are complete and not stale, and notes
        on the richer ones that were skipped."""
        notes = []
        for name in COMMITTED_ORDER:
            if not self.store(name, results_root).names():
                continue
            missing = self.missing(name, results_root)
            stale = self.stale(name, results_root)
            if missing:
                notes.append(f"`{name}` results are incomplete (missing {', '.join(missing)}) and are not shown.")
            elif stale:
                keys = sorted({k for v in stale.values() for k in v})
                notes.append(f"`{name}` results are stale (computed with other settings or evidence: "
                             f"{', '.join(keys)}) and are not shown; rerun "
                             f"`python -m hashlib_core.papers.{self.slug} --profile {name}`.")
            else:
                return self.profiles.get(name), notes
        return None, notes

    def show(self, profile: str = "smoke", device: str = "auto", source: str = "live", *,
             results_root: str | Path | None = None) -> Shown:
        """What a chapter page shows. ``source="committed"``: the richest committed results that are not stale
        (:meth:`committed`), else a live run of ``profile``; ``source="live"``: a live run of ``profile``
        (:meth:`load_or_run`)."""
        if source not in ("live", "committed"):
            raise ValueError(f"source must be 'live' or 'committed', got {source!r}")
        notes: list[str] = []
        if source == "committed":
            chosen, notes = self.committed(results_root)
            if chosen is not None:
                store = self.store(chosen.name, results_root)
                return Shown(chosen, store, "committed", self._banner(chosen, store, "committed"), tuple(notes))
        live = self.profiles.get(profile, device=device)
        store = self.load_or_run(live, results_root=results_root)
        return Shown(live, store, "live", self._banner(live, store, "live"), tuple(notes))

    def _banner(self, profile: Profile, store: ResultsStore, source: str) -> str:
        # one metadata file per experiment (its outputs share the experiment's wall time and commit)
        metas = [store.read_meta(o) for e in self.selected(profile)
                 for o in [next((o for o in e.outputs if store.exists(o)), None)] if o is not None]
        return results_banner(self.slug, profile.name, metas, source)

    # ------------------------------------------------------------------------------------------------ command line
    def _only_argument(self, text: str) -> str:
        """``--only``'s value checked as the command line reads it: at least one name, every name known."""
        import argparse

        try:
            self.selected(self.profiles.smoke, text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        return text

    def main(self, argv: Sequence[str] | None = None) -> int:
        """``python -m hashlib_core.papers.<slug> --profile P [--device D] [--only a,b] [--dry-run] [--key=value]``."""
        epilog = "Experiments (--only a,b): " + ", ".join(self.experiments)
        profile, args = self.profiles.parse_cli(
            argv, description=f"{self.title}: run the chapter's experiments. {epilog}",
            add_arguments=lambda p: (
                p.add_argument("--only", default=None, type=self._only_argument,
                               help="comma-separated experiments to run (default: all), and every experiment that "
                                    "reads their results"),
                p.add_argument("--no-dependents", action="store_true",
                               help="with --only: run exactly those experiments, not the ones that read them"),
                p.add_argument("--dry-run", action="store_true", help="check the profile without running it: model "
                               "sizes, data loading, two steps on two processes, the plan (hashlib_core.dry_run)")))
        if args.dry_run:
            from hashlib_core.dry_run.cli import run_cli
            return run_cli(self, profile)
        only = args.only
        store = self.run(profile, only, dependents=not args.no_dependents)
        if is_main_process():
            for name in self.result_names(profile, only):
                if store.path(name, ".csv").exists():
                    table = store.read_table(name)
                    if len(table) <= 40:
                        with pd.option_context("display.width", 200, "display.max_columns", 30):
                            print(f"\n== {name}\n{table.to_string(index=False)}")
            print(f"\nwritten to {store.dir}")
        return 0
