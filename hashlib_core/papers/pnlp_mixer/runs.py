"""What every experiment of one pNLP-Mixer run shares (:class:`Resources`): the vocabulary, projectors, tasks and
trained models, and the protocol of a row of Tables 1 and 2 (:meth:`Resources.row_runs`: tuned on validation, then
trained with every seed).

Each task decides what its models learn and how they are chosen:

* **ATIS, SNIPS and MASSIVE**: intent models (the slot loss off, as the paper trains its multiATIS models), chosen
  on validation intent accuracy (ties: the lower validation loss);
* **MTOP**: joint models (intents and slots), chosen on validation slot exact match, the score §4 reports for MTOP.

ATIS and SNIPS train with the profile's ``max_epochs`` and ``patience``, MTOP and MASSIVE with ``mtop_max_epochs``
and ``mtop_patience`` and at most ``mtop_train_examples`` training sentences, all at ``batch_size`` with the
learning rate decaying linearly to zero at the cap; Tables 1 and 2's MTOP EN models (``comparison=True``) may have
their own sample, batch and schedule (``comparison_mtop_*``).
"""
from __future__ import annotations

from typing import Any

from hashlib_core.chapter import RunContext
from hashlib_core.papers.pnlp_mixer.data import task_language
from hashlib_core.papers.pnlp_mixer.fit import FitSettings, fit
from hashlib_core.papers.pnlp_mixer.profiles import TUNED, PNLPMixerProfile

__all__ = ["Resources", "objective", "run_row"]


def objective(task_name: str) -> str:
    """``"joint"`` for MTOP's models (intents and slots, chosen on exact match), ``"intent"`` for the others."""
    return "joint" if task_language(task_name)[0] == "mtop" else "intent"


