"""The Superbloom chapter's experiments, registered on the chapter skeleton.

Each writes ``results/superbloom/<profile>/<name>.csv``; run them with
``python -m hashlib_core.papers.superbloom --profile P [--only a,b]``.

``recall_L<depth>``, ``recall_wide``
    Table 3's models trained in parts (each under an hour in the cpu profile): the matched pair at each depth (and
    at each further depth, one seed), and the one-layer Superbloom as large as the deepest; ``recall`` merges them.
``recall``
    Table 3 analog ("hashing needs depth"): Superbloom at each of the profile's depths and, beside it, the unhashed
    baseline of its size, and the one-layer Superbloom as large as the deepest (Table 3's d384l1), each trained until
    its validation loss stops improving at every learning rate of the sweep; the best rate on validation is kept and
    the rows the claims read get more seeds. Scored by recall@k on one masked id per test segment (Algorithm 1,
    beam = k): per-segment hits with the target's label frequency (Fig. 3's deciles), the sweep, the models' sizes,
    their training and validation curves, and the popularity ranking's recall (no model).
``matched``
    Table 1 at the baseline's size, the same way: an unhashed baseline whose id table dominates it, Superbloom at the
    width that saved table pays for, and the sampled-softmax model: unhashed at that Superbloom's width (much
    larger), trained on as many sampled ids as Superbloom scores hash tokens.
``beam_width``
    Appendix B: the deepest Superbloom model's recall@k and candidates scored when Algorithm 1 stops after one
    iteration at beam widths 1 .. k (approximate), against the certified search.
``other_datasets``
    The deepest matched pair trained (at the learning rates chosen on the main data, one seed) and scored the same
    way on each of the profile's ``other_datasets``, with Appendix E's examples
    (:mod:`~hashlib_core.papers.superbloom.experiments_datasets`).
``yardsticks``
    What each id set holds without training: the popularity and co-occurrence-count rankings' recall on its test
    segments (:mod:`~hashlib_core.papers.superbloom.yardsticks`).
``alpha``
    The hash's coarseness on a 41K-id set: Superbloom at each of ``alphas`` beside the baseline of its size
    (:mod:`~hashlib_core.papers.superbloom.experiments_alpha`).
``decoding``
    §2.5 at the paper's |S| with a trained model: the deepest Superbloom model trained again inside an id space of
    ``decode_ids`` ids, its recall, and exhaustive scoring against certified beam search timed on its distributions.
``longer``
    The claims' deep pair trained again with a longer cap (``longer_steps``), beside Table 3's runs
    (:mod:`~hashlib_core.papers.superbloom.experiments_longer`).
``train_time``
    §2.4: a training step of the same Transformer unhashed and as Superbloom, timed in alternation over the data's
    ids and larger id spaces (:mod:`~hashlib_core.papers.superbloom.experiments_speed`).
``params``
    Tables 1 and 3's parameter columns at the paper's vocabularies (meta device).
``language_d<width>``, ``language``
    §4 (Tables 4 and 5), trained per pair and merged: unhashed baselines and Superbloom models of similar sizes on
    masked-token prediction over a unigram + bigram vocabulary of Penn Treebank (:mod:`~hashlib_core.papers.superbloom.language`), each trained
    until its validation loss stops improving at each rate of the sweep, the best rate on validation kept, then
    more seeds.
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

from hashlib_core.chapter import Chapter, RunContext
from hashlib_core.papers.superbloom.experiments_alpha import ALPHA_OUTPUTS, ALPHA_SETTINGS, alpha_experiment
from hashlib_core.papers.superbloom.experiments_datasets import DATASETS_OUTPUTS, datasets_experiment
from hashlib_core.papers.superbloom.experiments_language import language_pair
from hashlib_core.papers.superbloom.experiments_longer import LONGER_OUTPUTS, LONGER_READS, longer_experiment
from hashlib_core.papers.superbloom.experiments_speed import decoding_rows, train_time_rows
from hashlib_core.papers.superbloom.profiles import PROFILES, ModelSpec
from hashlib_core.papers.superbloom.tables import recall_table
from hashlib_core.papers.superbloom.training import (
    chosen_rates,
    Resources,
    evaluate,
    label_frequency,
    popularity_recall,
    restored_seconds,
    scored,
    size_of,
    train_run,
)

__all__ = ["CHAPTER"]


class _Resources(Resources):
    """Also keeps each trained model (by name, learning rate and seed) and each model's chosen learning rate for the
    run's other experiments."""

    def fit(self, spec: ModelSpec, learning_rate: float, seed: int) -> tuple[Any, dict, list]:
        cache = self.__dict__.setdefault("_fits", {})
        key = (spec.name, learning_rate, seed)
        if key not in cache:
            cache[key] = train_run(spec, self, self.ctx, learning_rate, seed)
        return cache[key]

    def sweep(self, spec: ModelSpec) -> tuple[float, list[dict], list[dict]]:
        """Every learning rate of the profile at seed ``seed``: the rate with the best validation score (ties: the
        first listed), the rows and the curves."""
        rows, curves = [], []
        for lr in self.profile.learning_rates:
            _, row, curve = self.fit(spec, lr, self.profile.seed)
            rows.append(row)
            curves += curve
        best = max(range(len(rows)), key=lambda i: (rows[i]["best_validation"], -i))
        for i, row in enumerate(rows):
            row["chosen"] = i == best
        return rows[best]["learning_rate"], rows, curves

    def chosen(self, spec: ModelSpec) -> float:
        return self.sweep(spec)[0]


