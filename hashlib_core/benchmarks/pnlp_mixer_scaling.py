"""How the cost of a pNLP-Mixer and of Table 2's same-size Transformer grows with the sequence length, at batch 1
on one CPU thread.

Usage::

    python -m hashlib_core.benchmarks.pnlp_mixer_scaling                       # lengths 32 ... 4096
    python -m hashlib_core.benchmarks.pnlp_mixer_scaling --lengths 64 256 --samples 10

The paper motivates the MLP-Mixer by its "linear scalability in the sequence length" (§1); the chapter's latency
benchmark (:mod:`hashlib_core.benchmarks.pnlp_mixer_latency`) compares the two encoders at one length, the chapter's
64 positions. This one repeats the comparison at every length of ``--lengths``: for each length ``s`` it builds the
paper's Mixer (§4's sizes; its token-mixing weights are ``s`` wide, so its parameters grow with ``s``) and Table 2's
Transformer (2 layers, 4 heads, sinusoidal positions: the same parameters at every length) for sequence
classification, randomly initialised (time does not depend on the weights), and a sentence of ``s`` real tokens
(random Bloom counts; no attention mask, as there is no padding to mask). It counts each model's matrix-product FLOPs
(:func:`~hashlib_core.benchmarks.pnlp_mixer_latency.matmul_flops`: attention included) and times the eager Mixer,
its lean inference path (:class:`~hashlib_core.papers.pnlp_mixer.inference.MixerForInference`) and the eager
Transformer (with and without PyTorch's fused inference path) in turn, ``--samples`` calls each
(:func:`~hashlib_core.benchmarks.pnlp_mixer_latency.time_interleaved`, so the models of one length are timed at the
same machine speed). The result goes to
``results/benchmarks/quick/pnlp_mixer_scaling.json``; :func:`hashlib_core.papers.pnlp_mixer.tables.scaling_view`
and :func:`hashlib_core.papers.pnlp_mixer.figures.cost_vs_length` read it.
"""
from __future__ import annotations

import argparse
import os
import time
from typing import Any, Sequence

import torch

from hashlib_core.benchmarks.pnlp_mixer_latency import (
    lean_matches_eager,
    matmul_flops,
    summarize,
    time_interleaved,
    unfused_forward,
)
from hashlib_core.results.store import cpu_capability, cpu_name

__all__ = ["LENGTHS", "MODELS", "run_scaling", "main"]

LENGTHS = (32, 64, 128, 256, 512, 1024, 2048, 4096)
#: the timed forwards at every length: the eager Mixer, its lean path, and the eager Transformer with
#: ``nn.TransformerEncoderLayer``'s fused inference path (PyTorch's default) and without it (at long lengths the
#: unfused layers were the faster on our CPU; the page takes the faster of the two)
MODELS = ("mixer", "mixer_lean", "transformer", "transformer_unfused")




def _check_lengths(lengths: Sequence[int]) -> list[int]:
    out = list(lengths)
    if not out or any(isinstance(s, bool) or not isinstance(s, int) or s < 1 for s in out):
        raise ValueError(f"lengths must be positive integers (positions per sentence), got {lengths!r}")
    if len(set(out)) != len(out):
        raise ValueError(f"lengths must not repeat, got {out}")
    return sorted(out)


def run_scaling(lengths: Sequence[int] = LENGTHS, *, samples: int = 30, warmup: int = 3, seed: int = 0,
                num_labels: int = 18, **config_fields: Any) -> dict[str, Any]:
    """One row per (length, model) with ``parameters``, matrix-product ``flops`` per sentence, the timing summary
    (milliseconds) and the achieved ``gflops_per_s``; ``config_fields`` change §4's sizes (for quick runs). Runs on
    one thread with ``torch.manual_seed(seed)``; the caller's thread count and random state are restored."""
    lengths = _check_lengths(lengths)
    if samples < 1 or warmup < 0:
        raise ValueError(f"samples must be >= 1 and warmup >= 0, got {samples} and {warmup}")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.random.fork_rng():      # the caller's random state and thread count are left as they were
            torch.manual_seed(seed)
            return _run(lengths, samples, warmup, seed, num_labels, config_fields)
    finally:
        torch.set_num_threads(threads)


