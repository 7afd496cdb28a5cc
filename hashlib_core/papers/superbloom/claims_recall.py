"""The Superbloom chapter's recall effects (:mod:`~hashlib_core.papers.superbloom.claims`): per-seed, per-segment
hits of the trained models, read with a two-level paired bootstrap over the test segments and each model's seeds,
with the flags of a run at its step cap or a model trained once; the depth gains and the label-frequency deciles."""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd

from hashlib_core.claims import Effect, Interval, NoSignal, NotTestable, bootstrap_means, paired_bootstrap
from hashlib_core.claims.bootstrap import DEFAULT_RESAMPLES, _chunks, _percentiles, item_counts
from hashlib_core.params import humanize

__all__ = ["SIZE_TOLERANCE", "role", "models", "segments", "hits", "seed_hits", "check_similar_sizes", "worst_gap"]

#: two models are "of a similar size" when the larger has at most this share more parameters than the smaller
SIZE_TOLERANCE = 0.05


def _both(ev: Any, *names: str) -> pd.DataFrame:
    frames = [ev.table(n) for n in names if ev.has(n)]
    if not frames:
        raise NotTestable(f"none of {', '.join(names)} is in this profile's results")
    return pd.concat(frames, ignore_index=True)


def models(ev: Any) -> pd.DataFrame:
    """One row per trained model and seed, of ``recall`` and ``matched``."""
    return _both(ev, "models", "matched_models")


def segments(ev: Any) -> pd.DataFrame:
    """Per-segment hits of every model and seed, of ``recall`` and ``matched``."""
    return _both(ev, "recall_segments", "matched_segments")


def role(ev: Any, key: str) -> str:
    """The name of the model playing ``key`` (see ``roles``); NotTestable when the profile trains none."""
    name = ev.profile.roles().get(key)
    if name is None or name not in set(models(ev)["name"]):
        raise NotTestable(f"no {key.replace('_', ' ')} model is trained in this profile")
    return name


def seed_hits(table: pd.DataFrame, name: str, k: int = 1) -> np.ndarray:
    """``(seeds, segments)``: 100 where seed s of ``name`` ranked segment i's masked id among its best ``k``, else 0
    (segments in segment order)."""
    rows = table[table["name"] == name]
    if rows.empty:
        raise NotTestable(f"{name} has no scored test segments in this profile")
    wide = rows.pivot_table(index="seed", columns="segment", values=f"hit@{k}", aggfunc="first").sort_index(axis=1)
    if wide.isna().any().any():
        raise NotTestable(f"the seeds of {name} were not all scored on the same test segments")
    return 100.0 * wide.to_numpy(dtype=float)


def hits(table: pd.DataFrame, name: str, k: int = 1) -> np.ndarray:
    """Per test segment (in segment order): the share of ``name``'s seeds that ranked the masked id among their best
    ``k``, in points (100: every seed)."""
    return seed_hits(table, name, k).mean(axis=0)


def _seeds(table: pd.DataFrame, *names: str) -> str:
    counts = {n: table.loc[table["name"] == n, "seed"].nunique() for n in names}
    return ", ".join(f"{n}: {c} seed{'s' if c > 1 else ''}" for n, c in counts.items())


def _paired(table: pd.DataFrame, *names: str, k: int = 1) -> list[np.ndarray]:
    """Per-seed, per-segment hits of ``names`` (each ``(seeds, segments)``), checked to be scored on the same targets
    in the same order."""
    targets = [table[table["name"] == n].groupby("segment", sort=True)["target"].first().to_numpy() for n in names]
    if any(len(t) != len(targets[0]) or not np.array_equal(t, targets[0]) for t in targets):
        raise NotTestable(f"{', '.join(names)} were not scored on the same test segments")
    return [seed_hits(table, n, k) for n in names]


def check_similar_sizes(sizes: pd.Series, a: str, b: str) -> None:
    """NotTestable unless models ``a`` and ``b`` (``sizes``: total parameters by name) agree within the tolerance."""
    pa, pb = float(sizes[a]), float(sizes[b])
    if max(pa, pb) > (1 + SIZE_TOLERANCE) * min(pa, pb):
        raise NotTestable(f"sizes differ: {a} {humanize(pa, 2)} vs {b} {humanize(pb, 2)} parameters; the "
                          f"comparison needs matched sizes (within {SIZE_TOLERANCE:.0%})")


