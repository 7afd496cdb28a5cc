"""The scaling curve of the headline (MultiHashFormer Table 1 at 100M, 1B and 3B): Standard vs MHF at several
backbone sizes, each trained with several seeds on the same data and schedule.

The paper's Table 1 compares models at an **equal decoder**: MHF (H3B10K) has as many embedding parameters as
Standard (equal totals), MHF (H4B16K) about twice as many; Standard+kL spends a comparable amount on extra layers
instead. At a smaller vocabulary the bucket counts that equal Standard's total differ (H3B8K at V = 2,048: the
chapter's size tables show why), so every (MHF, Standard) pair of the profile's models is measured at every size,
with both totals and whether they agree within :data:`MATCH_TOLERANCE`. For each pair and size, the gap (MHF minus
the Standard model) in
next-token accuracy and in calibrated cross-entropy (nats per token at each model's fitted temperature, so ``P_inf``'s
marginal-product mis-calibration does not decide it) gets a paired bootstrap interval over the test windows, each
window's score averaged over the seeds first; the per-seed gaps are kept beside it. Each family trains at the
rate its representative chose on the validation split at that size (:func:`rates_by_size`): one rate for every
size over-shoots at some sizes and under-shoots at others.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from hashlib_core.claims import paired_bootstrap
from hashlib_core.papers.multihashformer.lm import LanguageModels, parse_size
from hashlib_core.papers.multihashformer.presets import parameter_groups

__all__ = ["scale_sizes", "scaling", "scaling_gaps", "scaling_trend", "rates_by_size", "MATCH_TOLERANCE"]

#: Two models are of the same size when their total parameters differ by at most this fraction.
MATCH_TOLERANCE = 0.05


def scale_sizes(lms: LanguageModels) -> tuple[str, ...]:
    """The profile's backbone sizes of the scaling curve (its own size when none is set), smallest first."""
    p = lms.profile
    sizes = p.scale_sizes or (p.own_size(),)
    return tuple(sorted(sizes, key=lambda s: parse_size(s)))


def scaling(lms: LanguageModels) -> tuple[pd.DataFrame, dict]:
    """Every (size, model, seed) of the scaling curve scored on the main test set: parameter counts, next-token
    accuracy, ``P_inf`` (or softmax) perplexity, fitted temperature and calibrated perplexity. Also returns the
    per-window scores ``{(size, label): (nll (seeds, windows), accuracy (seeds, windows))}`` for
    :func:`scaling_gaps`."""
    p = lms.profile
    rows, per_window = [], {}
    for size in scale_sizes(lms):
        hidden, ffn, layers = parse_size(size)
        for label in p.scale_variants:
            spec = lms.spec(label)
            nll, acc = [], []
            for seed in p.scale_seeds:
                model = lms.scaled_model(spec, size, seed)
                temperature = lms.temperature(spec, model)
                raw = lms.evaluate(spec, model=model)
                calibrated = lms.evaluate(spec, model=model, temperature=temperature, per_sequence=True)
                window_nll, window_acc = calibrated.sequence_means()
                nll.append(window_nll)
                acc.append(window_acc)
                groups = parameter_groups(model)
                rows.append({"size": size, "d": hidden, "ffn": ffn, "layers": layers, "model": spec.label,
                             "seed": seed, "learning_rate": lms.size_rate(spec, size), "emb_params": groups["emb"], "dec_params": groups["backbone"],
                             "total_params": groups["total"], "test_accuracy_%": calibrated.accuracy,
                             "test_perplexity": raw.perplexity, "temperature": temperature,
                             "test_perplexity_calibrated": calibrated.perplexity, "test_tokens": calibrated.tokens})
            per_window[(size, spec.label)] = (np.stack(nll), np.stack(acc))
    return pd.DataFrame(rows), per_window


def _pairs(runs: pd.DataFrame):
    """``(size, mhf label, Standard label)`` of every MHF and Standard model trained at each size."""
    for size in dict.fromkeys(runs["size"]):
        labels = list(dict.fromkeys(runs.loc[runs["size"] == size, "model"]))
        standard = [m for m in labels if m.startswith("Standard")]
        for mhf in (m for m in labels if not m.startswith("Standard")):
            for name in standard:
                yield size, mhf, name


