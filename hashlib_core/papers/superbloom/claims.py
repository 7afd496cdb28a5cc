"""The Superbloom chapter's claims: the abstract's comparisons first, then Tables 1-3, Fig. 3, Algorithm 1,
Appendix B and §4, each with its effect computed from the chapter's results of one profile.

Recall comparisons read the per-segment hits of every seed (``recall_segments`` and ``matched_segments``: one masked
id per test segment, the same targets for every model and seed) and take a **two-level** paired bootstrap: every
resample draws the test segments (the same draw for every model) and, within each model, its seeds with replacement,
so the interval covers the variation between training runs as well as the choice of segments
(:func:`hashlib_core.claims.bootstrap_means`). The difference of two depth gains ("hashing needs depth") is
bootstrapped the same way. The models compared are the profile's roles
(:meth:`~hashlib_core.papers.superbloom.profiles.SuperbloomProfile.roles`). A comparison the paper makes between
models "of a similar size" is only tested when our two models' parameter counts agree within
:data:`SIZE_TOLERANCE`; otherwise it is not testable here, with both sizes given. A run that was best at its step cap
is flagged ``cap``; a model trained with one seed ``1 run``. §4's text models are read only when they leave the
floor of a model that reads no context (:func:`lm_floor`): otherwise the claims say *no signal* with the losses.
"""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd

from hashlib_core.claims import (ClaimSet, Effect, Interval, NoSignal, NotTestable, better, bootstrap_means,
                                 paired_bootstrap, ratio, value, within)
from hashlib_core.claims.statistics import DEFAULT_RESAMPLES, _chunks, _percentiles, item_counts
from hashlib_core.params import humanize
from hashlib_core.papers.superbloom.data import DATASET_NAMES
from hashlib_core.results import load_paper_table, parse_printed

__all__ = ["CLAIMS", "SIZE_TOLERANCE", "role", "models", "segments", "hits", "seed_hits", "check_similar_sizes",
           "lm_floor"]

#: two models are "of a similar size" when the larger has at most this share more parameters than the smaller
SIZE_TOLERANCE = 0.05


# ------------------------------------------------------------------------------------------------------ helpers
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


def _versus_every_k(a_role: str, b_role: str):
    """Model ``a_role`` minus model ``b_role`` at the recall cut-off where it is smallest (sizes checked similar),
    two-level paired bootstrap over the test segments and seeds at that cut-off; every cut-off's difference in the
    text."""
    def effect(ev: Any) -> Effect:
        a_name, b_name = role(ev, a_role), role(ev, b_role)
        sizes = _sizes(ev)
        check_similar_sizes(sizes, a_name, b_name)
        table = segments(ev)
        ks = sorted(int(c[4:]) for c in table.columns if c.startswith("hit@"))
        pairs = {k: _paired(table, a_name, b_name, k=k) for k in ks}
        gaps = {k: a.mean() - b.mean() for k, (a, b) in pairs.items()}
        worst = min(ks, key=lambda k: (gaps[k], k))
        iv = paired_bootstrap(*pairs[worst], items="test segments", names=(a_name, b_name))
        every = "; ".join(f"rec@{k} {gaps[k]:+.1f}" for k in ks)
        return _effect(ev, iv, f"{a_name} minus {b_name} (points): {every}; smallest at rec@{worst}; {a_name} "
                               f"{humanize(sizes[a_name], 2)} vs {b_name} {humanize(sizes[b_name], 2)} parameters",
                       a_name, b_name)
    return effect


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


def _certificate(ev: Any) -> Effect:
    dec = ev.table("decoding_trained")
    certified = (dec["positions"] * dec["certified_share"]).round().astype(int)
    share = 100.0 * float(dec["certified_exact_share"].min())
    ks = ", ".join(str(int(k)) for k in dec["k"])
    return Effect.exactly(share, f"{share:.0f}% of {int(certified.sum()):,} certified answers (k = {ks}; "
                                 f"{int(dec['num_ids'].iloc[0]):,} ids) equal the exhaustive top k", unit="%",
                          method="exact: every certified answer compared with exhaustive scoring")


def _paired_timings(row: pd.Series, repeats: int, what: str) -> Interval:
    """A speed-up read from ``repeats`` paired timings (``what`` names them): the median of the pairs' ratios, their
    range as the interval. The smallest and largest of n paired timings bracket their median with probability
    1 - 2 / 2^n (order statistics, no distribution assumed): 93.75% for 5."""
    coverage = 1 - 2 * 0.5 ** repeats
    return Interval(float(row["speedup_median_paired"]), float(row["speedup_min_paired"]),
                    float(row["speedup_max_paired"]),
                    f"median of {repeats} paired timings {what}; the interval is their range, which covers the "
                    f"median with probability {coverage:.1%} (distribution-free)", repeats, coverage)


