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

from typing import Any

import pandas as pd

from hashlib_core.claims import ClaimSet, Effect, Interval, NotTestable, better, ratio, value, within
from hashlib_core.params import humanize
from hashlib_core.papers.superbloom.claims_recall import (SIZE_TOLERANCE, _all_deciles, _depth_gap,
                                                          _superbloom_depth, _versus, _versus_every_k,
                                                          _worse_than_both, check_similar_sizes, hits, models, role,
                                                          seed_hits, segments)
from hashlib_core.papers.superbloom.claims_text import _language_better, _language_smaller, lm_floor
from hashlib_core.papers.superbloom.data import DATASET_NAMES
from hashlib_core.results import load_paper_table, parse_printed

__all__ = ["CLAIMS", "SIZE_TOLERANCE", "role", "models", "segments", "hits", "seed_hits", "check_similar_sizes",
           "lm_floor"]


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
    better("sampled-worse", "The sampled-softmax model recalls worse than both the unhashed baseline and Superbloom "
           "at every cut-off: the smallest of those differences is above zero",
           where="§3.3, Table 2",
           quote=("We note that the sampled-softmax model has much worse rec@k than the other two models, and this gap "
                  "is larger for smaller k."), effect=_worse_than_both,
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
