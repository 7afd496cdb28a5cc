"""The Superbloom chapter's decoding tables: certified beam search timed against exhaustive scoring (the benchmark's
synthetic distributions and a trained model's), and the numbers the speed paragraphs quote."""
from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["BENCH_GOAL", "decoding_view", "decoding_quoted", "bench_view", "speed_quoted"]


#: the decoding goal (times faster than exhaustive scoring, median of paired timings); the paper reports 10
BENCH_GOAL = 20.0
#: headers of the decoding timings' columns, shared by the benchmark's table and the trained model's
_SPEED_HEADERS = {"exhaustive_ms_per_position": "exhaustive (ms)", "beam_ms_per_position": "beam (ms)",
                  "speedup": "speed-up (best times)", "speedup_median_paired": "speed-up (median pair)",
                  "speedup_min_paired": "slowest pair", "speedup_max_paired": "fastest pair",
                  "certified_share": "certified (%)", "certified_exact_share": "certified and exact (%)",
                  "mean_candidates_scored": "candidates scored"}


def _speed_view(rows: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """``columns`` of decoding timings with the shares in percent and the reader's headers."""
    out = rows[columns].copy()
    out["certified_share"] *= 100.0
    out["certified_exact_share"] *= 100.0
    return out.rename(columns=_SPEED_HEADERS)


def speed_quoted(rows: pd.DataFrame, prefix: str, every: str, part: str) -> dict[str, str]:
    """The range of median paired speed-ups, how many rows meet :data:`BENCH_GOAL` (``every`` / ``part``, formatted
    with ``met`` and ``n``, complete "the goal is met ..."), and the smallest certified and exact shares."""
    paired = rows["speedup_median_paired"]
    met = int((paired >= BENCH_GOAL).sum())
    return {f"{prefix}_speedup_min": f"{paired.min():.1f}", f"{prefix}_speedup_max": f"{paired.max():.1f}",
            f"{prefix}_goal_verdict": "the goal is met " + (every if met == len(rows) else
                                                            part.format(met=met, n=len(rows))),
            f"{prefix}_certified": f"{100 * rows['certified_share'].min():.0f}%",
            f"{prefix}_exact": f"{100 * np.nanmin(rows['certified_exact_share']):.0f}%"}


def decoding_view(decoding: pd.DataFrame) -> pd.DataFrame:
    """The trained model at the paper's |S|: per k, time per position both ways, speed-ups, certified and exact."""
    return _speed_view(decoding, ["k", "exhaustive_ms_per_position", "beam_ms_per_position", "speedup_median_paired",
                                  "speedup_min_paired", "speedup_max_paired", "certified_share",
                                  "certified_exact_share", "mean_candidates_scored"])


def decoding_quoted(decoding: pd.DataFrame) -> dict[str, str]:
    """The numbers the trained-model decoding paragraph quotes."""
    first = decoding.iloc[0]
    ks = [int(k) for k in decoding["k"]]
    scored = decoding["mean_candidates_scored"] / decoding["num_ids"]
    return {"dec_ids": f"{int(first['num_ids']):,}", "dec_data_ids": f"{int(first['data_ids']):,}",
            "dec_tokens": f"{int(first['tokens_per_map']):,}", "dec_steps": f"{int(first['steps']):,}",
            "dec_segments": f"{int(first['test_segments']):,}", "dec_positions": f"{int(first['positions']):,}",
            **{f"dec_rec{k}": f"{first[f'rec@{k}']:.1f}" for k in ks},
            "dec_recall_certified": f"{first['recall_certified_%']:.0f}%",
            **speed_quoted(decoding, "dec", "for every k", "for {met} of {n} values of k"),
            "dec_scored_max": f"{100 * scored.max():.2f}%"}


def bench_view(bench: dict) -> pd.DataFrame:
    """The decoding benchmark's rows: time per position both ways, speed-up, certified and exact shares (%)."""
    return _speed_view(pd.DataFrame(bench.get("data", bench)["results"]),
                       ["distribution", "k", "exhaustive_ms_per_position", "beam_ms_per_position", "speedup",
                        "speedup_median_paired", "certified_share", "certified_exact_share", "mean_candidates_scored"])
