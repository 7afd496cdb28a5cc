"""Fine-tuning with early stopping on a held-out split (:func:`hashlib_core.glue.finetune` with ``validation``):
the best epoch's weights are kept, patience stops training, the outcome is cached, per-item predictions come back."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from hashlib_core import glue, glue_protocol


class Toy(nn.Module):
    """Logits from a learned vector per token id: learns 'the label is the first token'."""

    def __init__(self) -> None:
        super().__init__()
        self.table = nn.Embedding(4, 2)

    def forward(self, input_ids, attention_mask=None, labels=None):
        logits = self.table(input_ids[:, 0])
        out = {"logits": logits}
        if labels is not None:
            out["loss"] = nn.functional.cross_entropy(logits, labels)
        return type("Out", (), out)()


def encode(texts):
    return {"input_ids": torch.tensor([[int(t.split()[0])] for t in texts])}


def data(n, seed, noise=0.0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, n)
    shown = np.where(rng.random(n) < noise, 1 - labels, labels)       # noisy labels cap what can be learned
    return [f"{y} x" for y in shown], labels


def test_early_stopping_keeps_the_best_epoch_and_returns_predictions(tmp_path):
    torch.manual_seed(0)
    train, validation, dev = data(64, 1), data(32, 2), data(40, 3)
    row, preds = glue.finetune(Toy(), encode, "sst2", train, dev, epochs=30, batch_size=16, learning_rate=0.05,
                               seed=0, validation=validation, patience=2, return_predictions=True)
    assert row["validation_score"] == 100.0 and row["score"] == 100.0
    # perfect from some epoch on: two epochs without improvement stop the run long before the cap
    assert row["epochs_run"] == row["best_epoch"] + 2 < 30 and row["max_epochs"] == 30
    assert row["steps"] == row["epochs_run"] * 4
    assert preds.dtype.kind == "i" and (preds == dev[1]).all() and len(preds) == 40


def test_the_outcome_is_cached_and_reused_without_training(tmp_path, monkeypatch):
    train, validation, dev = data(32, 1), data(16, 2), data(20, 3)
    kwargs = dict(epochs=3, batch_size=8, learning_rate=0.05, seed=0, validation=validation, patience=1,
                  output_dir=tmp_path / "run", return_predictions=True)
    first = glue.finetune(Toy(), encode, "sst2", train, dev, **kwargs)
    import hashlib_core.training as training

    monkeypatch.setattr(training, "train", lambda *a, **k: pytest.fail("a finished run must not train again"))
    again = glue.finetune(Toy(), encode, "sst2", train, dev, **kwargs)
    assert list(again[0]) == list(first[0]) and again[0] == first[0]
    assert (again[1] == first[1]).all()
    monkeypatch.undo()
    other_dev = data(24, 4)                                 # other dev items: the cached predictions do not apply
    third = glue.finetune(Toy(), encode, "sst2", train, other_dev, **kwargs)
    assert len(third[1]) == 24 and third[0]["dev_examples"] == 24
    trained = []
    real = training.train
    monkeypatch.setattr(training, "train", lambda *a, **k: trained.append(1) or real(*a, **k))
    glue.finetune(Toy(), encode, "sst2", train, other_dev, **{**kwargs, "learning_rate": 0.01})
    glue.finetune(Toy(), encode, "sst2", data(32, 9), other_dev, **kwargs)
    assert trained == [1, 1]                                # another rate, other training data: trained again


def test_held_out_splits_the_training_split_without_overlap(mirror):
    (train_t, train_y), (val_t, val_y) = glue.held_out("rte", train_limit=500, validation=200, seed=0)
    assert len(val_t) == 200 and len(train_t) == 500 and len(train_y) == 500
    assert not set(map(tuple, train_t)) & set(map(tuple, val_t))
    everything, _ = glue.glue_split("rte", "train", 0, 0)
    assert val_t == everything[:200] and train_t == everything[200:700]
    with pytest.raises(ValueError, match="cannot hold out"):
        glue.held_out("rte", 0, len(everything))
    with pytest.raises(ValueError, match="positive number"):
        glue.held_out("rte", 0, 0)
    with pytest.raises(ValueError, match="positive number"):
        glue.held_out("rte", 0, True)
    with pytest.raises(ValueError, match="train_limit must be an int >= 0"):
        glue.held_out("rte", -5, 100)


def test_held_out_parts_choose_report_and_train_apart(mirror):
    """Three parts of one seeded order: selection first, report next, the rest to train on less every example whose
    text equals a held-out one (SST-2 repeats phrases; MRPC's texts are pairs), at most train_limit of them."""
    everything, labels = glue.glue_split("sst2", "train", 0, 0)
    parts = glue_protocol.held_out_parts("sst2", selection=100, report=300, seed=0)
    assert parts["selection"][0] == everything[:100] and parts["report"][0] == everything[100:400]
    assert parts["report"][1].tolist() == labels[100:400].tolist()
    held = set(everything[:400])
    kept = [t for t in everything[400:] if t not in held]
    assert parts["train"][0] == kept and len(kept) < len(everything) - 400        # SST-2 repeats some phrases
    assert dict(zip(parts["train"][0], parts["train"][1].tolist())).items() <= \
        dict(zip(everything, labels.tolist())).items()
    assert glue_protocol.held_out_parts("sst2", 100, 300, train_limit=50, seed=0)["train"][0] == kept[:50]
    none = glue_protocol.held_out_parts("sst2", selection=100, report=0, seed=0)
    assert none["report"][0] == [] and none["selection"][0] == everything[:100]
    assert none["train"][0] == [t for t in everything[100:] if t not in set(everything[:100])]
    pairs = glue_protocol.held_out_parts("mrpc", 50, 50, seed=1)
    assert isinstance(pairs["train"][0][0], tuple) and not set(pairs["train"][0]) & set(pairs["report"][0])
    with pytest.raises(ValueError, match="leaves none to train on"):
        glue_protocol.held_out_parts("rte", 2000, 1000)
    for bad in ({"selection": 0, "report": 10}, {"selection": 10, "report": True}, {"selection": 10, "report": -1},
                {"selection": 10, "report": 10, "train_limit": -1}):
        with pytest.raises(ValueError, match="must be an int"):
            glue_protocol.held_out_parts("rte", **bad)


def test_predictions_are_classes_or_scores():
    assert glue.predictions("sst2", np.array([[0.1, 0.9], [2.0, -1.0]])).tolist() == [1, 0]
    assert glue.predictions("stsb", np.array([[3.5], [1.25]])).tolist() == [3.5, 1.25]


def test_score_train_adds_the_fit_on_the_training_examples_and_keys_the_cache(tmp_path, monkeypatch):
    torch.manual_seed(0)
    train, validation, dev = data(64, 1), data(32, 2), data(40, 3)
    kwargs = dict(epochs=30, batch_size=16, learning_rate=0.05, seed=0, validation=validation, patience=2,
                  output_dir=tmp_path / "run")
    plain = glue.finetune(Toy(), encode, "sst2", train, dev, **kwargs)
    assert "train_score" not in plain
    torch.manual_seed(0)
    model = Toy()
    row = glue.finetune(model, encode, "sst2", train, dev, **kwargs, score_train=True)
    # a run without train_score in its outcome is not reused for one that asks for it: it trained again
    expected = 100.0 * glue.glue_metric("sst2", glue.predict(model, encode, train[0]), train[1])["score"]
    assert row["train_score"] == pytest.approx(expected) and row["train_score"] == 100.0
    import hashlib_core.training as training

    monkeypatch.setattr(training, "train", lambda *a, **k: pytest.fail("a finished run must not train again"))
    assert glue.finetune(Toy(), encode, "sst2", train, dev, **kwargs, score_train=True) == row


def test_a_cut_outcome_names_its_file_and_the_fix(tmp_path):
    from hashlib_core.checkpoints import CheckpointError

    train, validation, dev = data(32, 1), data(16, 2), data(20, 3)
    kwargs = dict(epochs=1, batch_size=8, learning_rate=0.05, seed=0, validation=validation, patience=1,
                  output_dir=tmp_path / "run")
    glue.finetune(Toy(), encode, "sst2", train, dev, **kwargs)
    outcome = tmp_path / "run" / "outcome.json"
    outcome.write_text(outcome.read_text()[:40])
    with pytest.raises(CheckpointError, match=r"outcome.json \(the outcome of a fine-tuning run\) does not read as "
                                              r"JSON .*Delete it"):
        glue.finetune(Toy(), encode, "sst2", train, dev, **kwargs)
