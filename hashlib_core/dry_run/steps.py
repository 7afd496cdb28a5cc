"""Two optimiser steps of a chapter's tiny model through the shared training loop, on one process or several.

:func:`two_steps` is what each process does: train the tiny model for two steps with a checkpoint after each
(:func:`hashlib_core.training.train`), then start again from fresh weights with only the first checkpoint kept (an
interrupted run) and resume; the resumed run must end at the same step with the same weights as the uninterrupted
one. :func:`launch` runs it on ``processes`` CPU processes joined by ``torch.distributed`` (gloo), as
``accelerate launch --num_processes N`` would on GPUs: CUDA is hidden, every rank writes what it saw to a JSON file,
and the caller reads them back.

Several processes are where data-parallel training breaks that a single process never shows: under DDP, a model
whose loss never reaches some of its parameters fails at the second step unless DDP looks for unused parameters
(the shared loop asks it to).
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import traceback
from pathlib import Path
from typing import Any, Callable, Sequence

import torch
from torch import nn

__all__ = ["STEPS", "two_steps", "launch", "weights_digest", "chapter_steps"]

#: optimiser steps of the dry run's training (the checkpoint after the first is the one resumed from)
STEPS = 2


def weights_digest(model: nn.Module) -> str:
    """A digest of every parameter and buffer (names, shapes and values): equal digests, equal weights."""
    import hashlib

    h = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        h.update(name.encode())
        h.update(str(tuple(tensor.shape)).encode())
        h.update(tensor.detach().to("cpu", torch.float64).contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def two_steps(build: Callable[[], tuple[nn.Module, Any]], root: str | Path) -> dict[str, Any]:
    """Train ``build()``'s model for :data:`STEPS` steps, checkpointing every step; then resume a fresh copy
    (other initial weights) from the first checkpoint alone. Returns what this process saw."""
    from accelerate import PartialState

    from hashlib_core.training import TrainConfig, train

    state = PartialState(cpu=True)          # before train(): the processes join one gloo group on CPU
    root = Path(root)
    config = TrainConfig(max_steps=STEPS, learning_rate=1e-3, scheduler="constant", checkpoint_every=1,
                         keep_checkpoints=STEPS, log_every=1, seed=0)
    torch.manual_seed(0)
    model, loader = build()
    full = train(model, loader, config, output_dir=root / "uninterrupted", resume=False, device="cpu",
                 progress=False)
    uninterrupted = weights_digest(model)
    first = root / "uninterrupted" / "checkpoints" / f"step_{1:08d}"
    resumed_dir = root / "resumed" / "checkpoints" / first.name
    if state.is_main_process:
        shutil.copytree(first, resumed_dir)
    state.wait_for_everyone()
    torch.manual_seed(1)                       # other initial weights: only the checkpoint can make them equal
    model, loader = build()
    fresh = weights_digest(model)
    again = train(model, loader, config, output_dir=root / "resumed", resume=True, device="cpu", progress=False)
    return {"rank": state.process_index, "processes": state.num_processes, "steps": full.steps,
            "resumed_from_step": again.resumed_from_step, "resumed_steps": again.steps,
            "weights": uninterrupted, "resumed_weights": weights_digest(model), "fresh_weights": fresh,
            "loss": full.final_loss}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker(rank: int, world: int, port: int, target: str, args: Sequence[Any], root: str) -> None:
    """One process of :func:`launch`: join the group as ``rank``, run ``target(*args, root=<rank folder>)``."""
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world), LOCAL_WORLD_SIZE=str(world),
                      MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), CUDA_VISIBLE_DEVICES="", OMP_NUM_THREADS="1")
    out = Path(root) / f"rank{rank}.json"
    try:
        module, _, name = target.partition(":")
        fn = getattr(__import__(module, fromlist=[name]), name)
        result = {"ok": True, "result": fn(*args, root=root)}
    except Exception as exc:       # reported to the parent, which raises it with the rank named
        result = {"ok": False, "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}
    out.write_text(json.dumps(result), encoding="utf-8")
    if not result["ok"]:
        raise SystemExit(1)


def launch(target: str, args: Sequence[Any], root: str | Path, processes: int = 2) -> list[Any]:
    """Run ``target`` (``"module:function"``, called as ``function(*args, root=root)``) on ``processes`` CPU
    processes joined by gloo, and return each rank's result (rank order). A rank's failure raises
    ``RuntimeError`` naming the rank, its error and its traceback."""
    import torch.multiprocessing as mp

    if processes < 1:
        raise ValueError(f"processes must be >= 1, got {processes}")
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    try:
        mp.start_processes(_worker, args=(processes, port, target, tuple(args), str(root)), nprocs=processes,
                           start_method="spawn")
    except Exception as exc:                      # a rank exited non-zero: its own report says why
        reports = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(root.glob("rank*.json"))]
        failed = [f"rank {i}: {r['error']}\n{r['traceback']}" for i, r in enumerate(reports) if not r["ok"]]
        raise RuntimeError(f"the {processes}-process run of {target} failed:\n" + ("\n".join(failed) or str(exc))
                           ) from None
    return [json.loads((root / f"rank{r}.json").read_text(encoding="utf-8"))["result"] for r in range(processes)]


def chapter_steps(slug: str, profile: Any, root: str | Path) -> dict[str, Any]:
    """:func:`two_steps` of chapter ``slug``'s tiny model for ``profile`` (a :func:`launch` target)."""
    from hashlib_core.dry_run.spec import spec_of

    spec = spec_of(slug)
    if spec.tiny is None:
        raise ValueError(f"chapter {slug!r} trains no model: its dry run has no tiny model to train")
    return two_steps(lambda: spec.tiny(profile), root)
