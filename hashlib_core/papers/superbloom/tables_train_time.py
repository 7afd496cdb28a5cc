"""The Superbloom chapter's table and quoted numbers for §2.4's training time (experiment ``train_time``): a
training step of the unhashed model and of Superbloom, the same Transformer, over id spaces of growing size."""
from __future__ import annotations

import pandas as pd

from hashlib_core.params import humanize

__all__ = ["train_time_pairs", "train_time_view", "train_time_quoted"]


def train_time_pairs(train_time: pd.DataFrame) -> pd.DataFrame:
    """One row per id space (ascending): the unhashed model's and Superbloom's vocabulary, parameters and
    milliseconds per step, and the paired speed-up (median, min, max of unhashed / Superbloom)."""
    base = train_time[train_time["alpha"] == 1].set_index("num_ids")
    sb = train_time[train_time["alpha"] > 1].set_index("num_ids")
    if base.empty or sb.empty or set(base.index) != set(sb.index):
        raise ValueError("train_time needs one unhashed and one Superbloom row per id space")
    out = pd.DataFrame({"num_ids": sorted(base.index)}).set_index("num_ids", drop=False)
    for prefix, rows in (("base", base), ("sb", sb)):
        for col in ("name", "vocab_size", "total_params", "ms_per_step"):
            out[f"{prefix}_{col}"] = rows[col]
    for col in ("speedup_median_paired", "speedup_min_paired", "speedup_max_paired"):
        out[col] = sb[col]
    return out.reset_index(drop=True)


def train_time_view(train_time: pd.DataFrame) -> pd.DataFrame:
    """The reader's table: per id space, both models' softmax size, parameters and time per step, and the paired
    speed-up with its range."""
    pairs = train_time_pairs(train_time)
    return pd.DataFrame({
        "ids": pairs["num_ids"].map("{:,}".format),
        "unhashed: softmax": pairs["base_vocab_size"].map("{:,}".format),
        "unhashed: parameters": pairs["base_total_params"].map(humanize),
        "unhashed (ms/step)": pairs["base_ms_per_step"],
        "Superbloom: softmax": pairs["sb_vocab_size"].map("{:,}".format),
        "Superbloom: parameters": pairs["sb_total_params"].map(humanize),
        "Superbloom (ms/step)": pairs["sb_ms_per_step"],
        "speed-up (median pair)": pairs["speedup_median_paired"],
        "range of pairs": [f"{lo:.2f} to {hi:.2f}" for lo, hi in zip(pairs["speedup_min_paired"],
                                                                      pairs["speedup_max_paired"])]})


def train_time_quoted(train_time: pd.DataFrame) -> dict[str, str]:
    """The numbers the training-time paragraph quotes: the models' shape, the id spaces, both models' step times at
    the smallest and the largest, the speed-ups there, and how the unhashed step and the speed-up move with the ids."""
    pairs = train_time_pairs(train_time)
    first, last = pairs.iloc[0], pairs.iloc[-1]
    row = train_time.iloc[0]
    grow = last["base_ms_per_step"] / first["base_ms_per_step"]
    grow_sb = last["sb_ms_per_step"] / first["sb_ms_per_step"]
    rising = bool((pairs["speedup_median_paired"].diff().dropna() > 0).all())
    if len(pairs) < 2:
        trend = "only one id space was timed, so no trend can be read"
    elif rising:
        trend = "the speed-up grows with every larger id space"
    else:
        trend = "the speed-up does not grow steadily with the id space"
    return {"tt_hidden": str(int(row["hidden"])), "tt_layers": str(int(row["layers"])),
            "tt_batch": str(int(row["batch"])), "tt_repeats": str(int(row["repeats"])),
            "tt_steps": str(int(row["steps_per_timing"])),
            "tt_ids": ", ".join(f"{n:,}" for n in pairs["num_ids"]),
            "tt_first_ids": f"{int(first['num_ids']):,}", "tt_last_ids": f"{int(last['num_ids']):,}",
            "tt_first_base": f"{first['base_ms_per_step']:,.0f}", "tt_first_sb": f"{first['sb_ms_per_step']:,.0f}",
            "tt_last_base": f"{last['base_ms_per_step']:,.0f}", "tt_last_sb": f"{last['sb_ms_per_step']:,.0f}",
            "tt_first_speedup": f"{first['speedup_median_paired']:.2f}",
            "tt_first_reading": ("Superbloom is slower there: its m-fold sequences cost more than its smaller "
                                 "softmax saves" if first["speedup_median_paired"] < 1
                                 else "Superbloom is already faster there"),
            "tt_last_speedup": f"{last['speedup_median_paired']:.1f}",
            "tt_last_range": f"{last['speedup_min_paired']:.1f} to {last['speedup_max_paired']:.1f}",
            "tt_base_growth": f"{grow:.0f}", "tt_sb_growth": f"{grow_sb:.1f}",
            "tt_id_growth": f"{last['num_ids'] / first['num_ids']:.0f}", "tt_trend": trend}
