"""The HashFormers chapter's claims: what Xue & Aletras (2022) state, each with a verdict computed from the results.

GLUE claims read ``glue_predictions`` (every fine-tuning run's per-item dev predictions) and compare models with a
two-level paired bootstrap (:func:`hashlib_core.claims.glue.compare`: one resample of each task's dev items shared by
every model, and each model's fine-tuning runs resampled with replacement; a model's score the mean over its
runs). They read only the tasks on which some model learns, decided on the **held-out part of the training split**
by the rule every GLUE chapter shares (:func:`hashlib_core.claims.glue.learned_tasks`), never on the dev items they
are tested on; the others are listed as at the floor. A comparison whose models all sit at their floor on every task
it reads (or whose reference, the model a retention or a tolerance is measured against, does) says *no signal*.

The statistic follows the statement: a claim about each compressed model reads the worst of them (``retention``,
``emb1k-behind``, ``lsh-compressed``, ``proformer``), a claim about a model pair or an average reads the mean. Each
model is pre-trained once, so the intervals cover fine-tuning runs and dev items, not pre-training (flag ``pt-once``);
a chosen run best at its last epoch is flagged ``cap``. Each verdict's power is read against the paper's own gap
(Table 1's averages), or the tolerance.

Table 2's counts are exact (BERT-base-sized modules built and counted, the same in every profile); Table 3's times
are one measurement each (no interval); Table 6 reads its own runs' dev predictions, paired with the word-unit
models'.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np

from hashlib_core.claims import ClaimSet, Effect, NotTestable, better, ratio, value, within
from hashlib_core.claims.glue import held_out_floor
from hashlib_core.papers.hashformers.claims_glue import (_COMPRESSED, _GROUPS, _beats_proformer, _difference,
                                                         _emb_label, _table6_effect, _worst_pair, _worst_retention,
                                                         floors, learned_tasks)
from hashlib_core.papers.hashformers.claims_timing import canine_infer, hf_vs_sr, infer, sr_pt, table3_pt_spread
from hashlib_core.papers.hashformers.finetuning import PAPER_TASK_COLUMN
from hashlib_core.papers.hashformers.profiles import LSH_GROUP, PROFILES
from hashlib_core.params import humanize
from hashlib_core.results import load_paper_table, parse_printed

__all__ = ["CLAIMS", "learned_tasks", "held_out_floor", "floors", "describe_scale", "brief_scale"]

_PAPER = PROFILES.get("paper")


# ------------------------------------------------------------------------------------------------ the paper's numbers
def _printed(stem: str, group: str, model: str, column: str) -> float:
    table = load_paper_table(stem).set_index(["group", "model"])
    return parse_printed(table.loc[(group, model), column]).value


def _avg(hash_: str, model: str) -> float:
    """Table 1's GLUE average of a model (``hash_``: "MD", "LSH" or "-" for the baselines)."""
    return _printed("hashformers_table1", _GROUPS.get(hash_, hash_), model, "Avg")


def _table2_min_prr() -> float:
    """The lowest GLUE-average retention Table 2 prints for Pool, Add and Proj (either hash)."""
    return min(_printed("hashformers_table2", g, m, "PRR_GLUE_Avg") for g in _GROUPS.values() for m in _COMPRESSED)


def _table6_gap() -> float:
    """Table 6's mean drop from word units to BPE subwords (Avg), over its four models."""
    t6 = load_paper_table("hashformers_table6").set_index(["group", "model", "token"])["Avg"]
    pairs = {(g, m) for g, m, _ in t6.index}
    return float(np.mean([parse_printed(t6[(g, m, "word")]).value - parse_printed(t6[(g, m, "subword")]).value
                          for g, m in sorted(pairs)]))


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


