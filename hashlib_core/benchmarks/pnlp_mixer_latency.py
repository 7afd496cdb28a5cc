"""Per-sentence CPU latency of a pNLP-Mixer (Fusco et al., §6 footnote: "average latency across 100 samples on a
Xeon E5-2690v4 and a PyTorch runtime": 2.4 ms in all for the non-quantized model, 0.4 ms of it the projection), at
batch 1 on one thread.

Usage::

    python -m hashlib_core.benchmarks.pnlp_mixer_latency                     # 100 ATIS test sentences
    python -m hashlib_core.benchmarks.pnlp_mixer_latency --n-sentences 20 --models mixer

For each of ``--n-sentences`` ATIS test sentences (synthetic words if ATIS or the mBERT vocabulary is not staged;
``sentences.source`` records which) it times, one sentence at a time after ``--warmup`` untimed sentences, and
reports the median and mean in milliseconds (the jobs below are timed in turn, ten sentences at a time, by
:func:`time_interleaved`, so that a change of the machine's speed during the run touches them all alike):

* ``projection_cached``: :class:`SentenceProjector` (WordPiece, cached per-piece fingerprints, counting Bloom filter);
* ``projection_uncached``: the same WordPiece pieces, but every piece's MinHash fingerprint computed afresh by the
  :class:`MinHashFingerprinter` (as if there were no cache);
* ``model_<name>_<float32|int8_weight_only|int8_dynamic>``: the model's forward alone on the projected features;
* ``model_transformer_float32_unfused`` (with ``--models ... transformer``): the float Transformer with PyTorch's
  fused inference path switched off (:func:`unfused_forward`; the page compares the Mixer with the faster of the two);
* ``model_mixer_float32_lean``: the same float Mixer through its lean inference path
  (:class:`~hashlib_core.papers.pnlp_mixer.inference.MixerForInference`: the same logits, no per-module overhead;
  ``lean_equals_eager`` records that its logits matched the eager model's on the timed sentences);
* ``total_<name>_<precision>``: cached projection + forward, timed as one call.

Models are randomly initialised (18 intents, §4's sizes): latency does not depend on the weights. It also measures
``matmul``: float32 ``torch.mm`` throughput of this core (GFLOP/s) on the model's own three shapes with their
operands in the cache: in the same round robin as the models (``interleaved``: each product run once untimed, then
three times, the fastest kept; the core's throughput that the ratios divide by, measured at the same machine speed
as the models) and, for reference, per shape in loops of its own (the best of three). It reports
``flops_per_sentence`` (every matrix product of one forward, attention included, counted by :func:`matmul_flops`;
LayerNorm, GELU, bias, max pooling and the Bloom filter are not counted) and
``ratios``: the projection's share of the total (the paper: 0.4 / 2.4) and the fraction of the core's matmul
throughput the model reaches. ``--models`` adds §5.2's encoders (``transformer``, ...) at the same sizes and
sequence length. The result goes to
``results/benchmarks/quick/pnlp_mixer_latency.json`` through :class:`hashlib_core.results.ResultsStore`. Speed is
measured here and never asserted in tests; ``load_average_before_after`` tells how busy the machine was.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import torch
from torch import nn

from hashlib_core.results.store import cpu_capability, cpu_name

__all__ = ["MODEL_CHOICES", "PRECISIONS", "mixer_flops", "matmul_flops", "fused_path_off",
           "unfused_forward", "lean_matches_eager", "summarize", "matmul_gflops", "time_interleaved", "build_payload",
           "run_benchmark", "main"]

MODEL_CHOICES = ("mixer", "transformer", "cnn", "lstm", "projection-only")
PRECISIONS = ("float32", "int8_weight_only", "int8_dynamic")
PAPER = {"total_ms": 2.4, "projection_ms": 0.4, "projection_share": 0.4 / 2.4, "cpu": "Intel Xeon E5-2690 v4",
         "precision": "float32"}   # §6: "for the non-quantized pNLP-Mixer model ... 2.4ms", footnote 1: the CPU


def mixer_flops(config: Any) -> int:
    """FLOPs of one sentence through a pNLP-Mixer for sequence classification, from the config's shapes:
    ``2 x in x out`` per row of every dense layer (bottleneck on s rows, token mixing on h rows, channel mixing on
    s rows, the head on the pooled vector)."""
    s, h, m = config.max_seq_len, config.hidden_size, config.projection_features
    block = 2 * h * (2 * s * config.token_mixing_dim) + 2 * s * (2 * h * config.channel_mixing_dim)
    head = (2 * (h * config.classifier_hidden + config.classifier_hidden * config.num_labels)
            if config.classifier_hidden else 2 * h * config.num_labels)
    return 2 * s * m * h + config.num_mixer_layers * block + head


def matmul_flops(model: nn.Module, **inputs: torch.Tensor) -> int:
    """FLOPs of the matrix products in one forward of ``model(**inputs)`` (``2 x m x n x k`` per product), counted
    from the aten calls by torch's ``FlopCounterMode``: dense layers, batched products, convolutions and the attention
    products (the CPU kernel of ``scaled_dot_product_attention``, which the counter does not know, is counted
    here as its two products, ``Q K^T`` and ``A V``). ``nn.TransformerEncoderLayer``'s fused inference path hides
    its products from the counter, so it is switched off while counting; recurrent layers (the LSTM) are not
    counted."""
    from torch.utils.flop_counter import FlopCounterMode, sdpa_flop_count

    def attention(query_shape, key_shape, value_shape, *args, out_shape=None, **kwargs) -> int:
        return sdpa_flop_count(query_shape, key_shape, value_shape)

    cpu_attention = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu
    counter = FlopCounterMode(display=False, custom_mapping={cpu_attention: attention})
    with fused_path_off(), torch.inference_mode(), counter:
        model(**inputs)
    return int(counter.get_total_flops())


@contextmanager
def fused_path_off() -> Iterator[None]:
    """``nn.TransformerEncoderLayer``'s fused inference path switched off inside the block, restored after it."""
    fast_path = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        yield
    finally:
        torch.backends.mha.set_fastpath_enabled(fast_path)


