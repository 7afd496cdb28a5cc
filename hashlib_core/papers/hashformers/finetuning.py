"""Fine-tuning every pre-trained HashFormers model on GLUE (Table 1, Table 2's PRR columns, Table 6).

Each model is fine-tuned with the shared GLUE pipeline (:func:`hashlib_core.glue.finetune`; Table 5's optimiser)
on every task of the profile, from its pre-trained encoder: early stopping and model selection on a held-out part
of the task's training split (GLUE dev, what the paper reports, is never used to choose), the same learning-rate
sweep for every model (chosen on the held-out part with the first seed), then every seed at the chosen rate, scored
on the dev split with per-item predictions kept for paired comparisons.
:class:`Encoder` turns texts into each model's inputs: the BPE tokenizer for the baselines, the word-level (or
subword) HashFormer tokenizer for the others.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd
import torch
from torch import nn

from hashlib_core.chapter import RunContext
from hashlib_core.glue import TokenizerEncoder, finetune, num_labels, per_task_scores
from hashlib_core.papers.hashformers.data import Resources
from hashlib_core.papers.hashformers.pretraining import classifier, pretrain, untrained_row
from hashlib_core.papers.hashformers.profiles import ModelSpec
from hashlib_core.papers.hashformers.tokenization import HashFormerTokenizer, SubwordHashFormerTokenizer
from hashlib_core.profiles import seed_everything
from hashlib_core.tuning import tuned_tasks
from hashlib_core.tuning import predictions_record as shared_predictions_record

__all__ = ["PAPER_TASK_COLUMN", "Encoder", "finetune_model", "finetune_tasks", "glue_runs", "trend_name",
           "predictions_record", "glue_table"]

#: Table 1 column of each task we can score.
PAPER_TASK_COLUMN = {"mnli": "MNLI", "qnli": "QNLI", "qqp": "QQP", "rte": "RTE", "sst2": "SST", "mrpc": "MRPC",
                     "cola": "CoLA", "stsb": "STS"}


class Encoder:
    """Texts (or pairs) -> model inputs with one model's tokenisation, padded to the longest in the batch."""

    def __init__(self, spec: ModelSpec, res: Resources, max_length: int, num_buckets: int | None = None) -> None:
        self.baseline = spec.is_baseline
        if self.baseline:
            self.tokenizer = TokenizerEncoder(res.baseline_tokenizer, max_length)
        else:
            hasher = res.hasher(spec.hash_type, num_buckets or spec.num_buckets(res.profile), spec.num_bits)
            mode = "index" if spec.embedding_type == "emb" else "bits"
            if spec.unit == "word":
                self.tokenizer = HashFormerTokenizer(hasher, mode=mode, max_length=max_length)
            else:
                self.tokenizer = SubwordHashFormerTokenizer(hasher, res.feature_bpe, mode=mode, max_length=max_length)

    def __call__(self, texts: list[Any]) -> dict[str, torch.Tensor]:
        return self.tokenizer(texts)


def finetune_model(spec: ModelSpec, pretrained: nn.Module | None, res: Resources, task: str, seed: int, lr: float,
                   ctx: RunContext, pretrained_steps: int | None = None) -> tuple[dict[str, Any], np.ndarray]:
    """Fine-tune a copy of ``pretrained``'s encoder (None: a model of random weights drawn with ``seed``, for
    ProFormer) on ``task`` with ``seed`` and learning rate ``lr``: at most
    ``ft_epochs`` epochs on the training part of the task's training split, the best epoch on its held-out part
    (``ft_validation_examples``; stopping after ``ft_patience`` epochs without improvement), scored on the dev split.
    Returns the run's row and its per-item dev predictions. ``pretrained_steps``: the encoder comes from a shorter
    pre-training run than the profile's (its fine-tuning runs are kept apart)."""
    profile = res.profile
    seed_everything(seed)
    vocab = len(res.baseline_tokenizer) if spec.is_baseline else 0
    model = classifier(spec, profile, vocab, num_labels(task))
    if pretrained is not None:
        model.base_model.load_state_dict(pretrained.base_model.state_dict())
    elif spec.pretrained:
        raise ValueError(f"{spec.name} is a pre-trained model: pass its pre-trained weights")
    parts = (spec.name, lr) if pretrained_steps is None else (spec.name, lr, pretrained_steps)
    out = ctx.checkpoint_dir(f"{spec.slug}-{task}-seed{seed}-lr{lr:g}", *parts)
    train, validation = res.held_out(task)
    row, preds = finetune(model, Encoder(spec, res, profile.ft_max_len), task, train,
                          res.glue(task, "validation", profile.ft_eval_examples), validation=validation,
                          patience=profile.ft_patience, epochs=profile.ft_epochs, batch_size=profile.ft_batch,
                          learning_rate=lr, seed=seed, output_dir=out, mixed_precision=profile.mixed_precision,
                          device=ctx.device, progress=ctx.progress, return_predictions=True, on_reuse=ctx.reuse)
    return {"name": spec.name, "learning_rate": lr, **row}, preds