def _recall_text(a: str, ra: float, b: str, rb: float, k: int = 1) -> str:
    return f"{a} {ra:.1f}% vs {b} {rb:.1f}% rec@{k} ({ra - rb:+.1f} points)"


def _capped(rows: pd.DataFrame) -> pd.Series:
    """Which runs were best at their step cap (none, for a table without the columns)."""
    if not {"best_step", "max_steps"} <= set(rows.columns):
        return pd.Series(False, index=rows.index)
    return rows["best_step"] >= rows["max_steps"]


def _flags(ev: Any, table_models: pd.DataFrame, *names: str) -> tuple[str, ...]:
    """``cap`` when a run of ``names`` was best at its step cap; ``one-run`` when one of them has a single seed."""
    rows = table_models[table_models["name"].isin(names)]
    out = []
    if _capped(rows).any():
        out.append("cap")
    if "seed" in rows.columns and any(rows.loc[rows["name"] == n, "seed"].nunique() < 2 for n in names):
        out.append("one-run")
    return tuple(out)


def _cap_note(table_models: pd.DataFrame, *names: str) -> str:
    rows = table_models[table_models["name"].isin(names)]
    capped = int(_capped(rows).sum())
    if not capped:
        return ""
    return (f"{'every one' if capped == len(rows) else capped} of the {len(rows)} runs compared best at its step cap "
            f"({int(rows['max_steps'].max()):,}): still improving when it stopped")


# ----------------------------------------------------------------------------------------------------- effects
def _sizes(ev: Any) -> pd.Series:
    return models(ev).groupby("name")["total_params"].first()


def _effect(ev: Any, iv: Interval, ours: str, *names: str, note: str = "", **kw: Any) -> Effect:
    m = models(ev)
    return Effect(iv, ours, unit="points", note="; ".join(x for x in (note, _cap_note(m, *names)) if x),
                  flags=_flags(ev, m, *names), **kw)


def _versus(a_role: str, b_role: str, *, similar: bool = False, larger: bool = False):
    """Model ``a_role`` minus model ``b_role``, rec@1, two-level paired bootstrap over the test segments and seeds."""
    def effect(ev: Any) -> Effect:
        a_name, b_name = role(ev, a_role), role(ev, b_role)
        sizes = _sizes(ev)
        if similar:
            check_similar_sizes(sizes, a_name, b_name)
        if larger and not sizes[b_name] > sizes[a_name]:
            raise NotTestable(f"{b_name} ({humanize(sizes[b_name], 2)}) is not larger than {a_name} "
                              f"({humanize(sizes[a_name], 2)}): the claim is about a much larger sampled-softmax "
                              "model")
        table = segments(ev)
        a, b = _paired(table, a_name, b_name)
        size = (f"; {a_name} {humanize(sizes[a_name], 2)} vs {b_name} {humanize(sizes[b_name], 2)} parameters")
        iv = paired_bootstrap(a, b, items="test segments", names=(a_name, b_name))
        return _effect(ev, iv, _recall_text(a_name, a.mean(), b_name, b.mean()) + size, a_name, b_name)
    return effect


def worst_gap(table: pd.DataFrame, pairs: list[tuple[str, str]], ks: list[int], items: str = "test segments"
              ) -> tuple[Interval, dict[tuple[str, str, int], float]]:
    """The smallest, over ``pairs`` (a, b) and cut-offs ``ks``, of a's rec@k minus b's, with a two-level paired
    bootstrap of that minimum as one statistic (each model's seeds drawn once per resample, shared across its
    cut-offs), and every (a, b, k) difference."""
    names = list(dict.fromkeys(n for pair in pairs for n in pair))
    scores, owner = {}, {}
    for k in ks:
        for name, hits_k in zip(names, _paired(table, *names, k=k)):
            scores[f"{name}@{k}"], owner[f"{name}@{k}"] = hits_k, name
    gaps = {(a, b, k): float(scores[f"{a}@{k}"].mean() - scores[f"{b}@{k}"].mean()) for a, b in pairs for k in ks}
    iv = bootstrap_means(scores, lambda m: np.min([m[f"{a}@{k}"] - m[f"{b}@{k}"] for a, b in pairs for k in ks],
                                                  axis=0), items=items, runs_of=owner)
    return iv, gaps


