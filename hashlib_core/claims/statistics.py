"""Uncertainty for claims: the :class:`Interval` every claim's effect carries, and the closed-form intervals.

Every function returns an :class:`Interval`: the point estimate, a two-sided interval at ``level`` (95% unless
asked otherwise) or none, a sentence saying how it was obtained, which the claims table prints, and the sources of
chance it covers (:attr:`Interval.covers`: test items, training seeds, timing repeats). The resampling intervals
(the two-level paired bootstrap over test items and training runs) are in :mod:`hashlib_core.claims.bootstrap`.

* :func:`seed_interval` -- the mean of one model's scores over seeds, with Student's t interval;
* :func:`seed_difference` -- the difference of two models' means over seeds (Welch's t interval), when the two are
  not scored on shared items (or only their per-seed scores were kept); :func:`seed_contrast` -- any signed sum of
  several models' means (a difference of differences), Welch-Satterthwaite;
* :func:`combined` -- an interval over the test items and one over the seeds, measured apart, added in quadrature
  (for results that kept per-seed scores but no per-item scores per seed);
* :func:`kendall_tau` -- how far one ranking of models agrees with another;
* :func:`correlation_interval` -- a Pearson or Spearman correlation over n pairs with its Fisher z interval
  (Bonett & Wright's standard error for Spearman), and :func:`correlation_difference`, two independent correlations'
  difference with Zou's (2007) interval;
* :func:`auc_interval` -- an AUC with Hanley & McNeil's (1982) normal interval;
* :func:`proportion_interval` -- an accuracy over n test items with Wilson's interval (test sampling only);
* :func:`ratio_of_means` -- ``mean(a) / mean(b)`` over seeds (a retention, a relative gap) with a delta-method
  interval that carries both models' seed variation;
* :func:`resolving_factor` -- how many times more items (and seeds) an interval needs to resolve an effect.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

__all__ = ["Interval", "seed_interval", "seed_difference", "seed_contrast", "combined", "kendall_tau",
           "correlation_interval", "correlation_difference", "auc_interval", "proportion_interval", "ratio_of_means",
           "resolving_factor"]

@dataclass(frozen=True)
class Interval:
    """A point estimate and, when the evidence allows one, its two-sided interval at ``level``.

    ``covers`` names the sources of chance the interval resamples or models (``"items"``, ``"seeds"``,
    ``"repeats"``); empty for an exact number or a single measurement."""

    estimate: float
    low: float | None = None
    high: float | None = None
    method: str = ""
    n: int | None = None          # items (bootstrap) or seeds (t interval) the interval rests on
    level: float = 0.95
    covers: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if (self.low is None) != (self.high is None):
            raise ValueError("an interval needs both ends or neither")
        if not math.isfinite(self.estimate):
            raise ValueError(f"the estimate must be a finite number, got {self.estimate!r}")
        if self.low is not None:
            slack = 1e-9 * max(1.0, abs(self.estimate))
            if not self.low - slack <= self.estimate <= self.high + slack:
                raise ValueError(f"interval [{self.low}, {self.high}] does not contain its estimate {self.estimate}")

    @property
    def has_interval(self) -> bool:
        return self.low is not None

    @property
    def half_width(self) -> float | None:
        """Half the interval's width: the smallest effect this test resolves (``None`` without an interval)."""
        return None if self.low is None else (self.high - self.low) / 2


def _finite(values: Sequence[float] | np.ndarray, what: str) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{what}: values must be numbers (one per seed or item), got "
                         f"{list(values)[:5] if hasattr(values, '__iter__') else values!r:.80}") from None
    if arr.size == 0:
        raise ValueError(f"{what}: no values (a model with no scored run cannot be compared)")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what}: values must be finite numbers, got {arr.tolist()}")
    return arr


def _t_quantile(level: float, df: float) -> float:
    from scipy import stats

    return float(stats.t.ppf(0.5 + level / 2, df))


