"""The HashFormers chapter's tables and figures on fixed inputs."""
from __future__ import annotations

import math

import matplotlib.figure
import numpy as np
import pandas as pd
import pytest

from hashlib_core.papers.hashformers import figures, tables
from hashlib_core.papers.hashformers.finetuning import glue_table
from hashlib_core.results import load_paper_table, parse_printed

NAMES = ["BERT-MLM", "MD-Proj", "LSH-Pool"]
GROUPS = ["-", "HashFormers-MD (Ours)", "HashFormers-LSH (Ours)"]
MODELS = ["BERT-MLM", "Proj", "Pool"]


def fixed_glue() -> pd.DataFrame:
    """Three models, two tasks, three seeds each, with known means and standard deviations."""
    summary = pd.DataFrame({"name": NAMES, "group": GROUPS, "model": MODELS, "unit": "word",
                            "objective": ["MLM", "S+R", "S+R"], "num_buckets": [100, np.nan, np.nan],
                            "emb_params": [6400, 2112, 66432], "total_params": [10**6, 9 * 10**5, 9 * 10**5]})
    rows = []
    sst = {"BERT-MLM": [80.0, 82.0, 84.0], "MD-Proj": [70.0, 70.0, 70.0], "LSH-Pool": [51.0, 51.5, 52.0]}
    rte = {"BERT-MLM": [55.0, 56.0, 57.0], "MD-Proj": [47.0, 47.5, 48.0], "LSH-Pool": [60.0, 61.0, 62.0]}
    for name in NAMES:
        for seed in range(3):
            rows.append({"name": name, "task": "sst2", "seed": seed, "score": sst[name][seed], "majority_score": 50.9})
            rows.append({"name": name, "task": "rte", "seed": seed, "score": rte[name][seed], "majority_score": 47.3})
    return glue_table(summary, pd.DataFrame(rows), ["sst2", "rte"])


def test_glue_table_means_stds_majority_and_prr():
    g = fixed_glue().set_index("name")
    assert g.loc["BERT-MLM", "SST"] == pytest.approx(82.0) and g.loc["BERT-MLM", "SST_std"] == pytest.approx(2.0)
    assert g.loc["MD-Proj", "SST_std"] == 0.0
    assert (g["SST_majority"] == 50.9).all() and (g["RTE_majority"] == 47.3).all()
    assert g.loc["MD-Proj", "Avg"] == pytest.approx((70.0 + 47.5) / 2)
    assert g.loc["LSH-Pool", "PRR_RTE"] == pytest.approx(100 * 61.0 / 56.0)


def test_glue_view_shows_mean_pm_std_and_a_majority_row():
    view = tables.glue_view(fixed_glue(), ["sst2", "rte"])
    assert list(view.columns) == ["model", "emb. params", "SST", "RTE", "Avg"]
    assert view.iloc[0].tolist() == ["majority class", "-", "50.9", "47.3", "-"]
    bert = view.set_index("model").loc["BERT-MLM"]
    assert bert["SST"] == "82.0 ± 2.0" and bert["RTE"] == "56.0 ± 1.0" and bert["emb. params"] == "6.4K"


def test_at_majority_finds_models_within_a_point_of_the_majority_class():
    stuck = tables.at_majority(fixed_glue(), ["sst2", "rte"])
    assert sorted(zip(stuck["model"], stuck["task"])) == [("LSH-Pool", "SST"), ("MD-Proj", "RTE")]
    assert tables.at_majority(fixed_glue(), ["sst2"], margin=0.0).empty


def test_ordering_compares_the_paper_ranking_with_ours():
    view, tau = tables.ordering(fixed_glue(), ["sst2", "rte"])
    t1 = load_paper_table("hashformers_table1").set_index(["group", "model"])
    paper_avg = {n: (parse_printed(t1.loc[(g, m), "SST"]).value + parse_printed(t1.loc[(g, m), "RTE"]).value) / 2
                 for n, g, m in zip(NAMES, GROUPS, MODELS)}
    assert view.set_index("model")["paper avg"].to_dict() == pytest.approx(paper_avg)
    ours = fixed_glue().set_index("name")["Avg"]
    concordant = sum(np.sign(paper_avg[a] - paper_avg[b]) == np.sign(ours[a] - ours[b])
                     for i, a in enumerate(NAMES) for b in NAMES[i + 1:])
    assert tau == pytest.approx((2 * concordant - 3) / 3)
    assert list(view["paper rank"]) == sorted(view["paper rank"])


