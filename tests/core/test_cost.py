"""The cost of settling a headline claim (hashlib_core.claims.cost): the rule on fixed inputs, its refusals, and an
estimate for every chapter's headline claims from the committed results."""
from __future__ import annotations

import importlib
import math
from types import SimpleNamespace

import pandas as pd
import pytest

from hashlib_core.claims import cost
from hashlib_core.claims.cost import Rate, Runs


class FakeResults:
    """Committed results of one profile, from fixed tables."""

    def __init__(self, tables: dict, configs: dict | None = None, device: str = "cpu") -> None:
        self.tables, self.configs, self.device = tables, configs or {}, device

    def table(self, name):
        return self.tables[name]

    def config(self, name):
        return self.configs.get(name, {})

    def meta(self, name):
        return {"device": self.device, "device_name": "Fake", "config": self.config(name)}

    def source(self, name):
        return f"fake/{name}"


def test_training_flops_and_hours_on_fixed_inputs():
    run = Runs("a", params=1e6, tokens=1e9, runs=2)
    assert run.flops == 6 * 1e6 * 1e9 * 2
    rate = Rate(1e12, "GPU", "fake")
    # 1.2e16 FLOPs at 1e12 FLOP/s: 12,000 s, 10/3 hours; at twice the rate (a CPU rate times a ratio of 2) half that
    assert cost.hours([run], rate) == pytest.approx(1.2e16 / 1e12 / 3600)
    assert cost.hours([run, run], rate, ratio=2.0) == pytest.approx(cost.hours([run], rate))


def test_measured_rate_is_the_runs_flops_over_their_seconds():
    a, b = Runs("a", 10.0, 100.0), Runs("b", 20.0, 100.0)
    rate = cost.measured_rate([(a, 2.0), (b, 3.0)], "CPU", "fake")
    assert rate.flops_per_s == pytest.approx((a.flops + b.flops) / 5.0)
    gpu = cost.measured_rate([(a, 0.5)], "GPU", "fake", gpu=True)
    assert cost.gpu_ratio(gpu, rate) == pytest.approx(gpu.flops_per_s / rate.flops_per_s)


@pytest.mark.parametrize("seconds", [0.0, -1.0, math.nan, None])
def test_a_run_without_a_wall_time_measures_no_rate(seconds):
    with pytest.raises(ValueError, match="wall time.*no throughput"):
        cost.measured_rate([(Runs("a", 1.0, 1.0), seconds)], "CPU", "results/x/cpu/runs")


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="no measured runs"):
        cost.measured_rate([], "CPU", "fake")
    with pytest.raises(ValueError, match="positive params"):
        Runs("a", 0.0, 1.0).flops
    with pytest.raises(ValueError, match="at least one"):
        cost.hours([], Rate(1.0, "CPU", "fake"))
    with pytest.raises(ValueError, match="ratio must be positive"):
        cost.hours([Runs("a", 1.0, 1.0)], Rate(1.0, "CPU", "fake"), ratio=0.0)
    with pytest.raises(ValueError, match="positive number of FLOP/s"):
        Rate(0.0, "CPU", "fake")


def test_missing_committed_results_say_what_to_run(tmp_path):
    results = cost._Committed("hashformers", "cpu", tmp_path)
    with pytest.raises(FileNotFoundError, match="no committed result 'pretraining'.*cpu profile"):
        results.table("pretraining")


def test_about_rounds_to_two_significant_digits():
    assert [cost.about(h) for h in (0.4, 6.26, 57.3, 5875.8, 1784987.0)] == [
        "under 1", "about 6", "about 57", "about 5,900", "about 1,800,000"]
    assert cost.about(None) == cost.about(math.nan) == "-"


def test_a_chapter_cost_from_fake_results():
    from hashlib_core.papers.hashformers import cost as hf

    pretraining = pd.DataFrame({"name": ["BERT-MLM"], "steps": [10], "total_params": [150], "emb_params": [50],
                                "wall_time_s": [4.0]})
    fake = FakeResults({"pretraining": pretraining}, {"pretraining": {"pt_batch": 2, "seq_len": 3}}, "cuda")
    runs, name = hf.measure(fake)
    assert name == "pretraining" and runs == [(Runs("BERT-MLM", 100.0, 60.0), 4.0)]

    table2 = pd.DataFrame({"group": ["-", hf.LSH_GROUP], "model": ["BERT-MLM", "Proj"], "total_params": [30, 20],
                           "emb_params": [10, 5]})
    profile = SimpleNamespace(pt_steps=5, pt_batch=2, seq_len=4)
    work = hf.COST.claims["proj-glue"].paper(profile, FakeResults({"table2": table2}))
    assert [(r.what, r.params, r.tokens, r.runs) for r in work] == [("BERT-MLM pre-trained", 20.0, 40.0, 1),
                                                                      ("LSH-Proj pre-trained", 15.0, 40.0, 1)]
    # both measured at 6 x 100 x 60 FLOPs in 4 s: the paper's 6 x (20 + 15) x 40 FLOPs take 8,400 / 9,000 of 4 s
    rate = cost.measured_rate(runs, "GPU", "fake", gpu=True)
    assert cost.hours(work, rate) * 3600 == pytest.approx(4.0 * (35 * 40) / (100 * 60))
    with pytest.raises(KeyError, match="has no row"):
        hf.COST.claims["retention"].paper(profile, FakeResults({"table2": table2}))


