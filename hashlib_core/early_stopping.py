"""Training until a validation score stops improving: the shared loop with early stopping and the best weights kept.

:func:`train_until_converged` runs :func:`hashlib_core.training.train` with a ``score(model)`` (higher is better,
computed on a validation split, never on the test items) every ``every`` optimiser steps and at the last step. The
best-scoring weights are kept in memory; training stops once ``patience`` evaluations in a row bring no improvement,
or at ``max_steps`` (the cap: the schedule spans it). The model comes back with the best weights loaded, and the
result says whether the best evaluation came **before the cap** (``converged``): a run whose best score is its last
one was still improving when it was stopped, and a table built from it marks the row.

With ``output_dir`` the outcome (best weights, the score history, the training curve) is written there when the run
ends, and a later call with the same folder and the same optimisation and stopping rule restores it instead of
training again: a long chapter run that is interrupted redoes only the model it was training. The caller names the folder after every setting that changes
the weights (:meth:`hashlib_core.chapter.RunContext.checkpoint_dir`).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch
from torch import nn

from hashlib_core._io import atomic_write_json
from hashlib_core.checkpoints import CheckpointError, read_saved_json
from hashlib_core.training import TrainConfig, config_digest, train

__all__ = ["ConvergedRun", "train_until_converged"]

_OUTCOME, _WEIGHTS = "outcome.json", "best_weights.pt"


@dataclass
class ConvergedRun:
    """What :func:`train_until_converged` returns (besides the model, trained in place)."""

    #: optimiser steps run, the cap, the step of the best evaluation and its score
    steps: int
    max_steps: int
    best_step: int
    best_score: float
    #: (step, validation score) of every evaluation; (step, mean training loss) of every log point
    history: list[tuple[int, float]] = field(default_factory=list)
    losses: list[tuple[int, float]] = field(default_factory=list)
    wall_time_s: float = 0.0
    #: the outcome was read from ``output_dir`` (no training in this call)
    restored: bool = False

    @property
    def converged(self) -> bool:
        """The best evaluation came before the run's last one (patience ran out, or the score fell back before the
        cap): False means the model was still improving when the cap stopped it."""
        return bool(self.history) and self.best_step < self.history[-1][0]

    @property
    def stopped_early(self) -> bool:
        return self.steps < self.max_steps

    def summary(self) -> dict[str, Any]:
        """The columns a results table carries for the run."""
        return {"steps": self.steps, "max_steps": self.max_steps, "best_step": self.best_step,
                "best_validation": self.best_score, "evaluations": len(self.history),
                "converged": self.converged, "wall_time_s": self.wall_time_s}


def _digest(config: TrainConfig, every: int, patience: int) -> str:
    """What an outcome is valid for besides its folder: the optimisation and the stopping rule."""
    return config_digest({"config": asdict(config), "every": every, "patience": patience})


def _save(out: Path, model: nn.Module, run: ConvergedRun, digest: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / (_WEIGHTS + ".tmp")
    torch.save({k: v.detach().cpu() for k, v in model.state_dict().items()}, tmp)
    tmp.replace(out / _WEIGHTS)
    atomic_write_json(out / _OUTCOME, {
        "steps": run.steps, "max_steps": run.max_steps, "best_step": run.best_step, "best_score": run.best_score,
        "history": run.history, "losses": run.losses, "wall_time_s": run.wall_time_s, "digest": digest})


def _restore(out: Path, model: nn.Module, max_steps: int, digest: str) -> ConvergedRun | None:
    outcome, weights = out / _OUTCOME, out / _WEIGHTS
    if not (outcome.is_file() and weights.is_file()):
        return None
    saved = read_saved_json(outcome, "the outcome of a converged run")
    if saved.get("max_steps") != max_steps or saved.get("digest") != digest:
        return None
    try:
        state = torch.load(weights, map_location="cpu", weights_only=True)
    except Exception as exc:      # an unpickling error of any kind: the file is damaged
        raise CheckpointError(f"{weights} (the best weights of a converged run) does not load ({type(exc).__name__}: "
                              f"{str(exc)[:160]}; cut short?). Delete its folder {out} and the run is done again") \
            from None
    model.load_state_dict(state)
    return ConvergedRun(steps=saved["steps"], max_steps=max_steps, best_step=saved["best_step"],
                        best_score=saved["best_score"], history=[tuple(h) for h in saved["history"]],
                        losses=[tuple(x) for x in saved["losses"]], wall_time_s=saved["wall_time_s"], restored=True)


def train_until_converged(model: nn.Module, loader: Any, config: TrainConfig, score: Callable[[nn.Module], float],
                          *, every: int, patience: int, output_dir: str | Path | None = None,
                          device: Any = None, progress: bool = False) -> ConvergedRun:
    """Train ``model`` with ``config`` (``max_steps`` is the cap), scoring it with ``score`` every ``every`` steps;
    stop after ``patience`` evaluations without improvement (0: never stop early). The best weights are loaded into
    ``model`` before it returns. ``score`` runs under ``torch.no_grad`` with the model in eval mode and the global
    RNG states restored afterwards, so evaluating does not change the training that follows."""
    if isinstance(every, bool) or not isinstance(every, int) or every < 1:
        raise ValueError(f"every must be a positive number of steps between evaluations, got {every!r}")
    if isinstance(patience, bool) or not isinstance(patience, int) or patience < 0:
        raise ValueError(f"patience must be an int >= 0 (evaluations without improvement; 0: never stop early), "
                         f"got {patience!r}")
    out = Path(output_dir) if output_dir is not None else None
    digest = _digest(config, every, patience)
    if out is not None and (done := _restore(out, model, config.max_steps, digest)) is not None:
        return done

    best: dict[str, Any] = {"score": -math.inf, "step": 0, "state": None, "bad": 0}
    history: list[tuple[int, float]] = []

    def evaluate(step: int, _loss: float) -> bool:
        if step % every and step != config.max_steps:
            return False
        rng = torch.get_rng_state()
        was_training = model.training
        model.eval()
        try:
            with torch.no_grad():
                value = float(score(model))
        finally:
            model.train(was_training)
            torch.set_rng_state(rng)
        if math.isnan(value):
            raise ValueError(f"the validation score is NaN at step {step}: check the model's outputs and the score")
        history.append((step, value))
        if value > best["score"]:                             # ties keep the earlier (cheaper) model
            best.update(score=value, step=step, bad=0,
                        state={k: v.detach().clone() for k, v in model.state_dict().items()})
        else:
            best["bad"] += 1
        return bool(patience) and best["bad"] >= patience

    result = train(model, loader, config, output_dir=None, device=device, progress=progress, on_step=evaluate)
    if best["state"] is not None:
        model.load_state_dict(best["state"])
    run = ConvergedRun(steps=result.steps, max_steps=config.max_steps, best_step=best["step"],
                       best_score=best["score"], history=history, losses=result.losses,
                       wall_time_s=result.wall_time_s)
    if out is not None:
        _save(out, model, run, digest)
    return run
