"""Dropout whose CPU masks are cheap to draw: the same inverted dropout, a faster random-number source.

On CPU, ``torch.nn.Dropout`` draws its mask with ``bernoulli_``, one Mersenne-Twister draw per element. For the
pNLP-Mixer chapter's models (5 Mixer blocks, batch 128, 64 positions) that sampling took about a third of a training
step on two cores (``python -m hashlib_core.benchmarks.dropout`` measures it).
:class:`Dropout` keeps ``nn.Dropout``'s interface and semantics (zero each element with probability ``p`` in
training, scale the rest by ``1 / (1 - p)``, the identity in evaluation) and draws its CPU masks from numpy's PCG64:
16 random bits per element, an element is dropped when they fall below ``round(p * 2**16)``. So ``p`` is used to a
resolution of ``2**-16`` (0.1 drops with probability 6554 / 65536 = 0.100006).

Determinism: the generator of every call is seeded from torch's global generator (one ``torch.randint``), so
``torch.manual_seed`` fixes the masks as it fixes ``nn.Dropout``'s; the masks differ from ``nn.Dropout``'s own.
On other devices, with ``inplace=True``, and for ``p`` of 0 or 1, the layer is ``nn.Dropout`` itself.
"""
from __future__ import annotations

import numpy as np
import torch
from torch import nn

__all__ = ["Dropout", "keep_mask", "replace_dropout"]

_LEVELS = 1 << 16


def keep_mask(shape: tuple[int, ...] | torch.Size, p: float) -> torch.Tensor:
    """A boolean CPU tensor of ``shape``: each element False (dropped) with probability ``round(p * 2**16) / 2**16``,
    drawn from a PCG64 generator seeded from torch's global generator."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability must be in [0, 1], got {p}")
    n = int(np.prod(shape, dtype=np.int64))
    seed = int(torch.randint(0, 2**62, (), dtype=torch.int64))
    raw = np.random.Generator(np.random.PCG64(seed)).bit_generator.random_raw((n + 3) // 4)
    bits = torch.from_numpy(raw.view(np.int16)[:n]).view(tuple(shape))
    return bits >= round(p * _LEVELS) - _LEVELS // 2


class _MaskAndScale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, p: float) -> torch.Tensor:
        keep = keep_mask(x.shape, p)
        ctx.save_for_backward(keep)
        ctx.scale = 1.0 / (1.0 - p)
        return torch.where(keep, x, 0.0).mul_(ctx.scale)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        (keep,) = ctx.saved_tensors
        return torch.where(keep, grad, 0.0).mul_(ctx.scale), None


class Dropout(nn.Dropout):
    """``nn.Dropout`` with masks drawn by :func:`keep_mask` on CPU (see the module's docstring)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.inplace or x.device.type != "cpu" or self.p in (0.0, 1.0):
            return super().forward(x)
        return _MaskAndScale.apply(x, self.p)


def replace_dropout(module: nn.Module) -> nn.Module:
    """Swap every plain ``nn.Dropout`` inside ``module`` (e.g. those of ``nn.TransformerEncoderLayer``) for a
    :class:`Dropout` of the same ``p``; returns ``module``. Functional dropouts (attention weights) stay as they are."""
    for name, child in list(module.named_children()):
        if type(child) is nn.Dropout:
            setattr(module, name, Dropout(child.p, child.inplace))
        else:
            replace_dropout(child)
    return module
