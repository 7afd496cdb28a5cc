"""Pre-training (masked-language modelling) and GLUE fine-tuning of the chapter's models, on the shared pipeline.

Everything but the models is shared with the HashFormers chapter: the corpus (:func:`hashlib_core.pretraining.
corpus_lines`: Penn Treebank's train split and WikiText-2's validation split), fixed-length windows and BERT's MLM
corruption (:mod:`hashlib_core.pretraining`), the accelerate training loop (:mod:`hashlib_core.training`), GLUE
fine-tuning and scoring (:func:`hashlib_core.glue.finetune`: HashFormers' Table 5 optimiser, early stopping on a
held-out part of the training split, dev-split scores with per-item predictions) and the protocol around it
(:mod:`hashlib_core.tuning`: a learning-rate sweep, then every seed at the chosen rate). The tokenizer is BERT's
uncased WordPiece (30,522 pieces), the vocabulary EELBERT replaces. A table model and a dynamic model differ only
in ``embedding`` (and a dynamic model in its n-gram hash).
"""
from __future__ import annotations

from functools import cached_property
from typing import Any, Sequence

import numpy as np
import pandas as pd
import torch
from torch import nn

from hashlib_core.chapter import RunContext
from hashlib_core.glue import GlueSplits, TokenizerEncoder, finetune, num_labels
from hashlib_core.params import count_parameters
from hashlib_core.papers.dynamic_embeddings.modeling import (
    DynamicBertConfig,
    DynamicBertForMaskedLM,
    DynamicBertForSequenceClassification,
    model_size_bytes,
)
from hashlib_core.papers.dynamic_embeddings.profiles import (
    PRETRAINING_SETTINGS,
    VOCABULARY,
    DynamicEmbeddingsProfile,
    ModelSpec,
)
from hashlib_core.papers.dynamic_embeddings.sizes import BERT_VOCAB
from hashlib_core.pretraining import MLMObjective, Sequences, corpus_lines, with_specials
from hashlib_core.profiles import seed_everything
from hashlib_core.training import TrainConfig, train
from hashlib_core.tuning import predictions_record, tuned_tasks
from hashlib_core.wordpiece import bert_tokenizer

__all__ = ["Resources", "model_config", "pretrain", "random_weights", "finetune_model", "finetune_tasks",
           "trend_name"]


