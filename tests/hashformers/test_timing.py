"""Table 3's timing at two encoder sizes (hashlib_core.papers.hashformers.timing) and BERT-MLM's masked-only head
(hashlib_core.papers.hashformers.baselines.RobertaForMaskedOnlyLM), checked against the full head."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from transformers import RobertaForMaskedLM, RobertaForTokenClassification

from hashlib_core.papers.hashformers import timing
from hashlib_core.papers.hashformers.baselines import RobertaForMaskedOnlyLM, baseline_config, build_baseline
from hashlib_core.papers.hashformers.data import Resources
from hashlib_core.papers.hashformers.profiles import MODELS
from hashlib_core.papers.hashformers.timing import BERT_BASE, EncoderShape, timing_at, timing_table

from tests.hashformers.conftest import micro_profile

VOCAB = 97
TINY = dict(hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
            hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)


# ------------------------------------------------------------------------------------------ masked-only MLM head
def mlm_pair() -> tuple[RobertaForMaskedLM, RobertaForMaskedOnlyLM]:
    """The full-head and masked-only BERT-MLM with the same random weights."""
    torch.manual_seed(0)
    config = baseline_config(VOCAB, **TINY)
    full = build_baseline("mlm", config)
    masked = build_baseline("mlm", config, masked_only=True)
    masked.load_state_dict(full.state_dict())
    return full, masked


def fixed_batch() -> dict[str, torch.Tensor]:
    """3 x 11 ids, the last row padded after 7; 8 positions masked (labels), none of them padding."""
    gen = torch.Generator().manual_seed(1)
    ids = torch.randint(5, VOCAB, (3, 11), generator=gen)
    attention = torch.ones_like(ids)
    ids[2, 7:], attention[2, 7:] = 1, 0
    labels = torch.full_like(ids, -100)
    for row, col in ((0, 1), (0, 4), (0, 10), (1, 0), (1, 5), (1, 6), (2, 2), (2, 6)):
        labels[row, col] = int(torch.randint(0, VOCAB, (1,), generator=gen))
    return {"input_ids": ids, "attention_mask": attention, "labels": labels}


def test_masked_only_head_gives_the_full_heads_loss_scores_and_gradients():
    full, masked = mlm_pair()
    assert type(full) is RobertaForMaskedLM and isinstance(masked, RobertaForMaskedLM)
    assert full.state_dict().keys() == masked.state_dict().keys()
    batch = fixed_batch()
    out_full, out_masked = full(**batch), masked(**batch)
    keep = batch["labels"].ne(-100)
    assert out_full.logits.shape == (3, 11, VOCAB) and out_masked.logits.shape == (8, VOCAB)
    torch.testing.assert_close(out_masked.logits, out_full.logits[keep], rtol=1e-5, atol=1e-6)
    # independent reference: the mean negative log-likelihood of the labels at the masked positions
    reference = -torch.log_softmax(out_full.logits[keep].double(), -1)[torch.arange(8), batch["labels"][keep]].mean()
    torch.testing.assert_close(out_full.loss.double(), reference, rtol=1e-6, atol=0.0)
    torch.testing.assert_close(out_masked.loss, out_full.loss, rtol=1e-6, atol=0.0)
    out_full.loss.backward()
    out_masked.loss.backward()
    grads_full = dict(full.named_parameters())
    checked = 0
    for name, param in masked.named_parameters():
        assert param.grad is not None, name
        torch.testing.assert_close(param.grad, grads_full[name].grad, rtol=1e-5, atol=1e-7, msg=name)
        checked += 1
    assert checked == len(list(full.parameters())) and checked > 0


def test_masked_only_head_without_labels_or_masked_positions_is_the_full_model():
    full, masked = mlm_pair()
    batch = fixed_batch()
    inputs = {k: v for k, v in batch.items() if k != "labels"}
    torch.testing.assert_close(masked(**inputs).logits, full(**inputs).logits, rtol=0.0, atol=0.0)
    none = torch.full_like(batch["labels"], -100)
    assert torch.isnan(full(**inputs, labels=none).loss) and torch.isnan(masked(**inputs, labels=none).loss)
    as_tuple = masked(**batch, return_dict=False)
    torch.testing.assert_close(as_tuple[0], masked(**batch).loss, rtol=0.0, atol=0.0)


def test_masked_only_head_rejects_bad_labels_and_options():
    _, masked = mlm_pair()
    batch = fixed_batch()
    with pytest.raises(ValueError, match="labels must have the shape of input_ids"):
        masked(input_ids=batch["input_ids"], labels=batch["labels"][:, :5])
    config = baseline_config(VOCAB, **TINY)
    with pytest.raises(ValueError, match="kind='mlm' only"):
        build_baseline("shuffle_random", config, masked_only=True)
    with pytest.raises(TypeError, match="masked_only must be True or False"):
        build_baseline("mlm", config, masked_only=1)
    assert type(build_baseline("shuffle_random", config, masked_only=False)) is RobertaForTokenClassification


# ------------------------------------------------------------------------------------------ shapes
def test_bert_base_is_the_papers_size_and_shapes_validate():
    assert (BERT_BASE.layers, BERT_BASE.hidden, BERT_BASE.heads, BERT_BASE.intermediate, BERT_BASE.seq_len) == (
        12, 768, 12, 3072, 512)
    assert BERT_BASE.description == "BERT-base (12 x 768)"
    profile = micro_profile()
    assert EncoderShape.of(profile).description == "profile (1 x 16)"
    wide = BERT_BASE.apply(profile)
    assert (wide.layers, wide.hidden, wide.heads, wide.intermediate, wide.seq_len) == (12, 768, 12, 3072, 512)
    assert wide.timing_batch == profile.timing_batch and wide.ft_max_len == profile.ft_max_len
    with pytest.raises(ValueError, match="multiple of heads"):
        EncoderShape("x", 1, 10, 3, 8, 16)
    with pytest.raises(ValueError, match="seq_len must be <= 512"):
        EncoderShape("x", 1, 8, 2, 8, 513)
    with pytest.raises(ValueError, match="layers must be an int >= 1"):
        EncoderShape("x", 0, 8, 2, 8, 16)


def test_timed_bert_mlm_keeps_the_full_head_over_robertas_vocabulary():
    shape = EncoderShape("stand-in", 1, 32, 2, 64, 24)
    profile = shape.apply(micro_profile())
    by_name = {m.name: m for m in MODELS}
    mlm = timing.timing_pretraining_model(by_name["BERT-MLM"], profile)
    assert type(mlm) is RobertaForMaskedLM
    assert mlm.config.vocab_size == timing.TIMING_VOCAB == 50265
    assert (mlm.config.num_hidden_layers, mlm.config.hidden_size, mlm.config.intermediate_size) == (1, 32, 64)
    sr = timing.timing_pretraining_model(by_name["BERT-S+R"], profile)
    assert type(sr) is RobertaForTokenClassification and sr.config.num_labels == 3


# ------------------------------------------------------------------------------------------ the table
def test_models_are_timed_in_turn_after_one_warm_up_each():
    log: list[str] = []
    calls = [lambda i=i: log.append(f"call{i}") for i in range(3)]
    warmups = [lambda i=i: log.append(f"warm{i}") for i in range(3)]
    after = [lambda i=i: log.append(f"after{i}") for i in range(3)]
    seconds = timing._time_in_turn(calls, 2, torch.device("cpu"), warmups=warmups, after=after)
    assert len(seconds) == 3 and all(s >= 0 for s in seconds)
    assert log == ["warm0", "warm1", "warm2"] + ["call0", "after0", "call1", "after1", "call2", "after2"] * 2
    log.clear()
    timing._time_in_turn(calls[:2], 1, torch.device("cpu"))
    assert log == ["call0", "call1", "call0", "call1"]


STAND_IN = EncoderShape("stand-in", 1, 32, 2, 64, 24)


@pytest.fixture(scope="module")
def two_shapes(mirror) -> tuple[pd.DataFrame, object]:
    profile = micro_profile()
    return timing_table(Resources(profile), torch.device("cpu"), base_repeats=2, base_batch=3,
                        base_shape=STAND_IN), profile


def test_timing_table_times_every_model_at_both_sizes_with_speedups_within_each(two_shapes):
    table, profile = two_shapes
    names = [name for _, _, name in (*timing.TIMING_ROWS, timing.CANINE_ROW)]
    assert len(table) == 2 * len(names)
    assert list(table["scale"]) == ["profile"] * len(names) + ["paper"] * len(names)
    assert list(table["name"]) == names * 2
    assert list(table["shape"]) == ["profile (1 x 16)"] * len(names) + ["stand-in (1 x 32)"] * len(names)
    assert list(table["pt_seq_len"]) == [16] * len(names) + [24] * len(names)
    assert list(table["pt_batch"]) == [2] * len(names) + [3] * len(names)
    assert list(table["repeats"]) == [1] * len(names) + [2] * len(names)
    assert set(table["infer_batch"]) == {profile.timing_batch} and set(table["device"]) == {"cpu"}
    trained = table["name"] != "CANINE-C"
    assert (table.loc[trained, "pt_ms_per_sample"] > 0).all() and (table["infer_ms_per_sample"] > 0).all()
    assert table.loc[~trained, "pt_ms_per_sample"].isna().all() and table.loc[~trained, "pt_speedup"].isna().all()
    for scale in timing.SCALES:
        rows = timing_at(table, scale).set_index("name")
        assert rows.loc["BERT-MLM", "pt_speedup"] == 1.0 and rows.loc["BERT-MLM", "infer_speedup"] == 1.0
        assert np.array_equal(rows["pt_speedup"], rows.loc["BERT-MLM", "pt_ms_per_sample"] / rows["pt_ms_per_sample"],
                              equal_nan=True)
        assert np.array_equal(rows["infer_speedup"],
                              rows.loc["BERT-MLM", "infer_ms_per_sample"] / rows["infer_ms_per_sample"])
    # inference reads the same sentences with the same tokenisation at both sizes
    assert np.array_equal(timing_at(table, "profile")["infer_mean_tokens"],
                          timing_at(table, "paper")["infer_mean_tokens"])


def test_timing_table_without_base_repeats_has_the_profile_rows_only(mirror):
    table = timing_table(Resources(micro_profile()), torch.device("cpu"))
    assert list(table["name"]) == [name for _, _, name in (*timing.TIMING_ROWS, timing.CANINE_ROW)]
    assert set(table["scale"]) == {"profile"}
    with pytest.raises(ValueError, match="base_repeats=0"):
        timing_at(table, "paper")


def test_timing_at_reads_a_table_without_the_scale_column_and_rejects_bad_arguments():
    old = pd.DataFrame({"name": ["BERT-MLM", "MD-Proj"], "pt_ms_per_sample": [2.0, 1.0]}, index=[5, 6])
    assert list(timing_at(old).index) == [0, 1]
    with pytest.raises(ValueError, match="no 'scale' column"):
        timing_at(old, "paper")
    with pytest.raises(ValueError, match="scale must be one of"):
        timing_at(old, "bert")
    res = Resources(micro_profile())
    with pytest.raises(ValueError, match="base_repeats must be an int >= 0"):
        timing_table(res, torch.device("cpu"), base_repeats=-1)
    with pytest.raises(ValueError, match="base_batch must be an int >= 1"):
        timing_table(res, torch.device("cpu"), base_repeats=1, base_batch=0)
    with pytest.raises(TypeError, match="base_shape must be an EncoderShape"):
        timing_table(res, torch.device("cpu"), base_repeats=1, base_shape=(12, 768))


# ------------------------------------------------------------------------------------------ CANINE-C
def test_canine_at_bert_base_is_the_released_architecture_and_follows_other_shapes():
    from transformers import CanineConfig

    released = CanineConfig()
    model = timing.canine_classifier(BERT_BASE)
    fields = ("num_hidden_layers", "hidden_size", "num_attention_heads", "intermediate_size", "num_hash_functions",
              "num_hash_buckets", "downsampling_rate", "local_transformer_stride", "max_position_embeddings")
    assert {f: getattr(model.config, f) for f in fields} == {f: getattr(released, f) for f in fields}
    assert model.config.num_labels == 2
    small = timing.canine_classifier(STAND_IN, num_labels=3).config
    assert (small.num_hidden_layers, small.hidden_size, small.num_attention_heads, small.intermediate_size,
            small.num_labels) == (1, 32, 2, 64, 3)
    assert small.num_hash_buckets == released.num_hash_buckets
    with pytest.raises(ValueError, match="multiple of 8"):
        timing.canine_classifier(EncoderShape("odd", 1, 12, 2, 16, 16))


def test_canine_reads_code_points_padded_to_whole_blocks():
    batches = timing._canine_inputs(["ab", "hello", "é" * 9], 2, torch.device("cpu"))
    assert [b["input_ids"].shape for b in batches] == [(2, 8), (1, 12)]
    first = batches[0]
    # [CLS] a b [SEP] (CANINE's private-use code points), then padding; "hello": 7 characters padded to 8
    assert first["input_ids"][0, :4].tolist() == [0xE000, ord("a"), ord("b"), 0xE001]
    assert first["attention_mask"].sum(1).tolist() == [4, 7]
    assert batches[1]["input_ids"][0, 1:10].tolist() == [ord("é")] * 9
    long = timing._canine_inputs(["x" * 3000], 1, torch.device("cpu"))[0]
    assert long["input_ids"].shape == (1, timing.CANINE_MAX_CHARS)
    with pytest.raises(TypeError, match="every text must be a str"):
        timing._canine_inputs([("a", "b")], 1, torch.device("cpu"))


def test_hashformer_rows_are_the_hashformers_group_only():
    table = pd.DataFrame({"group": ["BERT", "-", "HASHFORMERS (Ours)"], "name": ["BERT-MLM", "CANINE-C", "MD-Proj"]})
    assert list(timing.hashformer_rows(table)["name"]) == ["MD-Proj"]
    assert list(timing.hashformer_rows(table.set_index("name")).index) == ["MD-Proj"]
    old = pd.DataFrame({"name": ["BERT-MLM", "BERT-S+R", "MD-Proj"]})           # written before the group column
    assert list(timing.hashformer_rows(old)["name"]) == ["MD-Proj"]
    assert list(timing.hashformer_rows(old.set_index("name")).index) == ["MD-Proj"]
