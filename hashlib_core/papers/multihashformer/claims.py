"""MultiHashFormer's claims, each with a verdict computed from the chapter's results.

The abstract's two headline claims come first (MHF beats Standard; vocabulary expansion adds no parameter), then
the claims of sections 5.1-5.3, 6 and Appendices A-B that the chapter's experiments speak to, then the printed
parameter counts (Table 1, Figure 3, section 5.3), then the claims that need the paper's benchmarks.

Uncertainty: the headline language-model claims read the scaling curve (several sizes, several seeds each, paired
bootstrap intervals over the test windows widened by the seeds' spread, flagged ``not-recomputable`` because the
per-window scores are not committed: :mod:`hashlib_core.papers.multihashformer.claims_scaling`), and the expansion
claims paired bootstraps over held-out sentences. The sweep, Single-ID and LSH models are trained once (one seed) and
scored without per-token scores, so those claims have no interval and are *inconclusive* whatever their estimate
(flags ``1 run``, ``no interval``). Card-660 correlations rest on 660 word pairs: a Pearson r has a Fisher z
interval, and two models' correlations are compared with Zou's interval for a difference
(:mod:`hashlib_core.claims.statistics`); where the baseline's own correlation is indistinguishable from zero the
comparison says *no signal*. The Appendix B word pairs keep both models' per-pair similarities, so they get a paired
bootstrap. Parameter counts and numerical ranks are exact.
"""
from __future__ import annotations

from typing import Any, Callable

import pandas as pd

from hashlib_core.claims import (
    Claim,
    ClaimSet,
    Effect,
    Interval,
    NoSignal,
    NotTestable,
    Region,
    better,
    correlation_difference,
    correlation_interval,
    kendall_tau,
    ordering,
    paired_bootstrap,
    value,
)
from hashlib_core.params import humanize
from hashlib_core.papers.multihashformer import claims_scaling as _scaling
from hashlib_core.papers.multihashformer.profiles import CORPORA
from hashlib_core.results import load_paper_table

__all__ = ["CLAIMS", "describe_scale"]

ONE_RUN = "one run: no interval (one seed; per-token scores not kept)"
#: the flags of an effect read from models trained once and scored without per-token scores
_ONCE = ("one-run", "not-recomputable")


# ----------------------------------------------------------------------------------------------- reading results
def _profile_name(ev: Any) -> str:
    return getattr(getattr(ev, "profile", None), "name", "?")


def _deeper(names) -> str | None:
    """The Standard+kL model among ``names`` (``Standard+2L`` in small, ``Standard+1L`` in cpu)."""
    return next((m for m in names if str(m).startswith("Standard+")), None)


def _row(ev: Any, table: str, model: str, frame: pd.DataFrame | None = None) -> pd.Series:
    """The row of ``model`` in result ``table`` (or in ``frame``, a selection of it); ``Standard+kL`` names the
    profile's deeper baseline."""
    t = (ev.table(table) if frame is None else frame).set_index("model")
    name = _deeper(t.index) if model == "Standard+kL" else model
    if name is None or name not in t.index:
        raise NotTestable(f"{model} is not in {table} of the {_profile_name(ev)} profile")
    row = t.loc[name].astype(object)
    row["name"] = name
    return row


def _acc(row: pd.Series) -> str:
    return f"{row['name']} {row['test_accuracy_%']:.2f}%"  # a trained model's next-token accuracy, as shown


def _sweep_all_beat_standard(ev: Any) -> Effect:
    sweep = ev.table("hb_sweep")
    std = _row(ev, "hb_sweep", "Standard")
    mhf = sweep[sweep["H"] > 0]
    if mhf.empty:
        raise NotTestable(f"no (H, B) variant in hb_sweep of the {_profile_name(ev)} profile")
    worst = mhf.loc[mhf["test_accuracy_%"].idxmin()]
    above = int((mhf["test_accuracy_%"] > std["test_accuracy_%"]).sum())
    d = float(worst["test_accuracy_%"] - std["test_accuracy_%"])
    return Effect(Interval(d, method=ONE_RUN), f"{above} of {len(mhf)} variants above {_acc(std)}; the lowest, "
                  f"{worst['model']}, {worst['test_accuracy_%']:.2f}%", unit="points",
                  note="effect: the lowest variant's accuracy minus Standard's", flags=_ONCE)


