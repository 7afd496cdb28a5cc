"""Cost of HashFormers' LSH hashers (§3.3 bucket, §3.5 T-bit code) on long tokens, against the token's length.

Usage::

    python -m hashlib_core.benchmarks.lsh                          # lengths 10 .. 10,000, BPE vocab 4,000
    python -m hashlib_core.benchmarks.lsh --lengths 10 100 --repeats 1 --reference-max-chars 100   # smoke run

The LSH features of a word are the BPE subwords of ``word_variants(w)``, a string of ``len(w)**2`` characters;
encoding it literally (:func:`~hashlib_core.hashing.lsh_features.subword_features_reference`) is quadratic in
time and memory. :func:`~hashlib_core.hashing.lsh_features.subword_features` computes the same ids and weights in
linear time (:mod:`hashlib_core.hashing.lsh_cuts`). For every length in ``--lengths`` and every token kind:

* ``letters``: random lower-case letters (seeded); ``words``: corpus words glued together (a long compound);
  ``one_letter``: one letter repeated, another for every token (its suffixes pair the letters differently from
  the whole word: the dynamic-programme path);

it times both hashers (``LSHBucketHasher`` with the released N = F = 50,260 and ``LSHBitHasher`` with T = 128);
``size`` is the token's length in characters:

* ``cold_s``: the first call of a freshly built hasher (its memos empty);
* ``warm_s`` (``warm_min_s``, ``warm_max_s``): the median (best, worst) over ``--repeats`` new tokens of the same
  kind and length on a hasher that has already hashed three others (the steady state of a long run; tokens never
  repeat, so the per-word cache never answers);
* ``peak_python_mib``: the peak of Python-heap allocations during the cold call (``tracemalloc``) and
  ``peak_rss_delta_mib``: the growth of the process's resident memory during it, sampled every millisecond
  (the Rust tokenizer's own buffers are only visible there).

``reference`` times the quadratic literal algorithm, for ``letters`` up to ``--reference-max-chars`` characters
(1,000 by default: 4,000 characters take tens of seconds and several GiB), and checks that its ids and weights
equal the linear path's. ``calibration_loop_s`` (a pure-Python loop of one million additions, before and after
the run; about 0.03 s on an idle desktop core) and ``load_average`` tell how fast and how busy the machine was.
The BPE is trained with :func:`hashlib_core.bpe.train_bpe` (lower-cased, as the chapter's feature BPE) on
WikiText-2's validation text when the dataset mirror is reachable, else on synthetic words; ``corpus`` records
which. The result goes to ``results/benchmarks/quick/lsh_long_tokens.json`` through
:class:`hashlib_core.results.ResultsStore`. Speed is measured here and never asserted in tests.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
import tracemalloc
from typing import Any, Callable, Sequence

import numpy as np

from hashlib_core.bpe import train_bpe
from hashlib_core.hashing.lsh import LSHBitHasher, LSHBucketHasher
from hashlib_core.hashing.lsh_features import subword_features, subword_features_reference

__all__ = ["KINDS", "make_token", "training_corpus", "run_benchmark", "main"]

KINDS = ("letters", "words", "one_letter")
_LETTERS = np.array(list("abcdefghijklmnopqrstuvwxyz"))


def training_corpus(max_lines: int = 4000) -> tuple[list[str], str]:
    """English lines for the BPE (WikiText-2 validation from the local mirror or cache, never downloaded), else
    synthetic words."""
    offline = os.environ.get("HASHLIB_OFFLINE")
    os.environ["HASHLIB_OFFLINE"] = "1"
    try:
        from hashlib_core.data import load_wikitext2

        lines = [line.strip() for line in load_wikitext2()["validation"]["text"] if line.strip()]
        if lines:
            return lines[:max_lines], "wikitext2-validation"
    except Exception as exc:  # noqa: BLE001 - any data problem: fall back, and say so in the result
        print(f"WikiText-2 not available ({type(exc).__name__}: {exc}); training the BPE on synthetic words",
              file=sys.stderr)
    finally:
        if offline is None:
            os.environ.pop("HASHLIB_OFFLINE", None)
        else:
            os.environ["HASHLIB_OFFLINE"] = offline
    from hashlib_core.benchmarks.hashing import build_word_list

    words = build_word_list(40_000, seed=0)
    return [" ".join(words[i:i + 12]) for i in range(0, len(words), 12)], "synthetic-words"


def make_token(kind: str, length: int, rng: np.random.Generator, words: Sequence[str], letter: str = "") -> str:
    """A token of ``length`` characters of the given kind (module docstring); ``letter`` fixes one_letter's."""
    if kind == "letters":
        return "".join(rng.choice(_LETTERS, length).tolist())
    if kind == "one_letter":
        return (letter or str(rng.choice(_LETTERS))) * length
    if kind == "words":
        out: list[str] = []
        size = 0
        while size < length:
            word = words[int(rng.integers(len(words)))]
            out.append(word)
            size += len(word)
        return "".join(out)[:length]
    raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")


