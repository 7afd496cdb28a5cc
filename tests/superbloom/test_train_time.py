"""§2.4's training time: the unhashed model and Superbloom (the same Transformer) stepped in alternation over id
spaces of growing size (the profile's knobs, the models, the timing loop, the tables, words, figure and claim on
fixed inputs, and that only the ``train_time`` experiment owns its settings)."""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
import torch

from hashlib_core.benchmarks.superbloom_decoding import time_alternately
from hashlib_core.benchmarks.superbloom_train_step import (
    compare_train_steps,
    step_pair,
    train_step,
    train_time_spaces,
    train_time_specs,
)
from hashlib_core.hashing.bloom import DEFAULT_SPECIAL_TOKENS
from hashlib_core.papers.superbloom import figures
from hashlib_core.papers.superbloom.claims import CLAIMS
from hashlib_core.papers.superbloom.experiments import CHAPTER
from hashlib_core.papers.superbloom.profiles import PROFILES
from hashlib_core.papers.superbloom.tables_train_time import train_time_pairs, train_time_quoted, train_time_view
from tests.superbloom.test_claims import FakeEvidence

SPECIALS = len(DEFAULT_SPECIAL_TOKENS)
TINY = PROFILES.get("smoke", hidden=8, heads=2, depths=(1,), further_depths=(), batch=4)


def test_the_knobs_are_checked():
    with pytest.raises(ValueError, match="train_time_ids must list increasing id counts"):
        PROFILES.get("cpu", train_time_ids=(1_000_000, 100_000))
    with pytest.raises(ValueError, match="train_time_ids must be >= 1, got 0"):
        PROFILES.get("cpu", train_time_ids=(0,))
    with pytest.raises(ValueError, match="train_time_steps must be >= 1"):
        PROFILES.get("cpu", train_time_steps=0)
    with pytest.raises(ValueError, match="train_time_repeats must be >= 0"):
        PROFILES.get("cpu", train_time_repeats=-1)


def test_the_spaces_start_at_the_datas_ids_and_the_models_share_their_transformer():
    p = PROFILES.get("cpu", train_time_ids=(10_000, 100_000, 1_000_000))
    assert train_time_spaces(p, 14_541) == [14_541, 100_000, 1_000_000]     # not below the data's own ids
    base, sb = train_time_specs(p)
    assert (base.alpha, base.num_hashes, sb.alpha, sb.num_hashes) == (1, 1, p.alpha, p.num_hashes)
    assert (base.hidden, base.layers) == (sb.hidden, sb.layers) == (p.hidden, p.deep)
    assert sb.name == p.roles()["superbloom_deep"] and not base.match


def test_only_the_train_time_experiment_owns_its_settings():
    owners = {name for name, e in CHAPTER.experiments.items() if "train_time_ids" in e.owns}
    assert owners == {"train_time"}
    assert "train_time" not in [e.name for e in CHAPTER.selected(PROFILES.get("cpu", train_time_repeats=0))]
    stale = CHAPTER.stale("cpu", profile=PROFILES.get("cpu", train_time_ids=(200_000,)))
    assert stale == {"train_time": ["train_time_ids"]}          # the claims read its digest, unchanged here


def test_the_timer_alternates_after_a_warm_up():
    calls = []
    a, _, b, _ = time_alternately(lambda: calls.append("a"), lambda: calls.append("b"), 3, torch.device("cpu"))
    assert calls == ["a", "b"] * 4 and len(a) == len(b) == 3 and min(a + b) >= 0
    with pytest.raises(ValueError, match="repeats must be >= 1"):
        time_alternately(lambda: None, lambda: None, 0, torch.device("cpu"))


def _segments(n: int = 12, ids: int = 500, length: int = 6) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.choice(ids, size=length, replace=False) for _ in range(n)]


def test_a_step_learns_and_compare_reports_both_models_exactly():
    specs = train_time_specs(TINY)
    rows = compare_train_steps(specs, TINY, 1_000, _segments(), repeats=2, steps=1, device=torch.device("cpu"))
    base, sb = rows
    assert (base["vocab_size"], sb["vocab_size"]) == (1_000 + SPECIALS, 2 * (20 + SPECIALS))   # 1,000 / 50 = 20
    # parameters: the tied table is the only part that differs (vocab x d, plus the output bias)
    assert base["total_params"] - sb["total_params"] == (base["vocab_size"] - sb["vocab_size"]) * (8 + 1)
    assert base["emb_params"] == base["vocab_size"] * 8
    assert sb["speedup_min_paired"] <= sb["speedup_median_paired"] <= sb["speedup_max_paired"]
    assert "speedup_median_paired" not in base and base["ms_per_step_best"] <= base["ms_per_step"]
    with pytest.raises(ValueError, match="the unhashed model .* then a Superbloom model"):
        compare_train_steps(specs[::-1], TINY, 1_000, _segments(), 1, 1, torch.device("cpu"))
    with pytest.raises(ValueError, match="must share width and depth"):
        wider = [specs[0], dataclasses.replace(specs[1], hidden=16)]
        compare_train_steps(wider, TINY, 1_000, _segments(), 1, 1, torch.device("cpu"))
    with pytest.raises(ValueError, match="need at least one batch of 4 segments"):
        compare_train_steps(specs, TINY, 1_000, _segments(n=3), 1, 1, torch.device("cpu"))


