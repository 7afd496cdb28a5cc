"""train_until_converged: evaluations on schedule, the best weights restored, patience, the converged flag, the outcome
restored from its folder without training, and clear errors."""
from __future__ import annotations

import pytest
import torch
from torch import nn

from hashlib_core.early_stopping import train_until_converged
from hashlib_core.training import TrainConfig


class _Line(nn.Module):
    """y = w x, with dropout on the input (training draws from the global RNG, as a Transformer's dropout does)."""

    def __init__(self, dropout: float = 0.0) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.zeros(1))
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> dict:
        return {"loss": ((self.w * self.drop(x) - y) ** 2).mean()}


def _loader() -> torch.utils.data.DataLoader:
    x = torch.linspace(-1, 1, 64)
    rows = [{"x": x[i:i + 1], "y": 3 * x[i:i + 1]} for i in range(64)]
    return torch.utils.data.DataLoader(rows, batch_size=8, shuffle=True)


def _scripted(values: list[float], seen: list[float]):
    """A score that returns ``values`` in turn and records the weight it saw each time."""
    it = iter(values)

    def score(model: nn.Module) -> float:
        assert not model.training and not torch.is_grad_enabled()
        seen.append(float(model.w.detach()))
        return next(it)
    return score


def test_best_weights_come_back_and_patience_stops_the_run(tmp_path) -> None:
    model, seen = _Line(), []
    config = TrainConfig(max_steps=100, learning_rate=0.05, scheduler="constant", seed=0)
    run = train_until_converged(model, _loader(), config, _scripted([1.0, 3.0, 2.0, 2.5, 9.0], seen),
                                every=10, patience=2, output_dir=tmp_path / "run")
    assert [s for s, _ in run.history] == [10, 20, 30, 40] and run.steps == 40 and run.stopped_early
    assert (run.best_step, run.best_score) == (20, 3.0) and run.converged
    assert float(model.w.detach()) == pytest.approx(seen[1]) and seen[1] != seen[3]        # step 20's weight, not step 40's
    assert model.training
    again, untouched = _Line(), []
    restored = train_until_converged(again, _loader(), config, _scripted([], untouched), every=10, patience=2,
                                     output_dir=tmp_path / "run")
    assert restored.restored and untouched == [] and float(again.w.detach()) == float(model.w.detach())
    assert restored.summary() == {**run.summary()}
    other, calls = _Line(), []                                   # another stopping rule: trained again
    again_run = train_until_converged(other, _loader(), config, _scripted([1.0, 0.5, 0.4], calls), every=10,
                                      patience=1, output_dir=tmp_path / "run")
    assert not again_run.restored and len(calls) == 2


def test_a_run_still_improving_at_the_cap_is_not_converged() -> None:
    model = _Line()
    config = TrainConfig(max_steps=25, learning_rate=0.05, scheduler="constant", seed=0)
    run = train_until_converged(model, _loader(), config, lambda m: -abs(float(m.w) - 3), every=10, patience=3)
    assert [s for s, _ in run.history] == [10, 20, 25]                   # the cap is always scored
    assert run.best_step == 25 and not run.converged and not run.stopped_early


def test_evaluating_does_not_change_the_training() -> None:
    """A score that draws from the global RNG between steps leaves the dropout masks, and so the weights, as they
    are without evaluations (the score rises with every call, so the best weights are the last ones)."""
    config = TrainConfig(max_steps=30, learning_rate=0.05, scheduler="constant", seed=3)
    plain = _Line(dropout=0.5)
    train_until_converged(plain, _loader(), config, lambda m: 0.0, every=1000, patience=0)
    calls = []

    def noisy(m: nn.Module) -> float:
        torch.rand(5)                                                    # a score that draws from the global RNG
        calls.append(1)
        return float(len(calls))
    scored = _Line(dropout=0.5)
    run = train_until_converged(scored, _loader(), config, noisy, every=7, patience=0)
    assert len(run.history) == 5 and run.best_step == 30
    assert float(scored.w.detach()) == float(plain.w.detach())


def test_bad_arguments_and_nan_scores_are_refused() -> None:
    config = TrainConfig(max_steps=5, learning_rate=0.05)
    with pytest.raises(ValueError, match="every must be a positive"):
        train_until_converged(_Line(), _loader(), config, lambda m: 0.0, every=0, patience=1)
    with pytest.raises(ValueError, match="patience must be an int >= 0"):
        train_until_converged(_Line(), _loader(), config, lambda m: 0.0, every=1, patience=-1)
    with pytest.raises(ValueError, match="validation score is NaN at step 2"):
        train_until_converged(_Line(), _loader(), config, lambda m: float("nan"), every=2, patience=1)


def test_a_damaged_saved_outcome_or_weights_names_the_file_and_the_fix(tmp_path) -> None:
    from hashlib_core.checkpoints import CheckpointError
    from hashlib_core.early_stopping import _OUTCOME, _WEIGHTS

    config = TrainConfig(max_steps=20, learning_rate=0.05, scheduler="constant", seed=0)
    out = tmp_path / "run"
    train_until_converged(_Line(), _loader(), config, _scripted([1.0, 2.0], []), every=10, patience=2,
                          output_dir=out)
    whole = (out / _OUTCOME).read_text()
    (out / _OUTCOME).write_text(whole[: len(whole) // 2])
    with pytest.raises(CheckpointError, match=rf"{_OUTCOME} \(the outcome of a converged run\) does not read as JSON.*"
                                              r"Delete it"):
        train_until_converged(_Line(), _loader(), config, _scripted([], []), every=10, patience=2, output_dir=out)
    (out / _OUTCOME).write_text(whole)
    weights = (out / _WEIGHTS).read_bytes()
    (out / _WEIGHTS).write_bytes(weights[: len(weights) // 2])
    with pytest.raises(CheckpointError, match=rf"{_WEIGHTS} \(the best weights of a converged run\) does not load"):
        train_until_converged(_Line(), _loader(), config, _scripted([], []), every=10, patience=2, output_dir=out)
