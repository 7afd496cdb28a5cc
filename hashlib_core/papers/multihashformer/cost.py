"""What the MultiHashFormer headline claim costs to settle (:mod:`hashlib_core.claims.cost`).

A decoder LM multiplies every token by its tied output layer, so N here is every parameter of the model. The rate:
the committed language models (``lm_quality``: the ``cpu`` profile's steps x batch x window tokens each, its training
seconds). The paper's scales are Table 7's (steps, batch, window at 100M, 1B and 3B), with each model's parameters at
that scale from ``table1_params``; each model is trained once at each (the ``paper`` profile sweeps no rate and keeps
one seed). The smallest scale where the paper reports the effect is Table 7's first column (100M).
"""
from __future__ import annotations

from typing import Any, Sequence

from hashlib_core.claims.cost import ChapterCost, ClaimWork, Runs
from hashlib_core.results import load_paper_table, parse_printed

__all__ = ["COST", "measure", "paper_tokens"]

#: Table 7's rows that give a run's tokens
_STEPS, _BATCH, _WINDOW = "Train steps", "Batch size", "Sequence length"
#: the headline claim's models, as ``table1_params`` names them
_MODELS = ("Standard", "MHF (H4B16K)")


def paper_tokens(scale: str) -> float:
    """Tokens one pre-training run reads at ``scale`` (a column of Table 7): steps x batch x window."""
    table = load_paper_table("multihashformer_table7").set_index("Hyperparameters")
    if scale not in table.columns:
        raise KeyError(f"Table 7 has no scale {scale!r}; its scales: {list(table.columns)}")
    out = 1.0
    for row in (_STEPS, _BATCH, _WINDOW):
        out *= parse_printed(str(table.loc[row, scale])).value
    return out


def measure(results: Any) -> tuple[list[tuple[Runs, float]], str]:
    """The committed language models with their training seconds (the baselines that train nothing left out)."""
    table, config = results.table("lm_quality"), results.config("lm_quality")
    tokens = float(config["max_steps"]) * config["batch_size"] * config["seq_len"]
    table = table[table["train_seconds"] > 0]
    return [(Runs(str(r["model"]), float(r["total_params"]), tokens), float(r["train_seconds"]))
            for _, r in table.iterrows()], "lm_quality"


def _runs(profile: Any) -> int:
    return max(len(profile.lr_sweep), 1) + len(profile.scale_seeds) - 1


def _trained(scales: Sequence[str] | None):
    def work(profile: Any, results: Any) -> list[Runs]:
        table = results.table("table1_params")
        chosen = scales or list(dict.fromkeys(table["size"]))
        out = []
        for scale in chosen:
            for model in _MODELS:
                row = table[(table["size"] == scale) & (table["model"] == model)]
                if row.empty:
                    raise KeyError(f"{results.source('table1_params')} has no {model} at {scale}")
                out.append(Runs(f"{model} at {scale}", float(row["total"].iloc[0]), paper_tokens(scale),
                                _runs(profile)))
        return out

    return work


def _smallest() -> list[str]:
    return [load_paper_table("multihashformer_table7").columns[1]]


COST = ChapterCost("multihashformer", "cpu", measure, {
    "headline-lm": ClaimWork(_trained(None), lambda profile, results: _trained(_smallest())(profile, results),
                             note="Table 7's three scales"),
})
