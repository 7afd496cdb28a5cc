"""The scores pNLP-Mixer's tables use, on word-level predictions (one slot tag per word, one intent per sentence).

* :func:`intent_accuracy` -- multiATIS (§4): the share of sentences whose intent is right;
* :func:`exact_match` -- MTOP (§4): "the number of instances whose *all* tokens have been correctly labeled over
  the number of instances";
* :func:`slot_f1` -- the span-level F1 of ``seqeval`` (CoNLL conventions) over BIO tag names;
* :func:`non_o_token_accuracy` -- what the community code (maum-ai/pnlp-mixer) reports for MTOP: the accuracy over
  the words whose gold tag is not ``O`` (so it is not comparable with exact match).

Predictions and gold tags are lists of per-sentence sequences of equal lengths (a word cut by ``max_seq_len`` must
be given a prediction by the caller, e.g. ``O``, so that it counts as wrong where the gold tag is not ``O``).
"""
from __future__ import annotations

from typing import Hashable, Sequence

__all__ = ["intent_accuracy", "intent_errors", "exact_match", "slot_f1", "non_o_token_accuracy"]


def _check_pairs(predicted: Sequence, gold: Sequence, what: str) -> None:
    if len(predicted) != len(gold):
        raise ValueError(f"{what}: {len(predicted)} predictions for {len(gold)} gold items; pass one per item")
    if len(gold) == 0:
        raise ValueError(f"{what}: no items to score")


def intent_accuracy(predicted: Sequence[Hashable], gold: Sequence[Hashable]) -> float:
    """Percentage of sentences whose predicted intent equals the gold one."""
    _check_pairs(predicted, gold, "intent_accuracy")
    return 100.0 * sum(p == g for p, g in zip(predicted, gold)) / len(gold)


def intent_errors(predicted: Sequence[int], gold: Sequence[int], names: Sequence[str], unseen: int = -1
                  ) -> dict[str, int]:
    """Wrong intents, split by what the gold label is: ``unseen`` (an intent absent from training, which no model
    can predict), ``combined`` (a seen label of several intents joined by ``#``, e.g. ``atis_flight#atis_airfare``)
    and ``single`` (the rest)."""
    _check_pairs(predicted, gold, "intent_errors")
    out = {"errors": 0, "errors_unseen": 0, "errors_combined": 0, "errors_single": 0}
    for p, g in zip(predicted, gold):
        if p == g:
            continue
        out["errors"] += 1
        kind = "unseen" if g == unseen else "combined" if "#" in names[g] else "single"
        out[f"errors_{kind}"] += 1
    return out


def _check_tags(predicted: Sequence[Sequence[Hashable]], gold: Sequence[Sequence[Hashable]], what: str) -> None:
    _check_pairs(predicted, gold, what)
    for i, (p, g) in enumerate(zip(predicted, gold)):
        if isinstance(p, str) or isinstance(g, str):
            raise TypeError(f"{what}: sentence {i} must be a sequence of tags, not a string")
        if len(p) != len(g):
            raise ValueError(f"{what}: sentence {i} has {len(p)} predicted tags for {len(g)} words; predict a tag "
                             f"for every word (words cut by max_seq_len included)")


def exact_match(predicted: Sequence[Sequence[Hashable]], gold: Sequence[Sequence[Hashable]]) -> float:
    """Percentage of sentences whose every word has the gold slot tag."""
    _check_tags(predicted, gold, "exact_match")
    return 100.0 * sum(list(p) == list(g) for p, g in zip(predicted, gold)) / len(gold)


def non_o_token_accuracy(predicted: Sequence[Sequence[Hashable]], gold: Sequence[Sequence[Hashable]],
                         outside: Hashable = "O") -> float:
    """Percentage of words whose gold tag is not ``outside`` that are tagged correctly (the community metric)."""
    _check_tags(predicted, gold, "non_o_token_accuracy")
    pairs = [(p, g) for ps, gs in zip(predicted, gold) for p, g in zip(ps, gs) if g != outside]
    if not pairs:
        raise ValueError(f"non_o_token_accuracy: every gold tag is {outside!r}; the score is undefined")
    return 100.0 * sum(p == g for p, g in pairs) / len(pairs)


def slot_f1(predicted: Sequence[Sequence[str]], gold: Sequence[Sequence[str]]) -> float:
    """Span-level slot F1 (x 100) with ``seqeval`` (default CoNLL mode) over BIO tag names such as ``B-city``."""
    from seqeval.metrics import f1_score

    _check_tags(predicted, gold, "slot_f1")
    return 100.0 * float(f1_score([list(g) for g in gold], [list(p) for p in predicted], zero_division=0))
