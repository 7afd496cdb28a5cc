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
``glue``
    Every model pre-trained with masked-language modelling and fine-tuned on the profile's GLUE tasks and seeds.
``claims``
    Every claim of the EELBERT abstract and the blog with its computed verdict (registered last: it reads the rest).
"""
from __future__ import annotations


from hashlib_core.chapter import Chapter, RunContext
from hashlib_core.papers.dynamic_embeddings.profiles import PROFILES
from hashlib_core.papers.dynamic_embeddings.training import Resources

__all__ = ["CHAPTER"]

CHAPTER = Chapter("dynamic_embeddings", "Dynamic hash embeddings (EELBERT)", PROFILES, resources=Resources)

_TRAINING = ("vocab_size", "corpus_max_words", "models", "seq_len", "pt_steps", "pt_batch", "pt_lr", "pt_warmup",
             "tasks", "ft_train_examples", "ft_eval_examples", "ft_epochs", "ft_batch", "ft_lr", "ft_max_len",
             "ft_seeds", "seed")
_PROPERTIES = ("random_pairs", "prefix_length")


@CHAPTER.experiment("properties", outputs=("properties", "similarity"),
                    independent_of=tuple(k for k in _TRAINING if k not in ("vocab_size", "corpus_max_words")))
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


@CHAPTER.experiment("glue", outputs=("glue", "glue_runs", "pretraining", "pretraining_curves"),
                    independent_of=_PROPERTIES)
def _glue(ctx: RunContext) -> dict:
    """Pre-train every model (MLM) and fine-tune it on every task and seed of the profile."""
    from hashlib_core.papers.dynamic_embeddings.training import glue_runs, glue_table

    res: Resources = ctx.resources
    summary, curves, runs = glue_runs(res.profile.selected(), res, ctx)
    return {"glue": glue_table(runs, res.profile.task_keys()), "glue_runs": runs, "pretraining": summary,
            "pretraining_curves": curves}


from hashlib_core.papers.dynamic_embeddings.claims import CLAIMS  # noqa: E402  (registered last: it reads the rest)

CLAIMS.register(CHAPTER)
