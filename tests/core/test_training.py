"""The shared training loop: losses go down, and an interrupted run resumes to bit-identical weights."""
from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from hashlib_core.training import TrainConfig, latest_checkpoint, param_groups, train


class Regressor(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.net = nn.Sequential(nn.Linear(4, 16), nn.LayerNorm(16), nn.Dropout(0.1), nn.Linear(16, 1))

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> dict[str, torch.Tensor]:
        return {"loss": nn.functional.mse_loss(self.net(x).squeeze(-1), y)}


def _data() -> DataLoader:
    g = torch.Generator().manual_seed(1)
    x = torch.randn(40, 4, generator=g)
    y = x @ torch.tensor([1.0, -2.0, 0.5, 3.0])
    ds = TensorDataset(x, y)
    return DataLoader(ds, batch_size=8, shuffle=True, collate_fn=lambda b: {
        "x": torch.stack([r[0] for r in b]), "y": torch.stack([r[1] for r in b])})


CFG = TrainConfig(max_steps=13, learning_rate=1e-2, warmup_steps=2, log_every=1, checkpoint_every=3, seed=7)


class Interrupt(Exception):
    pass


def _state(model: nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def test_loss_decreases(tmp_path):
    result = train(Regressor(), _data(), CFG, output_dir=tmp_path, progress=False)
    assert result.steps == 13
    assert result.losses[-1][1] < result.losses[0][1]
    assert latest_checkpoint(tmp_path).name == "step_00000013"
    # only keep_checkpoints (2) complete checkpoints remain
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == ["step_00000012", "step_00000013"]


def test_config_digest_is_stable_and_order_free():
    from hashlib_core.training import config_digest

    assert config_digest({"a": 1, "b": (2, 3)}) == config_digest({"b": [2, 3], "a": 1})
    assert config_digest({"a": 1}) != config_digest({"a": 2})
    assert len(config_digest([1])) == 10


def test_quiet_resume_prints_nothing(tmp_path, capsys):
    train(Regressor(), _data(), CFG, output_dir=tmp_path, progress=False)
    capsys.readouterr()
    result = train(Regressor(), _data(), TrainConfig(max_steps=14, learning_rate=1e-2, seed=7),
                   output_dir=tmp_path, progress=False)
    assert result.resumed_from_step == 13
    assert capsys.readouterr().out == ""


def test_resume_gives_identical_weights(tmp_path):
    straight = Regressor()
    ref = train(straight, _data(), CFG, output_dir=tmp_path / "a", progress=False)

    def stop_at_7(step: int, loss: float) -> None:
        if step == 7:
            raise Interrupt

    interrupted = Regressor()
    with pytest.raises(Interrupt):
        train(interrupted, _data(), CFG, output_dir=tmp_path / "b", on_step=stop_at_7, progress=False)
    assert latest_checkpoint(tmp_path / "b").name == "step_00000006"

    resumed = Regressor()  # a fresh process would start from scratch weights: the checkpoint must restore them
    result = train(resumed, _data(), CFG, output_dir=tmp_path / "b", progress=False)
    assert result.resumed_from_step == 6
    assert result.steps == 13
    for (k, a), b in zip(_state(straight).items(), _state(resumed).values()):
        assert torch.equal(a, b), k
    assert result.losses == [tuple(x) for x in ref.losses]


def test_a_finished_run_read_back_reports_what_it_cost(tmp_path):
    first = train(Regressor(), _data(), CFG, output_dir=tmp_path, progress=False)
    assert first.prior_wall_time_s == 0.0
    again = train(Regressor(), _data(), CFG, output_dir=tmp_path, progress=False)
    assert again.resumed_from_step == 13 and again.steps == 13
    # the checkpoint's recorded training time comes back (the first run's, up to its last save)
    assert 0.0 < again.prior_wall_time_s <= first.wall_time_s
    assert again.losses == first.losses


def test_a_second_process_waits_for_the_folder_then_resumes(tmp_path):
    """Two jobs sharing a checkpoint folder: the second trains nothing while the first holds it, then reads the
    finished run back."""
    import threading

    from hashlib_core.training import _lock

    held = _lock(tmp_path)
    results = []
    worker = threading.Thread(target=lambda: results.append(
        train(Regressor(), _data(), CFG, output_dir=tmp_path, progress=False)))
    worker.start()
    worker.join(timeout=1.0)
    assert worker.is_alive() and not results          # blocked on the lock, nothing trained
    train(Regressor(), _data(), CFG, output_dir=tmp_path / "other", progress=False)   # other folders are free
    held.close()
    worker.join(timeout=60)
    assert not worker.is_alive() and results[0].steps == 13 and results[0].resumed_from_step is None
    again = train(Regressor(), _data(), CFG, output_dir=tmp_path, progress=False)
    assert again.resumed_from_step == 13


def test_no_decay_on_bias_and_norm():
    groups = param_groups(Regressor(), 0.1)
    assert [g["weight_decay"] for g in groups] == [0.1, 0.0]
    assert sum(p.numel() for p in groups[0]["params"]) == 4 * 16 + 16 * 1   # the two weight matrices
    assert sum(p.numel() for p in groups[1]["params"]) == 16 + 16 + 16 + 1   # biases and LayerNorm


def test_bad_config_is_refused():
    with pytest.raises(ValueError, match="max_steps"):
        TrainConfig(max_steps=0)
    with pytest.raises(ValueError, match="scheduler"):
        TrainConfig(max_steps=1, scheduler="exp")


def test_model_without_loss_is_explained(tmp_path):
    class NoLoss(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = nn.Linear(4, 1)

        def forward(self, x, y):
            return {"logits": self.lin(x)}

    with pytest.raises(ValueError, match="no loss"):
        train(NoLoss(), _data(), TrainConfig(max_steps=1), progress=False)


class NoisyCollate:
    """Draws from the global torch RNG, as a masking collator would."""

    def __call__(self, rows):
        x = torch.stack([r[0] for r in rows])
        return {"x": x + 0.01 * torch.randn_like(x), "y": torch.stack([r[1] for r in rows])}


def test_collator_randomness_differs_per_batch_and_resumes_exactly(tmp_path):
    seen = []

    class Recording(Regressor):
        def forward(self, x, y):
            seen.append(x.detach().clone())
            return super().forward(x, y)

    def loader():
        g = torch.Generator().manual_seed(1)
        x = torch.zeros(16, 4)
        return DataLoader(TensorDataset(x, torch.randn(16, generator=g)), batch_size=8, shuffle=False,
                          collate_fn=NoisyCollate())

    cfg = TrainConfig(max_steps=6, learning_rate=1e-2, log_every=1, checkpoint_every=2, seed=3)
    straight = Recording()
    train(straight, loader(), cfg, output_dir=tmp_path / "a", progress=False)
    noise = seen[:]
    assert not torch.equal(noise[0], noise[2])       # same rows, another epoch: fresh noise
    assert not torch.equal(noise[0], noise[1])

    def stop_at_3(step, loss):
        if step == 3:
            raise Interrupt

    with pytest.raises(Interrupt):
        train(Recording(), loader(), cfg, output_dir=tmp_path / "b", on_step=stop_at_3, progress=False)
    seen.clear()
    resumed = Recording()
    train(resumed, loader(), cfg, output_dir=tmp_path / "b", progress=False)
    assert all(torch.equal(a, b) for a, b in zip(noise[2:], seen))   # batches 3..6 see the same noise
    for a, b in zip(_state(straight).values(), _state(resumed).values()):
        assert torch.equal(a, b)


@pytest.mark.parametrize("device, cpu_flag", [("cpu", True), (torch.device("cpu"), True), ("cuda", False),
                                              (None, False)])
def test_device_choice_reaches_accelerate(monkeypatch, device, cpu_flag):
    """--device cpu keeps accelerate off a GPU that happens to be present (it would pick it by default)."""
    import accelerate

    seen = {}
    real = accelerate.Accelerator

    def recording(*args, **kwargs):
        seen.update(kwargs)
        kwargs["cpu"] = True                       # this machine may have no GPU: always build a CPU accelerator
        return real(*args, **kwargs)

    monkeypatch.setattr(accelerate, "Accelerator", recording)
    train(Regressor(), _data(), TrainConfig(max_steps=2, learning_rate=1e-2), device=device, progress=False)
    assert seen["cpu"] is cpu_flag


def test_on_step_returning_true_stops_training(tmp_path):
    seen = []

    def early_stop(step, loss):
        seen.append(step)
        return step == 4                     # e.g. patience exhausted after the evaluation at step 4

    result = train(Regressor(), _data(), TrainConfig(max_steps=13, learning_rate=1e-2), on_step=early_stop,
                   progress=False)
    assert result.steps == 4 and seen == [1, 2, 3, 4]


class _Slope(nn.Module):
    """loss = w: a constant gradient of 1, so each AdamW step (no weight decay, no clipping) moves w by the step's
    learning rate exactly (bias-corrected moments of a constant gradient are 1)."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.zeros(()))

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> dict[str, torch.Tensor]:
        return {"loss": self.w + 0 * x.sum()}


@pytest.mark.parametrize("scheduler", ["linear", "constant_with_warmup"])
def test_scheduler_sets_each_steps_learning_rate(scheduler):
    model, seen = _Slope(), [0.0]

    def record(step: int, loss: float) -> None:
        seen.append(float(model.w.detach()))

    config = TrainConfig(max_steps=10, learning_rate=0.1, weight_decay=0.0, warmup_steps=2, grad_clip=None,
                         scheduler=scheduler, log_every=1, seed=0)
    train(model, _data(), config, on_step=record, progress=False)
    moves = [round(a - b, 6) for a, b in zip(seen[:-1], seen[1:])]
    warm = [0.0, 0.05]   # step k of the warm-up takes k / warmup_steps of the rate
    after = [0.1] * 8 if scheduler == "constant_with_warmup" else [round(0.1 * (10 - k) / 8, 6) for k in range(2, 10)]
    assert moves == pytest.approx(warm + after, abs=1e-5)


# ------------------------------------------------------------------------------------------- stopped lock holders
_HOLD = """
import sys, time
from pathlib import Path
from hashlib_core.training import _lock
handle = _lock(Path(sys.argv[1]))
print("held", flush=True)
time.sleep(600)
"""


def test_a_stopped_lock_holder_is_named_and_the_wait_ends(tmp_path, monkeypatch, caplog):
    """A trainer stopped (SIGSTOP) while it holds the folder: the next run says whom it waits for (pid, stopped,
    since when) and gives up after the timeout setting with an error naming the folder and the fixes."""
    import os
    import signal
    import subprocess
    import sys

    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        os.kill(holder.pid, signal.SIGSTOP)
        monkeypatch.setenv("HASHLIB_LOCK_TIMEOUT_S", "1.5")
        with caplog.at_level("WARNING", logger="hashlib_core.checkpoints"):
            with pytest.raises(TimeoutError) as info:
                train(Regressor(), _data(), CFG, output_dir=tmp_path, progress=False)
        message = str(info.value)
        assert f"pid {holder.pid}" in message and "stopped" in message and "since 20" in message
        assert str(tmp_path) in message and "HASHLIB_LOCK_TIMEOUT_S" in message
        assert [r for r in caplog.records if f"pid {holder.pid}" in r.getMessage() and "waiting" in r.getMessage()]
        assert latest_checkpoint(tmp_path) is None          # nothing trained, nothing half-written
    finally:
        holder.kill()
        holder.wait()
    # the holder gone, the lock is free at once
    assert train(Regressor(), _data(), CFG, output_dir=tmp_path, progress=False).steps == 13


@pytest.mark.parametrize("raw", ["0", "-3", "nan", "soon"])
def test_a_bad_lock_timeout_setting_is_refused(monkeypatch, raw):
    from hashlib_core.training import lock_timeout_s

    monkeypatch.setenv("HASHLIB_LOCK_TIMEOUT_S", raw)
    with pytest.raises(ValueError, match="HASHLIB_LOCK_TIMEOUT_S must be a positive number"):
        lock_timeout_s()


# ------------------------------------------------------------------------------------------- damaged checkpoints
def _checkpointed(tmp_path):
    """A run interrupted after its step-9 checkpoint: the folder a resume reads."""
    def stop(step, loss):
        if step == 10:
            raise Interrupt

    with pytest.raises(Interrupt):
        train(Regressor(), _data(), CFG, output_dir=tmp_path, on_step=stop, progress=False)
    ckpt = latest_checkpoint(tmp_path)
    assert ckpt.name == "step_00000009"
    return ckpt


def _cut(path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


@pytest.mark.parametrize("name", ["trainer_state.json", "model.safetensors", "optimizer.bin", "scheduler.bin",
                                  "random_states_0.pkl"])
def test_a_checkpoint_file_cut_in_half_is_named(tmp_path, name):
    from hashlib_core.training import CheckpointError

    ckpt = _checkpointed(tmp_path)
    assert (ckpt / name).is_file(), sorted(p.name for p in ckpt.iterdir())
    _cut(ckpt / name)
    with pytest.raises(CheckpointError) as info:
        train(Regressor(), _data(), CFG, output_dir=tmp_path, progress=False)
    message = str(info.value)
    assert str(ckpt) in message and (name in message) and "Delete that folder" in message


def test_a_checkpoint_file_edited_in_place_is_named(tmp_path):
    from hashlib_core.training import CheckpointError

    ckpt = _checkpointed(tmp_path)
    data = bytearray((ckpt / "optimizer.bin").read_bytes())
    data[-1] ^= 1
    (ckpt / "optimizer.bin").write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="optimizer.bin changed since it was saved"):
        train(Regressor(), _data(), CFG, output_dir=tmp_path, progress=False)


def test_an_older_checkpoint_without_digests_still_refuses_cut_random_states(tmp_path):
    """Checkpoints saved before the digests were recorded: accelerate would skip a cut RNG file without a word and
    resume with other random states; the resume refuses it by name instead, and resumes a whole one."""
    import json

    from hashlib_core.training import CheckpointError

    ckpt = _checkpointed(tmp_path)
    state = json.loads((ckpt / "trainer_state.json").read_text())
    del state["files"]
    (ckpt / "trainer_state.json").write_text(json.dumps(state))
    rng = (ckpt / "random_states_0.pkl").read_bytes()
    _cut(ckpt / "random_states_0.pkl")
    with pytest.raises(CheckpointError, match="random_states_0.pkl does not load"):
        train(Regressor(), _data(), CFG, output_dir=tmp_path, progress=False)
    (ckpt / "random_states_0.pkl").write_bytes(rng)
    assert train(Regressor(), _data(), CFG, output_dir=tmp_path, progress=False).resumed_from_step == 9
