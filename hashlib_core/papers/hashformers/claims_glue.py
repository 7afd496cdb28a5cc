"""The HashFormers chapter's GLUE effects (:mod:`~hashlib_core.papers.hashformers.claims`): which tasks a claim
reads (the shared held-out rule), which models sit at their floor, and each comparison's two-level paired bootstrap
over the dev items and fine-tuning runs, with its flags and its *no signal* condition."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from hashlib_core.claims import Effect, NoSignal, NotTestable
from hashlib_core.claims.glue import GluePredictions, at_floor, capped_runs, compare, mean_difference
from hashlib_core.claims.glue import learned_tasks as shared_learned_tasks
from hashlib_core.papers.hashformers import tables
from hashlib_core.papers.hashformers.finetuning import PAPER_TASK_COLUMN
from hashlib_core.papers.hashformers.profiles import LSH_GROUP, MD_GROUP

__all__ = ["floors", "learned_tasks"]

_TASK = {column: task for task, column in PAPER_TASK_COLUMN.items()}
#: what an interval over fine-tuning seeds does not cover
_ONCE = "each model pre-trained once: the seeds vary fine-tuning only"
_COMPRESSED = ("Pool", "Add", "Proj")
_GROUPS = {"MD": MD_GROUP, "LSH": LSH_GROUP}


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
    return Effect(iv, ours, unit="%", note=_note("the lowest of six retentions, bootstrapped as one", _ONCE,
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
