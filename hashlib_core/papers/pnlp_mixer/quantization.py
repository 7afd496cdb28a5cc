"""8-bit pNLP-Mixers (Fusco et al. §6: "1M (8bit)" models) with ``torchao``, on CPU.

``torch.ao.quantization`` (eager dynamic quantisation, what a 2023 PyTorch runtime would use) is deprecated and warns
on the pinned torch; ``torchao`` (pinned in ``pyproject.toml``: the first release whose prebuilt wheels target torch
of the pinned generation) replaces it.
Every ``nn.Linear`` of the model (bottleneck, token- and channel-mixing MLPs, head) gets its weight stored as an
``Int8Tensor``: int8 values, a float32 scale and an int8 zero point per output row (symmetric, the zero point is 0).
LayerNorms stay float32 (a small share of the parameters).

Two schemes (``scheme=``):

* ``"weight_only"`` (default, :class:`torchao.quantization.Int8WeightOnlyConfig`): weights in int8, activations in
  float32; each matmul dequantises the weight. This is the scheme we use: it runs at about the float model's speed
  on a CPU torch build, and its storage is the paper's 8-bit model.
* ``"dynamic"`` (:class:`torchao.quantization.Int8DynamicActivationInt8WeightConfig`): activations are quantised per
  token on the fly and the matmuls are int8 x int8 (the scheme closest to PyTorch's old dynamic quantisation). It
  runs on CPU and agrees with the float model as closely, but torchao 0.18's CPU path for it is slower than float32
  at batch 1 on every CPU we measured (by how much depends on the CPU: ``hashlib_core.benchmarks.pnlp_mixer_latency``
  records it), so it is kept for comparison only.

Importing torchao 0.18 on a CPU-only torch logs two warnings that do not concern CPU inference: it fails to load its
CUDA-only kernels (``_C_mxfp8``, ``_C_cutlass_90a``; "Could not load this library"), and torch's pytree says
registering an Enum as a constant is deprecated. :mod:`hashlib_core._import_noise` (installed when ``hashlib_core`` is imported, since
``transformers`` imports torchao with any model class once it is installed) filters exactly these messages (other
log records pass) and keeps them in :data:`SUPPRESSED_IMPORT_MESSAGES`.
"""
from __future__ import annotations

import copy
import io
from typing import Any

import torch
from torch import nn

from hashlib_core import _import_noise as _noise

__all__ = ["SCHEMES", "SUPPRESSED_IMPORT_MESSAGES", "import_torchao", "quantize_int8", "model_size_bytes",
           "state_dict_storage", "prediction_agreement"]

SCHEMES = ("weight_only", "dynamic")
#: the torchao import-time log messages filtered out (see the module docstring), as seen.
SUPPRESSED_IMPORT_MESSAGES = _noise.SUPPRESSED


def import_torchao() -> Any:
    """``torchao`` itself (its CPU import log noise is filtered by :mod:`hashlib_core._import_noise`)."""
    import torchao
    return torchao


def _config(scheme: str) -> Any:
    import_torchao()
    from torchao.quantization import Int8DynamicActivationInt8WeightConfig, Int8WeightOnlyConfig
    if scheme == "weight_only":
        return Int8WeightOnlyConfig()
    if scheme == "dynamic":
        return Int8DynamicActivationInt8WeightConfig()
    raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")


def quantize_int8(model: nn.Module, scheme: str = "weight_only") -> nn.Module:
    """An int8 copy of ``model`` (in eval mode) for CPU inference; ``model`` itself is left untouched.

    Every ``nn.Linear`` is quantised per output row (see the module docstring for the two schemes)."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"quantize_int8 expects an nn.Module, got {type(model).__name__}")
    config = _config(scheme)
    if not any(isinstance(m, nn.Linear) for m in model.modules()):
        raise ValueError("the model has no nn.Linear layer to quantise")
    from torchao.quantization import quantize_
    quantized = copy.deepcopy(model).cpu().eval()
    quantize_(quantized, config)
    quantized.int8_scheme = scheme
    return quantized


def model_size_bytes(model: nn.Module) -> int:
    """Bytes of ``torch.save(model.state_dict())``: what a checkpoint of the model takes on disk.

    torchao's int8 weights serialise as their components (int8 ``qdata``, a float32 ``scale`` and an int8
    ``zero_point`` per row) plus pickle overhead; :func:`state_dict_storage` splits the bytes by dtype."""
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    return buffer.tell()


def state_dict_storage(model: nn.Module) -> dict[str, int]:
    """Raw tensor bytes of the state dict by stored dtype (int8 tensors counted by their components)."""
    out: dict[str, int] = {}

    def add(t: torch.Tensor) -> None:
        if type(t) is not torch.Tensor and hasattr(t, "__tensor_flatten__") and not isinstance(t, nn.Parameter):
            for name in t.__tensor_flatten__()[0]:
                add(getattr(t, name))
            return
        if isinstance(t, nn.Parameter) and type(t.data) is not torch.Tensor:
            add(t.data)
            return
        key = str(t.dtype).replace("torch.", "")
        out[key] = out.get(key, 0) + t.numel() * t.element_size()

    for tensor in model.state_dict().values():
        add(tensor)
    return out


def prediction_agreement(float_logits: torch.Tensor, int8_logits: torch.Tensor) -> dict[str, float]:
    """How closely int8 logits follow float ones: ``argmax_agreement`` (fraction of rows, or positions, with the
    same predicted label), ``max_abs_diff`` and ``relative_l2`` (``||int8 - float|| / ||float||``)."""
    a, b = torch.as_tensor(float_logits).detach().float(), torch.as_tensor(int8_logits).detach().float()
    if a.shape != b.shape or a.dim() < 1 or a.numel() == 0:
        raise ValueError(f"logits must have the same non-empty shape, got {tuple(a.shape)} and {tuple(b.shape)}")
    agree = (a.argmax(-1) == b.argmax(-1)).float().mean().item()
    diff = (a - b)
    return {"argmax_agreement": agree, "max_abs_diff": diff.abs().max().item(),
            "relative_l2": (diff.norm() / a.norm().clamp_min(1e-12)).item(), "n": int(a.argmax(-1).numel())}
