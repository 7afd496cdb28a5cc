"""The pNLP-Mixer chapter's experiments, registered on the chapter skeleton.

Each writes ``results/pnlp_mixer/<profile>/<name>.csv``; run them with
``python -m hashlib_core.papers.pnlp_mixer --profile P [--only a,b]``.

``sizes``
    Table 2's ``#Param.`` column and the model sizes in bytes (float32 and 8-bit), counted from instantiated models
    with an 18-intent head (multiATIS, as the paper counts them).
``projections``
    Table 1: the Mixer with each §5.1 projection, trained on each comparison task, scored on its validation split.
``architectures``
    Table 2: each §5.2 encoder on the MinHash projection, same tasks and protocol.
``test``
    Table 3 analog: Table 1's MinHash Mixer (selected on ATIS validation) scored on the ATIS test split in float32
    and 8-bit (size, accuracy change, agreement of predictions; intents and slots).
``test_intent``
    The test table's intent model (``test_intent_only``): the same MinHash Mixer trained and selected on intents
    alone, as the paper trains its multiATIS models, with at most ``test_max_epochs`` epochs and ``test_patience``
    (Table 1's schedule when ``test_max_epochs`` is 0), its learning rate, weight decay and dropout tuned on
    validation over the profile's ``test_tuning`` points (``tuning``); test intent accuracy in float32 and 8-bit,
    and its size: the parameters and bytes of the modules an intent model uses (encoder and intent head; not the
    untrained slot head it carries).
``mtop``
    Table 4 analog: one MinHash Mixer per language of the staged MTOP subset (trained on 90% of its dev items,
    selected on the rest, scored on its test items), float32 and 8-bit.
``latency``
    The footnote's latency (batch 1, one thread, the float32 Mixer: total and cached projection), copied from the
    latency benchmark's result (``python -m hashlib_core.benchmarks.pnlp_mixer_latency``, run on its own): nothing is
    timed by the chapter's command.
``claims``
    Every claim of the paper with its computed verdict (:mod:`~hashlib_core.papers.pnlp_mixer.claims`), from the
    results above; registered last.
"""
from __future__ import annotations

import dataclasses
from typing import Any

import pandas as pd

from hashlib_core.chapter import Chapter, RunContext
from hashlib_core.papers.pnlp_mixer.fit import FitSettings, fit, predict, score
from hashlib_core.papers.pnlp_mixer.profiles import MODEL_SHAPE, PROFILES, TUNED, PNLPMixerProfile

__all__ = ["CHAPTER", "Resources"]


