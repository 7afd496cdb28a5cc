"""The dynamic-embeddings chapter's tables: ours beside the EELBERT abstract and the blog, and every number the
prose quotes."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from hashlib_core.papers.dynamic_embeddings.sizes import (SHAPE_LAYERS, SHAPE_WIDTHS, STORAGE, abstract_claims,
                                                         printed_claim)
from hashlib_core.results import load_paper_table
from hashlib_core.results.paper import PrintedNumber

__all__ = ["TASK_LABELS", "hashformers_results", "abstract_claims", "printed_claim", "rounds_to",
           "task_floor", "learning_tasks", "glue_table", "properties_view", "similarity_view", "sizes_view",
           "shapes_view", "relative_gap", "glue_view", "napkin_view", "flatness_view", "protocol_quoted",
           "bench_view", "quoted"]

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


def rounds_to(value: float, printed: PrintedNumber, unit: str = "") -> str:
    """``"rounds to the abstract's 1.2 MB"`` or ``"rounds to 1.1 MB, not the abstract's 1.2 MB"``: whether
    ``value`` lies within half a unit of the printed number's last place."""
    from decimal import ROUND_HALF_UP, Decimal

    # rounded half up, as the printed number's region is [value - resolution, value + resolution)
    scale = {"": 1.0, "K": 1e3, "M": 1e6, "B": 1e9}[printed.suffix]
    body = Decimal(repr(float(value) / scale)).quantize(Decimal(1).scaleb(-printed.decimals), rounding=ROUND_HALF_UP)
    ours = f"{body}{printed.suffix}{'%' if printed.percent else ''}"
    fits = printed.value - printed.resolution <= value < printed.value + printed.resolution
    return (f"rounds to the abstract's {printed.text}{unit}" if fits
            else f"rounds to {ours}{unit}, not the abstract's {printed.text}{unit}")


def task_floor(glue: pd.DataFrame, task: str) -> float:
    """What a model scores on ``task``'s dev items without learning: the majority class, or 0 for a correlation
    (STS-B)."""
    majority = glue[f"{task}_majority"].iloc[0]
    return 0.0 if pd.isna(majority) else float(majority)


def learning_tasks(shown: Any) -> tuple[list[str], list[str]]:
    """``(learned, at_floor)``: the profile's tasks on which some model learns and those on which every model stays at
    its floor, by the rule every GLUE chapter shares (:func:`hashlib_core.claims.glue.learned_tasks`: decided on the
    held-out part of the training split, never on the dev items the claims test)."""
    from hashlib_core.claims.glue import learned_tasks

    return learned_tasks(shown.table("glue_runs"), shown.profile.task_keys(), shown.profile)


def glue_table(runs: pd.DataFrame, tasks: Sequence[str]) -> pd.DataFrame:
    """One row per model: mean and standard deviation (over the seeds at the chosen learning rate, ``ddof=1``) per
    task, the task's majority-class score (:func:`hashlib_core.glue.per_task_scores`), the average over tasks, and
    the model's size."""
    from hashlib_core.glue import per_task_scores

    chosen = runs[runs["chosen"].astype(bool)] if "chosen" in runs.columns else runs
    table = per_task_scores(chosen, tasks)
    table["avg"] = table[list(tasks)].mean(axis=1, skipna=False)
    sizes = chosen.groupby("name", sort=False)[["total_params", "emb_params", "size_fp32_bytes",
                                                "size_int8_bytes"]].first()
    return table.join(sizes).reset_index()


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


def shapes_view(shapes: pd.DataFrame) -> pd.DataFrame:
    """The shapes that fit the abstract's 1.2 MB or 15x (and ours), with "yes"/"no" per number."""
    out = shapes.copy()
    out["shape"] = [f"{r.layers} x {r.hidden}" + (" (ours)" if r.ours else "") for r in out.itertuples()]
    size, ratio = printed_claim("UNO-EELBERT size"), printed_claim("UNO-EELBERT smaller than BERT-tiny")
    for column in ("fits_MB", "fits_ratio"):
        out[column] = out[column].map({True: "yes", False: "no"})
    out["MB"] = out["MB"].round(3)
    out["BERT-tiny_over_model"] = out["BERT-tiny_over_model"].round(2)
    return out[["shape", "params", "storage", "MB", "BERT-tiny_over_model", "fits_MB", "fits_ratio"]].rename(
        columns={"params": "parameters", "BERT-tiny_over_model": "BERT-tiny (float32) / model",
                 "fits_MB": f"rounds to {size.text} MB", "fits_ratio": f"rounds to {ratio.text}x"})


def relative_gap(glue: pd.DataFrame, model: str, reference: str = REFERENCE, column: str = "avg") -> float:
    """``100 (model - reference) / reference`` of ``column`` (negative: below the reference)."""
    g = glue.set_index("name")
    return float(100.0 * (g.loc[model, column] - g.loc[reference, column]) / g.loc[reference, column])


