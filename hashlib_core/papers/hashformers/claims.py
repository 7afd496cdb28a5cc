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
from typing import Any, Callable, Sequence

import numpy as np

from hashlib_core.claims import ClaimSet, Effect, NoSignal, NotTestable, better, ratio, value, within
from hashlib_core.claims.glue import GluePredictions, at_floor, capped_runs, compare, held_out_floor, mean_difference
from hashlib_core.claims.glue import learned_tasks as shared_learned_tasks
from hashlib_core.papers.hashformers import tables
from hashlib_core.papers.hashformers.finetuning import PAPER_TASK_COLUMN
from hashlib_core.papers.hashformers.profiles import LSH_GROUP, MD_GROUP, PROFILES
from hashlib_core.papers.hashformers.claims_timing import canine_infer, hf_vs_sr, infer, sr_pt, table3_pt_spread
from hashlib_core.params import humanize
from hashlib_core.results import load_paper_table, parse_printed

__all__ = ["CLAIMS", "learned_tasks", "held_out_floor", "floors", "describe_scale", "brief_scale"]

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


# ------------------------------------------------------------------------------------------------ reading our results
def _floor(column: str) -> str:
    return "at no correlation" if column == "STS" else "at the majority class"


def floors(evidence: Any) -> dict[str, dict[str, bool]]:
    """``{Table 1 column: {model: at its floor}}`` for every fine-tuned task, decided on the held-out part of the
    training split (:func:`hashlib_core.claims.glue.at_floor`)."""
    runs, p = evidence.table("glue_runs"), evidence.profile
    return {PAPER_TASK_COLUMN[t]: at_floor(runs, t, p) for t in p.task_keys()}


def learned_tasks(evidence: Any) -> tuple[list[str], list[str]]:
    """(Table 1 columns of the fine-tuned tasks on which some model learns, the others): the shared rule
    (:func:`hashlib_core.claims.glue.learned_tasks`), decided on held-out data."""
    learned, stuck = shared_learned_tasks(evidence.table("glue_runs"), evidence.profile.task_keys(), evidence.profile)
    return [PAPER_TASK_COLUMN[t] for t in learned], [PAPER_TASK_COLUMN[t] for t in stuck]


def _columns(evidence: Any, only: str | None = None) -> tuple[list[str], str]:
    """The task columns a claim compares, and a note naming them and those left out (``only``: one task)."""
    learned, stuck = learned_tasks(evidence)
    if only is not None:
        if only not in learned + stuck:
            raise NotTestable(f"{only} is not fine-tuned in the {evidence.profile.name} profile")
        if only in stuck:
            raise NoSignal(f"every model stays {_floor(only)} on the held-out part of {only}'s training split: "
                           "there is nothing to compare at this scale")
        return [only], ""
    floor = "at the majority class" + (" (STS-B: at no correlation)" if "STS" in stuck else "")
    if not learned:
        raise NoSignal(f"every model stays {floor} on the held-out part of every task fine-tuned "
                       f"({', '.join(stuck)})")
    left = (f"; left out, every model staying {floor} on the held-out part of its training split: "
            f"{', '.join(stuck)}" if stuck else "")
    return learned, f"mean over {', '.join(learned)}{left}"


def _stuck_everywhere(evidence: Any, names: Sequence[str], columns: Sequence[str]) -> list[str]:
    """Those of ``names`` at their floor on every one of ``columns``."""
    f = floors(evidence)
    return [n for n in names if all(f[c].get(n, True) for c in columns)]


def _flags(evidence: Any, names: Sequence[str], columns: Sequence[str]) -> tuple[str, ...]:
    """``pt-once`` always; ``cap`` when a chosen run of ``names`` on ``columns`` was best at its last epoch;
    ``floor`` when one of ``names`` sits at its floor on one of ``columns``."""
    out = ["pt-once"]
    capped, _ = capped_runs(evidence.table("glue_runs"), names, [_TASK[c] for c in columns])
    if capped:
        out.append("cap")
    f = floors(evidence)
    if any(f[c].get(n, False) for n in names for c in columns):
        out.append("floor")
    return tuple(out)


