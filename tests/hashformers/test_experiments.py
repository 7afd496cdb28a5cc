"""Tests of the HashFormers chapter (hashlib_core.papers.hashformers): experiments, tables and pieces.

A micro profile (1-layer, width-16 encoder, a few steps, 16 GLUE examples) runs every experiment end to end into a
temporary results folder; the other tests check the pieces with exact values.
"""
from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from hashlib_core.bpe import train_bpe
from hashlib_core.hashing.md5 import KeyedMD5Hasher
from hashlib_core.papers.hashformers import analysis, data, objectives, tables, timing, tokenization
from hashlib_core.papers.hashformers.experiments import CHAPTER, GLUE_PARTS
from hashlib_core.papers.hashformers.profiles import MODELS, PROFILES, TABLE6_MODELS, HashFormersProfile
from hashlib_core.papers.hashformers.tokenization import BOS_ID, EOS_ID, HASHED_TOKEN_ID
from hashlib_core.results import load_paper_table, parse_printed

from tests.hashformers.conftest import MICRO_VARIANTS, micro_profile, read


# ------------------------------------------------------------------------------------------------ end to end
def test_micro_run_writes_every_result_with_metadata(micro_run):
    profile, root, _ = micro_run
    store = CHAPTER.store("smoke", root=root)
    names = CHAPTER.result_names(profile)
    groups = {m.group for m in profile.selected()}
    parts = {f"{n}_{kind}" for n, group in GLUE_PARTS.items() if group in groups
             for kind in ("summary", "runs", "predictions")}
    parts |= {f"glue_proformer_{kind}" for kind in ("summary", "runs", "predictions")}    # the micro profile's
    assert profile.proformer
    assert parts and {"table2", "md5_example", "bucket_sharing", "morphology", "pretraining", "pretraining_curves",
                      "glue_runs", "glue", "glue_predictions", "add_parts", "add_codebooks", "table6",
                      "table6_predictions", "trend_runs", "trend_predictions", "timing", "claims", "majority_floor",
                      "majority_runs", "majority_bags"} | parts == set(names)
    merged = store.read_table("glue_runs")
    assert len(merged) == sum(len(store.read_table(p)) for p in parts if p.endswith("_runs"))
    for name in names:
        assert store.exists(name), name
        meta = store.read_meta(name)
        assert meta["config"] == json.loads(json.dumps(profile.to_dict())) and meta["seed"] == profile.seed


def test_proformer_is_fine_tuned_from_random_weights_with_the_same_protocol(micro_run):
    profile, root, _ = micro_run
    summary = read(root, "glue_proformer_summary")
    assert list(summary["name"]) == ["ProFormer"] and summary.loc[0, "steps"] == 0
    assert summary.loc[0, "objective"] == "none" and summary.loc[0, "emb_params"] == 420 * profile.hidden
    runs = read(root, "glue_proformer_runs")
    assert set(runs["task"]) == set(profile.task_keys()) and set(runs["seed"]) == set(profile.ft_seeds)
    merged = read(root, "glue").set_index("name")
    assert "ProFormer" in merged.index and merged.loc["ProFormer", "group"] == "-"
    # its weights are drawn with each run's seed: the model differs between seeds, the same for a seed
    from hashlib_core.papers.hashformers.pretraining import classifier
    from hashlib_core.papers.hashformers.profiles import PROFORMER
    from hashlib_core.profiles import seed_everything

    def weights(seed: int) -> torch.Tensor:
        seed_everything(seed)
        return classifier(PROFORMER, profile, 0, 2).hashformer.encoder.layer[0].attention.self.query.weight

    assert torch.equal(weights(0), weights(0)) and not torch.equal(weights(0), weights(1))
    assert classifier(PROFORMER, profile, 0, 2).config.num_hidden_layers == 2


