"""Reading an effect against the paper: the five verdict words, the side an inconclusive one leans to, the test's
power beside the paper's effect, and the flags that qualify a verdict (see :mod:`hashlib_core.claims.core`)."""
from __future__ import annotations

import math
from typing import Any

__all__ = ["VERDICTS", "EVIDENCE", "FLAGS", "verdict", "lean", "power"]

#: The verdicts: the three an interval gives, then the two that say why there is no reading.
VERDICTS = ("holds", "does not hold", "inconclusive", "no signal", "not testable here")

#: What a verdict rests on: an exact count or arithmetic (its own interval), or a measurement with chance in it.
EVIDENCE = ("exact", "empirical")

#: The flags a verdict can carry: code -> (the mark the tables show, the legend's sentence).
FLAGS = {
    "cap": ("cap", "a compared run was best at its step or epoch cap: it may still have been improving"),
    "rate-edge": ("rate at edge", "a compared model's learning rate was chosen at an end of its sweep: a rate beyond "
                                  "it was not tried"),
    "floor": ("floor", "a compared model is at its floor (learned nothing measurable) on part of what the claim reads"),
    "one-run": ("1 run", "a compared model was trained once: retraining it could move the effect, and the interval "
                         "does not say by how much"),
    "items-only": ("items only", "the interval resamples the test items only, not the training runs"),
    "pt-once": ("PT once", "each model was pre-trained once: the interval covers fine-tuning runs and test items, not "
                           "pre-training"),
    "no-interval": ("no interval", "one measurement, or a statistic without an interval: it cannot settle the claim"),
    "not-recomputable": ("not recomputable", "the per-item scores are not committed: the interval cannot be "
                                             "recomputed from the results alone"),
    "underpowered": ("underpowered", "the interval's half-width exceeds the paper's effect: the test cannot resolve "
                                     "it"),
    "uncommitted": ("uncommitted code", "a result the verdict reads was computed from a tree with uncommitted changes: "
                                        "its code is not a commit (its metadata names the changed files)"),
}


def verdict(region: Any, effect: Any) -> str:
    """The verdict of ``effect`` against ``region`` (see the module docstring); ``None`` is not testable."""
    if effect is None:
        return "not testable here"
    if effect.no_signal:
        return "no signal"
    iv = effect.interval
    if iv.has_interval:
        if region.covers(iv.low, iv.high):
            return "holds"
        if region.misses(iv.low, iv.high):
            return "does not hold"
    return "inconclusive"


def lean(region: Any, effect: Any) -> str:
    """For an inconclusive verdict, the side the estimate leans to (``"leans to the paper"``, ``"leans against the
    paper"``): secondary text, never a verdict. Empty for every other verdict."""
    if verdict(region, effect) != "inconclusive":
        return ""
    return "leans to the paper" if region.contains(effect.interval.estimate) else "leans against the paper"


def _count(x: float) -> str:
    return f"{math.ceil(x):,}"


def power(effect: Any, resolve: float | None, resolve_note: str = "", decided: bool = False
          ) -> tuple[str, bool]:
    """``(sentence, underpowered)``: the interval's half-width (the smallest effect this test resolves) beside the
    paper's effect or tolerance ``resolve``, and, where the half-width is larger, how many test items (and training
    runs) would resolve it at the variance the interval shows
    (:func:`~hashlib_core.claims.statistics.resolving_factor`). ``decided``: the interval lies wholly on one side of
    the paper's region, which settles the claim however wide it is; such a test is not called underpowered."""
    from hashlib_core.claims.statistics import resolving_factor

    if effect is None or effect.exact:
        return "", False
    iv = effect.interval
    unit = effect.unit if effect.unit.startswith("%") or effect.unit == "x" else (f" {effect.unit}" if effect.unit
                                                                                   else "")
    if not iv.has_interval:
        return "no interval: the power of a single measurement is unknown", False
    hw = iv.half_width
    half = f"half-width {_number(hw)}{unit}"
    target = effect.resolve if effect.resolve is not None else resolve
    if target is None or not target > 0:
        return f"{half}; the paper prints no effect size to resolve", False
    what = f"the paper's {resolve_note or 'effect'} {_number(target)}{unit}"
    if hw <= target:
        return f"{half}, below {what}: the test would resolve an effect of the paper's size", False
    if decided:
        return (f"{half}, above {what}, yet the interval lies wholly on one side of the paper's region: the claim is "
                "settled"), False
    factor = resolving_factor(iv, target)
    more = "test items" + (" and training runs" if "seeds" in iv.covers else "")
    count = f" ({_count(factor * iv.n)} items)" if iv.n else ""
    return (f"underpowered: {half}, above {what}; at this variance about {factor:,.1f}x as many {more}{count} would "
            f"resolve it"), True


def _number(x: float) -> str:
    """A half-width or an effect, to about three significant digits."""
    x = float(x)
    for limit, decimals in ((100, 0), (10, 1), (1, 2)):
        if abs(x) >= limit:
            return f"{x:,.{decimals}f}"
    return "0" if x == 0 else f"{x:.3g}"
