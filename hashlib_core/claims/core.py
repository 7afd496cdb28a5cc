"""Claims and their verdicts: what a paper says, what we measured, and whether the first survives the second.

A :class:`Claim` holds a paper's statement (its source and the sentence quoted, the paper's number where printed),
the **region** of effects that agree with it, and a function that computes our effect with its uncertainty from a
chapter's results. The verdict is computed, never written by hand, from where our interval lies against the region,
in five words that cannot be misread:

=====================  ===================================================================================
verdict                when
=====================  ===================================================================================
``holds``              the whole interval lies in the paper's region (for a tolerance claim: inside the
                       tolerance)
``does not hold``      the whole interval lies outside it
``inconclusive``       the interval reaches both sides, or there is none (one measurement); the side the
                       estimate leans to is given as secondary text (``lean``), never as a verdict, and an
                       interval wider than the paper's effect says *underpowered* and what size would resolve it
``no signal``          tested, but a compared model is at its floor (it learned nothing measurable), so the
                       comparison cannot be read at this scale; the reason names the floor
``not testable here``  the evidence cannot be produced here (data not public, needs a GPU, ...) or is missing;
                       the reason is recorded, the claim is never dropped
=====================  ===================================================================================

An exact effect (a parameter count, a byte size: deterministic) is its own interval. Every verdict also carries its
**power** (the interval's half-width, the smallest effect the test resolves, beside the paper's effect or tolerance:
:attr:`Claim.resolve`) and its **flags** (:data:`FLAGS`: a run stopped at its cap, a model at its floor, a model
trained once, an interval over items only, ...), which the claims tables and the scorecard mark.

The kinds of statement (:data:`KINDS`) and the constructors that set their regions:

* :func:`better` -- A better than B (effect A - B, region above ``margin``); also "A is the best of several"
  (effect A - the best other);
* :func:`within` -- A within a stated tolerance of B (region ``[-tol, tol]``, or ``[-tol, inf)`` one-sided);
* :func:`ordering` -- several models in the paper's order (effect Kendall's tau with the paper's ranking);
* :func:`ratio` -- A a stated number of times B (region an interval of ratios);
* :func:`value` -- a number the paper prints (region: the values that round to it, :func:`printed_region`, or a
  stated range).

The statistic follows the statement's quantifier: a claim about *each* or *every* model reads the worst of them, a
claim *on average* the mean.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence

import pandas as pd

from hashlib_core.claims.statistics import Interval
from hashlib_core.claims.verdicts import EVIDENCE, FLAGS, VERDICTS, lean, power, verdict

__all__ = ["VERDICTS", "KINDS", "FLAGS", "EVIDENCE", "Region", "Effect", "NotTestable", "NoSignal", "Claim", "Evidence",
           "verdict", "lean", "power", "better", "within", "ordering", "ratio", "value", "printed_region",
           "evaluate_claims", "CLAIM_COLUMNS"]

#: Kinds of statement and how the claims table names them.
KINDS = {
    "better": "A better than B",
    "within": "A within a stated tolerance of B",
    "ordering": "an ordering of several models",
    "ratio": "a ratio",
    "value": "a printed value",
}

#: Columns of a chapter's ``claims`` result, in order.
CLAIM_COLUMNS = ("paper", "id", "headline", "statement", "where", "quote", "kind", "evidence", "paper_value", "ours",
                 "estimate", "low", "high", "level", "method", "half_width", "resolve", "power", "region", "verdict",
                 "lean", "flags", "reason", "scale", "brief", "section", "reads")


class Evidence(Protocol):
    """What a claim reads: a chapter's results of one profile (a :class:`hashlib_core.chapter.Shown`)."""

    profile: Any

    def table(self, name: str) -> pd.DataFrame: ...

    def json(self, name: str) -> Any: ...

    def has(self, name: str) -> bool: ...


class NotTestable(Exception):
    """Raised by an effect function when the evidence cannot answer the claim here; the message is the reason a
    reader sees ("CoLA is not fine-tuned in this profile", "needs the paper's 1B model")."""


class NoSignal(Exception):
    """Raised by an effect function when the claim was tested but cannot be read at this scale: a compared model is
    at its floor (it learned nothing measurable). The message names the floor and the measured scores. An effect
    that has numbers worth showing returns an :class:`Effect` with ``no_signal`` set instead."""