def test_every_model_is_tuned_on_held_out_training_data_and_keeps_its_dev_predictions(micro_run):
    profile, root, _ = micro_run
    runs = read(root, "glue_runs")
    first, *others = profile.ft_seeds
    for (name, task), group in runs.groupby(["name", "task"]):
        sweep = group[group["seed"] == first]
        assert sorted(sweep["learning_rate"]) == sorted(profile.ft_lrs)            # the same sweep for every model
        best = sweep.loc[sweep["validation_score"].fillna(-1e9).idxmax()]
        chosen = group[group["chosen"]]
        assert set(chosen["learning_rate"]) == {best["learning_rate"]} or sweep["validation_score"].isna().all()
        assert set(chosen["seed"]) == set(profile.ft_seeds)
        assert (group["validation_examples"] == profile.ft_validation_examples).all()
        assert (group["best_epoch"] <= group["epochs_run"]).all() and (group["epochs_run"] <= profile.ft_epochs).all()
    record = CHAPTER.store("smoke", root=root).read_json("glue_predictions")["data"]
    assert set(record["labels"]) == set(profile.task_keys())
    for run in record["runs"]:
        assert len(run["predictions"]) == len(record["labels"][run["task"]])
    assert len(record["runs"]) == len(runs[runs["chosen"]])


def test_the_trend_repeats_the_headline_pair_after_shorter_pre_training(micro_run):
    profile, root, _ = micro_run
    runs = read(root, "trend_runs")
    assert set(runs["pt_steps"]) == set(profile.trend_pt_steps) and set(runs["name"]) == {"LSH-Proj", "BERT-MLM"}
    assert set(runs["task"]) == set(profile.task_keys(trend=True))
    record = CHAPTER.store("smoke", root=root).read_json("trend_predictions")["data"]
    assert {r["name"] for r in record["runs"]} == {"LSH-Proj @ 1 steps", "BERT-MLM @ 1 steps"}
    assert len(record["runs"]) == len(runs[runs["chosen"]])


def test_glue_table_has_every_variant_task_and_retention(micro_run):
    _, root, _ = micro_run
    table = read(root, "glue")
    # Table 1's order: the BERT baselines, ProFormer (not pre-trained), the HashFormers
    variants = [v.name for v in MODELS if v.name in MICRO_VARIANTS]
    baselines = [v for v in variants if v.startswith("BERT")]
    assert list(table["name"]) == baselines + ["ProFormer"] + variants[len(baselines):]
    for column in ("STS", "RTE", "Avg", "PRR_STS", "PRR_RTE", "PRR_Avg", "emb_params", "split", "RTE_majority",
                   "STS_majority", "RTE_std"):
        assert column in table.columns, column
    assert set(table["split"]) == {"GLUE dev (validation)"}
    # accuracy in [0, 100]; Spearman in [-100, 100] (NaN only for a constant prediction)
    assert table["RTE"].between(0, 100).all()
    assert table["STS"].dropna().between(-100, 100).all()
    assert np.allclose(table["Avg"], table[["STS", "RTE"]].mean(axis=1, skipna=False), equal_nan=True)
    mlm = table.set_index("name").loc["BERT-MLM"]
    assert mlm["PRR_RTE"] == pytest.approx(100.0)
    rte = table.set_index("name")
    assert np.allclose(rte["PRR_RTE"], 100 * rte["RTE"] / mlm["RTE"])
    # one seed: no standard deviation; STS-B has no majority class; RTE's is the accuracy of the training majority
    assert table["RTE_std"].isna().all() and table["STS_majority"].isna().all()
    runs = read(root, "glue_runs")
    dev = runs[runs["task"] == "rte"]["majority_score"]
    assert dev.nunique() == 1 and 0 < dev.iloc[0] < 100
    assert (table["RTE_majority"] == dev.iloc[0]).all()


