"""What settling a headline claim would cost: the H100-hours its protocol needs at the paper's scale, and at the
smallest scale where the paper reports the effect, in two figures: at an assumed share of the H100's peak, and at the
rate our small runs measured (an upper bound).

The rule, the same at every scale and on every device (Kaplan et al., 2020, §2.1: C ≈ 6 N D):

    training FLOPs = 6 x N x D x runs

where N is a model's parameters less its embedding table (a table is looked up, not multiplied), D the tokens one run
reads (steps x batch x sequence, from the profile or the paper's table of settings) and ``runs`` how many times the
claim's protocol trains the model (a learning-rate sweep with the first seed, then the other seeds at the chosen rate:
rates + seeds - 1). The FLOPs are turned into hours twice:

* **at an assumed utilisation of the H100's peak** (:func:`peak_hours`): FLOPs / (:data:`H100_BF16_DENSE_PEAK_FLOPS`
  x :data:`ASSUMED_MFU`) / 3600. The peak is NVIDIA's specification and the utilisation an assumption, typical of
  large transformer training: this is the figure to plan with for a paper-sized model alone on the GPU (a model as
  small as pNLP-Mixer's reaches far less, so for it this figure is optimistic).
* **at the rate our small runs measured** (:func:`hours`), an upper bound: a measured run gives a **rate**, the FLOPs
  its runs did by the same rule over the seconds they took (:func:`measured_rate`). Where a chapter's committed runs
  are on a GPU, the estimate divides by that rate; where they are on CPU, by the CPU rate times the GPU-over-CPU ratio
  measured where both exist (:func:`gpu_ratio`, the HashFormers pre-training, the only experiment committed on both).
  Those runs are tiny models, and on the GPU many jobs shared it: they use a small fraction of the H100's peak, far
  less than a paper-sized model alone on it would, so their hours overstate a paper-scale run's, by orders of
  magnitude for the largest models.

Both figures share the rule's omissions: it leaves out the output layer's cost (an MLM or LM head, a full softmax),
fine-tuning (far shorter than pre-training), tuning sweeps the protocol does not name, and evaluation.

A chapter states its claims' workloads in ``hashlib_core/papers/<slug>/cost.py`` as a :class:`ChapterCost`;
:func:`estimates` evaluates it from the committed results.
"""
from __future__ import annotations

import importlib
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import pandas as pd

__all__ = ["Runs", "Rate", "ClaimWork", "ChapterCost", "Estimate", "training_flops", "measured_rate", "gpu_ratio",
           "hours", "peak_hours", "about", "chapter_cost", "reference_rates", "estimates", "with_costs", "settle_text",
           "summary", "quoted", "COST_COLUMNS", "REFERENCE", "H100_BF16_DENSE_PEAK_FLOPS", "ASSUMED_MFU"]

#: The H100 SXM's peak dense BF16 tensor-core rate, in FLOP/s: a specification, not a result of ours. NVIDIA's H100
#: datasheet prints 1,979 teraFLOPS for BF16 "with sparsity" (2:4 structured sparsity doubles the dense rate); its
#: H100 Tensor Core GPU Architecture whitepaper prints the dense rate, 989.4 teraFLOPS (H100 SXM5, FP32 accumulate).
#: Our GPU runs were on an "NVIDIA H100 80GB HBM3", the SXM part.
H100_BF16_DENSE_PEAK_FLOPS = 989.4e12

#: The model-FLOPs utilisation (MFU: a run's 6ND FLOPs per second over the device's peak) assumed for a paper-sized
#: model trained alone on the H100: an assumption, not a result of ours. The PaLM paper (Chowdhery et al., 2022,
#: Table 3) reports an MFU of 46.2% for PaLM 540B on TPU v4, against about 21% for GPT-3 and 33% for Gopher;
#: Megatron-LM (Korthikanti et al., 2022, "Reducing Activation Recomputation in Large Transformer Models") reports
#: about 56% for a 1T-parameter GPT on A100s. 0.4 is a round figure in that range, for a single well-used GPU.
ASSUMED_MFU = 0.4

#: the experiment committed both on a GPU and on CPU, whose two rates give the GPU-over-CPU ratio: (chapter, GPU
#: profile, CPU profile)
REFERENCE = ("hashformers", "small", "cpu")

