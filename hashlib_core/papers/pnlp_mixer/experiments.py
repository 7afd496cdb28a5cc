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
    validation over the profile's ``test_tuning`` points (``tuning``); test intent accuracy in float32 and 8-bit.
``mtop``
    Table 4 analog: one MinHash Mixer per language of the staged MTOP subset (trained on 90% of its dev items,
    selected on the rest, scored on its test items), float32 and 8-bit.
``latency``
    The footnote's latency: batch 1, one thread, ``latency_samples`` ATIS test sentences; projection alone with and
    without the fingerprint cache, model alone, total.
"""
from __future__ import annotations

from typing import Any

import pandas as pd

from hashlib_core.chapter import Chapter, RunContext
from hashlib_core.papers.pnlp_mixer.fit import FitSettings, fit, predict, score
from hashlib_core.papers.pnlp_mixer.profiles import PROFILES, TUNED, PNLPMixerProfile

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
    the intent-only model, scored on intents alone (its slot head is untrained), trained with the profile's seed
    plus ``seed_offset`` and the tuning ``point`` (learning rate, weight decay, dropout; the profile's when None)."""
    from hashlib_core.papers.pnlp_mixer.data import UNSEEN
    from hashlib_core.papers.pnlp_mixer.metrics import intent_accuracy, intent_errors
    from hashlib_core.papers.pnlp_mixer.quantization import model_size_bytes, quantize_int8

    intent_only = objective == "intent"
    model, summary = res.trained(task_name, schedule=schedule, objective=objective, seed_offset=seed_offset,
                                 point=point)
    task, projector = res.task(task_name), res.projector()
    cpu_model = model.to("cpu")
    rows, preds = [], {}
    for precision, m in (("float32", cpu_model), ("int8", quantize_int8(cpu_model))):
        intents, slots = predict(m, projector, task.test)
        preds[precision] = intents if intent_only else (intents, slots)
        row = {"task": task_name, **({"objective": objective, "seed": res.profile.seed + seed_offset,
                                      **dict(zip(TUNED, point or res.profile.tuning_points()[0]))}
                                     if intent_only else {}), "precision": precision,
               "test_sentences": len(task.test), "size_bytes": model_size_bytes(m), "parameters": summary["parameters"],
               "epochs": summary["epochs"], "best_epoch": summary["best_epoch"]}
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