def _card660(mhf: str, baseline: str) -> Callable[[Any], Effect]:
    """Pearson r of ``mhf`` minus ``baseline`` (second-to-last layer, last token), compared only where the
    baseline's own interval excludes zero."""
    def effect(ev: Any) -> Effect:
        card = ev.table("card660")
        card = card[(card["layer"] == "second_to_last") & (card["pooling"] == "last_token")]
        m, b = _row(ev, "card660", mhf, card), _row(ev, "card660", baseline, card)
        ib = correlation_interval(float(b["pearson_r"]), int(b["pairs"]))
        if ib.low <= 0.0 <= ib.high:
            raise NoSignal(f"{b['name']}'s own correlation with human similarity is indistinguishable from zero at "
                           f"this scale: r = {ib.estimate:.3f}, 95% interval [{ib.low:.3f}, {ib.high:.3f}] (Fisher z, "
                           f"{ib.n} pairs); {m['name']}: r = {m['pearson_r']:.3f}")
        iv = correlation_difference(float(m["pearson_r"]), int(m["pairs"]), float(b["pearson_r"]), int(b["pairs"]))
        return Effect(iv, f"{m['name']} r = {m['pearson_r']:.3f} vs {b['name']} r = {b['pearson_r']:.3f}",
                      unit="r", note="both correlations are computed on the same pairs, which the interval treats as "
                                     "independent (the per-pair similarities a paired bootstrap needs are not kept): "
                                     "it is approximate", flags=_ONCE)
    return effect


def _equivalent_pairs(ev: Any) -> Effect:
    ex = ev.table("card660_examples")
    ex = ex[ex["table"] == "Table 5"]
    a, b = "ours H4B16K", "ours Standard"
    if a not in ex.columns or b not in ex.columns or len(ex) < 2:
        raise NotTestable(f"H4B16K and Standard similarities of the Table 5 pairs are not in the "
                          f"{_profile_name(ev)} profile")
    iv = paired_bootstrap(ex[a].to_numpy(float), ex[b].to_numpy(float), items="Table 5 word pairs")
    higher = int((ex[a] > ex[b]).sum())
    return Effect(iv, f"mean cosine H4B16K {ex[a].mean():.2f} vs Standard {ex[b].mean():.2f}; higher on {higher} "
                  f"of {len(ex)} pairs", unit="cosine",
                  note="raw cosines, as Table 5 compares them: a model whose cosines run higher on every pair wins "
                       "such a comparison without telling equivalent pairs apart any better; one trained model each",
                  flags=("one-run",))


