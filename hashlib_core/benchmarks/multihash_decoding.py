"""Cost of MultiHashFormer's valid-vocabulary scoring against a tied LM head of the same vocabulary and width.

Usage::

    python -m hashlib_core.benchmarks.multihash_decoding                 # d in {256, 512}, V 32,768, 2,048 tokens
    python -m hashlib_core.benchmarks.multihash_decoding --device cuda --repeats 10
    python -m hashlib_core.benchmarks.multihash_decoding --tokens 256 --dims 64   # a fast smoke run

For each width ``d`` it scores ``--tokens`` hidden states (random, seeded) against a vocabulary of ``--vocab`` ids
and times, best of ``--repeats`` runs after one warm-up run:

* ``lm_head``: a Standard tied LM head: ``logits = h E^T`` (``tokens x V``), ``logsumexp`` and the target
  log-probability;
* ``mhf_streamed[HxBy]``: the MultiHashFormer path of :mod:`hashlib_core.decoding.multihash`: the cascaded hash
  decoder (``H`` tied ``B``-way classifiers and ``H - 1`` mixers), per-hash ``log_softmax``, then
  :func:`~hashlib_core.decoding.multihash.score_vocab` with targets (``P_inf`` over the valid vocabulary, streamed
  in chunks: no ``tokens x V`` tensor; by default on CPU in tiles of 16 positions against cache-sized chunks, see
  :func:`~hashlib_core.decoding.multihash.scoring_layout`; ``--chunk-size`` fixes the chunk for all positions);
* ``mhf_scoring_only[HxBy]``: only the part that replaces the LM head's ``h E^T``: given the per-hash
  log-probabilities, :func:`~hashlib_core.decoding.multihash.score_vocab`'s streamed gather-sum, ``logsumexp`` over
  the valid vocabulary and the target log-probability (``vs_lm_head`` is its time over the LM head's). The decoder
  itself costs about ``2 H B d`` multiply-adds per token (logits and soft embeddings) against ``V d`` for the head,
  so the full path cannot beat the head when ``H B`` approaches ``V``;
* ``mhf_materialised[HxBy]``: the same decoder followed by the released code's full ``tokens x V`` gather-sum and
  ``log_softmax`` (the reference the streamed path must agree with; ``max_abs_diff_vs_streamed`` records it).

MHF variants: H3B10K (B = 10,240) and H4B16K (B = 16,384), the two of Table 1, with a collision-free random
signature table. ``largest_tensor_bytes`` is the size of the biggest intermediate each path creates, computed from
its shape; on CUDA ``peak_cuda_bytes`` is measured with ``torch.cuda.max_memory_allocated``. The defaults are the
book's quick profile; the result goes to ``results/benchmarks/quick/multihash_decoding.json`` through
:class:`hashlib_core.results.ResultsStore`, with the arguments in its metadata. Speed is measured here and never
asserted in tests.
"""
from __future__ import annotations

import argparse
import time
from typing import Any, Callable, Sequence

import torch

from hashlib_core.decoding.multihash import (
    DEFAULT_CHUNK_SIZE,
    hash_log_probs,
    iter_vocab_scores,
    score_vocab,
    scoring_layout,
)
from hashlib_core.papers.multihashformer.decoding import CascadedHashDecoder
from hashlib_core.profiles import select_device, synchronize
from hashlib_core.results import ResultsStore

__all__ = ["MHF_VARIANTS", "random_signature_table", "run_benchmark", "main"]

#: (label, H, B) of the MHF variants timed (Table 1; "10K" = 10,240 buckets, section 4.1).
MHF_VARIANTS: tuple[tuple[str, int, int], ...] = (("H3B10K", 3, 10240), ("H4B16K", 4, 16384))
FLOAT_BYTES = 4


