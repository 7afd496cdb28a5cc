"""GLUE on the shared protocol (:mod:`hashlib_core.protocol`): the pieces the GLUE chapters share as they move onto it.

* :func:`held_out_parts`: a task's training split cut in three from one seeded order: a selection part (the rate and
  the stopping step), a report part that chooses nothing (GLUE's test labels are not public, and a dev split of a few
  hundred items resolves only large gaps), and the rest to train on, less every text a held-out part holds.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from hashlib_core.glue import glue_split

__all__ = ["held_out_parts"]


def held_out_parts(task: str, selection: int, report: int, train_limit: int = 0, seed: int = 0
                   ) -> dict[str, tuple[list[Any], np.ndarray]]:
    """A task's training split cut in three for the shared protocol (:mod:`hashlib_core.protocol`), from one seeded
    order of it: ``selection`` examples that choose (the rate, the stopping step), then ``report`` examples that
    choose nothing and are reported (GLUE's test labels are not public, and a dev split of a few hundred items
    resolves only large gaps; 0: none, the dev split reports), then the rest to train on, less every example whose
    text (a sentence, or a pair) equals a held-out one (GLUE's training splits repeat some), and at most
    ``train_limit`` of them (0: all). Returns ``{"train": ..., "selection": ..., "report": ...}``, each
    ``(texts, labels)``."""
    for name, value, low, zero in (("selection", selection, 1, ""), ("report", report, 0, " (0: none)"),
                                   ("train_limit", train_limit, 0, " (0: every example left)")):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name} must be an int >= {low}{zero}, got {value!r}")
    texts, labels = glue_split(task, "train", 0, seed)
    if selection + report >= len(texts):
        raise ValueError(f"{task}: holding out {selection} + {report} of its {len(texts)} training examples leaves "
                         f"none to train on; hold out fewer")
    seen = set(texts[:selection + report])
    rest = [i for i in range(selection + report, len(texts)) if texts[i] not in seen]
    rest = rest[:train_limit] if train_limit else rest
    return {"train": ([texts[i] for i in rest], labels[rest]),
            "selection": (texts[:selection], labels[:selection]),
            "report": (texts[selection:selection + report], labels[selection:selection + report])}
