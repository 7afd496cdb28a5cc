"""Superbloom decoding: certified beam search (Algorithm 1) against exhaustive scoring of every id.

Usage::

    python -m hashlib_core.benchmarks.superbloom_decoding                    # |S| = 1M, α = 50, m = 2 (the paper's)
    python -m hashlib_core.benchmarks.superbloom_decoding --ids 20000 --positions 16   # a fast smoke run
    python -m hashlib_core.benchmarks.superbloom_decoding --device cuda

For each ``k`` and each distribution family it decodes ``--positions`` output positions both ways and reports the
time per position of each (best of ``--repeats`` timings taken in alternation after a warm-up), the speed-up
(of the best times, and the median and range of the paired ratios), the share of certified answers,
the mean candidate scorings per position, and the agreement with the exhaustive top k (the scores of a certified
answer must equal the exhaustive scores exactly: ids that share their tokens in every map tie, so ids are compared
through their scores). The paper's setting (§2.5): |S| = 1M, α = 50, m = 2, "approximate inference is 10 times
faster than exhaustive scoring"; our goal is at least 20 times with every certified answer exact.

Distributions: ``peaked-σ``: each map's log-probabilities are ``log_softmax(σ z)``, ``z`` standard normal (larger σ:
more peaked, as a trained model's outputs). A trained model's distributions at |S| = 1M are timed the same way
(:func:`compare_decoders`) by the Superbloom chapter's ``decoding`` experiment, which trains that model first.
The result goes to ``results/benchmarks/quick/superbloom_decoding.json``.
Both decoders are timed with glibc's allocator keeping freed memory (:func:`keep_freed_memory`): otherwise the page
faults of re-mapping exhaustive scoring's large temporaries can dominate its time on this book's virtual machine.
Speed is measured here, never asserted in tests.
"""
from __future__ import annotations

import argparse
import time
from typing import Any, Callable, Sequence

import torch

from hashlib_core.decoding.beam import beam_topk, exhaustive_topk
from hashlib_core.hashing.bloom import BloomHashMaps
from hashlib_core.profiles import select_device, synchronize
from hashlib_core.results import ResultsStore

__all__ = ["keep_freed_memory", "time_alternately", "compare_decoders", "run_benchmark", "main"]


#: glibc mallopt parameters: M_TRIM_THRESHOLD and M_MMAP_THRESHOLD
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


