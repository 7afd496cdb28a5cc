"""Next-token scoring of any language model of the book (perplexity, accuracy, bits per byte, log-prob rows).

Works through the model protocol of :mod:`hashlib_core.modeling`: hidden states from the base model, then
``vocab_log_probs`` (the softmax of an LM head, or MultiHashFormer's ``P_inf`` over the valid vocabulary), so
the same function scores a standard decoder and a multi-hash one.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import torch
from torch import nn

from hashlib_core.modeling import hidden_states, vocab_log_probs

__all__ = ["NextTokenScores", "next_token_scores"]


@dataclass
class NextTokenScores:
    """Sums over the scored positions; ``rows`` holds log-probability rows when asked for (rank analysis), and
    ``per_sequence`` each sequence's ``(nll, correct, tokens, bytes)`` sums when asked for (paired bootstraps over
    the test sequences)."""

    nll: float = 0.0          # nats, summed
    correct: float = 0.0      # tie-aware (1/k when the target is one of k tied maxima)
    tokens: int = 0
    bytes: int = 0
    rows: list[torch.Tensor] = field(default_factory=list)
    per_sequence: list[tuple[float, float, int, int]] = field(default_factory=list)

    def sequence_means(self) -> tuple[np.ndarray, np.ndarray]:
        """Each kept sequence's mean next-token NLL (nats) and accuracy (%): the per-item scores of a bootstrap."""
        if not self.per_sequence:
            raise ValueError("no per-sequence scores were kept: score with per_sequence=True")
        arr = np.asarray(self.per_sequence, dtype=float)
        return arr[:, 0] / arr[:, 2], 100.0 * arr[:, 1] / arr[:, 2]

    @property
    def perplexity(self) -> float:
        return math.exp(self.nll / self.tokens) if self.tokens else math.nan

    @property
    def accuracy(self) -> float:
        """Top-1 accuracy in %."""
        return 100.0 * self.correct / self.tokens if self.tokens else math.nan

    @property
    def bits_per_byte(self) -> float:
        return self.nll / math.log(2) / self.bytes if self.bytes else math.nan


@torch.no_grad()
def next_token_scores(
    model: nn.Module, batches: Sequence[tuple[torch.Tensor, torch.Tensor]], device: torch.device | str, *,
    token_bytes: torch.Tensor | None = None, keep_rows: int = 0, chunk: int = 256, temperature: float = 1.0,
    per_sequence: bool = False,
) -> NextTokenScores:
    """Score next-token predictions of right-padded ``(input_ids, attention_mask)`` batches.

    Position ``t`` predicts ``t + 1`` when both are real tokens. ``token_bytes[id]`` (optional) is the UTF-8 length
    of each id, for bits per byte; ``keep_rows`` keeps that many log-probability rows (float64, on the CPU).
    Log-probabilities are computed ``chunk`` positions at a time, so memory is ``chunk x V``; ``temperature``
    rescales the model's scores (:func:`hashlib_core.modeling.vocab_log_probs`). ``per_sequence`` keeps each
    sequence's sums in :attr:`NextTokenScores.per_sequence` (sequences with no scored position are left out).
    """
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1, got {chunk}")
    model.eval()
    out = NextTokenScores()
    kept = 0
    for ids, mask in batches:
        ids, mask = ids.to(device), mask.to(device)
        hidden = hidden_states(model, ids, mask)[-1][:, :-1]
        keep = mask[:, :-1].bool() & mask[:, 1:].bool()
        hidden, targets = hidden[keep], ids[:, 1:][keep]
        owner = keep.nonzero()[:, 0]                                   # the sequence of each scored position
        seq_nll = torch.zeros(ids.shape[0], dtype=torch.float64, device=ids.device)
        seq_correct = torch.zeros_like(seq_nll)
        seq_bytes = torch.zeros(ids.shape[0], dtype=torch.long, device=ids.device)
        for s in range(0, targets.shape[0], chunk):
            lp = vocab_log_probs(model, hidden[s:s + chunk], temperature)
            tgt = targets[s:s + chunk]
            tlp = lp.gather(1, tgt[:, None]).squeeze(1)
            best = lp.max(dim=1).values
            ties = lp.eq(best[:, None]).sum(1)
            hits = tlp.eq(best).double() / ties.double()
            out.nll -= float(tlp.double().sum())
            out.correct += float(hits.sum())
            if per_sequence:
                seq_nll.index_add_(0, owner[s:s + chunk], -tlp.double())
                seq_correct.index_add_(0, owner[s:s + chunk], hits)
            out.tokens += int(tgt.numel())
            if token_bytes is not None:
                target_bytes = token_bytes.to(tgt.device)[tgt]
                out.bytes += int(target_bytes.sum())
                if per_sequence:
                    seq_bytes.index_add_(0, owner[s:s + chunk], target_bytes)
            if kept < keep_rows:
                take = lp[: keep_rows - kept].double().cpu()
                out.rows.append(take)
                kept += take.shape[0]
        if per_sequence:
            counts = keep.sum(1)
            out.per_sequence.extend((float(n), float(c), int(k), int(b)) for n, c, k, b in zip(
                seq_nll.tolist(), seq_correct.tolist(), counts.tolist(), seq_bytes.tolist()) if k > 0)
    return out