#: columns of :func:`estimates`
#: ``*_hours_mfu``: at :data:`ASSUMED_MFU` of :data:`H100_BF16_DENSE_PEAK_FLOPS` (:func:`peak_hours`);
#: ``*_hours_measured``: at the rate our runs measured (:func:`hours`), an upper bound
COST_COLUMNS = ("chapter", "id", "paper_flops", "paper_hours_mfu", "paper_hours_measured", "smallest_flops",
                "smallest_hours_mfu", "smallest_hours_measured", "paper_work", "smallest_work", "rate", "rule")


def training_flops(params: float, tokens: float, runs: int = 1) -> float:
    """6 x N x D x runs (see the module docstring)."""
    for name, v in (("params", params), ("tokens", tokens), ("runs", runs)):
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
            raise ValueError(f"training_flops needs a positive {name}, got {v!r}")
    return 6.0 * float(params) * float(tokens) * int(runs)


@dataclass(frozen=True)
class Runs:
    """One model's runs in a claim's protocol: ``params`` (N, less the embedding table), ``tokens`` per run and how
    many runs; ``what`` names them for the reader."""

    what: str
    params: float
    tokens: float
    runs: int = 1

    @property
    def flops(self) -> float:
        return training_flops(self.params, self.tokens, self.runs)

    def describe(self) -> str:
        return (f"{self.what}: {_count(self.params)} parameters x {_count(self.tokens)} tokens x {self.runs} "
                f"run{'s' if self.runs != 1 else ''}")


@dataclass(frozen=True)
class Rate:
    """A measured training rate by the rule above: ``flops_per_s`` on ``device``, from ``source`` (the runs)."""

    flops_per_s: float
    device: str
    source: str
    gpu: bool = False

    def __post_init__(self) -> None:
        if not (math.isfinite(self.flops_per_s) and self.flops_per_s > 0):
            raise ValueError(f"a rate must be a positive number of FLOP/s, got {self.flops_per_s!r} ({self.source})")


def measured_rate(runs: Sequence[tuple[Runs, float]], device: str, source: str, gpu: bool = False) -> Rate:
    """The rate of ``runs``, each with the seconds it took: their FLOPs over their seconds. A run without a positive
    wall time (a result written before wall times were kept, a run read back from a checkpoint) cannot measure a
    rate: it raises ``ValueError`` naming ``source``."""
    if not runs:
        raise ValueError(f"no measured runs to derive a throughput from ({source})")
    bad = [r.what for r, s in runs if not (isinstance(s, (int, float)) and math.isfinite(s) and s > 0)]
    if bad:
        raise ValueError(f"missing or non-positive wall time for {bad} in {source}: no throughput can be measured")
    return Rate(sum(r.flops for r, _ in runs) / sum(s for _, s in runs), device, source, gpu)


def gpu_ratio(gpu: Rate, cpu: Rate) -> float:
    """How many times the GPU rate the CPU rate is (the same experiment's runs on each)."""
    return gpu.flops_per_s / cpu.flops_per_s


def hours(work: Sequence[Runs], rate: Rate, ratio: float = 1.0) -> float:
    """GPU-hours of ``work`` at the measured ``rate`` (a CPU rate times ``ratio``, the GPU-over-CPU ratio; 1 for a GPU
    rate): an upper bound where the rate was measured on small models (see the module docstring)."""
    if not work:
        raise ValueError("a claim's work needs at least one model's runs")
    if not (math.isfinite(ratio) and ratio > 0):
        raise ValueError(f"the GPU-over-CPU ratio must be positive, got {ratio!r}")
    return sum(r.flops for r in work) / (rate.flops_per_s * ratio) / 3600.0


