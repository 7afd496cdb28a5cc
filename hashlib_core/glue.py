"""GLUE fine-tuning shared by the chapters: task splits, metrics, a majority-class reference, and one fine-tuning run.

Any model that takes a batch dict from an ``encode(texts)`` function and returns ``logits`` (and a ``loss`` when
given ``labels``) can be fine-tuned and scored with :func:`finetune`; HashFormers and the dynamic-embedding chapter
share it. Texts come from the staged GLUE data (:func:`hashlib_core.data.load_glue`) through :func:`glue_split`;
scores are on the dev (validation) split, as the released code of HashFormers evaluates.

Metrics as HashFormers reports them (§4.3) and as its released code computes them.

§4.3: "matched accuracy for MNLI, Matthews correlation for CoLA, Spearman correlation for STS, F1 score for QQP and
accuracy for all other tasks" -- the same choice as the released ``src/tr_glue.py`` (``report_metrics_dict``; notes
A1). :func:`glue_metric` returns that number under ``"score"`` together with the customary companions (accuracy
and F1 for MRPC/QQP, Pearson and Spearman for STS-B), all as fractions (the paper prints them x 100).

Note that MRPC's headline number is accuracy in HashFormers (and F1 in many other papers); both are returned.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import accuracy_score, f1_score, matthews_corrcoef

__all__ = ["GLUE_TASKS", "PRIMARY_METRIC", "GLUE_TEXT_COLUMNS", "normalize_task", "glue_metric", "num_labels",
           "glue_split", "GlueSplits", "check_finetuning_settings", "per_task_scores", "majority_score", "TextDataset",
           "GlueCollator", "TokenizerEncoder", "predict", "predictions", "held_out", "finetune"]

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


#: Text columns of each staged task (``hashlib_core.data.load_glue`` layout).
GLUE_TEXT_COLUMNS: dict[str, tuple[str, ...]] = {
    "cola": ("sentence",),
    "sst2": ("sentence",),
    "mrpc": ("sentence1", "sentence2"),
    "stsb": ("sentence1", "sentence2"),
    "rte": ("sentence1", "sentence2"),
    "qnli": ("question", "sentence"),
}


def num_labels(task: str) -> int:
    """Output units of a task's head: 1 (regression) for STS-B, 3 for MNLI, else 2."""
    key = normalize_task(task)
    return 1 if key == "stsb" else (3 if key.startswith("mnli") else 2)


def glue_split(task: str, split: str, limit: int = 0, seed: int = 0) -> tuple[list[Any], np.ndarray]:
    """Texts (a str, or a pair of str) and labels of a staged GLUE split, in a seeded random order.

    ``limit`` keeps the first ``limit`` examples of that order (a seeded random subset; 0 = all of them).
    """
    from hashlib_core.data import load_glue

    key = normalize_task(task)
    if key not in GLUE_TEXT_COLUMNS:
        raise ValueError(f"task {task!r} is not staged; choose from {sorted(GLUE_TEXT_COLUMNS)}")
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
        raise ValueError(f"limit must be an int >= 0 (0 = all examples), got {limit!r}")
    data = load_glue(key)[split]
    order = np.random.default_rng(seed).permutation(len(data))
    if limit:
        order = order[:limit]
    table = data.with_format("arrow")[:]          # the columns at once (a row-by-row select is 100x slower)
    columns = [table.column(c).to_pylist() for c in GLUE_TEXT_COLUMNS[key]]
    texts: list[Any] = ([columns[0][i] for i in order] if len(columns) == 1
                        else [(columns[0][i], columns[1][i]) for i in order])
    labels = np.asarray(table.column("label").to_pylist())      # as Python numbers: float64 for STS-B's scores
    return texts, labels[order]


class GlueSplits:
    """Mixin for a chapter's resources with a ``profile`` (its ``seed``; for :meth:`held_out` also its
    ``ft_train_examples`` and ``ft_validation_examples``): GLUE splits loaded once per run."""

    def glue(self, task: str, split: str, limit: int) -> tuple[list[Any], np.ndarray]:
        """Texts and labels of a GLUE split (a seeded sample of ``limit`` examples; 0 = all), loaded once."""
        key = (task, split, limit)
        cache = self.__dict__.setdefault("_glue", {})
        if key not in cache:
            cache[key] = glue_split(task, split, limit, self.profile.seed)
        return cache[key]

    def held_out(self, task: str) -> tuple[tuple[list[Any], np.ndarray], tuple[list[Any], np.ndarray]]:
        """A task's training split as (training part, held-out part) for fine-tuning (:func:`held_out`: the
        profile's ``ft_validation_examples`` held out, at most ``ft_train_examples`` of the rest), cut once per
        run."""
        cache = self.__dict__.setdefault("_held_out", {})
        if task not in cache:
            p = self.profile
            cache[task] = held_out(task, p.ft_train_examples, p.ft_validation_examples, p.seed)
        return cache[task]


