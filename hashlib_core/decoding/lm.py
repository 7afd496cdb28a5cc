"""Next-token scoring of any language model of the book (perplexity, accuracy, bits per byte, log-prob rows).

Works through the model protocol of :mod:`hashlib_core.modeling`: hidden states from the base model, then
``vocab_log_probs`` (the softmax of an LM head, or MultiHashFormer's ``P_inf`` over the valid vocabulary), so
the same function scores a standard decoder and a multi-hash one.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import torch
from torch import nn

from hashlib_core.modeling import hidden_states, vocab_log_probs

__all__ = ["NextTokenScores", "next_token_scores"]


@dataclass
class NextTokenScores:
    """Sums over the scored positions; ``rows`` holds log-probability rows when asked for (rank analysis)."""

    nll: float = 0.0          # nats, summed
    correct: float = 0.0      # tie-aware (1/k when the target is one of k tied maxima)
    tokens: int = 0
    bytes: int = 0
    rows: list[torch.Tensor] = field(default_factory=list)

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
) -> NextTokenScores:
    """Score next-token predictions of right-padded ``(input_ids, attention_mask)`` batches.

    Position ``t`` predicts ``t + 1`` when both are real tokens. ``token_bytes[id]`` (optional) is the UTF-8 length
    of each id, for bits per byte; ``keep_rows`` keeps that many log-probability rows (float64, on the CPU).
    Log-probabilities are computed ``chunk`` positions at a time, so memory is ``chunk x V``; ``temperature``
    rescales the model's scores (:func:`hashlib_core.modeling.vocab_log_probs`).
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
        for s in range(0, targets.shape[0], chunk):
            lp = vocab_log_probs(model, hidden[s:s + chunk], temperature)
            tgt = targets[s:s + chunk]
            tlp = lp.gather(1, tgt[:, None]).squeeze(1)
            best = lp.max(dim=1).values
            ties = lp.eq(best[:, None]).sum(1)
            out.nll -= float(tlp.double().sum())
            out.correct += float((tlp.eq(best).double() / ties.double()).sum())
            out.tokens += int(tgt.numel())
            if token_bytes is not None:
                out.bytes += int(token_bytes.to(tgt.device)[tgt].sum())
            if kept < keep_rows:
                take = lp[: keep_rows - kept].double().cpu()
                out.rows.append(take)
                kept += take.shape[0]
    return out
