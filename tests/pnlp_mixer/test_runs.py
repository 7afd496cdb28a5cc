"""Tables 1-2's protocol on fixed inputs: a row's runs and the point chosen on validation (runs.py), the parts and
their merge (comparisons.py), and the paired bootstrap of two rows (claims_comparison.py)."""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import pytest

from hashlib_core.claims import NotTestable
from hashlib_core.papers.pnlp_mixer import claims_comparison as cc
from hashlib_core.papers.pnlp_mixer import comparisons
from hashlib_core.papers.pnlp_mixer.profiles import PROFILES
from hashlib_core.papers.pnlp_mixer.runs import Resources, run_row

#: three tuning points: the profile's own (lr 1e-3), then lr 5e-4 and 2e-3
PROFILE = PROFILES.get("smoke", tuning="learning_rate=0.0005,learning_rate=0.002", seeds=3,
                       headline_projections=("minhash",), projections=("binary", "minhash"))
P0, P1, P2 = PROFILE.tuning_points()


def _summary(intent=90.0, em=50.0, loss=0.5, best=1, epochs=2):
    return {"epochs": epochs, "best_epoch": best, "train_sentences": 256, "validation_sentences": 4,
            "val_intent_acc": intent, "val_exact_match": em, "val_loss": loss, "wall_time_s": 1.0,
            "parameters": 10, "curve": [{"epoch": e, "val_intent_acc": intent} for e in range(1, epochs + 1)],
            "items": {"intent": "1101", "exact_match": "1000"}}


class FakeResources(Resources):
    """Resources whose models are not trained: ``scores[(task, projection, seed_offset, point)]`` is the summary."""

    def __init__(self, profile, scores):
        self.profile, self.scores, self.calls = profile, scores, []

    def trained(self, task_name, projection="minhash", encoder="mixer", seed_offset=0, point=None, comparison=False):
        self.calls.append((task_name, projection, encoder, seed_offset, point))
        key = (task_name, projection, seed_offset, point)
        return None, self.scores.get(key, _summary())


def test_chosen_point_is_the_best_on_validation_ties_to_the_lower_loss():
    res = FakeResources(PROFILE, {("atis", "minhash", 0, P0): _summary(96.0, loss=0.2),
                                  ("atis", "minhash", 0, P1): _summary(97.0, loss=0.3),
                                  ("atis", "minhash", 0, P2): _summary(97.0, loss=0.25)})
    assert res.chosen_point("atis") == P2                     # 97.0 twice: the lower validation loss
    res.scores[("atis", "minhash", 0, P2)] = _summary(97.0, loss=0.35)
    assert res.chosen_point("atis") == P1
    res.scores[("atis", "minhash", 0, P0)] = _summary(97.5, loss=0.9)
    assert res.chosen_point("atis") == P0                     # the score first, whatever the loss
    # MTOP's joint models are chosen on exact match alone; a tie goes to the earlier point
    joint = FakeResources(PROFILE, {("mtop-en", "minhash", 0, P0): _summary(10.0, em=40.0, loss=0.1),
                                    ("mtop-en", "minhash", 0, P1): _summary(99.0, em=41.0, loss=0.9),
                                    ("mtop-en", "minhash", 0, P2): _summary(99.0, em=41.0, loss=0.1)})
    assert joint.chosen_point("mtop-en") == P1
    # a row that is not headline is never tuned: the profile's values, nothing trained to choose
    plain = FakeResources(PROFILE, {})
    assert plain.chosen_point("atis", "binary") == P0 and plain.calls == []


def test_row_runs_tune_a_headline_row_then_train_the_other_seeds_at_the_chosen_point():
    res = FakeResources(PROFILE, {("atis", "minhash", 0, P1): _summary(97.0, best=2)})
    rows = [r for r, _ in res.row_runs("atis", "minhash", "mixer")]
    assert [(r["learning_rate"], r["seed"], r["chosen"]) for r in rows] == [
        (P0[0], 0, False), (P1[0], 0, True), (P2[0], 0, False), (P1[0], 1, True), (P1[0], 2, True)]
    assert all(r["headline"] and r["max_epochs"] == PROFILE.max_epochs for r in rows)
    assert rows[1]["capped"] and not rows[0]["capped"]        # best at epoch 2 of a cap of 2
    assert all("curve" not in r and "items" not in r for r in rows)
    once = [r for r, _ in FakeResources(PROFILE, {}).row_runs("atis", "binary", "mixer")]
    assert [(r["learning_rate"], r["seed"], r["chosen"], r["headline"]) for r in once] == [(P0[0], 0, True, False)]


