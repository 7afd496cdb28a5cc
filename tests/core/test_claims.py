"""The claims layer: verdicts on fixed inputs, the statistics against known answers, the chapter plumbing
(derived results, staleness by evidence), the scorecard and the claims table."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from hashlib_core import book
from hashlib_core.chapter import Chapter, RunContext
from hashlib_core.claims import (
    FLAGS,
    VERDICTS,
    ClaimSet,
    NoSignal,
    auc_interval,
    bootstrap_means,
    combined,
    correlation_difference,
    correlation_interval,
    Effect,
    Interval,
    NotTestable,
    Region,
    better,
    evaluate_claims,
    kendall_tau,
    ordering,
    paired_bootstrap,
    printed_region,
    proportion_interval,
    ratio,
    ratio_of_means,
    resolving_factor,
    seed_contrast,
    seed_difference,
    seed_interval,
    stratified_bootstrap,
    value,
    verdict,
    within,
)
from hashlib_core.claims import scorecard
from hashlib_core.profiles import Profile, ProfileSet
from hashlib_core.results import store as results_store

SRC = dict(where="Table 1", quote="A is better than B.")


@dataclass
class FakeEvidence:
    tables: dict
    profile: object = None

    def has(self, name):
        return name in self.tables

    def table(self, name):
        return self.tables[name]

    def json(self, name):
        return self.tables[name]


def effect_of(estimate, low=None, high=None, exact=False):
    if exact:
        return lambda ev: Effect.exactly(estimate, f"{estimate}")
    return lambda ev: Effect(Interval(estimate, low, high, "fixed"), f"{estimate}")


# ------------------------------------------------------------------------------------------------ verdicts
@pytest.mark.parametrize("estimate, low, high, expected, leaning", [
    (2.0, 0.5, 3.5, "holds", ""),
    (1.0, -0.5, 2.5, "inconclusive", "leans to the paper"),
    (-1.0, -2.5, 0.5, "inconclusive", "leans against the paper"),
    (-2.0, -3.5, -0.5, "does not hold", ""),
    (0.0, 0.0, 0.0, "does not hold", ""),               # a tie is not "better"
])
def test_every_verdict_of_a_better_claim(estimate, low, high, expected, leaning):
    claim = better("c", "A beats B", effect=effect_of(estimate, low, high), reads=("t",), **SRC)
    row = evaluate_claims("P", [claim], FakeEvidence({"t": 1}), "scale").iloc[0]
    assert row["verdict"] == expected and row["lean"] == leaning
    assert row["estimate"] == estimate and row["low"] == low and row["high"] == high
    assert row["evidence"] == "empirical" and row["half_width"] == pytest.approx((high - low) / 2)


def test_the_words_are_five_and_no_verdict_leans():
    assert VERDICTS == ("holds", "does not hold", "inconclusive", "no signal", "not testable here")
    assert not any("direction" in v for v in VERDICTS)
    assert scorecard.VERDICT_COLOURS.keys() == set(VERDICTS)
    # inconclusive is neutral: never the colour of holds or of does not hold
    colours = scorecard.VERDICT_COLOURS
    assert colours["inconclusive"] not in (colours["holds"], colours["does not hold"])


def test_not_testable_is_reached_three_ways_and_never_dropped():
    declared = better("declared", "needs the paper's corpus", untestable="the corpus is not public", **SRC)
    missing = better("missing", "reads a result never written", effect=effect_of(1.0, 0.5, 2), reads=("absent",),
                     **SRC)

    def refuse(ev):
        raise NotTestable("CoLA is not fine-tuned in this profile")

    raised = better("raised", "needs CoLA", effect=refuse, reads=("t",), **SRC)
    table = evaluate_claims("P", [declared, missing, raised], FakeEvidence({"t": 1}, Profile(name="cpu")), "s")
    assert len(table) == 3
    assert set(table["verdict"]) == {"not testable here"}
    assert table["reason"].tolist() == ["the corpus is not public",
                                        "evidence missing: result(s) absent not written in the cpu profile",
                                        "CoLA is not fine-tuned in this profile"]


def test_no_signal_is_reached_two_ways_and_keeps_the_numbers_it_has():
    def floored(ev):
        raise NoSignal("every model stays at the majority class on CoLA")

    def tied(ev):
        return Effect(Interval(0.0, -0.1, 0.1, "fixed"), "A 50.9 vs B 50.9", no_signal="both at the floor")

    table = evaluate_claims("P", [better("a", "A beats B on CoLA", effect=floored, reads=("t",), **SRC),
                                  better("b", "A beats B", effect=tied, reads=("t",), **SRC)],
                            FakeEvidence({"t": 1}), "s").set_index("id")
    assert table["verdict"].tolist() == ["no signal", "no signal"]
    assert table.loc["a", "reason"] == "every model stays at the majority class on CoLA"
    assert pd.isna(table.loc["a", "estimate"])
    assert table.loc["b", "reason"] == "both at the floor" and table.loc["b", "estimate"] == 0.0
    assert table.loc["b", "lean"] == ""


def test_a_stochastic_effect_without_interval_is_inconclusive_and_flagged():
    region = Region(low=0, low_open=True)
    assert verdict(region, Effect(Interval(3.0, method="one seed"), "")) == "inconclusive"
    assert verdict(region, Effect(Interval(-3.0), "")) == "inconclusive"
    # the same number, exact (a parameter count), is its own interval
    assert verdict(region, Effect.exactly(3.0, "")) == "holds"
    assert verdict(region, Effect.exactly(-3.0, "")) == "does not hold"
    once = better("c", "A beats B", effect=lambda ev: Effect(Interval(3.0), "", flags=("one-run",)), reads=("t",),
                  **SRC)
    row = evaluate_claims("P", [once], FakeEvidence({"t": 1}), "s").iloc[0]
    assert row["flags"] == "one-run,no-interval" and row["lean"] == "leans to the paper"
    assert row["power"] == "no interval: the power of a single measurement is unknown"
    exact = evaluate_claims("P", [value("v", "23.4M", printed="23.4M", effect=effect_of(23_440_896, exact=True),
                                        reads=("t",), **SRC)], FakeEvidence({"t": 1}), "s").iloc[0]
    assert exact["evidence"] == "exact" and exact["flags"] == "" and exact["power"] == ""
    assert pd.isna(exact["half_width"])
    with pytest.raises(ValueError, match="unknown flag"):
        Effect(Interval(1.0), "", flags=("maybe",))


def test_the_underpowered_rule_on_fixed_inputs():
    """A 0.4-point tolerance against an interval of half-width 2.2 over 1,000 items and the seeds: inconclusive,
    underpowered, and (2.2 / 0.4)^2 = 30.25 times the items would resolve it."""
    wide = Interval(-0.5, -2.7, 1.7, "fixed", n=1000, covers=("items", "seeds"))
    claim = within("w", "A within 0.4 of B", tolerance=0.4, one_sided=True, effect=lambda ev: Effect(wide, "",
                                                                                                       unit="points"),
                   reads=("t",), **SRC)
    row = evaluate_claims("P", [claim], FakeEvidence({"t": 1}), "s").iloc[0]
    assert row["verdict"] == "inconclusive" and row["lean"] == "underpowered; leans against the paper"
    assert row["flags"] == "underpowered" and row["resolve"] == 0.4
    assert row["power"] == ("underpowered: half-width 2.20 points, above the paper's tolerance 0.4 points; at this "
                            "variance about 30.2x as many test items and training runs (30,250 items) would resolve "
                            "it")
    assert resolving_factor(wide, 0.4) == pytest.approx(30.25)
    # an interval as wide that lies wholly outside a two-sided tolerance settles the claim: not underpowered
    outside = within("o", "A within 1 of B", tolerance=1.0,
                     effect=lambda ev: Effect(Interval(-44.0, -45.5, -42.5, "fixed", n=4386), ""), reads=("t",),
                     **SRC)
    row = evaluate_claims("P", [outside], FakeEvidence({"t": 1}), "s").iloc[0]
    assert row["verdict"] == "does not hold" and row["flags"] == "" and "the claim is settled" in row["power"]
    # narrow enough: the test would resolve the paper's effect
    narrow = better("n", "A beats B", resolve=3.0, resolve_note="gap",
                    effect=lambda ev: Effect(Interval(0.5, -0.5, 1.5, "fixed", n=800), ""), reads=("t",), **SRC)
    row = evaluate_claims("P", [narrow], FakeEvidence({"t": 1}), "s").iloc[0]
    assert row["verdict"] == "inconclusive" and row["lean"] == "leans to the paper"
    assert row["power"] == "half-width 1.00, below the paper's gap 3.00: the test would resolve an effect of the " \
                           "paper's size"
    # no effect size printed: the half-width alone
    none = better("x", "A beats B", effect=lambda ev: Effect(Interval(0.5, -0.5, 1.5, "fixed"), ""), reads=("t",),
                  **SRC)
    assert evaluate_claims("P", [none], FakeEvidence({"t": 1}), "s").iloc[0]["power"] == \
        "half-width 1.00; the paper prints no effect size to resolve"
    with pytest.raises(ValueError, match="resolve must be a positive"):
        better("bad", "s", resolve=-1.0, untestable="x", **SRC)


def test_within_ratio_ordering_and_value_regions():
    later = dict(SRC, untestable="regions only")
    two_sided = within("w", "A matches B", tolerance=1.0, **later).region
    one_sided = within("w", "A no worse than B", tolerance=1.0, one_sided=True, **later).region
    assert two_sided.contains(-1.0) and two_sided.contains(1.0) and not two_sided.contains(1.01)
    assert one_sided.contains(50.0) and not one_sided.contains(-1.01)
    assert verdict(two_sided, Effect(Interval(0.2, -0.5, 0.9), "")) == "holds"
    assert verdict(two_sided, Effect(Interval(0.2, -1.5, 0.9), "")) == "inconclusive"
    assert verdict(two_sided, Effect(Interval(3.0, 2.0, 4.0), "")) == "does not hold"
    assert ratio("r", "2x faster", at_least=2.0, **later).region.describe("x") == ">= 2x"
    assert ratio("r", "about 15x", between=(12, 18), **later).region.describe() == "in [12, 18]"
    assert ratio("r", "faster", above=1.0, **later).region.describe("x") == "> 1x"
    assert ordering("o", "paper's order", **later).region.describe() == "in (0, 1]"
    printed = value("v", "23.4M parameters", printed="23.4M", **SRC, effect=effect_of(23_440_896, exact=True),
                    reads=("t",))
    assert printed.paper_value == "23.4M" and printed.region.describe() == "in [23.35M, 23.45M)"
    assert evaluate_claims("P", [printed], FakeEvidence({"t": 1}), "s")["verdict"][0] == "holds"
    # an integer's trailing zeros are not significant: "110M" stands for [105M, 115M), "38M" for [37.5M, 38.5M)
    rounded = value("v", "110M parameters", printed="110M", **SRC, effect=effect_of(109_482_240, exact=True),
                    reads=("t",))
    assert rounded.region.describe() == "in [105M, 115M)"
    assert evaluate_claims("P", [rounded], FakeEvidence({"t": 1}), "s")["verdict"][0] == "holds"
    off = value("v", "38M parameters", printed="38M", **SRC, effect=effect_of(38_603_520, exact=True), reads=("t",))
    assert evaluate_claims("P", [off], FakeEvidence({"t": 1}), "s")["verdict"][0] == "does not hold"
    assert printed_region("1.0M").describe() == "in [950K, 1.05M)"
    assert printed_region("0").describe() == "in [-0.5, 0.5)"


def test_bad_claims_are_refused_with_the_fix():
    with pytest.raises(ValueError, match="exactly one of an effect function or an 'untestable'"):
        better("c", "s", **SRC)
    with pytest.raises(ValueError, match="must name the results it reads"):
        better("c", "s", effect=effect_of(1.0), **SRC)
    with pytest.raises(ValueError, match="needs a statement"):
        better("c", "s", where="Table 1", quote=" ", untestable="x")
    with pytest.raises(ValueError, match="kind must be one of"):
        from hashlib_core.claims import Claim
        Claim("c", "s", "w", "q", "bigger", Region(), untestable="x")
    with pytest.raises(ValueError, match="exactly one of at_least, above or between"):
        ratio("r", "s", **SRC, untestable="x")
    with pytest.raises(ValueError, match="low <= high"):
        Region(low=2, high=1)
    with pytest.raises(ValueError, match="does not contain its estimate"):
        Interval(5.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="unique"):
        ClaimSet("x", "X", [better("a", "s", untestable="u", **SRC)] * 2, scale=str)
    with pytest.raises(ValueError, match="headline claims come first"):
        ClaimSet("x", "X", [better("a", "s", untestable="u", **SRC),
                            better("b", "s", untestable="u", headline=True, **SRC)], scale=str)


#: the verdicts an interval gives, from agreement with the paper to disagreement
VERDICT_RANK = {"holds": 0, "inconclusive": 1, "does not hold": 2}


@settings(max_examples=200, deadline=None)
@given(st.floats(-10, 10), st.floats(0, 5), st.floats(0, 5), st.floats(0.01, 5))
def test_moving_the_effect_towards_the_paper_never_worsens_the_verdict(estimate, below, above, shift):
    region = Region(low=0.0, low_open=True)
    before = Effect(Interval(estimate, estimate - below, estimate + above), "")
    after = Effect(Interval(estimate + shift, estimate + shift - below, estimate + shift + above), "")
    assert VERDICT_RANK[verdict(region, after)] <= VERDICT_RANK[verdict(region, before)]


# ---------------------------------------------------------------------------------------------- statistics
def test_seed_intervals_match_student_and_welch():
    a, b = [70.3, 71.3, 68.9], [68.8, 69.9, 67.1, 70.0]
    iv = seed_interval(a)
    lo, hi = stats.t.interval(0.95, len(a) - 1, loc=np.mean(a), scale=stats.sem(a))
    assert iv.estimate == pytest.approx(np.mean(a)) and (iv.low, iv.high) == (pytest.approx(lo), pytest.approx(hi))
    d = seed_difference(a, b)
    ci = stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    assert d.estimate == pytest.approx(np.mean(a) - np.mean(b))
    assert (d.low, d.high) == (pytest.approx(ci.low), pytest.approx(ci.high))
    assert seed_interval([3.0]).has_interval is False
    same = seed_interval([95.4, 95.4])             # no variation seen is not certainty: no interval
    assert same.estimate == 95.4 and not same.has_interval and "scored the same" in same.method
    assert seed_difference([1.0], [0.0, 2.0]).has_interval is False
    stuck = seed_difference([68.4] * 3, [68.4] * 3)
    assert stuck.estimate == 0.0 and not stuck.has_interval and "scored the same" in stuck.method
    with pytest.raises(ValueError, match="finite"):
        seed_interval([1.0, float("nan")])


def test_proportion_interval_is_wilsons():
    iv = proportion_interval(852, 893, items="test sentences")
    ci = stats.binomtest(852, 893).proportion_ci(0.95, method="wilson")
    assert iv.estimate == pytest.approx(100 * 852 / 893)
    assert (iv.low, iv.high) == (pytest.approx(100 * ci.low), pytest.approx(100 * ci.high))
    assert iv.method == "Wilson interval over 893 test sentences"
    assert proportion_interval(10, 10).high == 100.0
    with pytest.raises(ValueError, match="successes"):
        proportion_interval(11, 10)


def test_ratio_of_means_is_the_delta_method_over_seeds():
    a, b = np.array([61.0, 63.5, 60.2]), np.array([70.1, 71.3, 69.0])
    iv = ratio_of_means(a, b)
    r = a.mean() / b.mean()
    welch = stats.ttest_ind(a, r * b, equal_var=False).confidence_interval(0.95)
    assert iv.estimate == pytest.approx(100 * r)
    assert iv.low == pytest.approx(100 * r + 100 * welch.low / b.mean())
    assert iv.high == pytest.approx(100 * r + 100 * welch.high / b.mean())
    assert not ratio_of_means([1.0], [2.0, 3.0]).has_interval
    with pytest.raises(ValueError, match="zero"):
        ratio_of_means([1.0, 2.0], [0.0, 0.0])


def test_paired_bootstrap_known_answers():
    rng = np.random.default_rng(1)
    a = rng.integers(0, 2, 500).astype(float)
    same = paired_bootstrap(a, a)
    assert (same.estimate, same.low, same.high) == (0.0, 0.0, 0.0)
    shifted = paired_bootstrap(a + 0.25, a)            # every item better by exactly 0.25
    assert shifted.estimate == pytest.approx(0.25) and shifted.low == pytest.approx(0.25)
    assert shifted.high == pytest.approx(0.25)
    # large n: the percentile interval agrees with the normal-theory paired interval
    x = rng.integers(0, 2, 4000).astype(float)
    y = np.where(rng.random(4000) < 0.1, 1 - x, x)     # B disagrees with A on about 10% of the items
    boot = paired_bootstrap(x, y, resamples=4000, seed=3)
    diff = x - y
    half = 1.96 * diff.std(ddof=1) / math.sqrt(diff.size)
    assert boot.estimate == pytest.approx(diff.mean())
    assert boot.low == pytest.approx(diff.mean() - half, abs=0.25 * half)
    assert boot.high == pytest.approx(diff.mean() + half, abs=0.25 * half)
    assert "paired bootstrap over 4,000 items (4,000 resamples)" == boot.method
    assert boot.covers == ("items",)


def test_the_two_level_bootstrap_against_a_hand_computed_case():
    """Model A's two runs: one right on every item, one wrong on every item; B always wrong. Resampling the items
    changes nothing (every item alike), so the interval is the seeds' alone: A's mean over two runs drawn with
    replacement is 0, 0.5 or 1 with chances 1/4, 1/2, 1/4, and the 2.5th and 97.5th percentiles of A - B are 0 and
    1. Resampling the items only (seeds averaged per item) sees no variation at all."""
    a = np.stack([np.ones(50), np.zeros(50)])
    b = np.zeros((3, 50))
    two = paired_bootstrap(a, b, resamples=4000)
    assert (two.estimate, two.low, two.high) == (0.5, 0.0, 1.0)
    assert two.covers == ("items", "seeds")
    assert two.method == ("paired bootstrap over 50 items (4,000 resamples; each model's seeds resampled too (a: 2 "
                          "seeds, b: 3 seeds))")
    one = paired_bootstrap(a, b, resamples=4000, seeds=False)
    assert (one.estimate, one.low, one.high) == (0.5, 0.5, 0.5) and one.covers == ("items",)
    # identical runs: the second level changes nothing, so the interval is the items' alone, bit for bit
    rng = np.random.default_rng(4)
    x, y = rng.integers(0, 2, 300).astype(float), rng.integers(0, 2, 300).astype(float)
    stacked = paired_bootstrap(np.stack([x, x, x]), np.stack([y, y]), resamples=500, seed=7)
    single = paired_bootstrap(x, y, resamples=500, seed=7)
    assert (stacked.low, stacked.high) == pytest.approx((single.low, single.high))


def test_bootstrap_means_combines_several_models_vectorised():
    rng = np.random.default_rng(6)
    m = {k: rng.integers(0, 2, (3, 200)).astype(float) for k in ("sd", "ss", "bd", "bs")}
    iv = bootstrap_means(m, lambda s: (s["sd"] - s["ss"]) - (s["bd"] - s["bs"]), resamples=300)
    assert iv.estimate == pytest.approx((m["sd"].mean() - m["ss"].mean()) - (m["bd"].mean() - m["bs"].mean()))
    assert iv.low < iv.estimate < iv.high
    with pytest.raises(ValueError, match="one value per resample"):
        bootstrap_means(m, lambda s: float(np.mean(s["sd"])), resamples=300)     # Python's float() of an array
    with pytest.raises(ValueError, match="different numbers of items"):
        bootstrap_means({"a": np.ones(3), "b": np.ones(4)}, lambda s: s["a"] - s["b"])


def test_scores_of_one_model_share_its_draws_of_runs():
    """A model's hits at two cut-offs come from the same training runs: with ``runs_of`` both are averaged over the
    same drawn runs in every resample, so two identical score sets differ by exactly nothing; drawn apart, they
    would not."""
    a = np.stack([np.ones(40), np.zeros(40)])
    scores = {"A@1": a, "A@10": a.copy()}
    shared = bootstrap_means(scores, lambda m: m["A@10"] - m["A@1"], runs_of={"A@1": "A", "A@10": "A"},
                             resamples=500)
    assert (shared.low, shared.high) == (0.0, 0.0)
    apart = bootstrap_means(scores, lambda m: m["A@10"] - m["A@1"], resamples=500)
    assert apart.low < 0.0 < apart.high
    with pytest.raises(ValueError, match="different numbers of runs"):
        bootstrap_means({"A@1": a, "A@10": a[:1]}, lambda m: m["A@1"], runs_of={"A@1": "A", "A@10": "A"})


def test_the_bootstrap_agrees_with_scipys_on_a_case_both_can_do():
    """A paired difference of means over 400 items, items only: scipy.stats.bootstrap's percentile interval and ours
    draw differently but estimate the same quantiles."""
    rng = np.random.default_rng(11)
    x = rng.normal(0.3, 1.0, 400)
    y = x - rng.normal(0.2, 0.5, 400)
    ours = paired_bootstrap(x, y, resamples=20000, seed=2)
    theirs = stats.bootstrap((x - y,), np.mean, n_resamples=20000, method="percentile", random_state=3,
                             confidence_level=0.95).confidence_interval
    width = theirs.high - theirs.low
    assert ours.low == pytest.approx(theirs.low, abs=0.03 * width)
    assert ours.high == pytest.approx(theirs.high, abs=0.03 * width)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 60), st.integers(0, 2 ** 31 - 1))
def test_metrics_on_counts_equal_the_metrics_on_the_drawn_items(n, seed):
    """The fast path (a resample as item counts) and the reference path (the drawn items themselves) score alike:
    accuracy, MCC and Spearman with ties."""
    from sklearn.metrics import matthews_corrcoef

    from hashlib_core.claims.glue import task_metric, weighted_task_metric
    from hashlib_core.claims.bootstrap import item_counts

    rng = np.random.default_rng(seed)
    gold, pred = rng.integers(0, 2, n), rng.integers(0, 2, n)
    score, truth = rng.integers(0, 5, n).astype(float), rng.integers(0, 4, n).astype(float)
    draws = rng.integers(0, n, (5, n))
    counts = np.stack([np.bincount(d, minlength=n) for d in draws]).astype(float)
    for task, p, g in (("sst2", pred, gold), ("cola", pred, gold), ("stsb", score, truth)):
        fast = weighted_task_metric(task, p, g, counts)
        slow = [task_metric(task, p[d], g[d]) for d in draws]
        assert fast == pytest.approx(slow, abs=1e-9), task
    if len(set(gold) | set(pred)) == 2:                # scikit-learn warns on a single label
        assert task_metric("cola", pred, gold) == pytest.approx(100 * matthews_corrcoef(gold, pred))
    c = item_counts(np.random.default_rng(seed), n, 7)
    assert c.shape == (7, n) and (c.sum(axis=1) == n).all()


def test_stratified_bootstrap_vectorised_and_combining_sets():
    from hashlib_core.claims.bootstrap import resampled_mean

    rng = np.random.default_rng(5)
    a, b = rng.random(200), rng.random(200)
    one = stratified_bootstrap([(200, lambda c, g: (resampled_mean(a[None], c, g), resampled_mean(b[None], c, g)))],
                               lambda v: v[0][0] - v[0][1], resamples=500, seed=3)
    ref = paired_bootstrap(a, b, resamples=500, seed=3)
    assert (one.estimate, one.low, one.high) == pytest.approx((ref.estimate, ref.low, ref.high))
    # two item sets where A beats B by exactly 1 and 3 on every item: the mean difference is 2, with no spread
    ones = lambda c, g: (1.0 + 0 * c.sum(axis=1), 0 * c.sum(axis=1))           # noqa: E731
    threes = lambda c, g: (3.0 + 0 * c.sum(axis=1), 0 * c.sum(axis=1))         # noqa: E731
    two = stratified_bootstrap([(50, ones), (80, threes)], lambda v: np.mean([x - y for x, y in v], axis=0),
                               resamples=200, items="dev items")
    assert (two.estimate, two.low, two.high) == (2.0, 2.0, 2.0)
    assert two.method == "paired bootstrap over 50 + 80 dev items (200 resamples, each set resampled on its own)"
    with pytest.raises(ValueError, match="at least 2 items"):
        stratified_bootstrap([(1, ones)], lambda v: v[0][0])


def test_seed_contrast_and_combining_items_with_seeds_by_hand():
    a, b = [70.3, 71.3, 68.9], [68.8, 69.9, 67.1, 70.0]
    d = seed_contrast([a, b], [1.0, -1.0])
    welch = seed_difference(a, b)
    assert (d.estimate, d.low, d.high) == pytest.approx((welch.estimate, welch.low, welch.high))
    # a difference of differences: four independent groups
    dd = seed_contrast([[1.0, 2.0], [0.0, 0.5], [3.0, 3.5], [1.0, 1.2]], [1, -1, -1, 1])
    assert dd.estimate == pytest.approx((1.5 - 0.25) - (3.25 - 1.1)) and dd.covers == ("seeds",)
    assert not seed_contrast([[1.0], [2.0, 3.0]], [1, -1]).has_interval
    items = Interval(-5.0, -5.3, -4.6, "paired bootstrap over 994 windows", n=994, covers=("items",))
    seeds = Interval(-5.1, -6.1, -4.1, "Welch t interval over seeds (3/3)", covers=("seeds",))
    both = combined(items, seeds)
    assert both.estimate == -5.0 and both.covers == ("items", "seeds")
    assert both.low == pytest.approx(-5.0 - math.hypot(0.3, 1.0))
    assert both.high == pytest.approx(-5.0 + math.hypot(0.4, 1.0))
    assert "added in quadrature" in both.method


def test_paired_bootstrap_refuses_bad_input():
    with pytest.raises(ValueError, match="different numbers of items"):
        paired_bootstrap([1, 0, 1], [1, 0])
    with pytest.raises(ValueError, match="at least 100"):
        paired_bootstrap([1, 0], [0, 1], resamples=10)
    with pytest.raises(ValueError, match="finite"):
        paired_bootstrap([1, np.nan], [0, 1])
    with pytest.raises(ValueError, match="metric, metric_b and n_items"):
        paired_bootstrap(metric=lambda i: 0.0)
    with pytest.raises(ValueError, match="non-finite"):
        paired_bootstrap(metric=lambda i: float("nan"), metric_b=lambda i: 0.0, n_items=10, resamples=100)
    with pytest.raises(ValueError, match="seed must be an integer >= 0"):
        paired_bootstrap([1, 0], [0, 1], seed=-1)
    with pytest.raises(ValueError, match="level must be in"):
        paired_bootstrap([1, 0], [0, 1], level=1.5)
    with pytest.raises(ValueError, match=r"scores: values must be numbers \(one per seed or item\), got \['a', 'b'\]"):
        seed_interval(["a", "b"])


def test_kendall_tau():
    assert kendall_tau([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert kendall_tau([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert kendall_tau([1, 1], [2, 2]) == 0.0                    # no ranking to agree with
    with pytest.raises(ValueError, match="equally long"):
        kendall_tau([1, 2], [1])


def test_fisher_interval_matches_the_formula():
    iv = correlation_interval(0.5, 103)                        # se of z = 1 / sqrt(100) = 0.1
    q = stats.norm.ppf(0.975)
    assert iv.low == pytest.approx(math.tanh(math.atanh(0.5) - q * 0.1))
    assert iv.high == pytest.approx(math.tanh(math.atanh(0.5) + q * 0.1))
    assert iv.estimate == 0.5 and iv.n == 103 and "Fisher z" in iv.method
    zero = correlation_interval(0.0, 660)
    assert zero.low == pytest.approx(-zero.high) and zero.low < 0 < zero.high
    with pytest.raises(ValueError):
        correlation_interval(1.0, 660)
    with pytest.raises(ValueError):
        correlation_interval(0.2, 3)


def test_correlation_difference_is_zous_interval():
    a, b = correlation_interval(0.4, 660), correlation_interval(0.3, 660)
    iv = correlation_difference(0.4, 660, 0.3, 660)
    assert iv.estimate == pytest.approx(0.1)
    assert iv.low == pytest.approx(0.1 - math.hypot(0.4 - a.low, b.high - 0.3))
    assert iv.high == pytest.approx(0.1 + math.hypot(a.high - 0.4, 0.3 - b.low))
    same = correlation_difference(0.3, 660, 0.3, 660)
    assert same.estimate == 0 and same.low == pytest.approx(-same.high)


def test_correlation_difference_covers_the_truth_about_95_percent_of_the_time():
    rng = np.random.default_rng(0)
    rho1, rho2, n, hits, reps = 0.3, 0.1, 660, 0, 400
    for _ in range(reps):
        r = []
        for rho in (rho1, rho2):
            x = rng.multivariate_normal([0, 0], [[1, rho], [rho, 1]], size=n)
            r.append(np.corrcoef(x.T)[0, 1])
        iv = correlation_difference(r[0], n, r[1], n)
        hits += iv.low <= rho1 - rho2 <= iv.high
    assert 0.91 <= hits / reps <= 0.99


def test_auc_and_spearman_intervals_known_answers():
    # at AUC 0.5, Hanley-McNeil's variance is Mann-Whitney's null variance (n1 + n2 + 1) / (12 n1 n2)
    iv = auc_interval(0.5, 10, 10)
    half = stats.norm.ppf(0.975) * math.sqrt(21 / 1200)
    assert (iv.low, iv.high) == (pytest.approx(0.5 - half), pytest.approx(0.5 + half))
    assert auc_interval(0.999, 1000, 1000).high <= 1.0
    rho = correlation_interval(0.0, 103, kind="spearman")                             # standard error 1 / 10 at rho = 0
    z = stats.norm.ppf(0.975)
    assert (rho.low, rho.high) == (pytest.approx(-math.tanh(0.1 * z)), pytest.approx(math.tanh(0.1 * z)))


# ---------------------------------------------------------------------------------- chapter plumbing
@dataclass(frozen=True)
class Toy(Profile):
    width: int = 2


PROFILES = ProfileSet(smoke=Toy(name="smoke"), cpu=Toy(name="cpu", width=4), small=Toy(name="small"),
                      paper=Toy(name="paper"))


def toy_chapter(calls):
    chapter = Chapter("toy", "Toy", PROFILES)

    @chapter.experiment("scores", outputs=("scores",))
    def scores(ctx: RunContext):
        calls.append("scores")
        return {"scores": pd.DataFrame({"model": ["A", "B"], "score": [ctx.profile.width + 1.0, 1.0]})}

    @chapter.experiment("other", outputs=("other",))
    def other(ctx: RunContext):
        calls.append("other")
        return {"other": pd.DataFrame({"x": [1]})}

    def a_minus_b(ev):
        s = ev.table("scores").set_index("model")["score"]
        return Effect.exactly(s["A"] - s["B"], f"A {s['A']} vs B {s['B']}")

    claims = ClaimSet("toy", "Toy paper", [
        better("a-beats-b", "A beats B", effect=a_minus_b, reads=("scores",), headline=True, **SRC),
        better("later", "needs a GPU", untestable="needs a GPU", **SRC),
    ], scale=lambda p: f"{p.name}: width {p.width}")

    def counted(ctx):
        calls.append("claims")
        return {"claims": claims.evaluate(ctx.evidence())}

    chapter.experiment("claims", outputs=("claims",), reads=claims.reads)(counted)
    return chapter, claims


def test_claims_experiment_reads_the_run_and_reruns_with_its_evidence(tmp_path, monkeypatch):
    monkeypatch.setattr(results_store, "git_state", lambda: {"git_commit": "c" * 40, "git_dirty": False})
    calls = []
    chapter, _ = toy_chapter(calls)
    store = chapter.run(PROFILES.cpu, progress=False, results_root=tmp_path)
    table = store.read_table("claims")
    assert table["verdict"].tolist() == ["holds", "not testable here"]
    assert table["scale"].tolist() == ["cpu: width 4"] * 2
    assert store.read_meta("claims")["inputs"] == {"scores": store.digest("scores")}
    assert chapter.stale("cpu", tmp_path) == {}
    # --only other: nothing the claims read changed, so they are not recomputed
    calls.clear()
    chapter.run(PROFILES.cpu, "other", progress=False, results_root=tmp_path)
    assert calls == ["other"]
    # --only scores: the claims that read it are recomputed with it
    calls.clear()
    chapter.run(PROFILES.cpu, "scores", progress=False, results_root=tmp_path)
    assert calls == ["scores", "claims"]


def test_verdicts_go_stale_when_their_evidence_changes(tmp_path, monkeypatch):
    monkeypatch.setattr(results_store, "git_state", lambda: {"git_commit": "c" * 40, "git_dirty": False})
    chapter, _ = toy_chapter([])
    store = chapter.run(PROFILES.cpu, progress=False, results_root=tmp_path)
    store.write_table("scores", pd.DataFrame({"model": ["A", "B"], "score": [0.0, 1.0]}), seed=0,
                      config=PROFILES.cpu.to_dict())
    assert chapter.stale("cpu", tmp_path) == {"claims": ["evidence: scores"]}
    profile, notes = chapter.committed(tmp_path)
    assert profile is None and "evidence: scores" in notes[0]


def test_a_claim_refuses_evidence_written_under_other_settings(tmp_path, monkeypatch):
    monkeypatch.setattr(results_store, "git_state", lambda: {"git_commit": "c" * 40, "git_dirty": False})
    chapter, _ = toy_chapter([])
    store = chapter.run(PROFILES.cpu, progress=False, results_root=tmp_path)
    # an older run's table: other settings, and a column the claim needs is gone
    store.write_table("scores", pd.DataFrame({"model": ["A", "B"]}), seed=0, config={**PROFILES.cpu.to_dict(),
                                                                                     "width": 9})
    table = chapter.run(PROFILES.cpu, "claims", progress=False, results_root=tmp_path).read_table("claims")
    row = table.set_index("id").loc["a-beats-b"]
    assert row["verdict"] == "not testable here"
    assert "evidence stale: scores was written under other settings (width)" in row["reason"]


def test_a_derived_experiment_must_follow_what_it_reads():
    chapter = Chapter("toy2", "Toy", PROFILES)
    with pytest.raises(ValueError, match="which no experiment registered before it writes"):
        chapter.experiment("claims", outputs=("claims",), reads=("scores",))(lambda ctx: {})


def test_scorecard_gathers_what_each_page_shows(tmp_path, monkeypatch):
    import hashlib_core.papers as papers

    monkeypatch.setattr(results_store, "git_state", lambda: {"git_commit": "c" * 40, "git_dirty": True})
    calls = []
    chapter, _ = toy_chapter(calls)
    monkeypatch.setattr(papers, "CHAPTERS", ("toy",))
    monkeypatch.setattr(papers, "chapter", lambda slug: chapter)
    chapter.run(PROFILES.cpu, progress=False, results_root=tmp_path)
    calls.clear()
    committed = scorecard.gather(source="committed", results_root=tmp_path)
    assert committed["profile"].tolist() == ["cpu", "cpu"] and calls == []
    assert committed["verdict"].tolist() == ["holds", "not testable here"]
    # live: results of this commit are reused even from a dirty tree (the chapters ran in the same build)
    scorecard.gather("smoke", "cpu", "live", results_root=tmp_path)
    assert calls == ["scores", "other", "claims"]
    scorecard.gather("smoke", "cpu", "live", results_root=tmp_path)
    assert calls == ["scores", "other", "claims"]


# ------------------------------------------------------------------------------------- scorecard, table
def _claims_frame():
    rows = []
    for paper, verdicts in (("P1", ["holds", "does not hold", "not testable here"]),
                            ("P2", ["inconclusive", "no signal", "holds"])):
        for i, v in enumerate(verdicts):
            exact = paper == "P2" and i == 2
            rows.append({"paper": paper, "id": f"c{i}", "headline": i == 0, "statement": f"claim <{i}>",
                         "where": "Abstract", "quote": "q & q", "kind": "better",
                         "evidence": "exact" if exact else "empirical", "paper_value": "79.1",
                         "ours": "61.0", "estimate": 1.5 if v != "not testable here" else None,
                         "low": 0.5 if v in ("holds", "inconclusive") else None,
                         "high": 2.5 if v in ("holds", "inconclusive") else None,
                         "level": 0.95, "method": "fixed", "half_width": 1.0 if v == "inconclusive" else None,
                         "resolve": 0.4 if v == "inconclusive" else None,
                         "power": "underpowered: half-width 1.00" if v == "inconclusive" else "",
                         "region": "> 0", "verdict": v,
                         "lean": "underpowered; leans to the paper" if v == "inconclusive" else "",
                         "flags": "cap,pt-once" if v == "inconclusive" else "",
                         "reason": {"not testable here": "no GPU", "no signal": "both at the floor"}.get(v, ""),
                         "scale": "cpu", "brief": "4 x 128 encoder", "section": "sec-x", "reads": "t",
                         "chapter": paper.lower(), "chapter_title": paper, "profile": "cpu"})
    return pd.DataFrame(rows)


def test_scorecard_counts_split_by_evidence_and_quotes():
    frame = _claims_frame()
    counts = scorecard.counts(frame)
    assert counts["paper"].tolist() == ["P1", "P2", "all papers"]
    assert counts.loc[0, ["holds", "does not hold", "not testable here", "claims"]].tolist() == [1, 1, 1, 3]
    assert counts.loc[2, "claims"] == 6 and counts.loc[2, "inconclusive"] == 1 and counts.loc[2, "holds"] == 2
    empirical, exact = scorecard.counts(frame, "empirical"), scorecard.counts(frame, "exact")
    assert empirical.loc[2, "claims"] == 5 and exact.loc[2, "claims"] == 1
    assert exact["paper"].tolist() == ["P1", "P2", "all papers"] and exact.loc[0, "claims"] == 0
    assert "inconclusive" not in exact.columns and "no signal" not in exact.columns
    quoted = scorecard.quoted(frame)
    assert quoted["n_claims"] == "6" and quoted["n_papers"] == "2"
    assert quoted["n_empirical"] == "5" and quoted["n_exact"] == "1" and quoted["n_exact_holds"] == "1"
    assert quoted["n_empirical_holds"] == "1" and quoted["n_empirical_inconclusive"] == "1"
    assert quoted["n_headline"] == "2" and quoted["n_headline_holds"] == "1"
    assert quoted["n_headline_inconclusive"] == "1"
    with pytest.raises(ValueError, match="unknown verdict"):
        scorecard.counts(frame.assign(verdict="holds in direction"))
    with pytest.raises(ValueError, match="evidence must be one of"):
        scorecard.counts(frame, "measured")
    fig = scorecard.counts_figure(frame)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["P2", "P1"]
    assert [ax.get_title() for ax in fig.axes] == [scorecard.EVIDENCE_LABELS["empirical"],
                                                   scorecard.EVIDENCE_LABELS["exact"]]


def test_claims_table_html():
    frame = _claims_frame()
    html = book.claims_table(frame[frame["paper"] == "P1"]).data
    assert 'class="hb-verdict hb-v-holds"' in html and 'class="hb-verdict hb-v-not-testable-here"' in html
    assert "<b>claim &lt;0&gt;</b>" in html                       # headline in bold, text escaped
    assert "1.50 [0.500, 2.50]" in html and 'href="#sec-x"' in html and "no GPU" in html
    assert html.count("<tr>") == 1 + 3                             # the header and one row per claim
    assert "hb-legend" not in html                                 # no flag, no legend
    # read back from a CSV, empty cells are NaN: no link, no "nan"
    untestable = frame.iloc[[2]].assign(section=float("nan"), paper_value=float("nan"), ours=float("nan"),
                                        lean=float("nan"), flags=float("nan"), power=float("nan"))
    html_nan = book.claims_table(untestable).data
    assert "nan" not in html_nan and "href" not in html_nan
    grouped = book.claims_table(frame, by_paper=True).data
    assert 'href="p1.html#sec-x"' in grouped and grouped.count('class="hb-group"') == 2
    assert "3 claims, cpu results" in grouped
    # inconclusive: a neutral badge, its lean in small type, its power and flags, and the legend of those flags
    assert 'class="hb-verdict hb-v-inconclusive"' in grouped
    assert '<span class="hb-lean">underpowered; leans to the paper</span>' in grouped
    assert "<i>power:</i> underpowered: half-width 1.00" in grouped and '<details class="hb-how">' in grouped
    assert "± 1.00 against the paper&#x27;s 0.400" in grouped
    assert f'<span class="hb-flag" title="{FLAGS["cap"][1]}">cap</span>' in grouped
    assert '<div class="hb-legend">' in grouped and FLAGS["pt-once"][1] in grouped
    assert "<i>no signal:</i> both at the floor" in grouped
    quotes = book.claims_quotes(frame).data
    assert "<q>q &amp; q</q>" in quotes and "A better than B" in quotes
    with pytest.raises(KeyError, match="not a claims table"):
        book.claims_table(frame.drop(columns=["verdict"]))
    with pytest.raises(KeyError, match="chapter"):
        book.claims_table(frame.drop(columns=["chapter"]), by_paper=True)


def test_the_scorecard_headline_table_lists_the_headline_empirical_claims():
    from hashlib_core.claims import html as claims_html

    frame = _claims_frame()
    table = claims_html.headline_table(frame, "headline").data
    # P1's and P2's first claims are headline and empirical; P2's exact claim is not a headline
    assert table.count("<tr>") == 1 + 2
    assert "4 x 128 encoder" in table and "cpu profile" in table
    assert "1.50 [0.500, 2.50]" in table and "± 1.00 against the paper&#x27;s 0.400" in table
    assert 'href="p1.html#sec-x"' in table and "hb-v-inconclusive" in table and "hb-legend" in table


# ------------------------------------------------------------------------------------ every chapter's claims
def chapter_claims():
    """``(slug, ClaimSet)`` of every chapter, in book order."""
    import importlib

    from hashlib_core.papers import CHAPTERS

    return [(slug, importlib.import_module(f"hashlib_core.papers.{slug}.claims").CLAIMS) for slug in CHAPTERS]


def test_every_chapter_lists_its_claims_and_tests_them_last():
    from hashlib_core.papers import chapter
    from hashlib_core.results import repo_root

    for slug, claims in chapter_claims():
        ch = chapter(slug)
        assert claims.slug == slug and len(claims.claims) >= 4, slug
        assert list(ch.experiments)[-1] == "claims", f"{slug}: the claims must be the chapter's last experiment"
        assert set(ch.experiments["claims"].reads) == set(claims.reads), slug
        if slug not in ("vocab_bottleneck", "families"):   # a paper's chapter opens with its abstract's claims
            assert claims.claims[0].headline, f"{slug}: the first claim must be a headline claim of the abstract"
        source = (repo_root() / "book" / "src" / f"{slug}.md").read_text(encoding="utf-8")
        labels = set(re.findall(r"^\(([\w-]+)\)=\s*$", source, re.M))
        # a testable claim links to its evidence; an untestable one may, if a section discusses it
        unlinked = [c.id for c in claims.claims if (c.section or not c.untestable) and c.section not in labels]
        assert not unlinked, f"{slug}: claims whose section label is not on the page: {unlinked}"
        assert "book.show_claims(shown)" in source, f"{slug}: the page does not show its claims"


def _normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("*", "")).strip()


def quote_found(quote: str, paragraphs: list[str]) -> bool:
    """Whether ``quote`` (normalised) is in the text: whole, or split where a table or a page break cuts the
    sentence (its first part ends a paragraph and the rest starts one of the next twenty)."""
    if quote in " ".join(paragraphs):
        return True
    for cut in range(1, len(quote)):
        head, tail = quote[:cut].rstrip(), quote[cut:].strip()
        if not head or not tail:
            continue
        for i, paragraph in enumerate(paragraphs):
            if paragraph.endswith(head) or paragraph.endswith(head + "-"):
                if any(p.startswith(tail) for p in paragraphs[i + 1:i + 20]):
                    return True
    return False


def source_paragraphs() -> list[str]:
    """The papers' texts (``$HASHLIB_PAPERS_DIR``) and the transcribed tables' cells, as normalised paragraphs."""
    import os
    from pathlib import Path

    from hashlib_core.results import load_paper_table, paper_table_index

    folder = os.environ.get("HASHLIB_PAPERS_DIR")
    if not folder or not Path(folder).is_dir():
        pytest.skip("HASHLIB_PAPERS_DIR is not set: the quotes cannot be checked against the papers' texts")
    paragraphs = [_normalise(p) for f in sorted(Path(folder).iterdir()) if f.suffix in (".txt", ".md")
                  for p in re.split(r"\n\s*\n", f.read_text(encoding="utf-8"))]
    paragraphs += [_normalise(str(cell)) for stem in paper_table_index()
                   for cell in load_paper_table(stem).to_numpy().ravel() if len(str(cell)) > 40]
    return paragraphs


def test_quote_found_on_fixed_text():
    paragraphs = [_normalise("The models *consistently* outperform Standard models"),
                  _normalise("| table |"), _normalise("while keeping the parameter count.")]
    assert quote_found("The models consistently outperform Standard models", paragraphs)
    assert quote_found("outperform Standard models while keeping the parameter count.", paragraphs)
    assert not quote_found("The models outperform Standard models", paragraphs)          # a word dropped


def test_every_quote_is_verbatim_in_its_source():
    """Each claim quotes its paper (or the blog, or a transcribed abstract) word for word: whitespace and emphasis
    marks aside, and a sentence split by a table or a page found in its two parts."""
    paragraphs = source_paragraphs()
    missing = [(slug, c.id) for slug, claims in chapter_claims() for c in claims.claims
               if not quote_found(_normalise(c.quote), paragraphs)]
    assert not missing, f"quotes not found verbatim in the papers' texts: {missing}"


def test_the_book_css_colours_verdicts_as_the_scorecard_figure_does():
    from hashlib_core.results import repo_root

    css = (repo_root() / "_static" / "hashbook.css").read_text(encoding="utf-8")
    found = dict(re.findall(r"span\.hb-v-([a-z-]+) \{ background: (#[0-9a-f]{6});", css))
    assert found == {v.replace(" ", "-"): c for v, c in scorecard.VERDICT_COLOURS.items()}
    assert "span.hb-flag" in css and "span.hb-lean" in css


def test_committed_verdicts_are_what_the_claims_compute_today():
    """A verdict goes stale with its evidence (digests) and also with its claim: a changed region, quote or effect
    function must be recomputed (``--only claims``) before it is committed."""
    import io

    from hashlib_core.chapter import COMMITTED_ORDER, Shown
    from hashlib_core.papers import chapter

    checked = 0
    for slug, claims in chapter_claims():
        ch = chapter(slug)
        for name in COMMITTED_ORDER:
            store = ch.store(name)
            if not store.exists("claims"):
                continue
            today = claims.evaluate(Shown(ch.profiles.get(name), store, "committed", ""))
            today = pd.read_csv(io.StringIO(today.to_csv(index=False)))        # as the CSV round trip leaves it
            pd.testing.assert_frame_equal(store.read_table("claims"), today, check_dtype=False,
                                          obj=f"results/{slug}/{name}/claims.csv (rerun --only claims)")
            checked += 1
    assert checked >= 6


@dataclass
class MetaEvidence(FakeEvidence):
    """Evidence whose results carry metadata, as a chapter's committed results do."""
    metas: dict = None

    def meta(self, name):
        return self.metas.get(name, {})


