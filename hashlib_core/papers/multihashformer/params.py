"""MultiHashFormer's Table 1 parameter columns, counted from models built on the ``meta`` device.

Model code never reads the paper's tables; this module puts the two together.
"""
from __future__ import annotations

import pandas as pd

from hashlib_core.papers.multihashformer.presets import build_model, parameter_groups, parse_variant
from hashlib_core.params import instantiate_on_meta
from hashlib_core.results import format_like, load_paper_table, parse_printed

__all__ = ["table1_printed_params", "multihashformer_table1_params", "fig3_embedding_params", "expanded_vocab_size",
           "paper_scale_expansion_params", "table1_readings"]


def table1_printed_params() -> list[tuple[str, str, str, str]]:
    """Table 1's "#Param" cells exactly as printed, ``(size, model, Emb, Dec)``, read from the transcription
    ``data/paper_tables/multihashformer_table1.csv`` (the random-guess row has none)."""
    printed = load_paper_table("multihashformer_table1")
    printed = printed[printed["scale"] != "-"]
    return list(zip(printed["scale"], printed["model"], printed["#Param_Emb"], printed["#Param_Dec"]))


def multihashformer_table1_params() -> pd.DataFrame:
    """Table 1's ``#Param Emb`` and ``Dec`` for every row, counted from models built on the ``meta`` device.

    **What the columns count.** ``dec`` is the Qwen3 decoder stack (all layers + final RMSNorm); ``emb`` is every
    other parameter: the tied ``V x d`` matrix for Standard; for MHF the ``H*B x d`` hash tables, the gate
    (``d*64 + 64 + 64 + 1``), the adapter (``d*d + d``) and the ``H - 1`` cascade mixers
    (``2d*64 + 64 + 64*d + d`` each). Where the printed digits can tell groupings apart (100M H3B10K, and the
    "10M to 102M" of section 6), only this grouping rounds to the print; :func:`table1_readings` computes the other
    readings the chapter weighs (tables alone, tables + gate + adapter, Table 9's B for H3B10K, a 1B decoder with 2
    key-value heads), so every number of that discussion comes from a built model.

    Columns: ``size, model, num_hashes, num_buckets, num_hidden_layers`` and the exact integer counts
    ``hash_tables, gate, adapter, cascade_mixers, embedding`` (0 where not applicable), ``emb, dec, total``;
    ``emb_ours`` / ``dec_ours`` formatted like the printed cell (decimal prefixes, same decimals),
    ``emb_paper`` / ``dec_paper`` as printed, and ``emb_agrees`` / ``dec_agrees``.
    """
    rows = []
    for size, label, emb_printed, dec_printed in table1_printed_params():
        spec = parse_variant(label)
        model = instantiate_on_meta(lambda: build_model(size, label))
        groups = parameter_groups(model)
        layers = model.config.num_hidden_layers
        emb_fmt = format_like(groups["emb"], parse_printed(emb_printed))
        dec_fmt = format_like(groups["backbone"], parse_printed(dec_printed))
        rows.append({
            "size": size,
            "model": label,
            "num_hashes": spec.num_hashes or 0,
            "num_buckets": spec.num_buckets or 0,
            "num_hidden_layers": layers,
            "hash_tables": groups.get("hash_tables", 0),
            "gate": groups.get("gate", 0),
            "adapter": groups.get("adapter", 0),
            "cascade_mixers": groups.get("cascade_mixers", 0),
            "embedding": groups.get("embedding", 0),
            "emb": groups["emb"],
            "dec": groups["backbone"],
            "total": groups["total"],
            "emb_ours": emb_fmt,
            "emb_paper": emb_printed,
            "emb_agrees": emb_fmt == emb_printed,
            "dec_ours": dec_fmt,
            "dec_paper": dec_printed,
            "dec_agrees": dec_fmt == dec_printed,
        })
    return pd.DataFrame(rows)