def _cap_note(evidence: Any, names: Sequence[str], columns: Sequence[str]) -> str:
    capped, total = capped_runs(evidence.table("glue_runs"), names, [_TASK[c] for c in columns])
    return f"{capped} of {total} chosen runs best at their last epoch" if capped else ""


def _predictions(evidence: Any, *extra: str) -> GluePredictions:
    """The dev predictions of the chapter's fine-tuning runs (and of ``extra`` records, e.g. Table 6's)."""
    return GluePredictions.from_records(evidence.json("glue_predictions"), *(evidence.json(e) for e in extra))


def _names(hashes: Sequence[str], models: Sequence[str]) -> list[str]:
    return [f"{h}-{m}" for h in hashes for m in models]


def _emb_label(evidence: Any) -> str:
    """``Emb (50K)``, or ``Emb (N = 4,096, paper's 50K)`` when the profile builds it with another N."""
    return tables.shown_name("Emb (50K)", evidence.profile.emb_buckets)


def _note(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def _difference(a: Sequence[str], b: Sequence[str], labels: tuple[str, str] | Callable[[Any], tuple[str, str]],
                only: str | None = None, reference: bool = False) -> Callable[[Any], Effect]:
    """Effect: the mean score of models ``a`` minus that of models ``b`` over the tasks that learn (or ``only``
    one), with a two-level paired bootstrap over the dev items and fine-tuning runs. *No signal* when every model
    compared sits at its floor on every task read, or (``reference``: a tolerance measured against ``b``) when
    ``b`` does."""
    def effect(evidence: Any) -> Effect:
        columns, note = _columns(evidence, only)
        tasks = [_TASK[c] for c in columns]
        iv = compare(_predictions(evidence), {"a": list(a), "b": list(b)}, tasks, mean_difference)
        la, lb = labels(evidence) if callable(labels) else labels
        glue = evidence.table("glue").set_index("name")
        mean_a = float(glue.loc[list(a), columns].to_numpy().mean())
        mean_b = float(glue.loc[list(b), columns].to_numpy().mean())
        where = f" on {only}" if only else ""
        stuck = _stuck_everywhere(evidence, [*a, *b], columns)
        silent = ""
        if len(stuck) == len({*a, *b}):
            silent = f"every model compared stays at its floor on the held-out part of {', '.join(columns)}"
        elif reference and set(b) <= set(stuck):
            silent = (f"{lb}, the reference, stays at its floor on the held-out part of {', '.join(columns)}: a "
                      "tolerance measured against it reads chance")
        return Effect(iv, f"{la} {mean_a:.1f} vs {lb} {mean_b:.1f}{where} ({iv.estimate:+.1f} points)", unit="points",
                      note=_note(_ONCE, note, _cap_note(evidence, [*a, *b], columns)),
                      flags=_flags(evidence, [*a, *b], columns), no_signal=silent)
    return effect


def _worst_pair(pairs: Sequence[tuple[str, str]], statement: str) -> Callable[[Any], Effect]:
    """Effect: the smallest, over ``pairs`` (a, b), of a's mean score minus b's over the tasks that learn, with a
    two-level paired bootstrap of that minimum as one statistic (a claim about *each* of several models)."""
    def effect(evidence: Any) -> Effect:
        columns, note = _columns(evidence)
        tasks = [_TASK[c] for c in columns]
        names = list(dict.fromkeys(n for pair in pairs for n in pair))
        groups = {n: [n] for n in names}

        def lowest(scores: dict[str, np.ndarray]) -> np.ndarray:
            return np.min([np.mean(scores[a], axis=0) - np.mean(scores[b], axis=0) for a, b in pairs], axis=0)

        iv = compare(_predictions(evidence), groups, tasks, lowest)
        glue = evidence.table("glue").set_index("name")
        gaps = {(a, b): float(glue.loc[a, columns].mean() - glue.loc[b, columns].mean()) for a, b in pairs}
        (wa, wb), (ba, bb) = min(gaps, key=gaps.get), max(gaps, key=gaps.get)
        ours = (f"smallest: {wa} {glue.loc[wa, columns].mean():.1f} vs {wb} {glue.loc[wb, columns].mean():.1f} "
                f"({gaps[(wa, wb)]:+.1f} points); largest: {ba} minus {bb} {gaps[(ba, bb)]:+.1f}, over "
                f"{', '.join(columns)}")
        stuck = set(_stuck_everywhere(evidence, names, columns))
        silent = ""
        if {wa, wb} <= stuck:
            silent = (f"{wa} and {wb}, the pair that decides {statement}, both stay at their floor on the held-out "
                      f"part of {', '.join(columns)}")
        return Effect(iv, ours, unit="points",
                      note=_note(f"the smallest of {len(pairs)} gaps, bootstrapped as one", _ONCE, note,
                                 _cap_note(evidence, names, columns)),
                      flags=_flags(evidence, names, columns), no_signal=silent)
    return effect


def _worst_retention(evidence: Any) -> Effect:
    """The lowest GLUE retention (PRR, Eq. 4: a model's mean score over the tasks as a percentage of BERT-MLM's)
    among the six compressed HashFormers, on the tasks that learn where BERT-MLM itself learns: the claim is that
    every one keeps the printed share, so the statistic is the lowest of the six, bootstrapped over the dev items and
    runs as one."""
    columns, note = _columns(evidence)
    glue = evidence.table("glue")
    f = floors(evidence)
    kept = [c for c in columns if not f[c].get("BERT-MLM", True)]
    if not kept:
        raise NoSignal(f"BERT-MLM stays at its floor on the held-out part of every task some model learns "
                       f"({', '.join(columns)}): a retention would divide by chance")
    models = _names(_GROUPS, _COMPRESSED)
    groups = {"BERT-MLM": ["BERT-MLM"], **{m: [m] for m in models}}

    def lowest(scores: dict[str, np.ndarray]) -> np.ndarray:
        base = np.mean(scores["BERT-MLM"], axis=0)
        return np.min([100.0 * np.mean(scores[m], axis=0) / base for m in models], axis=0)

    iv = compare(_predictions(evidence), groups, [_TASK[c] for c in kept], lowest)
    by = glue.set_index("name")
    prr = {m: 100.0 * by.loc[m, kept].mean() / by.loc["BERT-MLM", kept].mean() for m in models}
    worst, best = min(prr, key=prr.get), max(prr, key=prr.get)
    ours = (f"lowest {worst} {prr[worst]:.1f}% of BERT-MLM's score (highest {best} {prr[best]:.1f}%), over "
            f"{', '.join(kept)}")
    dropped = [c for c in columns if c not in kept]
    why = f"; left out, BERT-MLM at its floor there: {', '.join(dropped)}" if dropped else ""
    return Effect(iv, ours, unit="%", note=_note(f"the lowest of six retentions, bootstrapped as one", _ONCE,
                                                 note + why, _cap_note(evidence, ["BERT-MLM", *models], kept)),
                  flags=_flags(evidence, ["BERT-MLM", *models], kept))


def _beats_proformer(evidence: Any) -> Effect:
    """Every HashFormer against ProFormer (not pre-trained): the share of the tasks that learn on which a HashFormer
    scores above ProFormer, the lowest over the HashFormers, bootstrapped over the dev items and runs as one
    statistic. *No signal* when ProFormer and a HashFormer both stay at their floor on every task read: their tie at
    the floor decides the lowest share."""
    glue = evidence.table("glue").set_index("name")
    if "ProFormer" not in glue.index:
        raise NotTestable("ProFormer was not fine-tuned in these results (the profile's setting proformer)")
    columns, note = _columns(evidence)
    models = [n for n in glue.index if glue.loc[n, "group"] in (MD_GROUP, LSH_GROUP)]
    if not models:
        raise NotTestable("no HashFormer was fine-tuned in these results")

    def lowest(scores: dict[str, np.ndarray]) -> np.ndarray:
        base = scores["ProFormer"]
        return np.min([100.0 * np.mean(scores[m] > base, axis=0) for m in models], axis=0)

    groups = {"ProFormer": ["ProFormer"], **{m: [m] for m in models}}
    iv = compare(_predictions(evidence), groups, [_TASK[c] for c in columns], lowest)
    wins = {m: int((glue.loc[m, columns] > glue.loc["ProFormer", columns]).sum()) for m in models}
    worst, best = min(wins, key=wins.get), max(wins, key=wins.get)
    won = (f"every HashFormer wins {wins[worst]} of {len(columns)} tasks" if wins[worst] == wins[best] else
           f"fewest tasks won: {worst} {wins[worst]} of {len(columns)} (most: {best} {wins[best]})")
    ours = f"{won}; ProFormer " + ", ".join(f"{c} {glue.loc['ProFormer', c]:.1f}" for c in columns)
    stuck = _stuck_everywhere(evidence, ["ProFormer", *models], columns)
    silent = ""
    if "ProFormer" in stuck and len(stuck) > 1:
        tied = [m for m in stuck if m != "ProFormer"]
        silent = (f"ProFormer and {', '.join(tied)} {'both' if len(tied) == 1 else 'all'} stay at their floor on the "
                  f"held-out part of "
                  f"{', '.join(columns)}: their tie at the floor decides the lowest share")
    return Effect(iv, ours, unit="%",
                  note=_note(f"the lowest of {len(models)} shares of tasks won, bootstrapped as one", _ONCE, note,
                             _cap_note(evidence, ["ProFormer", *models], columns)),
                  flags=_flags(evidence, ["ProFormer", *models], columns), no_signal=silent)


def _table6_effect(evidence: Any) -> Effect:
    """Word units minus BPE subword units, averaged over Table 6's four models and its tasks that learn, paired over
    the dev items (each subword model against its word-unit model)."""
    learned, _ = learned_tasks(evidence)
    columns = [PAPER_TASK_COLUMN[t] for t in evidence.profile.task_keys(table6=True)]
    columns = [c for c in columns if c in learned]
    if not columns:
        raise NoSignal("every model stays at its floor on the held-out part of the tasks Table 6 is fine-tuned on")
    t6 = evidence.table("table6")
    subwords = list(t6["name"])
    words = [n.replace(" [BPE]", "") for n in subwords]
    iv = compare(_predictions(evidence, "table6_predictions"), {"a": words, "b": subwords},
                 [_TASK[c] for c in columns], mean_difference)
    glue = evidence.table("glue").set_index("name")
    word, sub = float(glue.loc[words, columns].to_numpy().mean()), float(t6[columns].to_numpy().mean())
    ours = (f"word {word:.1f} vs subword {sub:.1f} ({iv.estimate:+.1f} points), mean of "
            f"{', '.join(tables.shown_name(w, b) for w, b in zip(words, t6['num_buckets']))} over {', '.join(columns)}")
    cap = _cap_note(evidence, words, columns)
    flags = ["pt-once"] + (["cap"] if cap else [])
    return Effect(iv, ours, unit="points", note=_note(_ONCE, cap), flags=tuple(flags))


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
_EMB1K_DROP = float(np.mean([_avg(h, "Emb (50K)") - _avg(h, "Emb (1K)") for h in _GROUPS]))
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
    better("emb1k-drop", "Emb (1K) scores below Emb (50K), with either hash", where="§5.1, Table 1",
           quote="Reducing the number of embedding vectors in Emb (1K) models is detrimental to performance and "
                 "leads to drastic drops between 11.8% and 13.1%.", paper_value="MD 79.9 vs 66.8, LSH 76.0 vs 64.2",
           effect=_difference(_names(_GROUPS, ["Emb (50K)"]), _names(_GROUPS, ["Emb (1K)"]),
                              lambda ev: (f"MD/LSH-{_emb_label(ev)}", "MD/LSH-Emb (1K)")),
           reads=_GLUE, section="hf-glue", resolve=_EMB1K_DROP, resolve_note="mean drop (Table 1)"),
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
