"""Chapter "MultiHashFormer": experiment code (micro profile end to end, scoring, expansion, Single-ID)."""
from __future__ import annotations

import copy
import json
import math
import re

import mmh3
import numpy as np
import pandas as pd
import pytest
import torch

from hashlib_core.chapter import RunContext, Shown
from hashlib_core.decoding.lm import next_token_scores
from hashlib_core.papers.multihashformer import expansion, params, tables, tables_scaling
from hashlib_core.papers.multihashformer.claims import CLAIMS
from hashlib_core.papers.multihashformer.experiments import CHAPTER, lm_quality, numerical_rank
from hashlib_core.papers.multihashformer.lm import LanguageModels
from hashlib_core.papers.multihashformer.presets import (
    BackboneShape,
    ModelSpec,
    build_model,
    install_single_id_table,
    parameter_groups,
    scaled_buckets,
    single_id_table,
)
from hashlib_core.papers.multihashformer.profiles import PROFILES, LM_TRAINING_SETTINGS
from hashlib_core.results import ResultsStore, repo_root
from hashlib_core.training import TrainConfig

MICRO = dict(vocab_size=300, seq_len=16, batch_size=4, max_steps=3, warmup_steps=1, max_train_tokens=2000,
             max_eval_tokens=256, lm_variants="Standard,H4B16K", single_vs_multi_buckets="B4K",
             sweep_variants="H3B4K", rank_contexts=32, expansion_variants="Standard,H4B16K",
             expansion_tokens_per_language=8, expansion_steps=2, lsh_mixes="0:4,2:2")
EXPERIMENTS = "lr_sweep,lm,calibration,single_vs_multi,sweep,card660,rank,expansion,scaling,scaling_rates,lsh"


def micro(**overrides):
    return PROFILES.get("smoke", **{**MICRO, **overrides})


def test_scaled_buckets_keep_the_paper_ratio():
    assert scaled_buckets(16384, 32768) == 16384
    assert scaled_buckets(16384, 2048) == 1024
    assert scaled_buckets(4096, 1024) == 128
    assert scaled_buckets(4096, 8) == 2           # never below 2 (bucket 0 is padding)
    with pytest.raises(ValueError, match="paper_buckets"):
        scaled_buckets(1, 100)


def test_model_specs():
    p = micro(added_layers=3, vocab_size=2048)
    assert p.spec("Standard+kL") == ModelSpec("Standard+3L", "standard", extra_layers=3)
    h4 = p.spec("MHF (H4B16K)")
    assert (h4.kind, h4.num_hashes, h4.paper_buckets, h4.num_buckets) == ("mhf", 4, 16384, 1024)
    h1 = p.spec("H1B4K")
    assert (h1.kind, h1.num_hashes, h1.hashes_shown, h1.num_buckets, h1.built_variant) == (
        "single_id", 4, 1, 256, "H4B256")
    with pytest.raises(ValueError, match="unknown variant"):
        p.spec("Big")


def test_profile_rejects_unknown_models_and_experiments():
    with pytest.raises(ValueError, match="unknown variant"):
        micro(lm_variants="Standard,Big")
    with pytest.raises(ValueError, match="LSH:MMH3 mix"):
        micro(lsh_mixes="0:4,5")
    with pytest.raises(ValueError, match="unknown experiment"):
        CHAPTER.selected(micro(), "lm,lambada")
    assert micro(lm_variants="Standard,H4B16K").lm_variants == ("Standard", "H4B16K")   # one CLI list syntax


def test_single_id_table_repeats_one_mmh3_value_and_collides():
    tokens = [f"tok{i}" for i in range(50)]
    table = single_id_table(tokens, 8)
    assert table.shape == (50, 4)
    assert table[:, 0].tolist() == [mmh3.hash128(t, seed=0) % 7 + 1 for t in tokens]
    assert bool((table == table[:, :1]).all())
    assert torch.unique(table, dim=0).shape[0] <= 7          # at most B - 1 distinct signatures


def test_collision_free_check_is_bypassed_only_for_single_id():
    shape = BackboneShape(16, 32, 1, 2, 1, added_layers=1, vocab_size=20)
    model = build_model(shape, "H4B8", vocab_size=20)
    table = single_id_table([f"w{i}" for i in range(20)], 8)
    with pytest.raises(ValueError, match="duplicated signature"):
        model.set_signature_table(table)
    install_single_id_table(model, table)
    assert torch.equal(model.hash_map, table)
    with pytest.raises(ValueError, match=r"\[1, B\)"):
        install_single_id_table(model, torch.zeros_like(table))


