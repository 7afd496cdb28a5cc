"""Table 3 beside our timings: the paper's speed-ups (Eq. 8) and times per sample next to ours, at the profile's
encoder width and, when the profile times them there, at BERT-base's (12 x 768, sequence 512), and the numbers the
page's prose quotes."""
from __future__ import annotations

import pandas as pd

from hashlib_core.papers.hashformers.timing import CANINE_ROW, SCALES, hashformer_rows, other_inference_ms, timing_at
from hashlib_core.results import load_paper_table

__all__ = ["table3_comparison", "timing_quoted"]


def _speedup(text: str) -> str:
    return str(text).replace("x", "").strip()


def table3_comparison(timing: pd.DataFrame) -> pd.DataFrame:
    """Table 3 as printed beside our ratios (speed-up over BERT-MLM, Eq. 8) and our times per sample, at each width
    timed (the profile's encoder, then BERT-base's when the timing has those rows)."""
    scales = [s for s in SCALES if "scale" not in timing.columns and s == "profile"
              or "scale" in timing.columns and (timing["scale"] == s).any()]
    return pd.concat([_table3_at(timing_at(timing, s)) for s in scales], ignore_index=True)


def _table3_at(timing: pd.DataFrame) -> pd.DataFrame:
    paper = load_paper_table("hashformers_table3")
    merged = paper.merge(timing, on=["group", "model"], how="inner")
    width = merged["shape"] if "shape" in merged.columns else pd.Series(["profile"] * len(merged))
    return pd.DataFrame({
        "our width": width,
        "model": [m if g == "-" else f"{g.replace(' (Ours)', '')} {m}"
                  for g, m in zip(merged["group"], merged["model"])],
        "timed variant": merged["name"],
        "paper PT speed-up": merged["PT_Speed-up_Rate"].map(_speedup),
        "ours PT speed-up": merged["pt_speedup"].round(2),
        "paper infer speed-up": merged["Infer_Speed-up_Rate"].map(_speedup),
        "ours infer speed-up": merged["infer_speedup"].round(2),
        "paper PT ms/sample (V100)": merged["PT_Time_ms_per_sample"],
        f"ours PT ms/sample ({merged['device'].iloc[0]})": merged["pt_ms_per_sample"].round(2),
        "paper infer ms/sample (V100)": merged["Infer_Time_ms_per_sample"],
        f"ours infer ms/sample ({merged['device'].iloc[0]})": merged["infer_ms_per_sample"].round(3),
        "ours mean tokens (infer)": merged["infer_mean_tokens"].round(1),
    })


def timing_quoted(table: pd.DataFrame) -> dict[str, str]:
    """Table 3's numbers for the prose: S+R's pre-training speed-up at the profile's width and, when timed, at
    BERT-base's; the paper's; the units per SST-2 sentence of each tokenisation; CANINE-C's inference time against
    the slowest and the fastest other model at the widest size timed ("-" where CANINE-C was not timed)."""
    timing = timing_at(table, "profile").set_index("name")
    t3 = table3_comparison(table)
    paper_sr = t3.loc[t3["timed variant"] == "BERT-S+R", "paper PT speed-up"].iloc[0]
    out = {"timing_device": str(timing["device"].iloc[0]).upper(),
           "sr_speedup": f"{timing.loc['BERT-S+R', 'pt_speedup']:.1f}x", "paper_sr_speedup": f"{paper_sr}x",
           "tokens_bpe": f"{timing.loc['BERT-MLM', 'infer_mean_tokens']:.1f}",
           "tokens_word": f"{timing.loc['MD-Proj', 'infer_mean_tokens']:.1f}",
           "sr_speedup_base": "-", "hf_speedups_base": "-", "infer_speedups_base": "-"}
    at_base = "scale" in table.columns and (table["scale"] == "paper").any()
    widest = timing_at(table, "paper").set_index("name") if at_base else timing
    out.update(_canine_quoted(widest))
    if at_base:
        hf = hashformer_rows(widest)
        out.update(sr_speedup_base=f"{widest.loc['BERT-S+R', 'pt_speedup']:.2f}x",
                   hf_speedups_base=_range(hf["pt_speedup"]), infer_speedups_base=_range(hf["infer_speedup"]))
    return out


def _canine_quoted(timing: pd.DataFrame) -> dict[str, str]:
    """CANINE-C's inference time over the slowest and the fastest of the other models (BERT's and the HashFormers'),
    its characters per sentence and the size timed; the paper's printed CANINE-C and BERT-MLM inference times."""
    paper = load_paper_table("hashformers_table3").set_index("model")
    printed = {"paper_canine_ms": str(paper.loc[CANINE_ROW[1], "Infer_Time_ms_per_sample"]),
               "paper_bert_ms": str(paper.loc["-MLM", "Infer_Time_ms_per_sample"]),
               "paper_canine_speedup": str(paper.loc[CANINE_ROW[1], "Infer_Speed-up_Rate"])}
    name = CANINE_ROW[2]
    if name not in timing.index:
        return {**printed, **{k: "-" for k in ("canine_width", "canine_slowest", "canine_slowest_name",
                                               "canine_fastest", "canine_fastest_name", "canine_chars")}}
    others = other_inference_ms(timing)
    ms = timing.loc[name, "infer_ms_per_sample"]
    return {**printed, "canine_width": str(timing.loc[name, "shape"]),
            "canine_slowest": f"{ms / others.max():.2f}x", "canine_slowest_name": str(others.idxmax()),
            "canine_fastest": f"{ms / others.min():.2f}x", "canine_fastest_name": str(others.idxmin()),
            "canine_chars": f"{timing.loc[name, 'infer_mean_tokens']:.0f}"}


def _range(values: pd.Series) -> str:
    """``"1.61x to 1.70x"``, or one ratio when both ends print alike."""
    low, high = f"{values.min():.2f}x", f"{values.max():.2f}x"
    return low if low == high else f"{low} to {high}"
