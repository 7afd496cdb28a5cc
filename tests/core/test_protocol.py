"""The shared protocol: its settings checked (the report split is never the selection split), the tie rule, the
sweep then seeds, per-item report scores, the cap flag, and the settings a change touches."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from hashlib_core.protocol import (Protocol, Trained, choose_rate, converge, next_rate, rate_at_edge, run_protocol,
                                   run_seeds, run_sweep, trained)


def _protocol(**kw) -> Protocol:
    return Protocol(**{"learning_rates": (1e-3, 3e-3, 1e-2), "seeds": (0, 1, 2), "max_steps": 40,
                       "eval_every": 10, "patience": 2, **kw})


@pytest.mark.parametrize("changes, message", [
    ({"report_on": ("test", "heldout")}, "also the selection split"),
    ({"select_on": "test"}, "also the selection split"),
    ({"learning_rates": ()}, "learning_rates must list distinct finite rates"),
    ({"learning_rates": (1e-3, 1e-3)}, "distinct"),
    ({"learning_rates": (0.0,)}, "> 0"),
    ({"learning_rates": (float("nan"),)}, "finite"),
    ({"seeds": ()}, "seeds must list distinct ints >= 0"),
    ({"seeds": (0, 0)}, "distinct"),
    ({"seeds": (-1,)}, ">= 0"),
    ({"patience": -1}, "patience must be an int >= 0 \\(0: never stop early\\)"),
    ({"max_steps": 0}, "max_steps must be an int >= 1"),
    ({"eval_every": 0}, "eval_every must be an int >= 1"),
    ({"tie": "random"}, "tie must be one of"),
    ({"report_on": ()}, "report_on must name one or more"),
    ({"select_on": ""}, "select_on must name a split"),
    ({"extend_edges": -1}, "extend_edges must be an int >= 0"),
    ({"extend_edges": True}, "extend_edges must be an int >= 0"),
])
def test_bad_settings_are_refused_by_name(changes, message):
    with pytest.raises(ValueError, match=message):
        _protocol(**changes)


def test_the_tie_rule_and_unscored_rates():
    assert choose_rate({1e-3: 0.8, 3e-3: 0.9, 1e-2: 0.9}) == 3e-3                 # ties: the smaller rate
    assert choose_rate({1e-3: 0.8, 3e-3: 0.9, 1e-2: 0.9}, "larger") == 1e-2
    assert choose_rate({1e-3: float("nan"), 3e-3: 0.1}) == 3e-3                 # NaN never beats a finite score
    assert choose_rate({1e-3: float("inf"), 3e-3: 0.1}) == 3e-3
    with pytest.raises(ValueError, match="no learning rate scored a finite selection score"):
        choose_rate({1e-3: float("nan")})
    with pytest.raises(ValueError, match="tie must be one of"):
        choose_rate({1e-3: 1.0}, "coin")


def _fake(score_of_rate, calls, items=lambda rate, seed: {"test": np.full(5, rate * 100 + seed)}):
    def train_one(rate, seed):
        calls.append((rate, seed))
        return Trained(selection_score=score_of_rate[rate], best_step=10, steps=20, at_cap=seed == 2,
                       items=items(rate, seed))
    return train_one


def test_the_sweep_uses_the_first_seed_then_every_seed_runs_at_the_chosen_rate():
    calls = []
    outcome = run_protocol(_protocol(), _fake({1e-3: 0.5, 3e-3: 0.7, 1e-2: float("nan")}, calls))
    assert calls == [(1e-3, 0), (3e-3, 0), (1e-2, 0), (3e-3, 1), (3e-3, 2)]
    assert outcome.chosen_rate == 3e-3
    assert [(r.learning_rate, r.seed) for r in outcome.chosen()] == [(3e-3, 0), (3e-3, 1), (3e-3, 2)]
    per_item = outcome.items("test")                               # (seeds, items): what the bootstrap resamples
    assert per_item.shape == (3, 5) and per_item[:, 0].tolist() == [0.3, 1.3, 2.3]
    assert [r.seed for r in outcome.at_cap()] == [2]                # the run still improving at its cap is flagged
    rows = outcome.rows()
    assert len(rows) == 5 and sum(r["chosen"] for r in rows) == 3 and sum(r["swept"] for r in rows) == 3
    assert rows[1]["test_score"] == pytest.approx(0.3) and math.isnan(rows[2]["selection_score"])
    with pytest.raises(ValueError, match="it is the selection split, which reports nothing"):
        outcome.items("heldout")


def test_the_rate_beyond_an_edge_follows_the_grids_ratio_at_that_end():
    assert next_rate((3e-4, 1e-3, 3e-3), 3e-3) == 9e-3 and next_rate((3e-4, 1e-3, 3e-3), 3e-4) == 9e-5
    assert next_rate((1e-3, 3e-3, 1e-2), 1e-2) == pytest.approx(1e-2 / 0.3) and next_rate((1e-3, 2e-3), 1e-3) == 5e-4
    assert next_rate((3e-4, 1e-3, 3e-3), 1e-3) is None                      # inside the grid: nothing to add
    assert next_rate((1e-3,), 1e-3) is None                                 # one rate is no sweep
    assert rate_at_edge(3e-3, [1e-3, 3e-3]) and not rate_at_edge(3e-3, [1e-3, 3e-3, 9e-3])
    assert not rate_at_edge(1e-3, [1e-3])


def _peaked(best: float):
    """A selection score that peaks at ``best`` and falls with the log-distance from it."""
    return lambda rate: -abs(math.log(rate / best))


def _by_rate(score):
    calls = []

    def train_one(rate, seed):
        calls.append((rate, seed))
        return Trained(selection_score=score(rate), best_step=10, steps=20, at_cap=False,
                       items={"test": np.ones(2)})
    return train_one, calls


def test_a_best_rate_at_the_top_edge_is_followed_until_it_lies_inside_the_rates_tried():
    train_one, calls = _by_rate(_peaked(2e-2))
    outcome = run_sweep(_protocol(extend_edges=3), train_one)
    assert [r for r, _ in calls] == [1e-3, 3e-3, 1e-2, pytest.approx(1e-2 / 0.3), pytest.approx(1e-2 / 0.09)]
    assert outcome.chosen_rate == pytest.approx(1e-2 / 0.3) and not outcome.at_edge()
    rows = outcome.rows()
    assert [r["extended"] for r in rows] == [False, False, False, True, True]
    assert all(r["swept"] for r in rows) and sum(r["chosen"] for r in rows) == 1


def test_a_best_rate_at_the_bottom_edge_is_followed_downwards_and_flagged_when_the_extension_runs_out():
    train_one, calls = _by_rate(_peaked(1e-5))
    outcome = run_sweep(_protocol(extend_edges=2), train_one)
    assert len(calls) == 5 and min(outcome.rates()) == pytest.approx(1e-3 / 9)
    assert outcome.chosen_rate == min(outcome.rates()) and outcome.at_edge()   # still the smallest: flagged


def test_without_extension_or_with_an_inner_best_the_sweep_runs_its_grid_only():
    for best, extend in ((2e-2, 0), (3e-3, 2)):
        train_one, calls = _by_rate(_peaked(best))
        outcome = run_sweep(_protocol(extend_edges=extend), train_one)
        assert [r for r, _ in calls] == [1e-3, 3e-3, 1e-2]
        assert outcome.at_edge() == (best == 2e-2) and not any(r["extended"] for r in outcome.rows())


def test_a_run_that_reports_on_the_selection_split_or_misses_a_report_split_is_refused():
    with pytest.raises(ValueError, match="report scores on the selection split 'heldout'"):
        run_protocol(_protocol(), _fake({1e-3: 1, 3e-3: 1, 1e-2: 1}, [],
                                        items=lambda r, s: {"test": np.ones(3), "heldout": np.ones(3)}))
    with pytest.raises(ValueError, match=r"must score every report split \['dev', 'test'\]"):
        run_protocol(_protocol(report_on=("test", "dev")), _fake({1e-3: 1, 3e-3: 1, 1e-2: 1}, []))
    with pytest.raises(ValueError, match="scored no items"):
        run_protocol(_protocol(), _fake({1e-3: 1, 3e-3: 1, 1e-2: 1}, [], items=lambda r, s: {"test": []}))


def test_a_changed_setting_is_named_as_what_it_touches():
    base = _protocol()
    assert base.touches(base.override(seeds=(0, 1, 2, 3))) == ["seeds"]
    assert base.touches(base.override(max_steps=80, patience=3)) == ["max_steps", "patience"]
    assert base.touches(base) == []
    with pytest.raises(ValueError, match="unknown protocol setting"):
        base.override(epochs=3)
    with pytest.raises(ValueError, match="also the selection split"):
        base.override(report_on=("heldout",))
    assert base.settings()["learning_rates"] == [1e-3, 3e-3, 1e-2]


class _Line(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.zeros(1))

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> dict:
        return {"loss": ((self.w * x - y) ** 2).mean()}


def _loader():
    x = torch.linspace(-1, 1, 64)
    rows = [{"x": x[i:i + 1], "y": 3 * x[i:i + 1]} for i in range(64)]
    return torch.utils.data.DataLoader(rows, batch_size=8, shuffle=True)


def test_converge_stops_on_the_selection_score_and_flags_a_run_still_improving_at_its_cap():
    # a score that keeps rising: the run reaches its cap while improving
    model = _Line()
    proto = _protocol(max_steps=30, eval_every=10)
    run = converge(model, _loader(), lambda m: float(m.w.detach()), proto, learning_rate=0.05, seed=0,
                   config=proto.train_config(0.05, 0, scheduler="constant", warmup_steps=0))
    done = trained(run, {"test": [1, 0, 1]})
    assert done.at_cap and done.steps == 30 and done.best_step == 30
    assert done.items["test"].tolist() == [1.0, 0.0, 1.0] and done.extra["max_steps"] == 30
    # a score that peaks early: patience stops the run before its cap, not flagged
    seen = iter([0.1, 0.9, 0.5, 0.4, 0.3, 0.2])
    proto = _protocol(max_steps=60, eval_every=10, patience=2)
    early = converge(_Line(), _loader(), lambda m: next(seen), proto, learning_rate=0.05, seed=0,
                     config=proto.train_config(0.05, 0, scheduler="constant", warmup_steps=0))
    flagged = trained(early, {"test": [1]})
    assert not flagged.at_cap and flagged.best_step == 20 and flagged.steps == 40


def test_converge_refuses_a_config_that_is_not_the_runs():
    proto = _protocol(max_steps=30, eval_every=10)
    with pytest.raises(ValueError, match="build it with protocol.train_config"):
        converge(_Line(), _loader(), lambda m: 0.0, proto, learning_rate=0.05, seed=0,
                 config=proto.override(max_steps=20).train_config(0.05, 0))
    with pytest.raises(ValueError, match="not this run's"):
        converge(_Line(), _loader(), lambda m: 0.0, proto, learning_rate=0.05, seed=1,
                 config=proto.train_config(0.05, 0))


def test_the_sweep_and_the_seeds_run_apart_as_run_protocol_runs_them_together():
    calls = []

    def train_one(rate, seed):
        calls.append((rate, seed))
        return Trained(selection_score={1e-3: 0.5, 3e-3: 0.7}[rate], best_step=10, steps=20, at_cap=False,
                       items={"test": np.ones(3)})

    proto = _protocol(learning_rates=(1e-3, 3e-3), seeds=(0, 1, 2))
    swept = run_sweep(proto, train_one)
    assert calls == [(1e-3, 0), (3e-3, 0)] and swept.chosen_rate == 3e-3
    assert [(r.learning_rate, r.swept, r.chosen) for r in swept.runs] == [(1e-3, True, False), (3e-3, True, True)]
    calls.clear()
    more = run_seeds(proto, swept.chosen_rate, train_one)
    assert calls == [(3e-3, 1), (3e-3, 2)] and all(r.chosen and not r.swept for r in more)
    calls.clear()
    assert [r.seed for r in run_seeds(proto, 1e-3, train_one, seeds=[0])] == [0] and calls == [(1e-3, 0)]
    calls.clear()
    whole = run_protocol(proto, train_one)
    assert calls == [(1e-3, 0), (3e-3, 0), (3e-3, 1), (3e-3, 2)]
    assert [(r.learning_rate, r.seed) for r in whole.chosen()] == [(3e-3, 0), (3e-3, 1), (3e-3, 2)]


def test_the_schedule_is_a_protocol_setting_that_reaches_every_runs_config():
    proto = _protocol(max_steps=200, eval_every=10)
    assert proto.schedule == "linear" and proto.train_config(1e-3, 0).scheduler == "linear"
    flat = proto.override(schedule="constant_with_warmup")
    config = flat.train_config(1e-3, 2)
    assert (config.scheduler, config.warmup_steps, config.max_steps, config.seed) == ("constant_with_warmup", 20,
                                                                                        200, 2)
    assert flat.train_config(1e-3, 0, scheduler="cosine").scheduler == "cosine"
    assert proto.touches(flat) == ["schedule"]
    with pytest.raises(ValueError, match="protocol.schedule must be one of"):
        proto.override(schedule="cosine_with_restarts")


def test_a_split_scored_by_a_metric_reports_the_metric_not_the_mean_of_its_predictions():
    """A GLUE run's items are per-item predictions (class ids) and its score a correlation: the row reads the
    score; a score for a split that is not reported is refused."""
    proto = _protocol(learning_rates=(1e-3,), seeds=(0,))

    def one(rate, seed):
        return Trained(0.5, 10, 20, False, {"test": np.array([1, 0, 1, 1])}, scores={"test": 0.25})

    run = run_protocol(proto, one).runs[0]
    assert run.row()["test_score"] == 0.25 and run.trained.score("test") == 0.25
    plain = Trained(0.5, 10, 20, False, {"test": np.array([1, 0, 1, 1])})
    assert plain.score("test") == 0.75
    with pytest.raises(ValueError, match="not its report splits"):
        run_protocol(proto, lambda r, s: Trained(0.5, 10, 20, False, {"test": np.ones(2)}, scores={"dev": 1.0}))


def test_converge_checkpointed_keys_the_folder_on_the_run_and_restores_it(tmp_path):
    """Inside a chapter run: the folder's digest covers the parts and the run's config; the second call restores the
    outcome (no training), counts its wall time as reused and hands the model back on the CPU."""
    from types import SimpleNamespace

    from hashlib_core.protocol import converge_checkpointed
    from hashlib_core.training import config_digest

    reused, folders = [], []

    def checkpoint_dir(name, *parts, settings=None):
        folders.append((name, config_digest([str(p) for p in parts]), settings))
        return tmp_path / f"{name}-{folders[-1][1]}"

    ctx = SimpleNamespace(checkpoint_dir=checkpoint_dir, reuse=reused.append, device=torch.device("cpu"))
    proto = _protocol(max_steps=20, eval_every=10)
    first = converge_checkpointed(ctx, _Line(), _loader(), lambda m: float(m.w.detach()), proto, 0.05, 0, "line",
                                  ("part",), settings=("x",))
    model = _Line()
    again = converge_checkpointed(ctx, model, _loader(), lambda m: float(m.w.detach()), proto, 0.05, 0, "line",
                                  ("part",), settings=("x",))
    assert not first.restored and again.restored and reused == [first.wall_time_s]
    assert folders[0] == folders[1] and folders[0][2] == ("x",)
    assert float(model.w.detach()) == pytest.approx(float(first.best_score))         # the best weights restored
    other = converge_checkpointed(ctx, _Line(), _loader(), lambda m: float(m.w.detach()), proto, 0.05, 1, "line",
                                  ("part",))
    assert folders[2][1] != folders[0][1] and not other.restored            # another seed: another folder