def test_pretraining_summary_counts_embedding_parameters(micro_run):
    profile, root, _ = micro_run
    pre = read(root, "pretraining").set_index("name")
    assert (pre["steps"] == profile.pt_steps).all()
    d = profile.hidden
    # Appendix B's rule at width d: Emb(N) = N x d; Proj = 128 d + d; Pool = (1,024 + 13) d + d; Add = 2 x 128 d + d
    assert pre.loc["MD-Emb (1K)", "emb_params"] == profile.emb_buckets_small * d
    assert pre.loc["LSH-Emb (50K)", "emb_params"] == profile.emb_buckets * d
    assert pre.loc["MD-Proj", "emb_params"] == 128 * d + d
    assert pre.loc["LSH-Pool", "emb_params"] == (1024 + 13) * d + d
    assert profile.add_storage == "differences"   # T differences (Add's shared part is the marker row's)
    assert pre.loc["MD-Add", "emb_params"] == 128 * d + d
    assert pre.loc["BERT-MLM", "emb_params"] == pre.loc["BERT-MLM", "num_buckets"] * d
    assert list(pre.loc[["BERT-MLM", "BERT-S+R"], "objective"]) == ["MLM", "S+R"]
    # the baselines read BPE pieces, the HashFormers of Table 1 whole words
    assert list(pre.loc[["BERT-MLM", "BERT-S+R"], "unit"]) == ["subword", "subword"]
    assert set(pre.drop(index=["BERT-MLM", "BERT-S+R"])["unit"]) == {"word"}
    glue = read(root, "glue").set_index("name")
    assert glue.loc["BERT-MLM", "unit"] == "subword" and glue.loc["MD-Proj", "unit"] == "word"
    curves = read(root, "pretraining_curves")
    assert set(curves["name"]) == set(MICRO_VARIANTS)
    assert np.isfinite(curves["loss"]).all()


def test_add_diagnosis_measures_the_parts_and_trains_the_codebook_models(micro_run):
    profile, root, _ = micro_run
    parts = read(root, "add_parts")
    codebooks, frozen = "MD-Add (2Td codebooks)", "MD-Add (2Td codebooks, shared part frozen)"
    assert list(dict.fromkeys(parts["name"])) == ["MD-Add", codebooks, frozen]
    assert (parts.groupby("name")["stage"].count() == 2).all()
    assert parts.set_index("name")["storage"].to_dict() == {"MD-Add": "differences", codebooks: "codebooks",
                                                             frozen: "codebooks"}
    by_name = {name: rows.reset_index(drop=True) for name, rows in parts.groupby("name")}
    # the differences storage has no shared part of its own; the codebook models start from the same codebooks
    assert (by_name["MD-Add"]["shared_norm"] == 0).all()
    assert by_name["MD-Add"]["shared_over_marker_moved"].iloc[1] == 0
    assert by_name[codebooks]["shared_over_word"].iloc[0] == by_name[frozen]["shared_over_word"].iloc[0]
    # with the same gradient as the marker row, Adam moves the codebooks' shared part farther
    assert by_name[codebooks]["shared_over_marker_moved"].iloc[1] > 2
    # only weight decay moves the control's shared part, and weight decay only shrinks it
    assert by_name[frozen]["shared_norm"].iloc[1] <= by_name[frozen]["shared_norm"].iloc[0] + 1e-6
    assert by_name[frozen]["shared_over_marker_moved"].iloc[1] < 1
    assert parts["shared_over_marker_moved"].isna().sum() == 3   # initialisation rows: nothing moved yet
    scores = read(root, "add_codebooks")
    assert scores["name"].tolist() == [codebooks, frozen]
    assert "STS" in scores.columns and "RTE" not in scores.columns   # the profile's first task (no SST-2 here)