def _ks(table: pd.DataFrame) -> list[int]:
    return sorted(int(c[4:]) for c in table.columns if c.startswith("hit@"))


def _versus_every_k(a_role: str, b_role: str):
    """Model ``a_role`` minus model ``b_role`` at every recall cut-off (sizes checked similar): the smallest
    difference, bootstrapped over the test segments and seeds as one statistic; every cut-off's difference in the
    text."""
    def effect(ev: Any) -> Effect:
        a_name, b_name = role(ev, a_role), role(ev, b_role)
        sizes = _sizes(ev)
        check_similar_sizes(sizes, a_name, b_name)
        table = segments(ev)
        ks = _ks(table)
        iv, gaps = worst_gap(table, [(a_name, b_name)], ks)
        worst = min(ks, key=lambda k: (gaps[(a_name, b_name, k)], k))
        every = "; ".join(f"rec@{k} {gaps[(a_name, b_name, k)]:+.1f}" for k in ks)
        return _effect(ev, iv, f"{a_name} minus {b_name} (points): {every}; smallest at rec@{worst}; {a_name} "
                               f"{humanize(sizes[a_name], 2)} vs {b_name} {humanize(sizes[b_name], 2)} parameters",
                       a_name, b_name, note=f"the smallest of {len(ks)} differences, bootstrapped as one")
    return effect


def _worse_than_both(ev: Any) -> Effect:
    """The unhashed baseline and Superbloom of the matched budget, each minus the sampled-softmax model, at every
    recall cut-off: the smallest of those differences, bootstrapped as one statistic (the paper: "much worse rec@k
    than the other two models")."""
    sampled = role(ev, "sampled")
    others = [role(ev, r) for r in ("baseline_wide", "superbloom_matched")]
    table = segments(ev)
    ks = _ks(table)
    iv, gaps = worst_gap(table, [(o, sampled) for o in others], ks)
    (a, _, k) = min(gaps, key=gaps.get)
    every = "; ".join(f"{o} rec@{j} {gaps[(o, sampled, j)]:+.1f}" for o in others for j in ks)
    return _effect(ev, iv, f"each model minus {sampled} (points): {every}; smallest: {a} at rec@{k}", sampled, *others,
                   note=f"the smallest of {len(gaps)} differences, bootstrapped as one")


def _depth(ev: Any, *families: str) -> tuple[list[np.ndarray], list[str], pd.DataFrame, list[str]]:
    """Per-seed, per-segment rec@1 of each family's deep and shallow model, a text per family, the table and the
    names."""
    if ev.profile.depths[0] == ev.profile.deep:
        raise NotTestable("the profile trains one depth only")
    names = [role(ev, f"{family}_{depth}") for family in families for depth in ("deep", "shallow")]
    table = segments(ev)
    scores = _paired(table, *names)
    layers = models(ev).groupby("name")["layers"].first()
    texts = [f"{family} {layers[names[2 * i + 1]]} -> {layers[names[2 * i]]} layers: "
             f"{scores[2 * i + 1].mean():.1f}% -> {scores[2 * i].mean():.1f}%" for i, family in enumerate(families)]
    return scores, texts, table, names


def _depth_gap(ev: Any) -> Effect:
    """(Superbloom deep - shallow) - (baseline deep - shallow), rec@1, two-level bootstrap over segments and seeds."""
    (sd, ss, bd, bs), (sb_text, base_text), table, names = _depth(ev, "superbloom", "baseline")
    n_sd, n_ss, n_bd, n_bs = names
    iv = bootstrap_means(dict(zip(names, (sd, ss, bd, bs))),
                         lambda m: (m[n_sd] - m[n_ss]) - (m[n_bd] - m[n_bs]), items="test segments")
    return _effect(ev, iv, f"gain from depth: {sb_text} ({sd.mean() - ss.mean():+.1f}); {base_text} "
                           f"({bd.mean() - bs.mean():+.1f})", *names,
                   note="each baseline has its Superbloom row's parameter count")