def _speed(ev: Any) -> Effect:
    dec = ev.table("decoding_trained")
    row = dec.loc[dec["speedup_median_paired"].idxmin()]
    iv = _paired_timings(row, ev.profile.decode_repeats, f"(exhaustive and beam alternated) on "
                         f"{int(row['positions'])} positions, at k = {int(row['k'])}, the slowest k")
    return Effect(iv, f"{iv.estimate:.1f}x faster at k = {int(row['k'])} ({int(row['num_ids']):,} ids; "
                      f"{row['exhaustive_ms_per_position']:.2f} vs {row['beam_ms_per_position']:.2f} ms per position)",
                  unit="x", note="our search is certified (exact), not stopped early")


def _train_time(ev: Any) -> Effect:
    """The unhashed model's time per training step over Superbloom's (the same Transformer) in the largest id space
    timed: the median of the paired timings, their range as the interval (distribution-free, as ``speed``)."""
    from hashlib_core.papers.superbloom.tables_train_time import train_time_pairs

    pairs = train_time_pairs(ev.table("train_time"))
    row, first = pairs.iloc[-1], pairs.iloc[0]
    iv = _paired_timings(row, int(ev.table("train_time")["repeats"].iloc[0]),
                         f"of training steps (unhashed and Superbloom alternated), at {int(row['num_ids']):,} ids, the "
                         f"largest id space timed")
    trend = "" if len(pairs) < 2 else (f"; at the data's {int(first['num_ids']):,} ids "
                                        f"{first['speedup_median_paired']:.2f}x")
    return Effect(iv, f"Superbloom's step {iv.estimate:.1f}x faster at {int(row['num_ids']):,} ids "
                      f"({row['base_ms_per_step']:,.0f} vs {row['sb_ms_per_step']:,.0f} ms; "
                      f"{humanize(int(row['base_total_params']))} vs {humanize(int(row['sb_total_params']))} "
                      f"parameters){trend}", unit="x",
                  note=("the same Transformer: only the vocabulary differs (Superbloom's sequences are m tokens per "
                        "item)"))


def _beam_k(ev: Any) -> Effect:
    """The smallest, over k, of rec@k after one iteration at B = k minus the certified search's rec@k (the same
    model and seed)."""
    beam = ev.table("beam_width")
    name, seed = str(beam["name"].iloc[0]), int(beam["seed"].iloc[0])
    table = segments(ev)
    exact = table[(table["name"] == name) & (table["seed"] == seed)]
    ks = [k for k in (int(c[4:]) for c in beam.columns if c.startswith("rec@")) if k in set(beam["beam"])]
    if not ks or exact.empty:
        raise NotTestable("no beam width equal to a recall cut-off was run, or its model was not scored")
    gaps = {k: float(beam.loc[beam["beam"] == k, f"rec@{k}"].iloc[0] - 100.0 * exact[f"hit@{k}"].mean())
            for k in ks}
    k = min(gaps, key=gaps.get)
    return Effect(Interval(gaps[k], method="one run, per-segment hits of the beam widths not kept: no interval"),
                  f"{name}: one iteration at B = k against the certified search: "
                  + "; ".join(f"rec@{j} {v:+.2f}" for j, v in gaps.items()) + " points", unit="points",
                  flags=("one-run", "not-recomputable"))


def _softmax_tokens(ev: Any) -> Effect:
    params = ev.table("params")
    row = params[(params["table"] == "Table 1") & (params["model"] == "superbloom")].iloc[0]
    return Effect.exactly(float(row["#samples"]), f"{int(row['#samples']):,} = {int(row['m'])} x ceil("
                          f"{int(row['ids']):,} / {int(row['alpha'])}) hash tokens", unit="tokens",
                          method="exact: counted at the paper's vocabulary")


def _language_pairs(ev: Any) -> list[tuple[str, str]]:
    """§4's (baseline, Superbloom) pairs, matched by size rank; each pair checked for similar sizes."""
    models = ev.table("language_models").groupby("name", sort=False).first().reset_index()
    base = models[models["alpha"] == 1].sort_values("total_params")["name"].tolist()
    sb = models[models["alpha"] > 1].sort_values("total_params")["name"].tolist()
    if not base or len(base) != len(sb):
        raise NotTestable("the language experiment has no equal number of baselines and Superbloom models")
    sizes = models.set_index("name")["total_params"]
    for b, s in zip(base, sb):
        check_similar_sizes(sizes, s, b)
    return list(zip(base, sb))


