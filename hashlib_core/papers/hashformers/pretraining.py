"""Pre-training of every HashFormers model (§3.6, §4.2; Appendix A): the models of a profile, and one run.

HashFormers and BERT-S+R are pre-trained with Shuffle+Random (Yamaguchi et al., 2021): 10% of the tokens are
shuffled and 10% replaced, and the model tells each token apart as kept / shuffled / random
(:class:`~hashlib_core.papers.hashformers.objectives.ShuffleRandomCollator`). BERT-MLM uses masked language
modelling over its BPE vocabulary (:class:`~hashlib_core.papers.hashformers.objectives.MLMObjective`).
"""
from __future__ import annotations

from typing import Any, Callable

import torch
from torch import nn

from hashlib_core.bpe import NUM_SPECIAL_TOKENS
from hashlib_core.chapter import RunContext
from hashlib_core.modeling import embedding_parameter_count
from hashlib_core.papers.hashformers.baselines import baseline_config, build_baseline
from hashlib_core.papers.hashformers.data import PretrainCollator, Resources, Sequences, unit_table
from hashlib_core.papers.hashformers.configuration import HashFormerConfig, proformer_config
from hashlib_core.papers.hashformers.modeling import HashFormerForSequenceClassification, HashFormerForShuffleRandom
from hashlib_core.papers.hashformers.objectives import MLMObjective, ShuffleRandomCollator
from hashlib_core.papers.hashformers.profiles import PRETRAINING_SETTINGS, HashFormersProfile, ModelSpec
from hashlib_core.params import count_parameters
from hashlib_core.profiles import seed_everything
from hashlib_core.training import TrainConfig, train

__all__ = ["encoder_fields", "hashformer_config", "pretraining_model", "classifier", "pretrain",
           "untrained_row"]


def encoder_fields(profile: HashFormersProfile) -> dict[str, Any]:
    return dict(hidden_size=profile.hidden, num_hidden_layers=profile.layers, num_attention_heads=profile.heads,
                intermediate_size=profile.intermediate)


def hashformer_config(spec: ModelSpec, profile: HashFormersProfile, num_buckets: int | None = None,
                       **extra: Any) -> HashFormerConfig:
    buckets = num_buckets or spec.num_buckets(profile)
    fields = dict(embedding_type=spec.embedding_type, hash_type=spec.hash_type, num_bits=spec.num_bits,
                  **encoder_fields(profile), **extra)
    if spec.layers:
        fields["num_hidden_layers"] = spec.layers
    if spec.embedding_type == "linear":     # ProFormer: its dense projection of the code, sinusoidal positions
        return proformer_config(**fields)
    if spec.embedding_type == "add":
        fields["add_storage"] = spec.add_storage or profile.add_storage
    if not spec.add_shared_gradient:
        fields["add_shared_gradient"] = False
    if buckets is not None:
        fields["num_buckets"] = buckets
    return HashFormerConfig(**fields)


def pretraining_model(spec: ModelSpec, profile: HashFormersProfile, vocab_size: int,
                       num_buckets: int | None = None) -> nn.Module:
    if spec.is_baseline:
        config = baseline_config(vocab_size, **encoder_fields(profile))
        if spec.objective == "mlm":    # the output layer only at the masked positions: the same loss, 4x cheaper
            return build_baseline("mlm", config, masked_only=True)
        return build_baseline("shuffle_random", config)
    return HashFormerForShuffleRandom(hashformer_config(spec, profile, num_buckets))


def classifier(spec: ModelSpec, profile: HashFormersProfile, vocab_size: int, num_labels: int,
                num_buckets: int | None = None) -> nn.Module:
    if spec.is_baseline:
        config = baseline_config(vocab_size, num_labels=num_labels, **encoder_fields(profile))
        return build_baseline("sequence_classification", config)
    return HashFormerForSequenceClassification(
        hashformer_config(spec, profile, num_buckets, num_labels=num_labels))