def _superbloom_depth(ev: Any) -> Effect:
    (d, s), (text,), table, names = _depth(ev, "superbloom")
    return _effect(ev, paired_bootstrap(d, s, items="test segments", names=tuple(names)), text, *names)


def _decile_gaps(a: np.ndarray, b: np.ndarray, bucket: np.ndarray, deciles: np.ndarray, counts: np.ndarray,
                 rng: Any) -> np.ndarray:
    """``(resamples,)``: the smallest, over ``deciles``, of model a's mean per-segment hits minus b's within the
    decile, on each resample (``counts``: the segments' counts; ``rng``: each model's seeds drawn too). A decile a
    resample happens to miss is skipped."""
    runs_a, runs_b = a.shape[0], b.shape[0]
    wa = item_counts(rng, runs_a, counts.shape[0]) / runs_a if rng is not None and runs_a > 1 else \
        np.full((counts.shape[0], runs_a), 1.0 / runs_a)
    wb = item_counts(rng, runs_b, counts.shape[0]) / runs_b if rng is not None and runs_b > 1 else \
        np.full((counts.shape[0], runs_b), 1.0 / runs_b)
    diff = (wa @ a - wb @ b) * counts                               # (resamples, segments), weighted by counts
    onehot = (bucket[:, None] == deciles[None, :]).astype(float)    # (segments, deciles)
    total, weight = diff @ onehot, counts @ onehot
    with np.errstate(invalid="ignore", divide="ignore"):
        per = np.where(weight > 0, total / weight, np.inf)
    return per.min(axis=1)


def _all_deciles(ev: Any) -> Effect:
    """The smallest, over the label-frequency deciles where either model scores a hit, of deep Superbloom's rec@1
    minus the baseline's of its size; the deciles where both score none are named (nothing to compare there). A
    two-level bootstrap over segments and seeds."""
    sb, base = role(ev, "superbloom_deep"), role(ev, "baseline_deep")
    check_similar_sizes(_sizes(ev), sb, base)
    table = segments(ev)
    a, b = _paired(table, sb, base)
    frequency = table[table["name"] == sb].groupby("segment", sort=True)["label_frequency"].first()
    bucket = pd.qcut(frequency.rank(method="first"), 10, labels=False).to_numpy()     # Fig. 3's deciles
    any_hit = [d for d in range(10) if a[:, bucket == d].sum() + b[:, bucket == d].sum() > 0]
    empty = [d for d in range(10) if d not in any_hit]
    where = ("both models score no hit in decile" + ("s " if len(empty) > 1 else " ")
             + ", ".join(str(d) for d in empty) + " (rarest first, from 0): nothing to compare there") if empty else ""
    if not any_hit:
        raise NoSignal(f"{sb} and {base} score no hit at rec@1 in any decile")
    deciles = np.asarray(any_hit)
    n = a.shape[1]
    estimate = float(_decile_gaps(a, b, bucket, deciles, np.ones((1, n)), None)[0])
    rng, units = np.random.default_rng(0), np.random.default_rng([0, 1])
    draws = np.concatenate([_decile_gaps(a, b, bucket, deciles, item_counts(rng, n, size), units)
                            for size in _chunks(DEFAULT_RESAMPLES, n)])
    draws = draws[np.isfinite(draws)]
    low, high = _percentiles(draws, estimate, 0.95)
    iv = Interval(estimate, low, high, f"paired bootstrap over {n:,} test segments ({DEFAULT_RESAMPLES:,} resamples; "
                  f"each model's seeds resampled too ({_seeds(table, sb, base)}))", n, 0.95, ("items", "seeds"))
    worst = min(any_hit, key=lambda d: (a[:, bucket == d].mean() - b[:, bucket == d].mean(), d))
    effect = _effect(ev, iv, f"{sb} minus {base}, rec@1 in its worst decile with a hit (decile {worst}): "
                             f"{estimate:+.1f} points" + (f"; {where}" if where else ""), sb, base)
    return dataclasses.replace(effect, flags=effect.flags + ("floor",)) if empty else effect
