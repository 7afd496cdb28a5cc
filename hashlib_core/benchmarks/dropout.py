"""What dropout costs a pNLP-Mixer training step on CPU: ``torch.nn.Dropout`` against :class:`hashlib_core.dropout.Dropout`.

Usage::

    python -m hashlib_core.benchmarks.dropout                  # the chapter's model, batch 128, 5 timed steps
    python -m hashlib_core.benchmarks.dropout --steps 2 --batch 32

It builds the chapter's joint model (:class:`~hashlib_core.papers.pnlp_mixer.joint.PNLPMixerForIntentAndSlots`,
the ``cpu`` profile's shape: 5 Mixer blocks, 256 wide, 64 positions, dropout 0.1) on random Bloom-count features,
and times full training steps (forward, backward, AdamW) three ways: with the chapter's :class:`Dropout`, with every
one swapped back to ``torch.nn.Dropout``, and with dropout off (``p = 0``, the floor). It also times drawing one
mask of the token-mixing MLP's hidden shape ``(batch, 256, 256)`` both ways. Best of ``--steps`` timed steps after
two warm-up steps; the result goes to ``results/benchmarks/quick/dropout.json`` with the torch thread count.
"""
from __future__ import annotations

import argparse
import time
from typing import Any, Sequence

import torch
from torch import nn

from hashlib_core.benchmarks import best_time
from hashlib_core.dropout import Dropout, keep_mask
from hashlib_core.results import ResultsStore

__all__ = ["run_benchmark", "main"]


def _model(variant: str, seed: int) -> nn.Module:
    from hashlib_core.papers.pnlp_mixer.joint import PNLPMixerForIntentAndSlots
    from hashlib_core.papers.pnlp_mixer.profiles import PROFILES

    torch.manual_seed(seed)
    model = PNLPMixerForIntentAndSlots(PROFILES.get("cpu").model_config(num_labels=26, num_slot_labels=120))
    for module in list(model.modules()):
        for name, child in list(module.named_children()):
            if isinstance(child, Dropout):
                setattr(module, name, {"torch": nn.Dropout(child.p), "ours": child, "off": nn.Dropout(0.0)}[variant])
    return model.train()


def run_benchmark(batch: int, steps: int, seed: int) -> dict[str, Any]:
    generator = torch.Generator().manual_seed(seed)
    features = torch.randint(0, 4, (batch, 64, 512), generator=generator).float()
    mask = torch.zeros(batch, 64, dtype=torch.long)
    mask[:, :12] = 1
    labels = torch.randint(0, 26, (batch,), generator=generator)
    slots = torch.randint(0, 120, (batch, 64), generator=generator).masked_fill(mask == 0, -100)
    rows = []
    for variant in ("torch", "ours", "off"):
        model = _model(variant, seed)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

        def step() -> None:
            out = model(input_features=features, attention_mask=mask, labels=labels, slot_labels=slots)
            out.loss.backward()
            optimizer.step()
            optimizer.zero_grad()

        step()
        rows.append({"what": "training step", "dropout": variant, "seconds": best_time(step, steps)})
    hidden = torch.randn(batch, 256, 256)
    rows.append({"what": "one mask (batch, 256, 256)", "dropout": "torch",
                 "seconds": best_time(lambda: torch.empty_like(hidden).bernoulli_(0.9), steps)})
    rows.append({"what": "one mask (batch, 256, 256)", "dropout": "ours",
                 "seconds": best_time(lambda: keep_mask(hidden.shape, 0.1), steps)})
    step_of = {r["dropout"]: r["seconds"] for r in rows if r["what"] == "training step"}
    return {"batch": batch, "torch_threads": torch.get_num_threads(), "results": rows,
            "step_speedup": step_of["torch"] / step_of["ours"],
            "dropout_share_torch": 1 - step_of["off"] / step_of["torch"],
            "dropout_share_ours": 1 - step_of["off"] / step_of["ours"]}


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=128, help="sentences per training step")
    parser.add_argument("--steps", type=int, default=5, help="timed steps per variant, best kept")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.batch < 1 or args.steps < 1:
        parser.error("--batch and --steps must be >= 1")
    start = time.perf_counter()
    payload = run_benchmark(args.batch, args.steps, args.seed)
    path = ResultsStore("benchmarks", "quick").write_json("dropout", payload, seed=args.seed,
                                                          device=torch.device("cpu"),
                                                          wall_time_s=time.perf_counter() - start, config=vars(args))
    for row in payload["results"]:
        print(f"{row['what']:<28} {row['dropout']:<6} {row['seconds'] * 1000:9.1f} ms")
    print(f"training step x{payload['step_speedup']:.2f}; wrote {path}")
    return payload


if __name__ == "__main__":
    main()
