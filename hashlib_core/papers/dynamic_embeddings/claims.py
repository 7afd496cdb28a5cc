"""The dynamic-embeddings chapter's claims: EELBERT's abstract (``data/paper_tables/eelbert_abstract.csv``: only the
abstract is available here) and the dynamic-hash-embeddings blog (its properties and its napkin arithmetic).

* **GLUE** (abstract): EELBERT-tiny against BERT-tiny, and UNO-EELBERT (our one-layer reading) against BERT-tiny, as
  the relative gap of the GLUE average over the tasks that *learn* in the profile, by the rule every GLUE chapter
  shares (:func:`hashlib_core.claims.glue.learned_tasks`: decided on the held-out part of the training split, never
  on the dev items tested), and per task; a task at its floor, or a reference BERT-tiny at its floor, gives *no
  signal*. The interval is a paired bootstrap over the dev items, stratified by task, with each model's fine-tuning
  seeds resampled within every draw (:func:`~hashlib_core.papers.dynamic_embeddings.analysis.relative_gap`); each
  model is pre-trained once, so it does not cover pre-training (flag ``pt-once``). "Minimal regression" has no
  number: it is read with the abstract's own bound for its smallest model, within 4% (one-sided), which is also the
  effect each verdict's power is read against.
* **Size** (abstract): UNO-EELBERT's architecture is not given, and the chapter's one-layer shape was chosen to come
  near "1.2 MB" and "15x", so those two are declared untestable (checking them would be circular); the page lists
  the shapes that would fit. What the two numbers say without an assumption is tested: BERT-tiny's float32 size
  over 15 rounds to 1.2 MB.
* **Blog**: no parameters in the embedding and a larger saving for the smaller model (GPT-2 against Mistral-7B, the
  blog's pair; counts), determinism and any
  string to a bounded d-vector (checks), similar strings closer (AUC against random pairs, Hanley-McNeil interval;
  Spearman with human similarity, Fisher interval), and the napkin sizes (float16, the formula's binary units).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np

from hashlib_core.claims import (ClaimSet, Effect, NoSignal, NotTestable, auc_interval, better, correlation_interval,
                                 ratio, value, within)
from hashlib_core.claims.glue import GluePredictions, at_floor, capped_runs
from hashlib_core.papers.dynamic_embeddings import analysis, tables
from hashlib_core.papers.dynamic_embeddings.profiles import MODELS
from hashlib_core.papers.dynamic_embeddings.sizes import BERT_VOCAB
from hashlib_core.results import load_paper_table

__all__ = ["CLAIMS", "glue_gap"]

TINY, EEL, UNO = (m.name for m in MODELS[:3])
_ABSTRACT = tables.abstract_claims()
_WITHIN = tables.printed_claim("UNO-EELBERT GLUE vs BERT-tiny")            # 4%
_SIZE = tables.printed_claim("UNO-EELBERT size")                            # 1.2 (MB)
_RATIO = tables.printed_claim("UNO-EELBERT smaller than BERT-tiny")         # 15 (x)
_NAPKIN = load_paper_table("eelbert_blog_napkin").set_index("model")
_BLOG = "Dynamic-embeddings blog"
_EXACT_SCALE = "exact: counted from the models' configurations (meta device), independent of the profile's training"
_CIRCULAR = ("the abstract does not give UNO-EELBERT's architecture; the chapter's one-layer shape was chosen to come "
             "near the abstract's 1.2 MB and 15x, so checking it against them would be circular (the shapes that "
             "would fit are listed in the model-size section)")


def _abstract(claim: str) -> dict[str, str]:
    return {"where": "EELBERT, Abstract", "quote": _ABSTRACT.loc[claim, "quote"]}


def _exact(number: float, ours: str, unit: str = "", method: str = "exact (deterministic)",
           scale: str = _EXACT_SCALE) -> Effect:
    return dataclasses.replace(Effect.exactly(number, ours, unit=unit, method=method), scale=scale)


def _embedding_scale(p: Any) -> str:
    """What the property checks measure: the profile's embedding, not its trained models."""
    return (f"{p.name} profile's embedding: d = {MODELS[0].hidden}, n-grams of 1 to {p.max_n} characters, "
            f"{p.random_pairs:,} random pairs per group; no training involved")


