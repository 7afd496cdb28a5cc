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
    ``other_datasets`` (Last.fm's user -> artist sets), with their training curves, and Appendix E's examples: the
    first ``examples`` test segments with each model's best five ids, named where the data has names.
``decoding``
    §2.5 at the paper's |S| with a trained model: the deep Superbloom model trained again inside an id space of
    ``decode_ids`` ids, its recall, and exhaustive scoring against certified beam search timed on its distributions.
``params``
    Tables 1 and 3's parameter columns at the paper's vocabularies (meta device).
``language``
    §4 (Tables 4 and 5): unhashed baselines and Superbloom models of similar sizes on masked-token prediction over a
    unigram + bigram vocabulary of WikiText-2 (:mod:`~hashlib_core.papers.superbloom.language`).
``language_prior``
    §4's yardstick: what a predictor that reads no context reaches on the same test windows (the tokens ranked by
    their training frequency, and by their test frequency as an upper bound), to read the models' recall against.
``claims``
    Every claim of the paper with its computed verdict, from the results above
    (:mod:`~hashlib_core.papers.superbloom.claims`).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import torch

from hashlib_core.chapter import Chapter, RunContext
from hashlib_core.papers.superbloom.data import display_names
from hashlib_core.papers.superbloom.profiles import PROFILES
from hashlib_core.papers.superbloom.tables import EXAMPLE_COLUMNS, example_row, recall_table
from hashlib_core.papers.superbloom.training import (
    Resources,
    evaluate,
    example_predictions,
    label_frequency,
    test_log_probs,
    train_model,
)

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
_DECODE_ONLY = ("decode_ids", "decode_steps", "decode_positions", "decode_repeats")
_MAIN_SETS_ONLY = (*_LANGUAGE_ONLY, *_DECODE_ONLY, "other_datasets", "other_steps", "examples")
#: Appendix E's examples: the best ids shown per example, and the depth within which the target's rank is given
_SHOWN, _RANK_WITHIN = 5, 100


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


@CHAPTER.experiment("other_datasets", outputs=("recall_datasets", "datasets_models", "datasets_curves",
                                               "datasets_examples"),
                    when=lambda profile: bool(profile.other_datasets),
                    independent_of=(*_LANGUAGE_ONLY, *_DECODE_ONLY, "dataset"))
def _other_datasets(ctx: RunContext) -> dict:
    """The deep baseline and deep Superbloom model on each of ``other_datasets`` (trained and scored as ``recall``),
    and Appendix E's examples: the first ``examples`` test segments with each model's best ids, named."""
    ks = ctx.profile.recall_at
    recalls, rows, curves, examples = [], [], [], []
    for dataset in ctx.profile.other_datasets:
        res = Resources(ctx, dataset)
        names, labels = display_names(res.sets)
        segs = []
        for spec in ctx.profile.deep_models():
            model, row, curve = train_model(spec, res, ctx, steps=ctx.profile.other_steps or None)
            hits = evaluate(model.to(ctx.device), res, ks)
            hits.insert(0, "name", spec.name)
            segs.append(hits)
            if ctx.profile.examples:
                shown = example_predictions(model, res, ctx.profile.examples, _SHOWN, _RANK_WITHIN)
                examples += [example_row(res.sets.name, spec.name, ex, names, labels) for ex in shown]
            rows.append({"dataset": res.sets.name, "train_pages": len(res.pages[0]), "test_pages": len(res.pages[1]),
                         "test_segments": len(res.test.segments), **row})
            curves += [{"dataset": res.sets.name, **c} for c in curve]
        table = recall_table(pd.concat(segs, ignore_index=True), ks)
        table.insert(0, "dataset", res.sets.name)
        recalls.append(table)
    return {"recall_datasets": pd.concat(recalls, ignore_index=True), "datasets_models": pd.DataFrame(rows),
            "datasets_curves": pd.DataFrame(curves),
            "datasets_examples": pd.DataFrame(examples, columns=EXAMPLE_COLUMNS)}


