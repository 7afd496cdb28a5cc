"""The dynamic-embeddings chapter's experiments, registered on the chapter skeleton.

Each writes ``results/dynamic_embeddings/<profile>/<name>.csv``; run them with
``python -m hashlib_core.papers.dynamic_embeddings --profile P [--only a,b]``.

``properties``
    The blog's properties, measured: determinism across processes, every string (odd ones included) to a d-vector
    in [-1, 1], and strings that share n-grams closer than random pairs (Card-660 spelling variants and all its
    pairs, word families of the corpus sharing a prefix), with effect sizes.
``sizes``
    Parameters and megabytes (float32 and int8) of BERT-base, BERT-tiny and their dynamic counterparts at the
    paper's vocabulary (30,522 WordPiece tokens), counted from models built on the ``meta`` device; and
    ``uno_shapes``, the dynamic-model shapes (layers x width, float32, float16 or int8) whose size rounds to the
    abstract's 1.2 MB or whose ratio to BERT-tiny rounds to its 15x (UNO-EELBERT's shape is not given: ours is an
    assumption).
``napkin``
    The blog's size arithmetic recomputed from the models' configurations (GPT-2, Mistral-7B, BERT-base, BERT-tiny).
``pretraining``
    Every model pre-trained with masked-language modelling on the profile's corpus (checkpoints kept: the other
    experiments read them back), with its loss curve.
``glue``
    Every pre-trained model fine-tuned on the profile's GLUE tasks with the shared protocol (a learning-rate sweep
    chosen on a held-out part of the training split, then every seed at the chosen rate), scored on the dev splits
    with per-item predictions for paired comparisons.
``trend``
    BERT-tiny and EELBERT-tiny pre-trained for the profile's shorter lengths (``trend_pt_steps``) and fine-tuned the
    same way on the trend's tasks: how the gap moves with pre-training.
``scratch``
    The trend's pair fine-tuned from random weights (no pre-training) on the trend's tasks with the same protocol:
    what the pre-training adds to each model (the diagnosis of the GLUE comparison).
``claims``
    Every claim of the EELBERT abstract and the blog with its computed verdict (registered last: it reads the rest).
"""
from __future__ import annotations

import pandas as pd

from hashlib_core.chapter import Chapter, RunContext
from hashlib_core.papers.dynamic_embeddings.profiles import MODELS, PROFILES
from hashlib_core.papers.dynamic_embeddings.training import Resources

__all__ = ["CHAPTER"]

CHAPTER = Chapter("dynamic_embeddings", "Dynamic hash embeddings (EELBERT)", PROFILES, resources=Resources)
#: the trend's pair: the baseline and the dynamic model of the same backbone
TREND_MODELS = MODELS[:2]

_CORPUS = ("corpus", "corpus_max_words")
_PRETRAINING = ("models", "seq_len", "pt_steps", "pt_batch", "pt_lr", "pt_warmup", "seed")
_FINETUNING = ("tasks", "ft_train_examples", "ft_validation_examples", "ft_eval_examples", "ft_epochs",
               "ft_patience", "ft_batch", "ft_lrs", "ft_sweep_task", "ft_max_len", "ft_seeds")
_TREND = ("trend_pt_steps", "trend_tasks")
_TRAINING = _CORPUS + _PRETRAINING + _FINETUNING + _TREND
_PROPERTIES = ("random_pairs", "prefix_length")


@CHAPTER.experiment("properties", outputs=("properties", "similarity"),
                    independent_of=tuple(k for k in _TRAINING if k not in _CORPUS))
def _properties(ctx: RunContext) -> dict:
    """The blog's three properties, measured on the profile's embedding (d = 128)."""
    from hashlib_core.papers.dynamic_embeddings.properties import property_checks, similarity_groups

    res: Resources = ctx.resources
    return {"properties": property_checks(res.profile),
            "similarity": similarity_groups(res.profile, res.corpus)}


@CHAPTER.experiment("sizes", outputs=("sizes", "uno_shapes"),
                    independent_of=_TRAINING + _PROPERTIES + ("max_n", "hash_buckets", "hash_seed"))
def _sizes(ctx: RunContext) -> dict:
    """Parameters and megabytes of the paper-scale models (meta device), and the shapes that would fit the
    abstract's 1.2 MB and 15x."""
    from hashlib_core.papers.dynamic_embeddings.sizes import fitting_shapes, paper_sizes

    return {"sizes": paper_sizes(ctx.profile), "uno_shapes": fitting_shapes(ctx.profile)}


