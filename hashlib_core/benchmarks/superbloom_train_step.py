"""Superbloom's training step against the unhashed model's as the id space grows (§2.4's training-time claim).

§2.4: "the cost of updating E_O dominates that of training, and a reduction in vocabulary size allows us to
significantly reduce training time without resorting to negative sampling". Both models here have the same
Transformer (width, depth, heads); they differ only in the vocabulary: the unhashed model has one token per id (a
full softmax over |S| ids, an |S|-row table), Superbloom ``m`` maps of |S| / alpha tokens (its sequences are ``m``
tokens per item, so its Transformer does ``m`` times the work). A step is what the book's training loop does:
forward, the masked-item loss, backward, gradient clipping at 1 and an AdamW update (weight decay 0.01 off biases
and norms), on the same masked batches of real id sets (the data's ids are the first of the id space).

The two models' steps are timed in alternation (after a warm-up step each) so that both see the same state of a
shared machine; the speed-up is reported as the median and range of the paired ratios.

Usage::

    python -m hashlib_core.benchmarks.superbloom_train_step --profile cpu                # its id spaces
    python -m hashlib_core.benchmarks.superbloom_train_step --profile smoke --ids 20000 --repeats 2

The result goes to ``results/benchmarks/quick/superbloom_train_step.json``. Speed is measured here and in the
chapter's ``train_time`` experiment, never asserted in tests.
"""
from __future__ import annotations

import argparse
import dataclasses
import time
from typing import Any, Callable, Sequence

import numpy as np
import torch

from hashlib_core.benchmarks.superbloom_decoding import keep_freed_memory, time_alternately
from hashlib_core.profiles import select_device

__all__ = ["train_step", "step_pair", "compare_train_steps", "train_time_spaces", "train_time_specs",
           "main"]

#: the book's training loop's settings that a step's cost depends on (:class:`hashlib_core.training.TrainConfig`)
_WEIGHT_DECAY, _GRAD_CLIP = 0.01, 1.0


def train_step(model: torch.nn.Module, optimizer: torch.optim.Optimizer, batch: dict[str, torch.Tensor]) -> float:
    """One optimiser step as the book's loop takes it: forward with labels, backward, clipping, AdamW, zeroed
    gradients. Returns the loss."""
    loss = model(**batch).loss
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), _GRAD_CLIP)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return float(loss.detach())


def step_pair(model: torch.nn.Module, batches: Sequence[dict[str, torch.Tensor]], steps: int, device: torch.device
              ) -> Callable[[], None]:
    """A callable that takes ``steps`` training steps of ``model`` on ``batches`` (cycled), with its own AdamW."""
    from hashlib_core.training import param_groups

    if steps < 1 or not batches:
        raise ValueError(f"need steps >= 1 and at least one batch, got steps={steps}, {len(batches)} batches")
    model.to(device).train()
    optimizer = torch.optim.AdamW(param_groups(model, _WEIGHT_DECAY), lr=1e-4)
    moved = [{k: v.to(device) for k, v in b.items()} for b in batches]
    state = {"i": 0}

    def run() -> None:
        for _ in range(steps):
            train_step(model, optimizer, moved[state["i"] % len(moved)])
            state["i"] += 1
    return run