CHAPTER = Chapter("superbloom", "Superbloom", PROFILES, resources=_Resources)


#: §4's knobs; ``lm_learning_rate`` is retired (one rate, before the sweep): results written with it still record it
_LANGUAGE_ONLY = ("lm_learning_rate", "lm_wordpiece", "lm_unigrams", "lm_bigrams", "lm_alpha", "lm_window",
                  "lm_baseline_dims", "lm_layers", "lm_steps", "lm_batch", "lm_eval_every", "lm_learning_rates",
                  "lm_seeds", "lm_validation_windows", "lm_test_windows")
_DECODE_ONLY = ("decode_ids", "decode_steps", "decode_positions", "decode_repeats")
#: every profile setting (what an experiment that reads few of them lists as independent_of, less those it reads)
_PROFILE_KEYS = tuple(PROFILES.get("smoke").to_dict())
_MAIN_SETS_ONLY = (*_LANGUAGE_ONLY, *_DECODE_ONLY, *ALPHA_SETTINGS, "other_datasets", "other_steps", "examples")


def _fit_group(ctx: RunContext, names: list[str]) -> dict[str, pd.DataFrame]:
    """The models ``names``: the learning-rate sweep (seed ``seed``), then the claims' models again with more seeds
    at the chosen rate, each scored on the test segments. Returns the sweep rows, one row per (model, seed) at its
    chosen rate, the per-segment hits, the summary and the curves."""
    res: _Resources = ctx.resources
    p = res.profile
    ks = p.recall_at
    frequency = label_frequency(res)
    seeded = set(p.seeded())
    sweep, rows, segs, curves = [], [], [], []
    for name in names:
        spec = res.specs[name]
        lr, swept, swept_curves = res.sweep(spec)
        sweep += swept
        curves += swept_curves
        seeds = [p.seed + i for i in range(p.seeds if name in seeded else 1)]
        for seed in seeds:
            model, row, curve = res.fit(spec, lr, seed)
            if seed != p.seed:
                curves += curve
            hits = scored(model.to(ctx.device), res, ks, name, seed)
            hits["label_frequency"] = frequency[hits["target"].to_numpy()]
            rows.append({**row, "matched_params": (size_of(res.specs[spec.match], p, res.sets.num_ids)
                                                   if spec.match else np.nan)})
            segs.append(hits)
    # runs read back from a finished earlier process still cost this experiment their training time (each once)
    ctx.reuse(restored_seconds([*sweep, *rows]))
    segments = pd.concat(segs, ignore_index=True)
    models = pd.DataFrame(rows)
    return {"sweep": pd.DataFrame(sweep), "models": models, "segments": segments,
            "recall": recall_table(segments, ks, models), "curves": pd.DataFrame(curves)}