def _run(lengths: list[int], samples: int, warmup: int, seed: int, num_labels: int,
         config_fields: dict[str, Any]) -> dict[str, Any]:
    from hashlib_core.papers.pnlp_mixer.configuration import PNLPMixerConfig
    from hashlib_core.papers.pnlp_mixer.heads import PNLPMixerForSequenceClassification
    from hashlib_core.papers.pnlp_mixer.inference import MixerForInference

    load_before = os.getloadavg() if hasattr(os, "getloadavg") else None
    rows: list[dict[str, Any]] = []
    start = time.perf_counter()
    for s in lengths:
        configs = {name: PNLPMixerConfig(num_labels=num_labels, encoder=name, max_seq_len=s, **config_fields)
                   for name in ("mixer", "transformer")}
        eager = {name: PNLPMixerForSequenceClassification(c).eval() for name, c in configs.items()}
        generator = torch.Generator().manual_seed(seed + s)
        # every position is a real token, so no attention mask: an all-ones mask would not change any output, but
        # it sends nn.TransformerEncoderLayer's inference fast path to a masked attention kernel that is several
        # times slower at long lengths
        inputs = {"input_features": torch.randint(0, 4, (1, s, configs["mixer"].projection_features),
                                                  generator=generator).float()}
        lean = MixerForInference(eager["mixer"])
        forwards = {"mixer": lambda x, m=eager["mixer"]: m(**x).logits,
                    "mixer_lean": lambda x, lean=lean: lean(**x),
                    "transformer": lambda x, m=eager["transformer"]: m(**x).logits,
                    "transformer_unfused": lambda x, m=eager["transformer"]: unfused_forward(m, x)}
        lean_equal = lean_matches_eager(lean, eager["mixer"], [inputs])
        with torch.inference_mode():
            timings = time_interleaved({name: (fn, [inputs] * samples) for name, fn in forwards.items()}, warmup)
        # each model's count and size once per length (a forward each), shared by its timed paths
        counts = {name: (matmul_flops(m, **inputs), sum(p.numel() for p in m.parameters()))
                  for name, m in eager.items()}
        for name in MODELS:
            flops, parameters = counts[name.split("_")[0]]
            stats = summarize(timings[name])
            rows.append({"seq_len": s, "model": name, "parameters": parameters, "flops": flops, **stats,
                         "gflops_per_s": round(flops / (stats["median_ms"] / 1e3) / 1e9, 3),
                         **({"lean_equals_eager": lean_equal} if name == "mixer_lean" else {})})
    return {"cpu": cpu_name(), "cpu_capability": cpu_capability(), "torch": torch.__version__,
            "threads": torch.get_num_threads(), "batch_size": 1, "lengths": lengths, "models": list(MODELS),
            "samples": samples, "warmup": warmup, "num_labels": num_labels, "config_fields": config_fields,
            "rows": rows,
            "run_s": round(time.perf_counter() - start, 2),
            "load_average_before_after": [load_before, os.getloadavg() if hasattr(os, "getloadavg") else None]}


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=list(LENGTHS), help="positions per sentence")
    parser.add_argument("--samples", type=int, default=30, help="timed calls per model and length")
    parser.add_argument("--warmup", type=int, default=3, help="untimed calls first")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        _check_lengths(args.lengths)
    except ValueError as exc:
        parser.error(str(exc))
    if args.samples < 1 or args.warmup < 0:
        parser.error("--samples must be >= 1 and --warmup >= 0")

    from hashlib_core.results import ResultsStore

    start = time.perf_counter()
    payload = run_scaling(args.lengths, samples=args.samples, warmup=args.warmup, seed=args.seed)
    path = ResultsStore("benchmarks", "quick").write_json(
        "pnlp_mixer_scaling", payload, seed=args.seed, device=f"cpu ({payload['cpu']}, 1 thread)",
        wall_time_s=time.perf_counter() - start,
        config={"lengths": args.lengths, "samples": args.samples, "warmup": args.warmup})
    for row in payload["rows"]:
        print(f"s={row['seq_len']:5d} {row['model']:12s} {row['flops'] / 1e6:9.1f} MFLOP "
              f"median {row['median_ms']:9.3f} ms  {row['gflops_per_s']:6.1f} GFLOP/s")
    print(f"wrote {path}")
    return payload


if __name__ == "__main__":
    main()
