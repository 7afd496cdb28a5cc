"""The MultiHashFormer chapter's scaling and corpus tables: the Standard-vs-MHF gap at every backbone size, the
second test set, the expansion's intervals, and the sentences the prose quotes about them.

Each function takes result tables (or the shown profile) and returns a DataFrame or a dict of strings.
"""
from __future__ import annotations

import pandas as pd

from hashlib_core.claims import correlation_interval
from hashlib_core.claims.glue import trend_direction
from hashlib_core.papers.multihashformer.profiles import CORPORA

__all__ = ["corpus_text", "scaling_view", "other_tests_view", "expansion_intervals_view", "sweep_view",
           "rates_view", "rates_sentence", "scaling_quoted"]


def corpus_text(profile) -> dict[str, str]:
    """What the profile's language models train and are tested on, in words (for captions and prose)."""
    train = CORPORA[profile.corpus]
    test = "Penn Treebank test split" if profile.corpus == "ptb" else "WikiText-2 test split"
    return {"train": train, "test": test,
            "trained_on": f"trained on {train}, scored on the {test}"}


def _interval(est: float, low: float, high: float, digits: int = 2) -> str:
    return f"{est:+.{digits}f} [{low:+.{digits}f}, {high:+.{digits}f}]"


def scaling_view(gaps: pd.DataFrame) -> pd.DataFrame:
    """One row per size and (MHF, Standard) pair: both totals and whether they match, and the gaps with their
    95% paired bootstrap intervals over the test windows (seeds averaged per window)."""
    view = pd.DataFrame({
        "size (d/ffn/layers)": gaps["size"], "MHF": gaps["mhf"], "Standard model": gaps["baseline"],
        "MHF params": gaps["mhf_total_params"].map(lambda v: f"{int(round(v)):,}"),
        "Standard params": gaps["baseline_total_params"].map(lambda v: f"{int(round(v)):,}"),
        "MHF excess (%)": (100 * gaps["total_excess"]).round(1),
        "pairing": gaps["pairing"], "seeds": gaps["seeds"],
        "MHF acc. (%)": gaps["mhf_accuracy_%"].round(2), "Standard acc. (%)": gaps["baseline_accuracy_%"].round(2),
        "accuracy gap, points [95%]": [_interval(*r) for r in
                                       gaps[["accuracy_gap", "accuracy_gap_low", "accuracy_gap_high"]].values],
        "per-seed gaps": [f"{lo:+.2f} .. {hi:+.2f}" for lo, hi in
                          gaps[["accuracy_gap_seed_min", "accuracy_gap_seed_max"]].values],
        "calibrated CE gap, nats [95%]": [_interval(*r, digits=3) for r in
                                          gaps[["ce_gap", "ce_gap_low", "ce_gap_high"]].values],
    })
    return view


def other_tests_view(other: pd.DataFrame, lm: pd.DataFrame) -> pd.DataFrame:
    """The language-model section's models on the other test sets, beside their main-test accuracy."""
    main = lm.set_index("model")["test_accuracy_%"]
    view = other.copy()
    view["main test accuracy (%)"] = view["model"].map(main)
    return view.rename(columns={"test_set": "test set", "test_accuracy_%": "accuracy (%)",
                                "test_perplexity": "perplexity", "test_perplexity_calibrated": "calibrated perplexity",
                                "test_tokens": "tokens"})


def expansion_intervals_view(intervals: pd.DataFrame) -> pd.DataFrame:
    """Per language: MHF minus Standard after CPT (bits per byte, calibrated; negative: MHF better) and Standard's
    change minus MHF's (positive: MHF forgets or loses less), each with its bootstrap interval."""
    return pd.DataFrame({
        "language": intervals["language"], "held-out sentences": intervals["sentences"],
        "MHF - Standard after CPT, bits/byte [95%]": [
            _interval(*r, digits=3) for r in intervals[["bpb_gap_after", "bpb_gap_after_low",
                                                        "bpb_gap_after_high"]].values],
        "Standard's change - MHF's [95%]": [
            _interval(*r, digits=3) for r in intervals[["change_difference", "change_difference_low",
                                                        "change_difference_high"]].values],
    })


def sweep_view(sweep: pd.DataFrame) -> pd.DataFrame:
    """The learning-rate sweep: each family's representative at every rate, scored on the validation split."""
    view = sweep[["family", "model", "learning_rate", "valid_accuracy_%", "valid_perplexity", "chosen"]].copy()
    view["chosen"] = view["chosen"].map({True: "chosen", False: ""})
    return view.rename(columns={"learning_rate": "learning rate", "valid_accuracy_%": "validation accuracy (%)",
                                "valid_perplexity": "validation perplexity (P_inf for MHF)"})


