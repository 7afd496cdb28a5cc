"""Chapter "MultiHashFormer": its claims on small fixed inputs, the Card-660 intervals, and the claims evaluated on
the committed results (one row per claim; only the claims that cannot be tested here are not testable)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pytest

from hashlib_core.chapter import Shown
from hashlib_core.claims import VERDICTS
from hashlib_core.papers.multihashformer.claims import (
    CLAIMS,
    describe_scale,
)
from hashlib_core.papers.multihashformer.experiments import CHAPTER
from hashlib_core.papers.multihashformer.profiles import PROFILES
from hashlib_core.results import repo_root

#: claims the committed profiles cannot answer: the benchmarks, and Card-660 while the baselines show no signal
NEVER_HERE = {"lambada-gains", "mubench-wins"}
NO_SIGNAL = {"card660-h3", "card660-h4"}


@dataclass
class FakeEvidence:
    tables: dict = field(default_factory=dict)
    profile: object = field(default_factory=lambda: PROFILES.get("smoke"))

    def has(self, name):
        return name in self.tables

    def table(self, name):
        return self.tables[name].copy()

    def json(self, name):
        return self.tables[name]


def lm_quality(**acc):
    rows = [{"model": m, "H": 0.0 if m.startswith("Standard") else float(m[1]), "test_accuracy_%": a}
            for m, a in acc.items()]
    return pd.DataFrame(rows + [{"model": "unigram", "H": np.nan, "test_accuracy_%": 5.0}])


def card(**r):
    return pd.DataFrame([{"model": m, "layer": layer, "pooling": pooling, "pearson_r": v, "pairs": 660}
                         for m, v in r.items() for layer in ("last", "second_to_last")
                         for pooling in ("last_token", "mean")])


def evaluate(claim_id, **tables):
    """The claims-table row of one claim, evaluated on ``tables`` (the other claims lack their evidence)."""
    return CLAIMS.evaluate(FakeEvidence(tables)).set_index("id").loc[claim_id]


# ----------------------------------------------------------------------------------------------- fixed inputs
def scaling_gaps(*rows):
    """A scaling_gaps table: (size, mhf, baseline, gap, matched) rows, each gap's interval +-0.5."""
    return pd.DataFrame([{"size": size, "mhf": m, "baseline": b, "accuracy_gap": g, "accuracy_gap_low": g - 0.5,
                          "accuracy_gap_high": g + 0.5, "matched": matched, "seeds": 3, "mhf_total_params": 100,
                          "baseline_total_params": 100, "interval": "paired bootstrap over 9 test windows"}
                         for size, m, b, g, matched in rows])


def scaling_runs(gaps: pd.DataFrame, spread: float = 0.0) -> pd.DataFrame:
    """Per-seed accuracies consistent with ``gaps``: Standard at 20 (its seeds 20 - spread, 20, 20 + spread), each
    other model at 20 plus its gap to Standard, the same spread."""
    base = {(r["size"], r["mhf"]): 20.0 + r["accuracy_gap"] for _, r in gaps[gaps["baseline"] == "Standard"].iterrows()}
    rows = []
    for size in gaps["size"].unique():
        models = {"Standard": 20.0, **{m: v for (s, m), v in base.items() if s == size}}
        for _, r in gaps[(gaps["size"] == size) & (gaps["baseline"] != "Standard")].iterrows():
            models.setdefault(r["baseline"], models.get(r["mhf"], 20.0) - r["accuracy_gap"])
        rows += [{"size": size, "model": m, "seed": i, "test_accuracy_%": v + d}
                 for m, v in models.items() for i, d in enumerate((-spread, 0.0, spread))]
    return pd.DataFrame(rows)


