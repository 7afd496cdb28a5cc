"""The dynamic-embeddings chapter's tables: ours beside the EELBERT abstract and the blog, and every number the
prose quotes."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from hashlib_core.results import load_paper_table, parse_printed

__all__ = ["TASK_LABELS", "hashformers_results", "claims", "properties_view", "similarity_view", "sizes_view", "relative_gap", "glue_view",
           "claims_view", "napkin_view", "bench_view", "quoted"]

#: Column labels of the GLUE tasks (HashFormers' Table 1 names)
TASK_LABELS = {"sst2": "SST-2", "cola": "CoLA", "mrpc": "MRPC", "stsb": "STS-B", "rte": "RTE"}
#: The table model each dynamic model is compared with (same width; the paper compares UNO-EELBERT with BERT-tiny)
REFERENCE = "BERT-tiny"


def hashformers_results() -> tuple[pd.DataFrame | None, str]:
    """The HashFormers chapter's richest committed GLUE table (its results, not recomputed) and its profile name;
    ``(None, "")`` when it has none."""
    from hashlib_core.papers import chapter

    hf = chapter("hashformers")
    profile, _ = hf.committed()
    if profile is None:
        return None, ""
    return hf.store(profile.name).read_table("glue"), profile.name


def claims() -> pd.DataFrame:
    """The EELBERT abstract's claims (``data/paper_tables/eelbert_abstract.csv``), indexed by claim."""
    return load_paper_table("eelbert_abstract").set_index("claim")


def _claim_number(claim: str) -> float:
    parsed = parse_printed(claims().loc[claim, "value"].replace("MB", "").replace("within", "").strip())
    if parsed is None:
        raise ValueError(f"the claim {claim!r} has no number")
    return parsed.value


def properties_view(props: pd.DataFrame) -> pd.DataFrame:
    out = props.copy()
    out["holds"] = out["holds"].map({True: "yes", False: "NO"})
    return out.rename(columns={"value": "measured"})


def similarity_view(sim: pd.DataFrame) -> pd.DataFrame:
    """The groups against random pairs (the all-pairs correlation is quoted in the prose)."""
    groups = sim[sim["random_pairs"] > 0].drop(columns=["spearman_with_gold"])
    return groups.rename(columns={"mean_cosine": "mean cosine", "random_mean_cosine": "random pairs' mean cosine",
                               "random_pairs": "random pairs", "cohens_d": "Cohen's d", "auc": "AUC",
                               "spearman_with_gold": "Spearman with gold", "example": "first pair"})


def sizes_view(sizes: pd.DataFrame) -> pd.DataFrame:
    out = sizes[["model", "layers", "hidden", "total_params", "emb_params", "emb_share_%", "fp32_MB",
                 "int8_MB", "BERT-tiny_over_model"]].copy()
    out["emb_share_%"] = out["emb_share_%"].round(1)
    out["BERT-tiny_over_model"] = out["BERT-tiny_over_model"].round(1)
    return out.rename(columns={"hidden": "d", "total_params": "parameters", "emb_params": "table parameters",
                               "emb_share_%": "table share (%)", "fp32_MB": "float32 (MB)", "int8_MB": "int8 (MB)",
                               "BERT-tiny_over_model": "BERT-tiny / model"})


def relative_gap(glue: pd.DataFrame, model: str, reference: str = REFERENCE, column: str = "avg") -> float:
    """``100 (model - reference) / reference`` of ``column`` (negative: below the reference)."""
    g = glue.set_index("name")
    return float(100.0 * (g.loc[model, column] - g.loc[reference, column]) / g.loc[reference, column])


def glue_view(glue: pd.DataFrame, tasks: list[str]) -> pd.DataFrame:
    """One row per model, "mean ± std" per task over the seeds, the average and the gap to BERT-tiny; a last row
    with the majority-class score of each task."""
    rows = []
    for _, r in glue.iterrows():
        row = {"model": r["name"], "size float32 (MB)": r["size_fp32_bytes"] / 1e6}
        for t in tasks:
            std = r[f"{t}_std"]
            row[TASK_LABELS.get(t, t)] = f"{r[t]:.1f}" + ("" if pd.isna(std) else f"\u00a0±\u00a0{std:.1f}")
        row["average"] = f"{r['avg']:.1f}"
        row[f"gap to {REFERENCE} (%)"] = ("-" if r["name"] == REFERENCE or REFERENCE not in set(glue["name"])
                                          else f"{relative_gap(glue, r['name']):+.1f}")
        rows.append(row)
    first = glue.iloc[0]
    majority = {"model": "majority class", "size float32 (MB)": np.nan}
    for t in tasks:
        m = first[f"{t}_majority"]
        majority[TASK_LABELS.get(t, t)] = "- (no classes)" if pd.isna(m) else f"{m:.1f}"
    rows.append({**majority, "average": "-", f"gap to {REFERENCE} (%)": "-"})
    return pd.DataFrame(rows)