def test_table2_matrix_and_notes_view():
    from hashlib_core.papers.hashformers.table2 import hashformers_table2

    table2 = hashformers_table2()
    text, agrees = tables.table2_matrix(table2)
    assert text.shape == agrees.shape == (12, 5)
    assert text.loc[("HashFormers-MD (Ours)", "Proj"), "#Emb_Params"] == "99.1K → 99.1K (0.0K)"
    assert agrees.loc[("HashFormers-MD (Ours)", "Proj"), "#Emb_Params"]
    notes = tables.table2_notes_view(table2)
    assert set(notes["model"]) == {"CANINE-C", "Emb (1K)", "Pool"}
    pool = notes[notes["model"] == "Pool"]["note"].iloc[0]
    pool_row = table2[table2["model"] == "Pool"].iloc[0]
    assert f"{int(pool_row['emb_params']):,}" in pool and f"{pool_row['poep']:.2f}%" in pool


def test_figures_draw_every_series():
    sharing = pd.DataFrame({"hash": ["MD5", "LSH", "MD5", "LSH"], "num_buckets": [10, 10, 100, 100],
                            "words": 50, "words_sharing": [40, 45, 10, 20], "expected_sharing_uniform": [45.0] * 2 + [11.0] * 2,
                            "largest_bucket": 3, "buckets_used": 9})
    fig = figures.bucket_sharing(sharing)
    assert isinstance(fig, matplotlib.figure.Figure) and len(fig.axes[0].lines) == 3
    morph = pd.DataFrame({"base": ["play", "play"], "word": ["plays", "played"], "md5_hamming": [60, 66],
                          "lsh_hamming": [3, 10]})
    assert len(figures.morphology(morph).axes[0].patches) == 4
    curves = pd.DataFrame({"name": ["a", "a", "b", "b"], "step": [1, 2, 1, 2], "loss": [1.1, 0.9, 1.0, 0.8]})
    assert len(figures.pretraining_curves(curves).axes[0].lines) == 2
    points = tables.paper_points(["sst2", "rte"], pd.DataFrame({"model": ["BERT-MLM"], "emb_params": [6400]}))
    fig = figures.params_vs_score(fixed_glue(), points, ["sst2", "rte"], "fixed")
    assert len(fig.axes[0].collections) >= len(fixed_glue()) + len(points)
    assert not math.isnan(fig.axes[0].get_xlim()[0])


