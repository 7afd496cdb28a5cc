"""The pNLP-Mixer chapter's experiments, registered on the chapter skeleton.

Each writes ``results/pnlp_mixer/<profile>/<name>.csv``; run them with
``python -m hashlib_core.papers.pnlp_mixer --profile P [--only a,b]``.

``sizes``
    Table 2's ``#Param.`` column and the model sizes in bytes (float32 and 8-bit), counted from instantiated models
    with an 18-intent head (multiATIS, as the paper counts them).
``mixer_<task>``, ``projections_<task>``, ``architectures_<task>`` (``<task>``: ``mtop_en``, ``atis``, ``snips``)
    The parts Tables 1 and 2 are trained in, per comparison task (:mod:`~hashlib_core.papers.pnlp_mixer.comparisons`):
    the MinHash Mixer (a row of both tables), the other §5.1 projections with the Mixer, the other §5.2 encoders on
    MinHash. MTOP EN's are joint models chosen on slot exact match, ATIS's and SNIPS's intent models; each is scored
    on the task's validation split. A headline row is tuned and trained with every seed
    (:meth:`~hashlib_core.papers.pnlp_mixer.runs.Resources.row_runs`).
``longer_mtop``
    The MTOP EN length diagnosis (:mod:`~hashlib_core.papers.pnlp_mixer.longer`): the MinHash Mixer and the best
    other MTOP EN encoder of Table 2 retrained at ``longer_mtop_max_epochs``, all else as the tables trained them.
``projections``
    Table 1, merged from the parts: ``table1`` has one row per run, ``table1_curves`` the chosen runs' validation
    curves, ``table1_items`` each chosen run's per-sentence validation correctness (for paired bootstraps).
``architectures``
    Table 2, merged likewise.
``test_intent``
    Table 3 analog: Table 1's ATIS MinHash Mixer (an intent model, tuned on validation, every seed at the chosen
    point) scored on the ATIS test split (multiATIS EN's test sentences) in float32 and 8-bit; ``tuning``: its
    tuning points, each also scored on test after the choice.
``mtop``
    Table 4 analog: one joint MinHash Mixer per language of MTOP (trained on the language's training split at the
    profile's values, chosen on its eval split by exact match, scored on its test split), float32 and 8-bit.
``massive``
    The MASSIVE table (another dataset than the paper's multiATIS): one MinHash Mixer intent model per locale, at
    the profile's values, scored on the locale's test split in float32 and 8-bit.
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
from hashlib_core.papers.pnlp_mixer.comparisons import (MERGES, PART_KINDS, merge_parts, part_enabled, part_name,
                                                        run_part)
from hashlib_core.papers.pnlp_mixer.fit import predict, score
from hashlib_core.papers.pnlp_mixer.longer import LONGER_PARTS, run_longer
from hashlib_core.papers.pnlp_mixer.profiles import (COMPARISON_TASKS, MODEL_SHAPE, PROFILES, TUNED,
                                                     PNLPMixerProfile)
from hashlib_core.papers.pnlp_mixer.runs import Resources, objective

__all__ = ["CHAPTER", "Resources"]


CHAPTER = Chapter("pnlp_mixer", "pNLP-Mixer", PROFILES, resources=Resources)

#: what chooses the rows of Tables 1 and 2, each table's own, and what only the multilingual tables read
_T1_ROWS = ("projections", "headline_projections")
_T2_ROWS = ("encoders", "headline_encoders")
#: Tables 1 and 2's MTOP EN schedule: what only the MTOP EN parts (and the merges) read
_MTOP_COMPARISON = ("comparison_mtop_max_epochs", "comparison_mtop_train_examples", "comparison_mtop_eval_examples",
                    "comparison_mtop_batch_size", "comparison_mtop_lr_schedule", "comparison_mtop_rows")
_COMPARISON = ("comparison_tasks", "snips_max_epochs") + _T1_ROWS + _T2_ROWS + _MTOP_COMPARISON
_LANGUAGES = ("mtop_languages", "massive_languages")
_ATIS_SCHEDULE = ("max_epochs", "patience")
_MTOP_SCHEDULE = ("mtop_max_epochs", "mtop_patience", "mtop_train_examples")
_TUNING = ("tuning", "seeds")
_TRAINING = ("batch_size", "learning_rate", "weight_decay", "dropout", "train_examples", "eval_examples",
             "subset_seed", "seed")


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


@CHAPTER.experiment("sizes", outputs=("sizes",), independent_of=_LANGUAGES + _ATIS_SCHEDULE + _MTOP_SCHEDULE
                    + _TUNING + _TRAINING + tuple(k for k in _COMPARISON if k != "encoders"))
def _sizes(ctx: RunContext) -> dict:
    return {"sizes": encoder_sizes(ctx.profile, ctx.profile.encoders)}


def _part_independent_of(kind: str, task: str) -> tuple[str, ...]:
    """What a part never reads: the multilingual tables' settings, the other tasks' schedules, the other table's
    rows (the MinHash Mixer is a headline row of both tables whatever their settings)."""
    source = task.split("-")[0]
    schedules = {"mtop": _ATIS_SCHEDULE + ("snips_max_epochs",),
                 "atis": _MTOP_SCHEDULE + _MTOP_COMPARISON + ("snips_max_epochs",),
                 "snips": _MTOP_SCHEDULE + _MTOP_COMPARISON}[source]
    # which other rows MTOP trains never changes the MinHash Mixer's part
    rows = {"mixer": _T1_ROWS + _T2_ROWS + ("comparison_mtop_rows",), "projections": _T2_ROWS,
            "architectures": _T1_ROWS}[kind]
    return _LANGUAGES + schedules + rows + ("comparison_tasks",)


def _part(kind: str, task: str):
    def run(ctx: RunContext) -> dict:
        return run_part(ctx.resources, kind, task)
    run.__doc__ = f"The {kind} part of Tables 1-2 on {task} (:func:`~.comparisons.run_part`)."
    return run


def _merge(merge: str):
    def run(ctx: RunContext) -> dict:
        return merge_parts(ctx.evidence(), ctx.profile, merge)
    run.__doc__ = f"Merge the {merge} parts into {MERGES[merge][0]} (:func:`~.comparisons.merge_parts`)."
    return run


def _register_comparisons() -> None:
    """Every part of every comparison task (enabled when the profile compares on the task and the part has rows),
    then the two merges, each reading the MinHash Mixer's parts and its own."""
    outputs: dict[str, tuple[str, ...]] = {}
    for task in COMPARISON_TASKS:
        for kind in PART_KINDS:
            name = part_name(kind, task)
            outputs[name] = (f"{name}_runs", f"{name}_curves", f"{name}_items")
            CHAPTER.experiment(name, outputs=outputs[name], independent_of=_part_independent_of(kind, task),
                               when=lambda profile, k=kind, t=task: part_enabled(profile, k, t))(_part(kind, task))
    for merge, (stem, _, kind) in MERGES.items():
        reads = tuple(o for name, outs in outputs.items() if name.startswith(("mixer_", f"{kind}_")) for o in outs)
        CHAPTER.experiment(merge, outputs=(stem, f"{stem}_curves", f"{stem}_items"), reads=reads,
                           independent_of=_LANGUAGES + (_T2_ROWS if kind == "projections" else _T1_ROWS))(
            _merge(merge))