# ------------------------------------------------------------------------------------------------------- GLUE
def glue_gap(model: str, task: str | None = None) -> Callable[[Any], Effect]:
    """Effect: ``100 (model - BERT-tiny) / BERT-tiny`` of the score on ``task``, or of the average over the tasks
    that learn (``task=None``), with a paired bootstrap over the dev items (each model's seeds resampled within)."""
    def effect(ev: Any) -> Effect:
        glue, profile = ev.table("glue"), ev.profile
        absent = [m for m in (model, TINY) if m not in set(glue["name"])]
        if absent:
            raise NotTestable(f"{' and '.join(absent)} not trained in the {profile.name} profile")
        learned, stuck = tables.learning_tasks(ev)
        if task is not None:
            label = tables.TASK_LABELS.get(task, task)
            if task not in learned + stuck:
                raise NotTestable(f"{label} is not fine-tuned in the {profile.name} profile")
            if task in stuck:
                raise NoSignal(f"every model stays at its floor on the held-out part of {label}'s training split "
                               f"(dev floor {tables.task_floor(glue, task):.1f}): at this budget the task measures "
                               f"nothing")
            used = [task]
        elif not learned:
            raise NoSignal(f"every model stays at its floor on the held-out part of every task of the "
                           f"{profile.name} profile")
        else:
            used = learned
        preds = GluePredictions.from_records(ev.json("glue_predictions"))
        a, b = analysis.mean_score(preds, model, used), analysis.mean_score(preds, TINY, used)
        if b <= 0:
            raise NoSignal(f"{TINY} scores {b:.1f} on {', '.join(used)}: a relative gap to it divides by chance")
        iv = analysis.relative_gap(preds, model, used)
        names = " + ".join(tables.TASK_LABELS.get(t, t) for t in used)
        runs = ev.table("glue_runs")
        floors = {t: at_floor(runs, t, profile) for t in used}
        silent = ""
        if all(floors[t].get(TINY, True) for t in used):
            silent = (f"{TINY}, the reference, stays at its floor on the held-out part of {names}: a relative gap to "
                      "it reads chance")
        capped, total = capped_runs(runs, [model, TINY], used)
        flags = ["pt-once"] + (["cap"] if capped else []) + (
            ["floor"] if any(floors[t].get(m, False) for t in used for m in (model, TINY)) else [])
        left = f"; left out, every model at its floor: {', '.join(tables.TASK_LABELS.get(t, t) for t in stuck)}" \
            if task is None and stuck else ""
        cap = f"; {capped} of {total} chosen runs best at their last epoch" if capped else ""
        ours = f"{model} {a:.1f} vs {TINY} {b:.1f} on {names} ({iv.estimate:+.1f}%)"
        return Effect(iv, ours, unit="%", note=("each model pre-trained once: the interval covers the dev items and "
                                                f"the fine-tuning seeds, not pre-training{left}{cap}"),
                      flags=tuple(flags), no_signal=silent)
    return effect


# ------------------------------------------------------------------------------------------------------ sizes
def _tiny_over_ratio(ev: Any) -> Effect:
    tiny = ev.table("sizes").set_index("model").loc[TINY]
    mb = float(tiny["fp32_MB"]) / _RATIO.value
    return _exact(mb, f"{TINY} {tiny['fp32_MB']:.2f} MB (float32, {int(tiny['vocab_size']):,} tokens) / "
                      f"{_RATIO.text} = {mb:.3f} MB", unit="MB", method="exact: counted, then divided")


def _no_table(ev: Any) -> Effect:
    sizes = ev.table("sizes")
    dynamic = sizes[sizes["embedding"] == "dynamic"]
    runs = ev.table("glue_runs")
    trained = runs[runs["name"].isin({m.name for m in MODELS if m.embedding == "dynamic"})]
    total = int(dynamic["emb_params"].sum()) + int(trained["emb_params"].sum())
    return _exact(total, f"{total:,} embedding parameters in {', '.join(dynamic['model'])} (at "
                         f"{BERT_VOCAB:,} tokens) and in the {len(trained)} fine-tuning runs of the dynamic models",
                  unit="parameters",
                  method="exact: counted from the models")


