"""Chapter "MultiHashFormer": experiment code (micro profile end to end, scoring, expansion, Single-ID)."""
from __future__ import annotations

import math

import mmh3
import numpy as np
import pandas as pd
import pytest
import torch

from hashlib_core.papers.multihashformer import experiments as mhf
from hashlib_core.papers.multihashformer.modeling import BackboneShape, build_model, parameter_groups

MICRO = dict(vocab_size=300, seq_len=16, batch_size=4, max_steps=3, warmup_steps=1, max_train_tokens=2000,
             max_eval_tokens=256, lm_variants="Standard,H4B16K", single_vs_multi_buckets="B4K",
             sweep_variants="H3B4K", rank_contexts=32, expansion_variants="Standard,H4B16K",
             expansion_tokens_per_language=8, expansion_steps=2, lsh_mixes="0:4,2:2")


def micro(**overrides):
    return mhf.PROFILES.get("smoke", **{**MICRO, **overrides})


def test_scaled_buckets_keep_the_paper_ratio():
    assert mhf.scaled_buckets(16384, 32768) == 16384
    assert mhf.scaled_buckets(16384, 2048) == 1024
    assert mhf.scaled_buckets(4096, 1024) == 128
    assert mhf.scaled_buckets(4096, 8) == 2           # never below 2 (bucket 0 is padding)
    with pytest.raises(ValueError, match="paper_buckets"):
        mhf.scaled_buckets(1, 100)


def test_model_keys():
    p = micro(added_layers=3, vocab_size=2048)
    assert mhf.ModelKey.parse("Standard+kL", p) == mhf.ModelKey("Standard+3L", "standard", extra_layers=3)
    h4 = mhf.ModelKey.parse("MHF (H4B16K)", p)
    assert (h4.kind, h4.num_hashes, h4.paper_buckets, h4.num_buckets) == ("mhf", 4, 16384, 1024)
    h1 = mhf.ModelKey.parse("H1B4K", p)
    assert (h1.kind, h1.num_hashes, h1.hashes_shown, h1.num_buckets, h1.built_variant) == (
        "single_id", 4, 1, 256, "H4B256")
    with pytest.raises(ValueError, match="unknown variant"):
        mhf.ModelKey.parse("Big", p)


def test_profile_rejects_unknown_experiment():
    with pytest.raises(ValueError, match="unknown experiment"):
        micro(experiments="lm,lambada")


def test_single_id_table_repeats_one_mmh3_value_and_collides():
    tokens = [f"tok{i}" for i in range(50)]
    table = mhf.single_id_table(tokens, 8)
    assert table.shape == (50, 4)
    assert table[:, 0].tolist() == [mmh3.hash128(t, seed=0) % 7 + 1 for t in tokens]
    assert bool((table == table[:, :1]).all())
    assert torch.unique(table, dim=0).shape[0] <= 7          # at most B - 1 distinct signatures


def test_collision_free_check_is_bypassed_only_for_single_id():
    shape = BackboneShape(16, 32, 1, 2, 1, added_layers=1, vocab_size=20)
    model = build_model(shape, "H4B8", vocab_size=20)
    table = mhf.single_id_table([f"w{i}" for i in range(20)], 8)
    with pytest.raises(ValueError, match="duplicated signature"):
        model.set_signature_table(table)
    mhf._install_colliding_table(model, table)
    assert torch.equal(model.hash_map, table)
    with pytest.raises(ValueError, match=r"\[1, B\)"):
        mhf._install_colliding_table(model, torch.zeros_like(table))


def test_build_model_accepts_a_custom_backbone_shape():
    shape = BackboneShape(24, 40, 3, 4, 2, added_layers=2, vocab_size=50)
    std = build_model(shape, "Standard+2L", vocab_size=50)
    assert std.config.num_hidden_layers == 5 and std.config.hidden_size == 24
    assert parameter_groups(std)["embedding"] == 50 * 24


def test_numerical_rank_of_a_known_product():
    g = torch.Generator().manual_seed(0)
    a = torch.randn(40, 3, generator=g, dtype=torch.float64) @ torch.randn(3, 60, generator=g, dtype=torch.float64)
    rank, sv = mhf.numerical_rank(a, 1e-9)
    assert rank == 3 and sv.shape == (40,)
    with pytest.raises(ValueError, match="non-finite"):
        mhf.numerical_rank(torch.full((2, 2), -math.inf), 1e-6)


