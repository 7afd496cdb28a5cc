"""Training a pNLP-Mixer on one task with early stopping, and scoring it (§4 "Training Details").

The shared loop (:func:`hashlib_core.training.train`) runs the optimisation; after every epoch the model is scored
on the validation split and the best weights are kept (ties: :attr:`FitSettings.tie_break`); training stops once
``patience`` epochs bring no improvement (the paper: patience 5) or at ``max_epochs``. Model selection uses the
validation split only, never the test split.
Projection features are computed once per split from the fingerprint cache (no string hashed) and kept as int8
(every projection's values are small integers: Bloom counts, bits, ternary values, signs), so an epoch only
indexes a tensor: a few hundred megabytes for SNIPS, and a GPU run is not held up by the projection.
"""
from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import torch

from hashlib_core.papers.pnlp_mixer.data import UNSEEN, Split, TaskData
from hashlib_core.papers.pnlp_mixer.metrics import exact_match, intent_accuracy, non_o_token_accuracy, slot_f1
from hashlib_core.training import TrainConfig, train

__all__ = ["SELECT_ON", "SCHEDULES", "per_sentence", "FitSettings", "Collator", "EncodedSplit", "encode_split", "mean_loss", "predict", "score", "fit"]


#: what model selection can maximise (:attr:`FitSettings.select_on`)
SELECT_ON = ("intent+exact_match", "intent", "exact_match")
#: learning-rate schedules after the warm-up (:attr:`FitSettings.schedule`)
SCHEDULES = ("linear", "constant")


@dataclass(frozen=True)
class FitSettings:
    """Optimisation of one model: AdamW, a warm-up of ``warmup_epochs``, then ``schedule``, early stopping on
    validation."""

    batch_size: int = 128
    learning_rate: float = 1e-3
    weight_decay: float = 0.01
    max_epochs: int = 20
    patience: int = 5
    warmup_epochs: float = 0.5
    #: the learning rate after the warm-up: "linear" decays it to zero at ``max_epochs`` (so the last epochs take
    #: ever smaller steps and a model is often best at the cap); "constant" keeps it, and early stopping alone ends
    #: training (the paper prints no schedule, only the patience)
    schedule: str = "linear"
    seed: int = 0
    #: model selection on validation: "intent+exact_match" (their mean, for the joint model), "intent" (an
    #: intent model: accuracy alone) or "exact_match" (MTOP's models: slot exact match alone, the score §4 reports)
    select_on: str = "intent+exact_match"
    #: among epochs with the same best score: "first" keeps the earliest; "loss" the one with the lowest validation
    #: loss (the loss the model trains on, over the validation split), and a tie with a lower loss counts as an
    #: improvement for early stopping. Accuracy on a few hundred sentences moves in steps of a few tenths of a
    #: point, so an intent model's epochs often tie.
    tie_break: str = "first"

    def __post_init__(self) -> None:
        if self.select_on not in SELECT_ON:
            raise ValueError(f"select_on must be one of {SELECT_ON}, got {self.select_on!r}")
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {SCHEDULES}, got {self.schedule!r}")
        if self.tie_break not in ("first", "loss"):
            raise ValueError(f"tie_break must be 'first' or 'loss', got {self.tie_break!r}")

    def selection_key(self, scores: dict[str, float], loss: float | None = None) -> tuple[float, ...]:
        """What model selection maximises for validation ``scores`` (and ``loss`` when ``tie_break`` is "loss")."""
        score = {"intent": scores["intent_acc"], "exact_match": scores["exact_match"],
                 "intent+exact_match": (scores["intent_acc"] + scores["exact_match"]) / 2}[self.select_on]
        if self.tie_break == "loss":
            if loss is None:
                raise ValueError("tie_break='loss' needs the validation loss")
            return (score, -loss)
        return (score,)


class Collator:
    """Sentences -> projected features, attention mask, intent ids, slot ids (-100 on padding)."""

    def __init__(self, projector: Callable[[Sequence[Sequence[str]]], dict[str, torch.Tensor]], max_seq_len: int):
        self.projector, self.max_seq_len = projector, max_seq_len

    def __call__(self, items: list[tuple[list[str], int, list[int]]]) -> dict[str, torch.Tensor]:
        batch = dict(self.projector([words for words, _, _ in items]))
        slots = torch.full((len(items), self.max_seq_len), -100, dtype=torch.long)
        for b, (_, _, tags) in enumerate(items):
            tags = [(-100 if t == UNSEEN else t) for t in tags[: self.max_seq_len]]
            slots[b, : len(tags)] = torch.tensor(tags, dtype=torch.long)
        batch["labels"] = torch.tensor([max(i, 0) for _, i, _ in items], dtype=torch.long)
        batch["slot_labels"] = slots
        return batch


def _items(split: Split) -> list[tuple[list[str], int, list[int]]]:
    return list(zip(split.words, split.intents, split.slots))