@CHAPTER.experiment("decoding", outputs=("decoding_trained",), when=lambda profile: profile.decode_ids > 0,
                    independent_of=(*_LANGUAGE_ONLY, "other_datasets", "other_steps", "examples"))
def _decoding(ctx: RunContext) -> dict:
    """§2.5 at the paper's |S| with a trained model: the deep Superbloom model trained on the main dataset's sets in
    an id space of ``decode_ids`` ids, scored like ``recall`` (certified beam search), then exhaustive scoring and
    beam search timed in alternation on its distributions at ``decode_positions`` test positions."""
    from hashlib_core.benchmarks.superbloom_decoding import compare_decoders

    res: _Resources = ctx.resources
    p = res.profile
    spec = [s for s in p.deep_models() if s.alpha > 1][-1]
    model, row, _ = train_model(spec, res, ctx, steps=p.decode_steps or None, num_ids=p.decode_ids)
    model = model.to(ctx.device)
    hits = evaluate(model, res, p.recall_at)
    log_probs = test_log_probs(model, res, p.decode_positions)
    rows = []
    for k in p.recall_at:
        timing = compare_decoders(log_probs, model.maps, k, p.decode_repeats, ctx.device)
        low, high = timing.pop("speedup_range_paired")
        rows.append({"name": spec.name, "num_ids": p.decode_ids, "data_ids": res.sets.num_ids,
                     "tokens_per_map": model.maps.tokens_per_map, "steps": row["steps"],
                     "final_loss": row["final_loss"], "test_segments": len(hits),
                     **{f"rec@{c}": 100.0 * hits[f"hit@{c}"].mean() for c in p.recall_at},
                     "recall_certified_%": 100.0 * hits["certified"].mean(),
                     "recall_mean_scored": hits["scored"].mean(), **timing,
                     "speedup_min_paired": low, "speedup_max_paired": high,
                     "train_wall_time_s": row["wall_time_s"], "train_resumed_from_step": row["resumed_from_step"],
                     "torch_threads": torch.get_num_threads()})
    return {"decoding_trained": pd.DataFrame(rows)}


@CHAPTER.experiment("params", outputs=("params",), independent_of=(
    "dataset", "test_share", "segment", "alpha", "num_hashes", "hidden", "heads", "intermediate", "layers_shallow",
    "layers_deep", "steps", "batch", "learning_rate", "warmup", "sampled_share", "recall_at", "test_pages", "seed",
    *_MAIN_SETS_ONLY))
def _params(ctx: RunContext) -> dict:
    """Tables 1 and 3's parameter columns at the paper's vocabularies (meta device)."""
    from hashlib_core.papers.superbloom.params import paper_params

    return {"params": paper_params()}


_SET_ONLY = ("dataset", "other_datasets", "other_steps", "examples", *_DECODE_ONLY, "test_share",
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


#: what the context-free yardstick reads: the vocabulary, the windows, the seed of the test masks and the cut-offs
_PRIOR_READS = ("lm_wordpiece", "lm_unigrams", "lm_bigrams", "lm_window", "lm_test_windows", "seed", "recall_at")


@CHAPTER.experiment("language_prior", outputs=("language_prior",), independent_of=tuple(
    k for k in PROFILES.get("smoke").to_dict() if k not in _PRIOR_READS))
def _language_prior(ctx: RunContext) -> dict:
    """§4's yardstick: recall@k of the context-free rankings (training-token frequency; test-target frequency, an
    oracle) on the ``language`` experiment's test windows; no model is trained."""
    from hashlib_core.papers.superbloom.language import context_free_recall
    from hashlib_core.papers.superbloom.training import LanguageResources

    res = LanguageResources(ctx)
    train_ids = np.concatenate(res.train_segments)              # the tokens the models train on
    return {"language_prior": pd.DataFrame(context_free_recall(train_ids, res.test.targets, res.vocab.tokens,
                                                               res.profile.recall_at))}


from hashlib_core.papers.superbloom.claims import CLAIMS  # noqa: E402  (registered last: it reads the rest)

CLAIMS.register(CHAPTER)