def _single_multi(ev: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    svm = ev.table("single_vs_multi")
    h1 = svm[svm["H"] == 1].set_index("bucket_label")
    h4 = svm[svm["H"] == 4].set_index("bucket_label")
    shared = [b for b in h1.index if b in h4.index]
    if not shared:
        raise NotTestable(f"no bucket size with both H1 and H4 in the {_profile_name(ev)} profile")
    return h1.loc[shared], h4.loc[shared]


def _multi_beats_single(ev: Any) -> Effect:
    h1, h4 = _single_multi(ev)
    gap = h4["test_accuracy_%"] - h1["test_accuracy_%"]
    text = "; ".join(f"{b}: H4 {h4.loc[b, 'test_accuracy_%']:.2f}% vs H1 {h1.loc[b, 'test_accuracy_%']:.2f}%"
                     for b in gap.index)
    return Effect(Interval(float(gap.min()), method=ONE_RUN), text, unit="points",
                  note="effect: the smallest H4 - H1 gap over the bucket sizes", flags=_ONCE)


def _gap_shrinks(ev: Any) -> Effect:
    h1, h4 = _single_multi(ev)
    t3 = load_paper_table("multihashformer_table3").set_index("MHF")
    shared = [b for b in h1.index if b in t3.columns]
    if len(shared) < 2:
        raise NotTestable(f"fewer than two of the paper's bucket sizes in the {_profile_name(ev)} profile")
    paper = [float(t3.loc["H4", b]) - float(t3.loc["H1", b]) for b in shared]
    ours = [float(h4.loc[b, "test_accuracy_%"] - h1.loc[b, "test_accuracy_%"]) for b in shared]
    tau = kendall_tau(paper, ours)
    return Effect(Interval(tau, method=f"Kendall's tau over {len(shared)} bucket sizes; {ONE_RUN}"),
                  "H4 - H1 gap " + ", ".join(f"{b} {g:.2f}" for b, g in zip(shared, ours)), unit="tau", flags=_ONCE)


def _multi_beats_buckets(ev: Any) -> Effect:
    svm = ev.table("single_vs_multi")
    h4, h1 = svm[svm["H"] == 4], svm[svm["H"] == 1]
    if h4.empty or h1.empty:
        raise NotTestable(f"H1 or H4 models missing from single_vs_multi of the {_profile_name(ev)} profile")
    small, large = h4.loc[h4["B"].idxmin()], h1.loc[h1["B"].idxmax()]
    d = float(small["test_accuracy_%"] - large["test_accuracy_%"])
    return Effect(Interval(d, method=ONE_RUN), f"{small['model']} (B = {int(small['B']):,}) "
                  f"{small['test_accuracy_%']:.2f}% vs {large['model']} (B = {int(large['B']):,}) "
                  f"{large['test_accuracy_%']:.2f}%", unit="points", flags=_ONCE)


def _rank_above(ev: Any) -> Effect:
    rk = ev.table("rank")
    mhf = rk[rk["H"] > 0]
    if mhf.empty:
        raise NotTestable(f"no MHF model in rank of the {_profile_name(ev)} profile")
    margin = mhf["numerical_rank"] - (mhf["d"] + 1)
    d = int(mhf["d"].iloc[0])
    std = rk[rk["model"] == "Standard"]
    std_text = f"; Standard {int(std['numerical_rank'].iloc[0])}" if not std.empty else ""
    ours = ", ".join(f"{m} {int(r)}" for m, r in zip(mhf["model"], mhf["numerical_rank"]))
    return Effect.exactly(float(margin.min()), f"numerical rank {ours} vs d + 1 = {d + 1}{std_text}",
                          unit="ranks", method=f"exact: numerical rank of the trained models' log-probability "
                          f"matrix over {int(mhf['contexts'].iloc[0]):,} test contexts (one trained model each)",
                          note="effect: the smallest MHF rank minus d + 1")


def _new_params(ev: Any) -> Effect:
    ep = ev.table("expansion_params")
    mhf = ep[ep["model"] != "Standard"]
    if mhf.empty:
        raise NotTestable(f"no MHF model was expanded in the {_profile_name(ev)} profile")
    r = mhf.loc[mhf["new_params"].idxmax()]
    return Effect.exactly(float(r["new_params"]), f"{r['model']}: {int(r['params_before']):,} parameters before "
                          f"and {int(r['params_after']):,} after {int(r['new_tokens']):,} new tokens",
                          unit="parameters", method="exact: counted from the model before and after expansion")


_PAPER_SCALE = "the paper's model sizes (Tables 1, 7, 8), built on the meta device and counted"
_COUNTED = "exact: counted from the model built on the meta device"


def _counted(n: float, ours: str, *, unit: str = "parameters", method: str = _COUNTED,
             scale: str = _PAPER_SCALE) -> Effect:
    """An exact count at the paper's scale (not the profile's: the scale sentence says so)."""
    return Effect(Interval(float(n), float(n), float(n), method), ours, unit, True, scale)


def _standard_new_params(ev: Any) -> Effect:
    r = _row(ev, "expansion_paper_scale", "Standard")
    return _counted(r["new_params"], f"{humanize(r['new_params'], 2)} ({int(r['new_params']):,})",
                    method="exact: the 1B Standard counted before and after expansion (meta device)")


def _growth(ev: Any) -> Effect:
    r = _row(ev, "expansion_paper_scale", "Standard")
    return _counted(r["growth_%"], f"{r['growth_%']:.2f}% ({int(r['new_tokens']):,} tokens over "
                    f"{int(r['vocab_before']):,})", unit="%", method="exact: arithmetic",
                    scale="the vocabulary sizes of Tables 7 and 8")


def _table1_emb(size: str, model: str) -> Callable[[Any], Effect]:
    def effect(ev: Any) -> Effect:
        t1 = ev.table("table1_params").set_index(["size", "model"])
        if (size, model) not in t1.index:
            raise NotTestable(f"{size} {model} is not counted")
        n = float(t1.loc[(size, model), "emb"])
        return _counted(n, f"{humanize(n, 2)} ({int(n):,})")
    return effect


def _fig3(variant: str) -> Callable[[Any], Effect]:
    def effect(ev: Any) -> Effect:
        f3 = ev.table("fig3_params").set_index(["size", "variant"])["emb_params"]
        if ("1B", variant) not in f3.index:
            raise NotTestable(f"{variant} is not counted at 1B")
        n = float(f3[("1B", variant)])
        small = f"; {humanize(float(f3[('100M', variant)]), 1)} on the 100M backbone" if ("100M", variant) in f3 else ""
        return _counted(n, f"{humanize(n, 1)} at 1B{small}")
    return effect


def _lsh_trend(ev: Any) -> Effect:
    lsh = ev.table("lsh_mix").sort_values("lsh")
    if len(lsh) < 2:
        raise NotTestable(f"fewer than two LSH:MMH3 splits in the {_profile_name(ev)} profile")
    tau = kendall_tau(lsh["lsh"].astype(float), lsh["test_accuracy_%"])
    return Effect(Interval(tau, method=f"Kendall's tau over {len(lsh)} splits; {ONE_RUN}"),
                  ", ".join(f"{m} {a:.2f}%" for m, a in zip(lsh["mix"], lsh["test_accuracy_%"])), unit="tau",
                  note="tau between LSH coordinates and accuracy; 1 would be a gain with every added LSH coordinate",
                  flags=_ONCE)


# ----------------------------------------------------------------------------------------------- the claims
def describe_scale(p: Any) -> str:
    """The scale the language-model verdicts were tested at, from the profile's settings."""
    test = "the whole" if p.max_eval_tokens == 0 else f"the first {p.max_eval_tokens:,} tokens of the"
    return (f"{p.name} profile: Qwen3 backbone d = {p.hidden_size}, {p.num_layers} layers (+{p.added_layers} for "
            f"Standard+kL), V = {p.vocab_size:,}, {p.max_steps:,} steps of {p.batch_size} x {p.seq_len} tokens on "
            f"{CORPORA[p.corpus]}; scored on {test} test split; {_scaling.describe_curve(p)}")


_T1 = load_paper_table("multihashformer_table1").set_index(["scale", "model"])["#Param_Emb"]
_T1_QUOTE = "Table 1: Performance of standard and our MULTIHASHFORMER models. Bold denotes best performance."
_FIG3_QUOTE = ("Specifically, the best-performing variant improves over the lowest by only 4%, despite a tenfold "
               "increase in parameter count from 10M to 102M.")
_FIG2 = "Figure 2 caption; §5.3"
_CARD_QUOTE = ("The MULTIHASHFORMER variants consistently outperform Standard models while maintaining an equivalent "
               "parameter count.")


def _table5_higher() -> str:
    """How many of Table 5's pairs the paper's 1B H4B16K scores above its Standard (from the transcribed table)."""
    t5 = load_paper_table("multihashformer_table5")
    higher = int((t5["H4B16K"].astype(float) > t5["Std."].astype(float)).sum())
    return f"H4B16K above Std. on {higher} of {len(t5)} pairs"


_CLAIMS: list[Claim] = [
    better("headline-lm", "MultiHashFormer (H4B16K) predicts text better than a Standard LM of the same decoder, at "
           "every scale", headline=True,
           where="Abstract", quote="We evaluate our approach at the 100M, 1B and 3B parameter scales, demonstrating "
           "that MULTIHASHFORMER consistently outperforms standard Transformer LMs across multiple benchmarks.",
           paper_value="LAMBADA 35.34 vs 30.41 (1B), 37.26 vs 28.64 (3B)",
           effect=_scaling.scale_gap(lambda m: m == "H4B16K"), reads=("scaling_gaps", "scaling_runs"), section="mhf-scaling"),
    value("headline-expansion", "Expanding MHF's vocabulary adds no parameter", between=(0.0, 0.0), headline=True,
          where="Abstract", quote="Furthermore, we show that our model handles multilingual vocabulary expansion "
          "with a constant parameter footprint without any modifications.", paper_value="0 new parameters",
          effect=_new_params, reads=("expansion_params",), section="mhf-expansion"),
    better("matched-h3", "At equal total parameters, an H3 MHF beats Standard at every scale (the paper's H3B10K; at "
           "a smaller vocabulary the H3 whose total matches)", where="§5.1",
           quote="Specifically, MHF (H3B10K) and MHF (H4B16K) outperform Standard and Standard+2L baselines on 8 out "
           "of 10 tasks, respectively.", paper_value="8 of 10 tasks (1B)",
           effect=_scaling.scale_gap(lambda m: m.startswith("H3"), matched=True), reads=("scaling_gaps", "scaling_runs"),
           section="mhf-scaling"),
    better("deeper-at-small-scale", "At the smallest scale, a deeper Standard (+kL) beats every MHF", where="§5.1",
           quote="At the 100M scale, the decoder size is more important than the vocabulary representation.",
           paper_value="Standard+4L better on 7 tasks (100M)", effect=_scaling.deeper_at_smallest,
           reads=("scaling_gaps", "scaling_runs"), section="mhf-scaling"),
    better("embeddings-over-layers", "With scale, MHF's (H4B16K) gain over a deeper Standard (+kL) grows",
           where="§5.1",
           quote="the embeddings improves performance more than adding more layers to the model on larger scales.",
           paper_value="100M: Standard+4L better on 7 tasks; 1B: H4B16K better on 8 of 10",
           effect=_scaling.gap_trend("H4B16K", deep=True), reads=("scaling_trend", "scaling_gaps", "scaling_runs"),
           section="mhf-scaling"),
    better("sweep-all-beat-standard", "Every (H, B) variant beats Standard, the smaller embeddings included",
           where="§6, Figure 3", quote="All MULTIHASHFORMER configurations consistently outperform Standard on "
           "Language Modeling and Commonsense Reasoning, including variants that utilize strictly smaller embedding "
           "matrices, such as H3B4K, H4B4K, and H3B8K.", effect=_sweep_all_beat_standard, reads=("hb_sweep",),
           section="mhf-hb"),
    better("card660-h3", "On Card-660, MHF (H3B10K) correlates better with human similarity than Standard",
           where="§5.2, Table 2", quote=_CARD_QUOTE, paper_value="Pearson r 0.32 vs 0.26 (second-to-last)",
           effect=_card660("H3B10K", "Standard"), reads=("card660",), section="mhf-card660"),
    better("card660-h4", "On Card-660, MHF (H4B16K) correlates better with human similarity than Standard+kL",
           where="§5.2, Table 2", quote=_CARD_QUOTE, paper_value="Pearson r 0.30 vs 0.29 (second-to-last)",
           effect=_card660("H4B16K", "Standard+kL"), reads=("card660",), section="mhf-card660"),
    better("card660-equivalent-pairs", "MHF gives the equivalent word pairs of Table 5 higher similarity than "
           "Standard", where="Appendix B, Table 5", quote="Compared to the Standard baseline, MULTIHASHFORMER "
           "consistently assigns higher similarity scores to semantically equivalent word pairs, such as "
           "abbreviations, aliases, misspellings, and synonyms.", paper_value=_table5_higher(),
           effect=_equivalent_pairs, reads=("card660_examples",), section="mhf-card660"),
    better("multi-beats-single", "Multi-ID (H4) signatures beat Single-ID (H1) at every bucket size",
           where="§6, Table 3", quote="Models with Multi-ID signatures consistently outperform those using "
           "Single-ID signatures across all configurations (B4K, B8K, and B16K).",
           paper_value="H4 30.27 / 30.47 / 30.91 vs H1 4.29 / 8.77 / 14.30", effect=_multi_beats_single,
           reads=("single_vs_multi",), section="mhf-single-multi"),
    ordering("single-gap-shrinks", "The Multi-ID advantage is largest at the fewest buckets", where="§6, Table 3",
             quote="Specifically, the performance difference is higher at lower bucket capacities (B4K), where "
             "H4B4K achieves 30.27% accuracy compared to the 4.29% of H1B4K.",
             paper_value="H4 30.27 / 30.47 / 30.91 vs H1 4.29 / 8.77 / 14.30 (B4K / B8K / B16K)",
             effect=_gap_shrinks, reads=("single_vs_multi",), section="mhf-single-multi"),
    better("multi-beats-more-buckets", "H4 at the fewest buckets beats H1 at the most buckets", where="§6, Table 3",
           quote="Employing Multi-ID signatures to prevent such collisions is more effective than increasing the "
           "number of hash buckets.", paper_value="H4B4K 30.27 vs H1B16K 14.30", effect=_multi_beats_buckets,
           reads=("single_vs_multi",), section="mhf-single-multi"),
    better("rank-above-d", "MHF's log-probability matrix has rank above Standard's bound d + 1", where="Appendix A",
           quote="While MultiHashFormer does not produce an arbitrary rank, it elevates the rank of the conditional "
           "distribution matrix.", paper_value="rank <= min(B, H d) vs <= d", effect=_rank_above, reads=("rank",),
           section="mhf-rank"),
    better("expansion-new-languages", "After expansion and CPT, MHF matches or beats Standard on most new "
           "languages (bits per byte no higher)", margin=0.5, where=_FIG2,
           quote="MULTIHASHFORMER (blue shades, diamond marker) are similar or better than Standard (orange shades, "
           "circle marker) at 1B and 3B scales after expanding the vocabulary from 32K to 48K without adding a "
           "single new parameter.", paper_value="12 and 13 of 22 multilingual tasks (1B, 3B)",
           effect=_scaling.new_languages, reads=("expansion_intervals",), section="mhf-expansion"),
    Claim("expansion-english", "After expansion, MHF forgets no more English than Standard", "§5.3",
          "This suggests that MULTIHASHFORMER does not suffer from more catastrophic forgetting relative to "
          "Standard.", "within", Region(low=0.0), effect=_scaling.english_forgetting, reads=("expansion_intervals",),
          paper_value="9 of 10 English tasks (H4B16K)", section="mhf-expansion", unit="bits per byte"),
    value("expansion-standard-params", "Standard needs 31M new parameters for the expanded vocabulary (1B)",
          printed="31M", where="§5.3", quote="They achieve this without the additional 31-million-parameters "
          "needed to accommodate 15K new tokens in the expanded vocabulary of the Standard baselines.",
          effect=_standard_new_params, reads=("expansion_paper_scale",), section="mhf-expansion"),
    value("expansion-growth", "The expanded vocabulary is 46.9% larger", printed="46.9%", where="§5.3",
          quote="It successfully supports a 46.9% larger multilingual vocabulary without a single additional "
          "parameter while preserving its core capabilities in English.",
          effect=_growth, reads=("expansion_paper_scale",), section="mhf-expansion"),
    *[value(f"t1-emb-{size}-{model.replace('MHF (', '').rstrip(')')}".lower(),
            f"Table 1: the {size} {model} has {_T1[(size, model)]} embedding parameters", printed=_T1[(size, model)],
            where=f"Table 1, #Param Emb, {size} {model}", quote=_T1_QUOTE,
            effect=_table1_emb(size, model), reads=("table1_params",),
            section="mhf-table1")
      for size in ("100M", "1B") for model in ("Standard", "MHF (H3B10K)", "MHF (H4B16K)")],
    value("fig3-smallest", "Figure 3's smallest variant (H3B4K, 1B) has 10M embedding parameters", printed="10M",
          where="§6, Figure 3", quote=_FIG3_QUOTE, effect=_fig3("H3B4K"),
          reads=("fig3_params",), section="mhf-table1"),
    value("fig3-largest", "Figure 3's largest variant (H4B32K, 1B) has 102M embedding parameters", printed="102M",
          where="§6, Figure 3", quote=_FIG3_QUOTE, effect=_fig3("H4B32K"),
          reads=("fig3_params",), section="mhf-table1"),
    Claim("lsh-no-consistent-gain", "More LSH coordinates do not raise accuracy consistently", "§6, Table 4",
          "Increasing the proportion of LSH functions while fixing the total number of hash functions does not "
          "yield a consistent accuracy improvement.", "ordering", Region(low=-1.0, high=1.0, high_open=True),
          effect=_lsh_trend, reads=("lsh_mix",), paper_value="30.91, 30.60, 30.80, 31.40, 31.36 (0:4 to 4:0)",
          section="mhf-lsh", unit="tau"),
    better("lambada-gains", "MHF (H4B16K) gains 4.93 and 8.62 LAMBADA points over Standard at 1B and 3B",
           where="§5.1", quote="Specifically, on the LAMBADA task, MHF (H4B16K) offers substantial gains of 4.93% "
           "and 8.62% over the Standard baseline (30.41% and 28.64%) at the 1B and 3B scales, respectively.",
           paper_value="+4.93, +8.62", section="mhf-lm",
           untestable="needs 1B and 3B models pre-trained on 100B FineWeb-Edu tokens and the LAMBADA benchmark; "
           "neither the corpus nor the benchmark is staged, and no profile trains at that scale"),
    better("mubench-wins", "After expansion, MHF (H4B16K) beats Standard on 12 and 13 of 22 multilingual tasks",
           where="§5.3", quote="Notably, both the 1B and 3B MHF (H4B16K) models consistently outperform Standard on "
           "12 and 13 out of 22 multilingual tasks, respectively.", paper_value="12 and 13 of 22",
           section="mhf-expansion",
           untestable="needs the MuBench tasks and 16K steps of continual pre-training of 1B/3B models on FineWeb2; "
           "neither is staged (the chapter measures bits per byte on Parallel UD instead)"),
]

def brief_scale(p: Any) -> str:
    """The scale in a few words (the scorecard's headline table)."""
    sizes = ", ".join(s.split("/")[0] for s in p.scale_sizes) if p.scale_sizes else str(p.hidden_size)
    return f"Qwen3 LMs d = {sizes}, {p.max_steps:,} steps on {CORPORA[p.corpus]}, {len(p.scale_seeds)} seeds"


CLAIMS = ClaimSet("multihashformer", "MultiHashFormer", _CLAIMS, scale=describe_scale, brief=brief_scale)
