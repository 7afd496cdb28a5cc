"""What the pNLP-Mixer headline claims cost to settle (:mod:`hashlib_core.claims.cost`).

The mixer has no embedding table: N is every parameter, applied at each of a sentence's ``max_seq_len`` positions.
The rate: the committed MTOP runs (``table4``, float32 rows: training sentences x epochs x positions tokens each, its
wall time). At the paper's scale the mixer (its parameters from ``sizes``) trains on every language of the paper's
datasets with their full training splits (§4, "Datasets", below), for the ``paper`` profile's epoch cap and seeds;
mBERT's numbers are the paper's, so it trains nothing here, and the tuning sweep is left out. The paper reports the
effect at one scale.
"""
from __future__ import annotations

from typing import Any, Sequence

from hashlib_core.claims.cost import ChapterCost, ClaimWork, Runs

__all__ = ["COST", "measure", "MTOP_TRAIN", "MULTIATIS_TRAIN"]

#: §4 ("MTOP"): "The train, dev, and test set for each language contain 10k, 1.5k, and 3k samples."
MTOP_TRAIN = 10_000
#: §4 ("multiATIS"): "Each language except Hindi and Turkish consists of 4, 488/490/893 samples for train, dev, and
#: test sets; for Hindi and Turkish the splits are 1, 440/160/893 and 578/60/715" (nine languages)
MULTIATIS_TRAIN = {"en": 4488, "es": 4488, "fr": 4488, "de": 4488, "ja": 4488, "pt": 4488, "zh": 4488, "hi": 1440,
                   "tr": 578}


def measure(results: Any) -> tuple[list[tuple[Runs, float]], str]:
    """The committed MTOP runs (one per language and seed: the float32 rows) with their wall times."""
    table, config = results.table("table4"), results.config("table4")
    table = table[table["precision"] == "float32"]
    return [(Runs(f"{r['task']} seed {r['seed']}", float(r["parameters"]),
                  float(r["train_sentences"]) * int(r["epochs"]) * config["max_seq_len"]), float(r["wall_time_s"]))
            for _, r in table.iterrows()], "table4"


def _mixer(results: Any) -> float:
    sizes = results.table("sizes").set_index("encoder")
    if "mixer" not in sizes.index:
        raise KeyError(f"{results.source('sizes')} has no mixer row: recompute sizes")
    return float(sizes.loc["mixer", "parameters"])


def _trained(dataset: str, train: Sequence[tuple[str, int]], epochs: str):
    def work(profile: Any, results: Any) -> list[Runs]:
        cap = getattr(profile, epochs)
        return [Runs(f"pNLP-Mixer on {dataset} {lang}", _mixer(results), float(n) * cap * profile.max_seq_len,
                     profile.seeds) for lang, n in train]

    return work


def _mtop(profile: Any, results: Any) -> list[Runs]:
    return _trained("MTOP", [(lang, MTOP_TRAIN) for lang in profile.mtop_languages], "mtop_max_epochs")(profile,
                                                                                                        results)


COST = ChapterCost("pnlp_mixer", "cpu", measure, {
    "mbert-multiatis": ClaimWork(_trained("multiATIS", list(MULTIATIS_TRAIN.items()), "max_epochs")),
    "mbert-mtop": ClaimWork(_mtop),
})
