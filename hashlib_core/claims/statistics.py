"""Uncertainty for claims: intervals across seeds, paired bootstrap over test items, Kendall's tau.

Every function returns an :class:`Interval`: the point estimate, a two-sided interval at ``level`` (95% unless
asked otherwise) or none, and a sentence saying how it was obtained, which the claims table prints.

* :func:`seed_interval` -- the mean of one model's scores over seeds, with Student's t interval;
* :func:`seed_difference` -- the difference of two models' means over seeds (Welch's t interval), when the two are
  not scored on shared items (or only their per-seed scores were kept);
* :func:`paired_bootstrap` -- two models scored **on the same items** (the usual test in NLP, Koehn 2004; Berg-
  Kirkpatrick et al. 2012): resample the items with replacement, recompute both models' metric on each resample,
  and read the interval of the difference off the percentiles. Decomposable metrics (accuracy, a hit@k) take the
  fast path (per-item scores averaged); any other metric (MCC, F1, Spearman) is recomputed from per-item
  predictions on every resample;
* :func:`stratified_bootstrap` -- the general case: several item sets (the dev sets of several tasks) resampled
  independently, each giving some values per resample (models' scores on that task), combined into one statistic
  (an average difference over tasks, a retention, the lowest of several retentions);
* :func:`kendall_tau` -- how far one ranking of models agrees with another;
* :func:`correlation_interval` -- a Pearson or Spearman correlation over n pairs with its Fisher z interval
  (Bonett & Wright's standard error for Spearman), and :func:`correlation_difference`, two independent correlations'
  difference with Zou's (2007) interval;
* :func:`auc_interval` -- an AUC with Hanley & McNeil's (1982) normal interval;
* :func:`proportion_interval` -- an accuracy over n test items with Wilson's interval (test sampling only);
* :func:`ratio_of_means` -- ``mean(a) / mean(b)`` over seeds (a retention, a relative gap) with a delta-method
  interval that carries both models' seed variation.

Each interval covers what its method sentence says and nothing more: a bootstrap over test items the choice of
items, an interval over fine-tuning seeds the fine-tuning; a model pre-trained (or trained) once does not vary its
training, and the claims say so where it matters.

Resampling draws from a local ``numpy`` generator with a fixed seed, so a verdict is reproducible bit for bit.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

__all__ = ["Interval", "seed_interval", "seed_difference", "paired_bootstrap", "stratified_bootstrap", "kendall_tau",
           "correlation_interval",
           "correlation_difference", "auc_interval", "proportion_interval", "ratio_of_means", "DEFAULT_RESAMPLES"]

#: resamples of a paired bootstrap: enough that the percentile interval's ends move by well under its width
DEFAULT_RESAMPLES = 2000
_CHUNK = 250   # resamples drawn at a time (bounds memory at 250 x items indices)


@dataclass(frozen=True)
class Interval:
    """A point estimate and, when the evidence allows one, its two-sided interval at ``level``."""

    estimate: float
    low: float | None = None
    high: float | None = None
    method: str = ""
    n: int | None = None          # items (bootstrap) or seeds (t interval) the interval rests on
    level: float = 0.95

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


def _finite(values: Sequence[float] | np.ndarray, what: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        raise ValueError(f"{what}: no values (a model with no scored run cannot be compared)")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what}: values must be finite numbers, got {arr.tolist()}")
    return arr


def _t_quantile(level: float, df: float) -> float:
    from scipy import stats

    return float(stats.t.ppf(0.5 + level / 2, df))


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
    return Interval(mean, mean - half, mean + half, f"t interval over {n} seeds", n, level)


def seed_difference(a: Sequence[float], b: Sequence[float], *, level: float = 0.95) -> Interval:
    """``mean(a) - mean(b)`` over seeds, with Welch's t interval (no pairing assumed between the seeds of two
    models). Fewer than two seeds on either side gives the difference and no interval, and so does a zero spread
    (every seed of both models scored the same, a model stuck at the majority class, say): seeing no variation in a
    few runs is no evidence of certainty, so such a difference can at best hold in direction."""
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
                    level)


def _as_items(values: np.ndarray | Sequence, what: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise ValueError(f"{what}: per-item scores must be (items,) or (seeds, items), got shape {arr.shape}")
    if arr.shape[1] == 0:
        raise ValueError(f"{what}: no items")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what}: per-item scores must be finite")
    return arr


def paired_bootstrap(
    a: np.ndarray | Sequence | None = None,
    b: np.ndarray | Sequence | None = None,
    *,
    metric: Callable[[np.ndarray], float] | None = None,
    metric_b: Callable[[np.ndarray], float] | None = None,
    n_items: int | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = 0.95,
    seed: int = 0,
    items: str = "items",
) -> Interval:
    """The difference ``A - B`` of two models scored on the same items, with a paired percentile-bootstrap interval.

    Two ways to call it:

    * **per-item scores** ``a`` and ``b`` (``(items,)`` or ``(seeds, items)``: a 0/1 correctness, a hit@k, a
      per-item loss): the metric is their mean (over seeds too), resampled fast;
    * **a metric** ``metric(indices) -> float`` for model A and ``metric_b`` for B (e.g. MCC of the predictions
      at ``indices`` against the labels at ``indices``), with ``n_items``: both are recomputed on each resample.

    ``items`` names the items in the method sentence (``"SST-2 dev sentences"``). Resampling is paired: both models
    see the same resampled items, so what they share (hard items, easy items) cancels in the difference.
    """
    if resamples < 100:
        raise ValueError(f"resamples must be at least 100 for a percentile interval, got {resamples}")
    if not 0.5 <= level < 1:
        raise ValueError(f"level must be in [0.5, 1), got {level}")
    rng = np.random.default_rng(seed)
    lo_q, hi_q = 100 * (0.5 - level / 2), 100 * (0.5 + level / 2)
    if metric is not None or metric_b is not None:
        if metric is None or metric_b is None or n_items is None:
            raise ValueError("a metric bootstrap needs metric, metric_b and n_items")
        if a is not None or b is not None:
            raise ValueError("give either per-item scores (a, b) or metrics, not both")
        if n_items < 2:
            raise ValueError(f"a bootstrap needs at least 2 items, got {n_items}")
        everything = np.arange(n_items)
        estimate = float(metric(everything) - metric_b(everything))
        diffs = np.empty(resamples)
        for r in range(resamples):
            idx = rng.integers(0, n_items, n_items)
            diffs[r] = metric(idx) - metric_b(idx)
        n = n_items
    else:
        if a is None or b is None:
            raise ValueError("paired_bootstrap needs per-item scores a and b, or metric, metric_b and n_items")
        x, y = _as_items(a, "first model"), _as_items(b, "second model")
        if x.shape[1] != y.shape[1]:
            raise ValueError(f"the two models were scored on different numbers of items ({x.shape[1]} vs "
                             f"{y.shape[1]}): a paired bootstrap needs the same items in the same order")
        per_item = x.mean(axis=0) - y.mean(axis=0)      # seeds averaged per item; the mean is linear
        n = int(per_item.size)
        if n < 2:
            raise ValueError(f"a bootstrap needs at least 2 items, got {n}")
        estimate = float(per_item.mean())
        diffs = np.empty(resamples)
        for start in range(0, resamples, _CHUNK):
            stop = min(start + _CHUNK, resamples)
            idx = rng.integers(0, n, (stop - start, n))
            diffs[start:stop] = per_item[idx].mean(axis=1)
    if not np.all(np.isfinite(diffs)):
        raise ValueError("the metric returned a non-finite value on a resample; use a metric defined on every "
                         "subset (e.g. MCC returns 0 when a class is missing)")
    low, high = (float(v) for v in np.percentile(diffs, [lo_q, hi_q]))
    return Interval(estimate, min(low, estimate), max(high, estimate),
                    f"paired bootstrap over {n:,} {items} ({resamples:,} resamples)", n, level)


def stratified_bootstrap(
    parts: Sequence[tuple[int, Callable[[np.ndarray], Sequence[float]]]],
    combine: Callable[[list[Sequence[float]]], float],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = 0.95,
    seed: int = 0,
    items: str = "items",
    nested: str = "",
) -> Interval:
    """A statistic of several models scored on several item sets, with a percentile-bootstrap interval.

    ``parts`` are ``(n_items, values)``: ``values(indices)`` gives the numbers the statistic needs from one item set
    (e.g. two models' metric on those items of one task). Each resample draws every part's items independently with
    replacement (the same draw for every model: the comparison stays paired), and ``combine`` turns the parts'
    values into the statistic (e.g. the mean over tasks of A - B). With one part and ``combine = a - b`` this is
    :func:`paired_bootstrap`'s metric path.

    ``nested`` (a description, e.g. "each model's fine-tuning seeds") makes the bootstrap two-level: ``values`` is
    then called as ``values(indices, rng)``, with ``rng`` None for the estimate and a generator in every resample,
    which ``values`` uses to resample its own units too (each model's runs, with replacement), so the interval also
    covers the variation between them."""
    if not parts:
        raise ValueError("stratified_bootstrap needs at least one part")
    if resamples < 100:
        raise ValueError(f"resamples must be at least 100 for a percentile interval, got {resamples}")
    sizes = [int(n) for n, _ in parts]
    if min(sizes) < 2:
        raise ValueError(f"every part needs at least 2 items, got {sizes}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    rng = np.random.default_rng(seed)
    units = np.random.default_rng([seed, 1]) if nested else None
    call = (lambda fn, idx, g: fn(idx, g)) if nested else (lambda fn, idx, g: fn(idx))
    estimate = float(combine([call(fn, np.arange(n), None) for n, fn in parts]))
    if not math.isfinite(estimate):
        raise ValueError("the statistic is not finite on the items themselves")
    draws = np.empty(resamples)
    for r in range(resamples):
        draws[r] = combine([call(fn, rng.integers(0, n, n), units) for n, fn in parts])
    if not np.all(np.isfinite(draws)):
        raise ValueError("the statistic returned a non-finite value on a resample; use metrics defined on every "
                         "subset (e.g. MCC returns 0 when a class is missing)")
    low, high = (float(v) for v in np.percentile(draws, [100 * (0.5 - level / 2), 100 * (0.5 + level / 2)]))
    what = f"{sum(sizes):,} {items}" if len(sizes) == 1 else f"{' + '.join(f'{n:,}' for n in sizes)} {items}"
    how = (f"{resamples:,} resamples" + (", each set resampled on its own" if len(sizes) > 1 else "")
           + (f"; {nested} resampled too" if nested else ""))
    return Interval(estimate, min(low, estimate), max(high, estimate), f"paired bootstrap over {what} ({how})",
                    sum(sizes), level)


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
    return Interval(float(r), math.tanh(z - half), math.tanh(z + half), f"{how} over {n:,} pairs", n, level)


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
                    "pairs each, taken as independent)", min(n1, n2), level)


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
                    f"Hanley-McNeil interval ({n_positive:,} against {n_negative:,} items)", n_positive, level)


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
    return Interval(100 * p, 100 * low, 100 * high, f"Wilson interval over {n:,} {items}", n, level)


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
                    f"ratio of means, delta method: {d.method} of a - R b, over the second model's mean", d.n, level)