def _check_level(level: float) -> None:
    if not (isinstance(level, (int, float)) and 0.5 <= level < 1):
        raise ValueError(f"level must be in [0.5, 1), got {level!r}")


def _check_resamples(resamples: int) -> None:
    if isinstance(resamples, bool) or not isinstance(resamples, (int, np.integer)) or resamples < 100:
        raise ValueError(f"resamples must be an integer of at least 100 for a percentile interval, got {resamples!r}")


def _check_seed(seed: int) -> None:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0 (it seeds numpy's generator), got {seed!r}")


def seed_interval(values: Sequence[float], *, level: float = 0.95, what: str = "scores") -> Interval:
    """The mean of ``values`` (one per seed) with Student's t interval; one value gives the mean and no interval."""
    arr = _finite(values, what)
    mean = float(arr.mean())
    n = int(arr.size)
    if n < 2:
        return Interval(mean, method="one seed: no interval", n=n, level=level)
    spread = float(arr.std(ddof=1))
    if spread == 0.0:
        return Interval(mean, method=f"{n} seeds scored the same: no interval (no variation seen is not certainty)",
                        n=n, level=level)
    half = _t_quantile(level, n - 1) * spread / math.sqrt(n)
    return Interval(mean, mean - half, mean + half, f"t interval over {n} seeds", n, level, ("seeds",))


def seed_difference(a: Sequence[float], b: Sequence[float], *, level: float = 0.95) -> Interval:
    """``mean(a) - mean(b)`` over seeds, with Welch's t interval (no pairing assumed between the seeds of two
    models). Fewer than two seeds on either side gives the difference and no interval, and so does a zero spread
    (every seed of both models scored the same, a model stuck at the majority class, say): seeing no variation in a
    few runs is no evidence of certainty, so such a difference cannot settle a claim."""
    x, y = _finite(a, "first model's scores"), _finite(b, "second model's scores")
    diff = float(x.mean() - y.mean())
    if x.size < 2 or y.size < 2:
        return Interval(diff, method=f"{min(x.size, y.size)} seed(s): no interval", n=int(min(x.size, y.size)),
                        level=level)
    vx, vy = float(x.var(ddof=1)) / x.size, float(y.var(ddof=1)) / y.size
    se = math.sqrt(vx + vy)
    seeds = f"{x.size} and {y.size} seeds" if x.size != y.size else f"{x.size} seeds each"
    if se == 0.0:
        return Interval(diff, method=f"{seeds}, every seed scored the same: no interval (no variation seen is not "
                        "certainty)", n=int(min(x.size, y.size)), level=level)
    df = (vx + vy) ** 2 / (vx ** 2 / (x.size - 1) + vy ** 2 / (y.size - 1))
    half = _t_quantile(level, df) * se
    return Interval(diff, diff - half, diff + half, f"Welch t interval over {seeds}", int(min(x.size, y.size)),
                    level, ("seeds",))


def seed_contrast(groups: Sequence[Sequence[float]], signs: Sequence[float], *, level: float = 0.95) -> Interval:
    """``sum(sign * mean(group))`` over independent groups of per-seed scores (a difference of two models, or a
    difference of two differences), with a Welch-Satterthwaite t interval over the seeds. Fewer than two seeds in a
    group, or no spread at all, gives the contrast and no interval."""
    if len(groups) != len(signs) or not groups:
        raise ValueError("seed_contrast needs one sign per group, and at least one group")
    arrays = [_finite(g, f"group {i}") for i, g in enumerate(groups)]
    estimate = float(sum(sg * a.mean() for sg, a in zip(signs, arrays)))
    if min(a.size for a in arrays) < 2:
        return Interval(estimate, method="a group with one seed: no interval over seeds", level=level)
    parts = [sg * sg * float(a.var(ddof=1)) / a.size for sg, a in zip(signs, arrays)]
    var = sum(parts)
    if var == 0.0:
        return Interval(estimate, method="every seed scored the same: no interval over seeds", level=level)
    df = var ** 2 / sum(v ** 2 / (a.size - 1) for v, a in zip(parts, arrays) if v > 0)
    half = _t_quantile(level, df) * math.sqrt(var)
    seeds = "/".join(str(a.size) for a in arrays)
    return Interval(estimate, estimate - half, estimate + half, f"Welch t interval over seeds ({seeds})",
                    min(a.size for a in arrays), level, ("seeds",))


def combined(items: Interval, seeds: Interval, *, estimate: float | None = None) -> Interval:
    """An interval that covers two independent sources of chance measured apart: the test items (``items``, e.g. a
    bootstrap with the seeds averaged per item) and the training runs (``seeds``, e.g. :func:`seed_contrast` over
    per-seed scores), their half-widths added in quadrature around ``estimate`` (``items``' estimate by default).
    An approximation, said in the method, for results that kept per-seed scores but no per-item scores per seed."""
    if not items.has_interval:
        raise ValueError("combined needs an interval over the items")
    centre = items.estimate if estimate is None else float(estimate)
    if not seeds.has_interval:
        return Interval(centre, items.low, items.high, f"{items.method}; seeds: {seeds.method}", items.n,
                        items.level, items.covers)
    lo, hi = items.estimate - items.low, items.high - items.estimate
    s = seeds.half_width
    return Interval(centre, centre - math.hypot(lo, s), centre + math.hypot(hi, s),
                    f"{items.method}, combined with a {seeds.method} (half-widths added in quadrature: approximate)",
                    items.n, items.level, ("items", "seeds"))


def resolving_factor(interval: Interval, effect: float) -> float | None:
    """How many times more items (and seeds, where they are resampled) would shrink ``interval``'s half-width to
    ``effect``, at the variance it shows: a half-width falls as one over the square root of the sample, so the
    factor is ``(half-width / effect)^2`` (at least 1). ``None`` without an interval or a positive effect."""
    hw = interval.half_width
    if hw is None or not effect or effect <= 0 or not math.isfinite(effect):
        return None
    return max(1.0, (hw / effect) ** 2)


def kendall_tau(reference: Sequence[float], ours: Sequence[float]) -> float:
    """Kendall's tau-b between two score lists over the same models (same order); NaN-free inputs required."""
    from scipy import stats

    x, y = _finite(reference, "reference scores"), _finite(ours, "our scores")
    if x.size != y.size or x.size < 2:
        raise ValueError(f"Kendall's tau needs two equally long lists of at least 2 scores, got {x.size} and "
                         f"{y.size}")
    tau = stats.kendalltau(x, y).statistic
    return 0.0 if not math.isfinite(tau) else float(tau)


def _normal_quantile(level: float) -> float:
    from scipy import stats

    return float(stats.norm.ppf(0.5 + level / 2))


def correlation_interval(r: float, n: int, *, kind: str = "pearson", level: float = 0.95) -> Interval:
    """A correlation over ``n`` pairs with its Fisher z interval ``tanh(atanh(r) -/+ q se)``: ``se = 1 / sqrt(n -
    3)`` for Pearson's r, Bonett & Wright's (2000) ``sqrt((1 + r^2 / 2) / (n - 3))`` for Spearman's rho."""
    if kind not in ("pearson", "spearman"):
        raise ValueError(f"kind must be 'pearson' or 'spearman', got {kind!r}")
    if n < 4:
        raise ValueError(f"a Fisher z interval needs at least 4 pairs, got {n}")
    if not -1.0 < r < 1.0:
        raise ValueError(f"a correlation must lie strictly between -1 and 1, got {r}")
    se = math.sqrt((1 + r ** 2 / 2) / (n - 3)) if kind == "spearman" else 1 / math.sqrt(n - 3)
    z, half = math.atanh(r), _normal_quantile(level) * se
    how = "Fisher z interval" + (" (Bonett-Wright)" if kind == "spearman" else "")
    return Interval(float(r), math.tanh(z - half), math.tanh(z + half), f"{how} over {n:,} pairs", n, level, ("items",))


def correlation_difference(r1: float, n1: int, r2: float, n2: int, *, level: float = 0.95) -> Interval:
    """``r1 - r2`` for two Pearson correlations taken as independent, with Zou's (2007) interval built from each
    one's Fisher z interval: ``L = d - sqrt((r1 - l1)^2 + (u2 - r2)^2)``, ``U = d + sqrt((u1 - r1)^2 + (r2 -
    l2)^2)``. (Two correlations over the same pairs are not independent: with per-pair scores kept, use
    :func:`paired_bootstrap` instead.)"""
    a = correlation_interval(r1, n1, level=level)
    b = correlation_interval(r2, n2, level=level)
    d = float(r1 - r2)
    low = d - math.sqrt((r1 - a.low) ** 2 + (b.high - r2) ** 2)
    high = d + math.sqrt((a.high - r1) ** 2 + (r2 - b.low) ** 2)
    return Interval(d, low, high, f"Zou's interval for a difference of two correlations (Fisher z, {min(n1, n2):,} "
                    "pairs each, taken as independent)", min(n1, n2), level, ("items",))


def auc_interval(auc: float, n_positive: int, n_negative: int, *, level: float = 0.95) -> Interval:
    """An AUC (the chance that a positive scores above a negative) with Hanley & McNeil's (1982) normal interval from
    its value and the two counts, clipped to [0, 1]."""
    if not 0.0 <= auc <= 1.0:
        raise ValueError(f"an AUC lies in [0, 1], got {auc}")
    if n_positive < 1 or n_negative < 1:
        raise ValueError(f"an AUC needs at least one item of each kind, got {n_positive} and {n_negative}")
    q1, q2 = auc / (2 - auc), 2 * auc ** 2 / (1 + auc)
    var = (auc * (1 - auc) + (n_positive - 1) * (q1 - auc ** 2) + (n_negative - 1) * (q2 - auc ** 2)) / (
        n_positive * n_negative)
    half = _normal_quantile(level) * math.sqrt(max(var, 0.0))
    return Interval(float(auc), max(0.0, auc - half), min(1.0, auc + half),
                    f"Hanley-McNeil interval ({n_positive:,} against {n_negative:,} items)", n_positive, level,
                    ("items",))


def proportion_interval(successes: int, n: int, *, level: float = 0.95, items: str = "items") -> Interval:
    """An accuracy ``successes / n`` (in %) with Wilson's score interval: what the choice of the ``n`` test items
    leaves uncertain about one trained model's accuracy."""
    if n < 1 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n and n >= 1, got {successes} of {n}")
    z = _normal_quantile(level)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    low, high = max(0.0, centre - half), min(1.0, centre + half)
    low, high = min(low, p), max(high, p)          # at p = 0 or 1 rounding must not leave p outside
    return Interval(100 * p, 100 * low, 100 * high, f"Wilson interval over {n:,} {items}", n, level,
                    ("items",))


def ratio_of_means(a: Sequence[float], b: Sequence[float], *, level: float = 0.95, scale: float = 100.0) -> Interval:
    """``scale * mean(a) / mean(b)`` (a retention in %, say) with a delta-method interval: Welch's interval of
    ``a - R b`` over the seeds (R the estimated ratio), divided by ``mean(b)``. Both models' seed variation enters;
    with too few seeds, or no spread, there is the ratio and no interval."""
    x, y = _finite(a, "first model's scores"), _finite(b, "second model's scores")
    base = float(y.mean())
    if base == 0.0:
        raise ValueError("the second model's mean is zero: a ratio to it is undefined")
    r = float(x.mean()) / base
    d = seed_difference(x, r * y, level=level)
    if not d.has_interval:
        return Interval(scale * r, method=f"ratio of means; {d.method}", n=d.n, level=level)
    k = scale / abs(base)
    return Interval(scale * r, scale * r + k * d.low, scale * r + k * d.high,
                    f"ratio of means, delta method: {d.method} of a - R b, over the second model's mean", d.n, level,
                    ("seeds",))
