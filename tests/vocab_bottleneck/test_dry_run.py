"""The vocabulary bottleneck's paper dry run: every shape on the meta device against the figures HashFormers §1
prints; the chapter reads no data and trains nothing, and its dry run says so."""
from __future__ import annotations

from hashlib_core.dry_run import dry_run
from hashlib_core.model_shapes import MODEL_SPECS
from hashlib_core.papers.vocab_bottleneck.claims import claim_rows
from hashlib_core.papers.vocab_bottleneck.experiments import CHAPTER


def test_every_shape_is_counted_against_the_printed_figures():
    report = dry_run(CHAPTER, CHAPTER.profile("paper"), processes=1, write=False)
    assert report.ok, report.problems
    sizes = report.tables["sizes"]
    assert list(dict.fromkeys(sizes["model"])) == [s.name for s in MODEL_SPECS]
    printed = sizes[sizes["paper"] != ""]
    counted = [r for r in claim_rows() if r["ours_column"] in ("total_params", "input_embedding_params")]
    assert sorted(printed["paper"]) == sorted(r["printed"] for r in counted)
    # a printed figure our count does not round to is one the chapter's claims judge, and the note names the claim
    for _, row in printed[printed["agrees"] == False].iterrows():  # noqa: E712 (an object column)
        assert any(r["id"] in row["note"] for r in counted)
    assert list(report.tables["data"]["note"]) == ["this chapter reads no data"]
    assert list(report.tables["training"]["note"]) == ["this chapter trains no model"]
