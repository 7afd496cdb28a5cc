"""The HashFormers chapter's claims: what Xue & Aletras (2022) state, each with a verdict computed from the results.

GLUE claims read ``glue_predictions`` (every fine-tuning run's per-item dev predictions) and compare models with a
two-level paired bootstrap (:func:`hashlib_core.claims.glue.compare`: one resample of each task's dev items shared by
every model, and each model's fine-tuning runs resampled with replacement; a model's score the mean over its
runs). They read only the tasks the profile fine-tunes on which some model learns, decided on the **held-out part of
the training split** (:func:`learned_tasks`: a model's held-out score above the majority class, for STS-B and CoLA
above no correlation), never on the dev items they are tested on: a task on which no model learns has nothing to
compare, and a claim about that task alone is *not testable here*, with that reason. The paper's averages cover
eight tasks; ours cover the learned ones, and each claim says which. Each model is pre-trained once, so the
intervals cover fine-tuning runs and dev items, not pre-training seeds.

Table 2's counts are exact (BERT-base-sized modules built and counted, the same in every profile); Table 3's times
are one measurement each (no interval); Table 6 reads its own runs' dev predictions, paired with the word-unit
models'.
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, Sequence

import numpy as np

from hashlib_core.claims import ClaimSet, Effect, NotTestable, better, ratio, value, within
from hashlib_core.claims.glue import GluePredictions, compare
from hashlib_core.glue import PRIMARY_METRIC, normalize_task
from hashlib_core.papers.hashformers import tables
from hashlib_core.papers.hashformers.finetuning import PAPER_TASK_COLUMN
from hashlib_core.papers.hashformers.profiles import LSH_GROUP, MD_GROUP, PROFILES
from hashlib_core.papers.hashformers.claims_timing import canine_infer, hf_vs_sr, infer, sr_pt, table3_pt_spread
from hashlib_core.params import humanize
from hashlib_core.results import load_paper_table, parse_printed

__all__ = ["CLAIMS", "learned_tasks", "held_out_floor", "describe_scale"]

_TASK = {column: task for task, column in PAPER_TASK_COLUMN.items()}
#: what an interval over fine-tuning seeds does not cover
_ONCE = "each model pre-trained once: the seeds vary fine-tuning only"
_COMPRESSED = ("Pool", "Add", "Proj")
_GROUPS = {"MD": MD_GROUP, "LSH": LSH_GROUP}
_PAPER = PROFILES.get("paper")


# ------------------------------------------------------------------------------------------------ the paper's numbers
def _printed(stem: str, group: str, model: str, column: str) -> float:
    table = load_paper_table(stem).set_index(["group", "model"])
    return parse_printed(table.loc[(group, model), column]).value


def _table2_min_prr() -> float:
    """The lowest GLUE-average retention Table 2 prints for Pool, Add and Proj (either hash)."""
    return min(_printed("hashformers_table2", g, m, "PRR_GLUE_Avg") for g in _GROUPS.values() for m in _COMPRESSED)


# ------------------------------------------------------------------------------------------------ reading our results
def _floor(column: str) -> str:
    return "at no correlation" if column == "STS" else "at the majority class"


@functools.lru_cache(maxsize=64)
def held_out_floor(task: str, train_limit: int, validation: int, seed: int) -> float:
    """What learning nothing scores on a task's held-out part (the examples of its training split that choose the
    learning rate and the epoch, :func:`hashlib_core.glue.held_out`): the training part's majority class predicted
    throughout (on a two-class accuracy task, the other constant prediction too, when higher); MCC and STS-B: 0."""
    from hashlib_core.glue import held_out, majority_score, num_labels

    key = normalize_task(task)
    (_, train_labels), (_, held_labels) = held_out(key, train_limit, validation, seed)
    base = majority_score(key, train_labels, held_labels)
    if np.isnan(base):
        return 0.0
    if PRIMARY_METRIC[key] == "accuracy" and num_labels(key) == 2:
        return max(base, 100.0 - base)
    return base


def _learners(evidence: Any, task: str) -> list[str]:
    """The models whose mean held-out score (at their chosen learning rate, over the seeds) beats learning nothing
    by more than :data:`~hashlib_core.papers.hashformers.tables.MAJORITY_MARGIN` and their own spread over seeds:
    decided on the held-out part of the training split, never on the dev items the claims are tested on."""
    runs = evidence.table("glue_runs")
    if "validation_score" not in runs.columns:
        raise NotTestable("the fine-tuning runs have no held-out scores to tell which tasks some model learns")
    runs = runs[(runs["task"] == task) & runs["chosen"].astype(bool)] if "chosen" in runs else runs[
        runs["task"] == task]
    p = evidence.profile
    floor = held_out_floor(task, p.ft_train_examples, p.ft_validation_examples, p.seed)
    stats = runs.groupby("name")["validation_score"].agg(["mean", "std"])
    margin = np.maximum(tables.MAJORITY_MARGIN, stats["std"].fillna(0.0))
    return sorted(stats.index[stats["mean"] > floor + margin])


def learned_tasks(evidence: Any) -> tuple[list[str], list[str]]:
    """(Table 1 columns of the fine-tuned tasks on which some model learns, the others), where a model learns a task
    when its held-out score beats learning nothing (:func:`_learners`)."""
    columns = {t: PAPER_TASK_COLUMN[t] for t in evidence.profile.task_keys()}
    learned = [c for t, c in columns.items() if _learners(evidence, t)]
    return learned, [c for c in columns.values() if c not in learned]


def _columns(evidence: Any, only: str | None = None) -> tuple[list[str], str]:
    """The task columns a claim compares, and a note naming them and those left out (``only``: one task)."""
    learned, stuck = learned_tasks(evidence)
    if only is not None:
        if only not in learned + stuck:
            raise NotTestable(f"{only} is not fine-tuned in the {evidence.profile.name} profile")
        if only in stuck:
            raise NotTestable(f"every model stays {_floor(only)} on the held-out part of {only}'s training split: "
                              "there is nothing to compare")
        return [only], ""
    floor = "at the majority class" + (" (STS-B: at no correlation)" if "STS" in stuck else "")
    if not learned:
        raise NotTestable(f"every model stays {floor} on the held-out part of every task fine-tuned "
                          f"({', '.join(stuck)})")
    left = (f"; left out, every model staying {floor} on the held-out part of its training split: "
            f"{', '.join(stuck)}" if stuck else "")
    return learned, f"mean over {', '.join(learned)}{left}"


def _predictions(evidence: Any, *extra: str) -> GluePredictions:
    """The dev predictions of the chapter's fine-tuning runs (and of ``extra`` records, e.g. Table 6's)."""
    return GluePredictions.from_records(evidence.json("glue_predictions"), *(evidence.json(e) for e in extra))


def _names(hashes: Sequence[str], models: Sequence[str]) -> list[str]:
    return [f"{h}-{m}" for h in hashes for m in models]


def _emb_label(evidence: Any) -> str:
    """``Emb (50K)``, or ``Emb (N = 4,096, paper's 50K)`` when the profile builds it with another N."""
    return tables.shown_name("Emb (50K)", evidence.profile.emb_buckets)


def _mean_difference(scores: dict[str, list[float]]) -> float:
    return float(np.mean(scores["a"]) - np.mean(scores["b"]))


def _difference(a: Sequence[str], b: Sequence[str], labels: tuple[str, str] | Callable[[Any], tuple[str, str]],
                only: str | None = None) -> Callable[[Any], Effect]:
    """Effect: the mean score of models ``a`` minus that of models ``b`` over the tasks that learn (or ``only``
    one), with a paired bootstrap over the dev items (each model's score the mean over its seeds)."""
    def effect(evidence: Any) -> Effect:
        columns, note = _columns(evidence, only)
        tasks = [_TASK[c] for c in columns]
        iv = compare(_predictions(evidence), {"a": list(a), "b": list(b)}, tasks, _mean_difference)
        la, lb = labels(evidence) if callable(labels) else labels
        glue = evidence.table("glue").set_index("name")
        mean_a = float(glue.loc[list(a), columns].to_numpy().mean())
        mean_b = float(glue.loc[list(b), columns].to_numpy().mean())
        where = f" on {only}" if only else ""
        return Effect(iv, f"{la} {mean_a:.1f} vs {lb} {mean_b:.1f}{where} ({iv.estimate:+.1f} points)", unit="points",
                      note="; ".join(n for n in (_ONCE, note) if n))
    return effect


def _worst_retention(evidence: Any) -> Effect:
    """The lowest GLUE retention (PRR, Eq. 4: a model's mean score over the tasks as a percentage of BERT-MLM's)
    among the six compressed HashFormers, on the tasks where BERT-MLM itself learns: the claim is that every one
    keeps the printed share, so the statistic is the lowest of the six, bootstrapped over the dev items as one."""
    columns, note = _columns(evidence)
    glue = evidence.table("glue")
    columns = [c for c in columns if "BERT-MLM" in _learners(evidence, _TASK[c])]
    if not columns:
        raise NotTestable("BERT-MLM stays at the majority class on every task some model learns: a retention "
                          "would divide by chance")
    models = _names(_GROUPS, _COMPRESSED)
    groups = {"BERT-MLM": ["BERT-MLM"], **{m: [m] for m in models}}

    def lowest(scores: dict[str, list[float]]) -> float:
        base = float(np.mean(scores["BERT-MLM"]))
        return min(100.0 * float(np.mean(scores[m])) / base for m in models)

    iv = compare(_predictions(evidence), groups, [_TASK[c] for c in columns], lowest)
    by = glue.set_index("name")
    prr = {m: 100.0 * by.loc[m, columns].mean() / by.loc["BERT-MLM", columns].mean() for m in models}
    worst, best = min(prr, key=prr.get), max(prr, key=prr.get)
    ours = (f"lowest {worst} {prr[worst]:.1f}% of BERT-MLM's score (highest {best} {prr[best]:.1f}%), over "
            f"{', '.join(columns)}")
    return Effect(iv, ours, unit="%", note=f"the lowest of six retentions, bootstrapped as one; {_ONCE}; {note}")


def _beats_proformer(evidence: Any) -> Effect:
    """Every HashFormer against ProFormer (not pre-trained): the share of the tasks that learn on which a HashFormer
    scores above ProFormer, the lowest over the HashFormers, bootstrapped over the dev items as one statistic."""
    glue = evidence.table("glue").set_index("name")
    if "ProFormer" not in glue.index:
        raise NotTestable("ProFormer was not fine-tuned in these results (the profile's setting proformer)")
    columns, note = _columns(evidence)
    models = [n for n in glue.index if glue.loc[n, "group"] in (MD_GROUP, LSH_GROUP)]
    if not models:
        raise NotTestable("no HashFormer was fine-tuned in these results")

    def lowest(scores: dict[str, list[float]]) -> float:
        base = np.asarray(scores["ProFormer"])
        return min(100.0 * float(np.mean(np.asarray(scores[m]) > base)) for m in models)

    groups = {"ProFormer": ["ProFormer"], **{m: [m] for m in models}}
    iv = compare(_predictions(evidence), groups, [_TASK[c] for c in columns], lowest)
    wins = {m: int((glue.loc[m, columns] > glue.loc["ProFormer", columns]).sum()) for m in models}
    worst, best = min(wins, key=wins.get), max(wins, key=wins.get)
    ours = (f"fewest tasks won: {worst} {wins[worst]} of {len(columns)} (most: {best} {wins[best]}); ProFormer "
            + ", ".join(f"{c} {glue.loc['ProFormer', c]:.1f}" for c in columns))
    return Effect(iv, ours, unit="%", note=f"the lowest of {len(models)} shares of tasks won, bootstrapped as one; "
                                           f"{_ONCE}; {note}")


def _table6_effect(evidence: Any) -> Effect:
    """Word units minus BPE subword units, averaged over Table 6's four models and its tasks that learn, paired over
    the dev items (each subword model against its word-unit model)."""
    learned, _ = learned_tasks(evidence)
    columns = [PAPER_TASK_COLUMN[t] for t in evidence.profile.task_keys(table6=True)]
    columns = [c for c in columns if c in learned]
    if not columns:
        raise NotTestable("every model stays at the majority class on the tasks Table 6 is fine-tuned on")
    t6 = evidence.table("table6")
    subwords = list(t6["name"])
    words = [n.replace(" [BPE]", "") for n in subwords]
    iv = compare(_predictions(evidence, "table6_predictions"), {"a": words, "b": subwords},
                 [_TASK[c] for c in columns], _mean_difference)
    glue = evidence.table("glue").set_index("name")
    word, sub = float(glue.loc[words, columns].to_numpy().mean()), float(t6[columns].to_numpy().mean())
    ours = (f"word {word:.1f} vs subword {sub:.1f} ({iv.estimate:+.1f} points), mean of "
            f"{', '.join(tables.shown_name(w, b) for w, b in zip(words, t6['num_buckets']))} over {', '.join(columns)}")
    return Effect(iv, ours, unit="points", note=_ONCE)


def _count(group: str, model: str) -> Callable[[Any], Effect]:
    def effect(evidence: Any) -> Effect:
        t2 = evidence.table("table2").set_index(["group", "model"])
        if (group, model) not in t2.index:
            raise NotTestable(f"{model} is not among the counted models")
        n = float(t2.loc[(group, model), "emb_params"])
        return dataclasses.replace(
            Effect.exactly(n, f"{humanize(n, 1)} ({int(n):,})", unit="parameters",
                           method="exact: counted from the built model"),
            scale=f"BERT-base size ({_PAPER.layers} layers, d = {_PAPER.hidden}, two-class head), built on the meta "
                  f"device: the same in every profile")
    return effect


def describe_scale(profile: Any) -> str:
    """What the GLUE verdicts were tested at, from the profile's settings."""
    corpus = "WikiText-2 validation" if profile.corpus == "wikitext2-validation" else profile.corpus
    tasks = ", ".join(PAPER_TASK_COLUMN[t] for t in profile.task_keys())
    return (f"{profile.name} profile: {profile.layers} layers, d = {profile.hidden} (BERT-base: {_PAPER.layers}, "
            f"{_PAPER.hidden}); {profile.pt_steps} pre-training steps of {profile.pt_batch} x {profile.seq_len} "
            f"units on {corpus}; {tasks} fine-tuned for {profile.ft_epochs:g} epoch(s), "
            f"{len(profile.ft_seeds)} seed(s); Emb (50K) built with N = {profile.emb_buckets:,}")


# ------------------------------------------------------------------------------------------------ the claims
_ABSTRACT = ("For example, our most efficient HASHFORMER variant has a negligible performance degradation (0.4% on "
             "GLUE) using only 99.1K parameters for representing the embeddings compared to 12.3-38M parameters of "
             "state-of-the-art models.")
_PROJ_QUOTE = ("Proj uses a substantially smaller number of embedding parameters (99.1K) compared to CANINE-C and "
               "BERT variants (i.e., 12.3M and 38.6M respectively).")
_PROFORMER_QUOTE = ("Nevertheless, ProFormer requires more bits for hashing the tokens, resulting in more parameters "
                    "for representing token embeddings (322.6K) comparing to HASH-FORMERS-Add and HASHFORMERS-Proj "
                    "(197.4K and 99.1K).")
_EMB1K_QUOTE = ("Despite the fact that HASH-FORMERS-Emb (1K) has a similar number of embedding parameters as the "
                "embedding compression approaches (i.e. Pool, Add, Proj), it falls far behind those models, i.e. "
                "between 8.5% and 14.3% for both MD and LSH variants.")
#: (the sentence before it, "HASHFORMERS have comparable pre-training training time (PT) to the fastest BERT model
#: (BERT-S+R)", is split by a footnote in the text, so it cannot be quoted verbatim)
_OBJECTIVE_QUOTE = ("This highlights that the complexity of the pre-training objective is more important than the "
                    "size of the embedding matrix for improving computational efficiency for pre-training.")
_T2 = "hashformers_table2"
_GLUE = ("glue", "glue_predictions", "glue_runs")
_PROJ_GAP = round(_printed("hashformers_table1", "-", "BERT-MLM", "Avg")
                  - _printed("hashformers_table1", LSH_GROUP, "Proj", "Avg"), 1)


def _t2_value(id: str, statement: str, group: str, model: str, quote: str, where: str,
              printed: str | None = None, **kw: Any):
    printed = printed or load_paper_table(_T2).set_index(["group", "model"]).loc[(group, model), "#Emb_Params"]
    return value(id, statement, printed=printed, where=where, quote=quote, effect=_count(group, model),
                 reads=("table2",), section="hf-table2", **kw)


CLAIMS = ClaimSet("hashformers", "HashFormers", [
    within("proj-glue", "LSH-Proj scores within the paper's 0.4-point gap of BERT-MLM on GLUE (or above it)",
           tolerance=_PROJ_GAP, one_sided=True, where="Abstract; Table 1 (Avg.)", quote=_ABSTRACT,
           paper_value="79.1 vs 79.5", effect=_difference(["LSH-Proj"], ["BERT-MLM"], ("LSH-Proj", "BERT-MLM")),
           reads=_GLUE, section="hf-glue", headline=True),
    _t2_value("proj-params", "LSH-Proj represents the embeddings with 99.1K parameters", LSH_GROUP, "Proj",
              _ABSTRACT, "Abstract; Table 2", headline=True),
    ratio("retention", "Pool, Add and Proj keep at least 94.7% of BERT-MLM's GLUE score (PRR, Eq. 4)",
          at_least=_table2_min_prr(), where="Abstract; §5.2 and Table 2 (GLUE Avg. PRR: 94.7% to 99.5%)",
          quote="We empirically demonstrate that HASHFORM-ERS are more memory efficient compared to standard "
                "pre-trained transformers while achieving comparable predictive performance when fine-tuned on "
                "multiple text classification tasks.", paper_value="94.7-99.5%", effect=_worst_retention,
          reads=_GLUE, section="hf-glue", headline=True),
    better("emb1k-drop", "Emb (1K) scores below Emb (50K), with either hash", where="§5.1, Table 1",
           quote="Reducing the number of embedding vectors in Emb (1K) models is detrimental to performance and "
                 "leads to drastic drops between 11.8% and 13.1%.", paper_value="MD 79.9 vs 66.8, LSH 76.0 vs 64.2",
           effect=_difference(_names(_GROUPS, ["Emb (50K)"]), _names(_GROUPS, ["Emb (1K)"]),
                              lambda ev: (f"MD/LSH-{_emb_label(ev)}", "MD/LSH-Emb (1K)")),
           reads=_GLUE, section="hf-glue"),
    better("emb1k-behind", "Pool, Add and Proj score above Emb (1K), which has a similar embedding budget",
           where="§5.2, Table 1", quote=_EMB1K_QUOTE, paper_value="8.5-14.3% (PRR)",
           effect=_difference(_names(_GROUPS, _COMPRESSED), _names(_GROUPS, ["Emb (1K)"]),
                              ("MD/LSH-Pool/Add/Proj", "MD/LSH-Emb (1K)")), reads=_GLUE, section="hf-glue"),
    better("lsh-compressed", "With Pool, Add and Proj, LSH scores above MD5", where="§5.1, Table 1",
           quote="However, LSH contributes to the performance improvement of smaller HASHFORMERS with compressed "
                 "embedding spaces compared to their MD variants, i.e. Add (78.9 vs. 75.3), Add (78.9 vs. 75.7) and "
                 "Proj (79.1 vs. 75.7).", paper_value="Pool 78.9 vs 75.3, Add 78.9 vs 75.7, Proj 79.1 vs 75.7",
           effect=_difference(_names(["LSH"], _COMPRESSED), _names(["MD"], _COMPRESSED),
                              ("LSH-Pool/Add/Proj", "MD-Pool/Add/Proj")), reads=_GLUE, section="hf-glue"),
    within("md-emb", "With Emb (50K), LSH does not score above MD5", tolerance=0, one_sided=True,
           where="§5.1, Table 1",
           quote="Surprisingly, the more sophisticated HASHFORMER-LSH-Emb that takes morphological similarity of "
                 "tokens into account does not outperform HASHFORMER-MD-Emb that uses a random hashing.",
           paper_value="79.9 vs 76.0",
           effect=_difference(["MD-Emb (50K)"], ["LSH-Emb (50K)"],
                              lambda ev: (f"MD-{_emb_label(ev)}", f"LSH-{_emb_label(ev)}")),
           reads=_GLUE, section="hf-glue"),
    better("cola-add", "On CoLA, LSH-Add scores above BERT-MLM", where="§5.2, Table 2 (CoLA PRR)",
           quote="In one case, HASHFORMER-LSH-Add outperforms the BERT-MLM baseline on CoLA with a retention ratio "
                 "of 105.9% using only 197.4K parameters for token embeddings.", paper_value="105.9% (57.7 vs 54.5)",
           effect=_difference(["LSH-Add"], ["BERT-MLM"], ("LSH-Add", "BERT-MLM"), only="CoLA"), reads=_GLUE,
           section="hf-glue"),
    better("proformer", "Every HashFormer beats ProFormer (not pre-trained) on most GLUE tasks: the lowest share, "
           "over the HashFormers, of the tasks on which one scores above ProFormer is over half",
           margin=50.0, where="§5.1, Table 1",
           quote="All our HASHFORMERS show clear advantages comparing to the LSH based PROFORMER which is not "
                 "pre-trained across the majority of tasks (i.e. MNLI, QNLI, QQP, MRPC, CoLA and STS).",
           paper_value="6 of 8 tasks", effect=_beats_proformer, reads=_GLUE, section="hf-glue"),
    _t2_value("add-params", "Add represents the embeddings with 197.4K parameters", LSH_GROUP, "Add",
              _PROFORMER_QUOTE, "§5.2, Table 2"),
    _t2_value("pool-params", "Pool represents the embeddings with 797.2K parameters", LSH_GROUP, "Pool",
              _EMB1K_QUOTE, "Table 2"),
    _t2_value("emb1k-params", "Emb (1K) represents the embeddings with 797.2K parameters", LSH_GROUP, "Emb (1K)",
              _EMB1K_QUOTE, "Table 2"),
    _t2_value("bert-params", "BERT-MLM's embedding matrix holds 38.6M parameters", "-", "BERT-MLM", _PROJ_QUOTE,
              "§5.2", printed="38.6M"),
    _t2_value("canine-params", "CANINE-C's hash embeddings hold 12.3M parameters", "-", "CANINE-C", _PROJ_QUOTE,
              "§5.2, Table 2"),
    _t2_value("proformer-params", "ProFormer's embedding projection holds 322.6K parameters", "-", "ProFormer",
              _PROFORMER_QUOTE, "§5.2, Table 2"),
    ratio("sr-pt", "Every S+R model (BERT-S+R and the HashFormers) pre-trains faster than BERT-MLM", above=1.0,
          where="§5.3, Table 3",
          quote=_OBJECTIVE_QUOTE, paper_value="2.1x-2.4x", effect=sr_pt, reads=("timing",), section="hf-table3"),
    within("hf-pt-vs-sr", "HashFormers pre-train as fast as BERT-S+R, to within the paper's own largest gap",
           tolerance=table3_pt_spread(), where="§5.3, Table 3",
           quote=_OBJECTIVE_QUOTE, paper_value="10.6-12.0 vs 11.6 ms/sample", effect=hf_vs_sr, reads=("timing",),
           section="hf-table3"),
    ratio("infer", "At inference, a HashFormer is faster than both BERT models", above=1.0, where="§5.3, Table 3",
          quote="During inference, we observe that the speed-up obtained by HASHFORMERS is up to 2.6x compared to "
                "both BERT models.", paper_value="up to 2.6x", effect=infer, reads=("timing",),
          section="hf-table3"),
    ratio("canine-infer", "CANINE-C infers more slowly than BERT and the HashFormers: its time over the slowest "
          "other model's is above 1", above=1.0, where="§5.3, Table 3",
          quote="Finally, we observe that CANINE-C has a slower inference time compared to both BERT models and "
                "HASHFORMERS.", paper_value="6.9 vs at most 4.6 ms/sample (0.6x)", effect=canine_infer,
          reads=("timing",), section="hf-table3"),
    better("table6", "Hashing BPE subwords instead of words lowers the HashFormers' scores",
           where="Appendix C, Table 6",
           quote="In general, we observe that using BPE tokinization, the performance of HASHFOMERS slightly drops.",
           paper_value="Avg. 78.5 vs 79.9, 74.1 vs 75.7, 66.0 vs 76.0, 78.3 vs 79.1", effect=_table6_effect,
           reads=("table6", "table6_predictions", *_GLUE), section="hf-table6"),
], scale=describe_scale)