_register_comparisons()


def _longer_enabled(profile: PNLPMixerProfile) -> bool:
    return (profile.longer_mtop_max_epochs > profile.comparison_mtop_epochs()
            and part_enabled(profile, "architectures", "mtop-en"))


@CHAPTER.experiment("longer_mtop", outputs=("longer_mtop", "longer_mtop_curves", "longer_mtop_items"),
                    when=_longer_enabled, owns=("longer_mtop_max_epochs",),
                    reads=tuple(f"{part}_{s}" for part in LONGER_PARTS for s in ("runs", "curves", "items")),
                    independent_of=_LANGUAGES + _ATIS_SCHEDULE + _T1_ROWS + ("comparison_tasks", "snips_max_epochs"))
def _longer_mtop(ctx: RunContext) -> dict:
    """The MTOP EN length diagnosis (:func:`~hashlib_core.papers.pnlp_mixer.longer.run_longer`)."""
    return run_longer(ctx.resources, ctx.evidence())


def test_rows(res: Resources, task_name: str, seed_offset: int = 0,
              point: tuple[float, float, float] | None = None) -> list[dict[str, Any]]:
    """Test scores of the task's MinHash Mixer (trained with the profile's seed plus ``seed_offset`` at the tuning
    ``point``, the profile's values when None) in float32 and 8-bit, with sizes and the agreement of the two
    precisions' predictions. An intent model (ATIS, MASSIVE) is scored on intents and sized without its slot head
    (untrained, unused: see :func:`~hashlib_core.papers.pnlp_mixer.joint.intent_modules`); a joint model (MTOP) on
    intents and slots, its agreement counting a sentence only when its intent and every tag agree."""
    from hashlib_core.papers.pnlp_mixer.data import UNSEEN
    from hashlib_core.papers.pnlp_mixer.joint import intent_modules
    from hashlib_core.papers.pnlp_mixer.metrics import intent_accuracy, intent_errors
    from hashlib_core.papers.pnlp_mixer.quantization import model_size_bytes, quantize_int8

    intent_only = objective(task_name) == "intent"
    point = point or res.profile.tuning_points()[0]
    model, summary = res.trained(task_name, seed_offset=seed_offset, point=point)
    task, projector = res.task(task_name), res.projector()
    cpu_model = model.to("cpu")
    # what is counted: the whole joint model, or for an intent model the modules it uses (its encoder and intent
    # head). Its intents are predicted by the joint model, whose intent logits are those of the counted modules.
    counted = intent_modules(cpu_model) if intent_only else cpu_model
    parameters = sum(q.numel() for q in counted.parameters())
    rows, preds = [], {}
    for precision, m, c in (("float32", cpu_model, counted),
                            ("int8", quantize_int8(cpu_model), quantize_int8(counted) if intent_only else None)):
        intents, slots = predict(m, projector, task.test)
        preds[precision] = intents if intent_only else list(zip(intents, slots))
        row = {"task": task_name, "objective": objective(task_name), "seed": res.profile.seed + seed_offset,
               **dict(zip(TUNED, point)), "precision": precision, "train_sentences": summary["train_sentences"],
               "test_sentences": len(task.test), "size_bytes": model_size_bytes(c if c is not None else m),
               "parameters": parameters, "epochs": summary["epochs"], "best_epoch": summary["best_epoch"],
               "max_epochs": res.schedule(task_name)[0], "wall_time_s": summary["wall_time_s"]}
        if intent_only:
            row.update(val_intent_acc=summary["val_intent_acc"], intent_acc=intent_accuracy(intents, task.test.intents),
                       **intent_errors(intents, task.test.intents, task.intent_names, UNSEEN))
        else:
            row.update(val_exact_match=summary["val_exact_match"],
                       **score(intents, slots, task.test, task.slot_names))
        rows.append(row)
    same = [a == b for a, b in zip(preds["float32"], preds["int8"])]
    for row in rows:
        row["agreement_with_float_%"] = 100.0 * (1.0 if row["precision"] == "float32" else sum(same) / len(same))
    model.to(res.ctx.device)
    return rows


