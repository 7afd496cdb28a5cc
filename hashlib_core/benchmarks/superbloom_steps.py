"""Seconds per training step and per validation pass of every Superbloom model a profile trains, on its main data.

What a profile is sized from: the chapter trains each model at every learning rate of the sweep (one seed) and the
models the claims read with more seeds, each until validation loss stops improving (at most ``steps``). This
script times a few optimiser steps of each resolved model on real batches (item masking over the training segments)
and one validation pass, and prints the cost of the whole plan if every run went to the cap.

    python -m hashlib_core.benchmarks.superbloom_steps --profile cpu [--steps 5]
"""
from __future__ import annotations

import argparse
import time

import torch

from hashlib_core.papers.superbloom.data import ItemMaskingCollator, held_out_segments
from hashlib_core.papers.superbloom.modeling import SuperbloomForMaskedLM
from hashlib_core.papers.superbloom.profiles import PROFILES
from hashlib_core.profiles import PROFILE_NAMES
from hashlib_core.results import ResultsStore

__all__ = ["main"]


def _time_steps(model: SuperbloomForMaskedLM, batches: list, steps: int) -> float:
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model.train()
    for batch in batches[:1]:                                        # warm-up
        model(**batch).loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    start = time.perf_counter()
    for batch in batches[1:steps + 1]:
        model(**batch).loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    return (time.perf_counter() - start) / steps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="cpu", choices=PROFILE_NAMES)
    parser.add_argument("--steps", type=int, default=5, help="timed optimiser steps per model")
    args = parser.parse_args(argv)
    from types import SimpleNamespace

    from hashlib_core.papers.superbloom.training import Resources, masked_item_loss, model_config, size_of

    profile = PROFILES.get(args.profile)
    res = Resources(SimpleNamespace(profile=profile))
    segments = res.train_segments
    validation = held_out_segments(res.sets, res.pages[1][: profile.validation_pages or None], profile.segment,
                                   profile.seed + 2)
    seeded, rows = set(profile.seeded()), []
    for spec in res.specs.values():
        model = SuperbloomForMaskedLM(model_config(spec, profile, res.sets.num_ids))
        collate = ItemMaskingCollator(model.maps, profile.seed)
        batches = [collate([segments[(i * profile.batch + j) % len(segments)] for j in range(profile.batch)])
                   for i in range(args.steps + 1)]
        per_step = _time_steps(model, batches, args.steps)
        start = time.perf_counter()
        masked_item_loss(model, validation)
        per_eval = time.perf_counter() - start
        runs = len(profile.learning_rates) + (profile.seeds - 1 if spec.name in seeded else 0)
        at_cap = runs * (profile.steps * per_step + profile.steps / profile.eval_every * per_eval)
        rows.append({"name": spec.name, "hidden": spec.hidden, "layers": spec.layers,
                     "total_params": size_of(spec, profile, res.sets.num_ids), "s_per_step": per_step,
                     "s_per_validation": per_eval, "runs": runs, "minutes_at_cap": at_cap / 60})
        print(f"{spec.name:28s} d={spec.hidden:4d} L={spec.layers:2d} {rows[-1]['total_params']:>10,} params "
              f"{per_step:6.3f} s/step {per_eval:6.2f} s/validation  {runs} runs, {at_cap / 60:6.1f} min at the cap")
    print(f"all runs at the cap: {sum(r['minutes_at_cap'] for r in rows):.0f} minutes "
          f"({torch.get_num_threads()} threads)")
    ResultsStore("benchmarks", "quick").write_json(f"superbloom_steps_{args.profile}", {"results": rows},
                                                    seed=profile.seed,
                                                    config={"profile": args.profile, "steps": args.steps})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
