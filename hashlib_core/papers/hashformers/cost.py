"""What the HashFormers headline claims cost to settle (:mod:`hashlib_core.claims.cost`).

The rate: the committed pre-training runs (``pretraining``: every Table 1 model, its parameters less the embedding
table, steps x batch x sequence tokens, its wall time). At the paper's scale each compared model is pre-trained once
(Appendix A, the ``paper`` profile: steps, batch, sequence) with its parameters at BERT-base's shape (Table 2's
counts, ``table2``); fine-tuning, three seeds on five GLUE tasks, is left out. The paper reports one scale only.
"""
from __future__ import annotations

from typing import Any, Sequence

from hashlib_core.claims.cost import ChapterCost, ClaimWork, Runs
from hashlib_core.papers.hashformers.profiles import LSH_GROUP, MD_GROUP

__all__ = ["COST", "measure"]


def _tokens(steps: int, batch: int, seq_len: int) -> float:
    return float(steps) * batch * seq_len


def measure(results: Any) -> tuple[list[tuple[Runs, float]], str]:
    """The committed pre-training runs with their wall times."""
    table, config = results.table("pretraining"), results.config("pretraining")
    runs = []
    for _, r in table.iterrows():
        tokens = _tokens(int(r["steps"]), config["pt_batch"], config["seq_len"])
        runs.append((Runs(str(r["name"]), float(r["total_params"] - r["emb_params"]), tokens), float(r["wall_time_s"])))
    return runs, "pretraining"


def _pretraining(models: Sequence[tuple[str, str]]):
    """Each of ``models`` ((group, model) rows of Table 2) pre-trained once at the paper's settings."""

    def work(profile: Any, results: Any) -> list[Runs]:
        table = results.table("table2").set_index(["group", "model"])
        out = []
        for key in models:
            if key not in table.index:
                raise KeyError(f"{results.source('table2')} has no row {key}: recompute table2")
            row = table.loc[key]
            name = key[1] if key[0] == "-" else f"{'MD' if key[0] == MD_GROUP else 'LSH'}-{key[1]}"
            out.append(Runs(f"{name} pre-trained", float(row["total_params"] - row["emb_params"]),
                            _tokens(profile.pt_steps, profile.pt_batch, profile.seq_len)))
        return out

    return work


_BERT = ("-", "BERT-MLM")

COST = ChapterCost("hashformers", "small", measure, {
    "proj-glue": ClaimWork(_pretraining([_BERT, (LSH_GROUP, "Proj")])),
    "retention": ClaimWork(_pretraining([_BERT, *((g, m) for g in (MD_GROUP, LSH_GROUP)
                                                  for m in ("Pool", "Add", "Proj"))])),
})
