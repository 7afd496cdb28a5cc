"""The length diagnosis (experiment ``longer``): the claims' deep pair retrained with a longer cap beside Table 3's
runs (the knob and its ownership, the experiment's assembly with fake training, the table, gaps, words and figure on
fixed inputs)."""
from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest

from hashlib_core.papers.superbloom import experiments_longer, figures
from hashlib_core.papers.superbloom.experiments import CHAPTER
from hashlib_core.papers.superbloom.experiments_longer import LONGER_OUTPUTS, longer_experiment, longer_pair
from hashlib_core.papers.superbloom.profiles import PROFILES
from hashlib_core.papers.superbloom.tables_longer import longer_gaps, longer_quoted, longer_view

SB, BASE = "superbloom-L2", "baseline-L2"


def test_the_knob_is_checked_and_owned_by_the_experiment_alone():
    with pytest.raises(ValueError, match="longer_steps must exceed steps"):
        PROFILES.get("cpu", longer_steps=2000)
    assert {n for n, e in CHAPTER.experiments.items() if "longer_steps" in e.owns} == {"longer"}
    assert "longer" not in [e.name for e in CHAPTER.selected(PROFILES.get("cpu", longer_steps=0))]
    assert longer_pair(PROFILES.get("cpu")) == ["superbloom-L4", "baseline-L4"]
    stale = CHAPTER.stale("cpu", profile=PROFILES.get("cpu", longer_steps=5000))
    assert stale == {name: ["longer_steps"] for name in LONGER_OUTPUTS}


def _segments(hits: dict[tuple[str, int], int], n: int = 10) -> pd.DataFrame:
    """``hits[(name, cap)]``: how many of the first segments the run gets right at rec@1."""
    return pd.DataFrame([{"name": name, "seed": 0, "segment": i, "target": 100 + i, "hit@1": i < right,
                          "hit@10": True, "max_steps": cap} for (name, cap), right in hits.items() for i in range(n)])


def _runs(converged_long=(False, True)) -> pd.DataFrame:
    rows = []
    for name, conv in zip((SB, BASE), converged_long):
        rows.append({"name": name, "max_steps": 100, "steps": 100, "best_step": 100, "converged": False,
                     "learning_rate": 1e-3, "total_params": 1000, "best_validation": -5.0})
        rows.append({"name": name, "max_steps": 200, "steps": 160 if conv else 200, "best_step": 100 if conv else 200,
                     "converged": conv, "learning_rate": 1e-3, "total_params": 1000, "best_validation": -4.5})
    return pd.DataFrame(rows)


def test_the_gaps_table_and_words_on_fixed_hits():
    segs = _segments({(SB, 100): 6, (BASE, 100): 2, (SB, 200): 6, (BASE, 200): 5})
    gaps = longer_gaps(segs, SB, BASE)
    assert (gaps[100].estimate, gaps[200].estimate) == (pytest.approx(40.0), pytest.approx(10.0))
    view = longer_view(_runs(), segs, (1, 10))
    assert view["model"].tolist() == [BASE, BASE, SB, SB]
    assert view["best step"].tolist() == ["100 (cap)", "100", "100 (cap)", "200 (cap)"]
    assert view["rec@1"].tolist() == [20.0, 50.0, 60.0, 60.0] and view["best validation loss"].iloc[1] == 4.5
    q = longer_quoted(_runs(), segs, SB, BASE)
    assert (q["lo_short"], q["lo_long"], q["lo_trend"]) == ("100", "200", "narrows by 30.0 points")
    assert "lo_top" not in q
    top = longer_quoted(_runs(), segs.assign(**{"hit@10": segs["name"] == BASE}), SB, BASE, top=10)
    assert (top["lo_top"], top["lo_top_gap_short"][:15], top["lo_top_gap_long"][:15]) == (
        "10", "-100.0 points [", "-100.0 points [")
    assert q["lo_superbloom"] == (f"{SB}: 60.0% at 100 steps (still improving at the cap), 60.0% at 200 steps "
                                  "(still improving at the cap)")
    assert q["lo_baseline"].endswith("50.0% at 200 steps (best at step 100)")
    assert q["lo_gap_short"].startswith("+40.0 points [")
    assert q["lo_reading"].endswith(f"{SB} was still improving at 200 steps, so the gap may move again")


