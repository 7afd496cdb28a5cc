"""Effects of MultiHashFormer's language-model and expansion claims, read from the scaling curve and the expansion's
intervals.

The language-model claims read ``scaling_gaps`` and ``scaling_trend``
(:mod:`hashlib_core.papers.multihashformer.scaling`): every size trained with several seeds, each gap with a paired
bootstrap interval over the test windows (seeds averaged per window). That interval covers the windows only, and
the per-window scores of each seed are not committed, so it cannot be recomputed as a two-level bootstrap; the
claims widen it by the seeds' own spread (a Welch interval over the per-seed accuracies of ``scaling_runs``, added
in quadrature: :func:`hashlib_core.claims.statistics.combined`) and flag it ``not-recomputable``. Every language model
trains a fixed number of steps with its loss still falling (flag ``cap``). A claim the paper makes at every scale is
read at the size where it is weakest. The expansion claims read ``expansion_intervals`` (paired bootstraps over the
held-out sentences of each language; one model each).
"""
from __future__ import annotations

from typing import Any, Callable

import pandas as pd

from hashlib_core.claims import Effect, Interval, NotTestable, combined, seed_contrast

__all__ = ["scale_gap", "deeper_at_smallest", "gap_trend", "new_languages", "english_forgetting", "describe_curve"]


def _profile(ev: Any) -> str:
    return getattr(getattr(ev, "profile", None), "name", "?")


def _is_deep(label: str) -> bool:
    return str(label).startswith("Standard+")


def _gaps(ev: Any, mhf: Callable[[str], bool], deep: bool) -> pd.DataFrame:
    if not ev.has("scaling_gaps"):
        raise NotTestable(f"the {_profile(ev)} profile trains no scaling curve")
    gaps = ev.table("scaling_gaps")
    if gaps.empty:
        raise NotTestable(f"the {_profile(ev)} profile's scaling curve has no MHF and Standard pair")
    rows = gaps[gaps["mhf"].map(mhf) & (gaps["baseline"].map(_is_deep) == deep)]
    if rows.empty:
        raise NotTestable(f"the {_profile(ev)} profile's scaling curve has no such pair")
    return rows


#: what every language-model effect of the scaling curve carries: no committed per-window scores, fixed-length runs
LM_FLAGS = ("cap", "not-recomputable")
LM_NOTE = ("per-window scores of each seed not committed: the windows' interval widened by the seeds' spread; every "
           "model trained a fixed number of steps, its loss still falling")


def _accuracies(ev: Any, size: str, model: str) -> list[float]:
    if not ev.has("scaling_runs"):
        return []
    runs = ev.table("scaling_runs")
    rows = runs[(runs["size"] == size) & (runs["model"] == model)]
    return rows["test_accuracy_%"].astype(float).tolist()


def _widened(items: Interval, groups: list[list[float]], signs: list[float]) -> tuple[Interval, tuple[str, ...]]:
    """``items`` widened by the seeds' spread over ``groups`` of per-seed accuracies, and the flags it carries; a
    model without per-seed scores leaves the windows' interval alone, flagged ``items-only``."""
    if any(not g for g in groups):
        return items, LM_FLAGS + ("items-only",)
    return combined(items, seed_contrast(groups, signs)), LM_FLAGS


def _interval_of(ev: Any, row: pd.Series, sign: float = 1.0, note: str = "") -> tuple[Interval, tuple[str, ...]]:
    """A gap's committed interval over the test windows, widened by the seeds' spread (per-seed accuracies)."""
    est, low, high = (sign * float(row[c]) for c in ("accuracy_gap", "accuracy_gap_low", "accuracy_gap_high"))
    low, high = min(low, high), max(low, high)
    items = Interval(est, low, high, f"{row['interval']}, {int(row['seeds'])} seeds averaged per window{note}",
                     covers=("items",))
    return _widened(items, [_accuracies(ev, row["size"], row["mhf"]), _accuracies(ev, row["size"], row["baseline"])],
                    [sign, -sign])


def _listing(rows: pd.DataFrame) -> str:
    return "; ".join(f"{r['size']} ({r['mhf']} {int(round(r['mhf_total_params'])):,} vs {r['baseline']} "
                     f"{int(round(r['baseline_total_params'])):,} params): {r['accuracy_gap']:+.2f} "
                     f"[{r['accuracy_gap_low']:+.2f}, {r['accuracy_gap_high']:+.2f}]" for _, r in rows.iterrows())


def scale_gap(mhf: Callable[[str], bool], deep: bool = False, *, matched: bool = False) -> Callable[[Any], Effect]:
    """Next-token accuracy of the MHF model(s) ``mhf`` selects minus Standard (``deep``: Standard+kL) at every size of
    the scaling curve (``matched``: only where their totals agree within 5%); the effect is the smallest gap."""
    def effect(ev: Any) -> Effect:
        rows = _gaps(ev, mhf, deep)
        if matched:
            rows = rows[rows["matched"].astype(bool)]
            if rows.empty:
                raise NotTestable(f"no size of the {_profile(ev)} profile's curve has the pair within 5% in "
                                  "parameters")
        worst = rows.loc[rows["accuracy_gap"].idxmin()]
        iv, flags = _interval_of(ev, worst, note=f"; the smallest gap of {len(rows)} sizes")
        return Effect(iv, f"accuracy gap (points) by size: {_listing(rows)}", unit="points",
                      note=f"effect: the size where MHF's gap is smallest (the paper claims every scale); {LM_NOTE}",
                      flags=flags)
    return effect