@CHAPTER.experiment("test_intent", outputs=("table3_intent", "tuning"),
                    independent_of=_LANGUAGES + _MTOP_SCHEDULE + _COMPARISON)
def _test_intent(ctx: RunContext) -> dict:
    """The test table's intent model: Table 1's ATIS MinHash Mixer, tuned on validation over the profile's points
    (:func:`tune`), trained once per seed at the chosen point (the first seed's model being the tuning run's), each
    scored on the test intents."""
    res: Resources = ctx.resources
    tuning = tune(res)
    chosen = res.chosen_point("atis")
    return {"tuning": tuning,
            "table3_intent": pd.DataFrame([r for offset in range(ctx.profile.seeds)
                                           for r in test_rows(res, "atis", seed_offset=offset, point=chosen)])}


def tune(res: Resources, task_name: str = "atis") -> pd.DataFrame:
    """The MinHash Mixer trained at each of the profile's tuning points (the profile's seed) and chosen on the
    task's validation split only (:meth:`~hashlib_core.papers.pnlp_mixer.runs.Resources.chosen_point`): one row per
    point, ``chosen`` marking it. Every point's float32 model is also scored on the test split
    (``test_intent_acc``), after the choice and never used for it: it shows whether validation differences of a few
    sentences carry over to test."""
    from hashlib_core.papers.pnlp_mixer.metrics import intent_accuracy

    chosen = res.chosen_point(task_name)
    test = res.task(task_name).test
    rows = []
    for point in res.profile.tuning_points():
        model, summary = res.trained(task_name, point=point)
        rows.append({**dict(zip(TUNED, point)), "seed": res.profile.seed, "epochs": summary["epochs"],
                     "best_epoch": summary["best_epoch"], "max_epochs": res.schedule(task_name)[0],
                     "val_intent_acc": summary["val_intent_acc"], "val_loss": summary["val_loss"],
                     "wall_time_s": summary["wall_time_s"], "chosen": point == chosen,
                     "test_intent_acc": intent_accuracy(predict(model, res.projector(), test)[0], test.intents)})
    return pd.DataFrame(rows)


@CHAPTER.experiment("mtop", outputs=("table4",),
                    independent_of=_ATIS_SCHEDULE + _TUNING + _COMPARISON + ("massive_languages",))
def _mtop(ctx: RunContext) -> dict:
    res: Resources = ctx.resources
    return {"table4": pd.DataFrame([r for lang in res.profile.mtop_languages for r in test_rows(res, f"mtop-{lang}")])}


@CHAPTER.experiment("massive", outputs=("massive",),
                    independent_of=_ATIS_SCHEDULE + _TUNING + _COMPARISON + ("mtop_languages",))
def _massive(ctx: RunContext) -> dict:
    res: Resources = ctx.resources
    return {"massive": pd.DataFrame([r for lang in res.profile.massive_languages
                                     for r in test_rows(res, f"massive-{lang}")])}


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
