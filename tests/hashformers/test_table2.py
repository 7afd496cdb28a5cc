"""HashFormers Table 2 (memory efficiency): parameter counts of instantiated models vs. the printed digits."""
from __future__ import annotations

import pytest
import torch

from hashlib_core.papers.hashformers.table2 import embedding_parameter_count, hashformers_table2
from hashlib_core.papers.hashformers.modeling import HashFormerConfig, HashFormerForSequenceClassification
from hashlib_core.params import count_parameters

# Shared by every BERT-base-sized model (d = 768, 12 layers of 3,072, RoBERTa head, no pooler):
#   one layer = Q,K,V,O 4*(768*768+768) = 2,362,368 + FFN in 768*3072+3072 = 2,362,368
#             + FFN out 3072*768+768 = 2,360,064 + two LayerNorms 2*2*768 = 3,072         -> 7,087,872
#   12 layers = 85,054,464; head = dense 768*768+768 + out 768*2+2 = 592,130
#   learned positions 514*768 = 394,752 + token type 1*768 + embedding LayerNorm 2*768 = 1,536
NON_WORD = 394_752 + 768 + 1_536 + 85_054_464 + 592_130  # = 86,043,650
SPECIAL_6 = 6 * 768  # special-token embedding of the compressed variants (rows 0-4 + hashed-word marker)

EXPECTED = {
    # model: (total, emb)
    "BERT-MLM": (NON_WORD + 50_265 * 768, 50_265 * 768),  # 124,647,170 / 38,603,520 (Eq. 9: all |V| rows)
    "Emb (50K)": (NON_WORD + 50_265 * 768, 50_260 * 768),  # 124,647,170 / 38,599,680 (5 special rows excluded)
    "Emb (1K)": (NON_WORD + 1_005 * 768, 1_000 * 768),  # 86,815,490 / 768,000
    # Pool: codebook (2^10 + 1 padding row) * 768 + W 13 * 768; emb = (1024 + 13 + 1 marker row) * 768
    "Pool": (NON_WORD + SPECIAL_6 + 1_025 * 768 + 13 * 768, (1_024 + 13 + 1) * 768),  # 86,845,442 / 797,184
    # Add: 128 codebooks of 2 vectors; emb = 2*128*768 + marker row 768
    "Add": (NON_WORD + SPECIAL_6 + 2 * 128 * 768, 2 * 128 * 768 + 768),  # 86,244,866 / 197,376
    # Proj: 768 Pearson vectors of length 128; emb = 128*768 + marker row 768
    "Proj": (NON_WORD + SPECIAL_6 + 128 * 768, 128 * 768 + 768),  # 86,146,562 / 99,072
    # ProFormer: 2 layers 2*7,087,872 + Linear(420, 768, bias=False) 322,560 + special 5*768 + type 768
    #            + LayerNorm 1,536 + head 592,130 (sinusoidal positions: no parameters)
    "ProFormer": (2 * 7_087_872 + 420 * 768 + 5 * 768 + 768 + 1_536 + 592_130, 420 * 768),  # 15,096,578 / 322,560
    # CANINE-C, CanineConfig(): hash tables 8*16384*96 + char positions 16384*768 + types 16*768 + LN 1,536
    #   + initial and final char encoders 2*7,087,872 + chars_to_molecules conv 768*768*4+768 + LN 1,536
    #   + 12 layers 85,054,464 + projection conv 1536*768*4+768 + LN 1,536 + pooler 590,592 + classifier 1,538
    "CANINE-C": (
        8 * 16_384 * 96 + 16_384 * 768 + 16 * 768 + 1_536 + 2 * 7_087_872 + 768 * 768 * 4 + 768 + 1_536
        + 85_054_464 + 1_536 * 768 * 4 + 768 + 1_536 + 590_592 + 1_538,  # 132,084,482
        8 * 16_384 * 96,  # 12,582,912
    ),
}


@pytest.fixture(scope="module")
def table():
    return hashformers_table2()