_TRAINED_SIZE = "float32 MB (fine-tuned)"


def glue_view(glue: pd.DataFrame, tasks: list[str]) -> pd.DataFrame:
    """One row per model, "mean ± std" per task over the seeds, the average and the gap to BERT-tiny; a last row
    with the majority-class score of each task."""
    rows = []
    for _, r in glue.iterrows():
        row = {"model": r["name"], _TRAINED_SIZE: r["size_fp32_bytes"] / 1e6}
        for t in tasks:
            std = r[f"{t}_std"]
            row[TASK_LABELS.get(t, t)] = f"{r[t]:.1f}" + ("" if pd.isna(std) else f"\u00a0±\u00a0{std:.1f}")
        row["average"] = f"{r['avg']:.1f}"
        row[f"gap to {REFERENCE} (%)"] = ("-" if r["name"] == REFERENCE or REFERENCE not in set(glue["name"])
                                          else f"{relative_gap(glue, r['name']):+.1f}")
        rows.append(row)
    first = glue.iloc[0]
    majority = {"model": "majority class", _TRAINED_SIZE: np.nan}
    for t in tasks:
        m = first[f"{t}_majority"]
        majority[TASK_LABELS.get(t, t)] = "- (no classes)" if pd.isna(m) else f"{m:.1f}"
    rows.append({**majority, "average": "-", f"gap to {REFERENCE} (%)": "-"})
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


def flatness_view(curves: pd.DataFrame) -> pd.DataFrame:
    """Per pre-trained model: its MLM loss at the first log point, halfway and at the end, and the share of its
    decrease that came in the second half (:func:`hashlib_core.pretraining.pretraining_flatness`)."""
    from hashlib_core.pretraining import pretraining_flatness

    return pretraining_flatness(curves).rename(columns={"name": "model"})


def protocol_quoted(shown) -> dict[str, str]:
    """How far the models were trained: the largest share of a pre-training loss decrease in its second half, the
    learning rate each model's sweep chose, and how many chosen fine-tuning runs were best at the epoch cap."""
    flat = flatness_view(shown.table("pretraining_curves")).set_index("model")
    share = flat["share of the decrease in the second half (%)"]
    runs = shown.table("glue_runs")
    chosen = runs[runs["chosen"].astype(bool)]
    capped = chosen[chosen["best_epoch"] >= chosen["max_epochs"]] if "max_epochs" in chosen else chosen.iloc[:0]
    rates = chosen.groupby("model", sort=False)["learning_rate"].first()
    return {"flat_max_share": f"{share.max():.1f}%", "flat_max_model": str(share.idxmax()),
            "chosen_lrs": ", ".join(f"{m} {lr:g}" for m, lr in rates.items()),
            "ft_at_cap": f"{len(capped)} of {len(chosen)}"}


def bench_view(bench: dict) -> pd.DataFrame:
    data = bench.get("data", bench)
    out = pd.DataFrame(data["results"])
    return out[["hidden_size", "method", "tokens", "tokens_per_s"]].rename(
        columns={"hidden_size": "d", "tokens_per_s": "tokens / s"})


