"""The MTOP EN length diagnosis (hashlib_core.papers.pnlp_mixer.longer) on fixed inputs."""
from __future__ import annotations

import dataclasses

import matplotlib
import pandas as pd
import pytest

from hashlib_core.papers.pnlp_mixer import figures, longer
from hashlib_core.papers.pnlp_mixer.experiments import CHAPTER
from hashlib_core.papers.pnlp_mixer.profiles import PROFILES

matplotlib.use("Agg")

LABELS = {"mixer": "MLP-Mixer", "cnn": "CNN", "transformer": "Transformer"}


def _runs() -> pd.DataFrame:
    """Tables 1-2's MTOP EN runs: the Mixer, a CNN and a Transformer (chosen and not, two seeds), an ATIS CNN."""
    rows = [("mtop-en", "minhash", "mixer", 0.004, 0, True, 40.0),
            ("mtop-en", "minhash", "mixer", 0.002, 0, False, 45.0),
            ("mtop-en", "minhash", "mixer", 0.004, 1, True, 41.0),
            ("mtop-en", "minhash", "cnn", 0.002, 0, True, 45.5),
            ("mtop-en", "minhash", "transformer", 0.002, 0, True, 38.0),
            ("mtop-en", "minhash", "transformer", 0.002, 1, True, 60.0),
            ("atis", "minhash", "cnn", 0.002, 0, True, 0.0),
            ("mtop-en", "binary", "mixer", 0.002, 0, True, 70.0)]
    return pd.DataFrame([{"task": t, "projection": p, "encoder": e, "learning_rate": lr, "weight_decay": 0.01,
                          "dropout": 0.1, "seed": s, "chosen": c, "val_exact_match": em, "val_intent_acc": 85.0,
                          "max_epochs": 15, "epochs": 15, "best_epoch": 15, "capped": True, "parameters": 1000,
                          "wall_time_s": 1.0} for t, p, e, lr, s, c, em in rows])


def test_the_rival_is_the_best_other_chosen_first_seed_encoder_on_mtop_en():
    runs = _runs()
    # the Transformer's seed-1 run (60.0) and Binary's Mixer (70.0) do not count: seed 0, MinHash, encoders only
    assert longer.rival(runs, seed=0) == "cnn"
    assert longer.rival(runs, seed=1) == "transformer"
    with pytest.raises(ValueError, match="architectures_mtop_en"):
        longer.rival(runs[runs["encoder"] == "mixer"], seed=0)


def _items(mixer_short: str, rival_short: str, mixer_long: str, rival_long: str) -> dict:
    return {"runs": [{"encoder": e, "max_epochs": cap, "items": {"exact_match": bits, "intent": bits}}
                     for e, cap, bits in (("mixer", 15, mixer_short), ("cnn", 15, rival_short),
                                          ("mixer", 25, mixer_long), ("cnn", 25, rival_long))]}


def test_gaps_are_paired_differences_in_points():
    iv = longer.gaps(_items("1100" * 10, "1000" * 10, "1111" * 10, "1110" * 10))
    assert sorted(iv) == [15, 25]
    assert iv[15].estimate == pytest.approx(25.0) and iv[25].estimate == pytest.approx(25.0)
    assert iv[15].low <= 25.0 <= iv[15].high and iv[15].n == 40
    with pytest.raises(ValueError, match="one rival"):
        longer.gaps({"runs": [r for r in _items("10", "10", "10", "10")["runs"] if r["encoder"] == "mixer"]})


def _table(capped_long: tuple[bool, bool] = (True, False)) -> pd.DataFrame:
    rows = [("mixer", 15, 15, 15, True, 40.0), ("mixer", 25, 25, 25 if capped_long[0] else 20, capped_long[0], 46.0),
            ("cnn", 15, 15, 15, True, 45.0), ("cnn", 25, 22, 17, capped_long[1], 47.0)]
    return pd.DataFrame([{"encoder": e, "max_epochs": cap, "epochs": ep, "best_epoch": b, "capped": c,
                          "val_exact_match": em, "val_intent_acc": 85.04, "parameters": 1031250,
                          "learning_rate": 0.002, "seed": 0, "wall_time_s": 1.0} for e, cap, ep, b, c, em in rows])


def test_length_table_marks_runs_best_at_their_cap():
    view = longer.length_table(_table(), LABELS)
    assert list(view["encoder"]) == ["MLP-Mixer", "MLP-Mixer", "CNN", "CNN"]
    assert list(view["best epoch"]) == ["15 (at cap)", "25 (at cap)", "15 (at cap)", "17"]
    assert list(view["parameters"]) == ["1,031,250"] * 4 and list(view["intent acc."]) == [85.0] * 4


def test_the_sentences_read_the_numbers_and_the_intervals():
    # the Mixer: 25 points behind the CNN at 15 epochs, 50 ahead at 25
    items = _items("1000" * 10, "1100" * 10, "1110" * 10, "1000" * 10)
    text = longer.length_sentence(_table(), longer.gaps(items), LABELS)
    assert "MLP-Mixer: 40.0 at 15 epochs (best at the cap) and 46.0 at 25 epochs (best at the cap)" in text
    assert "CNN: 45.0 at 15 epochs (best at the cap) and 47.0 at 25 epochs (best at epoch 17)" in text
    assert "-25.0 points" in text and "+50.0 points" in text
    reading = longer.length_reading(_table(), longer.gaps(items), LABELS)
    assert "the Mixer gains +6.0 points and CNN +2.0" in reading
    assert "changes sign, from -25.0 to +50.0 points" in reading
    assert "interval excludes zero at 15 epochs and 25 epochs" in reading
    assert "At 25 epochs MLP-Mixer was still best at the cap" in reading
    narrow = longer.length_reading(
        _table((False, False)), longer.gaps(_items("1000" * 10, "1100" * 10, "1000" * 10, "1000" * 10)), LABELS)
    assert "narrows from -25.0 to +0.0 points" in narrow and "both runs stopped before the cap" in narrow