def _language_windows(ev: Any) -> pd.DataFrame:
    """Per test window hits of every text model and seed (``language_segments``)."""
    if not ev.has("language_segments"):
        raise NotTestable("the language experiment kept no per-window hits in this profile's results")
    return ev.table("language_segments")


def lm_floor(ev: Any) -> dict[str, str]:
    """``{model: why it is at its floor}`` for §4's text models that learned nothing a model reading no context
    does not: an unhashed baseline whose best validation loss (mean over its seeds) is not below the entropy of the
    training tokens' frequencies (the loss of a model that reads no context), and a hashed model whose recall on
    the test windows is below the training-frequency ranking's at every k (its loss, a sum over hashes, does not
    compare)."""
    from hashlib_core.papers.superbloom.language import TRAINING_FREQUENCY

    if not ev.has("language_prior"):
        return {}
    prior = ev.table("language_prior").set_index("name").loc[TRAINING_FREQUENCY]
    entropy = float(prior["entropy_nats"])
    table = ev.table("language_models")
    recall = ev.table("language").set_index("name") if ev.has("language") else None
    out = {}
    for name, rows in table.groupby("name", sort=False):
        if int(rows["alpha"].iloc[0]) == 1:
            loss = float(-rows["best_validation"].mean())
            if loss >= entropy:
                out[name] = f"{name}'s validation loss {loss:.2f} nats, not below the no-context {entropy:.2f}"
        elif recall is not None and name in recall.index:
            ks = sorted(int(c[4:]) for c in recall.columns if c.startswith("rec@"))
            if ks and all(recall.loc[name, f"rec@{k}"] < prior[f"rec@{k}"] for k in ks):
                out[name] = (f"{name}'s recall below the training-frequency ranking's at every k ("
                             + ", ".join(f"rec@{k} {recall.loc[name, f'rec@{k}']:.1f} vs {prior[f'rec@{k}']:.1f}"
                                         for k in ks) + ")")
    return out


def _lm_effect(ev: Any, iv: Interval, ours: str, *names: str) -> Effect:
    """A §4 effect, *no signal* when a baseline compared sits at the no-context floor."""
    floor = lm_floor(ev)
    alphas = ev.table("language_models").groupby("name")["alpha"].first()
    ordered = sorted(names, key=lambda n: int(alphas.get(n, 1)) != 1)          # the baselines first
    stuck = [floor[n] for n in ordered if n in floor]
    base_stuck = [n for n in names if n in floor and int(alphas.get(n, 1)) == 1]
    silent = ("the unhashed baseline compared learned no more than a model that reads no context: " + "; ".join(stuck)
              if base_stuck else "")
    m = ev.table("language_models")
    return Effect(iv, ours, unit="points", note=_cap_note(m, *names), flags=_flags(ev, m, *names)
                  + (("floor",) if stuck else ()), no_signal=silent)


def _language_better(ev: Any) -> Effect:
    """The smallest, over pairs and cut-offs, of Superbloom's recall minus its baseline's, with the two-level paired
    bootstrap of that (pair, k) over the test windows and seeds."""
    table = _language_windows(ev)
    ks = sorted(int(c[4:]) for c in table.columns if c.startswith("hit@"))
    gaps = {}
    for b, s in _language_pairs(ev):
        for k in ks:
            a_hits, b_hits = _paired(table, s, b, k=k)
            gaps[(s, b, k)] = (a_hits, b_hits)
    worst = min(gaps, key=lambda key: gaps[key][0].mean() - gaps[key][1].mean())
    a_hits, b_hits = gaps[worst]
    iv = paired_bootstrap(a_hits, b_hits, items="test windows", names=(worst[0], worst[1]))
    return _lm_effect(ev, iv, f"smallest of Superbloom minus baseline over pairs and k: {worst[0]} vs {worst[1]}, "
                              f"rec@{worst[2]} {iv.estimate:+.1f} points", worst[0], worst[1])


def _language_smaller(ev: Any) -> Effect:
    """(Superbloom - baseline) of the smaller pair minus that of the larger pair, rec@1, two-level bootstrap over the
    windows and seeds."""
    table = _language_windows(ev)
    (b_small, s_small), *_, (b_large, s_large) = _language_pairs(ev)
    ss, bs, sl, bl = _paired(table, s_small, b_small, s_large, b_large)
    iv = bootstrap_means({s_small: ss, b_small: bs, s_large: sl, b_large: bl},
                         lambda m: (m[s_small] - m[b_small]) - (m[s_large] - m[b_large]), items="test windows")
    return _lm_effect(ev, iv, f"rec@1 gain of Superbloom: smaller pair {ss.mean() - bs.mean():+.1f}, larger pair "
                              f"{sl.mean() - bl.mean():+.1f} points", s_small, b_small, s_large, b_large)