def _saving_gap(ev: Any) -> Effect:
    """The blog's own pair: the input embedding's share of GPT-2 minus its share of Mistral-7B (the saving a dynamic
    embedding offers each), from the napkin table's models counted at their configurations."""
    share = ev.table("napkin").set_index("model")["input_embedding_share_%"]
    missing = [m for m in ("GPT2", "Mistral 7B") if m not in share.index]
    if missing:
        raise NotTestable(f"{', '.join(missing)} not in the napkin table")
    small, large = float(share["GPT2"]), float(share["Mistral 7B"])
    return _exact(small - large, f"the input embedding is {small:.1f}% of GPT-2 and {large:.1f}% of Mistral-7B",
                  unit="points", method="exact: counted from the models")


# ------------------------------------------------------------------------------------------------- properties
def _deterministic(ev: Any) -> Effect:
    props = ev.table("properties")
    row = props[props["property"] == "deterministic"].iloc[0]
    return _exact(float(row["value"]), f"{row['check']}: {row['value']:g}", method="exact: a measured difference",
                  scale=_embedding_scale(ev.profile))


def _any_string(ev: Any) -> Effect:
    props = ev.table("properties")
    checks = props[props["property"] == "bounded d-vector"]
    strings = checks[checks["value"].notna()]
    failed = int((~checks["holds"].astype(bool)).sum())
    lengths = [int(m.replace(",", "")) for m in strings["check"].str.extract(r"\(([\d,]+) characters?\)")[0]
               .dropna()]
    span = f" of {min(lengths):,} to {max(lengths):,} characters" if lengths else ""
    ours = (f"{int(strings['holds'].astype(bool).sum())} of {len(strings)} odd strings{span} (emoji, CJK, NUL, a "
            f"lone surrogate, ...) give a d-vector in [-1, 1] (largest |value| {strings['value'].max():.4f}); the "
            f"empty string, which has no n-gram, is refused with an error")
    return _exact(failed, ours, unit="failed checks", method="exact: every check run",
                  scale=_embedding_scale(ev.profile))


def _group_auc(prefix: str) -> Callable[[Any], Effect]:
    def effect(ev: Any) -> Effect:
        sim = ev.table("similarity")
        row = sim[sim["group"].str.startswith(prefix)]
        if row.empty or not np.isfinite(row["auc"].iloc[0]):
            raise NotTestable(f"the {prefix} group was not measured in the {ev.profile.name} profile")
        r = row.iloc[0]
        iv = auc_interval(float(r["auc"]), int(r["pairs"]), int(r["random_pairs"]))
        return Effect(iv, f"AUC {r['auc']:.3f}: mean cosine {r['mean_cosine']:.2f} against "
                          f"{r['random_mean_cosine']:.2f} for random pairs", unit="AUC",
                      scale=_embedding_scale(ev.profile))
    return effect


def _human_similarity(ev: Any) -> Effect:
    row = ev.table("similarity").set_index("group").loc["Card-660, all pairs"]
    iv = correlation_interval(float(row["spearman_with_gold"]), int(row["pairs"]), kind="spearman")
    return Effect(iv, f"Spearman {iv.estimate:+.3f} between cosine and the human score", unit="rho",
                  scale=_embedding_scale(ev.profile))


# ----------------------------------------------------------------------------------------------------- napkin

def _napkin(model: str, column: str, scale: float, unit: str, decimal_bytes: str) -> Callable[[Any], Effect]:
    def effect(ev: Any) -> Effect:
        nap = ev.table("napkin").set_index("model")
        if model not in nap.index:
            raise NotTestable(f"{model} is not in the napkin table")
        r = nap.loc[model]
        number = float(r[column]) / scale
        decimal = 2 * float(r[decimal_bytes]) / (1e9 if unit == "GiB" else 1e6)
        return _exact(number, f"{number:,.3g} {unit} ({decimal:,.3g} {unit.replace('i', '')} in units of 10^"
                              f"{9 if unit == 'GiB' else 6} bytes); V = {int(r['vocab_size']):,}, d = "
                              f"{int(r['hidden_size']):,}", unit=unit, method="exact: from the configuration")
    return effect