def test_the_profile_knob_is_checked_and_owned():
    smoke = PROFILES.get("smoke")
    with pytest.raises(ValueError, match="longer_mtop_max_epochs must be >= 0"):
        dataclasses.replace(smoke, longer_mtop_max_epochs=-1)
    exp = CHAPTER.experiments["longer_mtop"]
    assert exp.when(smoke) and exp.when(PROFILES.get("cpu")) and not exp.when(PROFILES.get("small"))
    # not longer than the tables' cap: not run (a run would train nothing new)
    assert not exp.when(dataclasses.replace(smoke, longer_mtop_max_epochs=smoke.comparison_mtop_max_epochs))
    assert not exp.when(PROFILES.get("cpu", comparison_mtop_max_epochs=30))
    assert "longer_mtop_max_epochs" in exp.owns
    assert not exp.when(dataclasses.replace(smoke, comparison_tasks=("atis",)))


class _Evidence:
    def __init__(self, runs: pd.DataFrame) -> None:
        self.runs = runs

    def table(self, name: str) -> pd.DataFrame:
        kind = "mixer" if name.startswith("mixer") else "architectures"
        if name.endswith("_runs"):
            return self.runs[(self.runs["encoder"] == "mixer") == (kind == "mixer")]
        encoders = ["mixer"] if kind == "mixer" else ["cnn", "transformer"]
        return pd.DataFrame([{"task": "mtop-en", "projection": "minhash", "encoder": e, "epoch": k,
                              "val_exact_match": 10.0 * k} for e in encoders for k in (1, 2)])

    def json(self, name: str) -> dict:
        encoders = ["mixer"] if name.startswith("mixer") else ["cnn", "transformer"]
        return {"runs": [{"task": "mtop-en", "projection": "minhash", "encoder": e, "seed": s,
                          "items": {"exact_match": f"{e}-{s}", "intent": ""}} for e in encoders for s in (0, 1)]}


class _Resources:
    def __init__(self, profile) -> None:
        self.profile, self.calls = profile, []

    def schedule(self, task: str, comparison: bool = False):
        return (15, 5, 3000)

    def trained(self, task, projection, encoder, seed_offset, point, comparison=False, max_epochs=None):
        self.calls.append((task, projection, encoder, seed_offset, point, comparison, max_epochs))
        summary = {"epochs": 22, "best_epoch": 17, "train_sentences": 3000, "validation_sentences": 40,
                   "val_exact_match": 50.0, "val_intent_acc": 86.0, "wall_time_s": 2.0, "parameters": 1000,
                   "curve": [{"epoch": 1, "val_exact_match": 5.0}], "items": {"exact_match": "long", "intent": ""}}
        return None, summary


def test_run_longer_retrains_at_the_chosen_point_and_copies_the_tables_runs():
    profile = dataclasses.replace(PROFILES.get("smoke"), longer_mtop_max_epochs=25)
    res = _Resources(profile)
    out = longer.run_longer(res, _Evidence(_runs()))
    assert res.calls == [("mtop-en", "minhash", "mixer", 0, (0.004, 0.01, 0.1), True, 25),
                         ("mtop-en", "minhash", "cnn", 0, (0.002, 0.01, 0.1), True, 25)]
    table = out["longer_mtop"]
    assert list(zip(table["encoder"], table["max_epochs"])) == [("mixer", 15), ("mixer", 25), ("cnn", 15), ("cnn", 25)]
    assert list(table["val_exact_match"]) == [40.0, 50.0, 45.5, 50.0]
    assert list(table["capped"]) == [True, False, True, False]
    items = [(r["encoder"], r["max_epochs"], r["items"]["exact_match"]) for r in out["longer_mtop_items"]["runs"]]
    assert items == [("mixer", 15, "mixer-0"), ("mixer", 25, "long"), ("cnn", 15, "cnn-0"), ("cnn", 25, "long")]
    curves = out["longer_mtop_curves"]
    assert list(zip(curves["encoder"], curves["max_epochs"], curves["epoch"])) == [
        ("mixer", 15, 1), ("mixer", 15, 2), ("mixer", 25, 1), ("cnn", 15, 1), ("cnn", 15, 2), ("cnn", 25, 1)]
    with pytest.raises(ValueError, match="must exceed"):
        longer.run_longer(_Resources(dataclasses.replace(profile, longer_mtop_max_epochs=0)), _Evidence(_runs()))


def test_the_length_figure_draws_both_caps_or_says_why_not():
    curves = pd.DataFrame([{"encoder": e, "max_epochs": cap, "epoch": k, "val_exact_match": float(k)}
                           for e in ("mixer", "cnn") for cap in (15, 25) for k in range(1, 4)])
    fig = figures.length_curves(curves)
    lines = fig.axes[0].get_lines()
    assert len(lines) == 4 and sorted(line.get_linestyle() for line in lines) == ["-", "-", "--", "--"]
    empty = figures.length_curves(None, "small")
    assert "small profile does not run" in empty.axes[0].texts[0].get_text()