def check_finetuning_settings(tasks: Sequence[str], seeds: Sequence[int]) -> None:
    """A profile's GLUE tasks must be staged and its fine-tuning seeds non-empty, else a clear error."""
    for task in tasks:
        if normalize_task(task) not in GLUE_TEXT_COLUMNS:
            raise ValueError(f"task {task!r} is not staged; choose from {sorted(GLUE_TEXT_COLUMNS)}")
    if not seeds:
        raise ValueError("ft_seeds must list at least one fine-tuning seed")


def per_task_scores(runs: Any, tasks: Sequence[str], columns: dict[str, str] | None = None) -> Any:
    """Fine-tuning runs (``name``, ``task``, ``score``, ``majority_score``; one row per seed) -> one row per model
    (in order of appearance): for each task, the mean score over the seeds, its standard deviation (``ddof=1``;
    NaN with one seed) and the task's majority-class score, as columns ``<c>``, ``<c>_std``, ``<c>_majority`` with
    ``c = columns.get(task, task)``."""
    import pandas as pd

    grouped = runs.groupby(["name", "task"], sort=False)["score"]
    mean, std = grouped.mean().unstack("task"), grouped.std(ddof=1).unstack("task")
    majority = runs.groupby("task")["majority_score"].first()
    table = pd.DataFrame(index=pd.Index(runs["name"].unique(), name="name"))
    for task in tasks:
        column = (columns or {}).get(task, task)
        table[column] = mean[task]
        table[f"{column}_std"] = std[task]
        table[f"{column}_majority"] = majority[task]
    return table


def majority_score(task: str, train_labels: Any, dev_labels: Any) -> float:
    """The task's metric (x 100) for a model that always predicts the training set's most frequent class.

    What a model that learned nothing scores: accuracy of the majority class, MCC 0 for CoLA. STS-B has no
    majority class; a constant prediction has no correlation, so it returns NaN.
    """
    key = normalize_task(task)
    if key == "stsb":
        return math.nan
    train, dev = _as_array(train_labels, "train_labels").astype(int), _as_array(dev_labels, "dev_labels")
    majority = np.bincount(train).argmax()
    return 100.0 * glue_metric(key, np.full(dev.shape[0], majority), dev)["score"]


class TextDataset:
    """``(text, label)`` items for a ``DataLoader`` (texts are a str or a pair of str)."""

    def __init__(self, texts: Sequence[Any], labels: np.ndarray) -> None:
        if len(texts) != len(labels):
            raise ValueError(f"{len(texts)} texts but {len(labels)} labels")
        self.texts, self.labels = list(texts), labels

    def __len__(self) -> int:
        return len(self.texts)

    def __getitem__(self, i: int) -> tuple[Any, Any]:
        return self.texts[i], self.labels[i]


class GlueCollator:
    """``[(text, label), ...]`` -> ``encode(texts)`` plus ``labels`` (float for regression, long otherwise)."""

    def __init__(self, encode: Callable[[list[Any]], dict], regression: bool) -> None:
        self.encode, self.regression = encode, regression

    def __call__(self, items: list[tuple[Any, Any]]) -> dict:
        import torch

        batch = self.encode([t for t, _ in items])
        batch["labels"] = torch.tensor([y for _, y in items], dtype=torch.float32 if self.regression else torch.long)
        return batch