def fig3_embedding_params() -> pd.DataFrame:
    """Embedding parameters (``emb`` of :func:`~hashlib_core.papers.multihashformer.presets.parameter_groups`) of the
    Table 9 variants at the 100M and 1B scales, on the meta device; section 6 quotes "10M to 102M" for Figure 3."""
    rows = []
    for variant in load_paper_table("multihashformer_table9")["MHF abbr."]:
        for size in ("100M", "1B"):
            model = instantiate_on_meta(lambda: build_model(size, variant))
            rows.append({"variant": variant, "size": size, "H": model.config.num_hashes,
                         "B": model.config.num_buckets, "emb_params": parameter_groups(model)["emb"]})
    return pd.DataFrame(rows)


def expanded_vocab_size() -> int:
    """Table 8's vocabulary size after expansion (the 1B and 3B columns agree)."""
    row = load_paper_table("multihashformer_table8").set_index("Hyperparameters").loc["Vocabulary size"]
    sizes = {int(parse_printed(v).value) for v in row.values}
    if len(sizes) != 1:
        raise ValueError(f"Table 8's expanded vocabulary sizes differ between columns: {sorted(sizes)}")
    return sizes.pop()


def paper_scale_expansion_params() -> pd.DataFrame:
    """Section 5.3's "31M parameters for 15K new tokens" and "46.9% larger vocabulary", counted on the meta device
    for the 1B models of Table 7 before (V = 32,768) and after the expansion (Table 8's vocabulary size)."""
    from hashlib_core.papers.multihashformer.presets import PAPER_VOCAB_SIZE

    after = expanded_vocab_size()
    rows = []
    for variant in ("Standard", "MHF (H4B16K)"):
        counts = {}
        for vocab in (PAPER_VOCAB_SIZE, after):
            model = instantiate_on_meta(lambda: build_model("1B", variant, vocab_size=vocab))
            counts[vocab] = parameter_groups(model)["total"]
        rows.append({"model": variant, "vocab_before": PAPER_VOCAB_SIZE, "vocab_after": after,
                     "params_before": counts[PAPER_VOCAB_SIZE], "params_after": counts[after],
                     "new_params": counts[after] - counts[PAPER_VOCAB_SIZE], "new_tokens": after - PAPER_VOCAB_SIZE,
                     "growth_%": 100 * (after - PAPER_VOCAB_SIZE) / PAPER_VOCAB_SIZE})
    return pd.DataFrame(rows)


def table1_readings() -> pd.DataFrame:
    """Other ways of reading Table 1's cells, each counted from a model built on the meta device.

    Rows (``reading``, ``size``, ``model``, ``params``): the hash tables alone and tables + gate + adapter of every
    MHF row; the 1B H3B10K tables with Table 9's B = 10,624 instead of section 4.1's 10,240; and the 1B decoder
    stacks (Standard, Standard+2L) with 2 key-value heads instead of Table 7's 8.
    """
    from dataclasses import replace

    from hashlib_core.papers.multihashformer.presets import BACKBONE_PRESETS

    rows = []
    for size, label, _, _ in table1_printed_params():
        spec = parse_variant(label)
        if spec.kind != "mhf":
            continue
        groups = parameter_groups(instantiate_on_meta(lambda: build_model(size, label)))
        rows.append({"reading": "hash tables alone", "size": size, "model": label, "params": groups["hash_tables"]})
        rows.append({"reading": "tables + gate + adapter (no cascade mixers)", "size": size, "model": label,
                     "params": groups["hash_tables"] + groups["gate"] + groups["adapter"]})
    table9 = load_paper_table("multihashformer_table9").set_index("MHF abbr.")
    b_table9 = int(parse_printed(table9.loc["H3B10K", "B"]).value)
    groups = parameter_groups(instantiate_on_meta(lambda: build_model("1B", f"MHF (H3B{b_table9})")))
    rows.append({"reading": f"hash tables alone with Table 9's B = {b_table9:,}", "size": "1B",
                 "model": "MHF (H3B10K)", "params": groups["hash_tables"]})
    shape = BACKBONE_PRESETS["1B"]
    two_kv = replace(shape, num_key_value_heads=2)
    for label in ("Standard", f"Standard+{shape.added_layers}L"):
        groups = parameter_groups(instantiate_on_meta(lambda: build_model(two_kv, label)))
        rows.append({"reading": "decoder with 2 key-value heads", "size": "1B", "model": label,
                     "params": groups["backbone"]})
    return pd.DataFrame(rows)