def test_table6_runs_the_four_subword_models(micro_run):
    _, root, _ = micro_run
    table6 = read(root, "table6")
    assert list(table6["name"]) == [v.name for v in TABLE6_MODELS]
    assert set(table6["unit"]) == {"subword"}
    comparison = tables.table6_comparison(read(root, "glue"), table6, ["stsb", "rte"])
    # subword rows all come from our run; word rows only for the variants the micro profile trained
    subword = comparison[comparison["token"] == "subword"]
    assert len(subword) == 4 * 2 and (subword["paper"] != "-").all() and (subword["ours"] != "-").all()


def test_timing_table_has_table3_rows_and_ratios(micro_run):
    _, root, _ = micro_run
    table = read(root, "timing")
    rows = (*timing.TIMING_ROWS, timing.CANINE_ROW)
    assert [tuple(r) for r in table[["group", "model"]].itertuples(index=False)] == [(g, m) for g, m, _ in rows]
    trained = table[table["name"] != "CANINE-C"]
    assert (trained["pt_ms_per_sample"] > 0).all() and (table["infer_ms_per_sample"] > 0).all()
    canine = table.set_index("name").loc["CANINE-C"]
    assert np.isnan(canine["pt_ms_per_sample"]) and np.isnan(canine["pt_speedup"])
    base = table.set_index("name").loc["BERT-MLM"]
    assert base["pt_speedup"] == pytest.approx(1.0) and base["infer_speedup"] == pytest.approx(1.0)
    assert np.allclose(trained["pt_speedup"], base["pt_ms_per_sample"] / trained["pt_ms_per_sample"])
    t3 = tables.table3_comparison(table)
    # every printed row, CANINE-C's (inference only) among them, in the paper's order
    paper = load_paper_table("hashformers_table3")
    assert len(t3) == len(rows) == len(paper)
    assert list(t3["paper PT speed-up"]) == [str(x).replace("x", "").strip() for x in paper["PT_Speed-up_Rate"]]
    assert list(t3["timed variant"]) == [dict((m, n) for _, m, n in rows)[m] for m in paper["model"]]
    labels = dict(zip(t3["timed variant"], t3["model"]))
    assert (labels["CANINE-C"], labels["BERT-MLM"], labels["MD-Proj"]) == ("CANINE-C", "BERT -MLM", "HASHFORMERS -Proj")


def test_rerun_resumes_from_checkpoints_and_a_fresh_run_reproduces_scores(mirror, tmp_path):
    profile = micro_profile(models=("MD-Emb (1K)",), table6=False, tasks=("rte",))
    store = CHAPTER.store("smoke", root=tmp_path / "results")

    def run(checkpoints: Path) -> tuple[pd.Series, pd.Series]:
        CHAPTER.run(profile, "pretraining,glue_md", progress=False, results_root=tmp_path / "results",
                    checkpoint_root=checkpoints)
        return store.read_table("pretraining").iloc[0], store.read_table("glue").iloc[0]

    pre1, glue1 = run(tmp_path / "ckpt")
    first_meta = store.read_meta("glue_md_runs")
    assert "reused_compute_s" not in first_meta
    pre2, glue2 = run(tmp_path / "ckpt")      # same directory: resumes at the last step, trains nothing
    # the reused fine-tuning runs count in the experiment's wall time (what it cost, not what this process spent)
    meta, runs = store.read_meta("glue_md_runs"), store.read_table("glue_md_runs")
    assert meta["reused_compute_s"] == pytest.approx(runs["wall_time_s"].sum(), abs=1e-3)
    assert meta["wall_time_s"] >= meta["reused_compute_s"]
    pre3, glue3 = run(tmp_path / "other")     # fresh directory: trains again from the same seed
    assert pd.isna(pre1["resumed_from_step"]) and pd.isna(pre3["resumed_from_step"])
    assert pre2["resumed_from_step"] == profile.pt_steps
    assert pre1["final_loss"] == pre2["final_loss"] == pre3["final_loss"]
    assert glue1["RTE"] == glue2["RTE"] == glue3["RTE"]