def _napkin_claim(cid: str, model: str, printed_column: str, ours_column: str, scale: float, unit: str,
                  count_column: str, what: str) -> Any:
    row = _NAPKIN.loc[model]
    quote = row["quote"].split(" model size.")[0] + " model size."    # the formula's line, without what follows
    printed = str(row[printed_column]).lstrip("~")
    return value(cid, f"{model}'s {what} in float16 is about {printed} {row['size_unit']} (read as "
                 f"{unit}: the formula divides by 1024 x 1024)", printed=printed,
                 paper_value=f"{row[printed_column]}{row['size_unit']}", where=f"{_BLOG}, napkin math",
                 quote=quote, effect=_napkin(model, ours_column, scale, unit, count_column), reads=("napkin",),
                 section="de-napkin")


# ------------------------------------------------------------------------------------------------------ scale
def _scale(p: Any) -> str:
    models = ", ".join(f"{m.name} ({m.layers} x {m.hidden})" for m in p.selected())
    tasks = ", ".join(tables.TASK_LABELS.get(t, t) for t in p.task_keys())
    corpus = {"ptb-train+wikitext2-validation": "Penn Treebank train + WikiText-2 validation",
              "ptb-train": "Penn Treebank train", "wikitext2-validation": "WikiText-2 validation"}[p.corpus]
    corpus += f" (first {p.corpus_max_words:,} words)" if p.corpus_max_words else ""
    train = "every" if p.ft_train_examples == 0 else f"at most {p.ft_train_examples:,}"
    return (f"{p.name} profile: {models} on BERT's {BERT_VOCAB:,}-piece WordPiece, pre-trained {p.pt_steps:,} MLM "
            f"steps of {p.pt_batch} x {p.seq_len} tokens on {corpus}, fine-tuned on {tasks} ({train} training "
            f"examples per task, {p.ft_validation_examples:,} held out; at most {p.ft_epochs:g} epochs, "
            f"{len(p.ft_lrs)} learning rates, {len(p.ft_seeds)} seed(s))")


def _brief(p: Any) -> str:
    train = "all" if p.ft_train_examples == 0 else f"{p.ft_train_examples:,}"
    tiny = p.selected()[0]
    return f"{tiny.layers} x {tiny.hidden} BERT-tiny, {p.pt_steps:,} MLM steps, {train} training examples per task"


_GLUE = dict(reads=("glue", "glue_predictions"), section="de-glue", unit="%")
_TOL = dict(tolerance=_WITHIN.value, one_sided=True)
_PV = _ABSTRACT["value"]
_BLOG_SIZE = ("Thus, it follows that if we could replace the embedding layer with a function that can compute the "
              "embedding at runtime, we can decrease the size of the a given model.")
_BLOG_WHY = f"{_BLOG}, Why consider using Dynamic Embeddings?"
_BLOG_PROPS = f"{_BLOG}, Properties of Dynamic Embeddings"
_SIMILAR = ("It follows that for more similar inputs, the embedding function should generate outputs that are closer "
            "in embedding space than less similiar inputs")