@dataclass(frozen=True)
class Region:
    """The effects that agree with the paper: an interval of the real line, each end open or closed."""

    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    high_open: bool = False

    def __post_init__(self) -> None:
        if not self.low <= self.high or math.isnan(self.low) or math.isnan(self.high):
            raise ValueError(f"a region needs low <= high, got [{self.low}, {self.high}]")

    def above_low(self, x: float) -> bool:
        return x > self.low if self.low_open else x >= self.low

    def below_high(self, x: float) -> bool:
        return x < self.high if self.high_open else x <= self.high

    def contains(self, x: float) -> bool:
        return self.above_low(x) and self.below_high(x)

    def covers(self, low: float, high: float) -> bool:
        """Is the whole interval ``[low, high]`` inside the region?"""
        return self.above_low(low) and self.below_high(high)

    def misses(self, low: float, high: float) -> bool:
        """Does the interval ``[low, high]`` lie wholly outside the region?"""
        return not self.above_low(high) or not self.below_high(low)

    def describe(self, unit: str = "") -> str:
        """``"> 0"``, ``"in [-1, 1]"``, ``">= 2"``: the region as the claims table prints it."""
        u = unit if unit.startswith("%") or unit == "x" else (f" {unit}" if unit else "")
        if math.isinf(self.high) and not math.isinf(self.low):
            return f"{'>' if self.low_open else '>='} {_fmt(self.low)}{u}"
        if math.isinf(self.low) and not math.isinf(self.high):
            return f"{'<' if self.high_open else '<='} {_fmt(self.high)}{u}"
        if math.isinf(self.low) and math.isinf(self.high):
            return "any"
        return (f"in {'(' if self.low_open else '['}{_fmt(self.low)}, {_fmt(self.high)}"
                f"{')' if self.high_open else ']'}{u}")


def _fmt(x: float) -> str:
    """``0.5``, ``2``, ``23.35M``: a region end, large ones with the papers' K/M/B suffixes."""
    x = x + 0.0   # -0.0 prints as 0
    for div, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(x) >= div:
            return f"{x / div:.6g}{suffix}"
    return f"{x:g}"


@dataclass(frozen=True)
class Effect:
    """Our measured effect for a claim: an :class:`Interval` (or an exact number), and the text the table shows.

    ``ours`` is the reader's version (``"Proj 70 vs BERT-MLM 72 (-2 points)"``); ``unit`` names the effect's
    unit (``"points"``, ``"x"``); ``scale`` overrides the chapter's scale sentence for this claim (a claim tested on
    another profile's models, say) and ``brief`` its few words; ``note`` is anything a reader must know to read the
    number. ``flags`` are codes of :data:`FLAGS`; ``no_signal`` (a reason) makes the verdict *no signal* while the
    numbers are still shown; ``resolve`` overrides the claim's effect to resolve (a chapter that reads the paper's
    gap at the profile's own tasks, say).
    """

    interval: Interval
    ours: str
    unit: str = ""
    exact: bool = False
    scale: str = ""
    note: str = ""
    flags: tuple[str, ...] = ()
    no_signal: str = ""
    brief: str = ""
    resolve: float | None = None

    def __post_init__(self) -> None:
        unknown = sorted(set(self.flags) - set(FLAGS))
        if unknown:
            raise ValueError(f"unknown flag(s) {unknown}; flags: {sorted(FLAGS)}")

    @classmethod
    def exactly(cls, value: float, ours: str, *, unit: str = "", method: str = "exact (deterministic)",
                note: str = "") -> "Effect":
        """A deterministic effect (counts, sizes): its own interval."""
        v = float(value)
        return cls(Interval(v, v, v, method), ours, unit, True, note=note)


