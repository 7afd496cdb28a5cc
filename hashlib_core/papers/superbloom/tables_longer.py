"""The Superbloom chapter's table, gaps and words for the length diagnosis (experiment ``longer``): the claims' deep
pair at Table 3's cap and at a longer one."""
from __future__ import annotations

import numpy as np
import pandas as pd

from hashlib_core.claims import Interval, paired_bootstrap

__all__ = ["longer_view", "longer_gaps", "longer_quoted"]


def _recall(segments: pd.DataFrame, name: str, cap: int, k: int) -> np.ndarray:
    """Per test segment (in segment order) whether ``name``'s run at ``cap`` ranked the target among its best k."""
    rows = segments[(segments["name"] == name) & (segments["max_steps"] == cap)].sort_values("segment")
    if rows.empty:
        raise ValueError(f"the length diagnosis has no test hits of {name} at {cap} steps")
    return rows[f"hit@{k}"].to_numpy(dtype=float)


def longer_view(longer: pd.DataFrame, segments: pd.DataFrame, ks) -> pd.DataFrame:
    """Per model and cap: the steps run, where the best validation loss came, the rate, parameters and rec@k (%)."""
    rows = []
    for _, r in longer.sort_values(["name", "max_steps"], kind="stable").iterrows():
        cap = int(r["max_steps"])
        rows.append({"model": r["name"], "cap (steps)": f"{cap:,}", "steps run": f"{int(r['steps']):,}",
                     "best step": f"{int(r['best_step']):,}" + ("" if r["converged"] else " (cap)"),
                     "learning rate": f"{r['learning_rate']:g}", "parameters": f"{int(r['total_params']):,}",
                     "best validation loss": -float(r["best_validation"]),
                     **{f"rec@{k}": 100.0 * _recall(segments, r["name"], cap, k).mean() for k in ks}})
    return pd.DataFrame(rows)


def longer_gaps(segments: pd.DataFrame, superbloom: str, baseline: str, k: int = 1) -> dict[int, Interval]:
    """At each cap, Superbloom minus the baseline in rec@k (points), with a paired bootstrap over the test segments
    (both scored on the same segments, checked)."""
    out = {}
    for cap in sorted(int(c) for c in segments["max_steps"].unique()):
        targets = [segments[(segments["name"] == n) & (segments["max_steps"] == cap)].sort_values("segment")["target"]
                   .to_numpy() for n in (superbloom, baseline)]
        if len(targets[0]) != len(targets[1]) or not np.array_equal(*targets):
            raise ValueError(f"{superbloom} and {baseline} were not scored on the same test segments at {cap} steps")
        iv = paired_bootstrap(_recall(segments, superbloom, cap, k), _recall(segments, baseline, cap, k),
                              items="test segments")
        out[cap] = Interval(100 * iv.estimate, 100 * iv.low, 100 * iv.high, iv.method, iv.n, iv.level)
    return out


def longer_quoted(longer: pd.DataFrame, segments: pd.DataFrame, superbloom: str, baseline: str, k: int = 1,
                  top: int | None = None) -> dict[str, str]:
    """The numbers and words of the length paragraph: the caps, each model's rec@k and best step at each, the gap at
    each with its interval, what the change says, and (``top``) the gap at rec@top at both caps."""
    gaps = longer_gaps(segments, superbloom, baseline, k)
    short, long = min(gaps), max(gaps)
    runs = longer.set_index(["name", "max_steps"])

    def model_text(name: str) -> str:
        parts = []
        for cap in (short, long):
            r = runs.loc[(name, cap)]
            where = "still improving at the cap" if not r["converged"] else f"best at step {int(r['best_step']):,}"
            parts.append(f"{100 * _recall(segments, name, cap, k).mean():.1f}% at {cap:,} steps ({where})")
        return f"{name}: " + ", ".join(parts)

    a, b = gaps[short], gaps[long]
    if b.low > 0:
        ahead = "stays ahead" if a.low > 0 else "is ahead"
        reading = (f"{superbloom} {ahead} at the longer cap, by an interval that excludes zero, so its lead does "
                   f"not rest on the shorter training")
    elif b.high < 0:
        reading = f"at the longer cap the baseline is ahead: the gap at {short:,} steps came from the shorter training"
    else:
        reading = (f"at the longer cap the interval includes zero: the gap at {short:,} steps may be the shorter "
                   f"training's")
    change = b.estimate - a.estimate
    trend = (f"narrows by {-change:.1f} points" if change < 0 else f"widens by {change:.1f} points" if change > 0
             else "stays the same")
    capped = [n for n in (superbloom, baseline) if not runs.loc[(n, long), "converged"]]
    still = (f"; {' and '.join(capped)} {'was' if len(capped) == 1 else 'were'} still improving at {long:,} steps, so "
             f"the gap may move again" if capped else "; both stopped before the longer cap")
    return {"lo_short": f"{short:,}", "lo_long": f"{long:,}", "lo_k": str(k),
            "lo_superbloom": model_text(superbloom), "lo_baseline": model_text(baseline),
            "lo_gap_short": f"{a.estimate:+.1f} points [{a.low:+.1f}, {a.high:+.1f}]",
            "lo_gap_long": f"{b.estimate:+.1f} points [{b.low:+.1f}, {b.high:+.1f}]",
            "lo_trend": trend, "lo_reading": reading + still, **_top_gaps(segments, superbloom, baseline, top)}


def _top_gaps(segments: pd.DataFrame, superbloom: str, baseline: str, top: int | None) -> dict[str, str]:
    """Superbloom minus the baseline at rec@top at the shorter and the longer cap (empty without ``top``)."""
    if top is None:
        return {}
    gaps = longer_gaps(segments, superbloom, baseline, top)
    a, b = gaps[min(gaps)], gaps[max(gaps)]
    return {"lo_top": str(top), "lo_top_gap_short": f"{a.estimate:+.1f} points [{a.low:+.1f}, {a.high:+.1f}]",
            "lo_top_gap_long": f"{b.estimate:+.1f} points [{b.low:+.1f}, {b.high:+.1f}]"}
