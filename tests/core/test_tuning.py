"""The shared fine-tuning protocol: the sweep's choice, the seeds at the chosen rate, one task's rate reused."""
from __future__ import annotations

import numpy as np
import pytest

from hashlib_core.tuning import predictions_record, tuned_task, tuned_tasks

# held-out score of each (task, learning rate); dev predictions name the run that made them
SCORES = {("sst2", 1e-4): 0.70, ("sst2", 3e-4): 0.80, ("sst2", 1e-3): 0.80,
          ("mrpc", 1e-4): 0.60, ("mrpc", 3e-4): float("nan"), ("mrpc", 1e-3): 0.65}


def fake_run(calls):
    def run(task, seed, lr):
        calls.append((task, seed, lr))
        return {"task": task, "seed": seed, "validation_score": SCORES[(task, lr)]}, np.array([seed, round(lr * 1e4)])
    return run


def test_the_sweep_chooses_the_best_held_out_score_and_the_smaller_rate_on_a_tie():
    calls = []
    rows, preds = tuned_task(fake_run(calls), "sst2", seeds=(0, 1, 2), rates=(1e-4, 3e-4, 1e-3))
    # the sweep with the first seed, then the other seeds at the chosen rate (3e-4 ties 1e-3 and is smaller)
    assert calls == [("sst2", 0, 1e-4), ("sst2", 0, 3e-4), ("sst2", 0, 1e-3), ("sst2", 1, 3e-4), ("sst2", 2, 3e-4)]
    assert [r["chosen"] for r in rows] == [False, True, False, True, True]
    assert [r["learning_rate"] for r in rows] == [1e-4, 3e-4, 1e-3, 3e-4, 3e-4]
    assert {r["swept_on"] for r in rows} == {"sst2"}
    assert sorted(preds) == [0, 1, 2] and preds[0].tolist() == [0, 3] and preds[2].tolist() == [2, 3]


def test_a_run_without_a_finite_score_is_never_chosen_over_one_with():
    rows, _ = tuned_task(fake_run([]), "mrpc", seeds=(0,), rates=(3e-4, 1e-4))
    assert [r["chosen"] for r in rows] == [False, True]


def test_one_tasks_choice_is_reused_on_the_others():
    calls = []
    rows, preds = tuned_tasks(fake_run(calls), ["mrpc", "sst2"], seeds=(0, 1), rates=(1e-4, 3e-4, 1e-3),
                              sweep_task="sst2")
    # sst2 is swept first; mrpc then runs every seed at sst2's choice only
    assert calls[3:] == [("sst2", 1, 3e-4), ("mrpc", 0, 3e-4), ("mrpc", 1, 3e-4)]
    assert [(r["task"], r["swept_on"]) for r in rows if r["task"] == "mrpc"] == [("mrpc", "sst2")] * 2
    assert sorted(preds) == [("mrpc", 0), ("mrpc", 1), ("sst2", 0), ("sst2", 1)]
    # without a sweep task every task is swept on its own
    calls.clear()
    rows, _ = tuned_tasks(fake_run(calls), ["mrpc", "sst2"], seeds=(0,), rates=(1e-4, 1e-3))
    assert len(calls) == 4 and [r["swept_on"] for r in rows] == ["mrpc", "mrpc", "sst2", "sst2"]


def test_bad_sweeps_are_refused_by_name():
    with pytest.raises(ValueError, match="at least one seed"):
        tuned_task(fake_run([]), "sst2", seeds=(), rates=(1e-4,))
    with pytest.raises(ValueError, match="each > 0"):
        tuned_task(fake_run([]), "sst2", seeds=(0,), rates=(0.0,))


def test_predictions_record_checks_lengths_and_tasks():
    record = predictions_record({("A", "sst2", 0): np.array([1, 0])}, {"sst2": np.array([1, 1])})
    assert record == {"labels": {"sst2": [1, 1]}, "runs": [{"name": "A", "task": "sst2", "seed": 0,
                                                            "predictions": [1, 0]}]}
    with pytest.raises(ValueError, match="2 predictions for 3 dev items"):
        predictions_record({("A", "sst2", 0): np.array([1, 0])}, {"sst2": [1, 1, 0]})
    with pytest.raises(ValueError, match="no dev labels for task 'rte'"):
        predictions_record({("A", "rte", 0): np.array([1])}, {"sst2": [1]})
