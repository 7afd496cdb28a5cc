"""The dynamic-embeddings paper dry run: every pre-training model as the run builds it, the corpus and GLUE through
the chapter's tokenizer and masking, two steps of a tiny EELBERT and a resume. The paper prints no size table."""
from __future__ import annotations

import pytest

from hashlib_core.dry_run import dry_run
from hashlib_core.papers.dynamic_embeddings.experiments import CHAPTER

PROFILE = CHAPTER.profile("paper")


@pytest.fixture(scope="module")
def report(mirror):
    return dry_run(CHAPTER, PROFILE, processes=1, write=False)


def test_the_paper_profile_is_ready(report):
    assert report.ok, report.problems


def test_every_pretrained_model_is_sized_and_the_dynamic_ones_are_smaller(report):
    sizes = report.tables["sizes"].set_index("model")
    assert list(sizes.index) == [s.name for s in PROFILE.selected()]
    table = sizes.loc["BERT-tiny", "parameters"]
    one_layer = sizes.loc["UNO-EELBERT (ours)", "parameters"]
    assert one_layer < table and (sizes["paper"] == "").all()


def test_the_corpus_and_glue_reach_the_model_inputs(report):
    data = report.tables["data"].set_index("source")
    batch = data.loc["pre-training batch (WordPiece, MLM masking)"]
    assert set(batch["columns"].split(",")) == {"input_ids", "attention_mask", "labels"}
    assert batch["example"] == f"input_ids (2, {PROFILE.seq_len})"
    assert {s for s in data.index if s.startswith("GLUE")} == {f"GLUE {t} train (data mirror)"
                                                                 for t in PROFILE.task_keys()}


def test_two_steps_resume_to_the_same_step_and_weights(report):
    row = report.tables["training"].iloc[0]
    assert (row["steps"], row["resumed_from_step"], row["resumed_steps"]) == (2, 1, 2)
    assert row["resumed_weights"] == row["weights"] != row["fresh_weights"]
