"""The HashFormers chapter's experiments, registered on the chapter skeleton.

Each experiment writes ``results/hashformers/<profile>/<name>.csv``; run them with
``python -m hashlib_core.papers.hashformers --profile P [--only a,b]``.

``table2``
    Table 2's memory columns counted from instantiated BERT-base-sized modules
    (:func:`~hashlib_core.papers.hashformers.table2.hashformers_table2`).
``hashes``
    The MD5 digests §3.2 prints beside plain MD5 and the released HMAC-MD5 (key ``b"en"``); how MD5 and LSH spread
    the corpus vocabulary over N buckets; how close they put morphological variants
    (:mod:`~hashlib_core.papers.hashformers.analysis`).
``glue``
    Table 1 and the PRR columns of Table 2, scaled down: every model pre-trained on the corpus
    (:mod:`~hashlib_core.papers.hashformers.pretraining`), then fine-tuned and scored on GLUE dev sets with the
    paper's metrics, over several seeds (:mod:`~hashlib_core.papers.hashformers.finetuning`).
``add_diagnosis``
    Why Add stored as the paper's codebooks stays at the majority class at our learning rates: the norms of its
    shared and word parts, how far Adam moves the shared part against the hashed-word marker, and the codebook
    models (as they are, and with no gradient into the shared part) fine-tuned beside Table 1's Add, which stores
    only the T differences (:mod:`~hashlib_core.papers.hashformers.add_diagnosis`).
``table6``
    Table 6: MD/LSH Emb and Proj with BPE subwords as the hashed units instead of words.
``timing``
    Table 3: pre-training and inference time per sample (:mod:`~hashlib_core.papers.hashformers.timing`).
``claims``
    The paper's claims with verdicts computed from the results above
    (:mod:`~hashlib_core.papers.hashformers.claims`; registered last).
"""
from __future__ import annotations

import torch

from hashlib_core.chapter import Chapter, RunContext
from hashlib_core.papers.hashformers.add_diagnosis import add_parts
from hashlib_core.papers.hashformers.analysis import bucket_sharing, md5_example, morphology
from hashlib_core.papers.hashformers.data import Resources
from hashlib_core.papers.hashformers.finetuning import glue_runs, glue_table
from hashlib_core.papers.hashformers.profiles import ADD_DIAGNOSIS_MODELS, PROFILES, TABLE6_MODELS
from hashlib_core.papers.hashformers.table2 import hashformers_table2
from hashlib_core.papers.hashformers.timing import timing_table

__all__ = ["CHAPTER"]

CHAPTER = Chapter("hashformers", "HashFormers", PROFILES, resources=lambda ctx: Resources(ctx.profile))


@CHAPTER.experiment("table2", outputs=("table2",))
def _table2(ctx: RunContext) -> dict:
    """Table 2's memory columns (BERT-base-sized modules on the meta device; the same in every profile)."""
    with torch.no_grad():
        return {"table2": hashformers_table2()}


@CHAPTER.experiment("hashes", outputs=("md5_example", "bucket_sharing", "morphology"))
def _hashes(ctx: RunContext) -> dict:
    """MD5 example, bucket sharing over the corpus vocabulary and morphological families (no training)."""
    res, profile = ctx.resources, ctx.profile
    counts: dict[str, int] = {}
    for w in res.word_stream:
        counts[w] = counts.get(w, 0) + 1
    words = sorted(counts, key=lambda w: (-counts[w], w))
    if profile.sharing_words:
        words = words[: profile.sharing_words]
    return {"md5_example": md5_example(),
            "bucket_sharing": bucket_sharing(words, res.feature_bpe, profile.sharing_buckets),
            "morphology": morphology(res.feature_bpe, profile.emb_buckets)}


@CHAPTER.experiment("glue", outputs=("pretraining", "pretraining_curves", "glue_runs", "glue"))
def _glue(ctx: RunContext) -> dict:
    """Pre-train and fine-tune every selected model (Table 1, Table 2's PRR)."""
    tasks = ctx.profile.task_keys()
    summary, curves, runs = glue_runs(ctx.profile.selected(), ctx.resources, ctx, tasks)
    return {"pretraining": summary, "pretraining_curves": curves, "glue_runs": runs,
            "glue": glue_table(summary, runs, tasks)}


def _add_models(profile) -> list:
    return [m for m in profile.selected() if m.embedding_type == "add"]


@CHAPTER.experiment("add_diagnosis", outputs=("add_parts", "add_codebooks"),
                    when=lambda profile: bool(_add_models(profile)))
def _add_diagnosis(ctx: RunContext) -> dict:
    """Add's shared and word parts, and the Add models stored as the paper's codebooks (as they are and with the
    shared part frozen), fine-tuned on SST-2 (or the profile's first task when SST-2 is not among them)."""
    specs = _add_models(ctx.profile)
    tasks = ctx.profile.task_keys()
    tasks = ["sst2"] if "sst2" in tasks else tasks[:1]
    codebooks = [m for m in ADD_DIAGNOSIS_MODELS if m.hash_type in {s.hash_type for s in specs}]
    summary, _, runs = glue_runs(codebooks, ctx.resources, ctx, tasks)
    return {"add_parts": add_parts([*specs, *codebooks], ctx.resources, ctx),
            "add_codebooks": glue_table(summary, runs, tasks)}


@CHAPTER.experiment("table6", outputs=("table6",), when=lambda profile: profile.table6)
def _table6(ctx: RunContext) -> dict:
    """Table 6: the Emb (50K) and Proj HashFormers with BPE subwords as units."""
    tasks = ctx.profile.task_keys(table6=True)
    summary, _, runs = glue_runs(TABLE6_MODELS, ctx.resources, ctx, tasks)
    return {"table6": glue_table(summary, runs, tasks)}


@CHAPTER.experiment("timing", outputs=("timing",))
def _timing(ctx: RunContext) -> dict:
    """Table 3, every model timed in this one process on the profile's device."""
    return {"timing": timing_table(ctx.resources, ctx.device)}



from hashlib_core.papers.hashformers.claims import CLAIMS  # noqa: E402  (registered last: it reads the rest)

CLAIMS.register(CHAPTER)
