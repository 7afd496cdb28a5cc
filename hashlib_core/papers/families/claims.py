"""The every-family chapter's claims: the comparative sentences of the book's papers that one backbone with every
family can test, each on both Track A tasks, with a two-level paired bootstrap: every resample draws the report items
(the same draw for both families) and, within each family, its chosen seeds with replacement, so the interval
covers the variation between training runs as well as the choice of items. A family trained with one seed is flagged
``1 run`` (its training noise is not in the interval), a run best at its step cap ``cap``, a family whose learning
rate is still the smallest or largest its sweep tried, after the rates added beyond the grid, ``rate at edge``, a
family whose held-out
accuracy does not rise above the held-out majority class by more than the held-out set's noise ``floor``. Each
verdict's power is read against the source paper's own gap where it prints one.

* HashFormers (§5): MD5 hashing generally beats the LSH hashing of morphology (``md5-emb`` against ``lsh-emb`` at
  the sweep budget), and the 1K-row table "falls far behind" the compressed Pool/Add/Proj models at a similar size
  (``md5-proj`` against ``md5-emb`` at the smallest budget).
* MultiHashFormer (§6): multi-ID signatures beat single-ID ones (``gated-signatures`` against the one-hash
  ``hashing-trick`` at the sweep budget).
* Superbloom (§4): random hashing with Superbloom digests may beat coherent hashing (``superbloom`` against
  ``lsh-emb``, whose rows follow the pieces' spelling).

The claims are about the families, not the source papers' backbones: every verdict reads this chapter's 2-layer
encoder. Track B's memories come from papers whose texts are not in the book, so no claim quotes them.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from hashlib_core.claims import ClaimSet, Effect, NotTestable, better, paired_bootstrap
from hashlib_core.claims.glue import FLOOR_Z, MIN_FLOOR_MARGIN
from hashlib_core.papers.families.data import TASKS, heldout_size
from hashlib_core.papers.families.track_a import rate_edges, unpack
from hashlib_core.results import load_paper_table, parse_printed

__all__ = ["CLAIMS", "family_gap"]

_TASK_LABEL = {"sst2": "SST-2 report (held out of train)", "massive": "MASSIVE EN test"}


def _chosen(runs, family: str, fraction: float | None):
    rows = runs[(runs["family"] == family) & runs["chosen"]]
    if fraction is not None:
        rows = rows[np.isclose(rows["fraction"], fraction)]
    if rows.empty:
        where = f" at {fraction:g} of the table" if fraction is not None else ""
        raise NotTestable(f"{family} has no chosen run{where} in this profile")
    return rows


def _correct(runs, family: str, fraction: float | None) -> tuple[np.ndarray, float, int]:
    """``(seeds, items)`` correctness of ``family``'s chosen runs (at ``fraction``; ``None``: its one size), its
    mean parameter count and its number of seeds."""
    rows = _chosen(runs, family, fraction)
    bits = np.stack([unpack(b, int(n)) for b, n in zip(rows["correct"], rows["n_items"])]).astype(float)
    return bits, float(rows["emb_params"].mean()), len(rows)


def _at_floor(ev: Any, task: str, rows) -> bool:
    """Whether a family's chosen runs (``rows``) stay at the held-out majority class: their mean held-out accuracy
    not above it by more than :data:`~hashlib_core.claims.glue.FLOOR_Z` standard errors of a model that learned
    nothing on that many held-out items (the rule of :func:`hashlib_core.claims.glue.floor_margin`)."""
    if not ev.has("majority"):
        return False
    majority = float(ev.table("majority").set_index("task").loc[task, "heldout_majority"])
    n = heldout_size(task, ev.profile)
    p = majority / 100.0
    margin = max(MIN_FLOOR_MARGIN, FLOOR_Z * 100.0 * math.sqrt(p * (1 - p) / n))
    return float(rows["heldout_accuracy"].mean()) <= majority + margin


def family_gap(task: str, a: str, b: str, at: Callable[[Any], float | None],
               at_b: Callable[[Any], float | None] | None = None) -> Callable[[Any], Effect]:
    """Effect: accuracy of ``a`` minus ``b`` on ``task`` (points), paired bootstrap over the report items."""
    def effect(ev: Any) -> Effect:
        p = ev.profile
        if task not in p.tasks:
            raise NotTestable(f"{task} is not trained in the {p.name} profile")
        runs = ev.table("runs")
        runs = runs[runs["task"] == task]
        xa, pa, sa = _correct(runs, a, at(p))
        xb, pb, sb = _correct(runs, b, (at_b or at)(p))
        iv = paired_bootstrap(100 * xa, 100 * xb, items=f"{_TASK_LABEL[task]} items")
        ours = (f"{a} {100 * xa.mean():.1f} ({pa:,.0f} params, {sa} seed{'s' * (sa > 1)}) vs {b} "
                f"{100 * xb.mean():.1f} ({pb:,.0f}, {sb}) on {_TASK_LABEL[task]}")
        rows = [_chosen(runs, a, at(p)), _chosen(runs, b, (at_b or at)(p))]
        capped = sum(int((r["best_step"] >= r["max_steps"]).sum()) for r in rows
                     if {"best_step", "max_steps"} <= set(r.columns))
        edges = rate_edges(runs)
        edged = [f for f in (a, b) if ((edges["family"] == f) & edges["at_edge"].astype(bool)).any()]
        flags = (["cap"] if capped else []) + (["rate-edge"] if edged else []) + (
            ["one-run"] if min(sa, sb) < 2 else []) + (["floor"] if any(_at_floor(ev, task, r) for r in rows) else [])
        notes = ([f"{capped} of {sa + sb} runs best at their step cap ({int(rows[0]['max_steps'].max()):,})"]
                 if capped else []) + ([f"the rate of {' and '.join(edged)} is still at an end of its sweep"]
                                       if edged else [])
        note = "; ".join(notes)
        return Effect(iv, ours, unit="points", flags=tuple(flags), note=note)
    return effect


def _sweep(p) -> float:
    return p.sweep_budget


def _smallest(p) -> float:
    return min(p.budgets)


def _one_size(p) -> None:
    return None


def _scale(p: Any) -> str:
    def listed(values) -> str:
        return ", ".join(f"{v:g}" for v in values)

    return (f"{p.name} profile: BERT's classifier, {p.layers} layers, {p.hidden} wide, over BERT's uncased WordPiece "
            f"with each family in place of the table; {listed(p.budgets)} of the table; "
            + "; ".join(f"{t}: rates {listed(p.protocol(t).learning_rates)} (chosen per family on held-out data), "
                        f"at most {p.protocol(t).max_steps:,} steps of {p.batch}, {len(p.protocol(t).seeds)} seeds"
                        for t in p.tasks)
            + f" at {listed(p.seeded_budgets) or 'every budget'} for {', '.join(p.seeded_families) or 'every family'}"
            + (f" (and at {min(p.budgets):g} for {', '.join(p.seeded_smallest)})" if p.seeded_smallest else ""))


_HF_MD5 = ("We believe that HASHFORMER-MD generally outperforms HASHFORMER-LSH mainly due to its ability to map "
           "morphologically similar tokens to different vectors.")
_HF_EMB = ("Despite the fact that HASH-FORMERS-Emb (1K) has a similar number of embedding parameters as the embedding "
           "compression approaches (i.e. Pool, Add, Proj), it falls far behind those models")
_MHF = "Models with Multi-ID signatures consistently outperform those using Single-ID"
_SB = "random hashing with Superbloom digests may outperform coherent hashing."

def _brief(p: Any) -> str:
    seeds = sorted({len(p.protocol(t).seeds) for t in p.tasks})
    return f"{p.layers} x {p.hidden} encoder, {'/'.join(map(str, seeds))} seeds for the compared families"


def _hf(hash_: str, model: str) -> float:
    group = {"MD": "HashFormers-MD (Ours)", "LSH": "HashFormers-LSH (Ours)"}[hash_]
    return parse_printed(load_paper_table("hashformers_table1").set_index(["group", "model"]).loc[(group, model),
                                                                                                "Avg"]).value


def _mhf_smallest_gap() -> float:
    t3 = load_paper_table("multihashformer_table3").set_index("MHF")
    return min(float(t3.loc["H4", c]) - float(t3.loc["H1", c]) for c in t3.columns)


#: the source papers' own gaps: what each verdict's power is read against
_RESOLVE = {"md5-over-lsh": (_hf("MD", "Emb (50K)") - _hf("LSH", "Emb (50K)"), "gap (HashFormers Table 1 average)"),
            "compressed-over-small-table": (_hf("MD", "Proj") - _hf("MD", "Emb (1K)"),
                                            "gap (HashFormers Table 1 average)"),
            "multi-over-single": (_mhf_smallest_gap(), "smallest H4 - H1 gap (MultiHashFormer Table 3)")}

_CLAIMS = []
for _task in TASKS:
    _CLAIMS += [
        better(f"md5-over-lsh-{_task}", f"MD5 hashing beats LSH hashing of the spelling at equal size ({_task})",
               where="HashFormers, §5 (Results)", quote=_HF_MD5,
               effect=family_gap(_task, "md5-emb", "lsh-emb", _sweep), reads=("runs", "majority"),
               section="fam-replace", unit="points", resolve=_RESOLVE["md5-over-lsh"][0],
               resolve_note=_RESOLVE["md5-over-lsh"][1]),
        better(f"compressed-over-small-table-{_task}", "A compressed embedding (Proj over the 128-bit MD5 code) "
               f"beats the smallest hashed table, a few times its size as in the paper's pair ({_task})",
               where="HashFormers, §5 (Table 2)",
               quote=_HF_EMB, effect=family_gap(_task, "md5-proj", "md5-emb", _one_size, _smallest),
               reads=("runs", "majority"), section="fam-replace", unit="points",
               resolve=_RESOLVE["compressed-over-small-table"][0],
               resolve_note=_RESOLVE["compressed-over-small-table"][1]),
        better(f"multi-over-single-{_task}", f"Multi-ID signatures beat a single hash at equal size ({_task})",
               where="MultiHashFormer, §6 (Single vs. Multi-hash ID)", quote=_MHF,
               effect=family_gap(_task, "gated-signatures", "hashing-trick", _sweep), reads=("runs", "majority"),
               section="fam-replace", unit="points", resolve=_RESOLVE["multi-over-single"][0],
               resolve_note=_RESOLVE["multi-over-single"][1]),
        better(f"random-over-coherent-{_task}", f"Random (Superbloom) hashing beats coherent (LSH) hashing at equal "
               f"size ({_task})", where="Superbloom, §4", quote=_SB,
               effect=family_gap(_task, "superbloom", "lsh-emb", _sweep), reads=("runs", "majority"),
               section="fam-replace", unit="points"),
    ]

CLAIMS = ClaimSet("families", "Every family on one backbone", _CLAIMS, scale=_scale, brief=_brief)
