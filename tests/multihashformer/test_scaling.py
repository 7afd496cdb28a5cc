"""Chapter "MultiHashFormer": the corpus knob, per-sequence scores, the scaling curve's gaps and trend, the expansion's
intervals, and the claims and tables that read them (fixed inputs)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

from hashlib_core.claims import NotTestable
from hashlib_core.decoding.lm import next_token_scores
from hashlib_core.papers.multihashformer import claims_scaling, tables_scaling
from hashlib_core.papers.multihashformer.expansion import bpb_intervals, loss_flatness
from hashlib_core.papers.multihashformer.presets import build_model
from hashlib_core.papers.multihashformer.profiles import PROFILES, parse_size
from hashlib_core.papers.multihashformer.scaling import MATCH_TOLERANCE, scaling_gaps, scaling_trend


# ------------------------------------------------------------------------------------------------ profile knobs
def test_parse_size_reads_width_ffn_layers_and_refuses_bad_strings():
    assert parse_size("64/192/2") == (64, 192, 2)
    for bad in ("64/192", "a/b/c", "64/0/2", "64-192-2"):
        with pytest.raises(ValueError, match="d/ffn/layers|positive"):
            parse_size(bad)


@pytest.mark.parametrize("overrides, match", [
    ({"corpus": "wikitext103"}, "corpus must be one of"),
    ({"scale_sizes": "30/96/2"}, "multiple of num_heads"),
    ({"scale_variants": "Standard,Standard+kL"}, "an MHF variant"),
    ({"scale_variants": "H4B16K"}, "a Standard model"),
    ({"scale_seeds": "0,0"}, "distinct seeds"),
])
def test_profile_refuses_a_bad_corpus_or_scaling_curve(overrides, match):
    with pytest.raises(ValueError, match=match):
        PROFILES.get("smoke", **overrides)


def test_cpu_curve_matches_h3_to_standard_within_the_tolerance():
    """The cpu profile's H3B8K is the H3 whose total equals Standard's at every size of its curve (counted from
    models built with a collision-free signature table; the counts do not depend on the signatures)."""
    p = PROFILES.get("cpu")
    for size in p.scale_sizes:
        hidden, ffn, layers = parse_size(size)
        at = p.override(hidden_size=hidden, intermediate_size=ffn, num_layers=layers)
        standard = build_model(at.shape(), at.spec("Standard"), vocab_size=p.vocab_size)
        spec = at.spec("H3B8K")
        table = torch.stack([torch.arange(p.vocab_size) % (spec.num_buckets - 1) + 1,
                             torch.arange(p.vocab_size) // (spec.num_buckets - 1) + 1,
                             torch.ones(p.vocab_size, dtype=torch.long)], 1)
        mhf = build_model(at.shape(), spec, signature_table=table)
        total = lambda m: sum(x.numel() for x in m.parameters())  # noqa: E731
        assert abs(total(mhf) / total(standard) - 1) <= MATCH_TOLERANCE, size


# ------------------------------------------------------------------------------------------ per-sequence scores
def test_per_sequence_sums_add_up_to_the_totals():
    torch.manual_seed(0)
    profile = PROFILES.get("smoke")
    model = build_model(profile.shape(), profile.spec("Standard"), vocab_size=50)
    ids = torch.randint(1, 50, (3, 7))
    mask = torch.ones_like(ids)
    mask[1, 4:] = 0                                    # a padded sequence: 3 scored positions
    mask[2, 1:] = 0                                    # one real token: nothing scored, left out
    token_bytes = torch.arange(50) % 4 + 1
    out = next_token_scores(model, [(ids, mask)], "cpu", token_bytes=token_bytes, per_sequence=True, chunk=2)
    rows = np.asarray(out.per_sequence)
    assert rows.shape == (2, 4) and list(rows[:, 2]) == [6, 3]
    assert rows[:, 0].sum() == pytest.approx(out.nll) and rows[:, 1].sum() == pytest.approx(out.correct)
    assert rows[:, 3].sum() == out.bytes and int(rows[:, 2].sum()) == out.tokens
    nll, acc = out.sequence_means()
    assert nll == pytest.approx(rows[:, 0] / rows[:, 2]) and acc == pytest.approx(100 * rows[:, 1] / rows[:, 2])
    with pytest.raises(ValueError, match="per_sequence=True"):
        next_token_scores(model, [(ids, mask)], "cpu").sequence_means()


# ---------------------------------------------------------------------------------------------- gaps and trend
def _curve():
    """Two sizes, Standard / Standard+1L / H3B8K, two seeds, four windows with known per-window scores."""
    rows, per_window = [], {}
    totals = {"Standard": (1000, 600), "Standard+1L": (1200, 800), "H3B8K": (1030, 600)}
    base = {"16/32/1": {"Standard": 10.0, "Standard+1L": 11.0, "H3B8K": 12.0},
            "32/64/2": {"Standard": 20.0, "Standard+1L": 22.0, "H3B8K": 21.0}}
    for k, size in enumerate(base):
        for model, acc in base[size].items():
            for seed in (0, 1):
                rows.append({"size": size, "d": 16 * (k + 1), "layers": k + 1, "model": model, "seed": seed,
                             "total_params": totals[model][0] * (k + 1), "dec_params": totals[model][1] * (k + 1),
                             "test_accuracy_%": acc + seed})
            window_acc = np.array([[acc, acc + 2, acc - 2, acc], [acc + 1, acc + 3, acc - 1, acc + 1]])
            per_window[(size, model)] = (-window_acc / 100.0, window_acc)
    return pd.DataFrame(rows), per_window


def test_scaling_gaps_pair_every_mhf_with_every_standard_and_mark_matched_sizes():
    runs, per_window = _curve()
    gaps = scaling_gaps(runs, per_window).set_index(["size", "baseline"])
    assert len(gaps) == 4
    small = gaps.loc[("16/32/1", "Standard")]
    assert small["accuracy_gap"] == pytest.approx(2.0) and small["ce_gap"] == pytest.approx(-0.02)
    assert small["accuracy_gap_low"] <= 2.0 <= small["accuracy_gap_high"]
    assert small["total_excess"] == pytest.approx(0.03) and small["matched"]
    assert small["pairing"] == "equal total parameters"
    assert gaps.loc[("16/32/1", "Standard+1L"), "pairing"] == "deeper Standard"
    assert gaps.loc[("32/64/2", "Standard+1L"), "accuracy_gap"] == pytest.approx(-1.0)
    assert gaps.loc[("32/64/2", "Standard"), "accuracy_gap_seed_min"] == pytest.approx(1.0)


def test_scaling_trend_is_the_last_gap_minus_the_first():
    runs, per_window = _curve()
    trend = scaling_trend(per_window, runs).set_index("baseline")
    assert trend.loc["Standard", "accuracy_change"] == pytest.approx(1.0 - 2.0)
    assert trend.loc["Standard+1L", "accuracy_change"] == pytest.approx(-1.0 - 1.0)
    assert (trend["from_size"] == "16/32/1").all() and (trend["to_size"] == "32/64/2").all()


class _Evidence:
    def __init__(self, **tables):
        self.tables = tables
        self.profile = PROFILES.get("cpu")

    def table(self, name):
        return self.tables[name]

    def has(self, name):
        return name in self.tables

    def json(self, name):
        raise KeyError(name)


def test_scaling_claims_read_the_weakest_size_and_the_trend():
    runs, per_window = _curve()
    ev = _Evidence(scaling_gaps=scaling_gaps(runs, per_window), scaling_trend=scaling_trend(per_window, runs))
    h3 = claims_scaling.scale_gap(lambda m: m.startswith("H3"), matched=True)(ev)
    assert h3.interval.estimate == pytest.approx(1.0) and "16/32/1" in h3.ours and "32/64/2" in h3.ours
    deeper = claims_scaling.deeper_at_smallest(ev)
    assert deeper.interval.estimate == pytest.approx(-1.0)
    assert deeper.interval.low <= -1.0 <= deeper.interval.high
    trend = claims_scaling.gap_trend("H3B8K", deep=True)(ev)
    assert trend.interval.estimate == pytest.approx(-2.0)
    with pytest.raises(NotTestable, match="no scaling curve"):
        claims_scaling.scale_gap(lambda m: True)(_Evidence())
    with pytest.raises(NotTestable, match="no such pair"):
        claims_scaling.scale_gap(lambda m: m == "H4B16K")(ev)


def test_scaling_tables_print_exact_totals_and_intervals():
    runs, per_window = _curve()
    gaps = scaling_gaps(runs, per_window)
    view = tables_scaling.scaling_view(gaps)
    assert list(view["MHF params"][:2]) == ["1,030", "1,030"]
    assert view["accuracy gap, points [95%]"].iloc[0].startswith("+2.00 [")
    card = pd.DataFrame({"model": ["Standard", "Standard+1L", "H3B8K"], "layer": "second_to_last",
                         "pooling": "last_token", "pearson_r": [0.02, 0.3, 0.4], "pairs": 660})
    sweep = pd.DataFrame({"family": ["Standard", "Standard", "MHF", "MHF"], "learning_rate": [0.01, 0.03, 0.01, 0.03],
                          "chosen": [True, False, False, True], "at_edge": [False, False, True, True]})
    ev = _Evidence(scaling_gaps=gaps, scaling_trend=scaling_trend(per_window, runs), card660=card, lr_sweep=sweep)
    quoted = tables_scaling.scaling_quoted(ev)
    assert quoted["card_std_signal"].startswith("Standard r = 0.020 [") and "which includes zero;" in quoted[
        "card_std_signal"] and quoted["card_std_signal"].endswith("which excludes zero")
    assert quoted["lr_chosen"] == "Standard 0.01; MHF 0.03" and quoted["lr_edge"].startswith("at the edge of the "
                                                                                             "sweep for MHF")
    assert quoted["scale_sizes"] == "16/32/1, 32/64/2" and quoted["scale_seeds"] == "3"
    assert quoted["scale_h3b8k_std"].startswith("16/32/1: +2.00 [")
    assert quoted["scale_h3b8k_std_match"] == "16/32/1: +3.0%; 32/64/2: +3.0%"
    assert quoted["corpus_train"] == "Penn Treebank's train split"


# ------------------------------------------------------------------------------------------------- expansion
def test_bpb_intervals_compare_after_cpt_and_the_changes():
    rng = np.random.default_rng(0)
    sentences = {}
    for model, shift in (("Standard", 0.0), ("H4B16K", -0.1)):
        for stage, extra in (("before", 0.5), ("after", 0.0)):
            nll = (2.0 + shift + extra + rng.uniform(0, 0.01, 20)) * np.log(2) * 10
            sentences[(model, "ar", stage)] = np.stack([nll, np.zeros(20), np.full(20, 5), np.full(20, 10)], 1)
    table = bpb_intervals(sentences, "H4B16K").set_index("language")
    bpb = lambda a: a[:, 0].sum() / math.log(2) / a[:, 3].sum()  # noqa: E731
    gap = bpb(sentences[("H4B16K", "ar", "after")]) - bpb(sentences[("Standard", "ar", "after")])
    assert table.loc["ar", "bpb_gap_after"] == pytest.approx(gap)
    assert table.loc["ar", "bpb_gap_after_high"] < 0 and table.loc["ar", "sentences"] == 20
    ev = _Evidence(expansion_intervals=table.reset_index())
    assert claims_scaling.new_languages(ev).interval.estimate == 1.0
    with pytest.raises(NotTestable, match="English"):
        claims_scaling.english_forgetting(ev)


def test_loss_flatness_compares_the_last_two_tenths():
    assert loss_flatness([5.0] * 10 + [4.0] * 5 + [3.9] * 5) == (pytest.approx(3.9), pytest.approx(3.9))
    assert loss_flatness(list(range(20, 0, -1))) == (pytest.approx(1.5), pytest.approx(3.5))
    with pytest.raises(ValueError, match="two logged losses"):
        loss_flatness([1.0])


def test_rates_by_size_tables_name_the_chosen_rate():
    rates = pd.DataFrame({
        "size": ["128/384/4"] * 4, "model": ["Standard", "Standard", "H4B16K", "H4B16K"], "seed": 0,
        "learning_rate": [0.003, 0.01, 0.003, 0.01], "profile_size_rate": [False, True, False, True],
        "valid_accuracy_%": [25.0, 20.0, 16.0, 17.0], "test_accuracy_%": [24.5, 19.5, 15.5, 16.5],
        "chosen": [True, False, False, True]})
    text = tables_scaling.rates_sentence(rates)
    assert text == ("at 128/384/4, Standard chooses 0.003 (test accuracy 24.50%, against 19.50% at the profile size's "
                    "0.01); at 128/384/4, H4B16K chooses 0.01 (the profile size's rate)")
    view = tables_scaling.rates_view(rates)
    assert list(view["note"]) == ["chosen (the curve's rate here)", "the profile size's rate", "",
                                  "chosen (the curve's rate here), the profile size's rate"]
