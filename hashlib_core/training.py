"""One training loop for every chapter: ``accelerate``-driven, with progress, periodic checkpoints and resume.

The same function runs in a notebook (one process, CPU or one GPU) and under ``accelerate launch`` / ``torchrun``
on several GPUs. It follows Hugging Face conventions: a batch is a ``dict`` of tensors passed as ``model(**batch)``
and the model returns an output with a ``loss`` (a ``ModelOutput`` or a ``dict``).

Resuming is exact: a checkpoint stores the model, optimiser, scheduler and every RNG state
(``Accelerator.save_state``) plus ``trainer_state.json`` (step, epoch, position in the epoch, losses so far),
written last so that an interrupted save is never mistaken for a checkpoint. The data order is reproducible per
epoch (accelerate's seedable sampler), and on resume the batches already seen in the current epoch are skipped, so
an interrupted run that resumes ends with the same weights as an uninterrupted one (tested).
"""
from __future__ import annotations

import hashlib
import json
import logging
import math
import random
import shutil
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import numpy as np
import torch
from torch import nn

from hashlib_core._io import atomic_write_json
from hashlib_core.checkpoints import (STATE_FILE, CheckpointError, _damaged, _lock, file_digests, latest_checkpoint,
                                      lock_timeout_s, read_checkpoint_state)