def pretrain(spec: ModelSpec, res: Resources, ctx: RunContext, steps: int | None = None, count_reuse: bool = False
             ) -> tuple[nn.Module, dict, list]:
    """Pre-train one model on the corpus (checkpoints and exact resume under ``checkpoints/``); returns the model, a
    summary row and its loss curve. ``steps`` replaces the profile's ``pt_steps`` (a shorter run with its own
    schedule, warm-up scaled alike: the pre-training-length trend). ``count_reuse``: a run read back from its
    checkpoint (written by another process, e.g. a parallel job) adds the time it cost to the experiment's
    (:meth:`RunContext.reuse`); the experiment that owns the pre-training sets it, those that only read the weights
    back do not. The row's wall time is always the whole run's."""
    profile = res.profile
    total = steps or profile.pt_steps
    warmup = profile.pt_warmup if steps is None else max(1, round(profile.pt_warmup * steps / profile.pt_steps))
    seed_everything(profile.seed)
    body = profile.seq_len - 2
    if spec.is_baseline:
        tokenizer = res.baseline_tokenizer
        vocab = len(tokenizer)
        table = torch.arange(vocab, dtype=torch.long)
        units = res.bpe_id_stream
        if spec.objective == "mlm":
            objective: Callable = MLMObjective(tokenizer, profile.seed)
        else:
            objective = ShuffleRandomCollator(random_id_range=(NUM_SPECIAL_TOKENS, vocab), seed=profile.seed)
    else:
        vocab = 0
        stream = res.word_stream if spec.unit == "word" else res.subword_stream
        units, table = unit_table(spec, res, stream)
        if spec.embedding_type == "emb":
            objective = ShuffleRandomCollator(
                random_id_range=(NUM_SPECIAL_TOKENS, NUM_SPECIAL_TOKENS + spec.num_buckets(profile)),
                seed=profile.seed)
        else:
            # released collators: per-token bit rate for Proj, uniform codewords for Pool (and Add)
            mode = "per_token_rate" if spec.embedding_type == "proj" else "uniform"
            objective = ShuffleRandomCollator(random_bits=mode, seed=profile.seed)
    dataset = Sequences(units, body)
    loader = torch.utils.data.DataLoader(dataset, batch_size=profile.pt_batch, shuffle=True, drop_last=True,
                                         collate_fn=PretrainCollator(spec, table, objective))
    model = pretraining_model(spec, profile, vocab)
    lr = profile.pt_lr_mlm if spec.objective == "mlm" else profile.pt_lr
    config = TrainConfig(max_steps=total, learning_rate=lr, warmup_steps=warmup,
                         scheduler=profile.pt_scheduler, adam_betas=(0.9, profile.pt_beta2), weight_decay=0.01,
                         log_every=max(1, total // 30), checkpoint_every=profile.checkpoint_every,
                         mixed_precision=profile.mixed_precision, seed=profile.seed)
    parts = (spec.name,) if steps is None else (spec.name, total)      # the profile's run keeps its folder
    out = ctx.checkpoint_dir(f"{spec.slug}-pretrain", *parts, settings=PRETRAINING_SETTINGS)
    ctx.log(f"{spec.name}: pre-training ({config.max_steps} steps)")
    result = train(model, loader, config, output_dir=out, device=ctx.device, progress=ctx.progress)
    if count_reuse:
        ctx.reuse(result.prior_wall_time_s)
    row = {
        "name": spec.name, "group": spec.group, "model": spec.model, "unit": spec.unit,
        "objective": "MLM" if spec.objective == "mlm" else "S+R",
        "num_buckets": spec.num_buckets(profile) if not spec.is_baseline else vocab,
        "corpus_units": len(units), "distinct_units": len(table),
        "steps": result.steps, "resumed_from_step": result.resumed_from_step, "final_loss": result.final_loss,
        "wall_time_s": result.prior_wall_time_s + result.wall_time_s,
        "total_params": count_parameters(model), "emb_params": embedding_parameter_count(model),
    }
    curve = [{"name": spec.name, "step": s, "loss": loss} for s, loss in result.losses]
    return model, row, curve


def untrained_row(spec: ModelSpec, res: Resources) -> dict:
    """The summary row of a model fine-tuned from random weights (ProFormer), shaped as :func:`pretrain`'s: no
    pre-training, its sizes counted on a two-class classifier (what Table 2 counts)."""
    if spec.pretrained:
        raise ValueError(f"{spec.name} is pre-trained: its row comes from pretrain()")
    model = classifier(spec, res.profile, 0, 2)
    return {"name": spec.name, "group": spec.group, "model": spec.model, "unit": spec.unit, "objective": "none",
            "num_buckets": spec.num_buckets(res.profile), "corpus_units": 0, "distinct_units": 0, "steps": 0,
            "resumed_from_step": 0, "final_loss": float("nan"), "wall_time_s": 0.0,
            "total_params": count_parameters(model), "emb_params": embedding_parameter_count(model)}