@dataclass(frozen=True)
class EncodedSplit:
    """A split's projected features ``(N, s, m)`` (int8, or float32 when a value does not fit), attention mask
    ``(N, s)``, intent ids ``(N,)`` and slot ids ``(N, s)`` (-100 on padding and on labels unseen in training)."""

    features: torch.Tensor
    mask: torch.Tensor
    intents: torch.Tensor
    slots: torch.Tensor

    def __len__(self) -> int:
        return self.features.shape[0]

    def batch(self, index: torch.Tensor | slice) -> dict[str, torch.Tensor]:
        return {"input_features": self.features[index].float(), "attention_mask": self.mask[index],
                "labels": self.intents[index], "slot_labels": self.slots[index]}


def encode_split(projector: Callable, split: Split, max_seq_len: int, chunk: int = 512) -> EncodedSplit:
    """Project every sentence of ``split`` once (the same features :class:`Collator` computes per batch)."""
    if len(split) == 0:
        raise ValueError("cannot encode an empty split: it has no sentences")
    collate = Collator(projector, max_seq_len)
    items = _items(split)
    parts = [collate(items[i : i + chunk]) for i in range(0, len(split), chunk)]
    chunks, small = [], True     # each chunk packed to int8 as it comes, while every value so far fits
    for part in parts:
        values = part.pop("input_features")
        packed = values.to(torch.int8)
        small = small and torch.equal(packed.float(), values)
        chunks.append(packed if small else values)
    features = torch.cat(chunks if small else [c.float() for c in chunks])
    return EncodedSplit(features, torch.cat([p["attention_mask"] for p in parts]),
                        torch.cat([p["labels"] for p in parts]), torch.cat([p["slot_labels"] for p in parts]))


class _IndexCollator:
    def __init__(self, data: EncodedSplit) -> None:
        self.data = data

    def __call__(self, indices: list[int]) -> dict[str, torch.Tensor]:
        return self.data.batch(torch.as_tensor(indices))


def mean_loss(model: torch.nn.Module, encoded: EncodedSplit, batch_size: int = 256) -> float:
    """The model's own loss (what it trains on) over an encoded split, averaged over sentences."""
    return _forward(model, encoded, batch_size, want_loss=True)[2]


@torch.no_grad()
def _forward(model: torch.nn.Module, encoded: EncodedSplit, batch_size: int, want_loss: bool
             ) -> tuple[list[int], list[list[int]], float | None]:
    """One pass of ``model`` (in eval mode) over an encoded split: intent ids, per-position slot ids and, with
    ``want_loss``, the model's loss averaged over sentences (labels change the loss, not the logits)."""
    model.eval()
    device = next(model.parameters()).device
    keys = None if want_loss else ("input_features", "attention_mask")
    intents: list[int] = []
    tags: list[list[int]] = []
    total = 0.0
    for start in range(0, len(encoded), batch_size):
        batch = encoded.batch(slice(start, start + batch_size))
        out = model(**{k: v.to(device) for k, v in batch.items() if keys is None or k in keys})
        intents += out.intent_logits.argmax(-1).tolist()
        tags += out.slot_logits.argmax(-1).tolist()
        if want_loss:
            total += float(out.loss) * batch["labels"].shape[0]
    return intents, tags, (total / len(encoded) if want_loss else None)


@torch.no_grad()
def predict(model: torch.nn.Module, projector: Callable, split: Split, batch_size: int = 256, *,
            encoded: EncodedSplit | None = None) -> tuple[list[int], list[list[int]]]:
    """Predicted intent ids and per-word slot ids; words beyond ``max_seq_len`` get tag 0 (``O``). ``encoded``:
    the split's features computed once (:func:`encode_split`) instead of projecting every call; without it the split
    is encoded here (``projector`` must return ``input_features`` and ``attention_mask``, as
    :class:`~hashlib_core.papers.pnlp_mixer.projection.SentenceProjector` does; ``model.config.max_seq_len`` sets
    the padding). An empty split gives two empty lists."""
    return _predict(model, projector, split, batch_size, encoded)[:2]


def _predict(model: torch.nn.Module, projector: Callable, split: Split, batch_size: int = 256,
             encoded: EncodedSplit | None = None, want_loss: bool = False
             ) -> tuple[list[int], list[list[int]], float | None]:
    """:func:`predict`, and with ``want_loss`` (``encoded`` needed) the mean loss from the same forward pass."""
    if encoded is None:
        if want_loss:
            raise ValueError("the validation loss needs the encoded split (its labels): pass encoded=")
        if len(split) == 0:
            return [], [], None
        encoded = encode_split(projector, split, model.config.max_seq_len, chunk=batch_size)
    if len(encoded) != len(split):
        raise ValueError(f"encoded holds {len(encoded)} sentences but the split {len(split)}: encode this split "
                         f"with encode_split(projector, split, max_seq_len)")
    intents, tags, loss = _forward(model, encoded, batch_size, want_loss)
    slots = [(t + [0] * len(w))[: len(w)] for w, t in zip(split.words, tags)]
    return intents, slots, loss