def test_run_row_marks_a_run_best_at_its_cap():
    row = run_row("atis", "minhash", "mixer", P0, 7, _summary(best=20, epochs=20), 20, True, False)
    assert row["capped"] and (row["seed"], row["max_epochs"], row["learning_rate"]) == (7, 20, P0[0])
    assert not run_row("atis", "minhash", "mixer", P0, 7, _summary(best=19, epochs=20), 20, True, False)["capped"]


def test_parts_and_their_merge_keep_the_profiles_order():
    p = PROFILES.get("smoke", comparison_tasks=("mtop-en", "atis"), projections=("minhash", "binary"),
                     encoders=("mixer", "projection-only"))
    assert comparisons.part_name("projections", "mtop-en") == "projections_mtop_en"
    assert comparisons.part_pairs(p, "mixer") == [("minhash", "mixer")]
    assert comparisons.part_pairs(p, "projections") == [("binary", "mixer")]
    assert comparisons.part_pairs(p, "architectures") == [("minhash", "projection-only")]
    # MTOP with comparison_mtop_rows="headline": the headline rows only; ATIS keeps every row
    cpu = PROFILES.get("cpu", comparison_mtop_rows="headline", headline_projections=("minhash", "simhash"),
                       headline_encoders=("mixer", "transformer"))
    assert comparisons.part_pairs(cpu, "projections", "mtop-en") == [("simhash", "mixer")]
    assert comparisons.part_pairs(cpu, "architectures", "mtop-en") == [("minhash", "transformer")]
    assert comparisons.part_pairs(cpu, "mixer", "mtop-en") == [("minhash", "mixer")]
    assert len(comparisons.part_pairs(cpu, "projections", "atis")) == 3
    every = PROFILES.get("cpu", comparison_mtop_rows="all")
    assert len(comparisons.part_pairs(every, "architectures", "mtop-en")) == 4
    with pytest.raises(ValueError, match="comparison_mtop_rows must be 'all' or 'headline'"):
        PROFILES.get("cpu", comparison_mtop_rows="some")
    with pytest.raises(ValueError, match="unknown part kind"):
        comparisons.part_pairs(cpu, "mixers")
    assert not comparisons.part_enabled(p, "mixer", "snips")
    assert not comparisons.part_enabled(PROFILES.get("smoke", projections=("minhash",)), "projections", "atis")
    with pytest.raises(ValueError, match="does not compare on snips"):
        comparisons.run_part(FakeResources(p, {}), "mixer", "snips")
    with pytest.raises(ValueError, match="unknown part kind"):
        comparisons.part_name("encoders", "atis")

    stored = {}
    for task in ("atis", "mtop-en"):                          # parts written in another order than the profile's
        for kind in ("projections", "mixer", "architectures"):
            stored |= comparisons.run_part(FakeResources(p, {}), kind, task)

    @dataclass
    class Evidence:
        def has(self, name):
            return name in stored

        def table(self, name):
            return stored[name]

        def json(self, name):
            return stored[name]

    merged = comparisons.merge_parts(Evidence(), p, "projections")
    t1 = merged["table1"]
    # the MinHash Mixer: 2 tuning points (seed 0), then seed 1 at the chosen point; Binary once
    assert list(zip(t1["task"], t1["projection"], t1["seed"])) == [
        ("mtop-en", "minhash", 0), ("mtop-en", "minhash", 0), ("mtop-en", "minhash", 1), ("mtop-en", "binary", 0),
        ("atis", "minhash", 0), ("atis", "minhash", 0), ("atis", "minhash", 1), ("atis", "binary", 0)]
    assert set(t1["encoder"]) == {"mixer"}
    assert [(r["task"], r["projection"], r["seed"]) for r in merged["table1_items"]["runs"]] == [
        ("mtop-en", "minhash", 0), ("mtop-en", "minhash", 1), ("mtop-en", "binary", 0), ("atis", "minhash", 0),
        ("atis", "minhash", 1), ("atis", "binary", 0)]        # chosen runs only
    t2 = comparisons.merge_parts(Evidence(), p, "architectures")["table2"]
    assert list(t2["encoder"]) == ["mixer"] * 3 + ["projection-only"] + ["mixer"] * 3 + ["projection-only"]
    assert set(t2["projection"]) == {"minhash"}
    del stored["architectures_atis_runs"]
    with pytest.raises(RuntimeError, match="needs the results of architectures_atis: run them first"):
        comparisons.merge_parts(Evidence(), p, "architectures")