def peak_hours(flops: float, peak: float = H100_BF16_DENSE_PEAK_FLOPS, mfu: float = ASSUMED_MFU) -> float:
    """GPU-hours of ``flops`` at a utilisation ``mfu`` of a device's ``peak`` FLOP/s: flops / (peak x mfu) / 3600
    (by default the H100's dense BF16 peak at :data:`ASSUMED_MFU`)."""
    if not (isinstance(flops, (int, float)) and math.isfinite(flops) and flops > 0):
        raise ValueError(f"peak_hours needs a positive number of FLOPs, got {flops!r}")
    if not (math.isfinite(peak) and peak > 0):
        raise ValueError(f"the peak must be a positive number of FLOP/s, got {peak!r}")
    if not (math.isfinite(mfu) and 0 < mfu <= 1):
        raise ValueError(f"the utilisation must lie in (0, 1], got {mfu!r}")
    return float(flops) / (peak * mfu) / 3600.0


def about(h: float | None) -> str:
    """``about 40``, ``about 1,300``, ``under 1``: hours to about two significant digits."""
    if h is None or (isinstance(h, float) and math.isnan(h)):
        return "-"
    if h < 1:
        return "under 1"
    return f"about {_two_digits(h)}"


def _two_digits(x: float) -> str:
    """``6``, ``57``, ``5,900``: a number of at least 1 to about two significant digits."""
    digits = max(0, int(math.floor(math.log10(x))) - 1)
    return f"{round(x, -digits):,.0f}"


def _count(x: float) -> str:
    for div, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(x) >= div:
            return f"{x / div:.3g}{suffix}"
    return f"{x:.3g}"


@dataclass(frozen=True)
class ClaimWork:
    """A headline claim's workload: ``paper(profile, results)`` the runs at the paper's scale, ``smallest`` the runs at
    the smallest scale where the paper reports the effect (None: the paper reports it at one scale only), ``note``
    where those scales come from."""

    paper: Callable[[Any, Any], Sequence[Runs]]
    smallest: Callable[[Any, Any], Sequence[Runs]] | None = None
    note: str = ""


@dataclass(frozen=True)
class ChapterCost:
    """A chapter's costs: ``measure(results)`` its committed runs with their wall times and the name of the result
    they are read from, and the work of each headline claim (by claim id). ``results`` reads the committed results of
    ``profile`` (the chapter's ``cpu`` or ``small`` profile, whose runs measure the rate)."""

    slug: str
    profile: str
    measure: Callable[[Any], tuple[Sequence[tuple[Runs, float]], str]]
    claims: Mapping[str, ClaimWork] = field(default_factory=dict)


class _Committed:
    """A chapter's committed results of one profile: ``table(name)``, ``meta(name)``, ``config(name)``."""

    def __init__(self, slug: str, profile: str, root: Any = None) -> None:
        from hashlib_core.results import ResultsStore

        self.slug, self.profile = slug, profile
        self.store = ResultsStore(slug, profile, root)

    def _need(self, name: str) -> None:
        if not self.store.exists(name):
            raise FileNotFoundError(f"no committed result {name!r} in results/{self.slug}/{self.profile}: the cost "
                                    f"estimate reads its wall times (run the chapter's {self.profile} profile)")

    def table(self, name: str) -> pd.DataFrame:
        self._need(name)
        return self.store.read_table(name)

    def meta(self, name: str) -> dict:
        self._need(name)
        return self.store.read_meta(name)

    def config(self, name: str) -> dict:
        return self.meta(name).get("config") or {}

    def source(self, name: str) -> str:
        return f"results/{self.slug}/{self.profile}/{name}"


def chapter_cost(slug: str) -> ChapterCost | None:
    """The chapter's :class:`ChapterCost` (``hashlib_core.papers.<slug>.cost.COST``), None for a chapter without
    headline claims about a measured effect."""
    try:
        module = importlib.import_module(f"hashlib_core.papers.{slug}.cost")
    except ModuleNotFoundError as exc:
        if exc.name != f"hashlib_core.papers.{slug}.cost":
            raise
        return None
    return module.COST


def _rate(cost: ChapterCost, root: Any = None) -> Rate:
    results = _Committed(cost.slug, cost.profile, root)
    runs, name = cost.measure(results)
    meta = results.meta(name)
    gpu = str(meta.get("device", "cpu")) != "cpu"
    device = str(meta.get("device_name") or meta.get("device"))
    return measured_rate(runs, device + (f" ({meta['cpu_count']} cores)" if meta.get("cpu_count") else ""),
                         results.source(name), gpu)