def test_load_or_run_reuses_results_of_the_same_tuple_valued_profile(micro_run, monkeypatch):
    """Stored configs are JSON (tuples become lists); a same-config, same-clean-commit result must be reused."""
    from hashlib_core.results import store as results_store

    profile, root, _ = micro_run
    clean = {"git_commit": "0" * 40, "git_dirty": False}
    monkeypatch.setattr(results_store, "git_state", lambda: clean)
    store = CHAPTER.store("smoke", root=root)
    for name in CHAPTER.result_names(profile):  # rewrite the metadata as a clean-commit run of this profile
        if store.path(name, ".json").exists():
            store.write_json(name, store.read_json(name)["data"], seed=profile.seed, config=profile.to_dict())
        else:
            store.write_table(name, store.read_table(name), seed=profile.seed, config=profile.to_dict())
    monkeypatch.setattr(CHAPTER, "run", lambda *a, **k: pytest.fail("load_or_run re-ran instead of reusing results"))
    assert CHAPTER.load_or_run(profile, results_root=root).dir == store.dir


def test_claims_of_the_micro_run_list_every_claim(micro_run):
    from hashlib_core.papers.hashformers.claims import CLAIMS

    _, root, _ = micro_run
    claims = read(root, "claims")
    assert list(claims["id"]) == [c.id for c in CLAIMS.claims]
    # one seed: the GLUE claims that can be answered have no interval, so none of them "holds" outright
    glue_claims = claims[claims["reads"].str.contains("glue_runs")]
    assert not (glue_claims["verdict"] == "holds").any()
    assert (claims.set_index("id").loc[["proj-params", "add-params"], "verdict"] == "holds").all()


# ------------------------------------------------------------------------------------------------ pieces
def test_bpe_baselines_are_labelled_subword_units():
    from hashlib_core.papers.hashformers.profiles import ModelSpec

    assert {m.name: m.unit for m in MODELS if m.is_baseline} == {"BERT-MLM": "subword", "BERT-S+R": "subword"}
    assert {m.unit for m in MODELS if not m.is_baseline} == {"word"}
    with pytest.raises(ValueError, match="BPE subwords"):
        ModelSpec("-", "BERT-MLM", "mlm")
    with pytest.raises(ValueError, match="unit must be"):
        ModelSpec("-", "BERT-MLM", "mlm", unit="bpe")


def test_md5_example_matches_neither_function():
    table = analysis.md5_example()
    assert list(table["word"]) == ["play", "plays"]
    assert not table["plain_matches"].any() and not table["hmac_matches"].any()
    assert table.loc[0, "plain_md5"] == hashlib.md5(b"play").hexdigest()
    import hmac

    assert table.loc[1, "hmac_md5_key_en"] == hmac.new(b"en", b"plays", "md5").hexdigest()


@pytest.mark.parametrize("words,buckets", [(1, 1), (2, 1), (2, 3), (3, 2), (4, 3), (5, 4)])
def test_expected_sharing_matches_enumeration(words, buckets):
    total = 0
    for assignment in itertools.product(range(buckets), repeat=words):
        counts = np.bincount(assignment, minlength=buckets)
        total += sum(counts[b] > 1 for b in assignment)
    assert analysis.expected_sharing_uniform(words, buckets) == pytest.approx(total / buckets**words)


def test_expected_sharing_rejects_bad_sizes():
    with pytest.raises(ValueError, match="num_buckets"):
        analysis.expected_sharing_uniform(3, 0)


@pytest.fixture(scope="module")
def tiny_bpe():
    texts = ["the players played and the player plays", "working workers worked on the work"] * 20
    return train_bpe(texts, 300, lowercase=True)