def scaling_trend(per_window: dict, runs: pd.DataFrame) -> pd.DataFrame:
    """For each (MHF, Standard) pair: how the gap changes from the smallest size to the largest (largest minus
    smallest), in accuracy points and calibrated nats per token, with a paired bootstrap over the test windows (every
    size is scored on the same windows, so the per-window difference of gaps is resampled)."""
    rows = []
    pairs = list(_pairs(runs))
    for mhf, name in dict.fromkeys((m, b) for _, m, b in pairs):
        sizes = [size for size, m, b in pairs if (m, b) == (mhf, name)]
        if len(sizes) < 2:
            continue
        s0, s1 = sizes[0], sizes[-1]
        out = {"mhf": mhf, "baseline": name, "from_size": s0, "to_size": s1}
        for k, what in ((1, "accuracy"), (0, "ce")):
            first = per_window[(s0, mhf)][k].mean(0) - per_window[(s0, name)][k].mean(0)
            last = per_window[(s1, mhf)][k].mean(0) - per_window[(s1, name)][k].mean(0)
            iv = paired_bootstrap(last, first, items="test windows")
            out.update({f"{what}_change": iv.estimate, f"{what}_change_low": iv.low, f"{what}_change_high": iv.high})
        out["interval"] = iv.method
        rows.append(out)
    return pd.DataFrame(rows)


def scaling_gaps(runs: pd.DataFrame, per_window: dict) -> pd.DataFrame:
    """For each size and (MHF, Standard) pair: MHF minus the Standard model in accuracy (points) and calibrated
    cross-entropy (nats per token; negative: MHF better), each with a paired bootstrap interval over the test
    windows (seeds averaged per window), the per-seed gaps, both models' mean total parameters, their relative
    difference and whether they match within :data:`MATCH_TOLERANCE`; ``pairing`` says what the pair holds equal."""
    rows = []
    for size, mhf_label, name in _pairs(runs):
        at = runs[runs["size"] == size]
        (m_nll, m_acc), (b_nll, b_acc) = per_window[(size, mhf_label)], per_window[(size, name)]
        windows = "test windows"
        acc = paired_bootstrap(m_acc, b_acc, items=windows)
        ce = paired_bootstrap(m_nll, b_nll, items=windows)
        seeds_m = at[at["model"] == mhf_label].set_index("seed")
        seeds_b = at[at["model"] == name].set_index("seed")
        common = seeds_m.index.intersection(seeds_b.index)
        seed_gaps = (seeds_m.loc[common, "test_accuracy_%"] - seeds_b.loc[common, "test_accuracy_%"]).to_numpy()
        m_total, b_total = float(seeds_m["total_params"].mean()), float(seeds_b["total_params"].mean())
        excess = m_total / b_total - 1.0
        same_decoder = float(seeds_m["dec_params"].mean()) == float(seeds_b["dec_params"].mean())
        pairing = ("equal total parameters" if abs(excess) <= MATCH_TOLERANCE
                   else "equal decoder" if same_decoder else "deeper Standard")
        rows.append({"size": size, "d": int(at["d"].iloc[0]), "layers": int(at["layers"].iloc[0]),
                     "pairing": pairing, "mhf": mhf_label, "baseline": name, "seeds": len(common),
                     "mhf_total_params": m_total, "baseline_total_params": b_total, "total_excess": excess,
                     "matched": abs(excess) <= MATCH_TOLERANCE,
                     "mhf_accuracy_%": float(m_acc.mean()), "baseline_accuracy_%": float(b_acc.mean()),
                     "accuracy_gap": acc.estimate, "accuracy_gap_low": acc.low, "accuracy_gap_high": acc.high,
                     "accuracy_gap_seed_min": float(seed_gaps.min()), "accuracy_gap_seed_max": float(seed_gaps.max()),
                     "ce_gap": ce.estimate, "ce_gap_low": ce.low, "ce_gap_high": ce.high,
                     "interval": acc.method})
    return pd.DataFrame(rows)


def rates_by_size(lms: LanguageModels) -> pd.DataFrame:
    """The learning-rate sweep at every other size of the curve (the profile's own size is ``lr_sweep``'s): each
    family's representative (Standard, H4B16K), first seed, at every rate, scored on the validation split (which
    chooses the rate the curve uses at that size) and on the test split; ``profile_size_rate`` marks the rate chosen
    at the profile's own size."""
    for size in scale_sizes(lms):
        if size != lms.profile.own_size():
            for label in ("Standard", "H4B16K"):
                lms.size_rate(lms.spec(label), size)
    return pd.DataFrame(lms.size_sweep_rows,
                        columns=["size", "model", "seed", "learning_rate", "valid_accuracy_%", "test_accuracy_%",
                                 "profile_size_rate", "chosen"])
