"""The Superbloom chapter's experiments, registered on the chapter skeleton.

Each writes ``results/superbloom/<profile>/<name>.csv``; run them with
``python -m hashlib_core.papers.superbloom --profile P [--only a,b]``.

``recall``
    Table 3 analog ("hashing needs depth"): the baseline and Superbloom at two depths, trained with item masking,
    scored by recall@k on one masked id per test segment (Algorithm 1, beam = k); per-segment hits with the target's
    label frequency (for Fig. 3's deciles), the models' sizes, and their training curves.
``beam_width``
    Appendix B: the deep Superbloom model's recall@k and candidates scored when Algorithm 1 stops after one
    iteration at beam widths 1 .. k (approximate), against the certified search.
``other_datasets``
    The deep baseline and the deep Superbloom model trained and scored the same way on each of the profile's
    ``other_datasets`` (Last.fm's user -> artist sets), with their training curves.
``params``
    Tables 1 and 3's parameter columns at the paper's vocabularies (meta device).
``language``
    §4 (Tables 4 and 5): unhashed baselines and Superbloom models of similar sizes on masked-token prediction over a
    unigram + bigram vocabulary of WikiText-2 (:mod:`~hashlib_core.papers.superbloom.language`).
"""
from __future__ import annotations

from typing import Any

import pandas as pd

from hashlib_core.chapter import Chapter, RunContext
from hashlib_core.papers.superbloom.profiles import PROFILES
from hashlib_core.papers.superbloom.tables import recall_table
from hashlib_core.papers.superbloom.training import Resources, evaluate, label_frequency, train_model

__all__ = ["CHAPTER"]


class _Resources(Resources):
    """Also keeps each trained model for the run's other experiments."""

    def trained(self, spec) -> tuple[Any, dict, list]:
        cache = self.__dict__.setdefault("_trained", {})
        if spec.name not in cache:
            cache[spec.name] = train_model(spec, self, self.ctx)
        return cache[spec.name]


CHAPTER = Chapter("superbloom", "Superbloom", PROFILES, resources=_Resources)


_LANGUAGE_ONLY = ("lm_wordpiece", "lm_unigrams", "lm_bigrams", "lm_alpha", "lm_window", "lm_baseline_dims",
                  "lm_superbloom_dims", "lm_layers", "lm_steps", "lm_batch", "lm_test_windows")
_MAIN_SETS_ONLY = (*_LANGUAGE_ONLY, "other_datasets", "other_steps")


@CHAPTER.experiment("recall", outputs=("recall", "recall_segments", "models", "curves"),
                    independent_of=_MAIN_SETS_ONLY)
def _recall(ctx: RunContext) -> dict:
    res: _Resources = ctx.resources
    ks = res.profile.recall_at
    frequency = label_frequency(res)
    rows, segs, curves = [], [], []
    for spec in res.profile.models():
        model, row, curve = res.trained(spec)
        hits = evaluate(model.to(ctx.device), res, ks)
        hits.insert(0, "name", spec.name)
        hits["label_frequency"] = frequency[hits["target"].to_numpy()]
        rows.append(row)
        segs.append(hits)
        curves += curve
    segments = pd.concat(segs, ignore_index=True)
    return {"recall": recall_table(segments, ks), "recall_segments": segments, "models": pd.DataFrame(rows),
            "curves": pd.DataFrame(curves)}


@CHAPTER.experiment("beam_width", outputs=("beam_width",), independent_of=_MAIN_SETS_ONLY)
def _beam_width(ctx: RunContext) -> dict:
    res: _Resources = ctx.resources
    spec = [s for s in res.profile.models() if s.alpha > 1][-1]          # the deep Superbloom model
    model, _, _ = res.trained(spec)
    ks = res.profile.recall_at
    widths = sorted({1, 2, 5, *ks})
    rows = []
    for width in widths:
        hits = evaluate(model.to(ctx.device), res, ks, beam=width, max_iterations=1)
        rows.append({"name": spec.name, "beam": width, **{f"rec@{k}": 100.0 * hits[f"hit@{k}"].mean() for k in ks},
                     "certified_%": 100.0 * hits["certified"].mean(), "mean_scored": hits["scored"].mean()})
    return {"beam_width": pd.DataFrame(rows)}


