"""A lean inference path for a trained pNLP-Mixer intent classifier: the function of the Hugging Face model in
evaluation, with the per-module Python overhead taken out.

At batch one on one CPU thread the eager model
(:class:`~hashlib_core.papers.pnlp_mixer.heads.PNLPMixerForSequenceClassification` in ``eval()``) spends a large
share of its time outside its matrix products: dozens of module calls (``Sequential``, ``Linear``, ``LayerNorm``,
``GELU``, the dropouts that are the identity in evaluation) and, in every block, a transpose and a copy around the
token-mixing MLP. :class:`MixerForInference` holds a snapshot of the trained
weights laid out for the products it runs, and runs the forward as a flat sequence of ``torch`` functions:

* the token-mixing weights are the *left* factor, ``W1 @ LN(X) + b1`` on ``(s, h)``, so ``X`` is never transposed;
* the other dense weights are stored transposed and contiguous, each product an ``addmm`` with its bias fused;
* dropout is left out (it is the identity in evaluation).

It returns the same logits as ``model.eval()(...).logits`` up to float rounding (the tests compare them), takes the
same ``input_features`` or ``fingerprints`` and ``attention_mask``, and runs under ``torch.inference_mode``. Training
never uses it: it is what a deployment would run, and what the latency benchmark times beside the eager model. It
snapshots the weights: build it again after changing the model.
"""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from hashlib_core.papers.pnlp_mixer.heads import PNLPMixerForSequenceClassification, masked_max_pool
from hashlib_core.papers.pnlp_mixer.modeling import PNLPMixerModel, _check_mask, _features

__all__ = ["MixerForInference"]


def _w(linear: nn.Linear) -> tuple[torch.Tensor, torch.Tensor]:
    """``(W^T contiguous, b)`` of a dense layer, detached copies: the right factor of ``addmm(b, x, W^T)``."""
    return linear.weight.detach().t().contiguous(), linear.bias.detach().clone()


def _left(linear: nn.Linear) -> tuple[torch.Tensor, torch.Tensor]:
    """``(W, b[:, None])`` of a token-mixing layer: the left factor of ``addmm(b[:, None], W, x)`` on ``(s, h)``."""
    return linear.weight.detach().clone(), linear.bias.detach()[:, None].clone()


def _norm(norm: nn.LayerNorm) -> tuple[torch.Tensor, torch.Tensor]:
    return norm.weight.detach().clone(), norm.bias.detach().clone()


def _mix_tokens(w: torch.Tensor, b: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """``W @ y + b`` for every sentence of ``y`` ``(batch, s, h)``: one ``addmm`` at batch one."""
    if y.shape[0] == 1:
        return torch.addmm(b, w, y[0]).unsqueeze(0)
    return torch.matmul(w, y).add_(b)


class MixerForInference:
    """The lean forward of a trained :class:`PNLPMixerForSequenceClassification` with the Mixer encoder (see the
    module's docstring). ``MixerForInference(model)(input_features=..., attention_mask=...)`` returns the logits."""

    def __init__(self, model: PNLPMixerForSequenceClassification) -> None:
        if not isinstance(model, PNLPMixerForSequenceClassification) or not isinstance(model.pnlp_mixer,
                                                                                         PNLPMixerModel):
            raise TypeError(f"MixerForInference takes a PNLPMixerForSequenceClassification with the mixer encoder, "
                            f"got {type(model).__name__}"
                            + (f" with encoder {model.config.encoder!r}" if hasattr(model, "config") else ""))
        self.config = model.config
        encoder = model.pnlp_mixer
        dense, _, norm = encoder.bottleneck
        self.bottleneck = (*_w(dense), *_norm(norm))
        self.blocks = [(*_norm(block.token_norm), *_left(block.token_mixing[0]), *_left(block.token_mixing[3]),
                        *_norm(block.channel_norm), *_w(block.channel_mixing[0]), *_w(block.channel_mixing[3]))
                       for block in encoder.mixers]
        self.final_norm = _norm(encoder.final_norm)
        head = model.classifier
        self.head = [_w(head)] if isinstance(head, nn.Linear) else [_w(head[0]), _w(head[3])]

    def __call__(self, input_features: torch.Tensor | None = None, attention_mask: torch.Tensor | None = None,
                 fingerprints: torch.Tensor | None = None) -> torch.Tensor:
        """Logits ``(batch, num_labels)``; the same argument checks and errors as the Hugging Face model."""
        cfg = self.config
        features = _features(cfg, fingerprints, input_features)
        _check_mask(attention_mask, tuple(features.shape[:2]))
        batch, s, _ = features.shape
        h, eps = cfg.hidden_size, cfg.layer_norm_eps
        with torch.inference_mode():
            wt, b, g, beta = self.bottleneck
            x = F.leaky_relu_(torch.addmm(b, features.reshape(batch * s, -1), wt), cfg.leaky_relu_slope)
            x = F.layer_norm(x, (h,), g, beta, eps).view(batch, s, h)
            for g1, beta1, w1, b1, w2, b2, g2, beta2, w3t, b3, w4t, b4 in self.blocks:
                y = F.layer_norm(x, (h,), g1, beta1, eps)
                x = x + _mix_tokens(w2, b2, F.gelu(_mix_tokens(w1, b1, y)))
                y = F.layer_norm(x, (h,), g2, beta2, eps).view(batch * s, h)
                x = torch.addmm(b4, F.gelu(torch.addmm(b3, y, w3t)), w4t).view(batch, s, h).add_(x)
            x = masked_max_pool(F.layer_norm(x, (h,), *self.final_norm, eps), attention_mask)
            for i, (wt, b) in enumerate(self.head):
                x = torch.addmm(b, x if i == 0 else F.gelu(x), wt)
            return x
