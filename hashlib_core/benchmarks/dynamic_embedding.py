"""Throughput of the dynamic hash embedding (EELBERT; :mod:`hashlib_core.embeddings.dynamic`) against a table lookup.

Usage::

    python -m hashlib_core.benchmarks.dynamic_embedding                 # d in {128, 768}, 8,192 tokens per batch
    python -m hashlib_core.benchmarks.dynamic_embedding --dims 64 --tokens 1024 --vocab 2000   # a fast smoke run

The vocabulary is the ``--vocab`` most frequent words of the staged WikiText-2 validation split, the batch the first
``--tokens`` of its words that are in that vocabulary (real word lengths). For each width ``d``, best of
``--repeats`` timed runs after one warm-up run, in tokens per second:

* ``nn.Embedding``: a ``V x d`` table lookup (what the dynamic embedding replaces);
* ``dynamic, cached``: :class:`~hashlib_core.embeddings.dynamic.DynamicHashEmbedding` indexing its per-vocabulary
  cache (what a model does at run time);
* ``dynamic, uncached``: the same vectors computed from the batch's strings (``embed``), as for a string outside
  any vocabulary;
* ``dynamic, cache build``: computing the whole vocabulary's cache once (tokens = vocabulary entries).

The result goes to ``results/benchmarks/quick/dynamic_embedding.json`` (:class:`hashlib_core.results.ResultsStore`,
with the arguments in its metadata). Speed is measured here, never asserted in tests.
"""
from __future__ import annotations

import argparse
import time
from collections import Counter
from typing import Any, Sequence

import torch
from torch import nn

from hashlib_core.benchmarks import best_time
from hashlib_core.embeddings.dynamic import DynamicHashEmbedding
from hashlib_core.pretraining import wikitext_lines
from hashlib_core.results import ResultsStore

__all__ = ["corpus_vocabulary", "run_benchmark", "main"]


def corpus_vocabulary(vocab_size: int, tokens: int) -> tuple[list[str], list[int]]:
    """The ``vocab_size`` most frequent corpus words and the ids of the first ``tokens`` corpus words among them."""
    words = [w for line in wikitext_lines("validation") for w in line.split()]
    vocab = [w for w, _ in Counter(words).most_common(vocab_size)]
    index = {w: i for i, w in enumerate(vocab)}
    ids = [index[w] for w in words if w in index][:tokens]
    if len(ids) < tokens:
        raise ValueError(f"the corpus has only {len(ids)} in-vocabulary words; ask for --tokens <= {len(ids)}")
    return vocab, ids


@torch.no_grad()
def run_benchmark(dims: Sequence[int], vocab_size: int, tokens: int, repeats: int, seed: int = 0) -> dict[str, Any]:
    vocab, ids = corpus_vocabulary(vocab_size, tokens)
    batch = torch.tensor(ids, dtype=torch.long)
    strings = [vocab[i] for i in ids]
    torch.manual_seed(seed)
    rows = []
    for d in dims:
        table = nn.Embedding(len(vocab), d)
        start = time.perf_counter()
        dynamic = DynamicHashEmbedding(vocab, d)
        build = time.perf_counter() - start
        assert torch.equal(dynamic(batch[:64]), dynamic.embed(strings[:64])), "cached and uncached paths differ"
        timed = {"nn.Embedding": (best_time(lambda: table(batch), repeats), tokens),
                 "dynamic, cached": (best_time(lambda: dynamic(batch), repeats), tokens),
                 "dynamic, uncached": (best_time(lambda: dynamic.embed(strings), repeats), tokens),
                 "dynamic, cache build": (build, len(vocab))}
        for method, (seconds, count) in timed.items():
            rows.append({"hidden_size": d, "method": method, "tokens": count, "seconds": seconds,
                         "tokens_per_s": count / seconds})
    return {"vocab_size": len(vocab), "tokens": tokens,
            "mean_token_chars": sum(map(len, strings)) / len(strings), "torch_threads": torch.get_num_threads(),
            "results": rows}


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dims", type=int, nargs="+", default=[128, 768], help="embedding widths d")
    parser.add_argument("--vocab", type=int, default=30522, help="vocabulary size V (most frequent corpus words)")
    parser.add_argument("--tokens", type=int, default=8192, help="tokens per batch")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per measurement, best kept")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    payload = run_benchmark(args.dims, args.vocab, args.tokens, args.repeats, args.seed)
    wall = time.perf_counter() - start
    path = ResultsStore("benchmarks", "quick").write_json("dynamic_embedding", payload, seed=args.seed,
                                                          device=torch.device("cpu"), wall_time_s=wall,
                                                          config=vars(args))
    for row in payload["results"]:
        print(f"d={row['hidden_size']:<4} {row['method']:<22} {row['tokens_per_s']:14,.0f} tokens/s")
    print(f"wrote {path}")
    return payload


if __name__ == "__main__":
    main()
