"""One experimental protocol for every chapter: sweep on the selection split, seeds at the chosen rate, report on
splits that chose nothing.

A :class:`Protocol` is the part of a profile that says how a model is tuned and stopped: the learning rates swept,
the seeds, the patience of early stopping and the step cap, how often the selection split is scored, which split
selects (the learning rate, the stopping step) and which splits are reported, the learning-rate schedule, and the
tie rule between rates that score alike. :func:`run_protocol` applies it to any chapter's
``train_one(learning_rate, seed) -> Trained``:

1. **sweep**: every rate with the first seed, each run trained to convergence on the selection split
   (:func:`converge`: early stopping, the best weights kept); where the best rate is the grid's smallest or largest,
   up to :attr:`Protocol.extend_edges` rates beyond it (:func:`next_rate`), so that the rate chosen lies inside
   the rates tried, or is flagged (:meth:`ProtocolOutcome.at_edge`) where it still does not;
2. **choose**: the rate with the best selection score (:func:`choose_rate`; a run that never scored a finite number
   is never chosen over one that did; ties by :attr:`Protocol.tie`);
3. **seeds**: every other seed at the chosen rate;
4. **report**: each run's per-item scores on every report split, which nothing was chosen on; the claims layer
   resamples them (seeds and items together).

Every run is recorded (:class:`ProtocolRun`): its rate and seed, whether it is a chosen one, its selection score,
its best and last step, and whether it **stopped at its cap while still improving** (``at_cap``): a headline run
that does is flagged, never silently read as converged. The report split can never be the selection split: a
protocol that says so, or a run that returns scores on the selection split as a report, is refused.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

__all__ = ["Protocol", "Trained", "ProtocolRun", "ProtocolOutcome", "choose_rate", "rate_at_edge", "next_rate",
           "run_protocol", "run_sweep", "run_seeds", "converge", "converge_checkpointed", "trained", "TIES",
           "SCHEDULES"]

#: tie rules between learning rates whose selection scores are equal: the smaller rate (the encoder chapters'
#: rule) or the larger one
TIES = ("smaller", "larger")
#: the schedules a protocol may use (those of :class:`~hashlib_core.training.TrainConfig` with one cycle)
SCHEDULES = ("linear", "cosine", "constant", "constant_with_warmup")


@dataclass(frozen=True)
class Protocol:
    """How a model is tuned, stopped, selected and reported (see the module docstring)."""

    #: the learning rates swept with the first seed (distinct, > 0)
    learning_rates: tuple[float, ...]
    #: the seeds: the first sweeps, all of them run at the chosen rate (distinct, >= 0)
    seeds: tuple[int, ...] = (0,)
    #: evaluations without improvement before a run stops (0: never stop early, train to the cap)
    patience: int = 3
    #: the cap on optimiser steps (the schedule spans it)
    max_steps: int = 1000
    #: optimiser steps between two scorings of the selection split
    eval_every: int = 100
    #: the split that chooses the rate and the stopping step
    select_on: str = "heldout"
    #: the splits reported, none of which chooses anything
    report_on: tuple[str, ...] = ("test",)
    #: which rate wins a tie of selection scores (:data:`TIES`)
    tie: str = "smaller"
    #: the learning-rate schedule (:class:`~hashlib_core.training.TrainConfig`'s): ``"linear"`` decays to zero at
    #: the cap, so the cap shapes every run; ``"constant_with_warmup"`` holds the rate after the warm-up, so a run
    #: stops on its own plateau and a higher cap changes only the runs that reach it
    schedule: str = "linear"
    #: rates the sweep may add beyond its grid (0: none): while the best rate is the smallest or the largest tried,
    #: the next one beyond it (:func:`next_rate`) is trained, at most this many in all
    extend_edges: int = 0

    def __post_init__(self) -> None:
        rates = tuple(self.learning_rates)
        if not rates or any(isinstance(r, bool) or not isinstance(r, (int, float)) or not math.isfinite(r) or r <= 0
                            for r in rates) or len(set(rates)) != len(rates):
            raise ValueError(f"protocol.learning_rates must list distinct finite rates > 0, got {list(rates)}")
        seeds = tuple(self.seeds)
        if not seeds or any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in seeds) \
                or len(set(seeds)) != len(seeds):
            raise ValueError(f"protocol.seeds must list distinct ints >= 0, got {list(seeds)}")
        for name, low in (("patience", 0), ("max_steps", 1), ("eval_every", 1), ("extend_edges", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"protocol.{name} must be an int >= {low}"
                                 f"{' (0: never stop early)' if name == 'patience' else ''}, got {value!r}")
        if not isinstance(self.select_on, str) or not self.select_on:
            raise ValueError(f"protocol.select_on must name a split, got {self.select_on!r}")
        report = tuple(self.report_on)
        if not report or any(not isinstance(r, str) or not r for r in report) or len(set(report)) != len(report):
            raise ValueError(f"protocol.report_on must name one or more distinct splits, got {list(report)}")
        if self.select_on in report:
            raise ValueError(f"protocol: the report split {self.select_on!r} is also the selection split; a split "
                             f"that chose the rate or the stopping step cannot report it. Hold out another split")
        if self.tie not in TIES:
            raise ValueError(f"protocol.tie must be one of {TIES}, got {self.tie!r}")
        if self.schedule not in SCHEDULES:
            raise ValueError(f"protocol.schedule must be one of {SCHEDULES}, got {self.schedule!r}")
        object.__setattr__(self, "learning_rates", tuple(float(r) for r in rates))
        object.__setattr__(self, "seeds", seeds)
        object.__setattr__(self, "report_on", report)

    def override(self, **changes: Any) -> "Protocol":
        """A copy with ``changes`` (checked like the original)."""
        unknown = sorted(set(changes) - {f.name for f in fields(self)})
        if unknown:
            raise ValueError(f"unknown protocol setting(s) {unknown}; the settings are "
                             f"{[f.name for f in fields(self)]}")
        return Protocol(**{**asdict(self), **changes})

    def settings(self) -> dict[str, Any]:
        """Every setting as plain JSON values (what a result's digest records)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    def train_config(self, learning_rate: float, seed: int, *, warmup_steps: int | None = None,
                     scheduler: str | None = None, weight_decay: float = 0.01) -> Any:
        """The :class:`~hashlib_core.training.TrainConfig` of one run: the protocol's schedule (or ``scheduler``)
        over the cap, warm-up ``min(100, cap // 10)`` steps unless given, a training-loss log five times per
        scoring interval."""
        from hashlib_core.training import TrainConfig

        warmup = min(100, self.max_steps // 10) if warmup_steps is None else warmup_steps
        return TrainConfig(max_steps=self.max_steps, learning_rate=learning_rate, warmup_steps=warmup,
                           scheduler=scheduler or self.schedule, weight_decay=weight_decay,
                           log_every=max(1, self.eval_every // 5), seed=seed)

    def touches(self, other: "Protocol") -> list[str]:
        """The settings in which ``other`` differs from this protocol (what makes a result stale)."""
        mine, theirs = self.settings(), other.settings()
        return sorted(k for k in mine if mine[k] != theirs[k])


@dataclass
class Trained:
    """What a chapter's ``train_one(learning_rate, seed)`` returns for one run."""

    #: the best score on the selection split (higher is better; NaN: none was finite)
    selection_score: float
    #: the step of the best selection score, and the steps run
    best_step: int
    steps: int
    #: the run was still improving when the cap stopped it (its best score was its last evaluation, at the cap)
    at_cap: bool
    #: per-item scores on every report split: ``{split: (items,)}`` (a 0/1 correctness, a per-item loss)
    items: Mapping[str, np.ndarray]
    #: anything else the chapter keeps with the run (sizes, wall time, curves)
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: each report split's score where it is not the mean of ``items`` (a Matthews correlation or a Spearman
    #: correlation, whose ``items`` are the per-item predictions the claims layer resamples and rescores)
    scores: Mapping[str, float] | None = None

    def score(self, split: str) -> float:
        """Report split ``split``'s score: ``scores[split]`` where given, else the mean of its items."""
        if self.scores is not None and split in self.scores:
            return float(self.scores[split])
        return float(np.mean(self.items[split]))


@dataclass
class ProtocolRun:
    """One run of the protocol, as recorded."""

    learning_rate: float
    seed: int
    #: swept (the first seed at every rate) and/or chosen (at the chosen rate)
    swept: bool
    chosen: bool
    trained: Trained
    #: a rate the sweep added beyond its grid (:attr:`Protocol.extend_edges`)
    extended: bool = False

    def row(self) -> dict[str, Any]:
        """The run as a table row: its settings, selection score, steps, cap flag, mean score per report split."""
        t = self.trained
        return {"learning_rate": self.learning_rate, "seed": self.seed, "swept": self.swept, "chosen": self.chosen,
                "extended": self.extended,
                "selection_score": t.selection_score, "best_step": t.best_step, "steps": t.steps,
                "at_cap": t.at_cap, **{f"{split}_score": t.score(split) for split in t.items},
                **dict(t.extra)}


@dataclass
class ProtocolOutcome:
    """Every run of one model under a protocol, and the rate chosen."""

    protocol: Protocol
    chosen_rate: float
    runs: list[ProtocolRun]

    def chosen(self) -> list[ProtocolRun]:
        """The runs at the chosen rate, one per seed, in the protocol's seed order."""
        return [r for r in self.runs if r.chosen]

    def items(self, split: str) -> np.ndarray:
        """``(seeds, items)``: the chosen runs' per-item scores on report split ``split``, what a two-level
        bootstrap resamples (seeds and items together)."""
        if split not in self.protocol.report_on:
            raise ValueError(f"{split!r} is not a report split of this protocol ({list(self.protocol.report_on)})"
                             + ("; it is the selection split, which reports nothing" if split ==
                                self.protocol.select_on else ""))
        return np.stack([np.asarray(r.trained.items[split], dtype=float) for r in self.chosen()])

    def rates(self) -> list[float]:
        """The rates swept (the grid and any added beyond it), smallest first."""
        return sorted({r.learning_rate for r in self.runs if r.swept})

    def at_edge(self) -> bool:
        """Whether the chosen rate is still the smallest or the largest of the rates swept: a rate beyond it was
        not tried, so the sweep cannot say it is the best."""
        return rate_at_edge(self.chosen_rate, self.rates())

    def at_cap(self) -> list[ProtocolRun]:
        """The chosen runs that stopped at their cap while improving (a headline run must have none)."""
        return [r for r in self.chosen() if r.trained.at_cap]

    def rows(self) -> list[dict[str, Any]]:
        return [r.row() for r in self.runs]


def choose_rate(scores: Mapping[float, float], tie: str = "smaller") -> float:
    """The rate with the best selection score; a NaN (or infinite) score never wins over a finite one; equal scores
    go to the smaller rate (``tie="smaller"``) or the larger one. ``ValueError`` when no rate scored a finite
    number: nothing can be chosen."""
    if tie not in TIES:
        raise ValueError(f"tie must be one of {TIES}, got {tie!r}")
    finite = {float(r): float(s) for r, s in scores.items() if s is not None and math.isfinite(float(s))}
    if not finite:
        raise ValueError(f"no learning rate scored a finite selection score ({dict(scores)}): nothing to choose; "
                         f"lower the rates or check the selection split")
    sign = -1.0 if tie == "smaller" else 1.0
    return max(finite, key=lambda r: (finite[r], sign * r))


def rate_at_edge(rate: float, rates: Sequence[float]) -> bool:
    """Whether ``rate`` is the smallest or the largest of a sweep over ``rates`` (more than one): a rate beyond it
    was not tried, so the sweep cannot say the chosen one is best."""
    rates = [float(r) for r in rates]
    return len(set(rates)) > 1 and float(rate) in (min(rates), max(rates))


def next_rate(rates: Sequence[float], rate: float) -> float | None:
    """The rate beyond ``rate``, an edge of ``rates`` (two or more): the edge times its ratio to its neighbour (a
    sweep of 3e-4, 1e-3, 3e-3 goes on to 9e-3 above and 9e-5 below), to 12 significant digits. ``None`` when
    ``rate`` is not at an edge or there is no neighbour (a single rate is no sweep to extend)."""
    grid = sorted({float(r) for r in rates})
    if not rate_at_edge(rate, grid):
        return None
    edge, neighbour = (grid[0], grid[1]) if float(rate) == grid[0] else (grid[-1], grid[-2])
    return float(f"{edge * edge / neighbour:.12g}")


def _checked(protocol: Protocol, train_one: Callable[[float, int], Trained],
             log: Callable[[str], None] | None) -> Callable[[float, int], Trained]:
    """``train_one`` whose result is checked: a :class:`Trained` scoring exactly the report splits, each on at least
    one item, and never the selection split."""
    def one(rate: float, seed: int) -> Trained:
        if log is not None:
            log(f"lr {rate:g}, seed {seed}")
        trained = train_one(rate, seed)
        if not isinstance(trained, Trained):
            raise TypeError(f"train_one must return a Trained, got {type(trained).__name__}")
        splits = set(trained.items)
        if protocol.select_on in splits:
            raise ValueError(f"train_one returned report scores on the selection split {protocol.select_on!r}; "
                             f"a split that chose the rate or the stopping step cannot report it")
        if splits != set(protocol.report_on):
            raise ValueError(f"train_one must score every report split {sorted(protocol.report_on)} and no other, "
                             f"got {sorted(splits)}")
        lengths = {s: len(np.asarray(v)) for s, v in trained.items.items()}
        if any(n == 0 for n in lengths.values()):
            raise ValueError(f"a report split scored no items: {lengths}")
        if trained.scores is not None and not set(trained.scores) <= splits:
            raise ValueError(f"train_one returned scores for {sorted(set(trained.scores) - splits)}, which are not "
                             f"its report splits {sorted(protocol.report_on)}")
        return trained
    return one


def run_sweep(protocol: Protocol, train_one: Callable[[float, int], Trained],
              log: Callable[[str], None] | None = None) -> ProtocolOutcome:
    """The protocol's first stage: every rate with the first seed, and the rate chosen on the selection split (the
    run at it is marked chosen). While the chosen rate is the smallest or largest tried, up to
    :attr:`Protocol.extend_edges` rates beyond it are added (:func:`next_rate`; their runs marked ``extended``) and
    the choice made again over all of them. :func:`run_seeds` adds the other seeds; :func:`run_protocol` does
    both."""
    one = _checked(protocol, train_one, log)
    first = protocol.seeds[0]
    sweep = {rate: one(rate, first) for rate in protocol.learning_rates}
    rate = choose_rate({r: t.selection_score for r, t in sweep.items()}, protocol.tie)
    added: list[float] = []
    while len(added) < protocol.extend_edges and (beyond := next_rate(list(sweep), rate)) is not None:
        if log is not None:
            log(f"best rate {rate:g} is at the sweep's edge: trying {beyond:g}")
        sweep[beyond] = one(beyond, first)
        added.append(beyond)
        rate = choose_rate({r: t.selection_score for r, t in sweep.items()}, protocol.tie)
    return ProtocolOutcome(protocol, rate, [ProtocolRun(r, first, swept=True, chosen=r == rate, trained=t,
                                                        extended=r in added) for r, t in sweep.items()])


def run_seeds(protocol: Protocol, rate: float, train_one: Callable[[float, int], Trained],
              seeds: Sequence[int] | None = None, log: Callable[[str], None] | None = None) -> list[ProtocolRun]:
    """The second stage: ``seeds`` (default: every seed of the protocol but the first, which the sweep ran) at the
    chosen ``rate``, one chosen run each. A model that is not swept itself (a smaller budget of a swept family)
    takes its family's rate and every seed it runs here."""
    one = _checked(protocol, train_one, log)
    todo = list(protocol.seeds[1:] if seeds is None else seeds)
    return [ProtocolRun(float(rate), seed, swept=False, chosen=True, trained=one(float(rate), seed)) for seed in todo]


def run_protocol(protocol: Protocol, train_one: Callable[[float, int], Trained],
                 log: Callable[[str], None] | None = None) -> ProtocolOutcome:
    """Apply ``protocol`` to ``train_one(learning_rate, seed)``: the sweep with the first seed, the choice on the
    selection split, the other seeds at the chosen rate; every run's report items checked to cover exactly the
    report splits (never the selection split)."""
    outcome = run_sweep(protocol, train_one, log)
    outcome.runs += run_seeds(protocol, outcome.chosen_rate, train_one, log=log)
    return outcome


def converge(model: Any, loader: Any, score: Callable[[Any], float], protocol: Protocol, *, learning_rate: float,
             seed: int, output_dir: str | Path | None = None, config: Any = None, device: Any = None,
             progress: bool = False) -> Any:
    """Train ``model`` to convergence under ``protocol``: ``score`` (the selection split, higher is better) every
    ``eval_every`` steps, stopping after ``patience`` evaluations without improvement or at ``max_steps``, the best
    weights loaded (:func:`hashlib_core.early_stopping.train_until_converged`, with its restore from
    ``output_dir``). ``config``: the run's :class:`~hashlib_core.training.TrainConfig` when the caller built it
    (:meth:`Protocol.train_config`; its cap must be the protocol's), else the protocol's default for the rate and
    seed. Returns its :class:`~hashlib_core.early_stopping.ConvergedRun`; :func:`trained` turns it and the report
    items into a :class:`Trained`."""
    from hashlib_core.early_stopping import train_until_converged

    config = protocol.train_config(learning_rate, seed) if config is None else config
    if config.max_steps != protocol.max_steps or config.learning_rate != learning_rate or config.seed != seed:
        raise ValueError(f"converge: the config (cap {config.max_steps}, rate {config.learning_rate:g}, seed "
                         f"{config.seed}) is not this run's (cap {protocol.max_steps}, rate {learning_rate:g}, seed "
                         f"{seed}); build it with protocol.train_config")
    return train_until_converged(model, loader, config, score, every=protocol.eval_every,
                                 patience=protocol.patience, output_dir=output_dir, device=device, progress=progress)


def converge_checkpointed(ctx: Any, model: Any, loader: Any, score: Callable[[Any], float], protocol: Protocol,
                          learning_rate: float, seed: int, name: str, parts: Sequence[Any],
                          settings: Sequence[str] | None = None) -> Any:
    """:func:`converge` inside a chapter run (a :class:`~hashlib_core.chapter.RunContext`): the outcome kept in
    the checkpoint folder ``name`` whose digest covers ``parts`` (what the run trains: a task, a model, a code
    version), the run's :meth:`Protocol.train_config` and the profile's ``settings`` (all weight settings when
    ``None``); a restored run's wall time counted as reused; the model comes back on the CPU."""
    config = protocol.train_config(learning_rate, seed)
    out = ctx.checkpoint_dir(name, *parts, config, settings=settings)
    run = converge(model, loader, score, protocol, learning_rate=learning_rate, seed=seed, output_dir=out,
                   config=config, device=ctx.device)
    if run.restored:
        ctx.reuse(run.wall_time_s)
    model.cpu()
    return run


def trained(run: Any, items: Mapping[str, Sequence[float] | np.ndarray], *,
            scores: Mapping[str, float] | None = None, **extra: Any) -> Trained:
    """A :class:`Trained` from a :class:`~hashlib_core.early_stopping.ConvergedRun` and the report splits' per-item
    scores (or predictions, with ``scores`` the splits' metrics): ``at_cap`` is a run that was still improving when
    its cap stopped it."""
    return Trained(selection_score=float(run.best_score), best_step=int(run.best_step), steps=int(run.steps),
                   at_cap=not run.converged and run.steps >= run.max_steps,
                   items={k: np.asarray(v, dtype=float) for k, v in items.items()},
                   extra={**run.summary(), **extra}, scores=None if scores is None else dict(scores))