def claims_view(sizes: pd.DataFrame, glue: pd.DataFrame | None) -> pd.DataFrame:
    """Each abstract claim, the paper's value, ours, and how ours was obtained."""
    s = sizes.set_index("model")
    uno, tiny = "UNO-EELBERT (ours)", REFERENCE
    c = claims()
    rows = [
        {"claim": "UNO-EELBERT size", "paper": c.loc["UNO-EELBERT size", "value"],
         "ours": f"{s.loc[uno, 'fp32_MB']:.2f} MB",
         "how": "our one-layer reading, float32, BERT's 30,522-token vocabulary"},
        {"claim": "BERT-tiny / UNO-EELBERT size", "paper": c.loc["UNO-EELBERT smaller than BERT-tiny", "value"],
         "ours": f"{s.loc[uno, 'BERT-tiny_over_model']:.1f}x", "how": "parameter counts at the same vocabulary"},
        {"claim": "BERT-tiny / EELBERT-tiny size", "paper": "-",
         "ours": f"{s.loc['EELBERT-tiny', 'BERT-tiny_over_model']:.1f}x", "how": "same backbone, table removed"},
    ]
    if glue is not None and {uno, tiny, "EELBERT-tiny"} <= set(glue["name"]):
        rows += [
            {"claim": "UNO-EELBERT GLUE vs BERT-tiny", "paper": c.loc["UNO-EELBERT GLUE vs BERT-tiny", "value"],
             "ours": f"{relative_gap(glue, uno):+.1f}%", "how": "relative gap of our GLUE average (the profile's "
             "tasks; BERT-tiny trained as briefly as ours, not fully trained)"},
            {"claim": "EELBERT vs BERT (same backbone)", "paper": c.loc["EELBERT GLUE vs BERT", "value"],
             "ours": f"{relative_gap(glue, 'EELBERT-tiny'):+.1f}%", "how": "EELBERT-tiny against BERT-tiny"},
        ]
    return pd.DataFrame(rows)


def napkin_view(napkin: pd.DataFrame) -> pd.DataFrame:
    """The blog's printed arithmetic beside the same quantities computed from the configurations, one row per
    (model, quantity)."""
    blog = load_paper_table("eelbert_blog_napkin").set_index("model")
    ours = napkin.set_index("model")
    rows = []
    for model in list(blog.index) + [m for m in ours.index if m not in blog.index]:
        b = blog.loc[model] if model in blog.index else None
        o = ours.loc[model] if model in ours.index else None

        def cell(column: str, suffix: str = "") -> str:
            return "-" if b is None or b[column] == "-" else f"{b[column]}{suffix}"

        unit = "" if b is None else f" {b['size_unit']}"
        d_note = ("" if b is None or b["embedding_size_prose"] in ("-", b["embedding_size_formula"])
                  else f"the formula uses d = {b['embedding_size_formula']}, the prose "
                       f"{b['embedding_size_prose']}")
        label = model if b is not None else f"{model} (not in the blog)"
        if o is None:
            continue
        rows += [
            {"model": label, "quantity": "V x d",
             "blog": "-" if b is None or b["vocab_size"] == "-" else f"{b['vocab_size']} x {b['embedding_size_formula']}",
             "ours": f"{int(o['vocab_size']):,} x {int(o['hidden_size']):,}", "note": d_note},
            {"model": label, "quantity": "embedding, float16", "blog": cell("embedding_layer_size", unit),
             "ours": f"{o['embedding_fp16_MiB']:,.1f} MiB", "note": ""},
            {"model": label, "quantity": "model, float16", "blog": cell("model_size", unit),
             "ours": f"{o['model_fp16_MiB']:,.1f} MiB" + (f" ({o['model_fp16_GiB']:.1f} GiB)"
                                                          if o["model_fp16_MiB"] >= 1024 else ""), "note": ""},
            {"model": label, "quantity": "input-table share", "blog": cell("share"),
             "ours": f"{o['input_embedding_share_%']:.1f}%",
             "note": ("" if np.isclose(o["vocabulary_share_%"], o["input_embedding_share_%"])
                      else f"{o['vocabulary_share_%']:.1f}% with the untied output head")},
        ]
    return pd.DataFrame(rows)


