"""Pre-training (masked-language modelling) and GLUE fine-tuning of the chapter's models, on the shared pipeline.

Everything but the models is shared with the HashFormers chapter: the corpus (:func:`hashlib_core.pretraining.
wikitext_lines`), a locally trained byte-level BPE (:func:`hashlib_core.bpe.train_bpe`), fixed-length windows and
BERT's MLM corruption (:mod:`hashlib_core.pretraining`), the accelerate training loop (:mod:`hashlib_core.training`)
and GLUE fine-tuning and scoring (:func:`hashlib_core.glue.finetune`: HashFormers' Table 5 optimiser, dev-split
scores, the majority-class reference). A table model and a dynamic model differ only in ``embedding``.
"""
from __future__ import annotations

from functools import cached_property
from typing import Any, Sequence

import numpy as np
import pandas as pd
import torch
from torch import nn

from hashlib_core.bpe import bpe_to_hf_tokenizer, train_bpe
from hashlib_core.chapter import RunContext
from hashlib_core.glue import GlueSplits, TokenizerEncoder, finetune, num_labels, per_task_scores
from hashlib_core.params import count_parameters
from hashlib_core.papers.dynamic_embeddings.modeling import (
    DynamicBertConfig,
    DynamicBertForMaskedLM,
    DynamicBertForSequenceClassification,
    model_size_bytes,
)
from hashlib_core.papers.dynamic_embeddings.profiles import PRETRAINING_SETTINGS, DynamicEmbeddingsProfile, ModelSpec
from hashlib_core.pretraining import MLMObjective, Sequences, wikitext_lines, with_specials
from hashlib_core.profiles import seed_everything
from hashlib_core.training import TrainConfig, train

__all__ = ["Resources", "model_config", "pretrain", "finetune_model", "glue_runs", "glue_table"]