class Resources:
    """What every experiment of one run shares: the vocabulary, projectors, tasks and trained models."""

    def __init__(self, ctx: RunContext) -> None:
        from hashlib_core.data import load_wordpiece_vocab

        self.ctx = ctx
        self.profile: PNLPMixerProfile = ctx.profile
        self.vocab = load_wordpiece_vocab("bert-base-multilingual-cased")
        self._projectors: dict[str, Any] = {}
        self._tasks: dict[str, Any] = {}
        self._trained: dict[tuple, tuple[Any, dict]] = {}

    def projector(self, name: str = "minhash") -> Any:
        """The sentence projector of a §5.1 projection over the mBERT-cased vocabulary (built once)."""
        from hashlib_core.papers.pnlp_mixer.projection import SentenceProjector

        if name not in self._projectors:
            p = self.profile
            # MinHash and Binary: n hashes into m counters / bits; TSP: m ternary values; SimHash: m / 16 hashes of
            # 16 bits each, so that every projection gives the Mixer the same m features (§5.1 fixes them to 512)
            kwargs = {"minhash": dict(width=p.bloom_size, num_hashes=p.num_hashes),
                      "binary": dict(width=p.bloom_size, num_hashes=p.num_hashes),
                      "tsp": dict(width=p.bloom_size),
                      "simhash": dict(num_hashes=max(1, p.bloom_size // 16), bits_per_hash=16)}[name]
            self._projectors[name] = SentenceProjector.with_projection(name, self.vocab, p.max_seq_len, **kwargs)
        return self._projectors[name]

    def task(self, name: str) -> Any:
        from hashlib_core.papers.pnlp_mixer.data import load_task

        if name not in self._tasks:
            self._tasks[name] = load_task(name)
        return self._tasks[name]

    def config(self, task: Any, encoder: str = "mixer", projection: str = "minhash",
               dropout: float | None = None) -> Any:
        return self.profile.model_config(bloom_size=self.projector(projection).projection.width,
                                         num_labels=task.num_intents, num_slot_labels=task.num_slots,
                                         encoder=encoder, dropout=self.profile.dropout if dropout is None else dropout)

    def settings(self, task_name: str, schedule: str = "comparison", objective: str = "joint",
                 seed_offset: int = 0, learning_rate: float | None = None,
                 weight_decay: float | None = None) -> FitSettings:
        """The optimisation of ``task_name``'s models: the MTOP subset has its own epochs and patience, and so has
        the test table's intent model (``schedule="test"``) when the profile sets ``test_max_epochs``; SNIPS has its
        own epochs when the profile sets ``snips_max_epochs``. ``learning_rate``, ``weight_decay``: a tuning point's
        instead of the profile's."""
        p = self.profile
        if task_name.startswith("mtop-"):
            epochs, patience = p.mtop_max_epochs, p.mtop_patience
        elif schedule == "test" and p.test_max_epochs:
            epochs, patience = p.test_max_epochs, p.test_patience
        elif task_name == "snips" and p.snips_max_epochs:
            epochs, patience = p.snips_max_epochs, p.patience
        else:
            epochs, patience = p.max_epochs, p.patience
        return FitSettings(batch_size=p.batch_size,
                           learning_rate=p.learning_rate if learning_rate is None else learning_rate,
                           weight_decay=p.weight_decay if weight_decay is None else weight_decay,
                           max_epochs=epochs, patience=patience, seed=p.seed + seed_offset,
                           select_on="intent" if objective == "intent" else "intent+exact_match",
                           tie_break="loss" if objective == "intent" else "first")

    def trained(self, task_name: str, projection: str = "minhash", encoder: str = "mixer",
                schedule: str = "comparison", objective: str = "joint", seed_offset: int = 0,
                point: tuple[float, float, float] | None = None) -> tuple[Any, dict]:
        """The model of (task, projection, encoder) trained with early stopping, and its summary (trained once);
        ``schedule="test"``: with the test table's epochs and patience (the comparison model when they are not set);
        ``objective="intent"``: trained and selected on intents only (its slot head is not trained);
        ``seed_offset``: initialised and trained with the profile's seed plus it; ``point``: a tuning point's
        (learning rate, weight decay, dropout) instead of the profile's."""
        from hashlib_core.papers.pnlp_mixer.joint import PNLPMixerForIntentAndSlots
        from hashlib_core.profiles import seed_everything

        if schedule == "test" and not self.profile.test_max_epochs:
            schedule = "comparison"
        p = self.profile
        lr, wd, dropout = point if point is not None else (p.learning_rate, p.weight_decay, p.dropout)
        key = (task_name, projection, encoder, schedule, objective, seed_offset, lr, wd, dropout)
        if key not in self._trained:
            task = self.task(task_name)
            seed_everything(self.profile.seed + seed_offset)
            config = self.config(task, encoder, projection, dropout)
            config.slot_loss_weight = 0.0 if objective == "intent" else 1.0
            model = PNLPMixerForIntentAndSlots(config).to(self.ctx.device)
            self.ctx.log(f"training {encoder} / {projection} on {task_name} ({len(task.train)} sentences, "
                         f"{objective}, seed {self.profile.seed + seed_offset})")
            model, summary = fit(model, self.projector(projection), task,
                                 self.settings(task_name, schedule, objective, seed_offset, lr, wd),
                                 device=self.ctx.device,
                                 progress=False, train_examples=self.profile.train_examples,
                                 eval_examples=self.profile.eval_examples)
            summary["parameters"] = sum(p.numel() for p in model.parameters())
            self._trained[key] = (model, summary)
        return self._trained[key]


CHAPTER = Chapter("pnlp_mixer", "pNLP-Mixer", PROFILES, resources=Resources)

#: what the MTOP-subset models read and the ATIS ones do not, and the other way round (staleness is per experiment)
_MTOP_ONLY = ("mtop_languages", "mtop_max_epochs", "mtop_patience")
#: what chooses the rows of Tables 1 and 2 (the test tables train ATIS's MinHash Mixer whatever they are)
_COMPARISON_ROWS = ("comparison_tasks", "projections", "encoders", "snips_max_epochs")
_ATIS_ONLY = _COMPARISON_ROWS + ("max_epochs", "patience")
_TEST_ONLY = ("test_max_epochs", "test_patience", "test_intent_only", "test_seeds", "test_tuning")
_TRAINING = ("batch_size", "learning_rate", "weight_decay", "dropout", "train_examples", "eval_examples", "seed")


def _row(task: str, projection: str, encoder: str, summary: dict) -> dict[str, Any]:
    return {"task": task, "projection": projection, "encoder": encoder,
            **{k: v for k, v in summary.items() if k != "curve"}}


def _curves(rows: list[tuple[str, str, str, dict]]) -> pd.DataFrame:
    return pd.DataFrame([{"task": t, "projection": p, "encoder": e, **point}
                         for t, p, e, s in rows for point in s["curve"]])


#: intents of multiATIS, the size the paper's intent models are counted at (Table 2's #Param.)
PAPER_INTENTS = 18


def encoder_sizes(profile: PNLPMixerProfile, encoders) -> pd.DataFrame:
    """Parameters and serialised bytes (float32 and 8-bit) of each encoder with an 18-intent head."""
    from hashlib_core.papers.pnlp_mixer.heads import PNLPMixerForSequenceClassification
    from hashlib_core.papers.pnlp_mixer.quantization import model_size_bytes, quantize_int8
    from hashlib_core.profiles import seed_everything

    rows = []
    for encoder in encoders:
        seed_everything(profile.seed)
        config = profile.model_config(num_labels=PAPER_INTENTS, encoder=encoder)
        model = PNLPMixerForSequenceClassification(config)
        rows.append({"encoder": encoder, "intents": PAPER_INTENTS,
                     "parameters": sum(p.numel() for p in model.parameters()),
                     "float32_bytes": model_size_bytes(model), "int8_bytes": model_size_bytes(quantize_int8(model))})
    return pd.DataFrame(rows)


@CHAPTER.experiment("sizes", outputs=("sizes",), independent_of=_MTOP_ONLY + _TEST_ONLY + _TRAINING + tuple(
    k for k in _ATIS_ONLY if k != "encoders"))
def _sizes(ctx: RunContext) -> dict:
    return {"sizes": encoder_sizes(ctx.profile, ctx.profile.encoders)}


@CHAPTER.experiment("projections", outputs=("table1", "table1_curves"), independent_of=_MTOP_ONLY + _TEST_ONLY)
def _projections(ctx: RunContext) -> dict:
    res: Resources = ctx.resources
    runs = [(t, p, "mixer", res.trained(t, p)[1]) for t in res.profile.comparison_tasks for p in res.profile.projections]
    return {"table1": pd.DataFrame([_row(*r) for r in runs]), "table1_curves": _curves(runs)}


def _test_rows(res: Resources, task_name: str, schedule: str = "comparison", objective: str = "joint",
               seed_offset: int = 0, point: tuple[float, float, float] | None = None) -> list[dict[str, Any]]:
    """Test scores of the task's MinHash Mixer in float32 and 8-bit, with sizes and agreement; ``objective="intent"``:
    the intent-only model, scored on intents alone and sized without its slot head (untrained, unused: see
    :func:`~hashlib_core.papers.pnlp_mixer.joint.intent_modules`), trained with the profile's seed
    plus ``seed_offset`` and the tuning ``point`` (learning rate, weight decay, dropout; the profile's when None)."""
    from hashlib_core.papers.pnlp_mixer.data import UNSEEN
    from hashlib_core.papers.pnlp_mixer.joint import intent_modules
    from hashlib_core.papers.pnlp_mixer.metrics import intent_accuracy, intent_errors
    from hashlib_core.papers.pnlp_mixer.quantization import model_size_bytes, quantize_int8

    intent_only = objective == "intent"
    model, summary = res.trained(task_name, schedule=schedule, objective=objective, seed_offset=seed_offset,
                                 point=point)
    task, projector = res.task(task_name), res.projector()
    cpu_model = model.to("cpu")
    # what is counted: the whole joint model, or for the intent-only model the modules it uses (its encoder and
    # intent head; its untrained slot head is no part of an intent classifier). Its intents are predicted by the
    # joint model, whose intent logits are those of the counted modules (8-bit: each linear layer alone).
    counted = intent_modules(cpu_model) if intent_only else cpu_model
    parameters = sum(p.numel() for p in counted.parameters())
    rows, preds = [], {}
    for precision, m, c in (("float32", cpu_model, counted),
                            ("int8", quantize_int8(cpu_model), quantize_int8(counted) if intent_only else None)):
        intents, slots = predict(m, projector, task.test)
        preds[precision] = intents if intent_only else (intents, slots)
        row = {"task": task_name, **({"objective": objective, "seed": res.profile.seed + seed_offset,
                                      **dict(zip(TUNED, point or res.profile.tuning_points()[0]))}
                                     if intent_only else {}), "precision": precision,
               "test_sentences": len(task.test), "size_bytes": model_size_bytes(c if c is not None else m),
               "parameters": parameters, "epochs": summary["epochs"], "best_epoch": summary["best_epoch"]}
        if intent_only:
            row.update(val_intent_acc=summary["val_intent_acc"], intent_acc=intent_accuracy(intents, task.test.intents),
                       **intent_errors(intents, task.test.intents, task.intent_names, UNSEEN),
                       wall_time_s=summary["wall_time_s"])
        else:
            row.update(score(intents, slots, task.test, task.slot_names))
        rows.append(row)
    if intent_only:
        same = [a == b for a, b in zip(preds["float32"], preds["int8"])]
    else:
        (fi, fs), (qi, qs) = preds["float32"], preds["int8"]
        same = [a == b and sa == sb for a, b, sa, sb in zip(fi, qi, fs, qs)]
    column = "intent_agreement_with_float_%" if intent_only else "agreement_with_float_%"
    for row in rows:
        row[column] = 100.0 * (1.0 if row["precision"] == "float32" else sum(same) / len(same))
    model.to(res.ctx.device)
    return rows


@CHAPTER.experiment("test", outputs=("table3",), independent_of=_MTOP_ONLY + _TEST_ONLY + _COMPARISON_ROWS)
def _test(ctx: RunContext) -> dict:
    return {"table3": pd.DataFrame(_test_rows(ctx.resources, "atis"))}


@CHAPTER.experiment("test_intent", outputs=("table3_intent", "tuning"), when=lambda profile: profile.test_intent_only,
                    independent_of=_MTOP_ONLY + _COMPARISON_ROWS)
def _test_intent(ctx: RunContext) -> dict:
    """The test table's intent model: the same MinHash Mixer trained and selected on intents alone, as the paper
    trains its multiATIS models; tuned on validation over the profile's points (:func:`tune`), then trained once per
    seed (``test_seeds``) at the chosen point, the first seed's model being the tuning run's; scored on intents."""
    res: Resources = ctx.resources
    tuning = tune(res)
    chosen = tuple(tuning.loc[tuning["chosen"], list(TUNED)].iloc[0])
    return {"tuning": tuning,
            "table3_intent": pd.DataFrame([r for offset in range(ctx.profile.test_seeds)
                                           for r in _test_rows(res, "atis", schedule="test", objective="intent",
                                                               seed_offset=offset, point=chosen)])}


def tune(res: Resources) -> pd.DataFrame:
    """The intent model trained at each of the profile's tuning points (the profile's seed) and chosen on ATIS
    validation only: one row per point, ``chosen`` marking the best (validation intent accuracy, ties to the lower
    validation loss, then to the earlier point). Every point's float32 model is also scored on the test split
    (``test_intent_acc``), after the choice and never used for it: it shows whether validation differences of a few
    sentences carry over to test."""
    from hashlib_core.papers.pnlp_mixer.metrics import intent_accuracy

    rows, models, test = [], [], res.task("atis").test
    for point in res.profile.tuning_points():
        model, summary = res.trained("atis", schedule="test", objective="intent", point=point)
        models.append(model)
        rows.append({**dict(zip(TUNED, point)), "seed": res.profile.seed, "epochs": summary["epochs"],
                     "best_epoch": summary["best_epoch"], "val_intent_acc": summary["val_intent_acc"],
                     "val_loss": summary["val_loss"], "wall_time_s": summary["wall_time_s"]})
    best = min(range(len(rows)), key=lambda i: (-rows[i]["val_intent_acc"], rows[i]["val_loss"], i))
    for i, (row, model) in enumerate(zip(rows, models)):     # scored on test only once the choice is made
        row.update(chosen=i == best, test_intent_acc=intent_accuracy(predict(model, res.projector(), test)[0],
                                                                     test.intents))
    return pd.DataFrame(rows)


@CHAPTER.experiment("mtop", outputs=("table4",), independent_of=_ATIS_ONLY + _TEST_ONLY)
def _mtop(ctx: RunContext) -> dict:
    res: Resources = ctx.resources
    return {"table4": pd.DataFrame([r for lang in res.profile.mtop_languages for r in _test_rows(res, f"mtop-{lang}")])}


@CHAPTER.experiment("architectures", outputs=("table2", "table2_curves"),
                    independent_of=_MTOP_ONLY + _TEST_ONLY)
def _architectures(ctx: RunContext) -> dict:
    res: Resources = ctx.resources
    runs = [(t, "minhash", e, res.trained(t, "minhash", e)[1]) for t in res.profile.comparison_tasks
            for e in res.profile.encoders]
    return {"table2": pd.DataFrame([_row(*r) for r in runs]), "table2_curves": _curves(runs)}


#: where ``python -m hashlib_core.benchmarks.pnlp_mixer_latency`` writes its result: (chapter, profile, name)
LATENCY_BENCHMARK = ("benchmarks", "quick", "pnlp_mixer_latency")


def latency_evidence(benchmark: dict[str, Any] | None) -> dict[str, Any]:
    """What the claims read of the latency benchmark's result (``{"meta": ..., "data": ...}``, or ``None`` when it
    was never run): for the float32 Mixer, the per-sentence summaries (mean, median, ..., ms) of the total, the cached
    projection and the model alone; the CPU and threads, the projection it timed, the paper's numbers, and the
    benchmark's commit and date. ``available`` is False without a benchmark."""
    if benchmark is None:
        where = "results/{}/{}/{}.json".format(*LATENCY_BENCHMARK)
        return {"available": False, "reason": f"the latency benchmark has not been run ({where} is missing)"}
    data, meta = benchmark.get("data", benchmark), benchmark.get("meta", {})
    stages = {"total": "total_mixer_float32", "projection": "projection_cached", "model": "model_mixer_float32"}
    return {"available": True, **{stage: dict(data["latency"][key]) for stage, key in stages.items()},
            "sentences": data.get("sentences", {}).get("source", "unknown sentences"),
            "cpu": data.get("cpu"), "cpu_capability": data.get("cpu_capability"), "threads": data.get("threads"),
            "batch_size": data.get("batch_size"), "num_labels": data.get("num_labels"),
            "projection_config": {k: data.get("projection", {}).get(k)
                                  for k in ("num_hashes", "bloom_size", "max_seq_len")},
            "paper": data.get("paper", {}),
            "benchmark": {"git_commit": meta.get("git_commit"), "created_utc": meta.get("created_utc")}}


@CHAPTER.experiment("latency", outputs=("latency",), independent_of=tuple(
    f.name for f in dataclasses.fields(PNLPMixerProfile) if f.name not in MODEL_SHAPE))
def _latency(ctx: RunContext) -> dict:
    """§6's latency as the latency benchmark measured it (``python -m hashlib_core.benchmarks.pnlp_mixer_latency``,
    batch 1, one thread, §4's model): its numbers copied by :func:`latency_evidence`, so that the claims read them
    with this chapter's results. Nothing is timed here: the benchmark is run on its own, on a quiet machine."""
    from hashlib_core.results import read_benchmark

    _, mode, name = LATENCY_BENCHMARK
    return {"latency": latency_evidence(read_benchmark(name, mode))}


from hashlib_core.papers.pnlp_mixer.claims import CLAIMS  # noqa: E402  (registered last: it reads the rest)

CLAIMS.register(CHAPTER)