def brief_scale(profile: Any) -> str:
    """The scale in a few words (the scorecard's headline table)."""
    train = "all" if not profile.ft_train_examples else f"{profile.ft_train_examples:,}"
    return (f"{profile.layers} x {profile.hidden} encoder, {profile.pt_steps:,} pre-training steps, {train} "
            f"training examples per task")


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
_PROJ_GAP = round(_avg("-", "BERT-MLM") - _avg("LSH", "Proj"), 1)
#: the paper's own effects (Table 1 averages), what each verdict's power is read against
_EMB1K_DROP = min(_avg(h, "Emb (50K)") - _avg(h, "Emb (1K)") for h in _GROUPS)
_EMB1K_BEHIND = min(_avg(h, m) - _avg(h, "Emb (1K)") for h in _GROUPS for m in _COMPRESSED)
_LSH_OVER_MD = min(_avg("LSH", m) - _avg("MD", m) for m in _COMPRESSED)
_MD_OVER_LSH = _avg("MD", "Emb (50K)") - _avg("LSH", "Emb (50K)")
_COLA_ADD = (_printed("hashformers_table1", LSH_GROUP, "Add", "CoLA")
             - _printed("hashformers_table1", "-", "BERT-MLM", "CoLA"))
#: Table 1's tasks and the share of them on which the paper's HashFormers beat ProFormer ("6 of 8")
_PROFORMER_SHARE = 100.0 * 6 / 8


def _t2_value(id: str, statement: str, group: str, model: str, quote: str, where: str,
              printed: str | None = None, **kw: Any):
    printed = printed or load_paper_table(_T2).set_index(["group", "model"]).loc[(group, model), "#Emb_Params"]
    return value(id, statement, printed=printed, where=where, quote=quote, effect=_count(group, model),
                 reads=("table2",), section="hf-table2", **kw)