def test_language_model_claims_read_the_scaling_curve():
    from hashlib_core.claims import seed_difference

    gaps = scaling_gaps(("32/96/2", "H4B16K", "Standard", 2.0, False), ("64/192/2", "H4B16K", "Standard", 1.0, False),
                        ("32/96/2", "H3B8K", "Standard", -1.0, True), ("64/192/2", "H3B8K", "Standard", 0.2, True),
                        ("32/96/2", "H4B16K", "Standard+1L", -2.0, False),
                        ("32/96/2", "H3B8K", "Standard+1L", -3.0, False))
    runs = scaling_runs(gaps, spread=0.3)
    head = evaluate("headline-lm", scaling_gaps=gaps, scaling_runs=runs)    # the weaker size: +1.0 [+0.5, +1.5]
    # the windows' interval (+-0.5) widened by the seeds' (Welch over the per-seed accuracies), in quadrature
    seeds = seed_difference([21.0 - 0.3, 21.0, 21.3], [19.7, 20.0, 20.3]).half_width
    assert head["estimate"] == pytest.approx(1.0) and head["low"] == pytest.approx(1.0 - np.hypot(0.5, seeds))
    assert head["verdict"] == "holds" and "3 seeds averaged per window" in head["method"]
    assert "added in quadrature" in head["method"] and head["flags"] == "cap,not-recomputable"
    assert "32/96/2 (H4B16K 100 vs Standard 100 params): +2.00 [+1.50, +2.50]" in head["ours"]
    assert evaluate("matched-h3", scaling_gaps=gaps, scaling_runs=runs)["verdict"] == "does not hold"
    deeper = evaluate("deeper-at-small-scale", scaling_gaps=gaps, scaling_runs=runs)   # Standard+1L - the best MHF
    assert deeper["estimate"] == pytest.approx(2.0) and "the best MHF, H4B16K" in deeper["ours"]
    trend = pd.DataFrame([{"mhf": "H4B16K", "baseline": "Standard+1L", "from_size": "32/96/2", "to_size": "64/192/2",
                           "accuracy_change": 1.5, "accuracy_change_low": 0.5, "accuracy_change_high": 2.5,
                           "interval": "paired bootstrap over 9 test windows"}])
    grows = evaluate("embeddings-over-layers", scaling_gaps=gaps, scaling_trend=trend, scaling_runs=runs)
    assert grows["verdict"] == "holds" and grows["estimate"] == pytest.approx(1.5)
    assert "items-only" in grows["flags"]             # Standard+1L has no per-seed scores at 64/192/2 here


def test_a_missing_curve_or_pair_is_not_testable_with_its_reason():
    gaps = scaling_gaps(("32/96/2", "H4B16K", "Standard", 2.0, False), ("32/96/2", "H3B8K", "Standard", 1.0, False))
    runs = scaling_runs(gaps)
    row = evaluate("matched-h3", scaling_gaps=gaps, scaling_runs=runs)
    assert row["verdict"] == "not testable here" and "within 5% in parameters" in row["reason"]
    assert "no such pair" in evaluate("deeper-at-small-scale", scaling_gaps=gaps, scaling_runs=runs)["reason"]
    missing = evaluate("headline-lm")                                 # no result at all
    assert missing["verdict"] == "not testable here" and "scaling_gaps, scaling_runs not written" in missing["reason"]


def test_sweep_claim_reads_the_lowest_variant():
    sweep = pd.DataFrame({"model": ["Standard", "H3B4K", "H4B32K"], "H": [0, 3, 4],
                          "test_accuracy_%": [18.0, 17.5, 18.6]})
    row = evaluate("sweep-all-beat-standard", hb_sweep=sweep)
    assert row["estimate"] == pytest.approx(-0.5) and "1 of 2 variants above" in row["ours"]