def fixed_add() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Add's parts (three models, two stages), a GLUE table with MD-Add, and the codebook models' table."""
    names = ["MD-Add", "MD-Add (2Td codebooks)", "MD-Add (2Td codebooks, shared part frozen)"]
    parts = pd.DataFrame({
        "name": [n for n in names for _ in range(2)],
        "storage": ["differences"] * 2 + ["codebooks"] * 4, "num_bits": 128,
        "stage": ["initialisation", "after pre-training (300 steps)"] * 3, "words": 100,
        "shared_norm": [0.0, 0.0, 0.12, 0.48, 0.12, 0.11], "word_norm": [0.12, 0.13, 0.12, 0.12, 0.12, 0.13],
        "position_norm": 0.16, "shared_over_word": [0.0, 0.0, 1.0, 4.0, 1.0, 0.85],
        "shared_over_marker_moved": [np.nan, 0.0, np.nan, 9.04, np.nan, 0.01]})
    summary = pd.DataFrame({"name": names, "group": "HashFormers-MD (Ours)", "model": "Add", "unit": "word",
                            "objective": "S+R", "num_buckets": np.nan, "emb_params": [8256, 16448, 16448],
                            "total_params": 150000})
    scores = dict(zip(names, ([57.0, 59.0, 61.0], [50.9, 50.9, 50.9], [57.0, 58.0, 59.0])))
    runs = pd.DataFrame([{"name": n, "task": "sst2", "seed": s, "score": v, "majority_score": 50.9}
                         for n, vals in scores.items() for s, v in enumerate(vals)])
    table = glue_table(summary, runs, ["sst2"])
    return parts, table.iloc[:1].reset_index(drop=True), table.iloc[1:].reset_index(drop=True)


def test_add_diagnosis_views_and_quotes():
    parts, glue, codebooks = fixed_add()
    view = tables.add_parts_view(parts)
    assert list(view.columns) == ["model", "stage", "|shared part|", "mean |word part|", "mean |position row|",
                                  "shared / word", "shared moved / marker moved"]
    scores = tables.add_scores(glue, codebooks)
    assert scores.to_dict("records") == [
        {"model": "MD-Add", "SST": "59.0 ± 2.0", "SST majority": "50.9"},
        {"model": "MD-Add (2Td codebooks)", "SST": "50.9 ± 0.0", "SST majority": "50.9"},
        {"model": "MD-Add (2Td codebooks, shared part frozen)", "SST": "58.0 ± 1.0", "SST majority": "50.9"}]
    quoted = tables.add_quoted(parts, glue, codebooks)
    assert quoted == {"add_task": "SST", "add_scores": "59.0", "add_codebook_scores": "50.9",
                      "add_codebook_effect": "it keeps the model at the majority class",
                      "add_frozen_scores": "58.0", "add_majority": "50.9", "add_ratio_init": "1.0",
                      "add_sqrt_t": "11.3",
                      "add_ratio_codebooks": "4.0 (MD)", "add_speed_codebooks": "9.0 (MD)",
                      "add_ratio_differences": "0.0 (MD)", "add_speed_differences": "0.0 (MD)"}
    # codebooks 5 points below Add stored as differences, 4 above the majority class: a cost, not the majority class
    lifted = codebooks.assign(SST=[54.0, 58.0])
    assert tables.add_quoted(parts, glue, lifted)["add_codebook_effect"] == (
        "it costs 5.0 points against Add stored as its differences")
    assert tables.add_quoted(parts, glue, codebooks.assign(SST=[58.5, 58.0]))["add_codebook_effect"] == (
        "it does not hold the model back here")
    assert tables._per_model(pd.DataFrame({"name": ["MD-Add", "LSH-Add"], "x": [3.04, 1.66]}), "x") == \
        "3.0 (MD) and 1.7 (LSH)"
    assert tables.learning_rate(3e-5) == "3e-5" and tables.learning_rate(1e-3) == "1e-3"


def test_table6_quoted_counts_models_whose_subword_units_win():
    glue = pd.DataFrame({"name": ["MD-Emb (50K)", "MD-Proj", "BERT-MLM"], "SST": [70.0, 60.0, 80.0]})
    table6 = pd.DataFrame({"name": ["MD-Emb (50K) [BPE]", "MD-Proj [BPE]"], "SST": [65.0, 61.0]})
    quoted = tables.table6_quoted(glue, table6, ["sst2"])
    # paper (Table 6, SST): subword beats word for MD-Emb (88.5 vs 88) only, among the four models
    assert quoted == {"t6_ours": "1 of 2 (MD-Proj)", "t6_paper": "1 of 4 (MD-Emb (50K))", "t6_tasks": "SST"}


def test_glue_side_by_side_pairs_paper_and_ours_and_drops_prr_where_bert_is_at_chance():
    glue = fixed_glue()
    view, dropped = tables.glue_side_by_side(glue, ["sst2", "rte"])
    assert list(view.columns) == ["model", "SST", "RTE"] and dropped == []
    assert view.set_index("model").loc["BERT-MLM", "SST"] == "92.0 / 82.0"    # Table 1 prints 92.0 for BERT-MLM
    prr, dropped = tables.glue_side_by_side(glue, ["sst2", "rte"], prr=True)
    assert list(prr.columns) == ["model", "SST", "RTE"] and dropped == []
    assert prr.set_index("model").loc["MD-Proj", "SST"].endswith(f"/ {100 * 70.0 / 82.0:.1f}")
    chance = glue.copy()
    chance.loc[chance["name"] == "BERT-MLM", "RTE"] = 47.8   # within a point of the 47.3 majority
    prr, dropped = tables.glue_side_by_side(chance, ["sst2", "rte"], prr=True)
    assert list(prr.columns) == ["model", "SST"] and dropped == ["RTE"]


def test_stuck_summary_names_tasks_where_every_model_stays():
    stuck = pd.DataFrame({"model": ["a", "b", "a"], "task": ["RTE", "RTE", "SST"]})
    assert tables._stuck_summary(stuck, 2) == "RTE: every model; SST: a"
    assert tables._stuck_summary(stuck.iloc[:0], 2) == "none"


def test_at_majority_with_spread_widens_the_margin_to_the_seed_std():
    glue = fixed_glue()
    glue.loc[glue["name"] == "BERT-MLM", ["SST", "SST_std"]] = [52.1, 2.0]   # 1.2 above the 50.9 majority
    bert = glue[glue["name"] == "BERT-MLM"]
    assert tables.at_majority(bert, ["sst2"]).empty
    assert tables.at_majority(bert, ["sst2"], with_spread=True)["task"].tolist() == ["SST"]


def test_at_majority_counts_the_other_constant_prediction_of_a_two_class_task():
    """RTE's majority here is 47.3: predicting the other class throughout scores 52.7, and learned nothing either."""
    glue = fixed_glue()
    glue.loc[glue["name"] == "BERT-MLM", "RTE"] = 100.0 - 47.3
    assert ("BERT-MLM", "RTE") in set(zip(*tables.at_majority(glue, ["rte"])[["model", "task"]].values.T))
    glue.loc[glue["name"] == "BERT-MLM", "RTE"] = 54.0                       # 1.3 above the other constant
    assert "BERT-MLM" not in set(tables.at_majority(glue, ["rte"])["model"])
    cola = pd.DataFrame({"name": ["a"], "CoLA": [0.5], "CoLA_std": [np.nan], "CoLA_majority": [0.0]})
    assert tables.at_majority(cola, ["cola"])["model"].tolist() == ["a"]     # MCC: no mirror (0 is the floor)


