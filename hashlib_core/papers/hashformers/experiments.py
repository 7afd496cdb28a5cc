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
``pretraining``
    Every model pre-trained on the corpus (:mod:`~hashlib_core.papers.hashformers.pretraining`); the weights stay in
    the run's checkpoints.
``glue_baselines``, ``glue_md``, ``glue_lsh``
    Table 1's fine-tuning, one model group each (each under an hour in the cpu profile): every pre-trained model
    fine-tuned and scored on GLUE dev sets with the paper's metrics (:mod:`~hashlib_core.papers.hashformers.
    finetuning`): early stopping and the learning rate chosen on a held-out part of each task's training split,
    several seeds, per-item predictions.
``glue_proformer``
    Table 1's ProFormer (setting ``proformer``), not pre-trained: fine-tuned from random weights with the same
    protocol.
``glue``
    Table 1 and the PRR columns of Table 2, scaled down: the fine-tuning parts' runs merged (no training).
``add_diagnosis``
    Why Add stored as the paper's codebooks stays at the majority class at our learning rates: the norms of its
    shared and word parts, how far Adam moves the shared part against the hashed-word marker, and the codebook
    models (as they are, and with no gradient into the shared part) fine-tuned beside Table 1's Add, which stores
    only the T differences (:mod:`~hashlib_core.papers.hashformers.add_diagnosis`).
``table6``
    Table 6: MD/LSH Emb and Proj with BPE subwords as the hashed units instead of words.
``trend``
    The headline comparison (LSH-Proj against BERT-MLM) after shorter pre-training runs: which way the gap moves.
``majority``
    Why the BERT baselines stay at the majority class on CoLA and MRPC: BERT-MLM's masked-piece loss beside the
    no-context floor, BERT-MLM fine-tuned on more data from pre-trained and from random weights (training, held-out
    and dev scores), and a bag-of-pieces logistic regression (:mod:`~hashlib_core.papers.hashformers.majority`).
``timing``
    Table 3: pre-training and inference time per sample (:mod:`~hashlib_core.papers.hashformers.timing`).
``claims``
    The paper's claims with verdicts computed from the results above
    (:mod:`~hashlib_core.papers.hashformers.claims`; registered last).
"""
from __future__ import annotations

import dataclasses

import pandas as pd
import torch

from hashlib_core.chapter import Chapter, RunContext
from hashlib_core.papers.hashformers.add_diagnosis import add_parts
from hashlib_core.papers.hashformers.analysis import bucket_sharing, md5_example, morphology
from hashlib_core.papers.hashformers.data import Resources
from hashlib_core.papers.hashformers.finetuning import (finetune_tasks, glue_runs, glue_table, predictions_record,
                                                        trend_name)
from hashlib_core.papers.hashformers.majority import bag_reference, diagnosis_runs, mlm_floor
from hashlib_core.papers.hashformers.pretraining import pretrain
from hashlib_core.papers.hashformers.profiles import (ADD_DIAGNOSIS_MODELS, LSH_GROUP, MD_GROUP, MODELS,
                                                      PRETRAINING_SETTINGS, PROFILES, PROFORMER, TABLE6_MODELS,
                                                      TREND_MODELS, HashFormersProfile)
from hashlib_core.profiles import RUN_SETTINGS
from hashlib_core.papers.hashformers.table2 import hashformers_table2
from hashlib_core.papers.hashformers.timing import timing_table

__all__ = ["CHAPTER"]

CHAPTER = Chapter("hashformers", "HashFormers", PROFILES, resources=lambda ctx: Resources(ctx.profile))

#: the majority diagnosis's own settings: no other experiment reads them
_DIAGNOSIS_SETTINGS = ("diag_tasks", "diag_train_examples", "diag_epochs", "diag_patience")

#: settings pre-training never reads (fine-tuning, scoring, the trend's and Table 3's): changing one leaves the
#: pre-training results current
_FINETUNING_SETTINGS = tuple(f.name for f in dataclasses.fields(HashFormersProfile)
                             if f.name not in PRETRAINING_SETTINGS and f.name not in RUN_SETTINGS
                             and f.name not in ("models", "checkpoint_every"))


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


@CHAPTER.experiment("pretraining", outputs=("pretraining", "pretraining_curves"),
                    independent_of=_FINETUNING_SETTINGS)
def _pretraining(ctx: RunContext) -> dict:
    """Pre-train every selected model on the corpus (S+R; BERT-MLM with masked language modelling); the weights stay
    in the run's checkpoints for the experiments that fine-tune them."""
    rows, curves = [], []
    for spec in ctx.profile.selected():
        _, row, curve = pretrain(spec, ctx.resources, ctx, count_reuse=True)
        rows.append(row)
        curves += curve
    return {"pretraining": pd.DataFrame(rows), "pretraining_curves": pd.DataFrame(curves)}


#: the fine-tuning is cut in three experiments by model group (each under an hour in the cpu profile), then merged
GLUE_PARTS = {"glue_baselines": "-", "glue_md": MD_GROUP, "glue_lsh": LSH_GROUP}


def _glue_part(part: str, group: str):
    def run(ctx: RunContext) -> dict:
        """Fine-tune the pre-trained models of one group (read back from their checkpoints, pre-trained again only
        when missing): early stopping and the learning rate on a held-out part of the training split, every seed
        at the chosen rate, the dev predictions kept for paired comparisons."""
        tasks = ctx.profile.task_keys()
        specs = [m for m in ctx.profile.selected() if m.group == group]
        summary, _, runs, predictions = glue_runs(specs, ctx.resources, ctx, tasks)
        return {f"{part}_summary": summary, f"{part}_runs": runs, f"{part}_predictions": predictions}
    return run


for name, group in GLUE_PARTS.items():
    CHAPTER.experiment(name, outputs=(f"{name}_summary", f"{name}_runs", f"{name}_predictions"),
                       when=lambda profile, group=group: any(m.group == group for m in profile.selected()))(
        _glue_part(name, group))


@CHAPTER.experiment("glue_proformer", outputs=("glue_proformer_summary", "glue_proformer_runs",
                                               "glue_proformer_predictions"),
                    when=lambda profile: profile.proformer and bool(profile.selected((PROFORMER,))),
                    owns=("proformer",))
def _glue_proformer(ctx: RunContext) -> dict:
    """Table 1's ProFormer, not pre-trained: fine-tuned from random weights on every task with the same protocol as
    the pre-trained models (every run draws its own weights with its seed)."""
    summary, _, runs, predictions = glue_runs([PROFORMER], ctx.resources, ctx, ctx.profile.task_keys())
    return {"glue_proformer_summary": summary, "glue_proformer_runs": runs,
            "glue_proformer_predictions": predictions}


#: every fine-tuning part the merge reads, in Table 1's order: the baselines, ProFormer (where the profile trains
#: it), the HashFormers
_MERGED_PARTS = ("glue_baselines", "glue_proformer", "glue_md", "glue_lsh")
assert set(_MERGED_PARTS) == {*GLUE_PARTS, "glue_proformer"}
_GLUE_PART_OUTPUTS = tuple(f"{n}_{kind}" for n in _MERGED_PARTS for kind in ("summary", "runs", "predictions"))


@CHAPTER.experiment("glue", outputs=("glue_runs", "glue", "glue_predictions"), reads=_GLUE_PART_OUTPUTS)
def _glue(ctx: RunContext) -> dict:
    """Table 1 and Table 2's PRR columns from the three groups' fine-tuning and ProFormer's (merged in the models'
    order): every run, the table of mean scores, and the dev predictions."""
    evidence = ctx.evidence()
    parts = [n for n in _MERGED_PARTS if CHAPTER.experiments[n].enabled(ctx.profile) and evidence.has(f"{n}_runs")]
    if not parts:
        raise RuntimeError(f"no fine-tuning runs to merge: run the experiments {', '.join(GLUE_PARTS)} first (for "
                           "example --only " + ",".join(GLUE_PARTS) + ", which also reruns glue)")
    summary = pd.concat([evidence.table(f"{n}_summary") for n in parts], ignore_index=True)
    runs = pd.concat([evidence.table(f"{n}_runs") for n in parts], ignore_index=True)
    records = [evidence.json(f"{n}_predictions") for n in parts]
    predictions = {"labels": records[0]["labels"], "runs": [r for rec in records for r in rec["runs"]]}
    tasks = ctx.profile.task_keys()
    return {"glue_runs": runs, "glue": glue_table(summary, runs, tasks), "glue_predictions": predictions}


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
    summary, _, runs, _ = glue_runs(codebooks, ctx.resources, ctx, tasks, owns_pretraining=True)
    return {"add_parts": add_parts([*specs, *codebooks], ctx.resources, ctx),
            "add_codebooks": glue_table(summary, runs, tasks)}


@CHAPTER.experiment("table6", outputs=("table6", "table6_predictions"),
                    when=lambda profile: profile.table6 and bool(profile.selected(TABLE6_MODELS)))
def _table6(ctx: RunContext) -> dict:
    """Table 6: the Emb (50K) and Proj HashFormers with BPE subwords as units (their dev predictions kept, to compare
    each with its word-unit model item by item)."""
    tasks = ctx.profile.task_keys(table6=True)
    summary, _, runs, predictions = glue_runs(ctx.profile.selected(TABLE6_MODELS), ctx.resources, ctx, tasks,
                                              owns_pretraining=True)
    return {"table6": glue_table(summary, runs, tasks), "table6_predictions": predictions}


@CHAPTER.experiment("trend", outputs=("trend_runs", "trend_predictions"),
                    when=lambda profile: bool(profile.trend_pt_steps) and bool(profile.selected(TREND_MODELS)))
def _trend(ctx: RunContext) -> dict:
    """The headline comparison (LSH-Proj against BERT-MLM) after shorter pre-training runs (``trend_pt_steps``, each
    with its own schedule), fine-tuned and tuned exactly as Table 1's models: which way the gap moves as
    pre-training grows (the profile's own length is Table 1's run)."""
    res, profile = ctx.resources, ctx.profile
    tasks = profile.task_keys(trend=True)
    rows, preds = [], {}
    for steps in profile.trend_pt_steps:
        for spec in profile.selected(TREND_MODELS):
            model, summary, _ = pretrain(spec, res, ctx, steps=steps, count_reuse=True)
            runs, by_task = finetune_tasks(spec, model, res, ctx, tasks, pretrained_steps=steps)
            rows += [{**r, "pt_steps": steps, "pt_final_loss": summary["final_loss"]} for r in runs]
            preds.update({(trend_name(spec.name, steps), task, seed): p for (task, seed), p in by_task.items()})
            del model
    return {"trend_runs": pd.DataFrame(rows), "trend_predictions": predictions_record(preds, res, tasks)}


def _diagnosed(profile) -> bool:
    return bool(profile.diag_tasks) and any(m.name == "BERT-MLM" for m in profile.selected())


@CHAPTER.experiment("majority", outputs=("majority_floor", "majority_runs", "majority_bags"), when=_diagnosed,
                    reads=("glue_baselines_runs",), owns=_DIAGNOSIS_SETTINGS)
def _majority(ctx: RunContext) -> dict:
    """Why the baselines stay at the majority class: BERT-MLM's masked-piece loss beside the no-context floor, BERT-MLM
    fine-tuned at the learning rate its sweep chose (Table 1's runs) on ``diag_train_examples`` examples of each
    ``diag_tasks`` task from its pre-trained and from random weights, and a bag-of-pieces logistic regression."""
    res = ctx.resources
    spec = next(m for m in MODELS if m.name == "BERT-MLM")
    runs = ctx.evidence().table("glue_baselines_runs")
    chosen = runs[(runs["name"] == spec.name) & runs["chosen"].astype(bool)]
    if chosen.empty:
        raise RuntimeError("the majority diagnosis fine-tunes BERT-MLM at the learning rate its sweep chose: run the "
                           "experiment glue_baselines first (--only glue_baselines,majority)")
    model, summary, curve = pretrain(spec, res, ctx)
    return {"majority_floor": mlm_floor(res, summary, curve),
            "majority_runs": diagnosis_runs(spec, model, res, ctx, float(chosen["learning_rate"].iloc[0])),
            "majority_bags": bag_reference(res, ctx.profile.diag_task_keys())}


@CHAPTER.experiment("timing", outputs=("timing",))
def _timing(ctx: RunContext) -> dict:
    """Table 3, every model timed in this one process on the profile's device."""
    p = ctx.profile
    return {"timing": timing_table(ctx.resources, ctx.device, base_repeats=p.timing_base_repeats,
                                   base_batch=p.timing_base_batch)}



from hashlib_core.papers.hashformers.claims import CLAIMS  # noqa: E402  (registered last: it reads the rest)

CLAIMS.register(CHAPTER)