def bench_view(bench: dict) -> pd.DataFrame:
    data = bench.get("data", bench)
    out = pd.DataFrame(data["results"])
    return out[["hidden_size", "method", "tokens", "tokens_per_s"]].rename(
        columns={"hidden_size": "d", "tokens_per_s": "tokens / s"})


def quoted(shown, bench: dict | None = None) -> dict[str, str]:
    """Every number the chapter's prose quotes, computed from the shown results."""
    p = shown.profile
    out: dict[str, str] = {"max_n": str(p.max_n), "pt_steps": f"{p.pt_steps:,}", "ft_epochs": f"{p.ft_epochs:g}",
                           "seeds": str(len(p.ft_seeds))}
    sizes = shown.table("sizes").set_index("model")
    out.update(uno_mb=f"{sizes.loc['UNO-EELBERT (ours)', 'fp32_MB']:.2f}",
               uno_ratio=f"{sizes.loc['UNO-EELBERT (ours)', 'BERT-tiny_over_model']:.1f}",
               tiny_share=f"{sizes.loc['BERT-tiny', 'emb_share_%']:.1f}%",
               base_share=f"{sizes.loc['BERT-base', 'emb_share_%']:.1f}%",
               paper_mb=claims().loc["UNO-EELBERT size", "value"],
               paper_ratio=claims().loc["UNO-EELBERT smaller than BERT-tiny", "value"])
    nap = shown.table("napkin").set_index("model")
    out.update(mistral_mib=f"{nap.loc['Mistral 7B', 'embedding_fp16_MiB']:.0f} MiB",
               mistral_gib=f"{nap.loc['Mistral 7B', 'model_fp16_GiB']:.1f} GiB",
               mistral_share=f"{nap.loc['Mistral 7B', 'input_embedding_share_%']:.1f}%",
               mistral_vocab_share=f"{nap.loc['Mistral 7B', 'vocabulary_share_%']:.1f}%",
               gpt2_share=f"{nap.loc['GPT2', 'input_embedding_share_%']:.1f}%")
    sim = shown.table("similarity").set_index("group")
    spelled, family, meaning = (sim.index[sim.index.str.startswith(prefix)][0] for prefix in
                                ("Card-660 spelling", "corpus word families", "Card-660 similar in meaning"))
    out.update(spelled_auc=f"{sim.loc[spelled, 'auc']:.2f}", spelled_pairs=str(int(sim.loc[spelled, "pairs"])),
               family_auc=f"{sim.loc[family, 'auc']:.2f}", meaning_auc=f"{sim.loc[meaning, 'auc']:.2f}",
               card_spearman=f"{sim.loc['Card-660, all pairs', 'spearman_with_gold']:+.2f}")
    glue = shown.table("glue").set_index("name")
    if "sst2" in glue.columns:
        sst = glue["sst2"] - glue["sst2_majority"]
        out.update(sst_min_margin=f"{sst.min():+.1f}", sst_majority=f"{glue['sst2_majority'].iloc[0]:.1f}")
    g = shown.table("glue")
    at_floor = [TASK_LABELS.get(t, t) for t in p.task_keys() if t != "stsb" and t in g.columns
                and (g[t] - g[f"{t}_majority"]).max() < 3.0]
    out["at_majority"] = (", ".join(at_floor) + (" stay" if len(at_floor) > 1 else " stays")
                          + " within 3 points of the majority class for every model" if at_floor
                          else "every task moves at least 3 points above the majority class for some model")
    if {"BERT-tiny", "EELBERT-tiny", "UNO-EELBERT (ours)"} <= set(g["name"]):
        out.update(gap_tiny=f"{relative_gap(g, 'EELBERT-tiny'):+.1f}%",
                   gap_uno=f"{relative_gap(g, 'UNO-EELBERT (ours)'):+.1f}%")
    pre = shown.table("pretraining")
    out["corpus_tokens"] = f"{int(pre['corpus_tokens'].iloc[0]):,}"
    if bench is not None:
        b = bench_view(bench)
        for d in b["d"].unique():
            rate = b[b["d"] == d].set_index("method")["tokens / s"]
            out[f"bench_{d}_cached_vs_table"] = f"{rate['dynamic, cached'] / rate['nn.Embedding']:.2f}"
            out[f"bench_{d}_uncached_vs_cached"] = f"{rate['dynamic, cached'] / rate['dynamic, uncached']:.0f}"
    return out