class Resources(GlueSplits):
    """What every experiment of one run shares: corpus, tokenizer, its token strings, the id stream, GLUE splits."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self.profile: DynamicEmbeddingsProfile = ctx.profile

    @cached_property
    def corpus(self) -> list[str]:
        return wikitext_lines("validation", self.profile.corpus_max_words)

    @cached_property
    def bpe(self) -> Any:
        return train_bpe(self.corpus, self.profile.vocab_size)

    @cached_property
    def tokenizer(self) -> Any:
        return bpe_to_hf_tokenizer(self.bpe, model_max_length=max(self.profile.seq_len, 512))

    @cached_property
    def vocab_tokens(self) -> list[str]:
        """The token strings in id order: what the dynamic embedding hashes (byte-level BPE strings, ``Ġ`` for a
        leading space)."""
        vocab = self.bpe.get_vocab()
        tokens = [None] * len(vocab)
        for token, i in vocab.items():
            tokens[i] = token
        if any(t is None for t in tokens):
            raise RuntimeError("the BPE vocabulary's ids are not contiguous")
        return tokens

    @cached_property
    def id_stream(self) -> np.ndarray:
        ids = [i for line in self.corpus for i in self.bpe.encode(line, add_special_tokens=False).ids]
        return np.asarray(ids, dtype=np.int64)


def model_config(spec: ModelSpec, profile: DynamicEmbeddingsProfile, vocab_tokens: Sequence[str],
                 **extra: Any) -> DynamicBertConfig:
    """The :class:`DynamicBertConfig` of ``spec`` over ``vocab_tokens`` (``extra``: e.g. ``num_labels``)."""
    fields = dict(spec.config_fields(), max_n=profile.max_n, hash_buckets=profile.hash_buckets,
                  hash_seed=profile.hash_seed, projection=profile.projection, pad_token_id=1,
                  max_position_embeddings=max(512, profile.seq_len, profile.ft_max_len), type_vocab_size=2)
    return DynamicBertConfig(vocab_tokens=vocab_tokens, **fields, **extra)


class _Windows:
    """Rows of token ids -> ``<s> ... </s>`` -> the MLM corruption."""

    def __init__(self, objective: MLMObjective) -> None:
        self.objective = objective

    def __call__(self, rows: list[torch.Tensor]) -> dict[str, torch.Tensor]:
        ids = with_specials(torch.stack(rows))
        return self.objective({"input_ids": ids, "attention_mask": torch.ones_like(ids)})


def pretrain(spec: ModelSpec, res: Resources, ctx: RunContext) -> tuple[nn.Module, dict, list]:
    """Pre-train one model with masked-language modelling (checkpoints and exact resume under ``checkpoints/``)."""
    profile = res.profile
    seed_everything(profile.seed)
    loader = torch.utils.data.DataLoader(Sequences(res.id_stream, profile.seq_len - 2), batch_size=profile.pt_batch,
                                         shuffle=True, drop_last=True,
                                         collate_fn=_Windows(MLMObjective(res.tokenizer, profile.seed)))
    model = DynamicBertForMaskedLM(model_config(spec, profile, res.vocab_tokens))
    config = TrainConfig(max_steps=profile.pt_steps, learning_rate=profile.pt_lr, warmup_steps=profile.pt_warmup,
                         scheduler="linear", weight_decay=0.01, log_every=max(1, profile.pt_steps // 30),
                         seed=profile.seed)
    out = ctx.checkpoint_dir(f"{spec.slug}-pretrain", spec.name, spec.config_fields(), settings=PRETRAINING_SETTINGS)
    ctx.log(f"{spec.name}: pre-training ({config.max_steps} steps)")
    result = train(model, loader, config, output_dir=out, device=ctx.device, progress=ctx.progress)
    row = {"name": spec.name, "embedding": spec.embedding, "layers": spec.layers, "hidden": spec.hidden,
           "vocab_size": len(res.vocab_tokens), "corpus_tokens": len(res.id_stream), "steps": result.steps,
           "final_loss": result.final_loss, "wall_time_s": result.wall_time_s}
    curve = [{"name": spec.name, "step": s, "loss": loss} for s, loss in result.losses]
    return model, row, curve


def finetune_model(spec: ModelSpec, pretrained: nn.Module, res: Resources, task: str, seed: int,
                   ctx: RunContext) -> dict[str, Any]:
    """Fine-tune a copy of ``pretrained``'s encoder on ``task`` with ``seed`` and score it on the dev split."""
    profile = res.profile
    seed_everything(seed)
    model = DynamicBertForSequenceClassification(model_config(spec, profile, res.vocab_tokens,
                                                              num_labels=num_labels(task)))
    missing, unexpected = model.base_model.load_state_dict(pretrained.base_model.state_dict(), strict=False)
    if unexpected or any(not k.startswith("pooler.") for k in missing):
        raise RuntimeError(f"{spec.name}: the pre-trained encoder does not fit the classifier "
                           f"(missing {missing}, unexpected {unexpected})")
    out = ctx.checkpoint_dir(f"{spec.slug}-{task}-seed{seed}", spec.name, spec.config_fields())
    row = finetune(model, TokenizerEncoder(res.tokenizer, profile.ft_max_len), task,
                   res.glue(task, "train", profile.ft_train_examples),
                   res.glue(task, "validation", profile.ft_eval_examples),
                   epochs=profile.ft_epochs, batch_size=profile.ft_batch, learning_rate=profile.ft_lr, seed=seed,
                   output_dir=out, device=ctx.device, progress=ctx.progress)
    return {"name": spec.name, **row, "total_params": count_parameters(model),
            "emb_params": model.embedding_parameter_count(), "size_fp32_bytes": model_size_bytes(model, 4.0),
            "size_int8_bytes": model_size_bytes(model, 1.0)}


def glue_runs(specs: Sequence[ModelSpec], res: Resources, ctx: RunContext
              ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Pre-train and fine-tune ``specs`` on every task and seed; returns (pre-training rows, curves, GLUE runs)."""
    summary, curves, runs = [], [], []
    for spec in specs:
        model, row, curve = pretrain(spec, res, ctx)
        summary.append(row)
        curves += curve
        for task in res.profile.task_keys():
            ctx.log(f"{spec.name}: fine-tuning on {task}, seeds {list(res.profile.ft_seeds)}")
            for seed in res.profile.ft_seeds:
                runs.append(finetune_model(spec, model, res, task, seed, ctx))
        del model
    return pd.DataFrame(summary), pd.DataFrame(curves), pd.DataFrame(runs)


def glue_table(runs: pd.DataFrame, tasks: Sequence[str]) -> pd.DataFrame:
    """One row per model: mean and standard deviation (over seeds, ``ddof=1``) per task, the task's majority-class
    score (:func:`hashlib_core.glue.per_task_scores`), the average over tasks, and the model's size."""
    table = per_task_scores(runs, tasks)
    table["avg"] = table[list(tasks)].mean(axis=1, skipna=False)
    sizes = runs.groupby("name", sort=False)[["total_params", "emb_params", "size_fp32_bytes",
                                              "size_int8_bytes"]].first()
    return table.join(sizes).reset_index()