def test_bucket_sharing_counts_words_in_shared_buckets(tiny_bpe):
    words = ["play", "plays", "played", "work", "works", "the", "and", "on", "player", "worker"]
    table = analysis.bucket_sharing(words, tiny_bpe, [4, 16])
    assert list(zip(table["hash"], table["num_buckets"])) == [("MD5", 4), ("LSH", 4), ("MD5", 16), ("LSH", 16)]
    ids = KeyedMD5Hasher(num_buckets=4).batch_index(words).tolist()
    expected = sum(ids.count(i) > 1 for i in ids)
    row = table[(table["hash"] == "MD5") & (table["num_buckets"] == 4)].iloc[0]
    assert row["words_sharing"] == expected
    assert row["buckets_used"] == len(set(ids))
    assert row["largest_bucket"] == max(ids.count(i) for i in ids)
    assert (table["buckets_used"] <= table["num_buckets"]).all()


def test_morphology_rows(tiny_bpe):
    table = analysis.morphology(tiny_bpe, 16, families=[("play", "plays", "played")])
    assert list(table["word"]) == ["plays", "played"]
    md5 = KeyedMD5Hasher(num_buckets=16)
    assert list(table["md5_same_bucket"]) == [md5.index("play") == md5.index(w) for w in ("plays", "played")]
    bits = KeyedMD5Hasher()
    assert table.loc[0, "md5_hamming"] == int((bits.bits("play") != bits.bits("plays")).sum())
    assert table["lsh_hamming"].between(0, 128).all()


def test_table2_comparison_reproduces_45_of_60_printed_cells():
    from hashlib_core.papers.hashformers.table2 import hashformers_table2

    with torch.no_grad():
        comparison = tables.table2_comparison(hashformers_table2())
    assert len(comparison) == 60
    assert int(comparison["agrees"].sum()) == 45


def test_paper_points_average_table1_over_the_chosen_tasks():
    table2 = pd.DataFrame({"model": ["BERT-MLM"], "emb_params": [38_603_520]})
    points = tables.paper_points(["sst2", "rte"], table2).set_index(["group", "model"])
    row = load_paper_table("hashformers_table1").set_index(["group", "model"]).loc[("-", "BERT-MLM")]
    expected = (parse_printed(row["SST"]).value + parse_printed(row["RTE"]).value) / 2
    assert points.loc[("-", "BERT-MLM"), "avg"] == pytest.approx(expected)
    assert points.loc[("-", "BERT-MLM"), "emb_params"] == 38_603_520
    printed = load_paper_table("hashformers_table2").set_index(["group", "model"])
    key = ("HashFormers-MD (Ours)", "Proj")
    assert points.loc[key, "emb_params"] == parse_printed(printed.loc[key, "#Emb_Params"]).value


def test_subword_tokenizer_hashes_bpe_pieces(tiny_bpe):
    tok = tokenization.SubwordHashFormerTokenizer(KeyedMD5Hasher(num_buckets=50), tiny_bpe, mode="index",
                                                  max_length=64)
    text = "The players played"
    units = tokenization.bpe_units(tiny_bpe, text)
    batch = tok(text)
    assert batch["input_ids"].shape == (1, len(units) + 2)
    assert batch["input_ids"][0, 1:-1].tolist() == KeyedMD5Hasher(num_buckets=50).batch_index(units).tolist()
    assert "".join(units) == "theplayersplayed"


def test_pretrain_collator_adds_specials_and_zero_codes():
    spec = next(v for v in MODELS if v.name == "MD-Proj")
    table = torch.randint(0, 2, (10, 128), dtype=torch.uint8)
    collate = data.PretrainCollator(spec, table, lambda batch: batch)
    rows = [torch.tensor([1, 2, 3]), torch.tensor([4, 5, 6])]
    batch = collate(rows)
    assert batch["input_ids"].tolist() == [[BOS_ID] + [HASHED_TOKEN_ID] * 3 + [EOS_ID]] * 2
    assert torch.equal(batch["hash_bits"][1, 1:4], table[torch.tensor([4, 5, 6])])
    assert batch["hash_bits"][:, [0, 4]].sum() == 0
    emb = next(v for v in MODELS if v.name == "MD-Emb (1K)")
    ids = torch.arange(100, 110)
    batch = data.PretrainCollator(emb, ids, lambda b: b)(rows)
    assert batch["input_ids"].tolist() == [[BOS_ID, 101, 102, 103, EOS_ID], [BOS_ID, 104, 105, 106, EOS_ID]]


