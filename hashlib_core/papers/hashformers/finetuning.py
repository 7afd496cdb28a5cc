"""Fine-tuning every pre-trained HashFormers model on GLUE (Table 1, Table 2's PRR columns, Table 6).

Each model is fine-tuned with the shared GLUE pipeline (:func:`hashlib_core.glue.finetune`; Table 5's optimiser)
on every task of the profile and every fine-tuning seed, from its pre-trained encoder, and scored on the dev split.
:class:`Encoder` turns texts into each model's inputs: the BPE tokenizer for the baselines, the word-level (or
subword) HashFormer tokenizer for the others.
"""
from __future__ import annotations

from typing import Any, Sequence

import pandas as pd
import torch
from torch import nn

from hashlib_core.chapter import RunContext
from hashlib_core.glue import TokenizerEncoder, finetune, num_labels, per_task_scores
from hashlib_core.papers.hashformers.data import Resources
from hashlib_core.papers.hashformers.pretraining import classifier, pretrain
from hashlib_core.papers.hashformers.profiles import ModelSpec
from hashlib_core.papers.hashformers.tokenization import HashFormerTokenizer, SubwordHashFormerTokenizer
from hashlib_core.profiles import seed_everything

__all__ = ["PAPER_TASK_COLUMN", "Encoder", "finetune_model", "glue_runs", "glue_table"]

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
            hasher = res.hasher(spec.hash_type, num_buckets or spec.num_buckets(res.profile))
            mode = "index" if spec.embedding_type == "emb" else "bits"
            if spec.unit == "word":
                self.tokenizer = HashFormerTokenizer(hasher, mode=mode, max_length=max_length)
            else:
                self.tokenizer = SubwordHashFormerTokenizer(hasher, res.feature_bpe, mode=mode, max_length=max_length)

    def __call__(self, texts: list[Any]) -> dict[str, torch.Tensor]:
        return self.tokenizer(texts)


def finetune_model(spec: ModelSpec, pretrained: nn.Module, res: Resources, task: str, seed: int,
                   ctx: RunContext) -> dict[str, Any]:
    """Fine-tune a copy of ``pretrained``'s encoder on ``task`` with ``seed``; score it on the dev split."""
    profile = res.profile
    seed_everything(seed)
    vocab = len(res.baseline_tokenizer) if spec.is_baseline else 0
    model = classifier(spec, profile, vocab, num_labels(task))
    model.base_model.load_state_dict(pretrained.base_model.state_dict())
    out = ctx.checkpoint_dir(f"{spec.slug}-{task}-seed{seed}", spec.name)
    row = finetune(model, Encoder(spec, res, profile.ft_max_len), task,
                   res.glue(task, "train", profile.ft_train_examples),
                   res.glue(task, "validation", profile.ft_eval_examples),
                   epochs=profile.ft_epochs, batch_size=profile.ft_batch, learning_rate=profile.ft_lr, seed=seed,
                   output_dir=out, mixed_precision=profile.mixed_precision, device=ctx.device,
                   progress=ctx.progress)
    return {"name": spec.name, **row}


def glue_runs(specs: Sequence[ModelSpec], res: Resources, ctx: RunContext, tasks: Sequence[str]
              ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Pre-train and fine-tune ``specs``; returns (pre-training summary, loss curves, GLUE scores per run)."""
    summary, curves, scores = [], [], []
    for spec in specs:
        model, row, curve = pretrain(spec, res, ctx)
        summary.append(row)
        curves += curve
        for task in tasks:
            ctx.log(f"{spec.name}: fine-tuning on {task}, seeds {list(res.profile.ft_seeds)}")
            for seed in res.profile.ft_seeds:
                scores.append(finetune_model(spec, model, res, task, seed, ctx))
        del model
    return pd.DataFrame(summary), pd.DataFrame(curves), pd.DataFrame(scores)


def glue_table(summary: pd.DataFrame, runs: pd.DataFrame, tasks: Sequence[str]) -> pd.DataFrame:
    """One row per model: mean score per task over the seeds, its standard deviation over the seeds (``ddof=1``;
    NaN with one seed), the majority-class score of the task, the average over tasks, and PRR vs our BERT-MLM
    (Eq. 4)."""
    table = summary[["name", "group", "model", "unit", "objective", "num_buckets", "emb_params", "total_params"]]
    table = table.set_index("name").join(per_task_scores(runs, tasks, PAPER_TASK_COLUMN))
    columns = [PAPER_TASK_COLUMN[t] for t in tasks]
    table["Avg"] = table[columns].mean(axis=1, skipna=False)  # NaN if a task score is NaN (constant predictions)
    if "BERT-MLM" in table.index:
        base = table.loc["BERT-MLM"]
        for column in columns + ["Avg"]:
            table[f"PRR_{column}"] = 100.0 * table[column] / base[column]
    table["split"] = "GLUE dev (validation)"
    return table.reset_index()
