"""What the Superbloom headline claims cost to settle (:mod:`hashlib_core.claims.cost`).

N is a model's parameters less its embedding table (for the unhashed baseline and the sampled softmax the table is
most of the model, and its full or sampled softmax, left out by the rule, is what they pay for it). The rate: the
committed recall models (``models``: steps x batch x segment x hashes tokens each, its wall time). At the paper's
scale the models are the paper's as the chapter reads them (``params``: Table 1's models of the same width or of
similar size, Table 3's depths; Table 3's baselines share Superbloom's encoder, so their N is its), each trained over
the ``paper`` profile's steps, batch and segments, with its learning-rate sweep and seeds (rates + seeds - 1 runs).
The paper reports each effect at one scale.
"""
from __future__ import annotations

from typing import Any, Sequence

from hashlib_core.claims.cost import ChapterCost, ClaimWork, Runs

__all__ = ["COST", "measure"]


def measure(results: Any) -> tuple[list[tuple[Runs, float]], str]:
    """The committed recall models with their wall times."""
    table, config = results.table("models"), results.config("models")
    return [(Runs(f"{r['name']} (seed {r['seed']})", float(r["total_params"] - r["emb_params"]),
                  float(r["steps"]) * config["batch"] * config["segment"] * int(r["num_hashes"])),
             float(r["wall_time_s"])) for _, r in table.iterrows()], "models"


def _row(results: Any, table: str, reading: str, model: str) -> Any:
    params = results.table("params")
    row = params[(params["table"] == table) & (params["reading"] == reading) & (params["model"] == model)]
    if row.empty:
        raise KeyError(f"{results.source('params')} has no {model!r} ({table}, {reading}): recompute params")
    return row.iloc[0]


def _trained(models: Sequence[tuple[str, str, str, str]]):
    """``(label, table, reading, model)``: each the ``params`` row whose N it has (hashes: that row's ``m``, or one
    for a baseline named after a Superbloom row)."""

    def work(profile: Any, results: Any) -> list[Runs]:
        runs = len(profile.learning_rates) + profile.seeds - 1
        out = []
        for label, table, reading, model in models:
            row = _row(results, table, reading, model)
            hashes = int(row["m"]) if label.startswith(("superbloom", "Superbloom")) or model == label else 1
            tokens = float(profile.steps) * profile.batch * profile.segment * hashes
            out.append(Runs(label, float(row["total_params"] - row["emb_params"]), tokens, runs))
        return out

    return work


_T1 = ("Table 1", "similar size")
_WIDTH = ("Table 1", "same width")
_SIMILAR = _trained([("superbloom", *_T1, "superbloom"), ("baseline", *_T1, "baseline")])
_DEPTHS = [(f"{family}-{depth}", "Table 3", "as named", f"superbloom-d256{depth}")
           for family in ("superbloom", "baseline") for depth in ("l1", "l12")]

COST = ChapterCost("superbloom", "cpu", measure, {
    "beats-similar": ClaimWork(_trained([("superbloom", *_WIDTH, "superbloom"), ("baseline", *_WIDTH, "baseline")]),
                               note="the baseline at Superbloom's width: at most the cost of the narrower baseline of "
                                    "Superbloom's size"),
    "beats-similar-large": ClaimWork(_SIMILAR),
    "beats-sampled": ClaimWork(_trained([("superbloom", *_T1, "superbloom"),
                                         ("sampled-softmax", *_T1, "sampled-softmax")])),
    "depth-gap": ClaimWork(_trained(_DEPTHS), note="Table 3's baselines with Superbloom's encoder"),
})
