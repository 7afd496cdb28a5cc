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


def test_hours_at_the_assumed_share_of_the_peak_on_fixed_inputs():
    # the documented specification and assumption, by name
    assert cost.H100_BF16_DENSE_PEAK_FLOPS == 989.4e12 and cost.ASSUMED_MFU == 0.4
    flops = Runs("a", params=1e6, tokens=1e9, runs=2).flops
    assert cost.peak_hours(flops) == flops / (cost.H100_BF16_DENSE_PEAK_FLOPS * cost.ASSUMED_MFU) / 3600
    # 1.2e16 FLOPs at half of a 1e12 FLOP/s peak: 24,000 s
    assert cost.peak_hours(1.2e16, peak=1e12, mfu=0.5) == pytest.approx(24_000 / 3600)
    # the same FLOPs at a measured rate that is the assumed share of the peak take the same hours
    rate = Rate(cost.H100_BF16_DENSE_PEAK_FLOPS * cost.ASSUMED_MFU, "GPU", "fake")
    assert cost.hours([Runs("a", 1e6, 1e9, 2)], rate) == pytest.approx(cost.peak_hours(flops))
    for bad in ({"flops": 0.0}, {"flops": 1.0, "mfu": 0.0}, {"flops": 1.0, "mfu": 1.5}, {"flops": 1.0, "peak": -1.0}):
        with pytest.raises(ValueError):
            cost.peak_hours(**bad)


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
    costs = pd.DataFrame({"chapter": ["a", "b"], "id": ["x", "x"], "paper_hours_mfu": [0.24, 0.5],
                          "paper_hours_measured": [57.3, 0.9], "smallest_hours_mfu": [math.nan, 0.2],
                          "smallest_hours_measured": [math.nan, 13.0]})
    joined = cost.with_costs(claims, costs)
    assert [cost.settle_text(r) for _, r in joined.iterrows()] == [
        "to settle at paper scale: under 1 H100-hours at 40% of the H100's peak (about 57 at the rate our small runs "
        "measured, an upper bound)",
        "",
        "to settle at paper scale: under 1 H100-hours at 40% of the H100's peak (under 1 at the rate our small runs "
        "measured, an upper bound); at the smallest reported scale: under 1 (about 13)"]
    one = cost.with_costs(claims[claims["chapter"] == "a"].drop(columns="chapter"), costs, "a")
    assert one["cost_paper_hours_mfu"].tolist()[0] == 0.24 and one["cost_paper_hours_measured"].tolist()[0] == 57.3
    assert pd.isna(one["cost_paper_hours_mfu"].tolist()[1])
    with pytest.raises(KeyError, match="not a cost table"):
        cost.with_costs(claims, costs.drop(columns="paper_hours_measured"))


def _fixed_costs():
    """Two claims' estimates from fixed FLOPs: one at a measured GPU rate of 1e12 FLOP/s, one with a smaller scale."""
    flops, small = 6 * 1e8 * 1e12, 6 * 1e7 * 1e11
    rate = Rate(1e12, "GPU", "fake")
    return pd.DataFrame({
        "chapter": ["a", "b"], "id": ["x", "y"], "paper_flops": [flops, flops],
        "paper_hours_mfu": [cost.peak_hours(flops)] * 2,
        "paper_hours_measured": [cost.hours([Runs("m", 1e8, 1e12)], rate)] * 2,
        "smallest_flops": [math.nan, small], "smallest_hours_mfu": [math.nan, cost.peak_hours(small)],
        "smallest_hours_measured": [math.nan, cost.hours([Runs("m", 1e7, 1e11)], rate)],
        "paper_work": ["w", "w"], "smallest_work": ["one scale", "v"], "rate": ["r", "r"], "rule": ["rule", "rule"]})