@CHAPTER.experiment("napkin", outputs=("napkin",), independent_of=_TRAINING + _PROPERTIES + (
    "max_n", "hash_buckets", "hash_seed", "projection"))
def _napkin(ctx: RunContext) -> dict:
    """The blog's arithmetic from the models' configurations."""
    from hashlib_core.papers.dynamic_embeddings.sizes import napkin

    return {"napkin": napkin()}


@CHAPTER.experiment("pretraining", outputs=("pretraining", "pretraining_curves"),
                    independent_of=_PROPERTIES + _FINETUNING + _TREND)
def _pretraining(ctx: RunContext) -> dict:
    """Pre-train every model of the profile (MLM)."""
    from hashlib_core.papers.dynamic_embeddings.training import pretrain

    rows, curves = [], []
    for spec in ctx.profile.selected():
        _, row, curve = pretrain(spec, ctx.resources, ctx)
        rows.append(row)
        curves += curve
    return {"pretraining": pd.DataFrame(rows), "pretraining_curves": pd.DataFrame(curves)}


@CHAPTER.experiment("glue", outputs=("glue", "glue_runs", "glue_predictions"), independent_of=_PROPERTIES + _TREND)
def _glue(ctx: RunContext) -> dict:
    """Fine-tune every pre-trained model (read back from its checkpoints) on every task with the protocol."""
    from hashlib_core.papers.dynamic_embeddings.tables import glue_table
    from hashlib_core.papers.dynamic_embeddings.training import finetune_tasks, pretrain

    res, tasks = ctx.resources, ctx.profile.task_keys()
    runs, record = [], {"labels": {}, "runs": []}
    for spec in ctx.profile.selected():
        model, _, _ = pretrain(spec, res, ctx)
        table, preds = finetune_tasks(spec, model, res, ctx, tasks)
        runs.append(table)
        record["labels"].update(preds["labels"])
        record["runs"] += preds["runs"]
    runs = pd.concat(runs, ignore_index=True)
    return {"glue": glue_table(runs, tasks), "glue_runs": runs, "glue_predictions": record}


@CHAPTER.experiment("trend", outputs=("trend_pretraining", "trend_runs", "trend_predictions"),
                    independent_of=_PROPERTIES, when=lambda p: bool(p.trend_pt_steps))
def _trend(ctx: RunContext) -> dict:
    """BERT-tiny and EELBERT-tiny after each shorter pre-training length, fine-tuned on the trend's tasks."""
    from hashlib_core.papers.dynamic_embeddings.training import finetune_tasks, pretrain

    res, tasks = ctx.resources, ctx.profile.task_keys(trend=True)
    rows, runs, record = [], [], {"labels": {}, "runs": []}
    for steps in ctx.profile.trend_pt_steps:
        for spec in TREND_MODELS:
            model, row, _ = pretrain(spec, res, ctx, steps=steps)
            rows.append(row)
            table, preds = finetune_tasks(spec, model, res, ctx, tasks, pretrained_steps=steps)
            runs.append(table.assign(pt_steps=steps))
            record["labels"].update(preds["labels"])
            record["runs"] += preds["runs"]
    return {"trend_pretraining": pd.DataFrame(rows), "trend_runs": pd.concat(runs, ignore_index=True),
            "trend_predictions": record}


@CHAPTER.experiment("scratch", outputs=("scratch_runs", "scratch_predictions"), independent_of=_PROPERTIES,
                    when=lambda p: bool(p.trend_pt_steps))
def _scratch(ctx: RunContext) -> dict:
    """BERT-tiny and EELBERT-tiny from random weights (the seed's initialisation, no pre-training), fine-tuned on
    the trend's tasks exactly as the pre-trained ones (named ``<model> @ 0 steps``)."""
    from hashlib_core.papers.dynamic_embeddings.training import finetune_tasks, random_weights

    res, tasks = ctx.resources, ctx.profile.task_keys(trend=True)
    runs, record = [], {"labels": {}, "runs": []}
    for spec in TREND_MODELS:
        table, preds = finetune_tasks(spec, random_weights(spec, res), res, ctx, tasks, pretrained_steps=0)
        runs.append(table.assign(pt_steps=0))
        record["labels"].update(preds["labels"])
        record["runs"] += preds["runs"]
    return {"scratch_runs": pd.concat(runs, ignore_index=True), "scratch_predictions": record}


from hashlib_core.papers.dynamic_embeddings.claims import CLAIMS  # noqa: E402  (registered last: it reads the rest)

CLAIMS.register(CHAPTER)
