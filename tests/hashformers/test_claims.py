"""The HashFormers chapter's claims (hashlib_core.papers.hashformers.claims) on small fixed inputs, and on the
committed results."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pytest

from hashlib_core.claims import NoSignal, NotTestable
from hashlib_core.papers.hashformers.claims import CLAIMS, held_out_floor, learned_tasks
from hashlib_core.papers.hashformers.finetuning import glue_table
from hashlib_core.papers.hashformers.profiles import MODELS, PROFILES, PROFORMER

SPREAD = np.array([-0.1, 0.0, 0.1])          # three seeds around each model's mean: sample std 0.1
#: SST-2 mean per model (CoLA: every model at MCC 0, the majority class)
SST = {"BERT-MLM": 80.0, "BERT-S+R": 79.0, "MD-Emb (50K)": 72.0, "LSH-Emb (50K)": 70.0, "MD-Emb (1K)": 60.0,
       "LSH-Emb (1K)": 60.0, **{f"MD-{m}": 70.0 for m in ("Pool", "Add", "Proj")},
       **{f"LSH-{m}": 82.0 for m in ("Pool", "Add", "Proj")}}


ITEMS = 1000                                 # SST-2 dev items of the fixture: accuracy moves in steps of 0.1


def predictions_for(accuracy: float, gold: np.ndarray) -> list[int]:
    """Predictions right on the first ``accuracy``% of the items and wrong on the rest."""
    right = int(round(accuracy * len(gold) / 100))
    return [int(g) if i < right else 1 - int(g) for i, g in enumerate(gold)]


def fixed_glue(sst: dict[str, float] = SST, tasks=("sst2", "cola"), buckets: int = 4096):
    """(glue, glue_runs, glue_predictions) for every Table 1 model: SST-2 at the given means (+-0.1 over three
    seeds, one item right more or less), CoLA at 0 (every model predicts one class)."""
    specs = [m for m in (*MODELS, PROFORMER) if m.name in sst]
    summary = pd.DataFrame({
        "name": [m.name for m in specs], "group": [m.group for m in specs], "model": [m.model for m in specs],
        "unit": [m.unit for m in specs], "objective": "S+R",
        "num_buckets": [buckets if m.model == "Emb (50K)" else 1000 if m.model == "Emb (1K)" else np.nan
                        for m in specs],
        "emb_params": 1000, "total_params": 10_000})
    gold = np.array([i % 2 for i in range(ITEMS)])
    cola_gold = np.array([i % 3 == 0 for i in range(60)], dtype=int)
    rows, preds = [], []
    for m in specs:
        for seed, delta in enumerate(SPREAD):
            if "sst2" in tasks:
                rows.append({"name": m.name, "task": "sst2", "seed": seed, "score": sst[m.name] + delta,
                             "majority_score": 50.9, "validation_score": sst[m.name] + delta, "chosen": True})
                preds.append({"name": m.name, "task": "sst2", "seed": seed,
                              "predictions": predictions_for(sst[m.name] + delta, gold)})
            if "cola" in tasks:
                rows.append({"name": m.name, "task": "cola", "seed": seed, "score": 0.0, "majority_score": 0.0,
                             "validation_score": 0.0, "chosen": True})
                preds.append({"name": m.name, "task": "cola", "seed": seed, "predictions": [0] * len(cola_gold)})
    runs = pd.DataFrame(rows)
    labels = {**({"sst2": gold.tolist()} if "sst2" in tasks else {}),
              **({"cola": cola_gold.tolist()} if "cola" in tasks else {})}
    return glue_table(summary, runs, list(tasks)), runs, {"labels": labels, "runs": preds}


@dataclass
class FakeEvidence:
    tables: dict
    profile: object = field(default_factory=lambda: PROFILES.get("cpu", tasks=("sst2", "cola"), emb_buckets=4096))

    def has(self, name):
        return name in self.tables

    def table(self, name):
        return self.tables[name]

    def json(self, name):
        return self.tables[name]


def evidence(**tables) -> FakeEvidence:
    glue, runs, preds = fixed_glue()
    return FakeEvidence({"glue": glue, "glue_runs": runs, "glue_predictions": preds, **tables})


def bootstrap_diff(a: list[np.ndarray], b: list[np.ndarray], task: str = "sst2") -> tuple[float, float]:
    """The two-level paired bootstrap's interval of group a's mean accuracy minus group b's, recomputed here from
    index draws with the claims layer's generators (its default resamples): each resample draws the task's items
    (a generator seeded 0 and the task's name), then every model's seeds with replacement (a generator seeded
    [0, 1], group a's models first). ``a`` and ``b``: one (seeds x items) correctness array per model (:func:`runs`).
    """
    import zlib

    from hashlib_core.claims.bootstrap import DEFAULT_RESAMPLES

    n = a[0].shape[1]
    items = np.random.default_rng([0, zlib.crc32(task.encode())]).integers(0, n, (DEFAULT_RESAMPLES, n))
    units = np.random.default_rng([0, 1])
    seeds = [units.integers(0, len(m), (DEFAULT_RESAMPLES, len(m))) for m in (*a, *b)]
    d = []
    for r in range(DEFAULT_RESAMPLES):
        idx = items[r]
        score = [np.mean([m[seeds[i + off][r]][:, idx].mean() for i, m in enumerate(group)])
                 for group, off in ((a, 0), (b, len(a)))]
        d.append(100.0 * (score[0] - score[1]))
    return tuple(np.percentile(d, [2.5, 97.5]))


def bootstrap_worst_pair(pairs: list[tuple[str, str]]) -> tuple[float, float]:
    """The two-level bootstrap's interval of the smallest, over ``pairs``, of a's mean SST-2 accuracy minus b's,
    recomputed from index draws: each model's seeds drawn once per resample in the order the models first appear."""
    import zlib

    from hashlib_core.claims.bootstrap import DEFAULT_RESAMPLES

    names = list(dict.fromkeys(n for pair in pairs for n in pair))
    mats = dict(zip(names, runs(*names)))
    n = ITEMS
    items = np.random.default_rng([0, zlib.crc32(b"sst2")]).integers(0, n, (DEFAULT_RESAMPLES, n))
    units = np.random.default_rng([0, 1])
    seeds = {m: units.integers(0, 3, (DEFAULT_RESAMPLES, 3)) for m in names}
    d = [min(100.0 * (mats[a][seeds[a][r]][:, items[r]].mean() - mats[b][seeds[b][r]][:, items[r]].mean())
             for a, b in pairs) for r in range(DEFAULT_RESAMPLES)]
    return tuple(np.percentile(d, [2.5, 97.5]))


def claim(claim_id: str):
    return next(c for c in CLAIMS.claims if c.id == claim_id)


def row(ev, claim_id: str) -> pd.Series:
    return CLAIMS.evaluate(ev).set_index("id").loc[claim_id]


def runs(*names: str, sst: dict[str, float] = SST) -> list[np.ndarray]:
    """Per named model, its seeds' SST-2 correctness (seeds x items, the fixture's predictions)."""
    gold = np.array([i % 2 for i in range(ITEMS)])
    return [np.array([np.array(predictions_for(sst[n] + d, gold)) == gold for d in SPREAD], dtype=float)
            for n in names]


# ------------------------------------------------------------------------------------------------ GLUE claims
def test_learned_tasks_leave_out_a_task_where_every_model_stays_at_the_majority_class():
    assert learned_tasks(evidence()) == (["SST"], ["CoLA"])


def test_learned_tasks_are_decided_on_the_held_out_part_not_on_dev():
    """CoLA's dev scores far above chance change nothing while the held-out scores stay at 0; a held-out score above
    the floor (and the model's spread) makes the task count, whatever dev says."""
    ev = evidence()
    ev.tables["glue_runs"] = ev.tables["glue_runs"].assign(
        score=lambda r: np.where(r["task"] == "cola", 40.0, r["score"]))
    assert learned_tasks(ev) == (["SST"], ["CoLA"])
    ev.tables["glue_runs"] = ev.tables["glue_runs"].assign(
        validation_score=lambda r: np.where((r["task"] == "cola") & (r["name"] == "BERT-MLM"), 12.0,
                                            r["validation_score"]))
    assert learned_tasks(ev) == (["SST", "CoLA"], [])
    p = ev.profile
    floor = held_out_floor("sst2", p.ft_train_examples, p.ft_validation_examples, p.seed)
    assert 50.0 <= floor < 60.0 and held_out_floor("cola", 10, 50, 0) == 0.0
    no_held_out = evidence()
    no_held_out.tables["glue_runs"] = no_held_out.tables["glue_runs"].drop(columns="validation_score")
    with pytest.raises(NotTestable, match="no held-out scores"):
        learned_tasks(no_held_out)


def test_headline_proj_vs_bert_is_a_paired_bootstrap_over_the_dev_items_and_holds():
    r = row(evidence(), "proj-glue")
    low, high = bootstrap_diff(runs("LSH-Proj"), runs("BERT-MLM"))
    assert r["estimate"] == pytest.approx(2.0) and (r["low"], r["high"]) == pytest.approx((low, high))
    assert r["region"] == ">= -0.4 points"       # Table 1: 79.5 - 79.1
    assert r["verdict"] == "holds" and r["resolve"] == pytest.approx(0.4)
    assert "paired bootstrap over 1,000 dev items" in r["method"] and "CoLA" in r["method"]
    assert "fine-tuning runs (3 seeds per task) resampled too" in r["method"]
    assert "pre-trained once" in r["method"] and r["flags"] == "pt-once"
    assert "the claim is settled" in r["power"]               # wider than 0.4 points, yet wholly on one side
    assert r["ours"] == "LSH-Proj 82.0 vs BERT-MLM 80.0 (+2.0 points)"


def test_proj_below_bert_by_more_than_the_paper_does_not_hold():
    sst = {**SST, "LSH-Proj": 75.0}
    glue, runs, preds = fixed_glue(sst)
    r = row(FakeEvidence({"glue": glue, "glue_runs": runs, "glue_predictions": preds}), "proj-glue")
    assert r["estimate"] == pytest.approx(-5.0) and r["region"] == ">= -0.4 points"   # Table 1: 79.5 - 79.1
    assert r["verdict"] == "does not hold"


def test_model_comparisons_follow_their_quantifier():
    """A pair or an average reads the mean ("Emb (1K) scores below Emb (50K)"); a claim about each compressed model
    reads the worst of them: MD-Pool/Add/Proj (70) over their Emb (1K) (60) is the smallest of the six gaps, while
    the LSH ones (82) are far above."""
    table = CLAIMS.evaluate(evidence()).set_index("id")
    # Emb (50K) (72, 70) vs Emb (1K) (60, 60) with either hash: the smaller drop; Pool/Add/Proj vs Emb (1K) and LSH
    # vs MD: the worst pair
    assert table.loc["emb1k-drop", "estimate"] == pytest.approx(10.0)
    assert table.loc["emb1k-behind", "estimate"] == pytest.approx(10.0)
    assert table.loc["emb1k-behind", "ours"].startswith("smallest: MD-Pool 70.0 vs MD-Emb (1K) 60.0 (+10.0 points)")
    assert "the smallest of 6 gaps, bootstrapped as one" in table.loc["emb1k-behind", "method"]
    assert table.loc["lsh-compressed", "estimate"] == pytest.approx(12.0)
    assert table.loc["md-emb", "estimate"] == pytest.approx(2.0)
    assert set(table.loc[["emb1k-drop", "emb1k-behind", "lsh-compressed", "md-emb"], "verdict"]) == {"holds"}
    assert "Emb (N = 4,096, paper's 50K)" in table.loc["md-emb", "ours"]
    low, high = bootstrap_worst_pair([("MD-Emb (50K)", "MD-Emb (1K)"), ("LSH-Emb (50K)", "LSH-Emb (1K)")])
    assert (table.loc["emb1k-drop", "low"], table.loc["emb1k-drop", "high"]) == pytest.approx((low, high))


def test_retention_is_the_lowest_models_prr_bootstrapped_as_one():
    r = row(evidence(), "retention")
    assert r["estimate"] == pytest.approx(100 * 70.0 / 80.0)
    assert r["ours"].startswith("lowest MD-Pool 87.5% of BERT-MLM's score (highest LSH-Pool 102.5%)")
    assert r["low"] < r["estimate"] < r["high"] < 94.7
    assert r["region"] == ">= 94.7%" and r["verdict"] == "does not hold"
    assert "lowest of six retentions" in r["method"]


def test_the_worst_pair_decides_a_claim_about_each_model():
    """One compressed LSH model below its MD twin: the mean over the three pairs still favours LSH, the claim about
    each does not."""
    sst = {**SST, "LSH-Add": 66.0}                    # LSH 82, 66, 82 against MD 70, 70, 70: mean +6.7, worst -4
    glue, runs_, preds = fixed_glue(sst)
    r = row(FakeEvidence({"glue": glue, "glue_runs": runs_, "glue_predictions": preds}), "lsh-compressed")
    assert r["estimate"] == pytest.approx(-4.0) and r["verdict"] == "does not hold"


def test_a_task_where_every_model_stays_at_the_majority_class_gives_no_signal():
    r = row(evidence(), "cola-add")
    assert r["verdict"] == "no signal"
    assert r["reason"] == ("every model stays at the majority class on the held-out part of CoLA's training split: "
                           "there is nothing to compare at this scale")


def test_a_task_the_profile_does_not_fine_tune_is_not_testable():
    glue, runs, preds = fixed_glue(tasks=("sst2",))
    ev = FakeEvidence({"glue": glue, "glue_runs": runs, "glue_predictions": preds},
                      PROFILES.get("cpu", tasks=("sst2",)))
    assert row(ev, "cola-add")["reason"] == "CoLA is not fine-tuned in the cpu profile"


def test_a_missing_model_is_not_testable_and_nothing_crashes():
    sst = {k: v for k, v in SST.items() if k != "LSH-Proj"}
    glue, runs, preds = fixed_glue(sst)
    table = CLAIMS.evaluate(FakeEvidence({"glue": glue, "glue_runs": runs, "glue_predictions": preds})).set_index("id")
    assert table.loc["proj-glue", "verdict"] == "not testable here"
    assert table.loc["proj-glue", "reason"] == "no dev predictions for LSH-Proj on sst2"
    assert table.loc["md-emb", "verdict"] == "holds"          # the others are still answered


def test_every_model_at_the_majority_class_everywhere_gives_no_signal():
    glue, runs, preds = fixed_glue({k: 50.9 for k in SST})
    ev = FakeEvidence({"glue": glue, "glue_runs": runs, "glue_predictions": preds})
    with pytest.raises(NoSignal, match="every model stays at the majority class"):
        claim("proj-glue").effect(ev)
    assert row(ev, "proj-glue")["verdict"] == "no signal"


def test_a_reference_at_its_floor_gives_no_signal_and_flags_say_so():
    """BERT-MLM at its floor on the held-out data while LSH-Proj learns: a tolerance measured against BERT-MLM reads
    chance. A compared model at its floor on part of what a claim reads is flagged; a run best at its last epoch
    too."""
    ev = evidence()
    ev.tables["glue_runs"] = ev.tables["glue_runs"].assign(
        validation_score=lambda r: np.where((r["task"] == "sst2") & (r["name"] == "BERT-MLM"), 50.0,
                                            r["validation_score"]),
        best_epoch=lambda r: np.where(r["name"] == "LSH-Proj", 5, 2), max_epochs=5.0)
    r = row(ev, "proj-glue")
    assert r["verdict"] == "no signal" and r["reason"].startswith("BERT-MLM, the reference, stays at its floor")
    assert r["flags"] == "pt-once,cap,floor" and "3 of 6 chosen runs best at their last epoch" in r["method"]


# ------------------------------------------------------------------------------------------------ Table 2, 3, 6
def test_table2_counts_hold_when_they_round_to_the_print():
    table2 = pd.DataFrame({"group": ["HashFormers-LSH (Ours)"] * 2, "model": ["Proj", "Emb (1K)"],
                           "emb_params": [99_072, 768_000]})
    table = CLAIMS.evaluate(evidence(table2=table2)).set_index("id")
    assert table.loc["proj-params", "verdict"] == "holds" and table.loc["proj-params", "paper_value"] == "99.1K"
    assert table.loc["proj-params", "ours"] == "99.1K (99,072)"
    assert table.loc["emb1k-params", "verdict"] == "does not hold"      # printed 797.2K: Pool's count
    assert "BERT-base size" in table.loc["proj-params", "scale"]
    assert table.loc["add-params", "reason"] == "Add is not among the counted models"


def fixed_timing(canine_ms: float | None = 0.9) -> pd.DataFrame:
    """Table 3's six models and (unless ``canine_ms`` is None) CANINE-C, timed at inference only."""
    names = ["BERT-MLM", "BERT-S+R", "MD-Emb (50K)", "MD-Pool", "MD-Add", "MD-Proj"]
    groups = ["BERT"] * 2 + ["HASHFORMERS (Ours)"] * 4
    pt = [40.0, 2.0, 2.1, 2.5, 1.9, 2.0]
    infer = [0.5, 0.4, 0.2, 0.45, 0.4, 0.25]
    tokens = [40.0, 40.0, 22.0, 22.0, 22.0, 22.0]
    keys = ["-MLM", "-S+R", "-Emb", "-Pool", "-Add", "-Proj"]
    if canine_ms is not None:
        names, groups, keys, pt, infer, tokens = (names + ["CANINE-C"], groups + ["-"], keys + ["CANINE-C"],
                                                  pt + [float("nan")], infer + [canine_ms], tokens + [120.0])
    return pd.DataFrame({"group": groups, "model": keys, "name": names, "device": "cpu", "pt_ms_per_sample": pt,
                         "infer_ms_per_sample": infer, "infer_mean_tokens": tokens,
                         "pt_speedup": [40.0 / t for t in pt], "infer_speedup": [0.5 / t for t in infer]})


def test_timing_claims_are_one_measurement_each():
    table = CLAIMS.evaluate(evidence(timing=fixed_timing())).set_index("id")
    assert table.loc["sr-pt", "estimate"] == pytest.approx(40.0 / 2.5)           # slowest S+R model: MD-Pool
    assert table.loc["sr-pt", "verdict"] == "inconclusive"                        # no interval: nothing settled
    assert table.loc["sr-pt", "lean"] == "leans to the paper" and table.loc["sr-pt", "flags"] == "no-interval"
    assert table.loc["hf-pt-vs-sr", "estimate"] == pytest.approx(25.0)           # MD-Pool 2.5 vs 2.0 ms
    assert table.loc["hf-pt-vs-sr", "region"] == "in [-8.6, 8.6]%"              # Table 3: 10.6 vs 11.6
    assert table.loc["hf-pt-vs-sr", "verdict"] == "inconclusive"
    assert table.loc["hf-pt-vs-sr", "lean"] == "leans against the paper"
    assert table.loc["infer", "estimate"] == pytest.approx(0.4 / 0.2)            # the faster BERT vs MD-Emb
    p = PROFILES.get("cpu")
    assert f"timed on CPU at {p.layers} x {p.hidden}" in table.loc["infer", "method"]
    assert math.isnan(table.loc["infer", "low"])
    # with rows at BERT-base's width, the claims read those (the width the paper timed)
    base = fixed_timing().assign(scale="paper", shape="BERT-base (12 x 768)", pt_speedup=1.5)
    both = pd.concat([fixed_timing().assign(scale="profile", shape="profile (2 x 64)"), base])
    at_base = CLAIMS.evaluate(evidence(timing=both)).set_index("id")
    assert at_base.loc["sr-pt", "estimate"] == pytest.approx(1.5)
    assert "BERT-base (12 x 768)" in at_base.loc["sr-pt", "method"]
    no_sr = CLAIMS.evaluate(evidence(timing=fixed_timing().iloc[[0, 2]])).set_index("id")
    assert no_sr.loc["sr-pt", "reason"] == "the timing table lacks BERT-S+R"
    # CANINE-C (no pre-training time) is neither an S+R model nor a HashFormer: the readings above ignore it
    assert table.loc["sr-pt", "estimate"] == CLAIMS.evaluate(
        evidence(timing=fixed_timing(None))).set_index("id").loc["sr-pt", "estimate"]


def test_canine_claim_reads_its_time_over_the_slowest_other_models():
    table = CLAIMS.evaluate(evidence(timing=fixed_timing(0.9))).set_index("id")
    r = table.loc["canine-infer"]
    assert r["estimate"] == pytest.approx(0.9 / 0.5)                  # BERT-MLM is the slowest other model
    assert r["verdict"] == "inconclusive" and r["lean"] == "leans to the paper" and math.isnan(r["low"])
    assert "CANINE-C 0.9 ms/sample: 1.80x the slowest other model's time (BERT-MLM, 0.5)" in r["ours"]
    assert "4.50x the fastest's (MD-Emb (50K))" in r["ours"] and "120 characters" in r["ours"]
    # faster than BERT-MLM but slower than the rest: the claim fails
    mid = CLAIMS.evaluate(evidence(timing=fixed_timing(0.42))).set_index("id").loc["canine-infer"]
    assert mid["estimate"] == pytest.approx(0.42 / 0.5) and mid["lean"] == "leans against the paper"
    old = CLAIMS.evaluate(evidence(timing=fixed_timing(None))).set_index("id").loc["canine-infer"]
    assert old["verdict"] == "not testable here" and "no CANINE-C row" in old["reason"]


def test_timing_quoted_gives_canine_against_the_other_models():
    from hashlib_core.papers.hashformers.table3 import timing_quoted

    profile = fixed_timing().assign(scale="profile", shape="profile (2 x 64)")
    base = fixed_timing(3.0).assign(scale="paper", shape="BERT-base (12 x 768)")
    out = timing_quoted(pd.concat([profile, base]))
    assert out["canine_width"] == "BERT-base (12 x 768)" and out["canine_chars"] == "120"
    assert (out["canine_slowest"], out["canine_slowest_name"]) == ("6.00x", "BERT-MLM")
    assert (out["canine_fastest"], out["canine_fastest_name"]) == ("15.00x", "MD-Emb (50K)")
    assert (out["paper_canine_ms"], out["paper_bert_ms"], out["paper_canine_speedup"]) == ("6.9", "4.6", "0.6x")
    # the HashFormers' range leaves CANINE-C out
    assert out["infer_speedups_base"] == f"{0.5 / 0.45:.2f}x to {0.5 / 0.2:.2f}x"
    no_canine = timing_quoted(fixed_timing(None).assign(scale="profile", shape="profile (2 x 64)"))
    assert no_canine["canine_slowest"] == no_canine["canine_fastest_name"] == "-"
    assert no_canine["paper_canine_ms"] == "6.9"
    # a range whose ends print alike is one number
    same = fixed_timing().assign(scale="paper", shape="BERT-base (12 x 768)", infer_speedup=1.1)
    assert timing_quoted(pd.concat([profile, same]))["infer_speedups_base"] == "1.10x"


def test_table6_compares_word_and_subword_units_item_by_item():
    names = ["MD-Emb (50K)", "MD-Proj", "LSH-Emb (50K)", "LSH-Proj"]
    sub = {f"{n} [BPE]": a for n, a in zip(names, (60.0, 62.0, 64.0, 66.0))}
    table6 = pd.DataFrame({"name": list(sub), "num_buckets": [4096, np.nan, 4096, np.nan],
                           "SST": list(sub.values()), "SST_std": [0.1] * 4})
    gold = np.array([i % 2 for i in range(ITEMS)])
    preds6 = {"labels": {"sst2": gold.tolist()},
              "runs": [{"name": n, "task": "sst2", "seed": s, "predictions": predictions_for(a + d, gold)}
                       for n, a in sub.items() for s, d in enumerate(SPREAD)]}
    r = row(evidence(table6=table6, table6_predictions=preds6), "table6")
    word = np.mean([SST[n] for n in names])
    assert r["estimate"] == pytest.approx(word - 63.0)
    low, high = bootstrap_diff(runs(*names), runs(*sub, sst=sub))
    assert (r["low"], r["high"]) == pytest.approx((low, high))
    assert r["verdict"] == "holds" and "paired bootstrap over 1,000 dev items" in r["method"]


def test_proformer_claim_reads_the_lowest_share_of_tasks_a_hashformer_wins():
    def proformer_row(sst_proformer: float | None) -> pd.Series:
        sst = SST if sst_proformer is None else {**SST, "ProFormer": sst_proformer}
        glue, glue_runs, preds = fixed_glue(sst)
        return row(FakeEvidence({"glue": glue, "glue_runs": glue_runs, "glue_predictions": preds}), "proformer")

    # below every HashFormer on SST-2 (CoLA: every model at the majority class, left out): every one wins 1 of 1
    low = proformer_row(55.0)
    assert low["estimate"] == 100.0 and (low["low"], low["high"]) == (100.0, 100.0)
    assert low["verdict"] == "holds" and low["region"] == "> 50%"
    assert low["ours"] == "every HashFormer wins 1 of 1 tasks; ProFormer SST 55.0"
    assert "left out" in low["method"] and "CoLA" in low["method"]
    # above the MD HashFormers (70-72) and the Emb (1K) ones, below the LSH Pool/Add/Proj (82): some win none
    mid = proformer_row(75.0)
    assert mid["estimate"] == 0.0 and mid["verdict"] == "does not hold"
    assert "0 of 1 (most: LSH-Pool 1)" in mid["ours"]
    # ProFormer and a HashFormer both at their floor on the held-out data: their tie decides the share
    glue, glue_runs, preds = fixed_glue({**SST, "ProFormer": 52.0, "MD-Emb (1K)": 52.0})
    glue_runs = glue_runs.assign(validation_score=lambda r: np.where(
        r["name"].isin(["ProFormer", "MD-Emb (1K)"]) & (r["task"] == "sst2"), 45.0, r["validation_score"]))
    tied = row(FakeEvidence({"glue": glue, "glue_runs": glue_runs, "glue_predictions": preds}), "proformer")
    assert tied["verdict"] == "no signal" and tied["reason"].startswith("ProFormer and MD-Emb (1K) both stay at")
    untrained = proformer_row(None)
    assert untrained["verdict"] == "not testable here" and "setting proformer" in untrained["reason"]


def test_every_claim_is_listed_headlines_first():
    ids = [c.id for c in CLAIMS.claims]
    assert ids[:3] == ["proj-glue", "proj-params", "retention"] and len(ids) >= 4
    assert not [c.id for c in CLAIMS.claims if c.untestable]


# ------------------------------------------------------------------------------------------------ committed results
def test_the_committed_results_answer_every_claim_they_should():
    from hashlib_core.chapter import Shown
    from hashlib_core.papers.hashformers.experiments import CHAPTER

    store = CHAPTER.store("cpu")
    if not store.exists("glue"):
        pytest.skip("no committed cpu results")
    profile = CHAPTER.profiles.get("cpu")
    table = CLAIMS.evaluate(Shown(profile, store, "committed", ""))
    assert list(table["id"]) == [c.id for c in CLAIMS.claims]
    assert not (table["verdict"] == "not testable here").any()
    silent = table[table["verdict"] == "no signal"].set_index("id")["reason"]
    # CoLA: every model at MCC 0 in the cpu profile
    assert "cola-add" in silent.index
    assert silent["cola-add"].startswith("every model stays at the majority class on the held-out part of CoLA")
    assert table["scale"].str.contains("cpu profile").any()
    assert (table.loc[table["evidence"] == "empirical", "verdict"] != "").all()


# ------------------------------------------------------------------------------------------------ the trend
def test_the_trend_gives_the_headline_gap_at_each_pre_training_length():
    from hashlib_core.papers.hashformers.trend import trend_quoted, trend_view

    gold = np.array([i % 2 for i in range(ITEMS)])
    steps = {250: (70.0, 80.0), 500: (76.0, 80.0)}              # LSH-Proj closes in on BERT-MLM with steps
    record = {"labels": {"sst2": gold.tolist()},
              "runs": [{"name": f"{m} @ {n} steps", "task": "sst2", "seed": s,
                        "predictions": predictions_for(a + d, gold)}
                       for n, pair in steps.items() for m, a in zip(("LSH-Proj", "BERT-MLM"), pair)
                       for s, d in enumerate(SPREAD)]}
    trend_runs = pd.DataFrame([{"pt_steps": n, "name": m, "pt_final_loss": 0.5}
                               for n in steps for m in ("LSH-Proj", "BERT-MLM")])
    pretraining = pd.DataFrame({"name": ["LSH-Proj", "BERT-MLM"], "final_loss": [0.3, 2.0]})
    ev = evidence(trend_runs=trend_runs, trend_predictions=record, pretraining=pretraining)
    ev.profile = PROFILES.get("cpu", tasks=("sst2", "cola"), pt_steps=1000, trend_pt_steps=(250, 500),
                             trend_tasks=("sst2", "cola"))
    view = trend_view(ev)
    assert list(view["pre-training steps"]) == [250, 500, ev.profile.pt_steps]
    assert view["difference"].tolist() == pytest.approx([-10.0, -4.0, 2.0])   # the last: Table 1's 82 vs 80
    assert (view["tasks"] == "SST").all()                                      # CoLA learns nothing: left out
    assert view["LSH-Proj loss (S+R)"].tolist() == [0.5, 0.5, 0.3]
    low, high = bootstrap_diff(runs("LSH-Proj"), runs("BERT-MLM"))
    assert (view["low"].iloc[-1], view["high"].iloc[-1]) == pytest.approx((low, high))
    assert trend_quoted(view)["trend_direction"] == (
        "changes sign (from -10.0 to +2.0 points; the intervals do not overlap)")
    closer = view.assign(difference=[-10.0, -6.0, -2.0], low=[-13.0, -9.0, -4.0], high=[-7.0, -3.0, -0.5])
    assert trend_quoted(closer)["trend_direction"] == "narrows (from -10.0 to -2.0 points; the intervals do not overlap)"
    close = view.assign(difference=[-3.0, -2.0, -1.0], low=[-6.0, -5.0, -4.0], high=[0.0, 1.0, 2.0])
    assert trend_quoted(close)["trend_direction"].startswith("moves by +2.0 points, but the first and last intervals")
    flip = view.assign(difference=[-6.0, 0.0, 6.0], low=[-9.0, -3.0, 3.0], high=[-3.0, 3.0, 9.0])
    assert trend_quoted(flip)["trend_direction"].startswith("changes sign (from -6.0 to +6.0")