def _random_mhf(vocab: int = 40, buckets: int = 16):
    from hashlib_core.hashing import SignatureRegistry

    torch.manual_seed(0)
    reg = SignatureRegistry(3, buckets)
    reg.register([f"t{i}" for i in range(vocab)])
    shape = BackboneShape(16, 32, 2, 2, 1, added_layers=1, vocab_size=vocab)
    return build_model(shape, f"H3B{buckets}", signature_table=reg.table()).eval(), reg


def test_scoring_equals_the_library_valid_vocab_nll():
    from hashlib_core.papers.multihashformer.decoding import valid_vocab_nll

    model, _ = _random_mhf()
    ids = torch.randint(0, 40, (3, 12), generator=torch.Generator().manual_seed(1))
    ours = mhf._score(model, [(ids, torch.ones_like(ids))], torch.device("cpu"), chunk=7)
    ref = valid_vocab_nll(model, ids)
    assert ours.tokens == ref.num_tokens == 33
    assert ours.nll == pytest.approx(ref.total_nll, rel=1e-5)
    # padding: a right-padded second batch scores only its real pairs
    mask = torch.ones_like(ids)
    mask[1, 6:] = 0
    padded = mhf._score(model, [(ids, mask)], torch.device("cpu"))
    assert padded.tokens == 33 - 6


def test_tie_aware_accuracy_splits_ties():
    model, _ = _random_mhf()
    ids = torch.randint(0, 40, (2, 10), generator=torch.Generator().manual_seed(2))
    full = mhf._score(model, [(ids, torch.ones_like(ids))], torch.device("cpu"))
    assert 0.0 <= full.accuracy <= 100.0
    # all ids collide onto one signature: every id ties, so the expected accuracy is exactly 1/V per token
    model.embeddings.hash_map.fill_(3)
    tied = mhf._score(model, [(ids, torch.ones_like(ids))], torch.device("cpu"))
    assert tied.correct == pytest.approx(tied.tokens / 40)
    assert tied.perplexity == pytest.approx(40.0, rel=1e-4)