class TokenizerEncoder:
    """Texts (or pairs) -> ``input_ids`` and ``attention_mask`` with a ``transformers`` tokenizer: truncated to
    ``max_length``, padded to the longest in the batch (the ``encode`` of :func:`finetune` for vocabulary models).
    ``token_types``: also ``token_type_ids`` (0 for a pair's first text, 1 for its second: BERT's segments)."""

    def __init__(self, tokenizer: Any, max_length: int, token_types: bool = False) -> None:
        self.tokenizer, self.max_length, self.token_types = tokenizer, max_length, token_types

    def __call__(self, texts: list[Any]) -> dict:
        if not texts:
            raise ValueError("no texts to encode: a batch needs at least one text (or pair)")
        pairs = isinstance(texts[0], tuple)
        first = [t[0] for t in texts] if pairs else list(texts)
        second = [t[1] for t in texts] if pairs else None
        enc = self.tokenizer(first, second, truncation=True, max_length=self.max_length, padding="longest",
                             return_tensors="pt", return_token_type_ids=self.token_types)
        out = {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"]}
        if self.token_types:
            out["token_type_ids"] = enc["token_type_ids"]
        return out


def predict(model: Any, encode: Callable[[list[Any]], dict], texts: Sequence[Any], batch_size: int = 64
            ) -> np.ndarray:
    """The model's ``logits`` for ``texts`` (evaluation mode, no gradients), as a float32 array."""
    import torch

    model.eval()
    device = next(model.parameters()).device
    outputs = []
    with torch.no_grad():
        for start in range(0, len(texts), batch_size):
            batch = {k: v.to(device) for k, v in encode(list(texts[start : start + batch_size])).items()}
            outputs.append(model(**batch).logits.float().cpu())
    model.train()
    return torch.cat(outputs).numpy() if outputs else np.empty((0, 0), dtype=np.float32)


def held_out(task: str, train_limit: int, validation: int, seed: int = 0
             ) -> tuple[tuple[list[Any], np.ndarray], tuple[list[Any], np.ndarray]]:
    """A task's training split cut in two, for fine-tuning that selects on data the reported score never sees
    (GLUE dev is what the papers report, so it is never used to choose): ``validation`` examples held out, and at
    most ``train_limit`` of the rest to train on (0: all of it), both from one seeded order of the training split."""
    if isinstance(train_limit, bool) or not isinstance(train_limit, int) or train_limit < 0:
        raise ValueError(f"train_limit must be an int >= 0 (0: every example not held out), got {train_limit!r}")
    if isinstance(validation, bool) or not isinstance(validation, int) or validation < 1:
        raise ValueError(f"validation must be a positive number of held-out examples, got {validation!r}")
    texts, labels = glue_split(task, "train", 0, seed)
    if validation >= len(texts):
        raise ValueError(f"{task}: cannot hold out {validation} of its {len(texts)} training examples")
    stop = len(texts) if not train_limit else min(len(texts), validation + train_limit)
    return (texts[validation:stop], labels[validation:stop]), (texts[:validation], labels[:validation])


def predictions(task: str, logits: np.ndarray) -> np.ndarray:
    """Per-item predictions from a model's outputs: the class (an int) for classification, the score (a float) for
    STS-B; what a paired bootstrap over the dev items needs."""
    key = normalize_task(task)
    if key == "stsb":
        return np.asarray(logits, dtype=float).reshape(len(logits), -1)[:, 0]
    return np.asarray(logits).argmax(axis=1).astype(int)


def finetune(model: Any, encode: Callable[[list[Any]], dict], task: str, train: tuple[list[Any], np.ndarray],
             dev: tuple[list[Any], np.ndarray], *, epochs: float, batch_size: int, learning_rate: float,
             seed: int, output_dir: str | Path | None = None, mixed_precision: str = "no",
             device: Any = None, progress: bool = False, validation: tuple[list[Any], np.ndarray] | None = None,
             patience: int = 0, return_predictions: bool = False,
             on_reuse: Callable[[float], None] | None = None, score_train: bool = False) -> Any:
    """Fine-tune ``model`` on ``train`` and score it on ``dev`` with the task's metric (x 100).

    The optimisation is HashFormers' Table 5: AdamW (eps 1e-6, no weight decay), cosine schedule with hard
    restarts (5 cycles) and 6% warm-up, ``epochs`` passes over the training examples. Returns the score, the
    majority-class score on the same dev split, and the run's size and wall time.

    With ``validation`` (a held-out part of the training split, :func:`held_out`), the model is scored on it after
    every epoch, the best epoch's weights are kept (the task's metric; ties keep the earlier epoch), and training
    stops once ``patience`` epochs (0: never) bring no improvement, or after ``epochs`` (the cap; the schedule spans
    the cap). The row then also gives the validation score, the best epoch and the epochs run. With
    ``return_predictions`` the result is ``(row, per-item dev predictions)`` (:func:`predictions`).

    A run with ``validation`` keeps no training checkpoints (the best epoch's weights live in memory); with an
    ``output_dir`` its outcome (the row and the predictions) is written there when it ends, and a later call with
    the same ``output_dir`` returns it without training again (``on_reuse(seconds)`` is then told the wall time the
    reused run took, e.g. :meth:`hashlib_core.chapter.RunContext.reuse`).

    ``score_train``: the row also gives the kept model's score on the examples it trained on (``train_score``):
    how far the model fits its training data, beside how far it generalises.
    """
    import copy
    import hashlib
    import json

    import torch

    from hashlib_core._io import atomic_write_json
    from hashlib_core.checkpoints import read_saved_json
    from hashlib_core.training import TrainConfig, train as train_loop

    outcome = Path(output_dir) / "outcome.json" if output_dir is not None and validation is not None else None

    def digest(*parts: Any) -> str:
        return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()

    def data_digest(split: tuple[list[Any], np.ndarray]) -> str:
        return digest(list(map(str, split[0])), np.asarray(split[1]).tolist())

    # the outcome is reused only for the same dev items, training and held-out data and optimisation (the folder's
    # name is the caller's: it need not say all of them)
    dev_items = data_digest(dev)
    dev_digest = digest(dev_items, data_digest(train), data_digest(validation) if validation else None,
                        task, epochs, batch_size, learning_rate, seed, patience, mixed_precision,
                        *(("score_train",) if score_train else ()))
    # outcomes written before the digest covered the optimisation name the dev items only (this same digest of
    # them); their folder (the caller's) names the rest, as every caller in this repository does
    legacy_digest = dev_items
    if outcome is not None and outcome.is_file():
        saved = read_saved_json(outcome, "the outcome of a fine-tuning run")
        if saved.get("dev_digest") in ((dev_digest,) if score_train else (dev_digest, legacy_digest)):
            done = dict(saved["row"])                     # stored as pairs: the columns keep their order
            if on_reuse is not None:
                on_reuse(float(done.get("wall_time_s") or 0.0))
            return (done, np.asarray(saved["predictions"])) if return_predictions else done

    key = normalize_task(task)
    regression = key == "stsb"
    loader = torch.utils.data.DataLoader(TextDataset(*train), batch_size=batch_size, shuffle=True,
                                         collate_fn=GlueCollator(encode, regression))
    per_epoch = len(loader)
    steps = max(1, math.ceil(per_epoch * epochs))
    if patience < 0:
        raise ValueError(f"patience must be >= 0 (0: no early stopping), got {patience}")
    config = TrainConfig(max_steps=steps, learning_rate=learning_rate, weight_decay=0.0, adam_eps=1e-6,
                         scheduler="cosine_with_restarts", scheduler_cycles=5, warmup_steps=int(0.06 * steps),
                         log_every=max(1, steps // 10), mixed_precision=mixed_precision, seed=seed)
    best: dict[str, Any] = {"score": -math.inf, "epoch": 0, "state": None, "history": []}

    def at_epoch_end(step: int, loss: float) -> bool:
        if step % per_epoch and step != steps:
            return False
        epoch = math.ceil(step / per_epoch)
        score = glue_metric(key, predict(model, encode, validation[0]), validation[1])["score"]
        score = -math.inf if math.isnan(score) else score       # a constant STS-B prediction has no correlation
        best["history"].append(score)
        if score > best["score"]:
            best.update(score=score, epoch=epoch, state=copy.deepcopy(model.state_dict()))
        return bool(patience) and epoch - best["epoch"] >= patience

    result = train_loop(model, loader, config, output_dir=output_dir if validation is None else None,
                        device=device, progress=progress, on_step=at_epoch_end if validation is not None else None)
    row: dict[str, Any] = {}
    if validation is not None:
        if best["state"] is not None:
            model.load_state_dict(best["state"])
        row = {"validation_examples": len(validation[0]),
               "validation_score": 100.0 * best["score"] if math.isfinite(best["score"]) else math.nan,
               "best_epoch": best["epoch"], "epochs_run": len(best["history"]), "max_epochs": epochs}
    if score_train:
        row["train_score"] = 100.0 * glue_metric(key, predict(model, encode, train[0]), train[1])["score"]
    logits = predict(model, encode, dev[0])
    scores = glue_metric(key, logits, dev[1])
    row = {"task": key, "seed": seed, "score": 100.0 * scores["score"],
           "majority_score": majority_score(key, train[1], dev[1]), "train_examples": len(train[0]),
           "dev_examples": len(dev[0]), **row, "steps": result.steps, "wall_time_s": result.wall_time_s}
    preds = predictions(key, logits)
    if outcome is not None:
        atomic_write_json(outcome, {"row": list(row.items()), "predictions": preds.tolist(), "dev_digest": dev_digest})
    return (row, preds) if return_predictions else row