def test_mlm_objective_is_seeded_and_skips_special_tokens(tiny_bpe):
    from hashlib_core.bpe import bpe_to_hf_tokenizer

    tokenizer = bpe_to_hf_tokenizer(tiny_bpe)
    ids = torch.randint(5, 300, (8, 40), generator=torch.Generator().manual_seed(1))
    ids[:, 0], ids[:, -1] = BOS_ID, EOS_ID
    batch = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
    a = objectives.MLMObjective(tokenizer, seed=3)(batch)
    b = objectives.MLMObjective(tokenizer, seed=3)(batch)
    assert torch.equal(a["input_ids"], b["input_ids"]) and torch.equal(a["labels"], b["labels"])
    assert (a["labels"][:, [0, -1]] == -100).all()
    assert ((a["labels"] != -100).sum() > 0) and torch.equal(a["labels"][a["labels"] != -100],
                                                           ids[a["labels"] != -100])


def test_profiles_validate_their_settings():
    assert {v.name for v in MODELS} >= set(MICRO_VARIANTS)
    assert len(MODELS) == 12 and len(TABLE6_MODELS) == 4
    with pytest.raises(ValueError, match="unknown model"):
        PROFILES.get("smoke", models=("MD-Emb (2K)",))
    with pytest.raises(ValueError, match="not staged"):
        PROFILES.get("smoke", tasks=("mnli",))
    with pytest.raises(ValueError, match="corpus"):
        PROFILES.get("smoke", corpus="c4")
    with pytest.raises(ValueError, match="fine-tuning seed"):
        PROFILES.get("smoke", ft_seeds=())
    assert PROFILES.get("smoke", tasks="rte,sst2").tasks == ("rte", "sst2")     # the one CLI list syntax
    paper = PROFILES.paper
    assert (paper.layers, paper.hidden, paper.seq_len, paper.pt_batch, paper.ft_seeds) == (12, 768, 512, 128, (0, 1, 2))


def test_paper_corpus_refuses_to_run_offline(monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    with pytest.raises(RuntimeError, match="HF_DATASETS_OFFLINE"):
        data.read_corpus(PROFILES.paper)


def test_the_page_reads_every_quoted_number_from_the_results(micro_run):
    """Every {glue:text} key of the chapter's page is computed by tables.quoted from the results."""
    import re

    from hashlib_core.chapter import Shown
    from hashlib_core.results import repo_root

    profile, root, _ = micro_run
    from hashlib_core.papers.hashformers.protocol import protocol_quoted
    from hashlib_core.papers.hashformers.tables_majority import majority_quoted
    from hashlib_core.papers.hashformers.trend import scale_quoted, scale_view, trend_quoted, trend_view

    shown = Shown(profile, CHAPTER.store("smoke", root=root), "live", "")
    quoted = {**tables.quoted(shown), **protocol_quoted(shown), **trend_quoted(trend_view(shown)),
              **scale_quoted(scale_view(CHAPTER)),
              **majority_quoted(shown.table("majority_floor"), shown.table("majority_runs"),
                                shown.table("majority_bags"))}
    page = (repo_root() / "book" / "src" / "hashformers.md").read_text()
    keys = set(re.findall(r"\{glue:text\}`([^`]+)`", page))
    assert keys and keys <= set(quoted), sorted(keys - set(quoted))
    assert all(isinstance(v, str) and v for v in quoted.values())
    # the paper's best model is named by the paper's label, never by our bucket count
    assert "N =" not in quoted["best_paper"]