def test_mhf_expansion_adds_signatures_not_parameters():
    model, reg = _random_mhf()
    before = parameter_groups(model)["total"]
    old_table = reg.table()
    reg.register(["new1", "new2", "new3"])
    bigger = mhf._expand_mhf(model, reg.table()).eval()
    assert parameter_groups(bigger)["total"] == before
    assert bigger.config.vocab_size == 43
    assert torch.equal(bigger.hash_map[:40], old_table)
    ids = torch.randint(0, 40, (2, 8), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        assert torch.allclose(model(input_ids=ids).hash_logits, bigger(input_ids=ids).hash_logits)
        assert bigger(input_ids=torch.tensor([[41, 42]])).hash_logits.shape == (1, 2, 3, 16)


def test_standard_expansion_mean_initialises_new_rows():
    shape = BackboneShape(16, 32, 2, 2, 1, added_layers=1, vocab_size=30)
    torch.manual_seed(0)
    model = build_model(shape, "Standard", vocab_size=30)
    old = model.get_input_embeddings().weight.detach().clone()
    sources = [[1, 2, 3], [7]]
    model = mhf._expand_standard(model, sources)
    w = model.get_input_embeddings().weight
    assert w.shape == (32, 16)
    assert torch.equal(w[:30], old)
    assert torch.allclose(w[30], old[[1, 2, 3]].mean(0)) and torch.allclose(w[31], old[7])
    assert model.get_output_embeddings().weight is w                     # the head stays tied


def test_freeze_for_cpt_keeps_embeddings_and_outer_layers():
    shape = BackboneShape(16, 32, 6, 2, 1, added_layers=1, vocab_size=30)
    model = build_model(shape, "H3B8", vocab_size=30)
    mhf._freeze_for_cpt(model)
    trainable = {n.split(".")[2] for n, p in model.named_parameters() if p.requires_grad and ".layers." in n}
    assert trainable == {"0", "1", "4", "5"}
    assert all(p.requires_grad for p in model.embeddings.parameters())
    assert all(p.requires_grad for p in model.hash_decoder.parameters())
    assert not any(p.requires_grad for p in model.backbone.norm.parameters())


def test_paper_scale_expansion_counts():
    table = mhf.paper_scale_expansion_params().set_index("model")
    assert table.loc["Standard", "new_params"] == (48122 - 32768) * 2048
    assert table.loc["MHF (H4B16K)", "new_params"] == 0
    # section 5.3 prints "31-million-parameters" and "46.9%": our computation reproduces both digits
    assert f"{table.loc['Standard', 'new_params'] / 1e6:.0f}" == "31"
    assert f"{table.loc['Standard', 'growth_%']:.1f}" == "46.9"


def test_micro_profile_end_to_end(mirror, tmp_path, monkeypatch):
    monkeypatch.setenv("HASHLIB_RESULTS_DIR", str(tmp_path / "results"))
    profile = micro(experiments="lm,single_vs_multi,sweep,card660,rank,expansion,lsh")
    store = mhf.run(profile, progress=False, checkpoint_root=tmp_path / "ckpt")
    assert set(store.names()) == set(mhf.result_names(profile))
    lm = store.read_table("lm_quality")
    assert list(lm["model"]) == ["Standard", "H4B16K"]
    assert (lm["test_perplexity"] > 1).all() and lm["test_accuracy_%"].between(0, 100).all()
    assert lm.set_index("model").loc["H4B16K", "B"] == mhf.scaled_buckets(16384, 300)
    svm = store.read_table("single_vs_multi").set_index("model")
    assert svm.loc["H4B4K", "colliding_tokens"] == 0 and svm.loc["H1B4K", "colliding_tokens"] > 0
    assert svm.loc["H1B4K", "emb_params"] == svm.loc["H4B4K", "emb_params"]
    card = store.read_table("card660")
    assert len(card) == 2 * 4 and (card["pairs"] == 660).all()
    assert card[["pearson_r", "spearman_rho"]].abs().le(1).all().all()
    rank = store.read_table("rank").set_index("model")
    assert rank.loc["Standard", "numerical_rank"] <= rank.loc["Standard", "bound_with_normaliser"]
    assert (rank["contexts"] == 32).all()
    params = store.read_table("expansion_params").set_index("model")
    assert params.loc["H4B16K", "new_params"] == 0
    assert params.loc["Standard", "new_params"] == params.loc["Standard", "new_tokens"] * profile.hidden_size
    exp = store.read_table("expansion")
    assert set(exp["language"]) == {"ar", "zh", "hi", "en"} and (exp["bytes"] > 0).all()
    lsh = store.read_table("lsh_mix").set_index("mix")
    assert list(lsh["lsh"]) == [0, 2] and (lsh["emb_params"] == lsh["emb_params"].iloc[0]).all()
    assert lsh.loc["0:4", "test_perplexity"] == lm.set_index("model").loc["H4B16K", "test_perplexity"]
    meta = store.read_meta("lm_quality")
    assert meta["config"] == profile.to_dict() and meta["seed"] == profile.seed


def test_same_seed_same_numbers(mirror, tmp_path):
    profile = micro(experiments="lm", lm_variants="H3B10K")
    first = mhf.lm_quality(mhf.Chapter(profile, checkpoint_root=tmp_path / "a"))
    second = mhf.lm_quality(mhf.Chapter(profile, checkpoint_root=tmp_path / "b"))
    cols = ["test_perplexity", "test_accuracy_%", "emb_params"]
    pd.testing.assert_frame_equal(first[cols], second[cols])
    assert np.isfinite(first["test_perplexity"]).all()


def test_checkpoints_are_shared_only_by_runs_that_train_alike(tmp_path):
    base = micro(experiments="lm", lm_variants="H3B10K")
    config = mhf.TrainConfig(max_steps=3)
    where = mhf.checkpoint_dir(tmp_path, base, "MHF (H3B10K)", config)
    assert where.parent == tmp_path / "multihashformer" / "smoke" and where.name.startswith("MHF__H3B10K_-")
    other_eval = micro(experiments="rank", lm_variants="Standard", rank_contexts=8, max_eval_tokens=64)
    assert mhf.checkpoint_dir(tmp_path, other_eval, "MHF (H3B10K)", config) == where
    assert mhf.checkpoint_dir(tmp_path, micro(learning_rate=1e-3), "MHF (H3B10K)", config) != where
    assert mhf.checkpoint_dir(tmp_path, base, "MHF (H3B10K)", mhf.TrainConfig(max_steps=4)) != where