def quoted(shown, bench: dict | None = None) -> dict[str, str]:
    """Every number the chapter's prose quotes, computed from the shown results."""
    p = shown.profile
    out: dict[str, str] = {"max_n": str(p.max_n), "pt_steps": f"{p.pt_steps:,}", "ft_epochs": f"{p.ft_epochs:g}",
                           "seeds": str(len(p.ft_seeds)), "n_lrs": str(len(p.ft_lrs)),
                           "lrs": ", ".join(f"{lr:g}" for lr in p.ft_lrs),
                           "ft_stop": (f"after {p.ft_patience} epoch{'s' if p.ft_patience > 1 else ''} without "
                                       f"improvement (at most {p.ft_epochs:g})" if p.ft_patience
                                       else f"at {p.ft_epochs:g} epochs (no early stopping in this profile)"),
                           "trend_lengths": ", ".join(f"{s:,}" for s in p.trend_pt_steps) or "no shorter",
                           "ft_train": "every" if not p.ft_train_examples else f"{p.ft_train_examples:,}",
                           "ft_held_out": f"{p.ft_validation_examples:,}",
                           "sweep_task": TASK_LABELS.get(p.ft_sweep_task, "each task")}
    sizes = shown.table("sizes").set_index("model")
    uno, tiny = sizes.loc["UNO-EELBERT (ours)"], sizes.loc["BERT-tiny"]
    size, ratio = printed_claim("UNO-EELBERT size"), printed_claim("UNO-EELBERT smaller than BERT-tiny")
    out.update(uno_mb=f"{uno['fp32_MB']:.2f}", uno_ratio=f"{uno['BERT-tiny_over_model']:.1f}",
               uno_mb_fit=rounds_to(uno["fp32_MB"], size, " MB"),
               uno_ratio_fit=rounds_to(uno["BERT-tiny_over_model"], ratio, "x"),
               uno_shape=f"{int(uno['layers'])} x {int(uno['hidden'])}",
               eel_ratio=f"{sizes.loc['EELBERT-tiny', 'BERT-tiny_over_model']:.1f}",
               tiny_share=f"{tiny['emb_share_%']:.1f}%", base_share=f"{sizes.loc['BERT-base', 'emb_share_%']:.1f}%",
               tiny_paper_mb=f"{tiny['fp32_MB']:.1f}", tiny_over_ratio=f"{tiny['fp32_MB'] / ratio.value:.2f}",
               tiny_over_ratio_fit=rounds_to(tiny["fp32_MB"] / ratio.value, size, " MB"),
               paper_mb=abstract_claims().loc["UNO-EELBERT size", "value"],
               paper_ratio=abstract_claims().loc["UNO-EELBERT smaller than BERT-tiny", "value"],
               bert_vocab=f"{int(tiny['vocab_size']):,}")
    out.update(shapes_both="-", shapes_storage="-", shapes_storages=", ".join(STORAGE),
               shapes_grid=f"{min(SHAPE_LAYERS)} to {max(SHAPE_LAYERS)} layers and widths of {min(SHAPE_WIDTHS)} to "
                           f"{max(SHAPE_WIDTHS)} in steps of {SHAPE_WIDTHS[1] - SHAPE_WIDTHS[0]}")
    if shown.has("uno_shapes"):
        shapes = shown.table("uno_shapes")
        both = shapes[shapes["fits_MB"] & shapes["fits_ratio"]]
        storages = list(dict.fromkeys(both["storage"]))
        out.update(shapes_both=str(len(both)), shapes_storage=" and ".join(storages) if storages else "none")
    glue = shown.table("glue").set_index("name")
    out.update(tiny_trained_mb="-", head_params="-")
    if "BERT-tiny" in glue.index:
        trained = glue.loc["BERT-tiny"]
        out.update(tiny_trained_mb=f"{trained['size_fp32_bytes'] / 1e6:.2f}",
                   head_params=f"{int(trained['total_params']) - int(tiny['total_params']):+,}")
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
    if "sst2" in glue.columns:
        sst = glue["sst2"] - glue["sst2_majority"]
        out.update(sst_min_margin=f"{sst.min():+.1f}", sst_majority=f"{glue['sst2_majority'].iloc[0]:.1f}")
    g = shown.table("glue")
    learned, at_floor = learning_tasks(shown)
    labels = [TASK_LABELS.get(t, t) for t in at_floor]
    out["at_majority"] = (", ".join(labels) + (" stay" if len(labels) > 1 else " stays")
                          + " at the floor for every model on the held-out part of the training split" if labels
                          else "every task rises above its floor on the held-out part of the training split for "
                               "some model")
    out["learned"] = " and ".join(TASK_LABELS.get(t, t) for t in learned) or "no task"
    out.update(gap_tiny="-", gap_uno="-", gap_tiny_learned="-", gap_uno_learned="-")
    if {"BERT-tiny", "EELBERT-tiny", "UNO-EELBERT (ours)"} <= set(g["name"]):
        out.update(gap_tiny=f"{relative_gap(g, 'EELBERT-tiny'):+.1f}%",
                   gap_uno=f"{relative_gap(g, 'UNO-EELBERT (ours)'):+.1f}%")
        if learned:
            gl = g.assign(avg_learned=g[learned].mean(axis=1))
            out.update(gap_tiny_learned=f"{relative_gap(gl, 'EELBERT-tiny', column='avg_learned'):+.1f}%",
                       gap_uno_learned=f"{relative_gap(gl, 'UNO-EELBERT (ours)', column='avg_learned'):+.1f}%")
    out.update(verdict_eelbert_glue="-", verdict_uno_glue="-")
    if shown.has("claims"):
        verdicts = shown.table("claims").set_index("id")["verdict"]
        out.update({f"verdict_{i.replace('-', '_')}": v for i, v in verdicts.items()})
    pre = shown.table("pretraining")
    out["corpus_tokens"] = f"{int(pre['corpus_tokens'].iloc[0]):,}"
    out.update(protocol_quoted(shown))
    if bench is not None:
        b = bench_view(bench)
        for d in b["d"].unique():
            rate = b[b["d"] == d].set_index("method")["tokens / s"]
            out[f"bench_{d}_cached_vs_table"] = f"{rate['dynamic, cached'] / rate['nn.Embedding']:.2f}"
            out[f"bench_{d}_uncached_vs_cached"] = f"{rate['dynamic, cached'] / rate['dynamic, uncached']:.0f}"
    return out