def test_ordering_ranks_both_sides_on_the_same_tasks():
    """On SST-2 alone both rankings are SST-2's: our five-task average (here reversed on purpose) must not leak in."""
    glue = fixed_glue()
    glue["Avg"] = [1.0, 2.0, 3.0]
    view, tau = tables.ordering(glue, ["sst2"])
    by_model = view.set_index("model")
    assert by_model["our avg"].to_dict() == pytest.approx({"BERT-MLM": 82.0, "MD-Proj": 70.0, "LSH-Pool": 51.5})
    assert by_model["paper avg"].to_dict() == pytest.approx({"BERT-MLM": 92.0, "MD-Proj": 87.3, "LSH-Pool": 88.1})
    # pairs: (BERT, Proj) and (BERT, Pool) concordant, (Proj, Pool) discordant
    assert tau == pytest.approx(1 / 3)
    assert by_model.loc["MD-Proj", "our rank"] == 2


def emb_glue(buckets: int) -> pd.DataFrame:
    """A GLUE table with BERT-MLM and an MD-Emb (50K) built with ``buckets`` rows."""
    summary = pd.DataFrame({"name": ["BERT-MLM", "MD-Emb (50K)"], "group": ["-", "HashFormers-MD (Ours)"],
                            "model": ["BERT-MLM", "Emb (50K)"], "unit": ["subword", "word"],
                            "objective": ["MLM", "S+R"], "num_buckets": [2000, buckets],
                            "emb_params": [128_000, 64 * buckets], "total_params": 10**6})
    runs = pd.DataFrame([{"name": n, "task": "sst2", "seed": 0, "score": s, "majority_score": 50.9}
                         for n, s in (("BERT-MLM", 70.0), ("MD-Emb (50K)", 72.0))])
    return glue_table(summary, runs, ["sst2"])


def test_emb_50k_rows_built_with_another_n_say_their_real_n_and_the_paper_row():
    label = "MD-Emb (N = 4,096, paper's 50K)"
    assert tables.shown_name("MD-Emb (50K)", 4096) == label
    assert tables.shown_name("LSH-Emb (50K) [BPE]", 4096.0) == "LSH-Emb (N = 4,096, paper's 50K) [BPE]"
    assert tables.shown_name("MD-Emb (50K)", tables.PAPER_EMB_BUCKETS) == "MD-Emb (50K)"
    assert tables.shown_name("MD-Emb (1K)", 1000) == "MD-Emb (1K)"
    assert tables.shown_name("BERT-MLM", 2000) == "BERT-MLM"
    glue = emb_glue(4096)
    assert tables.glue_view(glue, ["sst2"])["model"].tolist() == ["majority class", "BERT-MLM", label]
    assert tables.glue_side_by_side(glue, ["sst2"])[0]["model"].tolist() == ["BERT-MLM", label]
    assert label in tables.ordering(glue, ["sst2"])[0]["model"].tolist()
    pre = glue.assign(distinct_units=1, steps=1, final_loss=1.0, wall_time_s=1.0)
    assert tables.pretraining_view(pre)["name"].tolist() == ["BERT-MLM", label]
    # at the paper's N the paper's label is kept
    paper_n = emb_glue(tables.PAPER_EMB_BUCKETS)
    assert tables.glue_view(paper_n, ["sst2"])["model"].tolist()[-1] == "MD-Emb (50K)"


def test_table6_comparison_names_our_n_beside_the_papers_emb_50k():
    glue = emb_glue(4096)
    table6 = pd.DataFrame({"name": ["MD-Emb (50K) [BPE]"], "group": ["HashFormers-MD"], "model": ["Emb (50K)"],
                           "num_buckets": [4096], "SST": [65.0]})
    out = tables.table6_comparison(glue, table6, ["sst2"])
    ours = out[out["ours"] != "-"]
    assert set(ours["model"]) == {"Emb (50K), ours N = 4,096"}
    assert set(ours["token"]) == {"subword", "word"}
    assert "Proj" in set(out["model"])                     # the paper's rows we did not run keep their label