def reference_rates(root: Any = None) -> tuple[Rate, Rate]:
    """The GPU and CPU rates of :data:`REFERENCE` (the same experiment committed on both)."""
    slug, gpu, cpu = REFERENCE
    cost = chapter_cost(slug)
    if cost is None:
        raise RuntimeError(f"the reference chapter {slug!r} has no cost module")
    return _rate(ChapterCost(slug, gpu, cost.measure), root), _rate(ChapterCost(slug, cpu, cost.measure), root)


@dataclass(frozen=True)
class Estimate:
    chapter: str
    id: str
    paper_flops: float
    paper_hours_mfu: float
    paper_hours_measured: float
    smallest_flops: float | None
    smallest_hours_mfu: float | None
    smallest_hours_measured: float | None
    paper_work: str
    smallest_work: str
    rate: str
    rule: str


def estimates(slugs: Sequence[str] | None = None, root: Any = None) -> pd.DataFrame:
    """One row per headline claim with a workload (columns :data:`COST_COLUMNS`): its FLOPs and H100-hours at the
    paper's scale and at the smallest reported scale, each in two figures (at :data:`ASSUMED_MFU` of the H100's peak,
    and at the rate our runs measured, an upper bound), the work each counts, the measured rate and the rule used."""
    from hashlib_core.papers import CHAPTERS, chapter

    gpu, cpu = reference_rates(root)
    ratio = gpu_ratio(gpu, cpu)
    rows = []
    for slug in slugs or CHAPTERS:
        cost = chapter_cost(slug)
        if cost is None:
            continue
        rate = _rate(cost, root)
        on_gpu = rate.gpu
        scale = 1.0 if on_gpu else ratio
        rule = f"{_count(rate.flops_per_s)} FLOP/s by 6ND, measured on {rate.device} ({rate.source})"
        if not on_gpu:
            rule += f", times the GPU-over-CPU ratio {ratio:,.0f} ({gpu.source} over {cpu.source})"
        profile = chapter(slug).profiles.paper
        results = _Committed(slug, cost.profile, root)
        for claim_id, work in cost.claims.items():
            paper = list(work.paper(profile, results))
            small = list(work.smallest(profile, results)) if work.smallest is not None else None
            paper_flops = sum(r.flops for r in paper)
            small_flops = sum(r.flops for r in small) if small else None
            rows.append(Estimate(
                slug, claim_id, paper_flops, peak_hours(paper_flops), hours(paper, rate, scale),
                small_flops, peak_hours(small_flops) if small else None, hours(small, rate, scale) if small else None,
                "; ".join(r.describe() for r in paper) + (f" ({work.note})" if work.note else ""),
                "; ".join(r.describe() for r in small) if small else "the paper reports the effect at one scale",
                rate.source, rule).__dict__)
    return pd.DataFrame(rows, columns=list(COST_COLUMNS))


#: the hour columns :func:`with_costs` adds, from :func:`estimates`' columns
_JOINED = {"paper_hours_mfu": "cost_paper_hours_mfu", "paper_hours_measured": "cost_paper_hours_measured",
           "smallest_hours_mfu": "cost_smallest_hours_mfu", "smallest_hours_measured": "cost_smallest_hours_measured"}


def with_costs(claims: pd.DataFrame, costs: pd.DataFrame, chapter: str | None = None) -> pd.DataFrame:
    """``claims`` with each claim's ``cost_paper_hours_mfu``, ``cost_paper_hours_measured``,
    ``cost_smallest_hours_mfu`` and ``cost_smallest_hours_measured`` (empty where no estimate): joined on the
    scorecard's ``chapter`` and ``id``, or on ``id`` within ``chapter`` for a chapter's own table."""
    missing = sorted(({"chapter", "id"} | set(_JOINED)) - set(costs.columns))
    if missing:
        raise KeyError(f"not a cost table (see estimates()): columns {missing} are missing")
    keep = costs.rename(columns=_JOINED)[["chapter", "id", *_JOINED.values()]]
    out = claims.drop(columns=list(_JOINED.values()), errors="ignore")
    if chapter is not None:
        keep = keep[keep["chapter"] == chapter].drop(columns="chapter")
        return out.merge(keep, on="id", how="left")
    if "chapter" not in out.columns:
        raise KeyError("claims without a chapter column: pass the chapter's slug")
    return out.merge(keep, on=["chapter", "id"], how="left")