def test_a_verdict_reading_a_result_of_uncommitted_code_is_flagged_through_its_inputs():
    from hashlib_core.claims.core import uncommitted
    from hashlib_core.claims.verdicts import FLAGS

    metas = {"summary": {"git_dirty": False, "inputs": {"runs": "d1"}}, "runs": {"git_dirty": False,
                                                                                "inputs": {"part": "d2"}},
             "part": {"git_dirty": True, "git_dirty_files": ["x.py"]}, "clean": {"git_dirty": False}}
    ev = MetaEvidence({"summary": 1, "runs": 1, "part": 1, "clean": 1}, metas=metas)
    assert uncommitted(ev, ["part"]) and uncommitted(ev, ["summary"])      # two steps down its inputs
    assert not uncommitted(ev, ["clean"]) and not uncommitted(ev, ["missing"])
    assert not uncommitted(FakeEvidence({"t": 1}), ["t"])                  # fixed tables carry no metadata
    metas["part"]["inputs"] = {"summary": "d0"}                           # a cycle ends
    metas["part"]["git_dirty"] = False
    assert not uncommitted(ev, ["summary"])
    metas["part"]["git_dirty"] = True
    rows = evaluate_claims("P", [better("a", "A beats B", effect=effect_of(2.0, 0.5, 3.5), reads=("summary",), **SRC),
                                 better("b", "A beats B", effect=effect_of(2.0, 0.5, 3.5), reads=("clean",), **SRC)],
                           ev, "s")
    assert "uncommitted" in rows["flags"][0] and "uncommitted" not in rows["flags"][1]
    assert rows["verdict"].tolist() == ["holds", "holds"]                  # a flag, not a verdict
    assert "uncommitted" in FLAGS