CLAIMS = ClaimSet("hashformers", "HashFormers", [
    within("proj-glue", "LSH-Proj scores within the paper's 0.4-point gap of BERT-MLM on GLUE (or above it)",
           tolerance=_PROJ_GAP, one_sided=True, where="Abstract; Table 1 (Avg.)", quote=_ABSTRACT,
           paper_value="79.1 vs 79.5",
           effect=_difference(["LSH-Proj"], ["BERT-MLM"], ("LSH-Proj", "BERT-MLM"), reference=True),
           reads=_GLUE, section="hf-glue", headline=True),
    _t2_value("proj-params", "LSH-Proj represents the embeddings with 99.1K parameters", LSH_GROUP, "Proj",
              _ABSTRACT, "Abstract; Table 2", headline=True),
    ratio("retention", "Pool, Add and Proj keep at least 94.7% of BERT-MLM's GLUE score (PRR, Eq. 4)",
          at_least=_table2_min_prr(), where="Abstract; §5.2 and Table 2 (GLUE Avg. PRR: 94.7% to 99.5%)",
          quote="We empirically demonstrate that HASHFORM-ERS are more memory efficient compared to standard "
                "pre-trained transformers while achieving comparable predictive performance when fine-tuned on "
                "multiple text classification tasks.", paper_value="94.7-99.5%", effect=_worst_retention,
          reads=_GLUE, section="hf-glue", headline=True, resolve=100.0 - _table2_min_prr(),
          resolve_note="tolerance below 100%"),
    better("emb1k-drop", "Emb (1K) scores below Emb (50K) with either hash: the smaller of the two drops is above "
           "zero", where="§5.1, Table 1",
           quote="Reducing the number of embedding vectors in Emb (1K) models is detrimental to performance and "
                 "leads to drastic drops between 11.8% and 13.1%.", paper_value="MD 79.9 vs 66.8, LSH 76.0 vs 64.2",
           effect=_worst_pair([(f"{h}-Emb (50K)", f"{h}-Emb (1K)") for h in _GROUPS],
                              "whether Emb (1K) falls behind with either hash"),
           reads=_GLUE, section="hf-glue", resolve=_EMB1K_DROP, resolve_note="smaller drop (Table 1)"),
    better("emb1k-behind", "Each of Pool, Add and Proj scores above the Emb (1K) of its hash, which has a similar "
           "embedding budget: the smallest of the six gaps is above zero",
           where="§5.2, Table 1", quote=_EMB1K_QUOTE, paper_value="8.5-14.3% (PRR)",
           effect=_worst_pair([(f"{h}-{m}", f"{h}-Emb (1K)") for h in _GROUPS for m in _COMPRESSED],
                              "whether every compressed model beats Emb (1K)"),
           reads=_GLUE, section="hf-glue", resolve=_EMB1K_BEHIND, resolve_note="smallest gap (Table 1)"),
    better("lsh-compressed", "With each of Pool, Add and Proj, LSH scores above MD5: the smallest of the three gaps is "
           "above zero", where="§5.1, Table 1",
           quote="However, LSH contributes to the performance improvement of smaller HASHFORMERS with compressed "
                 "embedding spaces compared to their MD variants, i.e. Add (78.9 vs. 75.3), Add (78.9 vs. 75.7) and "
                 "Proj (79.1 vs. 75.7).", paper_value="Pool 78.9 vs 75.3, Add 78.9 vs 75.7, Proj 79.1 vs 75.7",
           effect=_worst_pair([(f"LSH-{m}", f"MD-{m}") for m in _COMPRESSED], "whether LSH beats MD5 with each"),
           reads=_GLUE, section="hf-glue", resolve=_LSH_OVER_MD, resolve_note="smallest gap (Table 1)"),
    within("md-emb", "With Emb (50K), LSH does not score above MD5", tolerance=0, one_sided=True,
           where="§5.1, Table 1",
           quote="Surprisingly, the more sophisticated HASHFORMER-LSH-Emb that takes morphological similarity of "
                 "tokens into account does not outperform HASHFORMER-MD-Emb that uses a random hashing.",
           paper_value="79.9 vs 76.0",
           effect=_difference(["MD-Emb (50K)"], ["LSH-Emb (50K)"],
                              lambda ev: (f"MD-{_emb_label(ev)}", f"LSH-{_emb_label(ev)}")),
           reads=_GLUE, section="hf-glue", resolve=_MD_OVER_LSH, resolve_note="gap (Table 1)"),
    better("cola-add", "On CoLA, LSH-Add scores above BERT-MLM", where="§5.2, Table 2 (CoLA PRR)",
           quote="In one case, HASHFORMER-LSH-Add outperforms the BERT-MLM baseline on CoLA with a retention ratio "
                 "of 105.9% using only 197.4K parameters for token embeddings.", paper_value="105.9% (57.7 vs 54.5)",
           effect=_difference(["LSH-Add"], ["BERT-MLM"], ("LSH-Add", "BERT-MLM"), only="CoLA"), reads=_GLUE,
           section="hf-glue", resolve=_COLA_ADD, resolve_note="gap (Table 1)"),
    better("proformer", "Every HashFormer beats ProFormer (not pre-trained) on most GLUE tasks: the lowest share, "
           "over the HashFormers, of the tasks on which one scores above ProFormer is over half",
           margin=50.0, where="§5.1, Table 1",
           quote="All our HASHFORMERS show clear advantages comparing to the LSH based PROFORMER which is not "
                 "pre-trained across the majority of tasks (i.e. MNLI, QNLI, QQP, MRPC, CoLA and STS).",
           paper_value="6 of 8 tasks", effect=_beats_proformer, reads=_GLUE, section="hf-glue",
           resolve=_PROFORMER_SHARE - 50.0, resolve_note="margin over half (6 of 8 tasks)"),
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
           reads=("table6", "table6_predictions", *_GLUE), section="hf-table6", resolve=_table6_gap(),
           resolve_note="mean drop (Table 6)"),
], scale=describe_scale, brief=brief_scale)