def test_train_step_lowers_the_loss_on_a_repeated_batch():
    from hashlib_core.papers.superbloom.data import ItemMaskingCollator
    from hashlib_core.papers.superbloom.modeling import SuperbloomForMaskedLM
    from hashlib_core.papers.superbloom.training import model_config

    torch.manual_seed(0)
    model = SuperbloomForMaskedLM(model_config(train_time_specs(TINY)[1], TINY, 1_000))
    batch = ItemMaskingCollator(model.maps, 0)(_segments(n=4))
    run = step_pair(model, [batch], steps=1, device=torch.device("cpu"))
    with torch.no_grad():
        first = float(model(**batch).loss)
    for _ in range(20):
        run()
    with torch.no_grad():
        assert float(model(**batch).loss) < first
    with pytest.raises(ValueError, match="need steps >= 1"):
        step_pair(model, [batch], steps=0, device=torch.device("cpu"))
    assert np.isfinite(train_step(model, torch.optim.SGD(model.parameters(), lr=0.0), batch))


def _rows(speedups=((0.5, 0.4, 0.6), (4.0, 3.0, 5.0))) -> pd.DataFrame:
    rows = []
    for n, (med, lo, hi), base_ms, sb_ms in zip((10_000, 1_000_000), speedups, (20.0, 400.0), (40.0, 100.0)):
        common = {"num_ids": n, "hidden": 8, "layers": 2, "repeats": 5, "steps_per_timing": 2, "batch": 4}
        rows.append({**common, "name": "unhashed-L2", "alpha": 1, "vocab_size": n + 4, "total_params": 9 * n,
                     "ms_per_step": base_ms})
        rows.append({**common, "name": "superbloom-L2", "alpha": 50, "vocab_size": 2 * n // 50, "total_params": n // 3,
                     "ms_per_step": sb_ms, "speedup_median_paired": med, "speedup_min_paired": lo,
                     "speedup_max_paired": hi})
    return pd.DataFrame(rows)


def test_the_table_and_words_on_fixed_timings():
    view = train_time_view(_rows())
    assert view["ids"].tolist() == ["10,000", "1,000,000"]
    assert view["unhashed (ms/step)"].tolist() == [20.0, 400.0] and view["range of pairs"].iloc[1] == "3.00 to 5.00"
    q = train_time_quoted(_rows())
    assert (q["tt_first_speedup"], q["tt_last_speedup"], q["tt_last_range"]) == ("0.50", "4.0", "3.0 to 5.0")
    assert (q["tt_base_growth"], q["tt_sb_growth"], q["tt_id_growth"]) == ("20", "2.5", "100")
    assert q["tt_trend"] == "the speed-up grows with every larger id space"
    assert q["tt_first_reading"].startswith("Superbloom is slower there")
    flat = train_time_quoted(_rows(((4.0, 3.0, 5.0), (2.0, 1.5, 2.5))))
    assert flat["tt_trend"] == "the speed-up does not grow steadily with the id space"
    assert flat["tt_first_reading"] == "Superbloom is already faster there"
    with pytest.raises(ValueError, match="one unhashed and one Superbloom row per id space"):
        train_time_pairs(_rows().iloc[:3])


def test_the_claim_reads_the_largest_space():
    t = CLAIMS.evaluate(FakeEvidence({"train_time": _rows()})).set_index("id")
    row = t.loc["train-time"]
    assert (row["estimate"], row["low"], row["high"]) == (4.0, 3.0, 5.0) and row["verdict"] == "holds"
    assert "at 1,000,000 ids" in row["ours"] and "at the data's 10,000 ids 0.50x" in row["ours"]
    assert "covers the median with probability 93.8%" in row["method"]
    slower = CLAIMS.evaluate(FakeEvidence({"train_time": _rows(((0.5, 0.4, 0.6), (0.8, 0.7, 0.9)))}))
    assert slower.set_index("id").loc["train-time", "verdict"] == "does not hold"
    missing = CLAIMS.evaluate(FakeEvidence({})).set_index("id").loc["train-time"]
    assert missing["verdict"] == "not testable here" and "train_time" in missing["reason"]


def test_the_figure_draws_both_models_on_log_axes():
    fig = figures.train_step_times(_rows())
    ax = fig.axes[0]
    assert [line.get_label() for line in ax.get_lines()] == ["unhashed (one token per id)", "Superbloom (alpha = 50)"]
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert ax.get_lines()[0].get_ydata().tolist() == [20.0, 400.0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["10,000", "1,000,000"]
