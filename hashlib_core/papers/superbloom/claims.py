"""The Superbloom chapter's claims: the abstract's three comparisons first, then Tables 1-3, Fig. 3, Algorithm 1,
Appendix B and §4, each with its effect computed from the chapter's results of one profile.

Recall comparisons read ``recall_segments`` (one masked id per test segment, the same targets for every model) and
take a paired bootstrap over the test segments; the difference of two depth gains ("hashing needs depth") is
bootstrapped the same way, per segment. A comparison the paper makes between models "of a similar size" is only
tested when our two models' parameter counts (``models`` / ``language_models``) agree within
:data:`SIZE_TOLERANCE`; otherwise it is not testable here, with both sizes given.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from hashlib_core.claims import ClaimSet, Effect, Interval, NotTestable, better, paired_bootstrap, ratio, value, within
from hashlib_core.params import humanize
from hashlib_core.papers.superbloom.data import DATASET_NAMES

__all__ = ["CLAIMS", "SIZE_TOLERANCE", "family", "hits", "check_similar_sizes"]

#: two models are "of a similar size" when the larger has at most this share more parameters than the smaller
SIZE_TOLERANCE = 0.05
#: the items a paired bootstrap resamples; each model is trained once, so it covers the choice of test segments only
_ITEMS = "test segments (one trained model each: training variation not covered)"


# ------------------------------------------------------------------------------------------------------ helpers
def family(models: pd.DataFrame, kind: str, depth: str = "deep") -> str:
    """The name of the ``kind`` model ("baseline", "superbloom", "sampled-softmax") at ``depth`` ("deep": most
    layers, "shallow": fewest); NotTestable when the profile trained none, or only one depth of it."""
    sampled = models["num_sampled"] > 0
    rows = models[{"baseline": (models["alpha"] == 1) & ~sampled, "superbloom": models["alpha"] > 1,
                   "sampled-softmax": sampled}[kind]]
    if rows.empty:
        raise NotTestable(f"no {kind} model is trained in this profile")
    if depth == "shallow" and rows["layers"].nunique() < 2:
        raise NotTestable(f"the {kind} model is trained at one depth only in this profile")
    pick = rows["layers"].idxmax() if depth == "deep" else rows["layers"].idxmin()
    return str(rows.loc[pick, "name"])


def hits(segments: pd.DataFrame, name: str, k: int = 1) -> np.ndarray:
    """Per test segment: 100 if ``name`` ranked the masked id among its best ``k``, else 0 (in points)."""
    rows = segments[segments["name"] == name]
    if rows.empty:
        raise NotTestable(f"{name} has no scored test segments in this profile")
    return 100.0 * rows[f"hit@{k}"].to_numpy(dtype=float)


def _paired(segments: pd.DataFrame, *names: str, k: int = 1) -> list[np.ndarray]:
    """Per-segment hits of ``names``, checked to be scored on the same targets in the same order."""
    targets = [segments.loc[segments["name"] == n, "target"].to_numpy() for n in names]
    if any(len(t) != len(targets[0]) or not np.array_equal(t, targets[0]) for t in targets):
        raise NotTestable(f"{', '.join(names)} were not scored on the same test segments")
    return [hits(segments, n, k) for n in names]


def check_similar_sizes(sizes: pd.Series, a: str, b: str) -> None:
    """NotTestable unless models ``a`` and ``b`` (``sizes``: total parameters by name) agree within the tolerance."""
    pa, pb = float(sizes[a]), float(sizes[b])
    if max(pa, pb) > (1 + SIZE_TOLERANCE) * min(pa, pb):
        raise NotTestable(f"sizes differ: {a} {humanize(pa, 2)} vs {b} {humanize(pb, 2)} parameters; the "
                          f"comparison needs matched sizes (within {SIZE_TOLERANCE:.0%})")


def _recall_text(a: str, ra: float, b: str, rb: float, k: int = 1) -> str:
    return f"{a} {ra:.1f}% vs {b} {rb:.1f}% rec@{k} ({ra - rb:+.1f} points)"


# ----------------------------------------------------------------------------------------------------- effects
def _versus(kind: str, *, similar: bool = False, larger: bool = False):
    """Deep Superbloom minus the deep ``kind`` model, rec@1, paired bootstrap over the test segments."""
    def effect(ev: Any) -> Effect:
        models = ev.table("models")
        sb, other = family(models, "superbloom"), family(models, kind)
        sizes = models.set_index("name")["total_params"]
        if similar:
            check_similar_sizes(sizes, sb, other)
        if larger and not sizes[other] > sizes[sb]:
            raise NotTestable(f"{other} ({humanize(sizes[other], 2)}) is not larger than {sb} "
                              f"({humanize(sizes[sb], 2)}): the claim is about a much larger sampled-softmax model")
        a, b = _paired(ev.table("recall_segments"), sb, other)
        size = f"; {sb} {humanize(sizes[sb], 2)} vs {other} {humanize(sizes[other], 2)} parameters"
        return Effect(paired_bootstrap(a, b, items=_ITEMS), _recall_text(sb, a.mean(), other, b.mean()) + size,
                      unit="points")
    return effect


def _depth(ev: Any, *kinds: str) -> tuple[list[np.ndarray], list[str]]:
    """Per-segment rec@1 hits of each ``kinds`` model, deep then shallow, and a text per kind."""
    models = ev.table("models")
    names = [family(models, kind, depth) for kind in kinds for depth in ("deep", "shallow")]
    scores = _paired(ev.table("recall_segments"), *names)
    layers = models.set_index("name")["layers"]
    texts = [f"{kind} {layers[names[2 * i + 1]]} -> {layers[names[2 * i]]} layers: {scores[2 * i + 1].mean():.1f}% "
             f"-> {scores[2 * i].mean():.1f}%" for i, kind in enumerate(kinds)]
    return scores, texts


def _depth_gap(ev: Any) -> Effect:
    """(Superbloom deep - shallow) - (baseline deep - shallow), rec@1, bootstrapped per segment."""
    (sd, ss, bd, bs), (sb_text, base_text) = _depth(ev, "superbloom", "baseline")
    iv = paired_bootstrap(sd - ss, bd - bs, items=_ITEMS)
    return Effect(iv, f"gain from depth: {sb_text} ({(sd - ss).mean():+.1f}); {base_text} ({(bd - bs).mean():+.1f})",
                  unit="points")


def _superbloom_depth(ev: Any) -> Effect:
    (d, s), (text,) = _depth(ev, "superbloom")
    return Effect(paired_bootstrap(d, s, items=_ITEMS), text, unit="points")


def _sampled_below_baseline(ev: Any) -> Effect:
    models = ev.table("models")
    base, ss = family(models, "baseline"), family(models, "sampled-softmax")
    a, b = _paired(ev.table("recall_segments"), base, ss)
    sizes = models.set_index("name")["total_params"]
    return Effect(paired_bootstrap(a, b, items=_ITEMS), _recall_text(base, a.mean(), ss, b.mean()), unit="points",
                  note=f"ours are of one size ({humanize(sizes[ss], 2)} and {humanize(sizes[base], 2)} parameters); "
                       f"the paper's sampled-softmax model is much larger than its baseline")


def _all_deciles(ev: Any) -> Effect:
    """The smallest, over the ten label-frequency deciles, of deep Superbloom's rec@1 minus the deep baseline's."""
    models = ev.table("models")
    sb, base = family(models, "superbloom"), family(models, "baseline")
    check_similar_sizes(models.set_index("name")["total_params"], sb, base)
    segments = ev.table("recall_segments")
    a, b = _paired(segments, sb, base)
    frequency = segments.loc[segments["name"] == sb, "label_frequency"]
    bucket = pd.qcut(frequency.rank(method="first"), 10, labels=False).to_numpy()     # Fig. 3's deciles

    def worst(idx: np.ndarray) -> float:            # deciles a resample happens to miss are skipped
        diff, where = a[idx] - b[idx], bucket[idx]
        return float(min(diff[where == d].mean() for d in np.unique(where)))

    iv = paired_bootstrap(metric=worst, metric_b=lambda idx: 0.0, n_items=len(a), items=_ITEMS)
    return Effect(iv, f"{sb} minus {base}, rec@1 in its worst decile: {iv.estimate:+.1f} points", unit="points")


def _certificate(ev: Any) -> Effect:
    dec = ev.table("decoding_trained")
    certified = (dec["positions"] * dec["certified_share"]).round().astype(int)
    share = 100.0 * float(dec["certified_exact_share"].min())
    ks = ", ".join(str(int(k)) for k in dec["k"])
    return Effect.exactly(share, f"{share:.0f}% of {int(certified.sum()):,} certified answers (k = {ks}; "
                                 f"{int(dec['num_ids'].iloc[0]):,} ids) equal the exhaustive top k", unit="%",
                          method="exact: every certified answer compared with exhaustive scoring")


def _speed(ev: Any) -> Effect:
    dec = ev.table("decoding_trained")
    row = dec.loc[dec["speedup_median_paired"].idxmin()]
    repeats = ev.profile.decode_repeats
    # the smallest and largest of n paired timings bracket their median with probability 1 - 2 / 2^n (order
    # statistics, no distribution assumed): 93.75% for 5
    coverage = 1 - 2 * 0.5 ** repeats
    iv = Interval(float(row["speedup_median_paired"]), float(row["speedup_min_paired"]),
                  float(row["speedup_max_paired"]),
                  f"median of {repeats} paired timings (exhaustive and beam alternated) on {int(row['positions'])} "
                  f"positions, at k = {int(row['k'])}, the slowest k; the interval is their range, which covers the "
                  f"median with probability {coverage:.1%} (distribution-free)", repeats, coverage)
    return Effect(iv, f"{iv.estimate:.1f}x faster at k = {int(row['k'])} ({int(row['num_ids']):,} ids; "
                      f"{row['exhaustive_ms_per_position']:.2f} vs {row['beam_ms_per_position']:.2f} ms per position)",
                  unit="x", note="our search is certified (exact), not stopped early")


def _beam_k(ev: Any) -> Effect:
    """The smallest, over k, of rec@k after one iteration at B = k minus the certified search's rec@k."""
    beam = ev.table("beam_width")
    name = str(beam["name"].iloc[0])
    exact = ev.table("recall").set_index("name").loc[name]
    ks = [k for k in (int(c[4:]) for c in beam.columns if c.startswith("rec@")) if k in set(beam["beam"])]
    if not ks:
        raise NotTestable("no beam width equal to a recall cut-off was run")
    gaps = {k: float(beam.loc[beam["beam"] == k, f"rec@{k}"].iloc[0] - exact[f"rec@{k}"]) for k in ks}
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
    models = ev.table("language_models")
    base = models[models["alpha"] == 1].sort_values("total_params")["name"].tolist()
    sb = models[models["alpha"] > 1].sort_values("total_params")["name"].tolist()
    if not base or len(base) != len(sb):
        raise NotTestable("the language experiment has no equal number of baselines and Superbloom models")
    sizes = models.set_index("name")["total_params"]
    for b, s in zip(base, sb):
        check_similar_sizes(sizes, s, b)
    return list(zip(base, sb))