def test_build_model_accepts_a_custom_backbone_shape():
    shape = BackboneShape(24, 40, 3, 4, 2, added_layers=2, vocab_size=50)
    std = build_model(shape, "Standard+2L", vocab_size=50)
    assert std.config.num_hidden_layers == 5 and std.config.hidden_size == 24
    assert parameter_groups(std)["embedding"] == 50 * 24


def test_numerical_rank_of_a_known_product():
    g = torch.Generator().manual_seed(0)
    a = torch.randn(40, 3, generator=g, dtype=torch.float64) @ torch.randn(3, 60, generator=g, dtype=torch.float64)
    rank, sv = numerical_rank(a, 1e-9)
    assert rank == 3 and sv.shape == (40,)
    with pytest.raises(ValueError, match="non-finite"):
        numerical_rank(torch.full((2, 2), -math.inf), 1e-6)


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
    ours = next_token_scores(model, [(ids, torch.ones_like(ids))], torch.device("cpu"), chunk=7)
    ref = valid_vocab_nll(model, ids)
    assert ours.tokens == ref.num_tokens == 33
    assert ours.nll == pytest.approx(ref.total_nll, rel=1e-5)
    # padding: a right-padded second batch scores only its real pairs
    mask = torch.ones_like(ids)
    mask[1, 6:] = 0
    padded = next_token_scores(model, [(ids, mask)], torch.device("cpu"))
    assert padded.tokens == 33 - 6


def test_tie_aware_accuracy_splits_ties():
    model, _ = _random_mhf()
    ids = torch.randint(0, 40, (2, 10), generator=torch.Generator().manual_seed(2))
    full = next_token_scores(model, [(ids, torch.ones_like(ids))], torch.device("cpu"))
    assert 0.0 <= full.accuracy <= 100.0
    # all ids collide onto one signature: every id ties, so the expected accuracy is exactly 1/V per token
    model.embeddings.hash_map.fill_(3)
    tied = next_token_scores(model, [(ids, torch.ones_like(ids))], torch.device("cpu"))
    assert tied.correct == pytest.approx(tied.tokens / 40)
    assert tied.perplexity == pytest.approx(40.0, rel=1e-4)


