"""The page's reading of the rankings through the hash: one row per trained Superbloom model, the share learned of
the context the hash keeps, and the quoted words, on fixed inputs."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hashlib_core.papers.superbloom.tables_ceiling import LEARNED, ceiling_quoted, ceiling_view
from hashlib_core.papers.superbloom.yardsticks import COOCCURRENCE, COOCCURRENCE_HASHED, POPULARITY_HASHED

VIEW = pd.DataFrame({"dataset": ["Big"] * 4 + ["Small"] * 3,
                     "ids": [40_000] * 4 + [500] * 3,
                     "name": ["superbloom-L4", "baseline-L4", "popularity (no model)", COOCCURRENCE,
                              "superbloom-L4", "baseline-L4", COOCCURRENCE],
                     "rec@1": [0.1, 0.2, 0.3, 9.0, 5.0, 6.0, 4.0],
                     "rec@100": [2.0, 5.0, 5.1, 70.0, 30.0, 40.0, 50.0]})
ALPHA = pd.DataFrame({"dataset": ["Big"] * 3, "name": ["superbloom-a50-L4", "superbloom-a2-L4", "baseline-L4"],
                      "rec@1": [0.1, 0.5, 0.6], "rec@100": [2.5, 20.0, 21.0]})
ALPHA_MODELS = pd.DataFrame({"name": ["superbloom-a50-L4", "superbloom-a2-L4", "baseline-L4"], "alpha": [50, 2, 1]})
HASHED = pd.DataFrame({"dataset": ["Big"] * 4 + ["Small"] * 2,
                       "alpha": [50, 50, 2, 2, 50, 50],
                       "name": [POPULARITY_HASHED, COOCCURRENCE_HASHED] * 3,
                       "rec@1": [0.0] * 6, "rec@100": [2.0, 42.0, 5.0, 65.0, 10.0, 10.0]})


def test_ceiling_view_one_row_per_trained_superbloom():
    out = ceiling_view(VIEW, ALPHA, ALPHA_MODELS, HASHED, 50)
    assert out["model"].tolist() == ["superbloom-L4", "superbloom-L4", "superbloom-a50-L4", "superbloom-a2-L4"]
    assert out["dataset"].tolist() == ["Big", "Small", "Big", "Big"] and out["alpha"].tolist() == [50, 50, 50, 2]
    big = out.iloc[0]
    assert (big["popularity via hash rec@100"], big["Superbloom rec@100"], big["counts via hash rec@100"],
            big["counts, no hash rec@100"], big["ids"]) == (2.0, 2.0, 42.0, 70.0, 40_000)
    assert big[LEARNED] == 0.0 and big["unhashed baseline rec@100"] == 5.0
    assert out["unhashed baseline rec@100"].tolist() == [5.0, 40.0, 21.0, 21.0]   # the diagnosis's own baseline
    assert out.iloc[2][LEARNED] == pytest.approx(100 * 0.5 / 40)         # (2.5 - 2) / (42 - 2)
    assert out.iloc[3][LEARNED] == pytest.approx(100 * 15 / 60)          # (20 - 5) / (65 - 5)
    assert np.isnan(out.iloc[1][LEARNED])                                # counts not ahead of popularity


def test_ceiling_view_without_the_diagnosis_and_without_rows():
    out = ceiling_view(VIEW, None, None, HASHED, 50)
    assert out["model"].tolist() == ["superbloom-L4", "superbloom-L4"]
    with pytest.raises(ValueError, match="run yardsticks after the models"):
        ceiling_view(VIEW, None, None, HASHED[HASHED["alpha"] == 2], 50)


def test_ceiling_quoted_reads_the_profile_alpha_rows():
    q = ceiling_quoted(ceiling_view(VIEW, ALPHA, ALPHA_MODELS, HASHED, 50), 50)
    assert q["c_top"] == "rec@100" and q["c_alpha"] == "50" and q["c_large"] == "40,000"
    assert q["c_keep"] == "Big 60%; Small 20%"                           # 42 / 70, 10 / 50
    assert q["c_learned"] == "Big 0%; Small (counts not ahead)"
    assert q["c_big_most"] == "0%" and "has not even reached the popularity ranking" in q["c_reading"]
    # the main dataset (first row): counts through the hash 42 above the baseline's 5
    assert (q["c_main"], q["c_main_kept"], q["c_main_base"]) == ("Big", "42.0%", "5.0%")
    assert q["c_main_reading"].startswith("so a Superbloom model that predicted") and "would pass" in q["c_main_reading"]
    # the diagnosis, alpha decreasing: 50 keeps 42 and learned 1.25%, 2 keeps 65 and learned 25%
    assert q["c_sweep_dataset"] == "Big"
    assert q["c_sweep"] == "α = 50: 42.0% kept, 1% learned; α = 2: 65.0% kept, 25% learned"
    assert q["c_sweep_reading"] == ("a finer hash keeps more of the counts' recall, and the same steps learn a larger "
                                    "share of it; the share learned stays below half at every alpha, so at these "
                                    "steps learning, not the hash, is the limit there")
    small = ceiling_quoted(ceiling_view(VIEW, ALPHA, ALPHA_MODELS, HASHED, 50), 50, large=10**6)
    assert small["c_big_most"] == "not measured" and small["c_reading"] == "no set here has 1,000,000 ids or more"


def test_ceiling_quoted_readings_turn_with_the_numbers():
    learned = HASHED.assign(**{"rec@100": [1.0, 3.0, 5.0, 65.0, 10.0, 10.0]})
    q = ceiling_quoted(ceiling_view(VIEW, ALPHA, ALPHA_MODELS, learned, 50), 50)
    assert q["c_big_most"] == "50%" and q["c_reading"] == "there the model has learned part of what the hash keeps"
    assert q["c_main_reading"].startswith("so at this alpha even a Superbloom model") and "3.0%" == q["c_main_kept"]
    little = HASHED.assign(**{"rec@100": [1.0, 30.0, 5.0, 65.0, 10.0, 10.0]})     # Big: (2 - 1) / 29 = 3%
    assert "learned little beyond the popularity" in ceiling_quoted(
        ceiling_view(VIEW, ALPHA, ALPHA_MODELS, little, 50), 50)["c_reading"]
    alone = ceiling_quoted(ceiling_view(VIEW, None, None, HASHED, 50), 50)
    assert (alone["c_sweep"], alone["c_sweep_reading"]) == ("not run", "not measured")
