"""Throughput of the token hashers and of the signature registry, on CPU.

Usage::

    python -m hashlib_core.benchmarks.hashing                   # full: 1,000,000 words, workers 1 and 2
    python -m hashlib_core.benchmarks.hashing --quick           # 50,000 words, one repeat
    python -m hashlib_core.benchmarks.hashing --n-tokens 200000 --workers 1 2 4 --repeats 5

It builds a deterministic list of distinct synthetic words (:func:`build_word_list`: a seeded numpy Generator over
Latin, accented Latin, Greek, Cyrillic, Arabic, Devanagari, Hiragana, CJK, Hangul and emoji alphabets; no data
files needed) and measures, in tokens per second (best of ``--repeats`` runs):

* ``md5_plain``: plain MD5 digests (HashFormers §3.2 with ``key=None``);
* ``md5_keyed_index``: HMAC-MD5 (key ``b"en"``) embedding indices ``% 50260 + 5`` as a ``torch.long`` tensor;
* ``md5_keyed_bits``: HMAC-MD5 128-bit codes as a ``(n, 128)`` ``uint8`` tensor;
* ``mmh3_signatures``: MultiHashFormer base signatures, H=4, B=16384 (§3.1);
* ``registry_register_workers_<k>``: :meth:`SignatureRegistry.register` of the whole list into an empty registry
  (H=4, B=16384), for each ``--workers`` value; the tables must be bit-identical across worker counts;
* ``training_gather``: the training-time path, signatures of a ``(64, 512)`` batch of random ids gathered from the
  registry table with ``F.embedding(ids, table)``; ``training_gather_advanced_indexing`` times ``table[ids]``, which
  gives the same tensor but is several times slower on CPU.

The result goes to ``results/benchmarks/<full|quick>/hashing.json`` through
:class:`hashlib_core.results.ResultsStore` (move the root with ``HASHLIB_RESULTS_DIR``). The registration target
is 1,000,000 tokens in under 5 s on one core (``registry.meets_5s_target``, only judged for >= 1M tokens).
"""
from __future__ import annotations

import argparse
import hashlib
import os
import time
from typing import Any, Callable, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from hashlib_core.hashing import KeyedMD5Hasher, MMH3MultiHasher, SignatureRegistry

__all__ = ["SCRIPTS", "build_word_list", "run_benchmark", "main"]


def _chars(*ranges: tuple[int, int]) -> str:
    return "".join(chr(c) for lo, hi in ranges for c in range(lo, hi + 1))


#: (name, alphabet, probability) of each script a synthetic word is drawn from.
SCRIPTS: tuple[tuple[str, str, float], ...] = (
    ("latin", _chars((0x61, 0x7A)), 0.45),
    ("latin_mixed_case", _chars((0x41, 0x5A), (0x61, 0x7A), (0x30, 0x39)), 0.10),
    ("latin_accented", _chars((0x61, 0x7A), (0xE0, 0xF6), (0xF8, 0xFF)), 0.10),
    ("greek", _chars((0x3B1, 0x3C9)), 0.04),
    ("cyrillic", _chars((0x430, 0x44F)), 0.08),
    ("arabic", _chars((0x627, 0x64A)), 0.04),
    ("devanagari", _chars((0x915, 0x939), (0x93E, 0x94C)), 0.04),
    ("hiragana", _chars((0x3041, 0x3093)), 0.04),
    ("cjk", _chars((0x4E00, 0x4FFF)), 0.05),
    ("hangul", _chars((0xAC00, 0xAFFF)), 0.03),
    ("emoji", _chars((0x1F600, 0x1F64F), (0x1F300, 0x1F37F)), 0.03),
)


def build_word_list(n_tokens: int, seed: int = 0) -> list[str]:
    """``n_tokens`` distinct synthetic words, the same for the same ``(n_tokens, seed)``.

    Each word picks a script from :data:`SCRIPTS` and a length ``1 + Poisson(5)`` (capped at 24 characters), then
    draws its characters uniformly from the script's alphabet; duplicates are dropped (first occurrence kept) and
    more words are drawn until ``n_tokens`` distinct ones exist.
    """
    if isinstance(n_tokens, bool) or not isinstance(n_tokens, int) or n_tokens < 1:
        raise ValueError(f"n_tokens must be a positive int, got {n_tokens!r}")
    rng = np.random.default_rng(seed)
    probs = np.array([p for _, _, p in SCRIPTS])
    probs = probs / probs.sum()
    words: dict[str, None] = {}
    while len(words) < n_tokens:
        m = max(1024, int((n_tokens - len(words)) * 1.1))
        scripts = rng.choice(len(SCRIPTS), size=m, p=probs)
        lengths = np.minimum(1 + rng.poisson(5.0, size=m), 24)
        batch: list[str] = [""] * m
        for k, (_, alphabet, _) in enumerate(SCRIPTS):
            rows = np.flatnonzero(scripts == k)
            if rows.size == 0:
                continue
            row_lengths = lengths[rows]
            picks = rng.integers(0, len(alphabet), size=int(row_lengths.sum())).tolist()
            text = "".join([alphabet[i] for i in picks])
            ends = np.cumsum(row_lengths).tolist()
            starts = [0, *ends[:-1]]
            for row, a, b in zip(rows.tolist(), starts, ends):
                batch[row] = text[a:b]
        for word in batch:
            words.setdefault(word)
            if len(words) == n_tokens:
                break
    return list(words)