def test_mhf_expansion_adds_signatures_not_parameters():
    model, reg = _random_mhf()
    before = parameter_groups(model)["total"]
    old_table = reg.table()
    reg.register(["new1", "new2", "new3"])
    reference = copy.deepcopy(model)
    model.expand_vocabulary(reg.table())
    bigger = model.eval()
    assert parameter_groups(bigger)["total"] == before
    assert bigger.config.vocab_size == 43
    assert torch.equal(bigger.hash_map[:40], old_table)
    ids = torch.randint(0, 40, (2, 8), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        assert torch.allclose(reference(input_ids=ids).hash_logits, bigger(input_ids=ids).hash_logits)
        assert bigger(input_ids=torch.tensor([[41, 42]])).hash_logits.shape == (1, 2, 3, 16)
    with pytest.raises(ValueError, match="changes signatures of existing ids"):
        model.expand_vocabulary(torch.cat([reg.table()[1:2], reg.table()[:1], reg.table()[2:]]))
    with pytest.raises(ValueError, match="fewer than"):
        model.expand_vocabulary(old_table[:10])


def test_standard_expansion_mean_initialises_new_rows():
    shape = BackboneShape(16, 32, 2, 2, 1, added_layers=1, vocab_size=30)
    torch.manual_seed(0)
    model = build_model(shape, "Standard", vocab_size=30)
    old = model.get_input_embeddings().weight.detach().clone()
    sources = [[1, 2, 3], [7]]
    model = expansion.expand_standard(model, sources)
    w = model.get_input_embeddings().weight
    assert w.shape == (32, 16)
    assert torch.equal(w[:30], old)
    assert torch.allclose(w[30], old[[1, 2, 3]].mean(0)) and torch.allclose(w[31], old[7])
    assert model.get_output_embeddings().weight is w                     # the head stays tied


def test_freeze_for_cpt_keeps_embeddings_and_outer_layers():
    shape = BackboneShape(16, 32, 6, 2, 1, added_layers=1, vocab_size=30)
    model = build_model(shape, "H3B8", vocab_size=30)
    expansion.freeze_for_cpt(model)
    trainable = {n.split(".layers.")[1].split(".")[0] for n, p in model.named_parameters()
                 if p.requires_grad and ".layers." in n}
    assert trainable == {"0", "1", "4", "5"}
    assert all(p.requires_grad for p in model.embeddings.parameters())
    assert all(p.requires_grad for p in model.hash_decoder.parameters())
    assert not any(p.requires_grad for p in model.base_model.backbone.norm.parameters())
    standard = build_model(shape, "Standard", vocab_size=30)
    expansion.freeze_for_cpt(standard)
    trainable = {n.split(".layers.")[1].split(".")[0] for n, p in standard.named_parameters()
                 if p.requires_grad and ".layers." in n}
    assert trainable == {"0", "1", "4", "5"} and standard.get_input_embeddings().weight.requires_grad
    assert not any(p.requires_grad for p in standard.model.norm.parameters())


def test_paper_scale_expansion_counts():
    table = params.paper_scale_expansion_params().set_index("model")
    assert params.expanded_vocab_size() == 48122                      # Table 8, both columns
    assert table.loc["Standard", "new_params"] == (48122 - 32768) * 2048
    assert table.loc["MHF (H4B16K)", "new_params"] == 0
    # section 5.3 prints "31-million-parameters" and "46.9%": our computation reproduces both digits
    assert f"{table.loc['Standard', 'new_params'] / 1e6:.0f}" == "31"
    assert f"{table.loc['Standard', 'growth_%']:.1f}" == "46.9"


def test_micro_profile_end_to_end(mirror, tmp_path):
    profile = micro()
    store = CHAPTER.run(profile, EXPERIMENTS, progress=False, results_root=tmp_path / "results",
                        checkpoint_root=tmp_path / "ckpt")
    # the claims' verdicts read these results, so the run recomputes them too (one row per claim, none crashed)
    assert set(store.names()) == set(CHAPTER.result_names(profile, EXPERIMENTS)) | {"claims"}
    claims = store.read_table("claims")
    assert list(claims["id"]) == [c.id for c in CLAIMS.claims]
    assert claims.set_index("id").loc["rank-above-d", "verdict"] != "not testable here"
    lm = store.read_table("lm_quality")
    assert list(lm["model"]) == ["Standard", "H4B16K", "uniform", "unigram"]
    baselines = lm.set_index("model")
    assert baselines.loc["uniform", "test_perplexity"] == 300
    assert 1 < baselines.loc["unigram", "test_perplexity"] < 300
    assert (lm["test_perplexity"] > 1).all() and lm["test_accuracy_%"].between(0, 100).all()
    assert lm.set_index("model").loc["H4B16K", "B"] == scaled_buckets(16384, 300)
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
    assert lm.iloc[:2]["temperature"].between(0.25, 16).all() and np.isfinite(lm.iloc[:2]["test_perplexity_calibrated"]).all()
    cal = store.read_table("pinf_calibration")
    assert list(zip(cal["model"], cal["source"])) == [("Standard", "trained model"), ("H4B16K", "trained model"),
                                                    ("H4B16K", "Standard's q through these signatures")]
    assert cal.iloc[1]["test_perplexity"] == lm.set_index("model").loc["H4B16K", "test_perplexity"]
    assert cal.iloc[2]["test_perplexity"] > 1 and 0 <= cal.iloc[2]["test_accuracy_%"] <= 100
    assert {"bpb_before_calibrated", "bpb_after_calibrated", "temperature_after"} <= set(store.read_table("expansion"))
    lsh = store.read_table("lsh_mix").set_index("mix")
    assert list(lsh["lsh"]) == [0, 2] and (lsh["emb_params"] == lsh["emb_params"].iloc[0]).all()
    assert lsh.loc["0:4", "test_perplexity"] == lm.set_index("model").loc["H4B16K", "test_perplexity"]
    # the scaling curve: every size x model x seed scored, a gap per (MHF, Standard) pair and size, a trend per pair
    runs = store.read_table("scaling_runs")
    assert len(runs) == len(profile.scale_sizes) * len(profile.scale_variants) * len(profile.scale_seeds)
    gaps = store.read_table("scaling_gaps")
    assert len(gaps) == len(profile.scale_sizes) * 2 * 2 and (gaps["seeds"] == len(profile.scale_seeds)).all()
    assert (gaps["accuracy_gap_low"] <= gaps["accuracy_gap"]).all() and (gaps["accuracy_gap"] <= gaps["accuracy_gap_high"]).all()
    assert len(store.read_table("scaling_trend")) == 4
    other = store.read_table("lm_other_tests")
    assert set(other["test_set"]) == {"wikitext2"} and list(other["model"]) == ["Standard", "H4B16K"]
    intervals = store.read_table("expansion_intervals").set_index("language")
    assert set(intervals.index) == {"ar", "zh", "hi", "en"} and (intervals["sentences"] == 100).all()
    meta = store.read_meta("lm_quality")
    assert meta["config"] == json.loads(json.dumps(profile.to_dict())) and meta["seed"] == profile.seed
    # the page's quoted numbers all come from these results (table1 and the benchmark are added here)
    CHAPTER.run(profile, "table1", progress=False, results_root=tmp_path / "results")
    bench = ResultsStore("benchmarks", "quick").read_json("multihash_decoding")
    shown = Shown(profile, store, "live", "")
    quoted = {**tables.quoted(shown, bench), **tables_scaling.scaling_quoted(shown)}
    page = (repo_root() / "book" / "src" / "multihashformer.md").read_text()
    keys = set(re.findall(r"\{glue:text\}`([^`]+)`", page))
    assert keys and keys <= set(quoted), sorted(keys - set(quoted))


def test_same_seed_same_numbers(mirror, tmp_path):
    profile = micro(lm_variants="H3B10K")
    first = lm_quality(LanguageModels(RunContext(CHAPTER, profile, checkpoint_root=tmp_path / "a")))
    second = lm_quality(LanguageModels(RunContext(CHAPTER, profile, checkpoint_root=tmp_path / "b")))
    cols = ["test_perplexity", "test_accuracy_%", "emb_params"]
    pd.testing.assert_frame_equal(first[cols], second[cols])
    assert np.isfinite(first["test_perplexity"]).all()


def test_checkpoints_are_shared_only_by_runs_that_train_alike(tmp_path):
    def where(profile, config, settings=LM_TRAINING_SETTINGS):
        return RunContext(CHAPTER, profile, checkpoint_root=tmp_path).checkpoint_dir("MHF (H3B10K)", config,
                                                                                  settings=settings)

    base = micro(lm_variants="H3B10K")
    config = TrainConfig(max_steps=3)
    first = where(base, config)
    assert first.parent == tmp_path / "multihashformer" / "smoke" and first.name.startswith("MHF__H3B10K_-")
    other_eval = micro(lm_variants="Standard", rank_contexts=8, max_eval_tokens=64, expansion_steps=7)
    assert where(other_eval, config) == first
    assert where(micro(learning_rate=1e-3), config) != first
    assert where(base, TrainConfig(max_steps=4)) != first
    # without a settings list, every weight setting counts (expansion settings change CPT weights)
    assert where(other_eval, config, None) != where(base, config, None)
    assert where(micro(rank_contexts=8), config, None) == where(base, config, None)


def test_marginal_pinf_of_a_sharp_distribution_sharpens_it():
    """P_inf built from the exact bucket marginals of q is q^H / Z for signatures without shared buckets."""
    from hashlib_core.papers.multihashformer.calibration import marginal_pinf_scores

    class Fixed(torch.nn.Module):
        """A 'model' whose next-token distribution is q at every position (through the protocol)."""

        config = type("C", (), {"hidden_size": 4})()

        def __init__(self, q):
            super().__init__()
            self.q = q

        @property
        def base_model(self):
            return self

        def forward(self, input_ids, attention_mask=None, output_hidden_states=True):
            h = torch.zeros(*input_ids.shape, 4)
            return type("O", (), {"hidden_states": (h,)})()

        def vocab_log_probs(self, hidden, temperature=1.0):
            return torch.log_softmax(self.q.log().expand(*hidden.shape[:-1], -1) / temperature, -1)

    q = torch.tensor([0.5, 0.3, 0.2])
    table = torch.tensor([[1, 1], [2, 2], [3, 3]])          # every token has its own bucket in both coordinates
    rows = torch.tensor([[0, 1, 2, 0, 1]])
    ppl, acc = marginal_pinf_scores(Fixed(q), rows, table, 4, torch.device("cpu"))
    p_inf = q ** 2 / (q ** 2).sum()
    targets = rows[0, 1:]
    assert ppl == pytest.approx(float(torch.exp(-p_inf.log()[targets].mean())), rel=1e-5)
    assert acc == pytest.approx(100 * float((targets == 0).float().mean()))
