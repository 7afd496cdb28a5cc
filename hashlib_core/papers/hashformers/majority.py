"""Why the BERT baselines stay at the majority class on CoLA and MRPC: three measurements, each isolating one cause.

1. **What pre-training taught.** A model that ignores the context of a masked piece predicts, at best, the corpus's
   unigram distribution: its loss is that distribution's entropy. :func:`mlm_floor` sets BERT-MLM's final masked-piece
   loss beside that floor; a loss near it says pre-training taught the encoder little beyond piece frequencies.
2. **Fine-tuning data, and what the pre-trained weights add.** :func:`diagnosis_runs` fine-tunes BERT-MLM as Table 1
   does (its chosen learning rate, the first seed, early stopping on the held-out part) on the profile's number of
   training examples and on more (``diag_train_examples``; 0: every one not held out), from its pre-trained weights
   and from a random initialisation, and scores each run on the examples it trained on as well as on the held-out
   part and dev. A model that fits its training examples but stays at the majority class on held-out data has
   memorised, not learnt the task; the same scores with and without pre-training say the pre-trained weights add
   nothing the task can use.
3. **What the data alone allow.** :func:`bag_reference`: a logistic regression on bags of BPE pieces (for a pair:
   each sentence's bag and the pieces they share), no pre-training at all, its regularisation chosen on the held-out
   part, scored on dev: the level a model reaches from the words alone.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from hashlib_core.chapter import RunContext
from hashlib_core.glue import finetune, glue_metric, held_out, majority_score, normalize_task, num_labels
from hashlib_core.papers.hashformers.data import Resources
from hashlib_core.papers.hashformers.finetuning import Encoder
from hashlib_core.papers.hashformers.pretraining import classifier
from hashlib_core.papers.hashformers.profiles import ModelSpec
from hashlib_core.profiles import seed_everything

__all__ = ["INITIALISATIONS", "unigram_entropy", "mlm_floor", "diagnosis_runs", "bag_features", "bag_reference"]

#: the two starting points of the diagnosis's fine-tuning runs
INITIALISATIONS = ("pre-trained", "random")
#: the inverse regularisation strengths the bag-of-pieces reference chooses among (on the held-out part)
BAG_C = (0.1, 1.0, 10.0)


def unigram_entropy(ids: np.ndarray) -> float:
    """Entropy (nats) of the empirical unigram distribution of ``ids`` (non-negative ints): the loss of the best
    prediction that ignores context."""
    ids = np.asarray(ids)
    if ids.ndim != 1 or not len(ids) or not np.issubdtype(ids.dtype, np.integer) or ids.min() < 0:
        raise ValueError("unigram_entropy takes a non-empty 1-D array of non-negative integer ids")
    counts = np.bincount(ids)
    p = counts[counts > 0] / len(ids)
    return float(-(p * np.log(p)).sum())


def mlm_floor(res: Resources, pretraining: dict[str, Any], curve: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """BERT-MLM's masked-piece loss at the end of pre-training (the mean of its last three logged losses; the last
    one alone is a single batch's) beside the no-context floor of the corpus it was trained on."""
    ids = np.asarray(res.bpe_id_stream, dtype=np.int64)
    floor = unigram_entropy(ids)
    losses = [float(c["loss"]) for c in sorted(curve, key=lambda c: c["step"])]
    final = float(np.mean(losses[-3:])) if losses else float(pretraining["final_loss"])
    return pd.DataFrame([{"name": pretraining["name"], "steps": pretraining["steps"], "corpus_pieces": len(ids),
                          "distinct_pieces": int(len(np.unique(ids))), "unigram_entropy": floor,
                          "final_mlm_loss": final, "below_floor": floor - final,
                          "below_floor_share": (floor - final) / floor}])


def _class_share(task: str, preds: np.ndarray, train_labels: np.ndarray) -> float:
    """Share of ``preds`` that are the training part's majority class (NaN for STS-B, a regression)."""
    if normalize_task(task) == "stsb":
        return float("nan")
    majority = np.bincount(np.asarray(train_labels, dtype=int)).argmax()
    return float(np.mean(np.asarray(preds) == majority))