def test_card660_compares_only_where_the_baseline_has_signal():
    holds = evaluate("card660-h3", card660=card(Standard=0.3, H3B10K=0.4))
    assert holds["verdict"] == "holds" and holds["estimate"] == pytest.approx(0.1)
    assert holds["low"] > 0 and "Zou" in holds["method"]
    reverse = evaluate("card660-h3", card660=card(Standard=0.4, H3B10K=0.25))
    assert reverse["verdict"] == "does not hold"
    flat = evaluate("card660-h4", card660=card(**{"Standard+2L": 0.01, "H4B16K": 0.3}))
    assert flat["verdict"] == "no signal"
    assert flat["reason"].startswith("Standard+2L's own correlation with human similarity is indistinguishable from "
                                     "zero at this scale: r = 0.010, 95% interval [")


def test_equivalent_pairs_use_a_paired_bootstrap():
    ex = pd.DataFrame({"table": ["Table 5"] * 4 + ["Table 6"], "ours Standard": [0.5, 0.6, 0.7, 0.8, 0.0],
                       "ours H4B16K": [0.6, 0.7, 0.8, 0.7, 1.0]})
    row = evaluate("card660-equivalent-pairs", card660_examples=ex)     # Table 6 rows are left out
    assert row["estimate"] == pytest.approx(0.05) and "4 Table 5 word pairs" in row["method"]
    assert "higher on 3 of 4 pairs" in row["ours"]


def test_single_vs_multi_claims():
    svm = pd.DataFrame({"model": ["H1B4K", "H4B4K", "H1B16K", "H4B16K"], "H": [1, 4, 1, 4],
                        "B": [256, 256, 1024, 1024], "bucket_label": ["B4K", "B4K", "B16K", "B16K"],
                        "test_accuracy_%": [2.0, 12.0, 7.0, 12.5]})
    assert evaluate("multi-beats-single", single_vs_multi=svm)["estimate"] == pytest.approx(5.5)
    assert evaluate("single-gap-shrinks", single_vs_multi=svm)["estimate"] == 1.0     # 10 > 5.5, as the paper
    more = evaluate("multi-beats-more-buckets", single_vs_multi=svm)                   # H4B4K - H1B16K
    assert more["estimate"] == pytest.approx(5.0)
    one = evaluate("single-gap-shrinks", single_vs_multi=svm[svm["bucket_label"] == "B4K"])
    assert one["verdict"] == "not testable here" and "fewer than two" in one["reason"]


def test_rank_and_parameter_counts_are_exact():
    rank = pd.DataFrame({"model": ["Standard", "H3B10K", "H4B16K"], "H": [0, 3, 4], "d": [256] * 3,
                         "contexts": [1024] * 3, "numerical_rank": [257, 300, 398]})
    row = evaluate("rank-above-d", rank=rank)
    assert row["verdict"] == "holds" and row["estimate"] == 43 and row["low"] == row["high"] == 43
    flat = evaluate("rank-above-d", rank=rank.assign(numerical_rank=[257, 257, 398]))
    assert flat["verdict"] == "does not hold"
    params = pd.DataFrame({"model": ["Standard", "H4B16K"], "new_params": [61440, 0], "params_before": [10, 20],
                           "params_after": [61450, 20], "new_tokens": [960, 960]})
    assert evaluate("headline-expansion", expansion_params=params)["verdict"] == "holds"
    grown = params.assign(new_params=[61440, 5])
    assert evaluate("headline-expansion", expansion_params=grown)["verdict"] == "does not hold"
    t1 = pd.DataFrame({"size": ["100M", "100M"], "model": ["MHF (H3B10K)", "MHF (H4B16K)"],
                       "emb": [24_529_409, 51_416_385]})
    assert evaluate("t1-emb-100m-h3b10k", table1_params=t1)["verdict"] == "holds"              # prints 25M
    assert evaluate("t1-emb-100m-h4b16k", table1_params=t1)["verdict"] == "does not hold"      # prints 52M
    assert evaluate("t1-emb-1b-h4b16k", table1_params=t1)["verdict"] == "not testable here"


