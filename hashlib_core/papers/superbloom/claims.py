"""The Superbloom chapter's claims: the abstract's comparisons first, then Tables 1-3, Fig. 3, Algorithm 1,
Appendix B and §4, each with its effect computed from the chapter's results of one profile.

Recall comparisons read the per-segment hits (``recall_segments`` and ``matched_segments``: one masked id per test
segment, the same targets for every model and seed), average each model's hits over its seeds per segment, and take a
paired bootstrap over the test segments; the difference of two depth gains ("hashing needs depth") is bootstrapped
the same way, per segment. The models compared are the profile's roles
(:meth:`~hashlib_core.papers.superbloom.profiles.SuperbloomProfile.roles`). A comparison the paper makes between
models "of a similar size" is only tested when our two models' parameter counts agree within
:data:`SIZE_TOLERANCE`; otherwise it is not testable here, with both sizes given.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from hashlib_core.claims import ClaimSet, Effect, Interval, NotTestable, better, paired_bootstrap, ratio, value, within
from hashlib_core.params import humanize
from hashlib_core.papers.superbloom.data import DATASET_NAMES

__all__ = ["CLAIMS", "SIZE_TOLERANCE", "role", "models", "segments", "hits", "check_similar_sizes"]

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


def hits(table: pd.DataFrame, name: str, k: int = 1) -> np.ndarray:
    """Per test segment (in segment order): the share of ``name``'s seeds that ranked the masked id among their best
    ``k``, in points (100: every seed)."""
    rows = table[table["name"] == name]
    if rows.empty:
        raise NotTestable(f"{name} has no scored test segments in this profile")
    return 100.0 * rows.groupby("segment", sort=True)[f"hit@{k}"].mean().to_numpy(dtype=float)


def _seeds(table: pd.DataFrame, *names: str) -> str:
    counts = {n: table.loc[table["name"] == n, "seed"].nunique() for n in names}
    return ", ".join(f"{n}: {c} seed{'s' if c > 1 else ''}" for n, c in counts.items())


def _items(table: pd.DataFrame, *names: str) -> str:
    return f"test segments (each model's hits averaged over its seeds per segment; {_seeds(table, *names)})"


def _paired(table: pd.DataFrame, *names: str, k: int = 1) -> list[np.ndarray]:
    """Per-segment hits of ``names``, checked to be scored on the same targets in the same order."""
    targets = [table[table["name"] == n].groupby("segment", sort=True)["target"].first().to_numpy() for n in names]
    if any(len(t) != len(targets[0]) or not np.array_equal(t, targets[0]) for t in targets):
        raise NotTestable(f"{', '.join(names)} were not scored on the same test segments")
    return [hits(table, n, k) for n in names]


def check_similar_sizes(sizes: pd.Series, a: str, b: str) -> None:
    """NotTestable unless models ``a`` and ``b`` (``sizes``: total parameters by name) agree within the tolerance."""
    pa, pb = float(sizes[a]), float(sizes[b])
    if max(pa, pb) > (1 + SIZE_TOLERANCE) * min(pa, pb):
        raise NotTestable(f"sizes differ: {a} {humanize(pa, 2)} vs {b} {humanize(pb, 2)} parameters; the "
                          f"comparison needs matched sizes (within {SIZE_TOLERANCE:.0%})")


def _recall_text(a: str, ra: float, b: str, rb: float, k: int = 1) -> str:
    return f"{a} {ra:.1f}% vs {b} {rb:.1f}% rec@{k} ({ra - rb:+.1f} points)"


# ----------------------------------------------------------------------------------------------------- effects
def _sizes(ev: Any) -> pd.Series:
    return models(ev).groupby("name")["total_params"].first()


def _versus(a_role: str, b_role: str, *, similar: bool = False, larger: bool = False):
    """Model ``a_role`` minus model ``b_role``, rec@1, paired bootstrap over the test segments."""
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
        return Effect(paired_bootstrap(a, b, items=_items(table, a_name, b_name)),
                      _recall_text(a_name, a.mean(), b_name, b.mean()) + size, unit="points")
    return effect


def _versus_every_k(a_role: str, b_role: str):
    """Model ``a_role`` minus model ``b_role`` at the recall cut-off where it is smallest (sizes checked similar),
    paired bootstrap over the test segments at that cut-off; every cut-off's difference in the text."""
    def effect(ev: Any) -> Effect:
        a_name, b_name = role(ev, a_role), role(ev, b_role)
        sizes = _sizes(ev)
        check_similar_sizes(sizes, a_name, b_name)
        table = segments(ev)
        ks = sorted(int(c[4:]) for c in table.columns if c.startswith("hit@"))
        pairs = {k: _paired(table, a_name, b_name, k=k) for k in ks}
        gaps = {k: a.mean() - b.mean() for k, (a, b) in pairs.items()}
        worst = min(ks, key=lambda k: (gaps[k], k))
        iv = paired_bootstrap(*pairs[worst], items=_items(table, a_name, b_name))
        every = "; ".join(f"rec@{k} {gaps[k]:+.1f}" for k in ks)
        return Effect(iv, f"{a_name} minus {b_name} (points): {every}; smallest at rec@{worst}; {a_name} "
                          f"{humanize(sizes[a_name], 2)} vs {b_name} {humanize(sizes[b_name], 2)} parameters",
                      unit="points")
    return effect