def run_row(task: str, projection: str, encoder: str, point: tuple[float, float, float], seed: int,
            summary: dict[str, Any], max_epochs: int, chosen: bool, headline: bool) -> dict[str, Any]:
    """One training run as a row of Table 1 or 2: what was trained, at which point and seed, whether it is the
    chosen point's, how long it ran against its cap (``capped``: best at the cap, so maybe still improving), and its
    validation scores."""
    return {"task": task, "projection": projection, "encoder": encoder, **dict(zip(TUNED, point)), "seed": seed,
            "headline": headline, "chosen": chosen, "max_epochs": max_epochs,
            "capped": int(summary["best_epoch"]) >= max_epochs,
            **{k: v for k, v in summary.items() if k not in ("curve", "items")}}


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

    def schedule(self, task_name: str, comparison: bool = False) -> tuple[int, int, int]:
        """``(max_epochs, patience, train_examples)`` of ``task_name``'s models (0 training examples: all);
        ``comparison``: Tables 1 and 2's models (an MTOP one at ``comparison_mtop_max_epochs``, and capped by
        ``comparison_mtop_train_examples`` too)."""
        p = self.profile
        source = task_language(task_name)[0]
        if source in ("mtop", "massive"):
            caps = [n for n in (p.train_examples, p.mtop_train_examples) if n > 0]
            epochs = p.mtop_max_epochs
            if comparison and source == "mtop":
                caps += [p.comparison_mtop_train_examples] if p.comparison_mtop_train_examples else []
                epochs = p.comparison_mtop_epochs()
            return epochs, p.mtop_patience, min(caps) if caps else 0
        epochs = p.snips_max_epochs if source == "snips" and p.snips_max_epochs else p.max_epochs
        return epochs, p.patience, p.train_examples

    def eval_examples(self, task_name: str, comparison: bool = False) -> int:
        """How many of ``task_name``'s validation sentences choose its models (0: all): ``eval_examples``, and for
        Tables 1 and 2's MTOP models (``comparison``) at most ``comparison_mtop_eval_examples`` too."""
        p = self.profile
        caps = [p.eval_examples] if p.eval_examples else []
        if comparison and task_language(task_name)[0] == "mtop" and p.comparison_mtop_eval_examples:
            caps.append(p.comparison_mtop_eval_examples)
        return min(caps) if caps else 0

    def settings(self, task_name: str, seed_offset: int = 0, learning_rate: float | None = None,
                 weight_decay: float | None = None, comparison: bool = False,
                 max_epochs: int | None = None) -> FitSettings:
        """The optimisation of ``task_name``'s models (:meth:`schedule`, :func:`objective`); ``learning_rate``,
        ``weight_decay``: a tuning point's instead of the profile's; ``comparison``: Tables 1 and 2's models (an
        MTOP one at ``comparison_mtop_batch_size`` and ``comparison_mtop_lr_schedule``); ``max_epochs``: another cap
        than the schedule's (a linear schedule then decays to zero at it)."""
        p = self.profile
        epochs, patience, _ = self.schedule(task_name, comparison)
        epochs = epochs if max_epochs is None else max_epochs
        joint = objective(task_name) == "joint"
        own = comparison and task_language(task_name)[0] == "mtop"
        return FitSettings(batch_size=(p.comparison_mtop_batch_size or p.batch_size) if own else p.batch_size,
                           schedule=p.comparison_mtop_lr_schedule if own else "linear",
                           learning_rate=p.learning_rate if learning_rate is None else learning_rate,
                           weight_decay=p.weight_decay if weight_decay is None else weight_decay,
                           max_epochs=epochs, patience=patience, seed=p.seed + seed_offset,
                           select_on="exact_match" if joint else "intent", tie_break="first" if joint else "loss")

    def trained(self, task_name: str, projection: str = "minhash", encoder: str = "mixer", seed_offset: int = 0,
                point: tuple[float, float, float] | None = None, comparison: bool = False,
                max_epochs: int | None = None) -> tuple[Any, dict]:
        """The model of (task, projection, encoder) trained with early stopping, and its summary (trained once);
        ``seed_offset``: initialised and trained with the profile's seed plus it; ``point``: a tuning point's
        (learning rate, weight decay, dropout) instead of the profile's; ``comparison``: as Tables 1 and 2 train
        it (:meth:`settings`); ``max_epochs``: at another cap than the schedule's (:meth:`settings`)."""
        from hashlib_core.papers.pnlp_mixer.joint import PNLPMixerForIntentAndSlots
        from hashlib_core.profiles import seed_everything

        p = self.profile
        lr, wd, dropout = point if point is not None else p.tuning_points()[0]
        # Tables 1 and 2 train an ATIS or SNIPS model as every other experiment does (the test table reuses it)
        comparison = comparison and task_language(task_name)[0] == "mtop"
        key = (task_name, projection, encoder, seed_offset, lr, wd, dropout, comparison, max_epochs)
        if key not in self._trained:
            task = self.task(task_name)
            seed_everything(p.seed + seed_offset)
            config = self.config(task, encoder, projection, dropout)
            config.slot_loss_weight = 1.0 if objective(task_name) == "joint" else 0.0
            model = PNLPMixerForIntentAndSlots(config).to(self.ctx.device)
            train_examples = self.schedule(task_name, comparison)[2]
            self.ctx.log(f"training {encoder} / {projection} on {task_name} ({train_examples or len(task.train)} "
                         f"sentences, {objective(task_name)}, seed {p.seed + seed_offset}, lr {lr:g}, wd {wd:g}, "
                         f"dropout {dropout:g})")
            model, summary = fit(model, self.projector(projection), task,
                                 self.settings(task_name, seed_offset, lr, wd, comparison, max_epochs),
                                 device=self.ctx.device,
                                 progress=False, train_examples=train_examples,
                                 eval_examples=self.eval_examples(task_name, comparison),
                                 subset_seed=p.subset_seed)
            summary["parameters"] = sum(q.numel() for q in model.parameters())
            self._trained[key] = (model, summary)
        return self._trained[key]

    def chosen_point(self, task_name: str, projection: str = "minhash", encoder: str = "mixer",
                     comparison: bool = False) -> tuple[float, float, float]:
        """The tuning point of a row chosen on validation (the profile's values for a row that is not headline);
        ``comparison``: among Tables 1 and 2's models (:meth:`settings`)."""
        points = self.profile.tuning_points()
        if not self.profile.headline(projection, encoder):
            return points[0]
        select = self.settings(task_name, comparison=comparison)
        keys = []
        for i, point in enumerate(points):
            summary = self.trained(task_name, projection, encoder, 0, point, comparison)[1]
            scores = {k[4:]: v for k, v in summary.items() if k.startswith("val_")}
            keys.append((select.selection_key(scores, scores.get("loss")), -i))
        return points[max(range(len(points)), key=lambda i: keys[i])]

    def row_runs(self, task_name: str, projection: str, encoder: str) -> list[tuple[dict[str, Any], dict]]:
        """Every run of a row of Tables 1 and 2, as ``(row, summary)``: a headline row at every tuning point with
        the first seed, then the other seeds at the chosen point; any other row once, at the profile's values."""
        p = self.profile
        headline = p.headline(projection, encoder)
        points = p.tuning_points() if headline else p.tuning_points()[:1]
        chosen = self.chosen_point(task_name, projection, encoder, comparison=True)
        cap = self.schedule(task_name, comparison=True)[0]
        out = []
        for point in points:
            summary = self.trained(task_name, projection, encoder, 0, point, comparison=True)[1]
            out.append((run_row(task_name, projection, encoder, point, p.seed, summary, cap, point == chosen,
                                headline), summary))
        for offset in range(1, p.seeds if headline else 1):
            summary = self.trained(task_name, projection, encoder, offset, chosen, comparison=True)[1]
            out.append((run_row(task_name, projection, encoder, chosen, p.seed + offset, summary, cap, True,
                                headline), summary))
        return out