def _language_better(ev: Any) -> Effect:
    lang = ev.table("language").set_index("name")
    ks = [c for c in lang.columns if c.startswith("rec@")]
    gaps = {(s, b, k): float(lang.loc[s, k] - lang.loc[b, k]) for b, s in _language_pairs(ev) for k in ks}
    worst = min(gaps, key=gaps.get)
    return Effect(Interval(gaps[worst], method="one run, per-window hits not kept: no interval"),
                  f"smallest of Superbloom minus baseline over pairs and k: {worst[0]} vs {worst[1]}, {worst[2]} "
                  f"{gaps[worst]:+.1f} points", unit="points")


def _language_smaller(ev: Any) -> Effect:
    lang = ev.table("language").set_index("name")["rec@1"]
    (b_small, s_small), *_, (b_large, s_large) = _language_pairs(ev)
    small, large = lang[s_small] - lang[b_small], lang[s_large] - lang[b_large]
    return Effect(Interval(small - large, method="one run, per-window hits not kept: no interval"),
                  f"rec@1 gain of Superbloom: smaller pair {small:+.1f}, larger pair {large:+.1f} points",
                  unit="points")


# ------------------------------------------------------------------------------------------------------ claims
def _scale(p: Any) -> str:
    return (f"{p.name} profile: {DATASET_NAMES[p.dataset]} id sets, width {p.hidden}, {p.layers_shallow} and "
            f"{p.layers_deep} layers, alpha = {p.alpha}, m = {p.num_hashes}, {p.steps:,} steps of {p.batch} segments, "
            f"one seed; decoding in an id space of {p.decode_ids:,}; §4 on WikiText-2 ({p.lm_steps:,} steps)")


