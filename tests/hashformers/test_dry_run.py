"""HashFormers' paper dry run: Table 2's sizes from the profile's models, the hub corpus (Wikipedia + BookCorpus)
through the chapter's real loader with the hub mocked, GLUE from the mirror, two steps and a resume."""
from __future__ import annotations

import pytest

from hashlib_core.dry_run import dry_run
from hashlib_core.dry_run.runner import DEFAULT_LIMIT
from hashlib_core.papers.hashformers.dry_run import HUB_COLUMNS
from hashlib_core.papers.hashformers.experiments import CHAPTER
from hashlib_core.papers.hashformers.profiles import MODELS, PROFORMER
from hashlib_core.papers.hashformers.table2 import hashformers_table2


@pytest.fixture(scope="module")
def report(mirror):
    return dry_run(CHAPTER, CHAPTER.profile("paper"), processes=1, write=False)


def test_the_paper_profile_is_ready(report):
    assert report.ok, report.problems


def test_sizes_equal_table_2_where_it_prints_them(report):
    sizes = report.tables["sizes"]
    printed = sizes[sizes["paper"] != ""]
    table2 = hashformers_table2()
    profile = CHAPTER.profile("paper")
    hashed = {m.name for m in profile.selected(MODELS) if not m.is_baseline} | {PROFORMER.name}
    assert set(printed["model"]) == hashed                   # Table 2 prints every HashFormer and ProFormer
    assert len(printed) == 2 * len(hashed)                   # its total and its embedding count
    agree = printed[printed["agrees"] == True]  # noqa: E712 (an object column)
    assert (agree["ours"] == agree["paper"]).all()
    # the one disagreement the chapter's Table 2 explains (Emb (1K) repeats Pool's printed count) keeps its note
    assert set(printed.loc[printed["agrees"] == False, "note"].str[:5]) <= {"N = 1"}  # noqa: E712
    proj = sizes[(sizes["model"] == "LSH-Proj") & (sizes["measure"] == "total")].iloc[0]
    row = table2[(table2["model"] == "Proj") & (table2["hashing"] == "lsh")].iloc[0]
    assert proj["parameters"] == row["total_params"] and proj["paper"] == row["paper_total"]


def test_the_hub_corpus_goes_through_the_real_loader_with_its_schema(report):
    data = report.tables["data"].set_index("source")
    for spec in CHAPTER.profile("paper").paper_corpus:
        row = data.loc[f"hub {spec} (local fixture)"]
        assert row["rows"] == DEFAULT_LIMIT and row["reads"] == "text"
        assert tuple(row["columns"].split(",")) == HUB_COLUMNS[spec.partition(":")[0]]
    batch = data.loc["pre-training batch (MD-Emb, from the corpus above)"]
    assert set(batch["columns"].split(",")) == {"input_ids", "attention_mask", "labels"}
    assert batch["example"] == f"input_ids (2, {CHAPTER.profile('paper').seq_len})"
    assert {s for s in data.index if s.startswith("GLUE")} == {
        f"GLUE {t} train (data mirror)" for t in CHAPTER.profile("paper").task_keys()}


def test_two_steps_resume_to_the_same_step_and_weights(report):
    row = report.tables["training"].iloc[0]
    assert (row["steps"], row["resumed_from_step"], row["resumed_steps"]) == (2, 1, 2)
    assert row["resumed_weights"] == row["weights"] != row["fresh_weights"]