def rates_view(rates: pd.DataFrame) -> pd.DataFrame:
    """The sweep at the curve's other sizes: validation and test accuracy of each representative at every rate."""
    view = rates[["size", "model", "learning_rate", "valid_accuracy_%", "test_accuracy_%"]].copy()
    view["note"] = [", ".join(n for n, on in (("chosen (the curve's rate here)", c), ("the profile size's rate", o))
                              if on) for c, o in zip(rates["chosen"].astype(bool),
                                                     rates["profile_size_rate"].astype(bool))]
    return view.rename(columns={"learning_rate": "learning rate", "valid_accuracy_%": "validation accuracy (%)",
                                "test_accuracy_%": "test accuracy (%)"})


def rates_sentence(rates: pd.DataFrame) -> str:
    """Per size and model: the rate chosen on validation against the one chosen at the profile's size, with both
    test accuracies (first seed)."""
    parts = []
    for (size, model), g in rates.groupby(["size", "model"], sort=False):
        b = g[g["chosen"].astype(bool)].iloc[0]
        o = g[g["profile_size_rate"].astype(bool)].iloc[0]
        parts.append(f"at {size}, {model} chooses {b['learning_rate']:g}"
                     + (" (the profile size's rate)" if b["learning_rate"] == o["learning_rate"] else
                        f" (test accuracy {b['test_accuracy_%']:.2f}%, against {o['test_accuracy_%']:.2f}% at the "
                        f"profile size's {o['learning_rate']:g})"))
    return "; ".join(parts)


def _verdict(low: float, high: float, better: str, worse: str) -> str:
    if low > 0:
        return better
    if high < 0:
        return worse
    return "indistinguishable"


def scaling_quoted(shown) -> dict[str, str]:
    """Every number the scaling and corpus prose quotes, from the shown results."""
    p = shown.profile
    text = corpus_text(p)
    out = {"corpus_train": text["train"], "corpus_test": text["test"], "corpus_trained_on": text["trained_on"]}
    card = shown.table("card660")
    card = card[(card["layer"] == "second_to_last") & (card["pooling"] == "last_token")].set_index("model")
    signal = []
    for name in (m for m in card.index if str(m).startswith("Standard")):
        iv = correlation_interval(float(card.loc[name, "pearson_r"]), int(card.loc[name, "pairs"]))
        excludes = iv.low > 0 or iv.high < 0
        signal.append(f"{name} r = {iv.estimate:.3f} [{iv.low:.3f}, {iv.high:.3f}], "
                      f"{'which excludes' if excludes else 'which includes'} zero")
    out["card_std_signal"] = "; ".join(signal)
    if shown.has("lr_sweep"):
        sweep = shown.table("lr_sweep")
        chosen = sweep[sweep["chosen"].astype(bool)]
        out["lr_chosen"] = "; ".join(f"{r['family']} {r['learning_rate']:g}" for _, r in chosen.iterrows())
        edge = chosen[chosen["at_edge"].astype(bool)]["family"].tolist()
        out["lr_edge"] = (f"at the edge of the sweep for {' and '.join(edge)}, so a rate beyond it might do better"
                          if edge else "inside the sweep for both families")
        out["lr_rates"] = ", ".join(f"{r:g}" for r in p.lr_sweep)
    if shown.has("scaling_rates"):
        out["rates_by_size"] = rates_sentence(shown.table("scaling_rates"))
    gaps = shown.table("scaling_gaps")
    trend = shown.table("scaling_trend")
    sizes = list(dict.fromkeys(gaps["size"]))
    out.update(scale_sizes=", ".join(sizes), scale_n=str(len(sizes)), scale_seeds=str(len(p.scale_seeds)))
    for (mhf, base), rows in gaps.groupby(["mhf", "baseline"], sort=False):
        key = f"scale_{mhf}_{'deep' if base.startswith('Standard+') else 'std'}".lower()
        out[key] = "; ".join(
            f"{r['size']}: {_interval(r['accuracy_gap'], r['accuracy_gap_low'], r['accuracy_gap_high'])} "
            f"({_verdict(r['accuracy_gap_low'], r['accuracy_gap_high'], 'MHF better', 'MHF worse')})"
            for _, r in rows.iterrows())
        out[key + "_match"] = "; ".join(f"{r['size']}: {100 * r['total_excess']:+.1f}%" for _, r in rows.iterrows())
    for _, r in trend.iterrows():
        key = f"trend_{r['mhf']}_{'deep' if r['baseline'].startswith('Standard+') else 'std'}".lower()
        at = gaps[(gaps["mhf"] == r["mhf"]) & (gaps["baseline"] == r["baseline"])]
        direction = trend_direction(at["accuracy_gap"].tolist(), at["accuracy_gap_low"].tolist(),
                                    at["accuracy_gap_high"].tolist(), over="sizes")
        out[key] = (f"{direction}; the change from {r['from_size']} to {r['to_size']} is "
                    f"{_interval(r['accuracy_change'], r['accuracy_change_low'], r['accuracy_change_high'])} points")
    return out