def diagnosis_runs(spec: ModelSpec, pretrained: Any, res: Resources, ctx: RunContext, learning_rate: float
                   ) -> pd.DataFrame:
    """``spec`` fine-tuned on every ``diag_tasks`` task, at every ``diag_train_examples`` size, from every
    :data:`INITIALISATIONS` (``pretrained``'s encoder, or none), with ``learning_rate`` and the first seed; at most
    ``diag_epochs`` epochs, stopping after ``diag_patience`` without a better held-out score. One row per run: the
    training, held-out and dev scores, the dev majority-class score, the share of dev predictions that are the
    majority class, the best epoch and the cap."""
    profile = res.profile
    seed = profile.ft_seeds[0]
    vocab = len(res.baseline_tokenizer) if spec.is_baseline else 0
    encode = Encoder(spec, res, profile.ft_max_len)
    rows = []
    for task in profile.diag_task_keys():
        dev = res.glue(task, "validation", profile.ft_eval_examples)
        for size in profile.diag_train_examples:
            train, validation = held_out(task, size, profile.ft_validation_examples, profile.seed)
            for init in INITIALISATIONS:
                ctx.log(f"{spec.name}: majority diagnosis on {task}, {len(train[0]):,} training examples, {init}")
                seed_everything(seed)
                model = classifier(spec, profile, vocab, num_labels(task))
                if init == "pre-trained":
                    model.base_model.load_state_dict(pretrained.base_model.state_dict())
                out = ctx.checkpoint_dir(f"{spec.slug}-{task}-diagnosis-{init}-{size}-seed{seed}",
                                         spec.name, task, init, size, learning_rate)
                row, preds = finetune(model, encode, task, train, dev, validation=validation,
                                      patience=profile.diag_patience, epochs=profile.diag_epochs,
                                      batch_size=profile.ft_batch, learning_rate=learning_rate, seed=seed,
                                      output_dir=out, mixed_precision=profile.mixed_precision, device=ctx.device,
                                      progress=ctx.progress, return_predictions=True, on_reuse=ctx.reuse,
                                      score_train=True)
                rows.append({"name": spec.name, "initialisation": init, "learning_rate": learning_rate, **row,
                             "dev_majority_share": _class_share(task, preds, train[1])})
    return pd.DataFrame(rows)


def bag_features(encode_ids: Any, texts: Sequence[Any], width: int) -> Any:
    """Binary bags of BPE pieces as a sparse matrix: ``(n, width)`` for single sentences; for pairs ``(a, b)``,
    ``(n, 3 * width)``: a's bag, b's bag, and the pieces both share. ``encode_ids(text)`` lists a text's piece ids."""
    from scipy import sparse

    pairs = bool(len(texts)) and isinstance(texts[0], (tuple, list))
    blocks = 3 if pairs else 1
    rows, cols = [], []
    for i, text in enumerate(texts):
        if pairs:
            a, b = (set(encode_ids(t)) for t in text)
            parts = (a, b, a & b)
        else:
            parts = (set(encode_ids(text)),)
        for block, ids in enumerate(parts):
            for j in ids:
                if not 0 <= j < width:
                    raise ValueError(f"piece id {j} outside the vocabulary of {width}")
                rows.append(i)
                cols.append(block * width + j)
    data = np.ones(len(rows), dtype=np.float32)
    return sparse.csr_matrix((data, (rows, cols)), shape=(len(texts), blocks * width))


def bag_reference(res: Resources, tasks: Sequence[str], seed: int = 0) -> pd.DataFrame:
    """Per task: a logistic regression on bags of roberta-base BPE pieces (:func:`bag_features`) trained on the
    profile's training part, its ``C`` chosen among :data:`BAG_C` on the held-out part, scored on dev with the task's
    metric, beside the majority class. Classification tasks only (STS-B is skipped)."""
    from sklearn.linear_model import LogisticRegression

    tokenizer = res.baseline_tokenizer
    width = len(tokenizer)

    def encode_ids(text: str) -> list[int]:
        return tokenizer(text, add_special_tokens=False)["input_ids"]

    profile = res.profile
    rows = []
    for task in tasks:
        if normalize_task(task) == "stsb":
            continue
        dev = res.glue(task, "validation", profile.ft_eval_examples)
        for size in profile.diag_train_examples:
            train, validation = held_out(task, size, profile.ft_validation_examples, profile.seed)
            x_train, x_val, x_dev = (bag_features(encode_ids, t, width) for t in (train[0], validation[0], dev[0]))
            best = None
            for c in BAG_C:
                model = LogisticRegression(C=c, max_iter=2000, random_state=seed).fit(x_train, train[1])
                score = glue_metric(task, model.predict_proba(x_val), validation[1])["score"]
                if best is None or score > best[0]:
                    best = (score, c, model)
            score, c, model = best
            rows.append({"task": normalize_task(task), "train_examples": len(train[0]), "C": c,
                         "train_score": 100.0 * glue_metric(task, model.predict_proba(x_train), train[1])["score"],
                         "validation_score": 100.0 * score,
                         "score": 100.0 * glue_metric(task, model.predict_proba(x_dev), dev[1])["score"],
                         "majority_score": majority_score(task, train[1], dev[1])})
    return pd.DataFrame(rows)
