"""What each family of the embedding catalogue costs on CPU: building it (hashing the vocabulary's strings once) and
embedding tokens (ids -> vectors, forward only).

Usage::

    python -m hashlib_core.benchmarks.families                       # BERT's WordPiece, d = 64, a quarter budget
    python -m hashlib_core.benchmarks.families --fraction 0.0625 --families bloom robe dhe

For every family (:data:`hashlib_core.embeddings.catalogue.FAMILIES`) it builds the embedding for the staged
``bert-base-uncased`` vocabulary (30,522 pieces) at ``--fraction`` of the full table's parameters (a ``"fixed"``
family at its own size), times the build once (the precompute: string hashing, signature registries), then times
embedding a batch of ``--batch x --length`` random ids (best of ``--repeats`` after one warm-up) and reports tokens
per second, parameters and the bytes the hash keeps besides them (codes, caches).
One torch thread unless ``--threads``. Results: ``results/benchmarks/quick/families.json``.
"""
from __future__ import annotations

import argparse
import time
from typing import Any, Sequence

import torch

from hashlib_core.benchmarks import best_time
from hashlib_core.results import ResultsStore

__all__ = ["run_benchmark", "main"]


def _vocabulary() -> list[str]:
    from hashlib_core.data import load_wordpiece_vocab

    return load_wordpiece_vocab("bert-base-uncased")


def run_benchmark(families: Sequence[str], fraction: float, dim: int, batch: int, length: int, repeats: int,
                  seed: int) -> dict[str, Any]:
    from hashlib_core.embeddings import catalogue

    strings = _vocabulary()
    full = len(strings) * dim
    ids = torch.randint(0, len(strings), (batch, length), generator=torch.Generator().manual_seed(seed))
    rows = []
    for name in families:
        budget = full if name == "full" else max(1, int(full * fraction))
        start = time.perf_counter()
        emb = catalogue.build(name, strings, budget, dim, seed=seed).eval()
        build_s = time.perf_counter() - start
        with torch.no_grad():
            emb(ids)
            seconds = best_time(lambda: emb(ids), repeats)
        params = emb.embedding_parameter_count()
        rows.append({"family": name, "sizing": catalogue.FAMILIES[name].sizing, "budget": budget,
                     "parameters": params, "share_of_full": params / full, "build_s": build_s,
                     "forward_s": seconds, "tokens_per_s": batch * length / seconds,
                     "lookup_bytes": emb.lookup_bytes()})
    return {"vocabulary": "bert-base-uncased", "vocab_size": len(strings), "dim": dim, "fraction": fraction,
            "batch": batch, "length": length, "torch_threads": torch.get_num_threads(), "results": rows}


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    from hashlib_core.embeddings.catalogue import FAMILIES

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--families", nargs="*", default=list(FAMILIES), choices=list(FAMILIES))
    parser.add_argument("--fraction", type=float, default=0.25, help="share of the full table's parameters")
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--length", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=5, help="timed forward passes per family, best kept")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if not 0 < args.fraction <= 1 or min(args.dim, args.batch, args.length, args.repeats, args.threads) < 1:
        parser.error("--fraction must be in (0, 1]; --dim, --batch, --length, --repeats, --threads >= 1")
    torch.set_num_threads(args.threads)
    start = time.perf_counter()
    payload = run_benchmark(args.families, args.fraction, args.dim, args.batch, args.length, args.repeats, args.seed)
    path = ResultsStore("benchmarks", "quick").write_json("families", payload, seed=args.seed,
                                                          device=torch.device("cpu"),
                                                          wall_time_s=time.perf_counter() - start, config=vars(args))
    for row in payload["results"]:
        print(f"{row['family']:<20} {row['parameters']:>10,} params  build {row['build_s']:7.2f} s  "
              f"{row['tokens_per_s']:>12,.0f} tokens/s  lookup {row['lookup_bytes']:>12,} B")
    print(f"wrote {path}")
    return payload


if __name__ == "__main__":
    main()
