"""Filters two import-time log messages of torchao 0.18 on a CPU-only torch (stdlib only; installed by
``hashlib_core/__init__``).

With torchao installed, ``transformers`` imports it whenever a model class is imported (its torchao quantiser), and
torchao then logs (a) ``Failed to load .../torchao/_C_mxfp8...so`` / ``_C_cutlass_90a...so`` (CUDA-only kernels a CPU
torch cannot load; CPU int8 does not use them) and (b) torch's pytree deprecation notice about ``register_constant()``
on Enum subclasses, once per Enum. Only records matching these texts are dropped; they are kept in
:data:`SUPPRESSED` so a caller can report them.
"""
from __future__ import annotations

import logging

__all__ = ["SUPPRESSED", "install"]

SUPPRESSED: list[str] = []
_LOGGERS = ("torchao", "torch.utils._pytree")


class _TorchaoImportNoise(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        msg = record.getMessage()
        noise = (msg.startswith("Failed to load") and "torchao/_C" in msg) or (
            "register_constant() on Enum subclasses is deprecated" in msg)
        if noise:
            SUPPRESSED.append(msg)
        return not noise


_FILTER = _TorchaoImportNoise()


def install() -> None:
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
