"""The pNLP-Mixer chapter's latency numbers: the per-sentence benchmark's table and same-run ratios with their verdicts
(:mod:`hashlib_core.benchmarks.pnlp_mixer_latency`), and how the Mixer's and the Transformer's cost grow with the
sequence length (:mod:`hashlib_core.benchmarks.pnlp_mixer_scaling`). :mod:`~hashlib_core.papers.pnlp_mixer.tables`
re-exports all of them; the page reads them from there.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["ENCODER_LABELS", "latency_view", "medians", "latency_ratios", "share_sentence", "transformer_sentence",
           "matmul_sentence", "scaling_view", "scaling_facts"]

#: our names -> the paper's row labels (Table 2)
ENCODER_LABELS = {"projection-only": "Projection-only", "cnn": "CNN", "lstm": "LSTM", "transformer": "Transformer",
                  "mixer": "MLP-Mixer"}


def latency_view(bench: dict) -> pd.DataFrame:
    """The latency benchmark's per-sentence times (batch 1, one thread), beside the paper's (§6, "for the
    non-quantized pNLP-Mixer model", on a Xeon E5-2690v4): projection 0.4 ms, total 2.4 ms, so the paper's total
    stands beside our float32 Mixer as the Hugging Face model runs it. Absolute times do not transfer between CPUs."""
    data = bench.get("data", bench)
    paper = data.get("paper", {})
    rows = []
    for name, v in data["latency"].items():
        kind, _, rest = name.partition("_")
        if kind == "projection":
            stage, paper_ms = f"projection ({rest})", paper.get("projection_ms") if rest == "cached" else None
        else:
            model, _, precision = rest.partition("_")
            precision = precision.replace("_lean", ", lean path").replace("_unfused", ", unfused path")
            precision = precision.replace("_", " ")
            stage = f"{kind}: {ENCODER_LABELS.get(model, model)}, {precision}"
            paper_ms = paper.get("total_ms") if (kind, model, precision) == ("total", "mixer", "float32") else None
        rows.append({"stage": stage, "median (ms)": v["median_ms"], "mean (ms)": v["mean_ms"],
                     "paper (ms)": np.nan if paper_ms is None else paper_ms})
    return pd.DataFrame(rows)


def medians(bench: dict) -> dict[str, float]:
    """The latency benchmark's median milliseconds per stage (``model_mixer_float32``, ``projection_cached``, ...)."""
    return {k: v["median_ms"] for k, v in bench.get("data", bench)["latency"].items()}


def latency_ratios(bench: dict) -> dict[str, float]:
    """The issue's same-run ratios: projection share of the total (cached), the share of the core's matmul
    throughput the float Mixer reaches (``_lean``: through its lean inference path, if timed), and the Mixer's
    speed and FLOPs against the same-size Transformer (if timed; its time is the faster of its fused and unfused
    paths when both were timed)."""
    data = bench.get("data", bench)
    lat = medians(bench)
    out = {"projection_share": lat["projection_cached"] / lat["total_mixer_float32"],
           "paper_projection_share": data.get("paper", {}).get("projection_share", float("nan")),
           "matmul_fraction": data["ratios"]["fraction_of_core_matmul_model_mixer_float32"],
           "core_gflops": data["matmul"]["core_gflops_per_s"],
           "cache_speedup": lat["projection_uncached"] / lat["projection_cached"]}
    lean = "model_mixer_float32_lean" in lat
    if lean:
        out["matmul_fraction_lean"] = data["ratios"]["fraction_of_core_matmul_model_mixer_float32_lean"]
        out["projection_share_lean"] = lat["projection_cached"] / lat["total_mixer_float32_lean"]
    if "model_transformer_float32" in lat:
        # the Transformer at its best: the faster of its fused and unfused paths when both were timed
        transformer = min(lat["model_transformer_float32"], lat.get("model_transformer_float32_unfused", np.inf))
        out["mixer_vs_transformer"] = transformer / lat["model_mixer_float32"]
        if lean:
            out["mixer_vs_transformer_lean"] = transformer / lat["model_mixer_float32_lean"]
        flops = data.get("flops_per_sentence", {})
        if "mixer" in flops and "transformer" in flops:
            out["mixer_over_transformer_flops"] = flops["mixer"] / flops["transformer"]
    return out


def _speed(speedup: float) -> str:
    ratio = speedup if speedup >= 1 else 1 / speedup
    shown = f"{ratio:.2f}" if ratio < 1.1 else f"{ratio:.1f}"     # near 1, one decimal would read "1.0 times"
    return f"is {shown} times as fast" if speedup >= 1 else f"takes {shown} times as long"


def share_sentence(share: float, goal: float = 0.05) -> str:
    """The verdict on the cached projection's share of the total time (our goal: at most 5%)."""
    return (f"{'within' if share <= goal else 'above'} our goal of at most {100 * goal:.0f}% with the fingerprint "
            f"cache")


def transformer_sentence(speedup: float, lean: float | None = None) -> str:
    """The prose for the Mixer's speed against the same-size Transformer (``speedup`` = Transformer / Mixer time;
    ``lean``: the same for the Mixer's lean inference path)."""
    best = max(speedup, lean or 0.0)
    verdict = ("which meets the goal of at least twice as fast" if best >= 2
               else "so the goal (a Mixer at least twice as fast) is not met")
    if lean is None:
        return f"the Mixer {_speed(speedup)} as the Transformer, {verdict}"
    return f"the Mixer {_speed(speedup)} as the Transformer and its lean inference path {_speed(lean)}, {verdict}"


def matmul_sentence(fraction: float, goal: float = 0.6, why: bool = True) -> str:
    """The prose for the share of the core's matmul throughput the float Mixer reaches at batch one (``why``: with
    the reason when it falls short)."""
    if fraction >= goal:
        return f"which meets our goal of {100 * goal:.0f}%"
    reason = (": at batch one the model is a chain of small matrix products with a normalisation or an activation "
              "between them") if why else ""
    return f"short of our goal of {100 * goal:.0f}%{reason}"


def _scaling_rows(bench: dict) -> pd.DataFrame:
    data = bench.get("data", bench)
    rows = pd.DataFrame(data["rows"])
    if rows.empty or not {"mixer", "transformer"} <= set(rows["model"]):
        raise ValueError("the scaling benchmark needs rows for the models 'mixer' and 'transformer'; run "
                         "python -m hashlib_core.benchmarks.pnlp_mixer_scaling")
    if "lean_equals_eager" in rows and (rows["lean_equals_eager"] == False).any():   # noqa: E712 (NaN elsewhere)
        raise ValueError("the lean path's logits differed from the eager Mixer's in this run, so its times are not "
                         "times of the same model: fix MixerForInference and re-run the benchmark")
    return rows


def _transformer_at_best(ms: pd.DataFrame) -> pd.DataFrame:
    """The Transformer's time is the faster of its fused and unfused paths when both were timed."""
    if "transformer_unfused" in ms:
        ms = ms.assign(transformer=ms[["transformer", "transformer_unfused"]].min(axis=1))
    return ms


def scaling_view(bench: dict) -> pd.DataFrame:
    """One row per sequence length (the index, ``positions``): the Transformer over the Mixer in matrix-product
    FLOPs and in median time (above 1: the Mixer is cheaper / faster; ``lean``: the Mixer's lean path), each
    model's milliseconds (the Transformer's: the faster of its fused and unfused paths) and MFLOP, and the Mixer's
    parameters in millions (its token-mixing weights are as wide as the sequence; the Transformer's parameters do
    not change, :func:`scaling_facts` gives them)."""
    rows = _scaling_rows(bench)
    flops = rows.pivot(index="seq_len", columns="model", values="flops")
    ms = _transformer_at_best(rows.pivot(index="seq_len", columns="model", values="median_ms"))
    params = rows.pivot(index="seq_len", columns="model", values="parameters")
    lean = "mixer_lean" in ms
    out = pd.DataFrame({"FLOP T/M": flops["transformer"] / flops["mixer"],
                        "time T/M": ms["transformer"] / ms["mixer"]})
    if lean:
        out["time T/M, lean"] = ms["transformer"] / ms["mixer_lean"]
    out["Mixer ms"] = ms["mixer"]
    if lean:
        out["lean ms"] = ms["mixer_lean"]
    out["Transformer ms"] = ms["transformer"]
    out["Mixer MFLOP"] = flops["mixer"] / 1e6
    out["Transformer MFLOP"] = flops["transformer"] / 1e6
    out["Mixer params (M)"] = params["mixer"] / 1e6
    out.index.name = "positions"
    return out


def _from(view: pd.DataFrame, holds: pd.Series) -> str:
    """"from N positions on" for the shortest length from which ``holds`` is true at every longer measured length;
    otherwise that it does not hold at the longest length measured."""
    if not bool(holds.iloc[-1]):
        return f"not even at {int(view.index[-1])} positions, the longest measured"
    failing = view.index[~holds.to_numpy()]
    first = view.index[view.index > failing.max()][0] if len(failing) else view.index[0]
    return f"from {int(first)} positions on"


def scaling_facts(bench: dict, chapter_length: int | None = None) -> dict[str, str]:
    """The page's numbers on scaling: the lengths measured; from which length on the Mixer needs no more and at most
    half the Transformer's FLOPs, and from which it runs at least as fast and at least twice as fast (the eager
    Mixer: ``sc_faster``, ``sc_2x_eager``; the better of eager and lean: ``sc_faster_best``, ``sc_2x``); at the
    longest length the FLOP ratio, the faster Mixer path's speed (a phrase: "is 3.5 times as fast") and both models'
    achieved GFLOP/s; the Transformer's parameters (``sc_t_params``, a clause); and ``sc_goal``, the verdict on a
    Mixer at least twice as fast (with ``chapter_length``, the chapter's models' positions, named when it was
    measured and the goal is not met there)."""
    view = scaling_view(bench)
    speed = view["time T/M"]
    best = view[[c for c in ("time T/M", "time T/M, lean") if c in view]].max(axis=1)
    flops = view["FLOP T/M"]
    longest = int(view.index[-1])
    twice = best >= 2
    if not twice.any():
        goal = f"is not met at any length up to {longest} positions"
    elif not bool(twice.iloc[-1]):
        met = ", ".join(str(int(s)) for s in view.index[twice.to_numpy()])
        goal = f"is met at {met} positions but not at {longest}, the longest measured"
    else:
        goal = f"is met {_from(view, twice)}"
        if chapter_length in view.index and not bool(twice.loc[chapter_length]):
            goal += f", not at the {chapter_length} positions of this chapter's models"
    params = _scaling_rows(bench).query("model == 'transformer'")["parameters"]
    t_params = (f"the Transformer's stay at {int(params.iloc[0]):,}" if params.nunique() == 1
                else f"the Transformer's range from {int(params.min()):,} to {int(params.max()):,}")
    return {"sc_goal": goal, "sc_lengths": ", ".join(str(int(s)) for s in view.index), "sc_longest": str(longest),
            "sc_flops_even": _from(view, flops >= 1), "sc_flops_2x": _from(view, flops >= 2),
            "sc_faster": _from(view, speed >= 1), "sc_2x_eager": _from(view, speed >= 2),
            "sc_faster_best": _from(view, best >= 1), "sc_2x": _from(view, twice),
            "sc_flops_ratio_longest": f"{flops.loc[longest]:.1f}", "sc_speed_longest": _speed(best.loc[longest]),
            "sc_rate_t_longest": f"{view.loc[longest, 'Transformer MFLOP'] / view.loc[longest, 'Transformer ms']:.0f}",
            "sc_rate_m_longest": f"{view.loc[longest, 'Mixer MFLOP'] / view.loc[longest, 'Mixer ms']:.0f}",
            "sc_t_params": t_params}
