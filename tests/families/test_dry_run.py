"""The every-family paper dry run: Track A's classifiers per family and budget and Track B's memories as the run
builds them, the tasks and Penn Treebank through the chapter's loaders, two steps of a tiny classifier and a resume.
The chapter reproduces no paper table, so no size is compared with a printed one."""
from __future__ import annotations

import pytest

from hashlib_core.dry_run import dry_run
from hashlib_core.papers.families.experiments import CHAPTER
from hashlib_core.papers.families.profiles import VOCABULARY
from hashlib_core.papers.families.track_a import settings

#: the paper profile on SST-2 with four families and two memories: every other task, family and memory goes through
#: the same code (the command line's dry run builds them all, which takes minutes: some families hash the whole
#: vocabulary)
PROFILE = CHAPTER.profile("paper", tasks="sst2", families="full,hashing-trick,bloom,md5-pool", memories="none,bigram")


@pytest.fixture(scope="module")
def report(mirror):
    return dry_run(CHAPTER, PROFILE, processes=1, write=False)


def test_the_paper_profile_is_ready(report):
    assert report.ok, report.problems


def test_every_setting_is_sized_and_budgets_buy_what_they_say(report):
    from hashlib_core.data import load_wordpiece_vocab

    sizes = report.tables["sizes"]
    track_a = sizes[sizes["model"].str.startswith("A ")]
    expected = [f"A {task}: {s.family} at {s.fraction:g}" for task in PROFILE.tasks
                for s in settings(PROFILE, len(load_wordpiece_vocab(VOCABULARY)), task)]
    assert list(dict.fromkeys(track_a["model"])) == expected
    emb = track_a[track_a["measure"] == "embedding"].set_index("model")["parameters"]
    full = emb["A sst2: full at 1"]
    for fraction in PROFILE.budgets:
        assert emb[f"A sst2: hashing-trick at {fraction:g}"] <= full * fraction
    track_b = sizes[sizes["model"].str.startswith("B ")]
    assert len(track_b) == 1 + len(PROFILE.memory_multiples)


def test_the_tasks_and_ptb_reach_the_model_inputs(report):
    data = report.tables["data"].set_index("source")
    for task in PROFILE.tasks:
        assert set(data.loc[f"{task} batch (collate)", "columns"].split(",")) == {"input_ids", "attention_mask",
                                                                                   "labels"}
    assert data.loc["Penn Treebank windows (BPE trained on its train split)", "rows"] >= 1


def test_two_steps_resume_to_the_same_step_and_weights(report):
    row = report.tables["training"].iloc[0]
    assert (row["steps"], row["resumed_from_step"], row["resumed_steps"]) == (2, 1, 2)
    assert row["resumed_weights"] == row["weights"] != row["fresh_weights"]