__all__ = ["TrainConfig", "TrainResult", "train", "latest_checkpoint", "read_checkpoint_state", "CheckpointError",
           "param_groups", "config_digest", "lock_timeout_s"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation settings (AdamW, warm-up, schedule, clipping, checkpoints)."""

    max_steps: int
    learning_rate: float = 5e-4
    weight_decay: float = 0.01
    adam_betas: tuple[float, float] = (0.9, 0.999)
    adam_eps: float = 1e-8
    warmup_steps: int = 0
    #: "cosine", "linear", "constant", "constant_with_warmup" or "cosine_with_restarts" (transformers' schedulers;
    #: "constant" ignores ``warmup_steps``)
    scheduler: str = "cosine"
    scheduler_cycles: int = 1
    grad_clip: float | None = 1.0
    grad_accumulation: int = 1
    log_every: int = 50
    #: save every N optimiser steps (0: only at the end)
    checkpoint_every: int = 0
    keep_checkpoints: int = 2
    #: "no", "bf16" or "fp16"
    mixed_precision: str = "no"
    seed: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.max_steps, int) or self.max_steps < 1:
            raise ValueError(f"max_steps must be a positive int, got {self.max_steps!r}")
        if self.learning_rate <= 0:
            raise ValueError(f"learning_rate must be > 0, got {self.learning_rate!r}")
        if self.scheduler not in {"cosine", "linear", "constant", "constant_with_warmup", "cosine_with_restarts"}:
            raise ValueError(f"scheduler must be cosine, linear, constant, constant_with_warmup or "
                             f"cosine_with_restarts; got {self.scheduler!r}")
        if self.mixed_precision not in {"no", "bf16", "fp16"}:
            raise ValueError(f"mixed_precision must be 'no', 'bf16' or 'fp16', got {self.mixed_precision!r}")
        if self.grad_accumulation < 1 or self.keep_checkpoints < 1 or self.checkpoint_every < 0:
            raise ValueError("grad_accumulation and keep_checkpoints must be >= 1, checkpoint_every >= 0")


@dataclass
class TrainResult:
    steps: int
    wall_time_s: float                   # this process's training time
    resumed_from_step: int | None
    losses: list[tuple[int, float]] = field(default_factory=list)   # (step, mean loss since previous log)
    output_dir: str | None = None
    #: training time the resumed checkpoint had already cost (earlier processes; 0 without a resume)
    prior_wall_time_s: float = 0.0

    @property
    def final_loss(self) -> float:
        return self.losses[-1][1] if self.losses else math.nan


def param_groups(model: nn.Module, weight_decay: float) -> list[dict[str, Any]]:
    """AdamW groups with no weight decay on biases and normalisation weights (as BERT, HashFormers A.1)."""
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        (no_decay if p.ndim < 2 or "norm" in name.lower() else decay).append(p)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def config_digest(obj: Any) -> str:
    """A short, stable name for a configuration (sha256 of its sorted JSON, 10 hex digits), for checkpoint folders:
    a run resumes only from checkpoints written under the same settings."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode("utf-8")).hexdigest()[:10]


@contextmanager
def _batch_rng(seed: int) -> Iterator[None]:
    """Run a block with Python, NumPy and torch (CPU) global RNGs seeded by ``seed``, then restore them."""
    states = random.getstate(), np.random.get_state(), torch.get_rng_state()
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    try:
        yield
    finally:
        random.setstate(states[0])
        np.random.set_state(states[1])
        torch.set_rng_state(states[2])


def _batches(loader: Any, seed: int, epoch: int) -> Iterator[Any]:
    """Iterate ``loader`` so that loading and collating never touch the training RNG stream.

    The k-th fetch of an epoch runs with the global RNGs seeded from ``(seed, epoch, k)`` and restored afterwards.
    So a collator that draws from the global RNGs (random masks, replacements) gets a fresh, reproducible stream per
    batch that does not depend on where a run was resumed, and dropout in the model draws from the same stream in
    an interrupted-and-resumed run as in an uninterrupted one (a DataLoader iterator also draws a base seed when it
    starts). A collator with a generator of its own works too, but after a resume its stream restarts.
    """
    it = iter(loader)
    k = 0
    while True:
        with _batch_rng((seed * 1_000_003 + epoch * 100_003 + k) % 2**63):
            try:
                batch = next(it)
            except StopIteration:
                return
        k += 1
        yield batch


class _DropTiedWeightNotice(logging.Filter):
    """accelerate logs "Removed shared tensor {...} while saving" for every model with tied input and output
    embeddings (every causal LM here): expected, and restored on load, so it is not shown."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Removed shared tensor" not in record.getMessage()


@contextmanager
def _quiet_tied_weight_notice() -> Iterator[None]:
    other = logging.getLogger("accelerate.utils.other")
    notice = _DropTiedWeightNotice()
    other.addFilter(notice)
    try:
        yield
    finally:
        other.removeFilter(notice)


def _loss_of(output: Any) -> torch.Tensor:
    loss = output.get("loss") if isinstance(output, Mapping) else getattr(output, "loss", None)
    if loss is None:
        raise ValueError(
            "the model returned no loss: pass labels in the batch (Hugging Face convention) or give train() a loss_fn"
        )
    return loss


def train(
    model: nn.Module,
    train_dataloader: torch.utils.data.DataLoader,
    config: TrainConfig,
    *,
    output_dir: str | Path | None = None,
    resume: bool = True,
    loss_fn: Callable[[Any, Mapping[str, torch.Tensor]], torch.Tensor] | None = None,
    on_step: Callable[[int, float], bool | None] | None = None,
    accelerator: Any = None,
    device: str | torch.device | None = None,
    progress: bool = True,
) -> TrainResult:
    """Train ``model`` for ``config.max_steps`` optimiser steps; checkpoint to and resume from ``output_dir``.

    ``on_step(step, loss)`` is called after every optimiser step (after any checkpoint of that step); when it returns
    ``True`` training stops after that step (early stopping: the caller keeps what it needs, e.g. the best weights).
    ``progress=False`` prints nothing (no progress bar, no "resumed from" line).
    ``device``: the device the caller chose (a profile's ``--device``); ``cpu`` keeps accelerate off an accelerator
    that happens to be present (accelerate otherwise picks it), any other value lets accelerate place the process.
    The model is left trained (and unwrapped) in place; the caller saves it with ``save_pretrained``.
    """
    from accelerate import Accelerator
    from accelerate.utils import DataLoaderConfiguration, DistributedDataParallelKwargs, set_seed
    from transformers import get_scheduler

    if accelerator is None:
        accelerator = Accelerator(
            cpu=device is not None and torch.device(device).type == "cpu",
            mixed_precision=config.mixed_precision,
            gradient_accumulation_steps=config.grad_accumulation,
            dataloader_config=DataLoaderConfiguration(use_seedable_sampler=True, data_seed=config.seed),
            # several processes: DDP otherwise fails at the second step for a model holding parameters its loss
            # never reaches (an intent model's slot head, an untied MLM bias); one process ignores it
            kwargs_handlers=[DistributedDataParallelKwargs(find_unused_parameters=True)],
        )
    set_seed(config.seed)
    optimizer = torch.optim.AdamW(param_groups(model, config.weight_decay), lr=config.learning_rate,
                                  betas=config.adam_betas, eps=config.adam_eps)
    scheduler_kwargs = {"num_cycles": config.scheduler_cycles} if config.scheduler == "cosine_with_restarts" else {}
    scheduler = get_scheduler(config.scheduler, optimizer, num_warmup_steps=config.warmup_steps,
                              num_training_steps=config.max_steps, scheduler_specific_kwargs=scheduler_kwargs)
    model, optimizer, loader, scheduler = accelerator.prepare(model, optimizer, train_dataloader, scheduler)
    if len(loader) == 0:
        raise ValueError("the training dataloader is empty: check the dataset and the batch size")

    out = Path(output_dir) if output_dir is not None else None
    # one process trains a checkpoint folder at a time: a second process (another job sharing the checkpoints)
    # waits, then resumes from what the first wrote (a finished run: at once). Not under several processes of one
    # run (accelerate launch), whose ranks share the folder by design.
    lock = _lock(out) if out is not None and accelerator.num_processes == 1 else None
    try:
        step, epoch, batch_in_epoch, resumed_from = 0, 0, 0, None
        prior = 0.0
        losses: list[tuple[int, float]] = []
        if out is not None and resume and (ckpt := latest_checkpoint(out)) is not None:
            state = read_checkpoint_state(ckpt)
            try:
                accelerator.load_state(str(ckpt))
            except Exception as exc:     # torch, safetensors or pickle errors: name the checkpoint and the fix
                raise _damaged(ckpt, f"accelerate could not load it ({type(exc).__name__}: {exc})") from exc
            step, epoch, batch_in_epoch = state["step"], state["epoch"], state["batch_in_epoch"]
            losses = [tuple(x) for x in state["losses"]]
            prior = float(state.get("wall_time_s") or 0.0)   # what the run had cost (older checkpoints: unknown, 0)
            resumed_from = step
            if progress:
                accelerator.print(f"resumed from {ckpt.name} (step {step}/{config.max_steps})")

        def save(at_step: int) -> None:
            if out is None:
                return
            ckpt_dir = out / "checkpoints" / f"step_{at_step:08d}"
            with _quiet_tied_weight_notice():
                accelerator.save_state(str(ckpt_dir))
            accelerator.wait_for_everyone()     # every rank's RNG file written before the digests are taken
            if accelerator.is_main_process:
                atomic_write_json(ckpt_dir / STATE_FILE, {
                    "step": at_step, "epoch": epoch, "batch_in_epoch": batch_in_epoch,
                    "losses": losses, "config": asdict(config),
                    "wall_time_s": prior + time.perf_counter() - start,
                    # every file's size and digest: a file cut short or edited is named on resume
                    "files": file_digests(ckpt_dir),
                })
                done = sorted((p for p in (out / "checkpoints").glob("step_*") if (p / STATE_FILE).is_file()),
                              key=lambda p: int(p.name.split("_")[1]))
                for old in done[: -config.keep_checkpoints]:
                    shutil.rmtree(old, ignore_errors=True)
            accelerator.wait_for_everyone()

        bar = None
        if progress and accelerator.is_local_main_process:
            from tqdm.auto import tqdm

            bar = tqdm(total=config.max_steps, initial=step, desc="train", unit="step", dynamic_ncols=True)
        start = time.perf_counter()
        # the running loss stays on the device between log points: a .item() per step would wait for the GPU every step
        running: torch.Tensor | float = 0.0
        running_n = 0
        model.train()
        stop = False
        while step < config.max_steps and not stop:
            if hasattr(loader, "set_epoch"):
                loader.set_epoch(epoch)
            # On resume, replay the epoch's (seeded) order and drop the batches already trained on. Iterating past
            # them, rather than accelerate's skip_first_batches, keeps the order identical to the uninterrupted run.
            skip = batch_in_epoch
            for batch in _batches(loader, config.seed, epoch):
                if skip:
                    skip -= 1
                    continue
                with accelerator.accumulate(model):
                    output = model(**batch)
                    loss = loss_fn(output, batch) if loss_fn is not None else _loss_of(output)
                    accelerator.backward(loss)
                    if accelerator.sync_gradients and config.grad_clip is not None:
                        accelerator.clip_grad_norm_(model.parameters(), config.grad_clip)
                    optimizer.step()
                    scheduler.step()
                    optimizer.zero_grad(set_to_none=True)
                batch_in_epoch += 1
                running = running + loss.detach().float()
                running_n += 1
                if not accelerator.sync_gradients:
                    continue
                step += 1
                if step % config.log_every == 0 or step == config.max_steps:
                    mean = accelerator.gather(torch.as_tensor(running / running_n).reshape(1)).float().mean()
                    losses.append((step, mean.item()))
                    running, running_n = 0.0, 0
                    if bar is not None:
                        bar.set_postfix(loss=f"{losses[-1][1]:.4f}", lr=f"{scheduler.get_last_lr()[0]:.2e}")
                if bar is not None:
                    bar.update(1)
                if step == config.max_steps or (config.checkpoint_every and step % config.checkpoint_every == 0):
                    save(step)
                if on_step is not None:
                    stop = on_step(step, loss.detach().float().item()) is True
                if step >= config.max_steps or stop:
                    break
            else:
                epoch, batch_in_epoch = epoch + 1, 0
        if bar is not None:
            bar.close()
        accelerator.wait_for_everyone()
        return TrainResult(steps=step, wall_time_s=time.perf_counter() - start, resumed_from_step=resumed_from,
                           losses=losses, output_dir=str(out) if out is not None else None, prior_wall_time_s=prior)
    finally:
        if lock is not None:
            lock.close()
