"""GLUE metrics (HashFormers §4.3) against sklearn / scipy."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import accuracy_score, f1_score, matthews_corrcoef

from hashlib_core.glue import glue_metric, normalize_task

RNG = np.random.default_rng(0)
LABELS = RNG.integers(0, 2, 200)
PREDS = np.where(RNG.random(200) < 0.8, LABELS, 1 - LABELS)


def test_cola_is_mcc():
    out = glue_metric("CoLA", PREDS, LABELS)
    assert out == {"score": matthews_corrcoef(LABELS, PREDS), "mcc": matthews_corrcoef(LABELS, PREDS)}


@pytest.mark.parametrize("task,primary", [("qqp", "f1"), ("MRPC", "accuracy")])
def test_paraphrase_tasks(task, primary):
    out = glue_metric(task, PREDS, LABELS)
    assert out["f1"] == f1_score(LABELS, PREDS) and out["accuracy"] == accuracy_score(LABELS, PREDS)
    assert out["score"] == out[primary]  # §4.3: F1 for QQP, accuracy for all other tasks (MRPC included)


def test_stsb_spearman_and_pearson():
    gold = RNG.uniform(0, 5, 100)
    scores = gold + RNG.normal(0, 1, 100)
    out = glue_metric("STS-B", torch.tensor(scores)[:, None], gold)
    assert out["spearman"] == pytest.approx(spearmanr(scores, gold).statistic)
    assert out["pearson"] == pytest.approx(pearsonr(scores, gold).statistic)
    assert out["score"] == out["spearman"]
    assert math.isnan(glue_metric("stsb", np.ones(5), np.arange(5))["spearman"])


@pytest.mark.parametrize("task", ["SST-2", "mnli", "MNLI-mm", "qnli", "rte", "wnli"])
def test_accuracy_tasks_take_logits(task):
    logits = RNG.normal(size=(50, 3))
    labels = RNG.integers(0, 3, 50)
    out = glue_metric(task, logits, labels)
    accuracy = accuracy_score(labels, logits.argmax(1))
    assert out == {"score": accuracy, "accuracy": accuracy}


def test_perfect_predictions():
    assert glue_metric("cola", LABELS, LABELS)["score"] == 1.0
    assert glue_metric("qqp", LABELS, LABELS)["score"] == 1.0


def test_task_names_and_errors():
    assert normalize_task("sst_2") == "sst2" and normalize_task("MNLI-mismatched") == "mnli_mm"
    with pytest.raises(ValueError, match="unknown GLUE task"):
        glue_metric("squad", PREDS, LABELS)
    with pytest.raises(ValueError, match="differ in length"):
        glue_metric("rte", PREDS[:10], LABELS)
    with pytest.raises(ValueError, match="empty"):
        glue_metric("rte", [], [])
    with pytest.raises(ValueError, match="STS-B"):
        glue_metric("stsb", np.zeros((4, 2)), np.zeros(4))
    with pytest.raises(TypeError):
        glue_metric("rte", ["a", "b"], [0, 1])