def test_table_has_all_models_in_paper_order(table):
    variants = ["Emb (50K)", "Emb (1K)", "Pool", "Add", "Proj"]
    assert list(table["model"]) == ["BERT-MLM", "CANINE-C", "ProFormer"] + 2 * variants
    assert list(table["group"].iloc[:3]) == ["-"] * 3
    assert list(table["group"].iloc[3:8]) == ["HashFormers-MD (Ours)"] * 5
    assert list(table["group"].iloc[8:]) == ["HashFormers-LSH (Ours)"] * 5


@pytest.mark.parametrize("name", list(EXPECTED))
def test_exact_parameter_counts(table, name):
    rows = table[table["model"] == name]
    for _, row in rows.iterrows():  # MD and LSH rows are the same models
        assert (row["total_params"], row["emb_params"]) == EXPECTED[name]


def test_ratios_follow_eq_5_to_7(table):
    base_total, base_emb = EXPECTED["BERT-MLM"]
    for _, row in table.iterrows():
        assert row["pcr_all"] == pytest.approx(100 * (1 - row["total_params"] / base_total))
        assert row["pcr_emb"] == pytest.approx(100 * (1 - row["emb_params"] / base_emb))
        assert row["poep"] == pytest.approx(100 * row["emb_params"] / row["total_params"])


def test_printed_digits_reproduced(table):
    """Our counts reproduce the digits printed in Table 2 (Xue & Aletras 2022), cell by cell, except the
    documented cells: CANINE-C (16,384 vs '16,000' buckets, 132.1M vs 121.0M total), Emb (1K) (a row that repeats
    Pool's printed counts) and Pool's PoEP (797.2K / 86.8M = 0.92%, printed 1.0)."""
    expected_mismatches = {
        "CANINE-C": "total,emb,pcr_all,pcr_emb,poep",
        "Emb (1K)": "emb,pcr_all,pcr_emb,poep",
        "Pool": "poep",
    }
    for _, row in table.iterrows():
        if row["model"] == "BERT-MLM":
            continue
        assert row["mismatched"] == expected_mismatches.get(row["model"], ""), row["model"]
        for column in ("total", "emb", "pcr_all", "pcr_emb", "poep"):
            if column not in row["mismatched"].split(","):
                assert row[f"ours_{column}"] == row[f"paper_{column}"] != ""


def test_headline_digits(table):
    """The paper's headline numbers: 99.1K (abstract, §5.2, §6), 197.4K (§5.2), 322.6K (§5.2), 38.6M and 124.6M."""
    ours = dict(zip(table["model"] + "|" + table["group"], table["ours_emb"]))
    assert ours["Proj|HashFormers-LSH (Ours)"] == "99.1K"
    assert ours["Add|HashFormers-LSH (Ours)"] == "197.4K"
    assert ours["ProFormer|-"] == "322.6K"
    assert ours["BERT-MLM|-"] == "38.6M"
    assert table.loc[table["model"] == "BERT-MLM", "ours_total"].item() == "124.6M"


def test_printed_cells_come_from_the_transcribed_table(table):
    proj = table[(table["model"] == "Proj") & (table["group"] == "HashFormers-MD (Ours)")].iloc[0]
    assert (proj["paper_total"], proj["paper_emb"], proj["paper_poep"]) == ("86.1M", "99.1K", "0.1")
    assert table.loc[table["model"] == "BERT-MLM", "paper_total"].item() == ""


def test_every_mismatch_has_a_note(table):
    for _, row in table.iterrows():
        assert row["note"]
        if row["mismatched"]:
            assert any(word in row["note"] for word in ("printed", "paper"))


def test_word_parameter_count_small_model():
    # d = 8, T = 12, k = 4: Pool = codebook 2^4 * 8 (padding row excluded) + W 3 * 8 + marker row 8 = 160
    config = HashFormerConfig(embedding_type="pool", hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                              intermediate_size=16, num_bits=12, pool_chunk_bits=4)
    model = HashFormerForSequenceClassification(config)
    assert embedding_parameter_count(model) == 16 * 8 + 3 * 8 + 8
    # the rule counts real tensors: every Pool parameter but the padding codeword, plus one special row
    pool = model.hashformer.embeddings.word_embeddings
    assert count_parameters(pool) == 17 * 8 + 3 * 8


def test_embedding_count_rejects_unknown_models():
    with pytest.raises(TypeError, match="no Table 2 embedding-count rule"):
        embedding_parameter_count(torch.nn.Linear(2, 2))