def test_expansion_claims_read_the_sentence_bootstraps():
    rows = [{"language": lang, "mhf": "H4B16K", "sentences": 100, "bpb_gap_after": g, "bpb_gap_after_low": g - 0.05,
             "bpb_gap_after_high": g + 0.05, "change_difference": c, "change_difference_low": c - 0.1,
             "change_difference_high": c + 0.1, "interval": f"paired bootstrap over 100 held-out {lang} sentences"}
            for lang, g, c in (("ar", -0.1, 0.0), ("zh", 0.5, 0.0), ("hi", 0.02, 0.0), ("en", 0.1, -0.3))]
    intervals = pd.DataFrame(rows)
    langs = evaluate("expansion-new-languages", expansion_intervals=intervals)   # ar better, hi within, zh worse
    assert langs["estimate"] == pytest.approx(2 / 3) and langs["ours"].startswith("2 of 3 not worse")
    english = evaluate("expansion-english", expansion_intervals=intervals)       # MHF forgets more: [-0.4, -0.2]
    assert english["estimate"] == pytest.approx(-0.3) and english["verdict"] == "does not hold"
    assert english["low"] == pytest.approx(-0.4)


def test_lsh_claim_is_the_tau_of_accuracy_against_lsh_coordinates():
    lsh = pd.DataFrame({"mix": ["0:4", "2:2", "4:0"], "lsh": [0, 2, 4], "test_accuracy_%": [12.0, 13.0, 14.0]})
    rising = evaluate("lsh-no-consistent-gain", lsh_mix=lsh)
    assert rising["estimate"] == pytest.approx(1.0) and rising["verdict"] == "inconclusive"
    assert rising["lean"] == "leans against the paper" and rising["flags"] == "one-run,not-recomputable,no-interval"
    mixed = evaluate("lsh-no-consistent-gain", lsh_mix=lsh.assign(**{"test_accuracy_%": [12.0, 14.0, 13.0]}))
    assert mixed["estimate"] == pytest.approx(1 / 3) and mixed["lean"] == "leans to the paper"


def test_scale_sentence_comes_from_the_profile():
    for name in ("smoke", "cpu", "small"):
        p = PROFILES.get(name)
        text = describe_scale(p)
        assert text.startswith(f"{name} profile") and f"d = {p.hidden_size}," in text
        assert f"V = {p.vocab_size:,}" in text and f"{p.max_steps:,} steps" in text
        assert "Penn Treebank's train split" in text and f"{len(p.scale_seeds)} seed(s) each" in text


# ----------------------------------------------------------------------------------------------- the claim set
def test_claim_set_shape():
    ids = [c.id for c in CLAIMS.claims]
    assert len(ids) == len(set(ids)) >= 4
    assert [c.id for c in CLAIMS.claims if c.headline] == ["headline-lm", "headline-expansion"]
    assert set(CLAIMS.reads) <= {o for e in CHAPTER.experiments.values() for o in e.outputs}
    assert list(CHAPTER.experiments)[-1] == "claims"
    page = (repo_root() / "book" / "src" / "multihashformer.md").read_text()
    for c in CLAIMS.claims:
        assert f"\n({c.section})=\n#" in page, f"{c.id}: no section labelled {c.section} on the page"


@pytest.mark.parametrize("name", ["cpu"])
def test_committed_results_answer_every_claim_they_can(name):
    profile = CHAPTER.profiles.get(name)
    table = CLAIMS.evaluate(Shown(profile, CHAPTER.store(name), "committed", ""))
    assert list(table["id"]) == [c.id for c in CLAIMS.claims]
    assert set(table["verdict"]) <= set(VERDICTS)
    untested = table[table["verdict"] == "not testable here"].set_index("id")["reason"]
    assert set(untested.index) <= NEVER_HERE | NO_SIGNAL, untested.to_dict()
    assert NEVER_HERE <= set(untested.index)
    for claim_id in set(untested.index) & NO_SIGNAL:
        assert "has no signal at this scale: r = " in untested[claim_id]
    assert (table["scale"].str.len() > 0).all()