def _recall_names(profile) -> list[str]:
    """Table 3's models: the matched pair at every depth and the one-layer Superbloom as large as the deepest."""
    roles = profile.roles()
    return [m.name for m in profile.models() if m.name.startswith(("superbloom-L", "baseline-L"))
            or m.name == roles.get("superbloom_one_layer")]


#: Table 3's models are trained in parts, each under an hour in the cpu profile: the matched pair at each depth
#: (``recall_L<depth>``, for every depth and further depth some profile has) and the one-layer Superbloom as large as
#: the deepest (``recall_wide``); ``recall`` merges them. A part whose depth is some profile's further depth owns
#: ``further_depths``: the other experiments never read it (the merge sees the parts through their results)
_PART_KINDS = ("models", "sweep", "curves", "segments")
_FURTHER = {d for n in PROFILES.names for d in PROFILES.get(n).further_depths}
_DEPTH_PARTS = {f"recall_L{d}": d for d in sorted({d for n in PROFILES.names for d in PROFILES.get(n).depths}
                                                  | _FURTHER)}
_RECALL_PARTS = (*_DEPTH_PARTS, "recall_wide")


def _merged(ctx: RunContext, parts: list[str], what: str, merger: str) -> dict[str, pd.DataFrame]:
    """Each of :data:`_PART_KINDS` of the trained ``parts`` concatenated (``what``, ``merger``: the tables' and the
    merging experiment's names, for the error when a part has not run)."""
    evidence = ctx.evidence()
    missing = [part for part in parts if not evidence.has(f"{part}_models")]
    if missing:
        raise RuntimeError(f"{what}'s parts {missing} have no results: run them first (--only "
                           f"{','.join(parts)},{merger})")
    return {kind: pd.concat([evidence.table(f"{part}_{kind}") for part in parts], ignore_index=True)
            for kind in _PART_KINDS}


def _part_names(profile, part: str) -> list[str]:
    """The models of one part of Table 3's training (a profile's names; empty when the part is not in it)."""
    names = _recall_names(profile)
    if part == "recall_wide":
        wide = profile.roles().get("superbloom_one_layer")
        return [wide] if wide in names else []
    return [n for n in names if n in (f"superbloom-L{_DEPTH_PARTS[part]}", f"baseline-L{_DEPTH_PARTS[part]}")]


def _recall_part(part: str):
    def run(ctx: RunContext) -> dict:
        """Train and score one part of Table 3's models (the sweep, then the claims' seeds at the chosen rate)."""
        out = _fit_group(ctx, _part_names(ctx.profile, part))
        return {f"{part}_{kind}": out[kind] for kind in _PART_KINDS}
    return run


for _part in _RECALL_PARTS:
    CHAPTER.experiment(_part, outputs=tuple(f"{_part}_{kind}" for kind in _PART_KINDS),
                       when=lambda profile, part=_part: bool(_part_names(profile, part)),
                       independent_of=_MAIN_SETS_ONLY,
                       owns=("further_depths",) if _DEPTH_PARTS.get(_part) in _FURTHER else ())(_recall_part(_part))


@CHAPTER.experiment("recall", outputs=("recall", "recall_segments", "models", "sweep", "curves", "popularity"),
                    independent_of=_MAIN_SETS_ONLY,
                    reads=tuple(f"{part}_{kind}" for part in _RECALL_PARTS for kind in _PART_KINDS))