class Resources(GlueSplits):
    """What every experiment of one run shares: corpus, tokenizer, its token strings, the id stream, GLUE splits."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self.profile: DynamicEmbeddingsProfile = ctx.profile

    @cached_property
    def corpus(self) -> list[str]:
        return corpus_lines(self.profile.corpus, self.profile.corpus_max_words)

    @cached_property
    def tokenizer(self) -> Any:
        """BERT's uncased WordPiece from the staged vocabulary (no hub access: :func:`hashlib_core.wordpiece.
        bert_tokenizer`)."""
        tokenizer = bert_tokenizer(VOCABULARY)
        if len(tokenizer) != BERT_VOCAB:
            raise RuntimeError(f"the {VOCABULARY} tokenizer has {len(tokenizer):,} pieces, not {BERT_VOCAB:,}; check "
                               f"the staged vocab.txt")
        return tokenizer

    @cached_property
    def vocab_tokens(self) -> list[str]:
        """The token strings in id order: what the dynamic embedding hashes (WordPiece strings: ``##`` marks a
        continuation, ``[CLS]`` and the other specials are hashed by their names)."""
        tokens = self.tokenizer.convert_ids_to_tokens(list(range(len(self.tokenizer))))
        if any(not t for t in tokens):
            raise RuntimeError(f"the {VOCABULARY} vocabulary has an empty or missing entry; check the staged file")
        return tokens

    @cached_property
    def id_stream(self) -> np.ndarray:
        """The corpus as one stream of WordPiece ids (no specials)."""
        ids = self.tokenizer(self.corpus, add_special_tokens=False)["input_ids"]
        return np.fromiter((i for line in ids for i in line), dtype=np.int64)


def model_config(spec: ModelSpec, profile: DynamicEmbeddingsProfile, vocab_tokens: Sequence[str], pad_id: int,
                 **extra: Any) -> DynamicBertConfig:
    """The :class:`DynamicBertConfig` of ``spec`` over ``vocab_tokens`` (``extra``: e.g. ``num_labels``)."""
    fields = dict(spec.config_fields(), max_n=profile.max_n, hash_buckets=profile.hash_buckets,
                  hash_seed=profile.hash_seed, projection=profile.projection, pad_token_id=pad_id,
                  max_position_embeddings=max(512, profile.seq_len, profile.ft_max_len), type_vocab_size=2)
    return DynamicBertConfig(vocab_tokens=vocab_tokens, **fields, **extra)


class _Windows:
    """Rows of token ids -> ``[CLS] ... [SEP]`` -> the MLM corruption."""

    def __init__(self, objective: MLMObjective, first: int, last: int) -> None:
        self.objective, self.first, self.last = objective, first, last

    def __call__(self, rows: list[torch.Tensor]) -> dict[str, torch.Tensor]:
        ids = with_specials(torch.stack(rows), self.first, self.last)
        return self.objective({"input_ids": ids, "attention_mask": torch.ones_like(ids)})


def trend_name(name: str, steps: int) -> str:
    """How the trend's runs name a model pre-trained for ``steps`` steps (``"EELBERT-tiny @ 500 steps"``)."""
    return f"{name} @ {steps:,} steps"


def pretrain(spec: ModelSpec, res: Resources, ctx: RunContext, steps: int | None = None
             ) -> tuple[nn.Module, dict, list]:
    """Pre-train one model with masked-language modelling (checkpoints and exact resume under ``checkpoints/``);
    returns the model, a summary row and its loss curve. ``steps`` replaces the profile's ``pt_steps`` (a shorter
    run with its own schedule, warm-up scaled alike: the trend)."""
    profile, tok = res.profile, res.tokenizer
    total = steps or profile.pt_steps
    warmup = profile.pt_warmup if steps is None else max(1, round(profile.pt_warmup * steps / profile.pt_steps))
    seed_everything(profile.seed)
    windows = _Windows(MLMObjective(tok, profile.seed), tok.cls_token_id, tok.sep_token_id)
    loader = torch.utils.data.DataLoader(Sequences(res.id_stream, profile.seq_len - 2), batch_size=profile.pt_batch,
                                         shuffle=True, drop_last=True, collate_fn=windows)
    model = DynamicBertForMaskedLM(model_config(spec, profile, res.vocab_tokens, tok.pad_token_id))
    config = TrainConfig(max_steps=total, learning_rate=profile.pt_lr, warmup_steps=warmup, scheduler="linear",
                         weight_decay=0.01, log_every=max(1, total // 30), seed=profile.seed)
    parts = (spec.name, spec.config_fields()) if steps is None else (spec.name, spec.config_fields(), total)
    out = ctx.checkpoint_dir(f"{spec.slug}-pretrain", *parts, settings=PRETRAINING_SETTINGS)
    ctx.log(f"{spec.name}: pre-training ({total:,} steps)")
    result = train(model, loader, config, output_dir=out, device=ctx.device, progress=ctx.progress)
    name = spec.name if steps is None else trend_name(spec.name, total)
    row = {"name": name, "model": spec.name, "embedding": spec.embedding, "ngram_hash": spec.ngram_hash,
           "layers": spec.layers, "hidden": spec.hidden, "vocab_size": len(res.vocab_tokens),
           "corpus_tokens": len(res.id_stream), "steps": result.steps, "final_loss": result.final_loss,
           "wall_time_s": result.wall_time_s}
    curve = [{"name": name, "step": s, "loss": loss} for s, loss in result.losses]
    return model, row, curve


def random_weights(spec: ModelSpec, res: Resources) -> nn.Module:
    """A model initialised as ``pretrain`` initialises it (the profile's seed) and not trained: the from-scratch
    control."""
    seed_everything(res.profile.seed)
    return DynamicBertForMaskedLM(model_config(spec, res.profile, res.vocab_tokens, res.tokenizer.pad_token_id))


def finetune_model(spec: ModelSpec, pretrained: nn.Module, res: Resources, task: str, seed: int, lr: float,
                   ctx: RunContext, pretrained_steps: int | None = None) -> tuple[dict[str, Any], np.ndarray]:
    """Fine-tune a copy of ``pretrained``'s encoder on ``task`` with ``seed`` and learning rate ``lr``: at most
    ``ft_epochs`` epochs on the training part of the task's training split, the best epoch on its held-out part
    (stopping after ``ft_patience`` epochs without improvement), scored on the dev split. Returns the run's row and
    its per-item dev predictions."""
    profile, tok = res.profile, res.tokenizer
    seed_everything(seed)
    model = DynamicBertForSequenceClassification(model_config(spec, profile, res.vocab_tokens, tok.pad_token_id,
                                                              num_labels=num_labels(task)))
    missing, unexpected = model.base_model.load_state_dict(pretrained.base_model.state_dict(), strict=False)
    if unexpected or any(not k.startswith("pooler.") for k in missing):
        raise RuntimeError(f"{spec.name}: the pre-trained encoder does not fit the classifier "
                           f"(missing {missing}, unexpected {unexpected})")
    parts = (spec.name, spec.config_fields(), lr) + (() if pretrained_steps is None else (pretrained_steps,))
    out = ctx.checkpoint_dir(f"{spec.slug}-{task}-seed{seed}-lr{lr:g}", *parts)
    train_part, validation = res.held_out(task)
    row, preds = finetune(model, TokenizerEncoder(tok, profile.ft_max_len, token_types=True), task, train_part,
                          res.glue(task, "validation", profile.ft_eval_examples), validation=validation,
                          patience=profile.ft_patience, epochs=profile.ft_epochs, batch_size=profile.ft_batch,
                          learning_rate=lr, seed=seed, output_dir=out, device=ctx.device, progress=ctx.progress,
                          return_predictions=True, on_reuse=ctx.reuse)
    name = spec.name if pretrained_steps is None else trend_name(spec.name, pretrained_steps)
    return {"name": name, "model": spec.name, "learning_rate": lr, **row, "total_params": count_parameters(model),
            "emb_params": model.embedding_parameter_count(), "size_fp32_bytes": model_size_bytes(model, 4.0),
            "size_int8_bytes": model_size_bytes(model, 1.0)}, preds


def finetune_tasks(spec: ModelSpec, model: nn.Module, res: Resources, ctx: RunContext, tasks: Sequence[str],
                   pretrained_steps: int | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """One pre-trained model on every task of ``tasks`` with the profile's protocol
    (:func:`hashlib_core.tuning.tuned_tasks`); returns every run (``chosen``: at the chosen learning rate) and the
    chosen runs' dev predictions (:func:`hashlib_core.tuning.predictions_record`)."""
    p = res.profile
    rows, preds = tuned_tasks(lambda task, seed, lr: finetune_model(spec, model, res, task, seed, lr, ctx,
                                                                    pretrained_steps),
                              tasks, p.ft_seeds, p.ft_lrs, sweep_task=p.ft_sweep_task or None,
                              log=lambda message: ctx.log(f"{spec.name}: {message}"))
    name = spec.name if pretrained_steps is None else trend_name(spec.name, pretrained_steps)
    labels = {t: res.glue(t, "validation", p.ft_eval_examples)[1] for t in tasks}
    return pd.DataFrame(rows), predictions_record({(name, t, s): v for (t, s), v in preds.items()}, labels)