# ------------------------------------------------------------------------------------------------------ claims
def _scale(p: Any) -> str:
    return (f"{p.name} profile: {DATASET_NAMES[p.dataset]} id sets, Superbloom at width {p.hidden} and "
            f"{', '.join(map(str, p.depths))} layers beside baselines of its size"
            + (f" (and {', '.join(map(str, p.further_depths))} at one seed, read by no claim)" if p.further_depths
               else "") + f"; Table 1 beside a width-"
            f"{p.baseline_hidden} baseline; alpha = {p.alpha}, m = {p.num_hashes}; early stopping on validation "
            f"loss (at most {p.steps:,} steps of {p.batch} segments), learning rates "
            f"{', '.join(f'{lr:g}' for lr in p.learning_rates)}, {p.seeds} seed{'s' if p.seeds > 1 else ''} for "
            f"the compared models; decoding in an id space of {p.decode_ids:,}"
            + (f"; training steps timed up to {max(p.train_time_ids):,} ids"
               if p.train_time_repeats and p.train_time_ids else "")
            + f"; §4 on Penn Treebank (early stopping, at most {p.lm_steps:,} steps, "
            f"{p.lm_seeds} seed{'s' if p.lm_seeds > 1 else ''})")


def _brief(p: Any) -> str:
    return (f"d = {p.hidden}, {p.deep} layers, {DATASET_NAMES[p.dataset]} ({p.seeds} seeds), at most {p.steps:,} "
            f"steps")


def _table3(model: str) -> float:
    """Table 3's rec@1 of ``model`` (%)."""
    return parse_printed(load_paper_table("superbloom_table3").set_index("model").loc[model, "rec@1"]).value


#: the paper's own depth gains (Table 3, rec@1): what the depth claims' power is read against
_SB_DEPTH = _table3("superbloom-d256l12") - _table3("superbloom-d256l1")
_DEPTH_GAP = _SB_DEPTH - (_table3("baseline-l12") - _table3("baseline-l1"))

_ABSTRACT = ("They outperform models of a similar size without hashing and, to a large degree, models of a much larger "
             "size trained using sampled softmax with the same computational budget.")
_READS = ("models", "recall_segments", "matched_models", "matched_segments")