def random_signature_table(vocab_size: int, num_hashes: int, num_buckets: int, generator: torch.Generator
                           ) -> torch.Tensor:
    """``vocab_size`` distinct signatures with coordinates in ``[1, num_buckets)``, drawn with ``generator``.

    Draws distinct codes in ``[0, (B-1)^H)`` (redrawing repeats), shuffles them and writes each in base ``B - 1``.
    """
    base = num_buckets - 1
    if base**num_hashes < vocab_size or base**num_hashes >= 2**63:
        raise ValueError(f"(B-1)^H = {base**num_hashes} must lie in [vocab_size, 2^63) to draw distinct codes")
    codes = torch.empty(0, dtype=torch.long)
    while codes.numel() < vocab_size:
        extra = torch.randint(0, base**num_hashes, (vocab_size - codes.numel(),), generator=generator)
        codes = torch.unique(torch.cat([codes, extra]))
    codes = codes[torch.randperm(vocab_size, generator=generator)]
    return torch.stack([(codes // base**k) % base + 1 for k in range(num_hashes)], dim=1)


def _time(fn: Callable[[], torch.Tensor], repeats: int, device: torch.device) -> tuple[float, torch.Tensor, int | None]:
    out = fn()  # warm-up
    synchronize(device)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        synchronize(device)
        best = min(best, time.perf_counter() - start)
    peak = int(torch.cuda.max_memory_allocated(device)) if device.type == "cuda" else None
    return best, out, peak


@torch.no_grad()
def run_benchmark(
    *, dims: Sequence[int] = (256, 512), vocab_size: int = 32768, tokens: int = 2048, repeats: int = 3,
    chunk_size: int | None = DEFAULT_CHUNK_SIZE, seed: int = 0, device: torch.device | None = None,
) -> dict[str, Any]:
    """Run every measurement and return the JSON-able payload (see the module docstring)."""
    if repeats < 1 or tokens < 1 or vocab_size < 1 or not dims:
        raise ValueError("repeats, tokens and vocab_size must be >= 1 and dims non-empty")
    device = device or torch.device("cpu")
    # what score_vocab does with the requested chunk size: None tiles the rows (CPU) and sizes the chunk to the tile
    requested_chunk = chunk_size
    row_tile, chunk_size = scoring_layout(tokens, vocab_size, requested_chunk, device)
    scored_at_once = row_tile * min(chunk_size, vocab_size) * FLOAT_BYTES
    gen = torch.Generator().manual_seed(seed)
    targets = torch.randint(0, vocab_size, (tokens,), generator=gen).to(device)
    signature_tables = {label: random_signature_table(vocab_size, h, b, gen).to(device)
                        for label, h, b in MHF_VARIANTS}
    results: list[dict[str, Any]] = []

    def record(method: str, d: int, seconds: float, largest: int, peak: int | None, **extra: Any) -> None:
        results.append({"method": method, "hidden_size": d, "seconds": round(seconds, 6),
                        "tokens_per_s": round(tokens / seconds, 1), "largest_tensor_bytes": largest,
                        "peak_cuda_bytes": peak, **extra})

    for d in dims:
        hidden = torch.randn(tokens, d, generator=gen).to(device)
        lm_table = (0.02 * torch.randn(vocab_size, d, generator=gen)).to(device)

        def lm_head() -> torch.Tensor:
            logits = hidden @ lm_table.T
            return logits.gather(1, targets[:, None])[:, 0] - torch.logsumexp(logits, dim=-1)

        seconds, _, peak = _time(lm_head, repeats, device)
        record("lm_head", d, seconds, tokens * vocab_size * FLOAT_BYTES, peak, vocab_size=vocab_size)

        for label, num_hashes, num_buckets in MHF_VARIANTS:
            torch.manual_seed(seed)
            decoder = CascadedHashDecoder(num_hashes, num_buckets, d).to(device)
            table = (0.02 * torch.randn(num_hashes * num_buckets, d, generator=gen)).to(device)
            hash_map = signature_tables[label]

            def streamed() -> torch.Tensor:
                log_probs = hash_log_probs(decoder(hidden, table))
                return score_vocab(log_probs, hash_map, targets=targets,
                                   chunk_size=requested_chunk).target_log_probs

            def materialised() -> torch.Tensor:
                log_probs = hash_log_probs(decoder(hidden, table))
                full = torch.cat([s for _, s in iter_vocab_scores(log_probs, hash_map, vocab_size)], dim=1)
                return torch.log_softmax(full, dim=-1).gather(1, targets[:, None])[:, 0]

            precomputed = hash_log_probs(decoder(hidden, table))

            def scoring_only() -> torch.Tensor:
                return score_vocab(precomputed, hash_map, targets=targets,
                                   chunk_size=requested_chunk).target_log_probs

            hash_bytes = tokens * num_hashes * num_buckets * FLOAT_BYTES
            seconds_o, out_o, peak_o = _time(scoring_only, repeats, device)
            seconds_s, out_s, peak_s = _time(streamed, repeats, device)
            seconds_m, out_m, peak_m = _time(materialised, repeats, device)
            diff = float((out_s - out_m).abs().max())
            common = dict(vocab_size=vocab_size, num_hashes=num_hashes, num_buckets=num_buckets)
            record(f"mhf_streamed[{label}]", d, seconds_s, max(hash_bytes, scored_at_once), peak_s,
                   row_tile=row_tile, chunk_size=chunk_size, max_abs_diff_vs_materialised=diff, **common)
            record(f"mhf_materialised[{label}]", d, seconds_m,
                   max(hash_bytes, tokens * vocab_size * FLOAT_BYTES), peak_m, **common)
            record(f"mhf_scoring_only[{label}]", d, seconds_o, scored_at_once,
                   peak_o, row_tile=row_tile, chunk_size=chunk_size, max_abs_diff_vs_streamed=float((out_o - out_s).abs().max()),
                   vs_lm_head=round(seconds_o / seconds, 3), **common)

    return {
        "tokens": tokens,
        "vocab_size": vocab_size,
        "dims": list(dims),
        "repeats": repeats,
        "row_tile": row_tile,
        "chunk_size": chunk_size,
        "chunk_size_requested": requested_chunk,
        "torch_threads": torch.get_num_threads(),
        "results": results,
    }


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dims", type=int, nargs="+", default=[256, 512], help="hidden sizes d")
    parser.add_argument("--vocab", type=int, default=32768, help="vocabulary size V")
    parser.add_argument("--tokens", type=int, default=2048, help="hidden states scored at once (batch x seq)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per measurement, best kept")
    parser.add_argument("--chunk-size", type=int, default=DEFAULT_CHUNK_SIZE,
                        help="vocabulary ids per chunk (default: scoring_layout for the tokens and device)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N")
    args = parser.parse_args(argv)
    device = select_device(args.device)
    start = time.perf_counter()
    payload = run_benchmark(dims=args.dims, vocab_size=args.vocab, tokens=args.tokens, repeats=args.repeats,
                            chunk_size=args.chunk_size, seed=args.seed, device=device)
    wall = time.perf_counter() - start
    path = ResultsStore("benchmarks", "quick").write_json("multihash_decoding", payload, seed=args.seed,
                                                          device=device, wall_time_s=wall, config=vars(args))
    for row in payload["results"]:
        print(f"d={row['hidden_size']:<4} {row['method']:<26} {row['seconds'] * 1e3:9.1f} ms  "
              f"{row['largest_tensor_bytes'] / 2**20:8.1f} MiB")
    print(f"wrote {path}")
    return payload


if __name__ == "__main__":
    main()