def _recall(ctx: RunContext) -> dict:
    """Table 3's parts merged (no training) and scored, and the popularity ranking's recall (no model)."""
    parts = {part: names for part in _RECALL_PARTS if (names := _part_names(ctx.profile, part))}
    lost = sorted(set(_recall_names(ctx.profile)) - {n for names in parts.values() for n in names})
    if lost:
        raise ValueError(f"Table 3's models {lost} have no training part: a depth must be in some profile's depths or "
                         f"further_depths (parts are registered per depth at import); add it to one")
    merged = _merged(ctx, list(parts), "Table 3", "recall")
    popularity = pd.DataFrame([popularity_recall(ctx.resources, ctx.profile.recall_at)])
    return {"recall": recall_table(merged["segments"], ctx.profile.recall_at, merged["models"]),
            "recall_segments": merged["segments"], "models": merged["models"], "sweep": merged["sweep"],
            "curves": merged["curves"], "popularity": popularity}


@CHAPTER.experiment("matched", outputs=("matched", "matched_segments", "matched_models", "matched_sweep",
                                        "matched_curves"),
                    when=lambda profile: len(profile.models()) > len(_recall_names(profile)),
                    independent_of=_MAIN_SETS_ONLY)
def _matched(ctx: RunContext) -> dict:
    recall = set(_recall_names(ctx.profile))
    out = _fit_group(ctx, [m.name for m in ctx.profile.models() if m.name not in recall])
    return {"matched": out["recall"], "matched_segments": out["segments"], "matched_models": out["models"],
            "matched_sweep": out["sweep"], "matched_curves": out["curves"]}


@CHAPTER.experiment("beam_width", outputs=("beam_width",), independent_of=_MAIN_SETS_ONLY)
def _beam_width(ctx: RunContext) -> dict:
    res: _Resources = ctx.resources
    spec = res.specs[res.profile.roles()["superbloom_deep"]]
    model, _, _ = res.fit(spec, res.chosen(spec), res.profile.seed)
    ks = res.profile.recall_at
    widths = sorted({1, 2, 5, *ks})
    rows = []
    for width in widths:
        hits = evaluate(model.to(ctx.device), res, ks, beam=width, max_iterations=1)
        rows.append({"name": spec.name, "seed": res.profile.seed, "beam": width,
                     **{f"rec@{k}": 100.0 * hits[f"hit@{k}"].mean() for k in ks},
                     "certified_%": 100.0 * hits["certified"].mean(), "mean_scored": hits["scored"].mean()})
    return {"beam_width": pd.DataFrame(rows)}


@CHAPTER.experiment("crowding", outputs=("crowding",), independent_of=_MAIN_SETS_ONLY)
def _crowding(ctx: RunContext) -> dict:
    """How much of each deep model's ranked list collides with its best guess (:mod:`~hashlib_core.papers.
    superbloom.crowding`), the models of ``beam_width`` and Table 3 (seed ``seed``, the chosen rates)."""
    from hashlib_core.papers.superbloom.crowding import crowding_rows

    res: _Resources = ctx.resources
    roles, models = res.profile.roles(), {}
    for role in ("superbloom_deep", "baseline_deep"):
        spec = res.specs[roles[role]]
        models[spec.name] = res.fit(spec, res.chosen(spec), res.profile.seed)[0].to(ctx.device)
    maps = models[roles["superbloom_deep"]].maps
    return {"crowding": crowding_rows(models, maps, res, res.profile.recall_at)}


@CHAPTER.experiment("other_datasets", outputs=DATASETS_OUTPUTS,
                    when=lambda profile: bool(profile.other_datasets),
                    independent_of=(*_LANGUAGE_ONLY, *_DECODE_ONLY, *ALPHA_SETTINGS))
def _other_datasets(ctx: RunContext) -> dict:
    """The deepest matched pair on each of ``other_datasets`` (:mod:`~hashlib_core.papers.superbloom.
    experiments_datasets`), at the learning rates chosen on the main data."""
    main: _Resources = ctx.resources
    return datasets_experiment(ctx, lambda name: main.chosen(main.specs[name]))