class _PeakRSS:
    """Peak resident-memory growth of this process while the block runs (Linux /proc; None elsewhere)."""

    def __init__(self) -> None:
        self.peak_delta: float | None = None

    @staticmethod
    def _rss() -> int | None:
        try:
            with open("/proc/self/statm") as f:
                return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError):
            return None

    def __enter__(self) -> "_PeakRSS":
        self._base = self._rss()
        self._peak = self._base
        self._stop = threading.Event()

        def sample() -> None:
            while not self._stop.wait(0.001):
                now = self._rss()
                if now is not None and self._peak is not None:
                    self._peak = max(self._peak, now)

        self._thread = threading.Thread(target=sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()
        now = self._rss()
        if self._base is not None and now is not None and self._peak is not None:
            self.peak_delta = (max(self._peak, now) - self._base) / 2**20


def _measure(fn: Callable[[], Any]) -> tuple[float, float, float | None, Any]:
    """(seconds, peak Python MiB, peak RSS growth MiB, result) of one call."""
    tracemalloc.start()
    with _PeakRSS() as rss:
        start = time.perf_counter()
        out = fn()
        seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return seconds, peak, rss.peak_delta, out


def _calibration() -> float:
    start = time.perf_counter()
    total = 0
    for i in range(1_000_000):
        total += i
    return time.perf_counter() - start


def run_benchmark(lengths: Sequence[int], *, bpe_vocab: int = 4000, repeats: int = 5, seed: int = 0,
                  reference_max_chars: int = 1000) -> dict[str, Any]:
    """Every measurement of the module docstring, as a JSON-able dict."""
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    if not lengths or any(n < 1 for n in lengths):
        raise ValueError(f"lengths must be positive ints, got {list(lengths)}")
    calibration_before = _calibration()
    corpus, corpus_name = training_corpus()
    start = time.perf_counter()
    bpe = train_bpe(corpus, bpe_vocab, lowercase=True)
    train_s = time.perf_counter() - start
    words = sorted({w for line in corpus for w in line.lower().split() if w.isalpha()})
    rng = np.random.default_rng(seed)
    builders = {"bucket": lambda: LSHBucketHasher(bpe), "bits": lambda: LSHBitHasher(bpe)}
    rows = []
    for kind in KINDS:
        for length in lengths:
            for name, build in builders.items():
                hasher = build()
                call = hasher.index if name == "bucket" else hasher.bits
                # distinct tokens only: a repeated token would be answered from the hasher's per-word cache
                letters = rng.permutation(_LETTERS).tolist() * (1 + (4 + repeats) // len(_LETTERS))
                tokens = list(dict.fromkeys(make_token(kind, length, rng, words, letters[i])
                                            for i in range(4 + repeats)))
                cold_s, peak_py, peak_rss, _ = _measure(lambda call=call, first=tokens[0]: call(first))
                for token in tokens[1:4]:
                    call(token)
                warm = []
                for token in tokens[4:]:
                    begin = time.perf_counter()
                    call(token)
                    warm.append(time.perf_counter() - begin)
                rows.append({"kind": kind, "size": length, "hasher": name, "cold_s": round(cold_s, 6),
                             "warm_s": round(statistics.median(warm), 6), "warm_min_s": round(min(warm), 6),
                             "warm_max_s": round(max(warm), 6),
                             "peak_python_mib": round(peak_py, 3),
                             "peak_rss_delta_mib": None if peak_rss is None else round(peak_rss, 1)})
                print(f"{kind:10s} {length:>6} {name:6s} cold {cold_s * 1e3:9.1f} ms  warm "
                      f"{statistics.median(warm) * 1e3:9.1f} ms  peak {peak_py:8.1f} MiB (python)")
    reference = []
    for length in [n for n in lengths if n <= reference_max_chars]:
        token = make_token("letters", length, rng, words)
        seconds, peak_py, peak_rss, (ids, weights) = _measure(
            lambda token=token: subword_features_reference(token, bpe, max_length=None))
        fast_s, fast_py, _, (fast_ids, fast_weights) = _measure(lambda token=token: subword_features(token, bpe))
        same = ids.tolist() == fast_ids.tolist() and weights.tolist() == fast_weights.tolist()
        reference.append({"kind": "letters", "size": length, "reference_s": round(seconds, 6),
                          "reference_peak_python_mib": round(peak_py, 3),
                          "reference_peak_rss_delta_mib": None if peak_rss is None else round(peak_rss, 1),
                          "linear_s": round(fast_s, 6), "linear_peak_python_mib": round(fast_py, 3),
                          "identical_ids_and_weights": same})
        print(f"reference  {length:>6} features: literal {seconds * 1e3:9.1f} ms, linear {fast_s * 1e3:7.1f} ms, "
              f"identical: {same}")
    return {
        "repeats": repeats, "seed": seed, "cpu_count": os.cpu_count(),
        "calibration_loop_s": {"before": round(calibration_before, 4), "after": round(_calibration(), 4)},
        "load_average": [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None,
        "bpe": {"vocab_size": bpe.get_vocab_size(), "corpus": corpus_name, "corpus_lines": len(corpus),
                "lowercase": True, "train_s": round(train_s, 3)},
        "hashers": {"bucket": "LSHBucketHasher(bpe): N = F = 50,260, offset 5",
                    "bits": "LSHBitHasher(bpe): T = 128"},
        "measurements": rows, "reference": reference,
    }


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[10, 100, 1000, 4000, 10000],
                        help="token lengths in characters")
    parser.add_argument("--bpe-vocab", type=int, default=4000, help="vocabulary of the feature BPE (cpu profile)")
    parser.add_argument("--repeats", type=int, default=5, help="new tokens timed per warm measurement (median)")
    parser.add_argument("--reference-max-chars", type=int, default=1000,
                        help="longest token given to the quadratic literal algorithm")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    from hashlib_core.results import ResultsStore

    start = time.perf_counter()
    payload = run_benchmark(args.lengths, bpe_vocab=args.bpe_vocab, repeats=args.repeats, seed=args.seed,
                            reference_max_chars=args.reference_max_chars)
    path = ResultsStore("benchmarks", "quick").write_json(
        "lsh_long_tokens", payload, seed=args.seed, device="cpu", wall_time_s=time.perf_counter() - start,
        config=vars(args),
    )
    print(f"wrote {path}")
    return payload


if __name__ == "__main__":
    main()