def compare_train_steps(specs: Sequence[Any], profile: Any, num_ids: int, segments: Sequence[np.ndarray],
                        repeats: int, steps: int, device: torch.device) -> list[dict[str, Any]]:
    """Time the training steps of two resolved models (``specs``: the unhashed model first, then Superbloom; a
    :class:`~hashlib_core.papers.superbloom.profiles.ModelSpec` each, the width set) over ``num_ids`` ids on the
    same segments (``profile.batch`` per batch, the profile's masking seed). One row per model: its vocabulary,
    parameters, and milliseconds per step (median and best of ``repeats`` timings of ``steps`` steps); the
    Superbloom row also carries the paired speed-up (median, min, max of unhashed / Superbloom)."""
    from hashlib_core.papers.superbloom.data import ItemMaskingCollator
    from hashlib_core.papers.superbloom.modeling import SuperbloomForMaskedLM
    from hashlib_core.papers.superbloom.training import model_config
    from hashlib_core.params import count_parameters

    if len(specs) != 2 or specs[0].alpha != 1 or specs[1].alpha == 1:
        raise ValueError("specs must be the unhashed model (alpha 1) and then a Superbloom model (alpha > 1)")
    if {(s.hidden, s.layers) for s in specs} != {(specs[0].hidden, specs[0].layers)}:
        raise ValueError("the two models must share width and depth: only their vocabularies may differ")
    if len(segments) < profile.batch:
        raise ValueError(f"need at least one batch of {profile.batch} segments, got {len(segments)}")
    keep_freed_memory()
    batches_per_model = steps * (repeats + 1)
    torch.manual_seed(profile.seed)
    models, runs = [], []
    for spec in specs:
        model = SuperbloomForMaskedLM(model_config(spec, profile, num_ids))
        collate = ItemMaskingCollator(model.maps, profile.seed)
        batches = [collate([segments[(i * profile.batch + j) % len(segments)] for j in range(profile.batch)])
                   for i in range(batches_per_model)]
        models.append(model)
        runs.append(step_pair(model, batches, steps, device))
    times_base, _, times_sb, _ = time_alternately(runs[0], runs[1], repeats, device)
    ratios = sorted(b / s for b, s in zip(times_base, times_sb))
    rows = []
    for spec, model, times in zip(specs, models, (times_base, times_sb)):
        per_step = sorted(1e3 * t / steps for t in times)
        rows.append({"num_ids": num_ids, "name": spec.name, "alpha": spec.alpha, "num_hashes": spec.num_hashes,
                     "hidden": spec.hidden, "layers": spec.layers, "vocab_size": model.config.vocab_size,
                     "total_params": count_parameters(model), "emb_params": model.embedding_parameter_count(),
                     "ms_per_step": per_step[len(per_step) // 2], "ms_per_step_best": per_step[0],
                     "steps_per_timing": steps, "repeats": repeats, "batch": profile.batch})
    rows[1].update(speedup_median_paired=ratios[len(ratios) // 2], speedup_min_paired=ratios[0],
                   speedup_max_paired=ratios[-1])
    del models, runs
    return rows


def main(argv: Sequence[str] | None = None) -> list[dict[str, Any]]:
    from types import SimpleNamespace

    from hashlib_core.papers.superbloom.profiles import PROFILES
    from hashlib_core.profiles import PROFILE_NAMES
    from hashlib_core.results import ResultsStore

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="cpu", choices=PROFILE_NAMES, help="the models, batch and data")
    parser.add_argument("--ids", type=int, nargs="+", help="id spaces (default: the data's and the profile's)")
    parser.add_argument("--repeats", type=int, help="paired timings per id space (default: the profile's)")
    parser.add_argument("--steps", type=int, help="training steps per timing (default: the profile's)")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    args = parser.parse_args(argv)
    from hashlib_core.papers.superbloom.training import Resources

    profile = PROFILES.get(args.profile)
    device = select_device(args.device)
    res = Resources(SimpleNamespace(profile=profile))
    spaces = args.ids or train_time_spaces(profile, res.sets.num_ids)
    specs = train_time_specs(profile)
    start, rows = time.perf_counter(), []
    for n in spaces:
        rows += compare_train_steps(specs, profile, n, res.train_segments, args.repeats or profile.train_time_repeats,
                                    args.steps or profile.train_time_steps, device)
        base, sb = rows[-2], rows[-1]
        print(f"{n:>10,} ids: unhashed {base['ms_per_step']:8.1f} ms/step ({base['total_params']:>12,} params)  "
              f"Superbloom {sb['ms_per_step']:7.1f} ms/step ({sb['total_params']:>10,})  "
              f"x{sb['speedup_median_paired']:.1f} [{sb['speedup_min_paired']:.1f}, {sb['speedup_max_paired']:.1f}]")
    path = ResultsStore("benchmarks", "quick").write_json(
        "superbloom_train_step", {"results": rows, "torch_threads": torch.get_num_threads()}, seed=profile.seed,
        device=device, wall_time_s=time.perf_counter() - start, config={**vars(args), "ids": list(spaces)})
    print(f"wrote {path}")
    return rows


def train_time_spaces(profile: Any, data_ids: int) -> list[int]:
    """The id spaces the step is timed in: the data's own, then each of ``train_time_ids`` larger than it."""
    return [data_ids, *sorted(n for n in set(profile.train_time_ids) if n > data_ids)]


def train_time_specs(profile: Any) -> list[Any]:
    """The unhashed model and Superbloom at the claims' deep Superbloom's width and depth (same Transformer)."""
    deep = next(s for s in profile.models() if s.name == profile.roles()["superbloom_deep"])
    return [dataclasses.replace(deep, name=f"unhashed-L{deep.layers}", alpha=1, num_hashes=1, match=""), deep]


if __name__ == "__main__":
    main()
