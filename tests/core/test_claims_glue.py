"""Paired comparisons of GLUE models from their dev predictions (:mod:`hashlib_core.claims.glue`)."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import matthews_corrcoef

from hashlib_core.claims import NotTestable
from hashlib_core.claims.glue import GluePredictions, compare, mean_difference, task_metric


def test_task_metrics_agree_with_the_reference_implementations():
    rng = np.random.default_rng(0)
    gold, pred = rng.integers(0, 2, 300), rng.integers(0, 2, 300)
    assert task_metric("cola", pred, gold) == pytest.approx(100 * matthews_corrcoef(gold, pred))
    assert task_metric("cola", np.zeros(10, int), gold[:10]) == 0.0            # a constant prediction
    assert task_metric("sst2", pred, gold) == pytest.approx(100 * np.mean(pred == gold))
    score, truth = rng.random(200), rng.random(200)
    assert task_metric("stsb", score, truth) == pytest.approx(100 * stats.spearmanr(score, truth).statistic)
    assert task_metric("stsb", np.ones(5), truth[:5]) == 0.0


def record(task, gold, runs):
    return {"labels": {task: list(gold)}, "runs": [{"name": n, "task": task, "seed": s, "predictions": list(p)}
                                                   for (n, s), p in runs.items()]}


def test_a_model_right_where_the_other_is_wrong_differs_by_a_hundred_points_with_no_spread():
    gold = np.array([0, 1] * 50)
    preds = GluePredictions.from_records(record("sst2", gold, {("A", 0): gold, ("A", 1): gold,
                                                               ("B", 0): 1 - gold, ("B", 1): 1 - gold}))
    iv = compare(preds, {"a": ["A"], "b": ["B"]}, ["sst2"], mean_difference, resamples=200)
    assert (iv.estimate, iv.low, iv.high) == (100.0, 100.0, 100.0)
    assert iv.method == ("paired bootstrap over 100 dev items (200 resamples; each model's fine-tuning runs "
                         "(2 seeds per task) resampled too)")


def test_the_interval_pairs_items_and_covers_the_seeds():
    """Paired: two models wrong on mostly the same items differ by exactly those few items, a narrow interval that
    an unpaired resampling would widen. Seeds: a model whose two runs disagree widens the interval when its runs are
    resampled; with identical runs the interval is what the items alone give."""
    rng = np.random.default_rng(1)
    gold = rng.integers(0, 2, 400)
    a = gold.copy()
    a[:100] = 1 - gold[:100]                                     # A wrong on items 0-99
    b = a.copy()
    b[100:108] = 1 - gold[100:108]                               # B wrong on the same and 8 more
    same = GluePredictions.from_records(record("sst2", gold, {("A", 0): a, ("A", 1): a, ("B", 0): b, ("B", 1): b}))
    diff = mean_difference
    paired = compare(same, {"a": ["A"], "b": ["B"]}, ["sst2"], diff, resamples=400)
    assert paired.estimate == pytest.approx(2.0) and paired.low > 0.5 and paired.high - paired.low < 3.5
    noisy = a.copy()
    noisy[200:300] = 1 - gold[200:300]                          # A's second run is wrong on 100 more items
    spread = GluePredictions.from_records(record("sst2", gold, {("A", 0): a, ("A", 1): noisy, ("B", 0): b,
                                                                ("B", 1): b}))
    wide = compare(spread, {"a": ["A"], "b": ["B"]}, ["sst2"], diff, resamples=400)
    assert wide.estimate == pytest.approx(2.0 - 12.5)
    assert (wide.high - wide.low) > 3 * (paired.high - paired.low)         # the runs' disagreement is covered


def test_groups_average_their_models_and_seeds_and_tasks_combine():
    gold = np.array([0, 1, 1, 0, 1, 0, 0, 1])
    half = np.array([0, 1, 1, 0, 0, 1, 1, 0])                   # right on the first half only: accuracy 50
    rec = record("rte", gold, {("A", 0): gold, ("A", 1): half, ("B", 0): half})
    preds = GluePredictions.from_records(rec)
    iv = compare(preds, {"a": ["A"], "b": ["B"]}, ["rte"], lambda s: s["a"][0] - s["b"][0], resamples=100)
    assert preds.score(["A"], ["rte"]) == pytest.approx(75.0)
    assert iv.estimate == pytest.approx(75.0 - 50.0)              # A: mean of 100 and 50 over its seeds
    cola = record("cola", gold, {("A", 0): gold, ("B", 0): half})
    both = GluePredictions.from_records(rec, cola)
    two = compare(both, {"a": ["A"], "b": ["B"]}, ["rte", "cola"], mean_difference, resamples=100)
    assert two.estimate == pytest.approx(((75 - 50) + (100 - task_metric("cola", half, gold))) / 2)
    assert "8 + 8 dev items of rte, cola" in two.method


def test_missing_runs_are_not_testable_and_records_must_agree():
    gold = np.array([0, 1, 0, 1])
    preds = GluePredictions.from_records(record("sst2", gold, {("A", 0): gold}))
    with pytest.raises(NotTestable, match="no dev predictions for B on sst2"):
        compare(preds, {"a": ["A"], "b": ["B"]}, ["sst2"], mean_difference)
    with pytest.raises(ValueError, match="disagree on sst2's dev labels"):
        GluePredictions.from_records(record("sst2", gold, {}), record("sst2", 1 - gold, {}))
    with pytest.raises(ValueError, match="3 predictions for 4 items"):
        GluePredictions.from_records(record("sst2", gold, {("A", 0): gold[:3]}))


def test_a_statistic_written_with_python_scalars_is_refused_with_the_fix():
    gold = np.array([0, 1] * 20)
    preds = GluePredictions.from_records(record("sst2", gold, {("A", 0): gold, ("B", 0): 1 - gold}))
    with pytest.raises(ValueError, match="np.mean"):
        compare(preds, {"a": ["A"], "b": ["B"]}, ["sst2"], lambda s: float(np.mean(s["a"]) - np.mean(s["b"])),
                resamples=100)


def test_every_claim_reads_the_same_draws_of_a_task_whatever_else_it_reads():
    """Each task's dev items are drawn from a generator of their own: a comparison on SST-2 alone and the SST-2 part
    of a comparison over two tasks see the same resamples (so a run's metric on them is computed once)."""
    from hashlib_core.claims import glue

    rng = np.random.default_rng(3)
    gold_s, gold_r = rng.integers(0, 2, 60), rng.integers(0, 2, 40)
    runs = {("A", 0): rng.integers(0, 2, 60), ("B", 0): rng.integers(0, 2, 60)}
    rec = record("sst2", gold_s, runs)
    other = record("rte", gold_r, {("A", 0): rng.integers(0, 2, 40), ("B", 0): rng.integers(0, 2, 40)})
    preds = GluePredictions.from_records(rec, other)
    key1, c1 = glue._task_counts("sst2", gold_s, 200, 0)
    compare(preds, {"a": ["A"], "b": ["B"]}, ["rte", "sst2"], mean_difference, resamples=200)
    key2, c2 = glue._task_counts("sst2", gold_s, 200, 0)
    assert key1 == key2 and c1 is c2
    # and the statistic over one task equals the per-run metrics on those draws, averaged
    iv = compare(preds, {"a": ["A"], "b": ["B"]}, ["sst2"], mean_difference, resamples=200)
    a = 100 * (c1 @ (runs[("A", 0)] == gold_s)) / 60
    b = 100 * (c1 @ (runs[("B", 0)] == gold_s)) / 60
    assert (iv.low, iv.high) == pytest.approx(tuple(np.percentile(a - b, [2.5, 97.5])))


def test_the_floor_rule_on_fixed_inputs(monkeypatch):
    """A model learns a task when its mean held-out score beats the floor by more than one-sided 95% of the standard
    error of a model that learned nothing there (and its spread over seeds); a task learns when some model does."""
    from types import SimpleNamespace

    import pandas as pd

    from hashlib_core.claims import glue

    from scipy import stats

    z = stats.norm.ppf(0.95)                                    # one-sided 95%
    assert glue.FLOOR_Z == pytest.approx(z)
    assert glue.floor_margin("sst2", 50.0, 500) == pytest.approx(z * 100 * np.sqrt(0.25 / 500))
    assert glue.floor_margin("cola", 0.0, 501) == pytest.approx(z * 100 / np.sqrt(500))
    assert glue.floor_margin("sst2", 100.0, 500) == glue.MIN_FLOOR_MARGIN
    monkeypatch.setattr(glue, "held_out_floor", lambda task, *a: {"sst2": 55.0, "cola": 0.0}[task])
    profile = SimpleNamespace(ft_train_examples=100, ft_validation_examples=500, seed=0)
    margin = glue.floor_margin("sst2", 55.0, 500)                 # 3.66 points
    runs = pd.DataFrame([
        *({"name": "A", "task": "sst2", "seed": s, "validation_score": 55.0 + margin + 0.5, "chosen": True,
           "validation_examples": 500} for s in range(3)),
        *({"name": "B", "task": "sst2", "seed": s, "validation_score": 55.0 + margin - 0.5, "chosen": True,
           "validation_examples": 500} for s in range(3)),
        # C's mean clears the margin but its seeds spread more than that
        *({"name": "C", "task": "sst2", "seed": s, "validation_score": v, "chosen": True, "validation_examples": 500}
          for s, v in enumerate((55.0, 55.0, 55.0 + 4 * margin))),
        *({"name": n, "task": "cola", "seed": 0, "validation_score": 5.0, "chosen": True, "validation_examples": 500}
          for n in "ABC"),
        {"name": "A", "task": "cola", "seed": 1, "validation_score": 99.0, "chosen": False, "validation_examples": 500},
    ])
    assert glue.at_floor(runs, "sst2", profile) == {"A": False, "B": True, "C": True}
    assert glue.at_floor(runs, "cola", profile) == {"A": True, "B": True, "C": True}   # unchosen runs do not count
    assert glue.learned_tasks(runs, ["sst2", "cola"], profile) == (["sst2"], ["cola"])
    assert glue.capped_runs(runs.assign(best_epoch=[5, 4, 5, 5, 5, 5, 1, 2, 3, 5, 5, 5, 5], max_epochs=5.0),
                            ["A", "B"], ["sst2"]) == (5, 6)
    with pytest.raises(NotTestable, match="no held-out scores"):
        glue.at_floor(runs.drop(columns=["validation_score"]), "sst2", profile)


def test_the_vectorised_comparison_equals_a_loop_over_the_same_resamples():
    """Every resample's statistic of :func:`compare` (item counts, metrics on counts) equals the benchmark's loop
    that draws each resample's items and runs as indices and recomputes the metrics on them (accuracy, MCC and
    Spearman with ties, several seeds)."""
    from hashlib_core.benchmarks.claims import _loop
    from hashlib_core.claims import glue

    rng = np.random.default_rng(8)
    recs = []
    for task, n in (("sst2", 40), ("cola", 30), ("stsb", 25)):
        gold = rng.integers(0, 5, n).astype(float) if task == "stsb" else rng.integers(0, 2, n)
        runs = {(m, s): (rng.integers(0, 4, n).astype(float) if task == "stsb" else rng.integers(0, 2, n))
                for m in ("A", "B") for s in range(3)}
        recs.append(record(task, gold, runs))
    preds = GluePredictions.from_records(*recs)
    tasks = ["sst2", "cola", "stsb"]
    kept = {}

    def keep(scores):
        values = mean_difference(scores)
        if values.size > 1:
            kept["v"] = values
        return values

    glue._COUNTS.clear(), glue._RANKS.clear(), glue._METRICS.clear()
    compare(preds, {"a": ["A"], "b": ["B"]}, tasks, keep, resamples=100)
    looped = _loop(preds, {"a": ["A"], "b": ["B"]}, tasks, 100, 0)
    assert kept["v"] == pytest.approx(looped, abs=1e-9)
