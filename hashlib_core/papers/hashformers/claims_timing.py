"""The HashFormers claims that read Table 3's timings (:mod:`~hashlib_core.papers.hashformers.timing`): one
measurement each (the mean of the repetitions), at BERT-base's width when the profile timed it there, else at the
profile's."""
from __future__ import annotations

import dataclasses
from typing import Any

import pandas as pd

from hashlib_core.claims import Effect, Interval, NotTestable
from hashlib_core.papers.hashformers.timing import (CANINE_ROW, TIMING_VOCAB, hashformer_rows, other_inference_ms,
                                                    timing_at)
from hashlib_core.results import load_paper_table, parse_printed

__all__ = ["table3_pt_spread", "sr_pt", "hf_vs_sr", "infer", "canine_infer"]


def table3_pt_spread() -> float:
    """The largest gap, in %, between a HashFormer's printed pre-training time and BERT-S+R's (Table 3)."""
    t3 = load_paper_table("hashformers_table3")
    sr = parse_printed(t3.set_index("model").loc["-S+R", "PT_Time_ms_per_sample"]).value
    rows = t3[t3["group"].str.startswith("HASHFORMERS")]
    return round(max(abs(100 * (parse_printed(t).value / sr - 1)) for t in rows["PT_Time_ms_per_sample"]), 1)


def _timing(evidence: Any) -> pd.DataFrame:
    """The timing rows the claims read: at BERT-base's width when the profile timed it (comparable with the paper's),
    else at the profile's."""
    table = evidence.table("timing")
    paper_width = "scale" in table.columns and (table["scale"] == "paper").any()
    t = timing_at(table, "paper" if paper_width else "profile").set_index("name")
    missing = [n for n in ("BERT-MLM", "BERT-S+R") if n not in t.index]
    if missing or hashformer_rows(t).empty:
        raise NotTestable(f"the timing table lacks {', '.join(missing) or 'every HashFormer'}")
    return t


def _timed(evidence: Any, ratio_: float, ours: str, why: str = "") -> Effect:
    """A timing effect: one measurement (the mean of the repetitions), at BERT-base's width when timed there."""
    t = _timing(evidence)
    device = str(t["device"].iloc[0]).upper()
    profile = evidence.profile
    where = str(t["shape"].iloc[0]) if "shape" in t.columns else f"{profile.layers} x {profile.hidden}"
    at_base = "scale" in t.columns and t["scale"].iloc[0] == "paper"
    return Effect(Interval(ratio_, method="one measurement (mean of repetitions, spread not kept): no interval"),
                  ours, unit="x", note=f"timed on {device} at {where}" + ("" if at_base else why))


def sr_pt(evidence: Any) -> Effect:
    t = _timing(evidence)
    sr = pd.concat([t.loc[["BERT-S+R"], "pt_speedup"], hashformer_rows(t)["pt_speedup"]])
    return _timed(evidence, float(sr.min()), f"slowest S+R model {sr.idxmin()} {sr.min():.1f}x faster than BERT-MLM "
                                             f"(BERT-S+R {t.loc['BERT-S+R', 'pt_speedup']:.1f}x)",
                  f", where BERT-MLM's {TIMING_VOCAB:,}-token output layer weighs far more against the encoder than "
                  f"at BERT-base's width: the ratio is not comparable with the paper's")


def hf_vs_sr(evidence: Any) -> Effect:
    t = _timing(evidence)
    gaps = 100 * (t["pt_ms_per_sample"] / t.loc["BERT-S+R", "pt_ms_per_sample"] - 1)
    gaps = gaps[hashformer_rows(t).index]
    far = gaps.abs().idxmax()
    effect = _timed(evidence, float(gaps[far]), f"farthest: {far} {gaps[far]:+.0f}% of BERT-S+R's pre-training time "
                                                f"(range {gaps.min():+.0f}% to {gaps.max():+.0f}%)")
    return dataclasses.replace(effect, unit="%")


def infer(evidence: Any) -> Effect:
    t = _timing(evidence)
    bert = t.loc[["BERT-MLM", "BERT-S+R"], "infer_ms_per_sample"].min()
    hf = hashformer_rows(t)["infer_ms_per_sample"]
    return _timed(evidence, float(bert / hf.min()),
                  f"fastest {hf.idxmin()} {bert / hf.min():.2f}x the faster BERT's inference speed (word units: "
                  f"{t.loc[hf.idxmin(), 'infer_mean_tokens']:.1f} per SST-2 sentence vs BPE "
                  f"{t.loc['BERT-MLM', 'infer_mean_tokens']:.1f})")


def canine_infer(evidence: Any) -> Effect:
    t = _timing(evidence)
    canine = CANINE_ROW[2]
    if canine not in t.index:
        raise NotTestable("this timing table has no CANINE-C row (written before CANINE-C was timed): recompute "
                          "the timing experiment")
    others = other_inference_ms(t)
    slowest, ms = others.idxmax(), t.loc[canine, "infer_ms_per_sample"]
    return _timed(evidence, float(ms / others[slowest]),
                  f"CANINE-C {ms:.1f} ms/sample: {ms / others[slowest]:.2f}x the slowest other model's time "
                  f"({slowest}, {others[slowest]:.1f}), {ms / others.min():.2f}x the fastest's ({others.idxmin()}); "
                  f"{t.loc[canine, 'infer_mean_tokens']:.0f} characters per SST-2 sentence")
