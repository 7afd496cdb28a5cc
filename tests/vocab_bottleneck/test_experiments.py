"""Chapter "The vocabulary bottleneck": counts from instantiated models reproduce the printed figures."""
from __future__ import annotations

import pytest

import pandas as pd

from hashlib_core.papers.vocab_bottleneck import experiments as vb
from hashlib_core.papers.vocab_bottleneck import figures, tables
from hashlib_core.model_shapes import MODEL_SPECS
from hashlib_core.papers.vocab_bottleneck.profiles import PROFILES


@pytest.fixture(scope="module")
def shares():
    return vb.embedding_shares().set_index("model")


def test_every_spec_is_counted(shares):
    assert list(shares.index) == [s.name for s in MODEL_SPECS]
    assert (shares["vocabulary_params"] >= shares["input_embedding_params"]).all()
    assert (shares["input_embedding_params"] == shares["vocab_size"] * shares["hidden_size"]).all()


def test_hashformers_section1_digits(shares):
    # HashFormers §1: BERT-base "23.4M" embedding parameters; Table 2 prints RoBERTa's matrix as "38.6M"
    # and its total as "124.6M" (the BERT-MLM row, a RoBERTa-base architecture).
    assert f"{shares.loc['BERT-base', 'input_embedding_params'] / 1e6:.1f}M" == "23.4M"
    assert f"{shares.loc['RoBERTa-base', 'input_embedding_params'] / 1e6:.1f}M" == "38.6M"
    assert f"{shares.loc['RoBERTa-base', 'total_params'] / 1e6:.1f}M" == "124.6M"


def test_tied_and_untied_heads(shares):
    assert bool(shares.loc["GPT-2", "tied_head"]) and shares.loc["GPT-2", "output_head_params"] == 0
    mistral = shares.loc["Mistral-7B"]
    assert not mistral["tied_head"]
    assert mistral["output_head_params"] == mistral["input_embedding_params"] == 32_000 * 4_096


def test_claims_comparison_covers_every_printed_claim(shares):
    from hashlib_core.results import load_paper_table

    comparison = tables.compare_with_claims(shares.reset_index())
    claims = load_paper_table("vocabulary_bottleneck")
    printed = sum((claims[c] != "-").sum() for c in
                  ["vocab_size", "embedding_dim", "embedding_params", "total_params", "embedding_share",
                   "embedding_size", "model_size"])
    assert len(comparison) == printed
    assert comparison["ours"].ne("-").all()
    got = comparison.set_index(["printed_model", "metric"])
    assert got.loc[("BERT-BASE", "embedding_params"), "agrees"]


def test_materialised_count_equals_meta_count():
    spec = next(s for s in MODEL_SPECS if s.name == "BERT-base")
    row = vb.embedding_shares([spec], materialize_up_to=200_000_000).iloc[0]
    assert row["counted_on"] == "meta + cpu (bf16)"


def test_paper_profile_reads_an_existing_results_file(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(vb, "embedding_shares", lambda **kw: calls.append(kw) or pd.DataFrame({"model": ["m"]}))
    paper = PROFILES.get("paper")
    vb.CHAPTER.load_or_run(paper, results_root=tmp_path)                     # nothing on disk: computes
    vb.CHAPTER.load_or_run(paper, results_root=tmp_path)                     # now shown from the file
    vb.CHAPTER.load_or_run(PROFILES.get("smoke"), results_root=tmp_path)     # smoke computes (dirty or no commit)
    assert len(calls) == 2


def test_quoted_numbers_and_figure_come_from_the_counts(shares):
    table = shares.reset_index()
    claims = tables.compare_with_claims(table)
    quoted = tables.quoted(table, claims)
    assert quoted["bert_share"] == f"{shares.loc['BERT-base', 'input_embedding_share_%']:.1f}%"
    assert quoted["n_agree"] == f"{int(claims['agrees'].sum())} of {len(claims)}"
    assert quoted["qwen_shares"].count("%") == 3
    view = tables.shares_table(table)
    assert list(view["model"]) == list(table["model"]) and view.loc[0, "total"].endswith("M")
    fig = figures.share_vs_size(table, claims)
    families = table["family"].nunique()
    assert len(fig.axes[0].lines) == families and len(fig.axes[0].collections) == 1
