"""Devices: the spelling a profile or ``--device`` may use, the ``torch.device`` a run gets, and the wait on a
device's queued work that timers need. (Re-exported by :mod:`hashlib_core.profiles`, where chapters import them.)"""
from __future__ import annotations

import os
import re
from typing import Any

__all__ = ["check_device", "select_device", "synchronize"]


def synchronize(device: Any) -> None:
    """Wait for ``device``'s queued work (CUDA runs asynchronously); a no-op on the CPU. Timers call it on both
    sides of what they time."""
    import torch

    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


def check_device(preference: str | None) -> str:
    """``preference`` if it names a device :func:`select_device` knows (``auto``, ``cpu``, ``cuda``, ``cuda:N``,
    ``mps``; any case, ``None`` for auto), else ``ValueError``: a misspelt ``--device`` stops at the command line
    even where no experiment asks for a device."""
    pref = "auto" if preference is None else preference
    if not isinstance(pref, str) or not re.fullmatch(r"auto|cpu|mps|cuda(:\d+)?", pref.strip().lower()):
        raise ValueError(f"unknown device {preference!r}; use auto, cpu, cuda, cuda:N or mps")
    return pref


def select_device(preference: str | None = "auto"):
    """The ``torch.device`` to run on.

    ``"auto"`` (or ``None``) honours the environment variable ``HASHLIB_DEVICE`` if set, else picks CUDA when
    available, else CPU. Asking for CUDA on a machine without it raises ``RuntimeError`` saying what to do.
    """
    import torch

    pref = (preference or "auto").strip().lower()
    if pref == "auto":
        pref = os.environ.get("HASHLIB_DEVICE", "auto").strip().lower() or "auto"
    if pref == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if pref.startswith("cuda"):
        if not torch.cuda.is_available():
            raise RuntimeError(
                f"device {preference!r} was requested but this torch build sees no CUDA device "
                f"(torch {torch.__version__}); use --device cpu or install the CUDA build of torch (README, GPU hosts)"
            )
        dev = torch.device(pref)
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise RuntimeError(f"device {pref!r} does not exist: {torch.cuda.device_count()} CUDA device(s) visible")
        return dev
    if pref == "mps":
        if not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
            raise RuntimeError("device 'mps' was requested but is not available; use --device cpu")
        return torch.device("mps")
    if pref == "cpu":
        return torch.device("cpu")
    raise ValueError(f"unknown device {preference!r}; use auto, cpu, cuda, cuda:N or mps")