def test_both_figures_on_fixed_inputs_in_the_tables():
    costs = _fixed_costs()
    # 6e20 FLOPs: at 40% of 989.4 TFLOP/s, 6e20 / 3.9576e14 / 3600 = 421 hours; at 1e12 FLOP/s, 166,667 hours
    assert costs["paper_hours_mfu"][0] == 6e20 / (989.4e12 * 0.4) / 3600
    assert costs["paper_hours_measured"][0] == pytest.approx(6e20 / 1e12 / 3600)
    assert cost.about(costs["paper_hours_mfu"][0]) == "about 420"
    assert cost.about(costs["paper_hours_measured"][0]) == "about 170,000"
    assert cost.about(costs["smallest_hours_mfu"][1]) == "about 4"          # 6e19 FLOPs: 42 hours / 10
    assert cost.about(costs["smallest_hours_measured"][1]) == "about 1,700"

    table = cost.summary(costs)
    assert table.iloc[:, 2].tolist() == ["about 420"] * 2                   # at 40% of the peak
    assert table.iloc[:, 3].tolist() == ["about 170,000"] * 2               # at the measured rate
    assert table.iloc[:, 4].tolist() == ["as paper", "about 4 (about 1,700)"]
    assert "40% of peak" in table.columns[2] and "upper bound" in table.columns[3]

    claims = pd.DataFrame({"chapter": ["a"], "id": ["x"]})
    line = cost.settle_text(cost.with_costs(claims, costs).iloc[0])
    assert line == ("to settle at paper scale: about 420 H100-hours at 40% of the H100's peak (about 170,000 at the "
                    "rate our small runs measured, an upper bound)")


def test_the_headline_table_shows_both_figures():
    from hashlib_core.claims import CLAIM_COLUMNS, html

    row = {c: "" for c in CLAIM_COLUMNS}
    row.update(chapter="b", id="y", paper="Paper B", statement="B beats A", profile="cpu", headline=True,
               evidence="empirical", estimate=math.nan, low=math.nan, high=math.nan, reason="not run", region="> 0",
               paper_value="1.0", section="", verdict="not testable here", half_width=math.nan, resolve=math.nan,
               flags="", where="Abstract", kind="better", quote="B beats A")
    claims = cost.with_costs(pd.DataFrame([row]), _fixed_costs())
    page = html.headline_table(claims).data
    assert "about 420 H100-hours at 40% of peak" in page
    assert "about 170,000 at the rate our small runs measured (an upper bound)" in page
    assert "smallest reported scale: about 4 (about 1,700)" in page
    # a chapter's own claims table carries the same two figures in its cost line
    chapter = html.claims_table(cost.with_costs(pd.DataFrame([row]).drop(columns="chapter"), _fixed_costs(), "b")).data
    assert ("to settle at paper scale: about 420 H100-hours at 40% of the H100&#x27;s peak (about 170,000 at the "
            "rate our small runs measured, an upper bound); at the smallest reported scale: about 4 (about 1,700)"
            in chapter)


@pytest.fixture(scope="module")
def committed_estimates():
    return cost.estimates()


def test_the_committed_estimates_give_both_figures(committed_estimates):
    e = committed_estimates
    assert (e["paper_hours_mfu"] == e["paper_flops"] / (cost.H100_BF16_DENSE_PEAK_FLOPS * cost.ASSUMED_MFU)
            / 3600).all()
    # every measured rate is below the assumed share of the peak: the measured-rate hours are the larger
    assert (e["paper_hours_measured"] > e["paper_hours_mfu"]).all()
    quoted = cost.quoted(costs=e)
    assert quoted["cost_mfu"] == "40%" and quoted["cost_peak"] == "989.4T"
    assert {"cost_gpu_share", "cost_factor_min", "cost_factor_max"} <= set(quoted)


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
    assert (committed_estimates["paper_hours_mfu"] > 0).all() and (committed_estimates["paper_hours_measured"] > 0).all()
    # the one chapter committed on a GPU divides by its own rate; every other by a CPU rate times the ratio
    rules = dict(zip(committed_estimates["chapter"], committed_estimates["rule"]))
    assert "GPU-over-CPU ratio" not in rules["hashformers"]
    assert all("GPU-over-CPU ratio" in r for c, r in rules.items() if c != "hashformers")


def test_the_smallest_reported_scale_costs_less_than_the_papers(committed_estimates):
    both = committed_estimates.dropna(subset=["smallest_hours_mfu"])
    assert len(both) and (both["smallest_hours_mfu"] < both["paper_hours_mfu"]).all()
    assert (both["smallest_hours_measured"] < both["paper_hours_measured"]).all()


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
