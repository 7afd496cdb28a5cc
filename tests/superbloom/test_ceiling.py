"""The page's reading of the rankings through the hash: one row per trained Superbloom model (seeds' maps averaged),
the share of the gap it covers, and every reading of the quoted words, on fixed inputs."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hashlib_core.papers.superbloom.tables_ceiling import LEARNED, ceiling_quoted, ceiling_view
from hashlib_core.papers.superbloom.yardsticks import COOCCURRENCE
from hashlib_core.papers.superbloom.yardsticks_hashed import COOCCURRENCE_HASHED, POPULARITY_HASHED

VIEW = pd.DataFrame({"dataset": ["Small"] * 3 + ["Big"] * 4,
                     "ids": [500] * 3 + [40_000] * 4,
                     "name": ["superbloom-L4", "baseline-L4", COOCCURRENCE,
                              "superbloom-L4", "baseline-L4", "popularity (no model)", COOCCURRENCE],
                     "rec@1": [5.0, 6.0, 4.0, 0.1, 0.2, 0.3, 9.0],
                     "rec@100": [30.0, 40.0, 50.0, 2.0, 5.0, 5.1, 70.0]})
ALPHA = pd.DataFrame({"dataset": ["Big"] * 3, "name": ["superbloom-a50-L4", "superbloom-a2-L4", "baseline-L4"],
                      "rec@1": [0.1, 0.5, 0.6], "rec@100": [2.5, 20.0, 21.0]})
ALPHA_MODELS = pd.DataFrame({"name": ["superbloom-a50-L4", "superbloom-a2-L4", "baseline-L4"], "alpha": [50, 2, 1]})


def hashed(small=(10.0, 10.0), big50=(2.0, 42.0), big2=(5.0, 65.0), seeds=1):
    """Rankings through the hash: (popularity, counts) at rec@100 per set and alpha, repeated for ``seeds`` maps
    (the second seed's rows 2 points apart, so that the mean is the value given)."""
    rows = []
    for seed in range(seeds):
        shift = 0.0 if seeds == 1 else (-1.0 if seed == 0 else 1.0)
        for dataset, alpha, (pop, cooc) in (("Small", 50, small), ("Big", 50, big50), ("Big", 2, big2)):
            rows += [{"dataset": dataset, "alpha": alpha, "seed": seed, "name": POPULARITY_HASHED, "rec@1": 0.0,
                      "rec@100": pop + shift, "power": 1.0},
                     {"dataset": dataset, "alpha": alpha, "seed": seed, "name": COOCCURRENCE_HASHED, "rec@1": 0.0,
                      "rec@100": cooc + shift, "power": 4.0 * (seed + 1) if dataset == "Big" else 2.0}]
    return pd.DataFrame(rows)


def test_ceiling_view_one_row_per_trained_superbloom():
    out = ceiling_view(VIEW, ALPHA, ALPHA_MODELS, hashed(small=(10.0, 35.0)), 50)
    assert out["model"].tolist() == ["superbloom-L4", "superbloom-L4", "superbloom-a50-L4", "superbloom-a2-L4"]
    assert out["dataset"].tolist() == ["Small", "Big", "Big", "Big"] and out["alpha"].tolist() == [50, 50, 50, 2]
    big = out.iloc[1]
    assert (big["popularity via hash rec@100"], big["Superbloom rec@100"], big["counts via hash rec@100"],
            big["counts, no hash rec@100"], big["ids"], big["unhashed baseline rec@100"]) == (
        2.0, 2.0, 42.0, 70.0, 40_000, 5.0)
    assert big[LEARNED] == 0.0
    assert out.iloc[0][LEARNED] == pytest.approx(100 * 20 / 25)          # (30 - 10) / (35 - 10)
    assert out.iloc[2][LEARNED] == pytest.approx(100 * 0.5 / 40)         # (2.5 - 2) / (42 - 2)
    assert out.iloc[3][LEARNED] == pytest.approx(100 * 15 / 60)          # (20 - 5) / (65 - 5)
    assert out["unhashed baseline rec@100"].tolist() == [40.0, 5.0, 21.0, 21.0]   # the diagnosis's own baseline
    assert out["baseline sd rec@100"].isna().all()                      # no spread given
    with_sd = ceiling_view(VIEW, ALPHA, ALPHA_MODELS, hashed(), 50, {"Big": 1.5})
    assert with_sd["baseline sd rec@100"].tolist()[:3] == [pytest.approx(np.nan, nan_ok=True), 1.5,
                                                           pytest.approx(np.nan, nan_ok=True)]
    # counts not ahead of popularity through the hash: no share
    assert np.isnan(ceiling_view(VIEW, None, None, hashed(small=(10.0, 10.0)), 50).iloc[0][LEARNED])


def test_ceiling_view_averages_the_seeds_maps_and_lists_their_powers():
    one = ceiling_view(VIEW, ALPHA, ALPHA_MODELS, hashed(), 50)
    two = ceiling_view(VIEW, ALPHA, ALPHA_MODELS, hashed(seeds=2), 50)
    pd.testing.assert_frame_equal(one.drop(columns="counts' power"), two.drop(columns="counts' power"))
    assert one["counts' power"].tolist() == ["2", "4", "4", "4"] and two["counts' power"].tolist()[1] == "4/8"


def test_ceiling_view_without_the_diagnosis_and_without_rows():
    out = ceiling_view(VIEW, None, None, hashed(), 50)
    assert out["model"].tolist() == ["superbloom-L4", "superbloom-L4"]
    with pytest.raises(ValueError, match="run yardsticks after the models"):
        ceiling_view(VIEW, None, None, hashed()[lambda d: d["alpha"] == 2], 50)


def quoted(**kwargs):
    return ceiling_quoted(ceiling_view(VIEW, ALPHA, ALPHA_MODELS, hashed(**kwargs), 50), 50)


def test_ceiling_quoted_on_fixed_inputs():
    q = quoted(small=(10.0, 35.0))
    assert q["c_top"] == "rec@100" and q["c_alpha"] == "50" and q["c_large"] == "40,000"
    assert q["c_keep"] == "Small 70%; Big 60%"                           # 35 / 50, 42 / 70
    assert q["c_learned"] == "Small 80%; Big 0%"
    assert q["c_reading"] == ("there the model (2.0% at rec@100) is below even the popularity ranking through its "
                              "own hash, while the counts through the same hash reach 42.0% on Big: at this training "
                              "the hash is not yet what holds the model back")
    # the main set (first row): counts through the hash 35 below its baseline's 40 (no spread given: any gap counts)
    assert q["c_main_sentence"] == (
        "On Small the model has covered 80% of the gap; the counts through the hash reach 35.0% at rec@100, the "
        "unhashed baseline of its size 40.0%: at this alpha even a Superbloom model that predicted each hash's "
        "distribution as well as the counts do would stay below that baseline")
    # with the baseline's spread across seeds larger than the gap, the two read as level
    level = ceiling_quoted(ceiling_view(VIEW, ALPHA, ALPHA_MODELS, hashed(small=(10.0, 35.0)), 50,
                                        {"Small": 6.0}), 50)["c_main_sentence"]
    assert "40.0% (sd 6.0 across seeds): a Superbloom model" in level and level.endswith(
        "would come about level with that baseline, within its spread across seeds")
    # the diagnosis, alpha decreasing: 50 lets 42 through, 1.25% covered; 2 lets 65 through, 25% covered
    assert q["c_sweep_dataset"] == "Big"
    assert q["c_sweep"] == "α = 50: 42.0% through the hash, 1% covered; α = 2: 65.0% through the hash, 25% covered"
    assert q["c_sweep_reading"] == (
        "a finer hash lets more of the counts' recall through, and the model (larger at each finer alpha) covers a "
        "larger share of the gap; even at α = 2 it covers 25% of it, so there too the training, not the hash, is "
        "what falls short")


def test_ceiling_quoted_readings_turn_with_the_numbers():
    # Big at alpha 50 covers (2 - 1) / (3 - 1) = 50%; its counts through the hash (3) fall below its baseline
    q = quoted(small=(10.0, 45.0), big50=(1.0, 3.0), big2=(5.0, 17.0))
    assert q["c_reading"] == "there the model has covered a part of the gap"
    assert q["c_main_sentence"].endswith("the hash leaves room to pass that baseline")
    # a2 covers (20 - 5) / (17 - 5) = 125%, a50 (2.5 - 1) / 2 = 75%: growing, finest covers most
    assert q["c_sweep_reading"] == (
        "a finer hash lets more of the counts' recall through, and the model (larger at each finer alpha) covers a "
        "larger share of the gap; at α = 2 it covers most of it")
    little = quoted(big50=(1.0, 30.0))                                  # Big: (2 - 1) / 29 = 3%
    assert little["c_reading"].startswith("there the model (2.0% at rec@100) has covered under a tenth of the gap")
    flat = quoted(big50=(2.0, 2.0), big2=(5.0, 1.0))                     # counts never ahead on Big
    assert flat["c_reading"].startswith("there the counts through the hash are not ahead of popularity")
    assert flat["c_sweep"] == ("α = 50: 2.0% through the hash, counts not ahead; "
                               "α = 2: 1.0% through the hash, counts not ahead")
    assert flat["c_sweep_reading"] == "a finer hash does not let steadily more of the counts' recall through"


def test_ceiling_quoted_edge_cases():
    # no large set, no baseline on the main set, a one-alpha diagnosis
    view = VIEW[VIEW["dataset"] == "Small"]
    view = view[view["name"] != "baseline-L4"]
    out = ceiling_view(view, ALPHA.assign(dataset="Small").iloc[[0]], ALPHA_MODELS,
                       hashed().assign(dataset="Small").drop_duplicates(["alpha", "name"]), 50)
    q = ceiling_quoted(out, 50)
    assert q["c_reading"] == "no set here has 40,000 ids or more"
    assert q["c_main_sentence"].endswith("no unhashed baseline was trained beside it")
    assert q["c_sweep_reading"] == "one alpha only, so no trend"
    alone = ceiling_quoted(ceiling_view(VIEW, None, None, hashed(), 50), 50)
    assert (alone["c_sweep"], alone["c_sweep_reading"]) == ("not run", "not measured")


def test_ceiling_display_names_the_cutoff_once():
    from hashlib_core.papers.superbloom.tables_ceiling import ceiling_display

    out = ceiling_view(VIEW, ALPHA, ALPHA_MODELS, hashed(), 50)
    shown, caption = ceiling_display(out)
    assert shown.columns.tolist() == ["dataset", "model", "alpha", "popularity via hash", "Superbloom",
                                      "counts via hash", "power", "baseline", "baseline sd", "counts, no hash",
                                      "covered (%)"]
    assert "rec@100 (%)" in caption and shown["Superbloom"].tolist() == out["Superbloom rec@100"].tolist()
    out.attrs.clear()                                                   # the cut-off read back from the columns
    assert ceiling_display(out)[1] == caption
