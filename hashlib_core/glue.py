"""GLUE metrics as HashFormers reports them (§4.3) and as its released code computes them.

§4.3: "matched accuracy for MNLI, Matthews correlation for CoLA, Spearman correlation for STS, F1 score for QQP and
accuracy for all other tasks" -- the same choice as the released ``src/tr_glue.py`` (``report_metrics_dict``; notes
A1). :func:`glue_metric` returns that number under ``"score"`` together with the customary companions (accuracy
and F1 for MRPC/QQP, Pearson and Spearman for STS-B), all as fractions (the paper prints them x 100).

Note that MRPC's headline number is accuracy in HashFormers (and F1 in many other papers); both are returned.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import accuracy_score, f1_score, matthews_corrcoef

__all__ = ["GLUE_TASKS", "PRIMARY_METRIC", "normalize_task", "glue_metric"]

#: Canonical task names and the metric HashFormers reports for each (§4.3).
PRIMARY_METRIC: dict[str, str] = {
    "cola": "mcc",
    "sst2": "accuracy",
    "mrpc": "accuracy",
    "qqp": "f1",
    "stsb": "spearman",
    "mnli": "accuracy",
    "mnli_mm": "accuracy",
    "qnli": "accuracy",
    "rte": "accuracy",
    "wnli": "accuracy",
}
GLUE_TASKS = tuple(PRIMARY_METRIC)

_ALIASES = {
    "cola": "cola", "sst2": "sst2", "sst": "sst2", "mrpc": "mrpc", "qqp": "qqp", "stsb": "stsb", "sts": "stsb",
    "mnli": "mnli", "mnlim": "mnli", "mnlimatched": "mnli", "mnlimm": "mnli_mm", "mnlimismatched": "mnli_mm",
    "qnli": "qnli", "rte": "rte", "wnli": "wnli",
}


def normalize_task(task: str) -> str:
    """``"SST-2"``, ``"sst_2"``, ``"STS-B"``, ``"MNLI-mm"`` ... -> a key of :data:`PRIMARY_METRIC`."""
    if not isinstance(task, str):
        raise TypeError(f"task must be a str such as 'cola' or 'STS-B', got {type(task).__name__}")
    key = _ALIASES.get(task.lower().replace("-", "").replace("_", "").replace(" ", ""))
    if key is None:
        raise ValueError(f"unknown GLUE task {task!r}; known: {', '.join(GLUE_TASKS)}")
    return key


def _as_array(values: Any, name: str) -> np.ndarray:
    if hasattr(values, "detach"):
        values = values.detach().cpu().numpy()
    array = np.asarray(values)
    if array.size == 0:
        raise ValueError(f"{name} is empty")
    if not np.issubdtype(array.dtype, np.number) and array.dtype != bool:
        raise TypeError(f"{name} must be numeric, got dtype {array.dtype}")
    return array


def glue_metric(task: str, preds: Any, labels: Any) -> dict[str, float]:
    """Score predictions on one GLUE task.

    Parameters
    ----------
    task:
        Task name (see :func:`normalize_task`).
    preds:
        Class predictions ``(n,)`` or logits ``(n, C)`` (arg-maxed) for classification tasks; scores ``(n,)`` or
        ``(n, 1)`` for STS-B. Lists, numpy arrays and torch tensors are accepted.
    labels:
        Gold labels ``(n,)`` (floats for STS-B).

    Returns ``{"score": <HashFormers' metric>, ...}``: ``mcc`` (CoLA); ``accuracy`` and ``f1`` of the positive class
    1 (MRPC, QQP); ``pearson`` and ``spearman`` (STS-B; NaN when either side is constant); ``accuracy`` otherwise.
    """
    key = normalize_task(task)
    preds = _as_array(preds, "preds")
    labels = _as_array(labels, "labels").reshape(-1)
    if key == "stsb":
        if preds.ndim == 2 and preds.shape[1] == 1:
            preds = preds[:, 0]
        if preds.ndim != 1:
            raise ValueError(f"STS-B preds must be scores of shape (n,) or (n, 1), got {preds.shape}")
    elif preds.ndim == 2:
        preds = preds.argmax(axis=1)
    elif preds.ndim != 1:
        raise ValueError(f"preds must be labels (n,) or logits (n, C), got shape {preds.shape}")
    if preds.shape[0] != labels.shape[0]:
        raise ValueError(f"preds and labels differ in length: {preds.shape[0]} vs {labels.shape[0]}")

    if key == "stsb":
        x, y = preds.astype(float), labels.astype(float)
        constant = np.ptp(x) == 0 or np.ptp(y) == 0
        out = {
            "pearson": float("nan") if constant else float(pearsonr(x, y).statistic),
            "spearman": float("nan") if constant else float(spearmanr(x, y).statistic),
        }
    elif key == "cola":
        out = {"mcc": float(matthews_corrcoef(labels, preds))}
    elif key in ("mrpc", "qqp"):
        out = {"accuracy": float(accuracy_score(labels, preds)), "f1": float(f1_score(labels, preds, pos_label=1))}
    else:
        out = {"accuracy": float(accuracy_score(labels, preds))}
    return {"score": out[PRIMARY_METRIC[key]], **out}
