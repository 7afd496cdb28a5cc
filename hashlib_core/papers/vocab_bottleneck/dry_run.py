"""The vocabulary-bottleneck chapter's dry run (:mod:`hashlib_core.dry_run`): the chapter trains nothing and reads no
data, so its dry run builds every model shape on the ``meta`` device and compares the total and input-embedding
counts with the figures HashFormers §1 prints (the printed cells its claims check,
:func:`~hashlib_core.papers.vocab_bottleneck.claims.claim_rows`)."""
from __future__ import annotations

from typing import Any

from hashlib_core.dry_run import DryRun, ModelSize
from hashlib_core.model_shapes import MODEL_SPECS
from hashlib_core.papers.vocab_bottleneck.claims import claim_rows
from hashlib_core.papers.vocab_bottleneck.profiles import VocabBottleneckProfile
from hashlib_core.params import embedding_breakdown

__all__ = ["DRY_RUN"]

#: our column of a claim -> (what it counts, how the dry run counts it from the built model)
_MEASURES = {"total_params": ("total", None),
             "input_embedding_params": ("input embedding", lambda m: embedding_breakdown(m).input_embedding)}


def _sizes(profile: VocabBottleneckProfile) -> list[ModelSize]:
    printed = {(r["model"], r["ours_column"]): r for r in claim_rows() if r["ours_column"] in _MEASURES}
    out = []
    for spec in MODEL_SPECS:
        for column, (measure, rule) in _MEASURES.items():
            row = printed.get((spec.name, column))
            extra = {"counts": rule} if rule is not None else {}
            out.append(ModelSize(spec.name, spec.build, paper=row["printed"] if row else None,
                                 source=row["where"].split(",")[0] if row else "", measure=measure,
                                 explained=f"the chapter's claim {row['id']} compares this printed figure" if row
                                 else "", **extra))
    return out


def _plan(profile: VocabBottleneckProfile) -> list[dict[str, Any]]:
    return [{"item": "models counted (meta device)", "value": f"{len(MODEL_SPECS)}: "
                                                              f"{', '.join(s.name for s in MODEL_SPECS)}"},
            {"item": "also built with real bf16 weights", "value": f"models up to {profile.materialize_up_to} "
                                                                   "parameters (materialize_up_to)"}]


DRY_RUN = DryRun(models=_sizes, data=None, tiny=None, plan=_plan)