def test_the_reading_follows_the_longer_caps_interval():
    ahead = longer_quoted(_runs((True, True)), _segments({(SB, 100): 6, (BASE, 100): 2, (SB, 200): 10,
                                                          (BASE, 200): 0}), SB, BASE)
    assert ahead["lo_reading"].startswith(f"{SB} stays ahead at the longer cap")
    turned = longer_quoted(_runs(), _segments({(SB, 100): 2, (BASE, 100): 6, (SB, 200): 10, (BASE, 200): 0}), SB, BASE)
    assert turned["lo_reading"].startswith(f"{SB} is ahead at the longer cap")
    assert ahead["lo_reading"].endswith("both stopped before the longer cap")
    assert ahead["lo_trend"] == "widens by 60.0 points"
    behind = longer_quoted(_runs(), _segments({(SB, 100): 6, (BASE, 100): 2, (SB, 200): 0, (BASE, 200): 10}), SB, BASE)
    assert behind["lo_reading"].startswith("at the longer cap the baseline is ahead")
    with pytest.raises(ValueError, match="not scored on the same test segments"):
        segs = _segments({(SB, 100): 6, (BASE, 100): 2})
        longer_gaps(segs.assign(target=segs["target"].where(segs["name"] == SB, 0)), SB, BASE)


class _Evidence:
    def __init__(self, tables):
        self.tables = tables

    def has(self, name):
        return name in self.tables

    def table(self, name):
        return self.tables[name]


def test_the_experiment_retrains_the_pair_at_the_longer_cap(monkeypatch):
    p = PROFILES.get("smoke")
    names = longer_pair(p)
    sweep = pd.DataFrame([{"name": n, "learning_rate": lr, "chosen": lr == 3e-3} for n in names for lr in (1e-3, 3e-3)])
    models = pd.DataFrame([{"name": n, "seed": s, "learning_rate": 3e-3, "steps": p.steps, "max_steps": p.steps,
                            "best_step": p.steps, "converged": False, "total_params": 10, "best_validation": -1.0,
                            "wall_time_s": 1.0} for n in names for s in (0, 1)])
    segs = _segments({(n, p.steps): 3 for n in names}).drop(columns="max_steps")
    curves = pd.DataFrame([{"name": n, "learning_rate": 3e-3, "seed": 0, "step": 5, "loss": 2.0,
                            "kind": "validation loss"} for n in names])
    calls = []

    def fake_train(spec, res, ctx, lr, seed, steps=None):
        calls.append((spec.name, lr, seed, steps))
        row = {"name": spec.name, "learning_rate": lr, "seed": seed, "steps": steps, "max_steps": steps,
               "best_step": steps // 2, "converged": True, "total_params": 10, "best_validation": -0.5,
               "wall_time_s": 2.0, "restored": spec.name == names[0]}
        return SimpleNamespace(to=lambda device: None), row, [{"name": spec.name, "learning_rate": lr, "seed": seed,
                                                               "step": 10, "loss": 1.0, "kind": "validation loss"}]

    monkeypatch.setattr(experiments_longer, "train_run", fake_train)
    monkeypatch.setattr(experiments_longer, "scored", lambda model, res, ks, name, seed: segs[segs["name"] == name]
                        .assign(seed=seed))
    reused = []
    ctx = SimpleNamespace(profile=p, device="cpu", reuse=reused.append, resources=SimpleNamespace(specs={n: SimpleNamespace(name=n)
                                                                                       for n in names}),
                          evidence=lambda: _Evidence({"sweep": sweep, "models": models, "recall_segments": segs,
                                                      "curves": curves}))
    out = longer_experiment(ctx)
    assert calls == [(n, 3e-3, p.seed, p.longer_steps) for n in names]
    assert reused == [2.0]                                   # the run read back still costs its training time
    assert out["longer"][["name", "max_steps"]].values.tolist() == [[n, c] for c in (p.steps, p.longer_steps)
                                                                     for n in names]
    assert sorted(out["longer_segments"].groupby(["name", "max_steps"]).size().tolist()) == [10] * 4
    assert set(out["longer_curves"]["max_steps"]) == {p.steps, p.longer_steps}
    with pytest.raises(RuntimeError, match="no chosen rate"):
        ctx.evidence = lambda: _Evidence({"sweep": sweep.assign(chosen=False), "models": models,
                                          "recall_segments": segs, "curves": curves})
        longer_experiment(ctx)


def test_the_figure_dashes_the_shorter_cap():
    curves = pd.DataFrame([{"name": n, "max_steps": cap, "step": s, "loss": 1.0 / s, "kind": "validation loss"}
                           for n in (SB, BASE) for cap in (100, 200) for s in range(50, cap + 1, 50)])
    ax = figures.longer_curves(curves).axes[0]
    assert [(line.get_label(), line.get_linestyle()) for line in ax.get_lines()] == [
        (f"{SB}, cap 100", "--"), (f"{SB}, cap 200", "-"), (f"{BASE}, cap 100", "--"), (f"{BASE}, cap 200", "-")]