# ----------------------------------------------------------------------------------- the paired bootstrap
@dataclass
class Record:
    runs: list

    def json(self, name):
        return {"runs": self.runs}


def _run(projection, seed, items):
    return {"task": "atis", "projection": projection, "encoder": "mixer", "seed": seed, "items": {"intent": items}}


def test_gap_is_a_paired_bootstrap_over_sentences_and_seeds():
    # 20 sentences; A right on 16 (both seeds), B right on the first 10: A - B = 30 points
    a, b = "1" * 16 + "0" * 4, "1" * 10 + "0" * 10
    ev = Record([_run("minhash", 0, a), _run("minhash", 1, a), _run("binary", 0, b)])
    iv = cc.gap(ev, "table1", "projection", "minhash", "binary", "val_intent_acc", "atis")
    assert iv.estimate == pytest.approx(30.0) and iv.n == 20
    assert 0.0 < iv.low < 30.0 < iv.high <= 60.0              # never below 0: A is never wrong where B is right
    assert iv.method == ("paired bootstrap over 20 ATIS validation sentences (2,000 resamples; each model's seeds "
                         "resampled too (MinHash (Ours): 2 seeds, Binary: 1 seed))")
    again = cc.gap(ev, "table1", "projection", "minhash", "binary", "val_intent_acc", "atis")
    assert (again.low, again.high) == (iv.low, iv.high)       # seeded: the same interval every time
    # identical records: no gap, no spread
    same = cc.gap(Record([_run("minhash", 0, a), _run("binary", 0, a)]), "table1", "projection", "minhash",
                  "binary", "val_intent_acc", "atis")
    assert (same.estimate, same.low, same.high) == (0.0, 0.0, 0.0)
    # seeds that disagree widen the interval over the same sentences
    split = Record([_run("minhash", 0, "1" * 10), _run("minhash", 1, "0" * 10), _run("binary", 0, "1" * 5 + "0" * 5)])
    wide = cc.gap(split, "table1", "projection", "minhash", "binary", "val_intent_acc", "atis")
    assert wide.estimate == pytest.approx(0.0) and wide.low <= -30.0 and wide.high >= 30.0
    with pytest.raises(ValueError, match="different validation sentences"):
        cc.gap(Record([_run("minhash", 0, a), _run("binary", 0, b[:9])]), "table1", "projection", "minhash",
               "binary", "val_intent_acc", "atis")
    with pytest.raises(NotTestable, match="no per-sentence validation record of TSP"):
        cc.gap(ev, "table1", "projection", "minhash", "tsp", "val_intent_acc", "atis")


def test_convergence_counts_the_runs_best_at_their_cap():
    rows = pd.DataFrame({"best_epoch": [20, 12, 20], "max_epochs": 20})
    assert cc.convergence(rows) == "2 of 3 runs best at their epoch cap (maybe still improving)"
    assert cc.convergence(rows.iloc[[0, 2]]) == ("both runs best at their epoch cap (maybe still improving): not "
                                                 "converged")
    assert cc.convergence(rows.iloc[[1]]) == "none of the 1 runs was best at its epoch cap"
    # a table without the cap column counts against the epochs run
    assert cc.convergence(pd.DataFrame({"best_epoch": [6], "epochs": [6]})) == (
        "all 1 runs best at their epoch cap (maybe still improving): not converged")