def _depth(ev: Any, *families: str) -> tuple[list[np.ndarray], list[str], pd.DataFrame, list[str]]:
    """Per-segment rec@1 of each family's deep and shallow model, a text per family, the table and the names."""
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
    """(Superbloom deep - shallow) - (baseline deep - shallow), rec@1, bootstrapped per segment."""
    (sd, ss, bd, bs), (sb_text, base_text), table, names = _depth(ev, "superbloom", "baseline")
    iv = paired_bootstrap(sd - ss, bd - bs, items=_items(table, *names))
    return Effect(iv, f"gain from depth: {sb_text} ({(sd - ss).mean():+.1f}); {base_text} ({(bd - bs).mean():+.1f})",
                  unit="points", note="each baseline has its Superbloom row's parameter count")


def _superbloom_depth(ev: Any) -> Effect:
    (d, s), (text,), table, names = _depth(ev, "superbloom")
    return Effect(paired_bootstrap(d, s, items=_items(table, *names)), text, unit="points")


def _all_deciles(ev: Any) -> Effect:
    """The smallest, over the ten label-frequency deciles, of deep Superbloom's rec@1 minus the baseline's of its
    size."""
    sb, base = role(ev, "superbloom_deep"), role(ev, "baseline_deep")
    check_similar_sizes(_sizes(ev), sb, base)
    table = segments(ev)
    a, b = _paired(table, sb, base)
    frequency = table[table["name"] == sb].groupby("segment", sort=True)["label_frequency"].first()
    bucket = pd.qcut(frequency.rank(method="first"), 10, labels=False).to_numpy()     # Fig. 3's deciles

    def worst(idx: np.ndarray) -> float:            # deciles a resample happens to miss are skipped
        diff, where = a[idx] - b[idx], bucket[idx]
        return float(min(diff[where == d].mean() for d in np.unique(where)))

    iv = paired_bootstrap(metric=worst, metric_b=lambda idx: 0.0, n_items=len(a), items=_items(table, sb, base))
    return Effect(iv, f"{sb} minus {base}, rec@1 in its worst decile: {iv.estimate:+.1f} points", unit="points")


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
                  + "; ".join(f"rec@{j} {v:+.2f}" for j, v in gaps.items()) + " points", unit="points")


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


def _window_items(table: pd.DataFrame, *names: str) -> str:
    return f"test windows (each model's hits averaged over its seeds per window; {_seeds(table, *names)})"


def _language_better(ev: Any) -> Effect:
    """The smallest, over pairs and cut-offs, of Superbloom's recall minus its baseline's, with the paired bootstrap
    of that (pair, k) over the test windows."""
    table = _language_windows(ev)
    ks = sorted(int(c[4:]) for c in table.columns if c.startswith("hit@"))
    gaps = {}
    for b, s in _language_pairs(ev):
        for k in ks:
            a_hits, b_hits = _paired(table, s, b, k=k)
            gaps[(s, b, k)] = (a_hits, b_hits)
    worst = min(gaps, key=lambda key: gaps[key][0].mean() - gaps[key][1].mean())
    a_hits, b_hits = gaps[worst]
    iv = paired_bootstrap(a_hits, b_hits, items=_window_items(table, worst[0], worst[1]))
    return Effect(iv, f"smallest of Superbloom minus baseline over pairs and k: {worst[0]} vs {worst[1]}, "
                      f"rec@{worst[2]} {iv.estimate:+.1f} points", unit="points")


def _language_smaller(ev: Any) -> Effect:
    """(Superbloom - baseline) of the smaller pair minus that of the larger pair, rec@1, bootstrapped per window."""
    table = _language_windows(ev)
    (b_small, s_small), *_, (b_large, s_large) = _language_pairs(ev)
    ss, bs, sl, bl = _paired(table, s_small, b_small, s_large, b_large)
    iv = paired_bootstrap(ss - bs, sl - bl, items=_window_items(table, s_small, b_small, s_large, b_large))
    return Effect(iv, f"rec@1 gain of Superbloom: smaller pair {(ss - bs).mean():+.1f}, larger pair "
                      f"{(sl - bl).mean():+.1f} points", unit="points")


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
           reads=("models", "recall_segments"), section="sb-recall", unit="points"),
    better("beats-similar-every-k", "Superbloom beats an unhashed model of similar size at every recall cut-off",
           where="§3.3, Table 2",
           quote=("The Superbloom model clearly outperforms, to a large extent, both the baseline and the "
                  "sampled- softmax model."),
           effect=_versus_every_k("superbloom_deep", "baseline_deep"), reads=_READS, section="sb-recall",
           unit="points"),
    better("depth-superbloom", "Superbloom's recall improves with more layers", where="§3.4, Table 3",
           quote="However, for Superbloom models, the quality improves significantly with more layers.",
           paper_value="17.8% -> 43.4% (rec@1)", effect=_superbloom_depth, reads=("models", "recall_segments"),
           section="sb-recall", unit="points"),
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
           effect=_language_better, reads=("language_segments", "language_models"), section="sb-language",
           unit="points"),
    better("lm-smaller", "On text, Superbloom's advantage is larger for the smaller pair of models",
           where="§4, Table 5",
           quote=("We observe that with comparable model size, Superbloom outperforms the baseline model in all the "
                  "recall metrics, and the improvement is more significant for smaller model size."),
           effect=_language_smaller, reads=("language_segments", "language_models"), section="sb-language",
           unit="points"),
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
], scale=_scale)
