"""Why ``P_inf`` perplexity is worse than a unigram model at small scale, and a calibrated perplexity beside it.

The cascade of section 3.3 feeds the *soft* bucket embedding ``E^T p^(k)`` to the next head, so every ``p^(k)``
depends on the context only, never on the bucket drawn for the previous coordinate. The training loss
``sum_k CE_k`` is then minimised by the per-hash **marginals** ``m_k(b) = sum_{w: H_k(w) = b} q(w)`` of the model's
next-token belief ``q``, and ``P_inf`` (section 3.4) multiplies them: for a token with a unique signature
``P_inf(w) ~ prod_k m_k(H_k(w)) ~ q(w)^H``, a distribution sharpened H times and renormalised. Its top token is
``q``'s (accuracy is fine) but the probability it gives the other tokens is far too small, so its perplexity can be
worse than a uniform guess. Two measurements in this module show it:

* :func:`marginal_pinf_scores` turns a trained Standard model's own distribution ``q`` into ``P_inf`` through the
  exact bucket marginals of an (H, B) signature table: the perplexity of that "oracle" MHF is what the trained MHF
  models reach, while its accuracy is Standard's;
* :func:`fit_temperature` fits one temperature T on training windows; ``P_inf^(1/T)``, renormalised, keeps the
  ranking of tokens (the accuracy) and gives a calibrated perplexity, which is what the book shows beside ``P_inf``.
"""
from __future__ import annotations

import math
from typing import Sequence

import torch
from torch import nn

from hashlib_core.decoding.lm import next_token_scores
from hashlib_core.decoding.multihash import score_vocab
from hashlib_core.modeling import hidden_states, vocab_log_probs

__all__ = ["fit_temperature", "marginal_pinf_scores", "TEMPERATURE_RANGE"]

#: Temperatures searched by :func:`fit_temperature` (the fitted MHF temperatures lie near H).
TEMPERATURE_RANGE = (0.25, 16.0)


@torch.no_grad()
def _final_states(model: nn.Module, rows: torch.Tensor, device: torch.device, batch_size: int
                  ) -> tuple[torch.Tensor, torch.Tensor]:
    """Final hidden states of every position that predicts a next token, and those targets (unpadded windows)."""
    model.eval()
    hidden, targets = [], []
    for batch in rows.split(batch_size):
        batch = batch.to(device)
        hidden.append(hidden_states(model, batch)[-1][:, :-1].reshape(-1, model.config.hidden_size))
        targets.append(batch[:, 1:].reshape(-1))
    return torch.cat(hidden), torch.cat(targets)


@torch.no_grad()
def fit_temperature(model: nn.Module, rows: torch.Tensor, device: torch.device, *, batch_size: int = 16,
                    chunk: int = 512, iterations: int = 24) -> float:
    """The temperature T minimising the next-token NLL of ``model`` on ``rows`` (windows of token ids).

    A golden-section search over ``log T`` in :data:`TEMPERATURE_RANGE`; the backbone runs once, the output layer
    once per candidate T.
    """
    hidden, targets = _final_states(model, rows, device, batch_size)

    def nll(log_t: float) -> float:
        total = 0.0
        for s in range(0, targets.shape[0], chunk):
            lp = vocab_log_probs(model, hidden[s:s + chunk], math.exp(log_t))
            total -= float(lp.gather(1, targets[s:s + chunk, None]).double().sum())
        return total / max(1, targets.shape[0])

    lo, hi = (math.log(t) for t in TEMPERATURE_RANGE)
    g = (math.sqrt(5) - 1) / 2
    a, b = hi - g * (hi - lo), lo + g * (hi - lo)
    fa, fb = nll(a), nll(b)
    for _ in range(iterations):
        if fa < fb:
            hi, b, fb = b, a, fa
            a = hi - g * (hi - lo)
            fa = nll(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + g * (hi - lo)
            fb = nll(b)
    return math.exp((lo + hi) / 2)


@torch.no_grad()
def marginal_pinf_scores(standard: nn.Module, rows: torch.Tensor, hash_map: torch.Tensor, num_buckets: int,
                         device: torch.device, *, batch_size: int = 16, chunk: int = 512) -> tuple[float, float]:
    """``(perplexity, accuracy %)`` of ``P_inf`` built from the exact bucket marginals of ``standard``'s own
    next-token distribution ``q``, for the signatures ``hash_map`` (V x H): what an MHF head that learned the
    marginals perfectly would score, on the windows ``rows``."""
    hidden, targets = _final_states(standard, rows, device, batch_size)
    table = hash_map.to(device)
    nll, correct = 0.0, 0.0
    for s in range(0, targets.shape[0], chunk):
        q = vocab_log_probs(standard, hidden[s:s + chunk]).exp()                       # (n, V)
        marginals = torch.zeros(q.shape[0], table.shape[1], num_buckets, device=device)
        for k in range(table.shape[1]):
            marginals[:, k].index_add_(1, table[:, k], q)
        scores = score_vocab(marginals.clamp_min(1e-30).log(), table, targets=targets[s:s + chunk], top_k=1)
        nll -= float(scores.target_log_probs.double().sum())
        correct += float(scores.top_ids[:, 0].eq(targets[s:s + chunk]).sum())
    n = max(1, targets.shape[0])
    return math.exp(nll / n), 100.0 * correct / n


def calibrated_perplexity(model: nn.Module, calibration_rows: torch.Tensor, batches: Sequence, device,
                          batch_size: int) -> tuple[float, float]:
    """``(T, test perplexity at T)``: the temperature fitted on ``calibration_rows``, applied to ``batches``."""
    temperature = fit_temperature(model, calibration_rows, device, batch_size=batch_size)
    return temperature, next_token_scores(model, batches, device, temperature=temperature).perplexity
