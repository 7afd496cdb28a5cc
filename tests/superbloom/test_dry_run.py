"""Superbloom's paper dry run: every model resolved against the profile's id sets (a size-matched pair within a few
percent), the id-set datasets and Penn Treebank through the chapter's loaders into a masked batch, two steps of a
tiny Superbloom and a resume. The submission prints no size, so none is compared."""
from __future__ import annotations

import pytest

from hashlib_core.dry_run import dry_run
from hashlib_core.dry_run.runner import DEFAULT_LIMIT
from hashlib_core.papers.superbloom.experiments import CHAPTER

#: the paper profile with its own dataset only: the other id-set datasets load through the same function, and the
#: command line's dry run loads them all
PROFILE = CHAPTER.profile("paper", other_datasets="")


@pytest.fixture(scope="module")
def report(mirror):
    return dry_run(CHAPTER, PROFILE, processes=1, write=False)


def test_the_paper_profile_is_ready(report):
    assert report.ok, report.problems


def test_every_model_of_the_profile_is_sized_and_matched_pairs_are_close(report):
    sizes = report.tables["sizes"].assign(name=lambda t: t["model"].str.split(" ").str[0]).set_index("name")
    assert list(sizes.index) == [m.name for m in PROFILE.models()]
    assert (sizes["paper"] == "").all()
    for spec in PROFILE.models():
        if spec.match:
            ours, partner = sizes.loc[spec.name, "parameters"], sizes.loc[spec.match, "parameters"]
            assert abs(ours - partner) / partner < 0.02, spec.name


def test_the_id_sets_reach_a_masked_batch(report):
    data = report.tables["data"].set_index("source")
    assert data.loc["Gowalla id sets (data mirror)", "rows"] == DEFAULT_LIMIT
    batch = data.loc["Gowalla masked batch (hash maps, item masking)"]
    assert set(batch["columns"].split(",")) == {"input_ids", "attention_mask", "labels"}
    assert batch["example"].startswith("input_ids (4, ")


def test_two_steps_resume_to_the_same_step_and_weights(report):
    row = report.tables["training"].iloc[0]
    assert (row["steps"], row["resumed_from_step"], row["resumed_steps"]) == (2, 1, 2)
    assert row["resumed_weights"] == row["weights"] != row["fresh_weights"]