def score(intents: Sequence[int], slots: Sequence[Sequence[int]], split: Split, slot_names: Sequence[str]
          ) -> dict[str, float]:
    """Intent accuracy, slot exact match, seqeval slot F1 and the community's non-O token accuracy (all x 100)."""
    def names(seqs):
        return [[slot_names[t] if t != UNSEEN else "B-unseen" for t in seq] for seq in seqs]

    gold_names, pred_names = names(split.slots), names(slots)
    return {"intent_acc": intent_accuracy(intents, split.intents),
            "exact_match": exact_match(slots, split.slots),
            "slot_f1": slot_f1(pred_names, gold_names),
            "token_acc": non_o_token_accuracy(pred_names, gold_names)}


def per_sentence(intents: Sequence[int], slots: Sequence[Sequence[int]], split: Split) -> dict[str, str]:
    """Each sentence's correctness as a string of ``0``/``1`` (one character per sentence, in split order):
    ``intent`` (the predicted intent is the gold one) and ``exact_match`` (every word's tag is the gold one). Their
    means are :func:`score`'s intent accuracy and exact match; kept per sentence, they let a paired bootstrap
    resample the sentences (:mod:`hashlib_core.claims`)."""
    if len(intents) != len(split) or len(slots) != len(split):
        raise ValueError(f"{len(intents)} intents and {len(slots)} tag sequences for {len(split)} sentences")
    intent = "".join("1" if p == g else "0" for p, g in zip(intents, split.intents))
    exact = "".join("1" if list(p) == list(g) else "0" for p, g in zip(slots, split.slots))
    return {"intent": intent, "exact_match": exact}


def fit(model: torch.nn.Module, projector: Callable, task: TaskData, settings: FitSettings, *,
        device: Any = None, progress: bool = False, train_examples: int = 0, eval_examples: int = 0,
        subset_seed: int = 0) -> tuple[torch.nn.Module, dict[str, Any]]:
    """Train ``model`` on ``task.train`` with early stopping on ``task.validation``; returns the best model (by the
    mean of validation intent accuracy and exact match, or by intent accuracy: ``settings.select_on``) and a
    summary: epochs run, best epoch, validation scores of the best model, the per-epoch curve, the wall time and
    ``items``: the best model's per-sentence validation correctness (:func:`per_sentence`). ``train_examples`` and
    ``eval_examples`` (0: all) cap the splits by a random sample drawn with ``subset_seed``
    (:meth:`~hashlib_core.papers.pnlp_mixer.data.Split.sample`): the same sentences for every model given the same
    seed."""
    train_split = task.train.sample(train_examples, subset_seed)
    val_split = task.validation.sample(eval_examples, subset_seed)
    encoded = encode_split(projector, train_split, model.config.max_seq_len)
    val_encoded = encode_split(projector, val_split, model.config.max_seq_len)
    loader = torch.utils.data.DataLoader(list(range(len(encoded))), batch_size=settings.batch_size, shuffle=True,
                                         collate_fn=_IndexCollator(encoded))
    per_epoch = len(loader)
    config = TrainConfig(max_steps=per_epoch * settings.max_epochs, learning_rate=settings.learning_rate,
                         weight_decay=settings.weight_decay,
                         scheduler={"linear": "linear", "constant": "constant_with_warmup"}[settings.schedule],
                         warmup_steps=int(settings.warmup_epochs * per_epoch), log_every=per_epoch,
                         seed=settings.seed)
    curve: list[dict[str, float]] = []
    best: dict[str, Any] = {"selection": (-math.inf,)}

    def after_step(step: int, loss: float) -> bool:
        if step % per_epoch:
            return False
        want_loss = settings.tie_break == "loss"
        intents, slots, val_loss = _predict(model, projector, val_split, encoded=val_encoded, want_loss=want_loss)
        scores = score(intents, slots, val_split, task.slot_names)
        if want_loss:
            scores["loss"] = val_loss
        model.train()
        selection = settings.selection_key(scores, scores.get("loss"))
        curve.append({"epoch": step // per_epoch, "loss": loss, **{f"val_{k}": v for k, v in scores.items()}})
        if selection > best["selection"]:
            best.update(selection=selection, epoch=step // per_epoch, scores=scores,
                        state=copy.deepcopy(model.state_dict()), items=per_sentence(intents, slots, val_split))
        return step // per_epoch - best["epoch"] >= settings.patience

    start = time.perf_counter()
    result = train(model, loader, config, on_step=after_step, device=device, progress=progress)
    model.load_state_dict(best["state"])
    model.eval()
    summary = {"epochs": int(math.ceil(result.steps / per_epoch)), "best_epoch": best["epoch"],
               "train_sentences": len(train_split), "validation_sentences": len(val_split),
               **{f"val_{k}": v for k, v in best["scores"].items()},
               "wall_time_s": time.perf_counter() - start, "curve": curve, "items": best["items"]}
    return model, summary

