"""Table 3's further depths: the matched pair at a depth beyond the profile's ``depths``, one seed, nothing else moved
to it (profile, experiments' ownership of the setting, the depth tables' rows and words, the figure's label)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hashlib_core.papers.superbloom import figures, tables
from hashlib_core.papers.superbloom.experiments import CHAPTER
from hashlib_core.papers.superbloom.profiles import PROFILES

PART_KINDS = ("models", "sweep", "curves", "segments")


def test_further_depths_must_be_deeper_and_increasing():
    for bad in ((4,), (2,), (16, 8), (8, 8)):
        with pytest.raises(ValueError, match="further_depths must list increasing layer counts deeper than"):
            PROFILES.get("cpu", further_depths=bad)
    assert PROFILES.get("cpu", further_depths=(8, 12)).further_depths == (8, 12)


def test_further_depths_add_one_seed_pairs_and_move_nothing_else():
    p = PROFILES.get("cpu")
    assert p.further_depths == (8,) and p.deep == 4
    specs = {m.name: m for m in p.models()}
    assert specs["superbloom-L8"].layers == specs["baseline-L8"].layers == 8
    assert specs["baseline-L8"].match == "superbloom-L8" and specs["superbloom-L8"].hidden == p.hidden
    assert not {"superbloom-L8", "baseline-L8"} & set(p.seeded())          # one seed: the sweep's
    assert p.roles()["superbloom_deep"] == "superbloom-L4" and specs["superbloom-wide-L1"].match == "superbloom-L4"
    assert [m.name for m in p.deep_models()] == ["superbloom-L4", "baseline-L4"]
    assert {m.name for m in p.models()} - {m.name for m in PROFILES.get("cpu", further_depths=()).models()} == {
        "superbloom-L8", "baseline-L8"}


def test_only_the_further_depth_part_owns_the_setting():
    owners = {name for name, e in CHAPTER.experiments.items() if "further_depths" in e.owns}
    assert owners == {"recall_L8"}
    assert "recall_L8" in [e.name for e in CHAPTER.selected(PROFILES.get("cpu"))]
    assert "recall_L8" not in [e.name for e in CHAPTER.selected(PROFILES.get("cpu", further_depths=()))]


def test_dropping_the_further_depth_stales_its_part_only():
    stale = CHAPTER.stale("cpu", profile=PROFILES.get("cpu", further_depths=()))
    assert stale == {f"recall_L8_{kind}": ["further_depths"] for kind in PART_KINDS}


def _recall() -> pd.DataFrame:
    names = ["superbloom-L1", "baseline-L1", "superbloom-L4", "baseline-L4", "superbloom-L8", "baseline-L8",
             "superbloom-wide-L1"]
    return pd.DataFrame({
        "name": names, "layers": [1, 1, 4, 4, 8, 8, 1], "hidden": [8, 2, 8, 3, 8, 4, 20],
        "total_params": [10, 10, 20, 20, 40, 41, 20], "rec@1": [10.0, 40.0, 30.0, 42.0, 36.0, 43.0, 20.0],
        "sd rec@1": [1.0, 1.0, 0.5, 0.5, np.nan, np.nan, 1.0], "seeds": [3, 3, 3, 3, 1, 1, 3],
        "segments": 5, "learning_rate": 1e-3, "converged": [True] * 4 + [False] * 2 + [True], "certified": 100.0,
        "mean_scored": 7.0, "matched_to": ["", "superbloom-L1", "", "superbloom-L4", "", "superbloom-L8",
                                           "superbloom-L4"],
        "size_vs_matched": [np.nan, 0.0, np.nan, 0.0, np.nan, 0.025, np.nan]})


def test_the_depth_tables_read_the_seeded_depth_and_the_deepest():
    rec = _recall()
    assert tables.depth_effect(rec)["ours: layers"].tolist() == ["1 -> 8"] * 2      # no profile's depth: the deepest
    effect = tables.depth_effect(rec, 4)
    assert effect["model"].tolist() == ["baseline", "baseline", "superbloom", "superbloom"]
    assert effect["ours: layers"].tolist() == ["1 -> 4", "1 -> 8"] * 2
    assert effect["ours: seeds (deep)"].tolist() == [3, 1, 3, 1]
    assert effect["ours: gain"].tolist() == [2.0, 3.0, 20.0, 26.0]
    view = tables.depth_view(rec)
    assert view["layers"].tolist() == [1, 4, 8] and view["seeds"].tolist() == [3, 3, 1]
    assert view["Superbloom rec@1"].tolist()[-1] == "36.0"
    q = tables._depth_quoted(rec, pd.DataFrame())
    assert (q["depth_layers"], q["base_gain"], q["sb_gain"], q["depth_seeds"]) == ("1 to 8", "+3.0", "+26.0",
                                                                                   "1 seed")  # no profile: deepest
    q = tables._depth_quoted(rec, pd.DataFrame(), 4)
    assert (q["depth_layers"], q["base_gain"], q["sb_gain"], q["depth_seeds"]) == ("1 to 4", "+2.0", "+20.0",
                                                                                   "3 seeds")
    assert (q["further_depth_layers"], q["further_base_gain"], q["further_sb_gain"], q["further_depth_seeds"]) == (
        "1 to 8", "+3.0", "+26.0", "1 seed")
    assert q["further_depth_verdict"].startswith("depth helps Superbloom more")
    assert q["depth_seeds_note"] == "3 seeds at 1 and 4 layers and one seed, the learning-rate sweep's, at 8 layers"
    assert q["further_depth_text"] == ("Going on to the further depth, from 1 to 8 layers (1 seed at the deeper "
                                       "end), the baseline gains +3.0 points and Superbloom +26.0: depth helps "
                                       "Superbloom more than the baseline, as in the paper. With one seed this is a "
                                       "trend, not a test: the seeds of one model differ by up to 1.0 points "
                                       "(standard deviation) at the seeded depths.")
    assert q["deep_name"] == "superbloom-L4" and q["deep_rec1"] == "30.0" and q["wide_verdict"] == (
        "the deep model is ahead")                                       # the wide model faces its match, not L8
    # without a further depth there is no second row, and no further words
    shallow = tables.depth_effect(rec[rec["layers"] < 8], 4)
    assert shallow["ours: layers"].tolist() == ["1 -> 4", "1 -> 4"]
    q = tables._depth_quoted(rec[rec["layers"] < 8], pd.DataFrame(), 4)
    assert "further_base_gain" not in q and q["further_depth_text"] == "No depth beyond 4 layers is trained here."
    assert q["depth_seeds_note"] == "3 seeds at 1 and 4 layers"
    # one seed everywhere (the smoke profile): the claims' depth is still the profile's, not the deepest row
    q = tables._depth_quoted(rec.assign(seeds=1), pd.DataFrame(), 4)
    assert (q["depth_layers"], q["depth_seeds"], q["further_depth_layers"]) == ("1 to 4", "1 seed", "1 to 8")
    assert q["depth_seeds_note"] == "one seed, the learning-rate sweep's, at 1, 4 and 8 layers"
    assert q["further_depth_text"].endswith("as in the paper.")            # no seeded spread to quote


def test_a_further_depth_without_a_training_part_is_refused():
    from types import SimpleNamespace

    from hashlib_core.papers.superbloom import experiments as ex

    with pytest.raises(ValueError, match=r"'baseline-L16', 'superbloom-L16'\] have no training part"):
        ex._recall(SimpleNamespace(profile=PROFILES.get("cpu", further_depths=(16,))))


def test_the_depth_figure_names_the_wide_models_match():
    fig = figures.recall_by_depth(_recall())
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert "one-layer Superbloom as large as superbloom-L4 (d = 20)" in labels
    assert sorted(fig.axes[0].get_xticks()) == [1, 4, 8]