def _pct(x: float) -> str:
    """``40%``, ``0.5%``: a fraction as a percentage to two significant digits."""
    p = 100.0 * x
    return f"{p:.0f}%" if p >= 10 else f"{p:.2g}%"


def _given(row: Mapping[str, Any], key: str) -> float | None:
    v = row.get(key)
    return None if v is None or pd.isna(v) else float(v)


def settle_text(row: Mapping[str, Any]) -> str:
    """``to settle at paper scale: about M H100-hours at 40% of the H100's peak (about N at the rate our small runs
    measured, an upper bound)``, and the same two figures at the smallest reported scale where the paper reports a
    smaller one; empty for a claim without an estimate."""
    mfu, measured = _given(row, "cost_paper_hours_mfu"), _given(row, "cost_paper_hours_measured")
    if mfu is None or measured is None:
        return ""
    text = (f"to settle at paper scale: {about(mfu)} H100-hours at {_pct(ASSUMED_MFU)} of the H100's peak "
            f"({about(measured)} at the rate our small runs measured, an upper bound)")
    small_mfu, small_measured = _given(row, "cost_smallest_hours_mfu"), _given(row, "cost_smallest_hours_measured")
    if small_mfu is not None and small_measured is not None:
        text += f"; at the smallest reported scale: {about(small_mfu)} ({about(small_measured)})"
    return text


def summary(costs: pd.DataFrame) -> pd.DataFrame:
    """The estimates as the scorecard lists them: per chapter and claim, the hours (rounded) at the assumed share of
    the H100's peak and at the measured rate (an upper bound), at the paper's scale and at the smallest reported one,
    the work counted and the rate it was divided by."""
    share = _pct(ASSUMED_MFU)

    def smallest(r: pd.Series) -> str:
        if pd.isna(r["smallest_hours_mfu"]):
            return "as paper"
        return f"{about(r['smallest_hours_mfu'])} ({about(r['smallest_hours_measured'])})"

    return pd.DataFrame({
        "chapter": costs["chapter"], "claim": costs["id"],
        f"paper scale, H100-hours at {share} of peak": costs["paper_hours_mfu"].map(about),
        "at the measured rate (upper bound)": costs["paper_hours_measured"].map(about),
        f"smallest reported scale: {share} of peak (measured)": costs.apply(smallest, axis=1),
        "work counted": costs["paper_work"] + "; smallest: " + costs["smallest_work"],
        "rate": costs["rule"],
    })


def quoted(root: Any = None, costs: pd.DataFrame | None = None) -> dict[str, str]:
    """The cost section's numbers for the prose: the GPU-over-CPU ratio and the two rates it divides, the GPU, the
    H100's peak, the assumed utilisation and the share of the peak the GPU run measured, the chapters with no
    estimate (no headline claim about a measured effect), and, given ``costs`` (:func:`estimates`), how many times
    the measured-rate hours are the hours at the assumed utilisation (the least and the most over the claims)."""
    from hashlib_core.papers import CHAPTERS, chapter

    gpu, cpu = reference_rates(root)
    out = {"cost_ratio": f"{gpu_ratio(gpu, cpu):,.0f}", "cost_gpu": gpu.device, "cost_cpu": cpu.device,
           "cost_gpu_rate": _count(gpu.flops_per_s), "cost_cpu_rate": _count(cpu.flops_per_s),
           "cost_peak": f"{H100_BF16_DENSE_PEAK_FLOPS / 1e12:,.1f}T", "cost_mfu": _pct(ASSUMED_MFU),
           "cost_gpu_share": _pct(gpu.flops_per_s / H100_BF16_DENSE_PEAK_FLOPS),
           "cost_uncosted": ", ".join(chapter(s).title for s in CHAPTERS if chapter_cost(s) is None) or "none"}
    if costs is not None and len(costs):
        factor = costs["paper_hours_measured"] / costs["paper_hours_mfu"]
        out["cost_factor_min"] = _two_digits(factor.min())
        out["cost_factor_max"] = _two_digits(factor.max())
    return out
