"""Superbloom's parameter columns at the paper's vocabularies, counted from models built on the ``meta`` device.

The submission's Tables 1, 3 and 4 have no bodies in the source text; what the prose fixes is used and every other
value is ours, stated in the ``assumed`` column: Table 1's Wikipedia vocabulary of 5,281,889 entity pages with
α = 50 and m = 2 ("a heavy 50 to 1 hashing", "two hash functions", so "vocabulary size is 2N/α"), Table 3's top
500K pages with Superbloom at d = 256 and 1 or 12 layers and d = 384 at 1 layer (the names superbloom-d256l1,
-d256l12, -d384l1). Feed-forward width 4d and d / 64 heads (BERT's ratios) are assumed everywhere, and so is α = 50
in Table 3. ``#samples`` is what one training step's softmax scores (Table 1's column).

Table 1 is counted under two readings (the ``reading`` column), since its widths are not in the text:

* **same width** -- every model at d = 256 (Table 3's width). Superbloom is then more than an order of magnitude
  smaller than the baseline, which contradicts the prose;
* **similar size** -- what §3.3 implies: "We set other hyper-parameters (such as the embedding dimension) so both
  models have a similar size", and the abstract calls the sampled-softmax model "of a much larger size". The
  baseline keeps d = 256; Superbloom's width is the multiple of 64 whose parameter count is nearest the baseline's
  (:func:`matched_width`); the sampled-softmax model, unhashed, gets Superbloom's width (the same Transformer at
  "the same computational budget": its softmax over 128K samples costs about what Superbloom's over 2N/α tokens
  does), which makes it much larger. Which width the paper fixed is not in the text; this is our reading.
"""
from __future__ import annotations

import pandas as pd

from hashlib_core.params import count_parameters, instantiate_on_meta
from hashlib_core.papers.superbloom.modeling import SuperbloomConfig, SuperbloomForMaskedLM

__all__ = ["WIKIPEDIA_PAGES", "TOP_PAGES", "SAMPLED", "PAPER_CONFIGS", "READINGS", "WIDTH_STEP", "count",
           "matched_width", "paper_params"]

#: §3.1: "5,281,889 pages"; §3.4: "the top 500K entity pages"; Table 1's caption: "we use 128K samples"
WIKIPEDIA_PAGES = 5_281_889
TOP_PAGES = 500_000
SAMPLED = 128_000
#: widths are multiples of 64 (d / 64 attention heads, BERT's head size)
WIDTH_STEP = 64
#: Table 1's two readings (see the module docstring), in the order the table lists them
READINGS = ("same width", "similar size")

#: (table, model, ids, alpha, m, d, layers, sampled, assumed); Table 1's rows are its same-width reading
PAPER_CONFIGS = (
    ("Table 1", "baseline", WIKIPEDIA_PAGES, 1, 1, 256, 12, 0, "d = 256, 12 layers"),
    ("Table 1", "sampled-softmax", WIKIPEDIA_PAGES, 1, 1, 256, 12, SAMPLED, "d = 256, 12 layers"),
    ("Table 1", "superbloom", WIKIPEDIA_PAGES, 50, 2, 256, 12, 0, "d = 256, 12 layers"),
    ("Table 3", "superbloom-d256l1", TOP_PAGES, 50, 2, 256, 1, 0, "alpha = 50"),
    ("Table 3", "superbloom-d256l12", TOP_PAGES, 50, 2, 256, 12, 0, "alpha = 50"),
    ("Table 3", "superbloom-d384l1", TOP_PAGES, 50, 2, 384, 1, 0, "alpha = 50"),
)


def count(ids: int, alpha: int, m: int, d: int, layers: int, sampled: int = 0, *, full_maps: bool = False
          ) -> tuple[int, int]:
    """``(embedding, total)`` parameters of the model of these shapes, built on the meta device.

    The hash maps hold no parameters (the id -> token table is a buffer) and the vocabulary is ``m`` times
    ``ceil(ids / alpha)`` tokens plus the special ones, so the model is built over one id per hash token (``alpha``
    1): the same vocabulary and shapes without drawing permutations of millions of ids. ``full_maps`` builds the
    maps as given (a test checks that the counts agree)."""
    if not full_maps:
        ids, alpha = -(-ids // alpha), 1
    config = SuperbloomConfig(num_ids=ids, alpha=alpha, num_hashes=m, hidden_size=d, num_hidden_layers=layers,
                              num_attention_heads=max(1, d // WIDTH_STEP), intermediate_size=4 * d,
                              num_sampled=sampled)
    built = instantiate_on_meta(lambda: SuperbloomForMaskedLM(config))
    return built.embedding_parameter_count(), count_parameters(built)


def matched_width(target: int, ids: int, alpha: int, m: int, layers: int, *, step: int = WIDTH_STEP,
                  largest: int = 256 * WIDTH_STEP) -> int:
    """The multiple of ``step`` (at most ``largest``) whose model has the total parameter count nearest ``target``
    (bisection: the count grows with the width)."""
    total = {}

    def size(k: int) -> int:
        if k not in total:
            total[k] = count(ids, alpha, m, k * step, layers)[1]
        return total[k]

    low, high = 1, largest // step
    if size(high) < target:
        raise ValueError(f"no width up to {largest} reaches {target:,} parameters")
    while low < high:                                   # the smallest k with size(k) >= target
        mid = (low + high) // 2
        low, high = (mid + 1, high) if size(mid) < target else (low, mid)
    best = min((k for k in (low - 1, low) if k >= 1), key=lambda k: abs(size(k) - target))
    return best * step


def _row(table: str, reading: str, model: str, ids: int, alpha: int, m: int, d: int, layers: int, sampled: int,
         assumed: str) -> dict:
    emb, total = count(ids, alpha, m, d, layers, sampled)
    id_tokens = m * -(-ids // alpha)
    return {"table": table, "reading": reading, "model": model, "ids": ids, "alpha": alpha, "m": m, "d": d,
            "layers": layers, "hash_tokens": id_tokens, "#samples": sampled or id_tokens, "emb_params": emb,
            "total_params": total, "assumed": assumed}


def paper_params() -> pd.DataFrame:
    """One row per configuration and reading: hash tokens, #samples, embedding and total parameters."""
    rows = []
    for table, model, ids, alpha, m, d, layers, sampled, assumed in PAPER_CONFIGS:
        reading = READINGS[0] if table == "Table 1" else "as named"
        rows.append(_row(table, reading, model, ids, alpha, m, d, layers, sampled, assumed))
    same = {r["model"]: r for r in rows if r["table"] == "Table 1"}
    base, sb = same["baseline"], same["superbloom"]
    width = matched_width(base["total_params"], sb["ids"], sb["alpha"], sb["m"], sb["layers"])
    matched = (f"superbloom's d: the multiple of {WIDTH_STEP} nearest the baseline's size; {sb['layers']} layers")
    similar = [
        _row("Table 1", READINGS[1], "baseline", base["ids"], 1, 1, base["d"], base["layers"], 0,
             f"d = {base['d']}, {base['layers']} layers"),
        _row("Table 1", READINGS[1], "sampled-softmax", base["ids"], 1, 1, width, base["layers"], SAMPLED,
             "superbloom's width (the same Transformer, the same computational budget)"),
        _row("Table 1", READINGS[1], "superbloom", sb["ids"], sb["alpha"], sb["m"], width, sb["layers"], 0, matched),
    ]
    return pd.DataFrame(rows[:3] + similar + rows[3:])
