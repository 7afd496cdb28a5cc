"""MultiHashFormer's paper dry run: every language model against Table 1's #Param (the profile's backbone is Table
7's 100M), the training text through the chapter's loader into BPE windows, two steps of a tiny MHF and a resume."""
from __future__ import annotations

import pytest

from hashlib_core.dry_run import dry_run
from hashlib_core.papers.multihashformer.dry_run import profile_labels
from hashlib_core.papers.multihashformer.experiments import CHAPTER
from hashlib_core.papers.multihashformer.params import multihashformer_table1_params

PROFILE = CHAPTER.profile("paper")


@pytest.fixture(scope="module")
def report(mirror):
    return dry_run(CHAPTER, PROFILE, processes=1, write=False)


def test_the_paper_profile_is_ready(report):
    assert report.ok, report.problems


def test_the_table_1_models_have_its_sizes(report):
    sizes = report.tables["sizes"]
    assert list(dict.fromkeys(sizes["model"])) == [PROFILE.spec(label).label for label in profile_labels(PROFILE)]
    printed = sizes[sizes["paper"] != ""]
    table1 = multihashformer_table1_params()
    assert len(printed) == 2 * (table1["size"] == "100M").sum()     # every 100M row of Table 1: emb and dec
    # every printed cell agrees but the one the chapter's Table 1 comparison shows (and says so)
    differ = printed[printed["agrees"] == False]  # noqa: E712 (an object column)
    expected = table1[(table1["size"] == "100M") & ~table1["emb_agrees"]]
    assert len(differ) == len(expected) and differ["note"].str.contains("table1_params").all()
    same = printed[printed["agrees"] == True]  # noqa: E712
    assert len(same) == len(printed) - len(differ) and (same["ours"] == same["paper"]).all()


def test_the_corpus_reaches_training_windows(report):
    data = report.tables["data"]
    windows = data[data["source"].str.startswith("training windows")].iloc[0]
    assert windows["columns"] == "input_ids,labels" and windows["rows"] >= 1
    assert windows["example"] == f"input_ids ({PROFILE.seq_len},)"


def test_two_steps_resume_to_the_same_step_and_weights(report):
    row = report.tables["training"].iloc[0]
    assert (row["steps"], row["resumed_from_step"], row["resumed_steps"]) == (2, 1, 2)
    assert row["resumed_weights"] == row["weights"] != row["fresh_weights"]