def _word_list_digest(words: Sequence[str]) -> str:
    h = hashlib.sha256()
    for w in words:
        h.update(w.encode("utf-8") + b"\x00")
    return h.hexdigest()


def _best_time(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def run_benchmark(
    n_tokens: int, *, workers: Sequence[int] = (1, 2), repeats: int = 3, seed: int = 0,
    num_hashes: int = 4, num_buckets: int = 16384, gather_batch: tuple[int, int] = (64, 512), gather_repeats: int = 50,
) -> dict[str, Any]:
    """Run every measurement and return the JSON-able payload (see the module docstring)."""
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    if not workers or any(w < 1 for w in workers):
        raise ValueError(f"workers must be a non-empty list of ints >= 1, got {list(workers)}")
    start = time.perf_counter()
    words = build_word_list(n_tokens, seed)
    build_s = time.perf_counter() - start
    measurements: dict[str, dict[str, Any]] = {}

    def record(name: str, seconds: float, items: int, **extra: Any) -> None:
        measurements[name] = {"seconds": round(seconds, 6), "items": items,
                              "tokens_per_s": round(items / seconds, 1) if seconds > 0 else None, **extra}

    plain = KeyedMD5Hasher(key=None)
    keyed = KeyedMD5Hasher()
    signer = MMH3MultiHasher(num_hashes, num_buckets)
    record("md5_plain", _best_time(lambda: plain.batch_digests(words), repeats)[0], n_tokens)
    record("md5_keyed_index", _best_time(lambda: keyed.batch_index(words), repeats)[0], n_tokens)
    record("md5_keyed_bits", _best_time(lambda: keyed.batch_bits(words), repeats)[0], n_tokens)
    record("mmh3_signatures", _best_time(lambda: signer.batch(words), repeats)[0], n_tokens,
           num_hashes=num_hashes, num_buckets=num_buckets)

    tables: dict[int, torch.Tensor] = {}
    registry_info: dict[str, Any] = {}
    for k in dict.fromkeys(workers):
        def register(k: int = k) -> SignatureRegistry:
            reg = SignatureRegistry(num_hashes, num_buckets)
            reg.register(words, workers=k)
            return reg

        seconds, reg = _best_time(register, repeats)
        tables[k] = reg.table()
        rehash = reg.rehash_counts()
        record(f"registry_register_workers_{k}", seconds, n_tokens, workers=k, num_hashes=num_hashes,
               num_buckets=num_buckets)
        registry_info[f"workers_{k}"] = {
            "seconds": round(seconds, 6), "rehashed_tokens": int((rehash > 0).sum()),
            "max_rehash_count": int(rehash.max()) if rehash.size else 0,
        }
    first = next(iter(tables.values()))
    registry_info["bit_identical_across_workers"] = all(torch.equal(first, t) for t in tables.values())
    one_core = registry_info.get("workers_1", {}).get("seconds")
    registry_info["meets_5s_target"] = (one_core < 5.0) if (one_core is not None and n_tokens >= 1_000_000) else None

    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, first.shape[0], gather_batch, generator=generator)
    for name, op, gather in (
        ("training_gather", "torch.nn.functional.embedding(ids, table)", lambda: F.embedding(ids, first)),
        ("training_gather_advanced_indexing", "table[ids]", lambda: first[ids]),
    ):
        seconds, _ = _best_time(lambda: [gather() for _ in range(gather_repeats)], repeats)
        record(name, seconds, ids.numel() * gather_repeats, op=op, batch_shape=list(gather_batch),
               repeats_per_run=gather_repeats)

    return {
        "n_tokens": n_tokens,
        "seed": seed,
        "repeats": repeats,
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "word_list": {
            "sha256": _word_list_digest(words),
            "build_seconds": round(build_s, 3),
            "mean_chars": round(sum(map(len, words)) / len(words), 3),
            "scripts": {name: p for name, _, p in SCRIPTS},
        },
        "measurements": measurements,
        "registry": registry_info,
    }


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n-tokens", type=int, default=None, help="words to hash (default 1,000,000; quick 50,000)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="registry worker counts to time")
    parser.add_argument("--repeats", type=int, default=None,
                        help="runs per measurement, best kept (default 3; quick 1)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="small run; results go to the 'quick' profile")
    args = parser.parse_args(argv)
    n_tokens = args.n_tokens if args.n_tokens is not None else (50_000 if args.quick else 1_000_000)
    repeats = args.repeats if args.repeats is not None else (1 if args.quick else 3)

    from hashlib_core.results import ResultsStore

    start = time.perf_counter()
    payload = run_benchmark(n_tokens, workers=args.workers, repeats=repeats, seed=args.seed)
    wall = time.perf_counter() - start
    profile = "quick" if args.quick else "full"
    path = ResultsStore("benchmarks", profile).write_json(
        "hashing", payload, seed=args.seed, device="cpu", wall_time_s=wall,
        config={"n_tokens": n_tokens, "workers": args.workers, "repeats": repeats},
    )
    for name, m in payload["measurements"].items():
        print(f"{name:34s} {m['tokens_per_s']:>14,.0f} tokens/s  ({m['seconds']:.3f} s)")
    print(f"registry tables bit-identical across workers: {payload['registry']['bit_identical_across_workers']}")
    print(f"wrote {path}")
    return payload


if __name__ == "__main__":
    main()