_YARDSTICK_READS = ("dataset", "other_datasets", "alpha_dataset", "test_share", "validation_share", "segment", "seed",
                    "recall_at", "test_pages", "alpha", "alphas", "num_hashes", "batch", "seeds", "validation_pages")


@CHAPTER.experiment("yardsticks", outputs=("yardsticks", "yardsticks_hashed", "set_shapes"), independent_of=tuple(
    k for k in _PROFILE_KEYS if k not in _YARDSTICK_READS))
def _yardsticks(ctx: RunContext) -> dict:
    """What each id set holds without training: the popularity and co-occurrence rankings' recall on its test
    segments, both through Superbloom's hash maps, and what a training step holds on each set
    (:mod:`~hashlib_core.papers.superbloom.experiments_yardsticks`). No model is trained."""
    from hashlib_core.papers.superbloom.experiments_yardsticks import yardsticks_experiment

    return yardsticks_experiment(ctx)


@CHAPTER.experiment("decoding", outputs=("decoding_trained",), when=lambda profile: profile.decode_ids > 0,
                                    independent_of=(*_LANGUAGE_ONLY, *ALPHA_SETTINGS, "other_datasets", "other_steps",
                                                    "examples"))
def _decoding(ctx: RunContext) -> dict:
    """§2.5 at the paper's |S| with a trained model (:func:`~hashlib_core.papers.superbloom.experiments_speed.
    decoding_rows`)."""
    return decoding_rows(ctx)



@CHAPTER.experiment("params", outputs=("params",), independent_of=(*_PROFILE_KEYS, *_LANGUAGE_ONLY))
def _params(ctx: RunContext) -> dict:
    """Tables 1 and 3's parameter columns at the paper's vocabularies (meta device)."""
    from hashlib_core.papers.superbloom.params import paper_params

    return {"params": paper_params()}


#: what the text models read besides their own (``lm_*``) knobs: the seed, the hashing's m, the heads, the warm-up,
#: the patience of early stopping and the segment length (the position table's size)
_SET_ONLY = tuple(k for k in _PROFILE_KEYS if not k.startswith("lm_") and k not in (
    "seed", "num_hashes", "heads", "warmup", "patience", "segment", "recall_at"))


#: §4's pairs are trained in parts (``language_d<width>``, for every baseline width some profile has, each under an
#: hour in the cpu profile); ``language`` merges them
_LANGUAGE_PARTS = {f"language_d{d}": d for d in sorted({d for n in PROFILES.names
                                                        for d in PROFILES.get(n).lm_baseline_dims})}


def _language_part(part: str):
    def run(ctx: RunContext) -> dict:
        out = language_pair(ctx, _LANGUAGE_PARTS[part])
        return {f"{part}_{kind}": out[kind] for kind in _PART_KINDS}
    return run


for _part in _LANGUAGE_PARTS:
    CHAPTER.experiment(_part, outputs=tuple(f"{_part}_{kind}" for kind in _PART_KINDS),
                       when=lambda profile, part=_part: _LANGUAGE_PARTS[part] in profile.lm_baseline_dims,
                       independent_of=_SET_ONLY)(_language_part(_part))


@CHAPTER.experiment("language", outputs=("language", "language_segments", "language_models", "language_sweep",
                                         "language_curves"),
                    independent_of=_SET_ONLY, reads=tuple(f"{part}_{kind}" for part in _LANGUAGE_PARTS
                                                          for kind in _PART_KINDS))