@CHAPTER.experiment("other_datasets", outputs=("recall_datasets", "datasets_models", "datasets_curves"),
                    when=lambda profile: bool(profile.other_datasets), independent_of=(*_LANGUAGE_ONLY, "dataset"))
def _other_datasets(ctx: RunContext) -> dict:
    """The deep baseline and deep Superbloom model on each of ``other_datasets`` (trained and scored as ``recall``)."""
    ks = ctx.profile.recall_at
    recalls, rows, curves = [], [], []
    for dataset in ctx.profile.other_datasets:
        res = Resources(ctx, dataset)
        segs = []
        for spec in ctx.profile.deep_models():
            model, row, curve = train_model(spec, res, ctx, steps=ctx.profile.other_steps or None)
            hits = evaluate(model.to(ctx.device), res, ks)
            hits.insert(0, "name", spec.name)
            segs.append(hits)
            rows.append({"dataset": res.sets.name, "train_pages": len(res.pages[0]), "test_pages": len(res.pages[1]),
                         "test_segments": len(res.test.segments), **row})
            curves += [{"dataset": res.sets.name, **c} for c in curve]
        table = recall_table(pd.concat(segs, ignore_index=True), ks)
        table.insert(0, "dataset", res.sets.name)
        recalls.append(table)
    return {"recall_datasets": pd.concat(recalls, ignore_index=True), "datasets_models": pd.DataFrame(rows),
            "datasets_curves": pd.DataFrame(curves)}


@CHAPTER.experiment("params", outputs=("params",), independent_of=(
    "dataset", "test_share", "segment", "alpha", "num_hashes", "hidden", "heads", "intermediate", "layers_shallow",
    "layers_deep", "steps", "batch", "learning_rate", "warmup", "sampled_share", "recall_at", "test_pages", "seed",
    *_MAIN_SETS_ONLY))
def _params(ctx: RunContext) -> dict:
    """Tables 1 and 3's parameter columns at the paper's vocabularies (meta device)."""
    from hashlib_core.papers.superbloom.params import paper_params

    return {"params": paper_params()}


_SET_ONLY = ("dataset", "other_datasets", "other_steps", "test_share",
             "segment", "alpha", "hidden", "intermediate", "layers_shallow", "layers_deep",
             "steps", "batch", "sampled_share", "test_pages")


@CHAPTER.experiment("language", outputs=("language", "language_models", "language_curves"),
                    independent_of=_SET_ONLY)
def _language(ctx: RunContext) -> dict:
    """§4 (Tables 4 and 5): masked-token prediction on WikiText-2 with a unigram + bigram vocabulary."""
    from hashlib_core.papers.superbloom.training import LanguageResources

    res = LanguageResources(ctx)
    p = res.profile
    rows, segs, curves = [], [], []
    for spec in p.language_models():
        model, row, curve = train_model(spec, res, ctx, steps=p.lm_steps, batch=p.lm_batch)
        hits = evaluate(model.to(ctx.device), res, p.recall_at)
        hits.insert(0, "name", spec.name)
        rows.append({**row, "vocabulary": len(res.vocab), "wordpiece_pieces": res.vocab.pieces,
                     "unigrams": res.vocab.unigrams, "bigrams": res.vocab.bigrams,
                     "train_windows": len(res.train_segments)})
        segs.append(hits)
        curves += curve
    return {"language": recall_table(pd.concat(segs, ignore_index=True), p.recall_at),
            "language_models": pd.DataFrame(rows), "language_curves": pd.DataFrame(curves)}