def keep_freed_memory() -> bool:
    """Ask glibc's allocator to keep freed memory in the process (no trimming, no per-allocation ``mmap``), so that
    neither decoder is timed on the page faults of re-mapping its temporaries. On this book's virtual machine those
    faults dominated exhaustive scoring's time per position in some runs and not in others (beam search, which
    allocates far less, hardly changed). Returns False where the C library is not glibc (nothing changed)."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, 1 << 30) and mallopt(_M_TRIM_THRESHOLD, 1 << 31))


def _timed(fn: Callable[[], Any], device: torch.device) -> tuple[float, Any]:
    synchronize(device)
    start = time.perf_counter()
    out = fn()
    synchronize(device)
    return time.perf_counter() - start, out


def time_alternately(first: Callable[[], Any], second: Callable[[], Any], repeats: int, device: torch.device
                     ) -> tuple[list[float], Any, list[float], Any]:
    """Both functions after a warm-up, then timed in alternation ``repeats`` times, so that both see the same state
    of a shared machine (a virtual CPU's speed drifts between runs): each one's seconds and its last output."""
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    first(), second()
    times_a, times_b = [], []
    for _ in range(repeats):
        t, out_a = _timed(first, device)
        times_a.append(t)
        t, out_b = _timed(second, device)
        times_b.append(t)
    return times_a, out_a, times_b, out_b


def compare_decoders(log_probs: torch.Tensor, maps: BloomHashMaps, k: int, repeats: int, device: torch.device
                     ) -> dict[str, Any]:
    """Exhaustive scoring and certified beam search on the same ``(positions, m, T)`` log-probabilities, timed in
    alternation ``repeats`` times: times per position, speed-ups, certification and agreement with exhaustive
    top k (compared through scores: ids that share their tokens in every map tie). Calls
    :func:`keep_freed_memory` first (recorded as ``allocator_keeps_memory``)."""
    positions = log_probs.shape[0]
    steady = keep_freed_memory()
    times_exh, exact, times_beam, beam = time_alternately(lambda: exhaustive_topk(log_probs, maps, k),
                                                          lambda: beam_topk(log_probs, maps, k), repeats, device)
    t_exh, t_beam = min(times_exh), min(times_beam)
    ratios = sorted(e / b for e, b in zip(times_exh, times_beam))
    certified = beam.certified
    same_scores = (beam.scores == exact.scores).all(dim=1)
    return {"k": k, "positions": positions,
            "exhaustive_ms_per_position": 1e3 * t_exh / positions,
            "beam_ms_per_position": 1e3 * t_beam / positions, "speedup": t_exh / t_beam,
            "speedup_median_paired": ratios[len(ratios) // 2],
            "speedup_range_paired": [ratios[0], ratios[-1]],
            "certified_share": float(certified.float().mean()),
            "certified_exact_share": float(same_scores[certified].float().mean()) if certified.any()
            else float("nan"),
            "agreement_with_exhaustive": float(same_scores.float().mean()),
            "mean_candidates_scored": float(beam.scored.float().mean()),
            "mean_iterations": float(beam.iterations.float().mean()), "allocator_keeps_memory": steady}


def run_benchmark(num_ids: int, alpha: int, num_hashes: int, ks: Sequence[int], sharpness: Sequence[float],
                  positions: int, repeats: int, seed: int, device: torch.device) -> dict[str, Any]:
    maps = BloomHashMaps(num_ids, alpha, num_hashes, seed=seed)
    g = torch.Generator().manual_seed(seed)
    rows = []
    for sigma in sharpness:
        z = torch.randn(positions, num_hashes, maps.tokens_per_map, generator=g)
        lp = torch.log_softmax(sigma * z, dim=-1).to(device)
        for k in ks:
            rows.append({"distribution": f"peaked-{sigma:g}", **compare_decoders(lp, maps, k, repeats, device)})
    return {"num_ids": num_ids, "alpha": alpha, "num_hashes": num_hashes, "tokens_per_map": maps.tokens_per_map,
            "torch_threads": torch.get_num_threads(), "results": rows}


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ids", type=int, default=1_000_000, help="|S|, the number of ids")
    parser.add_argument("--alpha", type=int, default=50, help="ids per hash token")
    parser.add_argument("--hashes", type=int, default=2, help="m, the number of hash maps")
    parser.add_argument("--k", type=int, nargs="+", default=[1, 10, 100], help="top-k sizes")
    parser.add_argument("--sharpness", type=float, nargs="+", default=[2.0, 4.0, 8.0],
                        help="σ of the synthetic log-probabilities")
    parser.add_argument("--positions", type=int, default=64, help="output positions decoded at once")
    parser.add_argument("--repeats", type=int, default=10, help="paired timings (exhaustive, beam) per setting")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    args = parser.parse_args(argv)
    device = select_device(args.device)
    start = time.perf_counter()
    payload = run_benchmark(args.ids, args.alpha, args.hashes, args.k, args.sharpness, args.positions, args.repeats,
                            args.seed, device)
    wall = time.perf_counter() - start
    path = ResultsStore("benchmarks", "quick").write_json("superbloom_decoding", payload, seed=args.seed,
                                                          device=device, wall_time_s=wall, config=vars(args))
    for r in payload["results"]:
        print(f"{r['distribution']:<10} k={r['k']:<4} exhaustive {r['exhaustive_ms_per_position']:8.3f} ms  beam "
              f"{r['beam_ms_per_position']:7.3f} ms  x{r['speedup']:6.1f} (paired median "
              f"x{r['speedup_median_paired']:.1f})  certified {r['certified_share']:.2f}  "
              f"scored {r['mean_candidates_scored']:9.0f}")
    print(f"wrote {path}")
    return payload


if __name__ == "__main__":
    main()