def deeper_at_smallest(ev: Any) -> Effect:
    """At the smallest size: Standard+kL minus the best MHF in next-token accuracy."""
    rows = _gaps(ev, lambda m: True, True)
    smallest = rows[rows["size"] == rows["size"].iloc[0]]
    best = smallest.loc[smallest["accuracy_gap"].idxmax()]
    iv, flags = _interval_of(ev, best, -1.0)
    return Effect(iv, f"at {best['size']}: {best['baseline']} minus the best MHF, "
                  f"{best['mhf']} ({_listing(smallest)}: MHF minus {best['baseline']})", unit="points", note=LM_NOTE,
                  flags=flags)


def gap_trend(mhf: str, deep: bool) -> Callable[[Any], Effect]:
    """How ``mhf``'s accuracy gap to Standard (``deep``: Standard+kL) moves from the smallest size to the largest."""
    def effect(ev: Any) -> Effect:
        if not ev.has("scaling_trend"):
            raise NotTestable(f"the {_profile(ev)} profile trains no scaling curve")
        trend = ev.table("scaling_trend")
        if trend.empty:
            raise NotTestable(f"the {_profile(ev)} profile's scaling curve has a single size")
        rows = trend[(trend["mhf"] == mhf) & (trend["baseline"].map(_is_deep) == deep)]
        if rows.empty:
            raise NotTestable(f"the {_profile(ev)} profile's curve has fewer than two sizes for {mhf}")
        r = rows.iloc[0]
        iv = Interval(float(r["accuracy_change"]), float(r["accuracy_change_low"]), float(r["accuracy_change_high"]),
                      str(r["interval"]), covers=("items",))
        groups = [_accuracies(ev, r["to_size"], mhf), _accuracies(ev, r["to_size"], r["baseline"]),
                  _accuracies(ev, r["from_size"], mhf), _accuracies(ev, r["from_size"], r["baseline"])]
        iv, flags = _widened(iv, groups, [1.0, -1.0, -1.0, 1.0])
        at = _gaps(ev, lambda m: m == mhf, deep)
        return Effect(iv, f"{mhf} minus {r['baseline']} from {r['from_size']} to {r['to_size']}: {_listing(at)}",
                      unit="points", note=f"effect: the gap at the largest size minus the gap at the smallest; "
                                          f"{LM_NOTE}", flags=flags)
    return effect


def _intervals(ev: Any) -> pd.DataFrame:
    if not ev.has("expansion_intervals"):
        raise NotTestable(f"the {_profile(ev)} profile keeps no per-sentence expansion scores")
    table = ev.table("expansion_intervals")
    if table.empty:
        raise NotTestable(f"Standard and an MHF model are not both expanded in the {_profile(ev)} profile")
    return table.set_index("language")


def new_languages(ev: Any) -> Effect:
    """Share of the new languages on which MHF is not worse than Standard after CPT (its bits-per-byte interval does
    not lie wholly above Standard's), calibrated."""
    table = _intervals(ev)
    langs = [lang for lang in table.index if lang != "en"]
    if not langs:
        raise NotTestable(f"no new language is scored in the {_profile(ev)} profile")
    fine = [lang for lang in langs if table.loc[lang, "bpb_gap_after_low"] <= 0.0]
    text = "; ".join(f"{lang} {table.loc[lang, 'bpb_gap_after']:+.3f} [{table.loc[lang, 'bpb_gap_after_low']:+.3f}, "
                     f"{table.loc[lang, 'bpb_gap_after_high']:+.3f}]" for lang in langs)
    return Effect(Interval(len(fine) / len(langs), method=f"count over {len(langs)} languages, each judged by a "
                           f"{table['interval'].iloc[0]}"),
                  f"{len(fine)} of {len(langs)} not worse ({table['mhf'].iloc[0]} minus Standard, bits per byte "
                  f"after CPT, calibrated: {text})", unit="share of languages", flags=("one-run",))


def english_forgetting(ev: Any) -> Effect:
    """Standard's change in English bits per byte through expansion and CPT minus MHF's (positive: MHF forgets
    less), calibrated, with the paired bootstrap over the held-out English sentences."""
    table = _intervals(ev)
    if "en" not in table.index:
        raise NotTestable(f"English is not scored in the {_profile(ev)} profile")
    r = table.loc["en"]
    iv = Interval(float(r["change_difference"]), float(r["change_difference_low"]),
                  float(r["change_difference_high"]), str(r["interval"]), covers=("items",))
    return Effect(iv, f"Standard's English change minus {r['mhf']}'s: {r['change_difference']:+.3f} bits per byte "
                  "(calibrated)", unit="bits per byte",
                  note="effect: Standard's change minus MHF's (positive: MHF forgets less)", flags=("one-run",))


def describe_curve(p: Any) -> str:
    """The scaling curve's sizes and seeds, in words."""
    sizes = ", ".join(p.scale_sizes) if p.scale_sizes else p.own_size()
    return f"the scaling curve at d/ffn/layers {sizes}, {len(p.scale_seeds)} seed(s) each"
