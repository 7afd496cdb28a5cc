"""The chapter's analysis on fixed inputs: properties, effect sizes, GLUE tables, sizes, the napkin and figures."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from hashlib_core.papers.dynamic_embeddings import figures, properties, tables  # noqa: E402
from hashlib_core.papers.dynamic_embeddings.profiles import PROFILES  # noqa: E402
from hashlib_core.papers.dynamic_embeddings.sizes import fitting_shapes, napkin, paper_sizes  # noqa: E402
from hashlib_core.papers.dynamic_embeddings.tables import glue_table  # noqa: E402

SMOKE = PROFILES.get("smoke")


def _runs() -> pd.DataFrame:
    rows = []
    for name, emb, base, size in (("BERT-tiny", 100, 80.0, 4e6), ("EELBERT-tiny", 0, 76.0, 2e6),
                                  ("UNO-EELBERT (ours)", 0, 72.0, 1e6)):
        for task, majority in (("sst2", 50.0), ("stsb", float("nan"))):
            for seed, delta in ((0, -1.0), (1, 1.0)):
                rows.append({"name": name, "task": task, "seed": seed, "score": base + delta - (task == "stsb") * 10,
                             "majority_score": majority, "total_params": int(size / 4), "emb_params": emb,
                             "size_fp32_bytes": size, "size_int8_bytes": size / 4})
    return pd.DataFrame(rows)


def test_glue_table_view_and_gap():
    table = glue_table(_runs(), ["sst2", "stsb"])
    t = table.set_index("name")
    assert t.loc["BERT-tiny", "sst2"] == 80.0 and t.loc["BERT-tiny", "sst2_std"] == pytest.approx(np.sqrt(2))
    assert t.loc["EELBERT-tiny", "avg"] == pytest.approx((76 + 66) / 2)
    assert tables.relative_gap(table, "EELBERT-tiny") == pytest.approx(100 * (71 - 75) / 75)
    view = tables.glue_view(table, ["sst2", "stsb"]).set_index("model")
    assert view.loc["BERT-tiny", "SST-2"] == "80.0\u00a0±\u00a01.4"        # no-break spaces: one line per cell
    assert view.loc["EELBERT-tiny", "gap to BERT-tiny (%)"] == "-5.3"
    assert view.loc["BERT-tiny", "float32 MB (fine-tuned)"] == 4.0
    assert view.loc["majority class", "SST-2"] == "50.0" and view.loc["majority class", "STS-B"].startswith("-")


def test_effect_sizes_and_subsequence():
    d = properties.effect_sizes(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 2.0]))
    assert d["cohens_d"] == pytest.approx(1.0) and d["auc"] == pytest.approx(7 / 9)  # 1.5 + 2.5 + 3 wins (ties count half) of 9
    assert properties.is_subsequence("srry", "sorry") and properties.is_subsequence("BRKLYN", "Brooklyn")
    assert not properties.is_subsequence("yrros", "sorry")
    with pytest.raises(ValueError, match="at least two pairs"):
        properties.effect_sizes(np.array([1.0]), np.array([0.0, 1.0]))


def test_word_families_take_one_pair_per_prefix():
    corpus = ["nation national nation nationality", "abandon abandoned Abandon x1234 runs"]
    assert properties.word_families(corpus, 5) == [("abandon", "abandoned"), ("national", "nationality")]


def test_property_checks_all_hold():
    checks = properties.property_checks(SMOKE)
    assert checks["holds"].all(), checks
    assert checks.loc[0, "value"] == 0.0                      # bit-identical in a fresh process


def test_community_comparison_shows_both_differences():
    t = properties.community_comparison()
    assert (t["ours (int64)"] == t["big-integer definition"]).all()
    assert (t["community recurrence"] != t["standard, blog's p=31"]).all()
    assert (t["hash x h mod b, exact"] != t["hash x h mod b, int32"]).all()


def test_similarity_groups_on_the_real_data(mirror):
    sim = properties.similarity_groups(SMOKE, ["nation national nationality abandon abandoned"] * 3)
    spelled = sim[sim["group"].str.startswith("Card-660 spelling")].iloc[0]
    assert spelled["pairs"] >= 10 and spelled["auc"] > 0.75 and spelled["mean_cosine"] > spelled["random_mean_cosine"]
    assert sim.iloc[-1]["pairs"] == 660 and np.isfinite(sim.iloc[-1]["spearman_with_gold"])


def test_paper_sizes_and_claims():
    sizes = paper_sizes(SMOKE)
    s = sizes.set_index("model")
    assert s.loc["BERT-tiny", "fp32_MB"] == pytest.approx(4 * 4_385_920 / 1e6)
    assert s.loc["UNO-EELBERT (ours)", "BERT-tiny_over_model"] == pytest.approx(4_385_920 / s.loc[
        "UNO-EELBERT (ours)", "total_params"])
    assert tables.abstract_claims().loc["UNO-EELBERT size", "value"] == "1.2 MB"
    assert tables.printed_claim("UNO-EELBERT smaller than BERT-tiny").value == 15.0
    assert tables.printed_claim("UNO-EELBERT GLUE vs BERT-tiny").text == "4%"
    view = tables.shapes_view(fitting_shapes(SMOKE))
    assert view["shape"].iloc[0] == "1 x 128 (ours)" and list(view.columns)[-2:] == ["rounds to 1.2 MB",
                                                                                    "rounds to 15x"]


def test_napkin_recomputes_the_blog():
    nap = napkin().set_index("model")
    assert nap.loc["Mistral 7B", "embedding_fp16_MiB"] == 4096 * 32000 * 2 / 2**20
    assert nap.loc["GPT2", "vocab_size"] == 50257 and nap.loc["GPT2", "tied_head"]
    view = tables.napkin_view(napkin())
    mistral = view[view["model"] == "Mistral 7B"].set_index("quantity")
    assert mistral.loc["V x d", "blog"] == "32000 x 4098" and "4098" in mistral.loc["V x d", "note"]
    assert mistral.loc["embedding, float16", "ours"] == "250.0 MiB"
    assert "BERT-tiny (not in the blog)" in set(view["model"])


def test_figures_place_every_model():
    table = glue_table(_runs(), ["sst2", "stsb"])
    hf = pd.DataFrame({"name": ["BERT-MLM", "MD-Emb"], "group": ["-", "HashFormers-MD (Ours)"],
                       "total_params": [250_000, 150_000], "SST": [70.0, 72.0], "STS": [1.0, 2.0]})
    points = figures.hashformers_points(hf, ["sst2", "stsb"])
    assert points["average"].tolist() == [35.5, 37.0] and points["family"].iloc[0].startswith("BERT baselines")
    fig = figures.size_vs_score(table, ["sst2", "stsb"], points)
    assert sum(len(c.get_offsets()) for c in fig.axes[0].collections) == 3 + 2
    curves = pd.DataFrame({"name": ["a", "a", "b"], "step": [1, 2, 1], "loss": [3.0, 2.0, 3.5]})
    assert len(figures.pretraining_curves(curves).axes[0].lines) == 2


def test_benchmark_runs_on_a_small_vocabulary(mirror):
    from hashlib_core.benchmarks.dynamic_embedding import run_benchmark

    out = run_benchmark([12], vocab_size=200, tokens=64, repeats=1)
    methods = {r["method"] for r in out["results"]}
    assert methods == {"nn.Embedding", "dynamic, cached", "dynamic, uncached", "dynamic, cache build"}
    assert all(r["tokens_per_s"] > 0 for r in out["results"])