_ABSTRACT = ("They outperform models of a similar size without hashing and, to a large degree, models of a much larger "
             "size trained using sampled softmax with the same computational budget.")

CLAIMS = ClaimSet("superbloom", "Superbloom", [
    better("beats-similar", "Superbloom beats an unhashed model of similar size", headline=True, where="Abstract",
           quote=_ABSTRACT, effect=_versus("baseline", similar=True), reads=("models", "recall_segments"),
           section="sb-recall", unit="points"),
    better("beats-sampled", "Superbloom beats a much larger sampled-softmax model", headline=True, where="Abstract",
           quote=_ABSTRACT, effect=_versus("sampled-softmax", larger=True), reads=("models", "recall_segments"),
           section="sb-recall", unit="points"),
    better("depth-gap", "Going deeper helps Superbloom far more than the unhashed baseline", headline=True,
           where="Introduction; §3.4, Table 3",
           quote=("For instance, we find that the model quality gap between a one layer and a twelve layer "
                  "Transformer model is significantly larger when using Bloom filter digests, compared to that when "
                  "the vocabulary is not hashed."),
           paper_value="superbloom 17.8% -> 43.4%; baseline 51.0% -> 55.0% (rec@1)", effect=_depth_gap,
           reads=("models", "recall_segments"), section="sb-recall", unit="points"),
    better("depth-superbloom", "Superbloom's recall improves with more layers", where="§3.4, Table 3",
           quote="However, for Superbloom models, the quality improves significantly with more layers.",
           paper_value="17.8% -> 43.4% (rec@1)", effect=_superbloom_depth, reads=("models", "recall_segments"),
           section="sb-recall", unit="points"),
    better("sampled-worse", "The sampled-softmax model recalls worse than the unhashed baseline",
           where="§3.3, Table 2",
           quote=("We note that the sampled-softmax model has much worse rec@k than the other two models, and this gap "
                  "is larger for smaller k."), effect=_sampled_below_baseline, reads=("models", "recall_segments"),
           section="sb-recall", unit="points"),
    better("all-deciles", "Superbloom beats the baseline of similar size in every label-frequency decile",
           where="§3.3, Fig. 3", quote="We can observe that Superbloom is more accurate than the baseline in all the "
           "buckets.", effect=_all_deciles, reads=("models", "recall_segments"), section="sb-recall", unit="points"),
    better("deep-vs-wide", "A deep Superbloom model beats a one-layer one of the same size", where="§3.4, Table 3",
           quote=("The multi-layer model also performs much better than the single layer model with the same size "
                  "(superbloom-d384l1)."),
           untestable=("needs a one-layer Superbloom model as large as the deep one (Table 3's superbloom-d384l1); no "
                       "profile trains one")),
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
                  "metric"), effect=_beam_k, reads=("beam_width", "recall"), section="sb-beam", unit="points"),
    value("softmax-200K", "Superbloom's softmax at the paper's vocabulary has about 200K hash tokens (2N / alpha)",
          printed="200K", where="Table 1 caption",
          quote=("For baseline and superbloom, since there is no sampling, this number corresponds to the full "
                 "vocabulary, 5.3M and 200K, respectively."), effect=_softmax_tokens, reads=("params",),
          section="sb-params", unit="tokens"),
    better("lm-similar", "On text, Superbloom beats unhashed baselines of comparable size at every recall cut-off",
           where="§4, Table 5",
           quote=("We observe that with comparable model size, Superbloom outperforms the baseline model in all the "
                  "recall metrics, and the improvement is more significant for smaller model size."),
           effect=_language_better, reads=("language", "language_models"), section="sb-language", unit="points"),
    better("lm-smaller", "On text, Superbloom's advantage is larger for the smaller pair of models",
           where="§4, Table 5",
           quote=("We observe that with comparable model size, Superbloom outperforms the baseline model in all the "
                  "recall metrics, and the improvement is more significant for smaller model size."),
           effect=_language_smaller, reads=("language", "language_models"), section="sb-language", unit="points"),
    better("train-time", "A smaller vocabulary significantly reduces training time", where="§2.4",
           quote=("Our experiments (see Section 3.3) show that the cost of updating E O dominates that of training, "
                  "and a reduction in vocabulary size allows us to significantly reduce training time without "
                  "resorting to negative sampling."),
           untestable=("the claim concerns a softmax over millions of ids, where updating the output matrix dominates; "
                       "our id sets are small enough that it does not, and wall times on a shared two-core machine "
                       "are not a speed measurement")),
    better("random-hashing", "Random hashing may outperform coherent (spelling-based) hashing", where="§4; Appendix D",
           quote=("As suggested by the experiments in Appendix D, random hashing with Superbloom digests may "
                  "outperform coherent hashing."),
           untestable="no coherent (spelling-based) hashing is trained here, and Appendix D is not in the source text"),
], scale=_scale)