def test_settle_text_and_the_join():
    claims = pd.DataFrame({"chapter": ["a", "a", "b"], "id": ["x", "y", "x"]})
    costs = pd.DataFrame({"chapter": ["a", "b"], "id": ["x", "x"], "paper_hours": [57.3, 0.5],
                          "smallest_hours": [math.nan, 0.2]})
    joined = cost.with_costs(claims, costs)
    assert [cost.settle_text(r) for _, r in joined.iterrows()] == [
        "to settle at paper scale: about 57 H100-hours", "",
        "to settle at paper scale: under 1 H100-hours; at the smallest reported scale: under 1"]
    one = cost.with_costs(claims[claims["chapter"] == "a"].drop(columns="chapter"), costs, "a")
    assert one["cost_paper_hours"].tolist()[0] == 57.3 and pd.isna(one["cost_paper_hours"].tolist()[1])
    with pytest.raises(KeyError, match="not a cost table"):
        cost.with_costs(claims, costs.drop(columns="paper_hours"))


@pytest.fixture(scope="module")
def committed_estimates():
    return cost.estimates()


def test_every_headline_claim_gets_an_estimate_from_the_committed_results(committed_estimates):
    from hashlib_core.claims import scorecard
    from hashlib_core.papers import CHAPTERS

    shown = scorecard.gather("cpu", "cpu", "committed")     # the claims tables the pages show
    for slug in CHAPTERS:
        claims = importlib.import_module(f"hashlib_core.papers.{slug}.claims").CLAIMS.claims
        rows = shown[(shown["chapter"] == slug) & shown["headline"].astype(bool) & (shown["evidence"] == "empirical")]
        testable = {c.id for c in claims if c.effect is not None}
        measured = set(rows["id"]) & testable
        chapter_cost = cost.chapter_cost(slug)
        costed = set(chapter_cost.claims) if chapter_cost is not None else set()
        assert costed <= {c.id for c in claims if c.headline}, f"{slug}: costs for claims that are not headline"
        assert measured <= costed, f"{slug}: headline claims without a cost estimate: {sorted(measured - costed)}"
        got = committed_estimates[committed_estimates["chapter"] == slug]
        assert set(got["id"]) == costed
    assert (committed_estimates["paper_hours"] > 0).all()
    # the one chapter committed on a GPU divides by its own rate; every other by a CPU rate times the ratio
    rules = dict(zip(committed_estimates["chapter"], committed_estimates["rule"]))
    assert "GPU-over-CPU ratio" not in rules["hashformers"]
    assert all("GPU-over-CPU ratio" in r for c, r in rules.items() if c != "hashformers")


def test_the_smallest_reported_scale_costs_less_than_the_papers(committed_estimates):
    both = committed_estimates.dropna(subset=["smallest_hours"])
    assert len(both) and (both["smallest_hours"] < both["paper_hours"]).all()


def test_the_protocols_runs_and_tokens_of_the_other_chapters():
    from hashlib_core.papers.multihashformer import cost as mhf
    from hashlib_core.papers.pnlp_mixer import cost as pnlp
    from hashlib_core.papers.superbloom import cost as sb

    # Superbloom: a sweep of 3 rates with the first seed, then the second seed: 4 runs; Superbloom reads m tokens per
    # item
    params = pd.DataFrame({"table": ["Table 1"] * 2, "reading": ["similar size"] * 2,
                           "model": ["superbloom", "baseline"], "m": [2, 1], "total_params": [50, 70],
                           "emb_params": [10, 20]})
    profile = SimpleNamespace(learning_rates=(1e-3, 2e-3, 3e-3), seeds=2, steps=10, batch=4, segment=8)
    work = sb.COST.claims["beats-similar-large"].paper(profile, FakeResults({"params": params}))
    assert [(r.params, r.tokens, r.runs) for r in work] == [(40.0, 640.0, 4), (50.0, 320.0, 4)]

    # pNLP-Mixer: every MTOP language of the profile, the paper's training split, the epoch cap, the seeds
    sizes = pd.DataFrame({"encoder": ["mixer"], "parameters": [1000]})
    profile = SimpleNamespace(mtop_languages=("en", "de"), mtop_max_epochs=3, max_seq_len=5, seeds=2)
    work = pnlp.COST.claims["mbert-mtop"].paper(profile, FakeResults({"sizes": sizes}))
    assert [(r.what, r.params, r.tokens, r.runs) for r in work] == [
        (f"pNLP-Mixer on MTOP {lang}", 1000.0, pnlp.MTOP_TRAIN * 3.0 * 5, 2) for lang in ("en", "de")]

    # MultiHashFormer: Table 7's steps x batch x window at its smallest scale
    assert mhf.paper_tokens("100M") == 20_000 * 256 * 2048
    with pytest.raises(KeyError, match="no scale"):
        mhf.paper_tokens("7B")