CLAIMS = ClaimSet("dynamic_embeddings", "EELBERT and the dynamic-embeddings blog", [
    within("eelbert-glue", f"EELBERT-tiny's GLUE average (tasks that learn) is within {_WITHIN.text} of BERT-tiny's "
           f"(\"minimal regression\", read with the abstract's own bound)", paper_value=_PV["EELBERT GLUE vs BERT"],
           effect=glue_gap(EEL), headline=True, **_TOL, **_GLUE, **_abstract("EELBERT GLUE vs BERT")),
    within("uno-glue", f"UNO-EELBERT's GLUE average (tasks that learn) is within {_WITHIN.text} of a fully trained "
           f"BERT-tiny's (ours: one layer, an assumption; BERT-tiny trained as briefly)",
           paper_value=_PV["UNO-EELBERT GLUE vs BERT-tiny"], effect=glue_gap(UNO), headline=True, **_TOL, **_GLUE,
           **_abstract("UNO-EELBERT GLUE vs BERT-tiny")),
    value("uno-size", f"UNO-EELBERT is {_SIZE.text} MB", printed=_SIZE.text, paper_value=_PV["UNO-EELBERT size"],
          headline=True, untestable=_CIRCULAR, section="de-sizes", unit="MB", **_abstract("UNO-EELBERT size")),
    ratio("uno-15x", f"UNO-EELBERT is {_RATIO.text}x smaller than BERT-tiny",
          between=(_RATIO.value - _RATIO.resolution, _RATIO.value + _RATIO.resolution),
          paper_value=_PV["UNO-EELBERT smaller than BERT-tiny"], headline=True, untestable=_CIRCULAR, evidence="exact",
          section="de-sizes", unit="x", **_abstract("UNO-EELBERT smaller than BERT-tiny")),
    value("size-consistent", f"The two size numbers agree without any UNO-EELBERT shape: BERT-tiny's float32 size at "
          f"BERT's vocabulary over {_RATIO.text} rounds to {_SIZE.text} MB", printed=_SIZE.text,
          paper_value=_PV["UNO-EELBERT size"], effect=_tiny_over_ratio, reads=("sizes",), section="de-sizes",
          **_abstract("UNO-EELBERT size")),
    *[within(f"eelbert-{t}", f"EELBERT-tiny's {label} score is within {_WITHIN.text} of BERT-tiny's (\"minimal "
             f"regression\", per task)", paper_value=_PV["EELBERT GLUE vs BERT"], effect=glue_gap(EEL, t),
             **_TOL, **_GLUE, **dict(_abstract("EELBERT GLUE vs BERT"), where=f"EELBERT, Abstract ({label})"))
      for t, label in tables.TASK_LABELS.items()],
    value("no-table", "The dynamic embedding stores no parameters: it is computed from the token's characters",
          between=(0.0, 0.0), where=_BLOG_WHY, quote=_BLOG_SIZE, effect=_no_table, reads=("sizes", "glue_runs"),
          section="de-sizes"),
    better("smaller-saves-more", "Removing the table saves more of a smaller model (GPT-2) than of a larger one "
           "(Mistral-7B)", where=_BLOG_WHY,
           quote=("However, when we consider smaller models, such as [GPT2](https://huggingface.co/gpt2), we see a "
                  "much larger potential relative size saving:"), effect=_saving_gap, reads=("napkin",),
           section="de-napkin"),
    value("deterministic", "The embedding is deterministic (identical in a fresh process)", between=(0.0, 0.0),
          where=_BLOG_PROPS, quote="The embedding function must be deterministic.", effect=_deterministic,
          reads=("properties",), section="de-properties"),
    value("any-string", "Any non-empty string maps to a d-vector in [-1, 1] (no out-of-vocabulary token)",
          between=(0.0, 0.0), where=_BLOG_PROPS,
          quote=("The embedding function must transform a string of arbitrary length to a vector of length `D` in "
                 "embedding space."), effect=_any_string, reads=("properties",), section="de-properties"),
    *[better(cid, f"{what} are closer than random pairs of the same words (AUC above 0.5)", margin=0.5,
             where=_BLOG_PROPS, quote=_SIMILAR, effect=_group_auc(prefix), reads=("similarity",),
             section="de-properties")
      for cid, what, prefix in (("similar-spelling", "Card-660 spelling variants", "Card-660 spelling"),
                                ("similar-families", "Corpus words sharing a prefix", "corpus word families"))],
    better("similar-human", "Over all Card-660 pairs, the cosine rises with the human similarity score (Spearman "
           "above 0)", where=_BLOG_PROPS, quote=_SIMILAR, effect=_human_similarity, reads=("similarity",),
           section="de-properties"),
    _napkin_claim("napkin-mistral-emb", "Mistral 7B", "embedding_layer_size", "embedding_fp16_MiB", 1024.0, "GiB",
                  "input_embedding_params", "input embedding"),
    _napkin_claim("napkin-mistral-model", "Mistral 7B", "model_size", "model_fp16_GiB", 1.0, "GiB",
                  "total_params", "whole model"),
    _napkin_claim("napkin-gpt2-emb", "GPT2", "embedding_layer_size", "embedding_fp16_MiB", 1.0, "MiB",
                  "input_embedding_params", "input embedding"),
    _napkin_claim("napkin-gpt2-model", "GPT2", "model_size", "model_fp16_MiB", 1.0, "MiB", "total_params",
                  "whole model"),
], scale=_scale, brief=_brief)