def unfused_forward(model: nn.Module, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
    """``model(**inputs).logits`` with the fused inference path off (:func:`fused_path_off`): on our CPU the
    unfused layers were sometimes the faster, so the benchmarks time the Transformer both ways and the pages take
    the faster."""
    with fused_path_off():
        return model(**inputs).logits


def lean_matches_eager(lean: Callable[..., torch.Tensor], model: nn.Module,
                       inputs: Sequence[dict[str, torch.Tensor]]) -> bool:
    """Whether the lean inference path gives the eager model's logits (up to float rounding) on every input."""
    with torch.inference_mode():
        return all(torch.allclose(lean(**x), model(**x).logits, rtol=1e-4, atol=1e-5) for x in inputs)


def summarize(seconds: Sequence[float]) -> dict[str, float]:
    """Median, mean, min and max in milliseconds, and the count."""
    if not seconds:
        raise ValueError("no timings to summarise")
    ms = [s * 1e3 for s in seconds]
    return {"median_ms": round(statistics.median(ms), 4), "mean_ms": round(statistics.fmean(ms), 4),
            "min_ms": round(min(ms), 4), "max_ms": round(max(ms), 4), "n": len(ms)}


def matmul_gflops(shapes: Sequence[tuple[int, int, int]], min_seconds: float = 0.2) -> dict[str, Any]:
    """float32 ``torch.mm`` throughput, GFLOP/s, for each ``(rows, inner, cols)`` (best of 3 timed loops)."""
    out = {}
    for r, k, c in shapes:
        a, b = torch.randn(r, k), torch.randn(k, c)
        flops = 2 * r * k * c
        for _ in range(10):
            torch.mm(a, b)
        reps = max(10, int(min_seconds / max(flops / 20e9, 1e-7)))
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            for _ in range(reps):
                torch.mm(a, b)
            best = min(best, (time.perf_counter() - start) / reps)
        out[f"{r}x{k}@{k}x{c}"] = {"flops": flops, "seconds": best, "gflops_per_s": round(flops / best / 1e9, 3)}
    return out


def _sentences(n: int, seed: int) -> tuple[list[list[str]], list[str] | None, str]:
    """``n`` word lists (ATIS test, else synthetic), the WordPiece vocabulary (None if not staged) and the source."""
    try:
        from hashlib_core.data import load_atis, load_wordpiece_vocab
        vocab = load_wordpiece_vocab("bert-base-multilingual-cased")
        test = load_atis()["test"]
        return [list(t) for t in test["tokens"][:n]], vocab, f"ATIS test, first {n} sentences"
    except Exception as exc:   # data not staged: synthetic words over a small synthetic vocabulary
        from hashlib_core.benchmarks.hashing import build_word_list
        rng = np.random.default_rng(seed)
        words = build_word_list(2000, seed)
        sentences = [list(rng.choice(words, size=int(rng.integers(5, 20)))) for _ in range(n)]
        vocab = ["[PAD]", "[UNK]", *sorted({c for w in words for c in w}), *words]
        return sentences, vocab, f"synthetic ({type(exc).__name__}: {exc!s:.120})"


def _config_for(name: str, num_labels: int) -> Any:
    """The paper's configuration with ``name``'s encoder (any of §5.2's: mixer, transformer, cnn, lstm, ...)."""
    from hashlib_core.papers.pnlp_mixer.configuration import ENCODERS, PNLPMixerConfig

    if name not in ENCODERS:
        raise ValueError(f"unknown model {name!r}; choose from {ENCODERS}")
    return PNLPMixerConfig(num_labels=num_labels, encoder=name)


def time_interleaved(jobs: dict[str, tuple[Callable[[Any], Any], Sequence[Any]]], warmup: int,
                     block: int = 10) -> dict[str, list[float]]:
    """Seconds per call of every job ``name: (fn, items)`` (all with as many items), timed round robin in blocks:
    items ``0..block-1`` of every job in turn, then the next ``block`` items of every job, and so on; each job's
    block starts with one untimed call on its first item, so its weights are back in the cache as in a deployment
    that runs one model. A change of the machine's speed during the run (a shared or throttled CPU) thus touches
    every job alike and the same-run ratios stay fair. ``warmup`` untimed calls first."""
    lengths = {len(items) for _, items in jobs.values()}
    if len(lengths) != 1:
        raise ValueError(f"every job needs as many items, got lengths {sorted(lengths)}")
    if block < 1:
        raise ValueError(f"block must be >= 1, got {block}")
    n = lengths.pop()
    for fn, items in jobs.values():
        for item in items[:warmup]:
            fn(item)
    times: dict[str, list[float]] = {name: [] for name in jobs}
    for first in range(0, n, block):
        for name, (fn, items) in jobs.items():
            fn(items[first])
            for item in items[first:first + block]:
                start = time.perf_counter()
                fn(item)
                times[name].append(time.perf_counter() - start)
    return times


def build_payload(*, timings: dict[str, Sequence[float]], flops: dict[str, int], matmul: dict[str, Any],
                  sizes: dict[str, int], meta: dict[str, Any]) -> dict[str, Any]:
    """The JSON payload from raw timings (seconds per sentence, keyed ``projection_cached``,
    ``projection_uncached``, ``model_<m>_<p>``, ``total_<m>_<p>``), FLOPs per sentence per model, the matmul
    probes and serialised sizes; ``ratios`` are computed from medians of this same run. The core's matmul
    throughput is the ``interleaved`` probe's (timed round robin with the models, so at the same machine speed)
    when there is one, else the best of the per-shape probes."""
    latency = {k: summarize(v) for k, v in timings.items()}
    core = (matmul["interleaved"]["gflops_per_s"] if "interleaved" in matmul
            else max(v["gflops_per_s"] for v in matmul.values()))
    ratios: dict[str, Any] = {}
    proj = latency["projection_cached"]["median_ms"]
    for key, stats in latency.items():
        if key.startswith("total_"):
            ratios[f"projection_share_of_{key}"] = round(proj / stats["median_ms"], 4)
        if key.startswith("model_"):
            model = key.split("_")[1]
            achieved = flops[model] / (stats["median_ms"] / 1e3) / 1e9
            ratios[f"gflops_per_s_{key}"] = round(achieved, 3)
            ratios[f"fraction_of_core_matmul_{key}"] = round(achieved / core, 4)
    if "projection_uncached" in latency and proj > 0:
        ratios["uncached_over_cached_projection"] = round(latency["projection_uncached"]["median_ms"] / proj, 2)
    return {**meta, "paper": PAPER, "latency": latency, "flops_per_sentence": flops,
            "matmul": {"shapes": matmul, "core_gflops_per_s": core}, "serialised_bytes": sizes, "ratios": ratios}


def run_benchmark(n_sentences: int = 100, *, models: Sequence[str] = ("mixer",), precisions: Sequence[str] = PRECISIONS,
                  warmup: int = 10, seed: int = 0, num_labels: int = 18) -> dict[str, Any]:
    from hashlib_core.hashing.minhash import MinHashFingerprinter, counting_bloom_filter
    from hashlib_core.papers.pnlp_mixer.heads import PNLPMixerForSequenceClassification
    from hashlib_core.papers.pnlp_mixer.inference import MixerForInference
    from hashlib_core.papers.pnlp_mixer.projection import SentenceProjector
    from hashlib_core.papers.pnlp_mixer.quantization import model_size_bytes, quantize_int8

    torch.set_num_threads(1)
    torch.manual_seed(seed)
    load_before = os.getloadavg() if hasattr(os, "getloadavg") else None
    configs = {name: _config_for(name, num_labels) for name in models}
    first = next(iter(configs.values()))
    sentences, vocab, source = _sentences(n_sentences, seed)
    fingerprinter = MinHashFingerprinter(first.num_hashes)
    start = time.perf_counter()
    projector = SentenceProjector.from_vocab(vocab, fingerprinter, first.bloom_size, first.max_seq_len)
    cache_build_s = time.perf_counter() - start

    def uncached(words: list[str]) -> dict[str, torch.Tensor]:
        words = words[: projector.max_seq_len]
        features = np.zeros((1, projector.max_seq_len, projector.bloom_size), dtype=np.float32)
        fps = np.stack([fingerprinter.token_fingerprint([vocab[i] for i in projector.unit_ids(w)]) for w in words])
        features[0, : len(words)] = counting_bloom_filter(fps, projector.bloom_size)
        mask = np.zeros((1, projector.max_seq_len), dtype=np.int64)
        mask[0, : len(words)] = 1
        return {"input_features": torch.from_numpy(features), "attention_mask": torch.from_numpy(mask)}

    same = all(torch.equal(uncached(s)["input_features"], projector([s])["input_features"]) for s in sentences[:5])
    jobs: dict[str, tuple[Callable[[Any], Any], Sequence[Any]]] = {
        "projection_cached": (lambda s: projector([s]), sentences), "projection_uncached": (uncached, sentences)}
    inputs = [projector([s]) for s in sentences]
    flops, sizes, lean_equals_eager = {}, {}, None
    for name, config in configs.items():
        model = PNLPMixerForSequenceClassification(config).eval()
        flops[name] = matmul_flops(model, **inputs[0])
        variants = {p: model if p == "float32" else quantize_int8(model, p.removeprefix("int8_")) for p in precisions}
        for p, m in variants.items():
            sizes[f"{name}_{p}"] = model_size_bytes(m)
            jobs[f"model_{name}_{p}"] = (lambda x, m=m: m(**x).logits, inputs)
            jobs[f"total_{name}_{p}"] = (lambda s, m=m: m(**projector([s])).logits, sentences)
        if name == "transformer" and "float32" in precisions:
            jobs["model_transformer_float32_unfused"] = (lambda x, m=model: unfused_forward(m, x), inputs)
        if name == "mixer" and "float32" in precisions:
            lean = MixerForInference(model)
            lean_equals_eager = lean_matches_eager(lean, model, inputs)
            jobs["model_mixer_float32_lean"] = (lambda x, lean=lean: lean(**x), inputs)
            jobs["total_mixer_float32_lean"] = (lambda s, lean=lean: lean(**projector([s])), sentences)
    s, h, mm = first.max_seq_len, first.hidden_size, first.projection_features
    shapes = [(s, h, h), (s, mm, h), (h, s, first.token_mixing_dim)]
    factors = [(torch.randn(r, k), torch.randn(k, c)) for r, k, c in shapes]
    probe_seconds: list[float] = []

    def probe(_: Any) -> None:
        """Each shape's product once untimed (operands into the cache), then three timed: the fastest counts."""
        total = 0.0
        for a, b in factors:
            torch.mm(a, b)
            best = float("inf")
            for _ in range(3):
                start = time.perf_counter()
                torch.mm(a, b)
                best = min(best, time.perf_counter() - start)
            total += best
        probe_seconds.append(total)

    jobs["matmul_probe"] = (probe, sentences)
    with torch.inference_mode():
        timings = time_interleaved(jobs, warmup)
    timings.pop("matmul_probe")
    probe_flops = sum(2 * r * k * c for r, k, c in shapes)
    probe_s = statistics.median(probe_seconds[-len(sentences):])   # it times itself: any call after the warm-up
    matmul = {"interleaved": {"flops": probe_flops, "seconds": probe_s,
                              "gflops_per_s": round(probe_flops / probe_s / 1e9, 3),
                              "shapes": [f"{r}x{k}@{k}x{c}" for r, k, c in shapes]},
              **matmul_gflops(shapes)}
    meta = {
        "cpu": cpu_name(), "cpu_capability": cpu_capability(), "torch": torch.__version__,
        "cpu_count": os.cpu_count(),
        "load_average_before_after": [load_before, os.getloadavg() if hasattr(os, "getloadavg") else None],
        "threads": torch.get_num_threads(), "batch_size": 1,
        "models": list(models), "precisions": list(precisions), "num_labels": num_labels,
        "sentences": {"n": len(sentences), "source": source, "warmup": warmup,
                      "mean_words": round(float(np.mean([len(x) for x in sentences])), 2)},
        "projection": {"num_hashes": first.num_hashes, "bloom_size": first.bloom_size,
                       "max_seq_len": first.max_seq_len, "vocab_size": len(vocab),
                       "cache_build_s": round(cache_build_s, 3), "uncached_equals_cached": bool(same)},
        "lean_equals_eager": lean_equals_eager,
    }
    try:
        import torchao
        meta["torchao"] = torchao.__version__
    except ImportError:
        meta["torchao"] = None
    return build_payload(timings=timings, flops=flops, matmul=matmul, sizes=sizes, meta=meta)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n-sentences", type=int, default=100, help="sentences timed (the paper: 100)")
    parser.add_argument("--warmup", type=int, default=10, help="untimed sentences first")
    parser.add_argument("--models", nargs="+", default=["mixer"], choices=MODEL_CHOICES,
                        help="encoders to time ('transformer' needs PNLPMixerConfig(encoder=...))")
    parser.add_argument("--precisions", nargs="+", default=list(PRECISIONS), choices=PRECISIONS)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.n_sentences < 1 or args.warmup < 0:
        parser.error("--n-sentences must be >= 1 and --warmup >= 0")
    for name in args.models:
        try:
            _config_for(name, 18)
        except ValueError as exc:
            parser.error(str(exc))

    from hashlib_core.results import ResultsStore

    start = time.perf_counter()
    payload = run_benchmark(args.n_sentences, models=args.models, precisions=args.precisions, warmup=args.warmup,
                            seed=args.seed)
    path = ResultsStore("benchmarks", "quick").write_json(
        "pnlp_mixer_latency", payload, seed=args.seed, device=f"cpu ({payload['cpu']}, 1 thread)",
        wall_time_s=time.perf_counter() - start,
        config={"n_sentences": args.n_sentences, "warmup": args.warmup, "models": args.models,
                "precisions": args.precisions})
    for key, stats in payload["latency"].items():
        print(f"{key:36s} median {stats['median_ms']:8.3f} ms   mean {stats['mean_ms']:8.3f} ms")
    print(f"core matmul {payload['matmul']['core_gflops_per_s']:.1f} GFLOP/s; flops/sentence "
          f"{payload['flops_per_sentence']}")
    for key, value in payload["ratios"].items():
        print(f"{key:52s} {value}")
    print(f"wrote {path}")
    return payload


if __name__ == "__main__":
    main()