@dataclass(frozen=True)
class Claim:
    """One statement of a paper, testable (``effect`` set) or declared untestable here (``untestable`` set).

    ``reads`` names the results the effect reads; one that is missing makes the claim *not testable here* with a
    reason naming it. ``section`` is the label (a MyST target) of the page section that holds the evidence.
    ``resolve`` is the effect the test must resolve, in the effect's unit (the paper's gap, or the tolerance of a
    :func:`within` claim), named by ``resolve_note``; ``None`` where the paper prints no size. ``evidence``
    (:data:`EVIDENCE`) says whether the claim is an exact count or arithmetic or an empirical measurement; empty: read
    from the effect (exact or not), or, for a claim not testable here, ``"exact"`` for a printed value and
    ``"empirical"`` otherwise.
    """

    id: str
    statement: str
    where: str
    quote: str
    kind: str
    region: Region
    effect: Callable[[Evidence], Effect] | None = None
    reads: tuple[str, ...] = ()
    paper_value: str = ""
    section: str = ""
    untestable: str = ""
    headline: bool = False
    unit: str = ""
    resolve: float | None = None
    resolve_note: str = ""
    evidence: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.id!r}: kind must be one of {sorted(KINDS)}, got {self.kind!r}")
        if not self.quote.strip() or not self.where.strip() or not self.statement.strip():
            raise ValueError(f"claim {self.id!r} needs a statement, where it is from and the sentence quoted")
        if (self.effect is None) == (not self.untestable):
            raise ValueError(f"claim {self.id!r} needs exactly one of an effect function or an 'untestable' reason")
        if self.effect is not None and not self.reads:
            raise ValueError(f"claim {self.id!r} must name the results it reads (reads=...)")
        if self.evidence and self.evidence not in EVIDENCE:
            raise ValueError(f"claim {self.id!r}: evidence must be one of {EVIDENCE}, got {self.evidence!r}")
        if self.resolve is not None and not (math.isfinite(self.resolve) and self.resolve > 0):
            raise ValueError(f"claim {self.id!r}: resolve must be a positive effect size (or None), got "
                             f"{self.resolve!r}")

    def evidence_kind(self, effect: Effect | None) -> str:
        """``"exact"`` or ``"empirical"`` (see :attr:`evidence`)."""
        if self.evidence:
            return self.evidence
        if effect is not None:
            return "exact" if effect.exact else "empirical"
        return "exact" if self.kind == "value" else "empirical"

    def evaluate(self, evidence: Evidence) -> tuple[Effect | None, str]:
        """``(effect, reason)``: the effect, or ``None`` and why the claim is not testable here; an effect that
        raised :class:`NoSignal` comes back as ``(None, "no signal: <reason>")``."""
        if self.untestable:
            return None, self.untestable
        missing = [name for name in self.reads if not evidence.has(name)]
        if missing:
            profile = getattr(getattr(evidence, "profile", None), "name", "?")
            return None, (f"evidence missing: result(s) {', '.join(missing)} not written in the {profile} profile")
        stale = {name: getattr(evidence, "stale", {}).get(name) for name in self.reads}
        stale = {name: differ for name, differ in stale.items() if differ}
        if stale:
            return None, ("evidence stale: " + "; ".join(f"{name} was written under other settings ({', '.join(d)})"
                                                        for name, d in stale.items())
                          + ": re-run the experiment that writes it")
        assert self.effect is not None
        try:
            return self.effect(evidence), ""
        except NotTestable as why:
            return None, str(why)
        except NoSignal as why:
            return None, _NO_SIGNAL + str(why)


_NO_SIGNAL = "no signal: "


def _claim(kind: str, region: Region, id: str, statement: str, *, where: str, quote: str,
           effect: Callable[[Evidence], Effect] | None = None, reads: Sequence[str] = (), paper_value: str = "",
           section: str = "", untestable: str = "", headline: bool = False, unit: str = "",
           resolve: float | None = None, resolve_note: str = "", evidence: str = "") -> Claim:
    return Claim(id, statement, where, quote, kind, region, effect, tuple(reads), paper_value, section, untestable,
                 headline, unit, resolve, resolve_note, evidence)


def better(id: str, statement: str, *, margin: float = 0.0, **kw: Any) -> Claim:
    """A better than B: the effect is A - B (oriented so that positive favours A), the region ``> margin``; pass
    the paper's own gap as ``resolve`` (and ``resolve_note``) where it prints one."""
    return _claim("better", Region(low=margin, low_open=True), id, statement, **kw)


def within(id: str, statement: str, *, tolerance: float, one_sided: bool = False, **kw: Any) -> Claim:
    """A within ``tolerance`` of B: effect A - B in ``[-tolerance, tolerance]`` (``one_sided``: A no worse than
    B by more than ``tolerance``, region ``[-tolerance, inf)``)."""
    if tolerance < 0:
        raise ValueError(f"tolerance must be >= 0, got {tolerance}")
    region = Region(low=-tolerance) if one_sided else Region(low=-tolerance, high=tolerance)
    if tolerance > 0:
        kw.setdefault("resolve", float(tolerance))
        kw.setdefault("resolve_note", "tolerance")
    return _claim("within", region, id, statement, **kw)


def ordering(id: str, statement: str, *, min_tau: float = 0.0, **kw: Any) -> Claim:
    """Several models in the paper's order: effect Kendall's tau between the paper's ranking and ours, region
    ``> min_tau`` (0: more concordant than not)."""
    return _claim("ordering", Region(low=min_tau, high=1.0, low_open=True), id, statement, **kw)


def ratio(id: str, statement: str, *, at_least: float | None = None, above: float | None = None,
          between: tuple[float, float] | None = None, **kw: Any) -> Claim:
    """A ratio A / B: at least ``at_least``, strictly above ``above`` ("faster": above 1), or in ``between``
    (inclusive)."""
    if sum(x is not None for x in (at_least, above, between)) != 1:
        raise ValueError("a ratio claim needs exactly one of at_least, above or between")
    if at_least is not None:
        region = Region(low=at_least)
    elif above is not None:
        region = Region(low=above, low_open=True)
    else:
        region = Region(low=between[0], high=between[1])
    return _claim("ratio", region, id, statement, **kw)