CLAIMS = ClaimSet("superbloom", "Superbloom", [
    better("beats-similar", "Superbloom beats an unhashed model of similar size (at Superbloom's size)",
           headline=True, where="Abstract", quote=_ABSTRACT,
           effect=_versus("superbloom_deep", "baseline_deep", similar=True), reads=_READS, section="sb-recall",
           unit="points"),
    better("beats-similar-large", "Superbloom beats an unhashed model of similar size (at the baseline's size)",
           headline=True, where="Abstract", quote=_ABSTRACT,
           effect=_versus("superbloom_matched", "baseline_wide", similar=True), reads=_READS, section="sb-matched",
           unit="points"),
    better("beats-sampled", "Superbloom beats a much larger sampled-softmax model", headline=True, where="Abstract",
           quote=_ABSTRACT, effect=_versus("superbloom_matched", "sampled", larger=True), reads=_READS,
           section="sb-matched", unit="points"),
    better("depth-gap", "Going deeper helps Superbloom far more than the unhashed baseline", headline=True,
           where="Introduction; §3.4, Table 3",
           quote=("For instance, we find that the model quality gap between a one layer and a twelve layer "
                  "Transformer model is significantly larger when using Bloom filter digests, compared to that when "
                  "the vocabulary is not hashed."),
           paper_value="superbloom 17.8% -> 43.4%; baseline 51.0% -> 55.0% (rec@1)", effect=_depth_gap,
           reads=("models", "recall_segments"), section="sb-recall", unit="points", resolve=_DEPTH_GAP,
           resolve_note="difference of depth gains (Table 3)"),
    better("beats-similar-every-k", "Superbloom beats an unhashed model of similar size at every recall cut-off",
           where="§3.3, Table 2",
           quote=("The Superbloom model clearly outperforms, to a large extent, both the baseline and the "
                  "sampled- softmax model."),
           effect=_versus_every_k("superbloom_deep", "baseline_deep"), reads=_READS, section="sb-recall",
           unit="points"),
    better("depth-superbloom", "Superbloom's recall improves with more layers", where="§3.4, Table 3",
           quote="However, for Superbloom models, the quality improves significantly with more layers.",
           paper_value="17.8% -> 43.4% (rec@1)", effect=_superbloom_depth, reads=("models", "recall_segments"),
           section="sb-recall", unit="points", resolve=_SB_DEPTH, resolve_note="depth gain (Table 3)"),
    better("sampled-worse", "The sampled-softmax model recalls worse than the unhashed baseline",
           where="§3.3, Table 2",
           quote=("We note that the sampled-softmax model has much worse rec@k than the other two models, and this gap "
                  "is larger for smaller k."), effect=_versus("baseline_wide", "sampled"),
           reads=_READS, section="sb-matched", unit="points"),
    better("all-deciles", "Superbloom beats the baseline of similar size in every label-frequency decile",
           where="§3.3, Fig. 3", quote="We can observe that Superbloom is more accurate than the baseline in all the "
           "buckets.", effect=_all_deciles, reads=("models", "recall_segments"), section="sb-recall", unit="points"),
    better("deep-vs-wide", "A deep Superbloom model beats a one-layer one of the same size", where="§3.4, Table 3",
           quote=("The multi-layer model also performs much better than the single layer model with the same size "
                  "(superbloom-d384l1)."),
           effect=_versus("superbloom_deep", "superbloom_one_layer", similar=True), reads=_READS,
           section="sb-recall", unit="points"),
    value("certificate", "Every answer Algorithm 1 certifies is the exact top k", between=(100.0, 100.0),
          where="§2.5, Algorithm 1",
          quote=("If the best scored element s := arg max s∈S b γ(s) satisfies γ(s ) ≥ j log p b j , then we have "
                 "a certificate that s is the best element over the entire set and the algorithm terminates."),
          effect=_certificate, reads=("decoding_trained",), section="sb-speed", unit="%"),
    ratio("speed", "Beam search decodes at least 10 times faster than exhaustive scoring", at_least=10.0,
          where="§2.5, computational complexity", paper_value="10 times",
          quote=("For example, with the parameter setting described in Section 3.3, approximate inference is 10 times "
                 "faster than exhaustive scoring."), effect=_speed, reads=("decoding_trained",), section="sb-speed",
          unit="x"),
    within("beam-k", "One search iteration at beam B = k already reaches the exact search's rec@k", tolerance=0,
           one_sided=True, where="Table 1 caption; Appendix B",
           quote=("our experiments suggest that it is sufficient to set B = k in order to achieve the best rec@k "
                  "metric"), effect=_beam_k, reads=("beam_width", "recall_segments"), section="sb-beam", unit="points"),
    value("softmax-200K", "Superbloom's softmax at the paper's vocabulary has about 200K hash tokens (2N / alpha)",
          printed="200K", where="Table 1 caption",
          quote=("For baseline and superbloom, since there is no sampling, this number corresponds to the full "
                 "vocabulary, 5.3M and 200K, respectively."), effect=_softmax_tokens, reads=("params",),
          section="sb-params", unit="tokens"),
    better("lm-similar", "On text, Superbloom beats unhashed baselines of comparable size at every recall cut-off",
           where="§4, Table 5",
           quote=("We observe that with comparable model size, Superbloom outperforms the baseline model in all the "
                  "recall metrics, and the improvement is more significant for smaller model size."),
            effect=_language_better, reads=("language_segments", "language_models", "language_prior", "language"),
           section="sb-language", unit="points"),
    better("lm-smaller", "On text, Superbloom's advantage is larger for the smaller pair of models",
           where="§4, Table 5",
           quote=("We observe that with comparable model size, Superbloom outperforms the baseline model in all the "
                  "recall metrics, and the improvement is more significant for smaller model size."),
           effect=_language_smaller, reads=("language_segments", "language_models", "language_prior", "language"),
           section="sb-language", unit="points"),
    ratio("train-time", "A smaller vocabulary significantly reduces training time (Superbloom's step is faster)",
          above=1.0, where="§2.4",
          quote=("Our experiments (see Section 3.3) show that the cost of updating E O dominates that of training, "
                 "and a reduction in vocabulary size allows us to significantly reduce training time without "
                 "resorting to negative sampling."),
          effect=_train_time, reads=("train_time",), section="sb-train-time", unit="x"),
    better("random-hashing", "Random hashing may outperform coherent (spelling-based) hashing", where="§4; Appendix D",
           quote=("As suggested by the experiments in Appendix D, random hashing with Superbloom digests may "
                  "outperform coherent hashing."),
           untestable="no coherent (spelling-based) hashing is trained here, and Appendix D is not in the source text"),
], scale=_scale, brief=_brief)
