"""pNLP-Mixer's paper dry run: every encoder's size against Table 2's #Param., every task of the profile through the
chapter's loader and one batch through the real projector and collator, two steps of an intent model whose slot head
the loss never reaches, and a resume."""
from __future__ import annotations

import pytest

from hashlib_core.dry_run import dry_run
from hashlib_core.dry_run.runner import DEFAULT_LIMIT
from hashlib_core.papers.pnlp_mixer.dry_run import profile_tasks
from hashlib_core.papers.pnlp_mixer.experiments import CHAPTER
from hashlib_core.papers.pnlp_mixer.tables import paper_rows

#: the paper profile with two of its tasks, one MTOP language and one MASSIVE locale: the loaders of the others are
#: the same code, and the command line's dry run loads them all
PROFILE = CHAPTER.profile("paper", comparison_tasks="mtop-en,atis", mtop_languages="en", massive_languages="de")


@pytest.fixture(scope="module")
def report(mirror):
    return dry_run(CHAPTER, PROFILE, processes=1, write=False)


def test_the_paper_profile_is_ready(report):
    assert report.ok, report.problems


def test_every_encoder_has_table_2s_size(report):
    sizes = report.tables["sizes"]
    labels, table2 = paper_rows("encoder")
    assert len(sizes) == len(PROFILE.encoders)
    for encoder in PROFILE.encoders:
        row = sizes[sizes["model"].str.startswith(labels[encoder])].iloc[0]
        assert row["paper"] == table2.loc[labels[encoder], "#Param."] and row["ours"] == row["paper"]


def test_every_task_loads_with_the_schema_the_chapter_reads(report):
    data = report.tables["data"].set_index("source")
    for task in profile_tasks(PROFILE):
        row = data.loc[f"{task} train (data mirror)"]
        assert row["rows"] == DEFAULT_LIMIT and row["columns"] == "words,intent,slots"
    batch = data.loc["mtop-en batch (MinHash projector, collator)"]
    assert batch["example"] == f"input_features ({DEFAULT_LIMIT}, {PROFILE.max_seq_len}, {PROFILE.bloom_size})"
    assert set(batch["columns"].split(",")) == {"input_features", "attention_mask", "labels", "slot_labels"}


def test_the_intent_model_with_an_unused_slot_head_resumes_to_the_same_weights(report):
    row = report.tables["training"].iloc[0]
    assert (row["steps"], row["resumed_from_step"], row["resumed_steps"]) == (2, 1, 2)
    assert row["resumed_weights"] == row["weights"] != row["fresh_weights"]