def printed_region(text: str) -> Region:
    """The values a printed figure stands for: within half a unit of its last significant place. An integer's
    trailing zeros are read as not significant ("110M": [105M, 115M); "200K": [150K, 250K); "30%": [25%, 35%)),
    digits after a decimal point as significant ("2.0M": [1.95M, 2.05M); "23.4M": [23.35M, 23.45M))."""
    from hashlib_core.results.paper import parse_printed

    number = parse_printed(text)
    if number is None:
        raise ValueError(f"{text!r} is not a printed number")
    digits = re.sub(r"[^0-9.]", "", str(text))
    zeros = 0 if "." in digits or number.value == 0 else len(digits) - len(digits.rstrip("0"))
    half = number.resolution * 10 ** zeros
    return Region(low=number.value - half, high=number.value + half, high_open=True)


def value(id: str, statement: str, *, printed: str | None = None, between: tuple[float, float] | None = None,
          **kw: Any) -> Claim:
    """A printed value: our number rounds to ``printed`` (``"23.4M"``, ``"30%"``; the region is
    :func:`printed_region`'s), or lies in ``between``."""
    if (printed is None) == (between is None):
        raise ValueError("a value claim needs exactly one of printed or between")
    if printed is not None:
        try:
            region = printed_region(printed)
        except ValueError as why:
            raise ValueError(f"claim {id!r}: {why}") from None
        kw.setdefault("paper_value", printed)
    else:
        region = Region(low=between[0], high=between[1])
    return _claim("value", region, id, statement, **kw)


def uncommitted(evidence: Any, names: Sequence[str]) -> bool:
    """Whether any of the results ``names`` that ``evidence`` holds, or any result they were derived from (their
    metadata's ``inputs``, followed to the end), was computed from a tree with uncommitted changes (``git_dirty``).
    Evidence without metadata (a test's fixed tables) has none."""
    meta = getattr(evidence, "meta", None)
    has = getattr(evidence, "has", None)
    if meta is None or has is None:
        return False
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen or not has(name):
            continue
        seen.add(name)
        record = meta(name)
        if record.get("git_dirty"):
            return True
        todo.extend(record.get("inputs") or {})
    return False


def evaluate_claims(paper: str, claims: Sequence[Claim], evidence: Evidence, scale: str,
                    brief: str = "") -> pd.DataFrame:
    """One row per claim (never fewer: an untestable claim gets its reason), columns :data:`CLAIM_COLUMNS`.
    ``scale`` is the sentence saying what the verdicts were tested at, ``brief`` the same in a few words."""
    ids = [c.id for c in claims]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise ValueError(f"{paper}: claim ids must be unique, repeated: {dupes}")
    rows = []
    for claim in claims:
        effect, reason = claim.evaluate(evidence)
        iv = effect.interval if effect is not None else None
        said = verdict(claim.region, effect)
        if effect is None and reason.startswith(_NO_SIGNAL):
            said, reason = "no signal", reason[len(_NO_SIGNAL):]
        elif effect is not None and effect.no_signal:
            reason = effect.no_signal
        sentence, weak = power(effect, claim.resolve, claim.resolve_note,
                               decided=said != "inconclusive")
        flags = list(effect.flags) if effect is not None and not effect.exact else []
        if iv is not None and not effect.exact and not iv.has_interval:
            flags.append("no-interval")
        if weak:
            flags.append("underpowered")
        if uncommitted(evidence, claim.reads):
            flags.append("uncommitted")
        leaning = lean(claim.region, effect) if said == "inconclusive" else ""
        if said == "inconclusive" and weak:
            leaning = "underpowered; " + leaning
        rows.append({
            "paper": paper, "id": claim.id, "headline": claim.headline, "statement": claim.statement,
            "where": claim.where, "quote": claim.quote, "kind": claim.kind,
            "evidence": claim.evidence_kind(effect), "paper_value": claim.paper_value,
            "ours": effect.ours if effect is not None else "",
            "estimate": iv.estimate if iv is not None else None,
            "low": iv.low if iv is not None else None, "high": iv.high if iv is not None else None,
            "level": iv.level if iv is not None and iv.has_interval else None,
            "method": (iv.method + (f"; {effect.note}" if effect.note else "")) if iv is not None else "",
            "half_width": iv.half_width if iv is not None and not effect.exact else None,
            "resolve": (effect.resolve if effect is not None and effect.resolve is not None else claim.resolve),
            "power": sentence,
            "region": claim.region.describe(effect.unit if effect is not None else claim.unit),
            "verdict": said, "lean": leaning, "flags": ",".join(dict.fromkeys(flags)), "reason": reason,
            "scale": (effect.scale if effect is not None and effect.scale else scale),
            "brief": (effect.brief if effect is not None and effect.brief else brief),
            "section": claim.section, "reads": ",".join(claim.reads),
        })
    return pd.DataFrame(rows, columns=list(CLAIM_COLUMNS))