def _language(ctx: RunContext) -> dict:
    """§4 (Tables 4 and 5): the pairs' parts merged (no training) and scored: masked-token prediction on Penn
    Treebank with a unigram + bigram vocabulary."""
    merged = _merged(ctx, [f"language_d{d}" for d in ctx.profile.lm_baseline_dims], "§4", "language")
    return {"language": recall_table(merged["segments"], ctx.profile.recall_at, merged["models"]),
            "language_segments": merged["segments"], "language_models": merged["models"],
            "language_sweep": merged["sweep"], "language_curves": merged["curves"]}


#: what the context-free yardstick reads: the vocabulary, the windows, the seed of the test masks and the cut-offs
_PRIOR_READS = ("lm_wordpiece", "lm_unigrams", "lm_bigrams", "lm_window", "lm_test_windows", "seed", "recall_at")


@CHAPTER.experiment("language_prior", outputs=("language_prior",), independent_of=tuple(
    k for k in _PROFILE_KEYS if k not in _PRIOR_READS))
def _language_prior(ctx: RunContext) -> dict:
    """§4's yardstick: recall@k of the context-free rankings (training-token frequency; test-target frequency, an
    oracle) on the ``language`` experiment's test windows; no model is trained."""
    from hashlib_core.papers.superbloom.language import context_free_recall
    from hashlib_core.papers.superbloom.training import LanguageResources

    res = LanguageResources(ctx)
    train_ids = np.concatenate(res.train_segments)              # the tokens the models train on
    return {"language_prior": pd.DataFrame(context_free_recall(train_ids, res.test.targets, res.vocab.tokens,
                                                               res.profile.recall_at))}


_TRAIN_TIME = ("train_time_ids", "train_time_repeats", "train_time_steps")
_TRAIN_TIME_READS = (*_TRAIN_TIME, "dataset", "test_share", "validation_share", "segment", "alpha", "num_hashes",
                     "hidden", "heads", "intermediate", "depths", "batch", "seed")


@CHAPTER.experiment("train_time", outputs=("train_time",), when=lambda profile: profile.train_time_repeats > 0,
                    independent_of=tuple(k for k in _PROFILE_KEYS if k not in _TRAIN_TIME_READS), owns=_TRAIN_TIME)
def _train_time(ctx: RunContext) -> dict:
    """§2.4's training step, unhashed against Superbloom, as the id space grows (:func:`~hashlib_core.papers.
    superbloom.experiments_speed.train_time_rows`)."""
    return train_time_rows(ctx)


@CHAPTER.experiment("longer", outputs=LONGER_OUTPUTS, when=lambda profile: profile.longer_steps > 0,
                    independent_of=_MAIN_SETS_ONLY, reads=LONGER_READS, owns=("longer_steps",))
def _longer(ctx: RunContext) -> dict:
    """The claims' deep pair retrained at ``longer_steps`` beside Table 3's runs (:mod:`~hashlib_core.papers.
    superbloom.experiments_longer`)."""
    return longer_experiment(ctx)


@CHAPTER.experiment("alpha", outputs=ALPHA_OUTPUTS, when=lambda profile: bool(profile.alpha_dataset),
                    independent_of=(*_LANGUAGE_ONLY, *_DECODE_ONLY, "other_datasets", "other_steps", "examples"),
                    reads=("sweep",))
def _alpha(ctx: RunContext) -> dict:
    """The hash's coarseness on a large id set (:mod:`~hashlib_core.papers.superbloom.experiments_alpha`), at the
    learning rates Table 3's sweep chose for the deep pair (read from its results: nothing on the main data is
    trained again)."""
    evidence = ctx.evidence()
    if not evidence.has("sweep"):
        raise RuntimeError("the coarseness diagnosis reads the learning rates Table 3's sweep chose: run recall first")
    roles = ctx.profile.roles()
    rates = chosen_rates(evidence.table("sweep"), [roles["superbloom_deep"], roles["baseline_deep"]])
    return alpha_experiment(ctx, rates.__getitem__)


from hashlib_core.papers.superbloom.claims import CLAIMS  # noqa: E402  (registered last: it reads the rest)

CLAIMS.register(CHAPTER)