def finetune_tasks(spec: ModelSpec, model: nn.Module | None, res: Resources, ctx: RunContext, tasks: Sequence[str],
                   pretrained_steps: int | None = None) -> tuple[list[dict[str, Any]], dict[tuple, np.ndarray]]:
    """One model on every task (:func:`hashlib_core.tuning.tuned_tasks`): the learning-rate sweep on each task,
    or (``ft_sweep_task`` set) on that task only, its chosen rate then used on the others; every seed at the chosen
    rate."""
    p = res.profile
    def run(task: str, seed: int, lr: float) -> tuple[dict[str, Any], np.ndarray]:
        return finetune_model(spec, model, res, task, seed, lr, ctx, pretrained_steps)

    return tuned_tasks(run, tasks, p.ft_seeds, p.ft_lrs, sweep_task=p.ft_sweep_task or None,
                       log=lambda message: ctx.log(f"{spec.name}: {message}"))


def glue_runs(specs: Sequence[ModelSpec], res: Resources, ctx: RunContext, tasks: Sequence[str],
              owns_pretraining: bool = False) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """Pre-train (or read back from their checkpoints) and fine-tune ``specs``; returns the pre-training summary, the
    loss curves, every fine-tuning run (``chosen`` marks those at each model's chosen learning rate) and the chosen
    runs' dev predictions (:func:`predictions_record`). ``owns_pretraining``: these models are pre-trained by this
    experiment alone (Table 6, the Add codebooks), so a pre-training read back from another process's checkpoint
    counts towards its time (``pretrain``'s ``count_reuse``)."""
    summary, curves, scores, preds = [], [], [], {}
    for spec in specs:
        if spec.pretrained:
            model, row, curve = pretrain(spec, res, ctx, count_reuse=owns_pretraining)
        else:                                           # ProFormer: every run starts from its own random weights
            model, row, curve = None, untrained_row(spec, res), []
        summary.append(row)
        curves += curve
        rows, by_task = finetune_tasks(spec, model, res, ctx, tasks)
        scores += rows
        preds.update({(spec.name, task, seed): p for (task, seed), p in by_task.items()})
        del model
    return (pd.DataFrame(summary), pd.DataFrame(curves), pd.DataFrame(scores),
            predictions_record(preds, res, tasks))


def trend_name(name: str, steps: int) -> str:
    """How the trend's runs name a model pre-trained for ``steps`` steps (``"LSH-Proj @ 500 steps"``)."""
    return f"{name} @ {steps:,} steps"


def predictions_record(preds: dict[tuple[str, str, int], np.ndarray], res: Resources, tasks: Sequence[str]
                       ) -> dict[str, Any]:
    """The chosen runs' dev predictions as a JSON-able record (:func:`hashlib_core.tuning.predictions_record`):
    each task's dev labels, and one entry per (model, task, seed) run -- what a paired bootstrap over the dev items
    reads (:func:`hashlib_core.claims.paired_bootstrap`)."""
    labels = {t: res.glue(t, "validation", res.profile.ft_eval_examples)[1] for t in tasks}
    return shared_predictions_record(preds, labels)


def glue_table(summary: pd.DataFrame, runs: pd.DataFrame, tasks: Sequence[str]) -> pd.DataFrame:
    """One row per model: mean score per task over the seeds at the chosen learning rate, its standard deviation
    over the seeds (``ddof=1``; NaN with one seed), the majority-class score of the task, the average over tasks, and
    PRR vs our BERT-MLM (Eq. 4)."""
    chosen = runs[runs["chosen"].astype(bool)] if "chosen" in runs.columns else runs
    table = summary[["name", "group", "model", "unit", "objective", "num_buckets", "emb_params", "total_params"]]
    table = table.set_index("name").join(per_task_scores(chosen, tasks, PAPER_TASK_COLUMN))
    columns = [PAPER_TASK_COLUMN[t] for t in tasks]
    table["Avg"] = table[columns].mean(axis=1, skipna=False)  # NaN if a task score is NaN (constant predictions)
    if "BERT-MLM" in table.index:
        base = table.loc["BERT-MLM"]
        for column in columns + ["Avg"]:
            table[f"PRR_{column}"] = 100.0 * table[column] / base[column]
    table["split"] = "GLUE dev (validation)"
    return table.reset_index()
