"""The pNLP-Mixer chapter's tables: ours beside the paper's, the orderings compared, and every number the prose quotes.

Each function takes result tables (and the transcribed paper tables) and returns a DataFrame or a dict of strings;
the notebook only displays them. Tables 1 and 2 are scored as the paper's are: slot exact match on MTOP EN validation,
intent accuracy on ATIS validation (multiATIS EN's sentences, but for ten). The test tables are in
:mod:`~hashlib_core.papers.pnlp_mixer.tables_tests`.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

from hashlib_core.papers.pnlp_mixer.latency import (
    ENCODER_LABELS,
    latency_ratios,
    latency_view,
    matmul_sentence,
    medians,
    scaling_facts,
    scaling_view,
    share_sentence,
    transformer_sentence,
)
from hashlib_core.papers.pnlp_mixer.tables_tests import (
    LANGUAGE_LABELS,
    comparison_mtop_schedule,
    epoch_trend,
    intent_quoted,
    massive_view,
    mtop_view,
    own_mtop_schedule,
    quantization_facts,
    quantization_view,
    schedule_contrast,
    test_view,
    tuning_facts,
    tuning_view,
)
from hashlib_core.results import load_paper_table, parse_printed

__all__ = ["PROJECTION_LABELS", "ENCODER_LABELS", "TASK_LABELS", "paper_number", "paper_rows", "comparison_view",
           "ordering", "snips_sentence", "snips_schedule", "head_gap", "head_gap_sentence", "sizes_view", "test_view",
           "mtop_view", "all_o_floors", "epoch_trend", "comparison_mtop_schedule", "schedule_contrast", "massive_view",
           "chosen_summary", "quantization_view", "quantization_facts", "latency_view", "latency_ratios",
           "transformer_sentence", "matmul_sentence", "share_sentence", "scaling_view", "scaling_facts", "tuning_view",
           "tuning_facts", "intent_quoted", "mtop_training_facts", "mtop_rows_sentence", "schedule_note",
           "schedule_evidence", "at_last_epoch", "quoted"]

#: our names -> the paper's row labels (Tables 1 and 2)
PROJECTION_LABELS = {"binary": "Binary", "tsp": "TSP", "simhash": "SimHash", "minhash": "MinHash (Ours)"}
#: the comparison tasks as the page names them
TASK_LABELS = {"mtop-en": "MTOP EN", "atis": "ATIS", "snips": "SNIPS"}
#: each comparison task's score (the one its models are chosen on) and the paper's column it is read against
TASK_SCORE = {"mtop-en": ("val_exact_match", "MTOP_EN_Exact_Match_Acc"),
              "atis": ("val_intent_acc", "multiATIS_EN_Intent_Acc"), "snips": ("val_intent_acc", None)}


def paper_number(cell: Any) -> float:
    """A printed cell as a number (``"1.0M"`` -> 1e6, ``"98.1"`` -> 98.1); ``nan`` for ``-``."""
    parsed = parse_printed(cell)
    return float("nan") if parsed is None else parsed.value


def paper_rows(which: str) -> tuple[dict[str, str], pd.DataFrame]:
    """Table 1 (``which="projection"``) or Table 2 (``"encoder"``): our names -> its row labels, and the
    transcribed table indexed by those labels (its ``attrs["source"]`` kept)."""
    stem, labels, key = (("pnlp_mixer_table1", PROJECTION_LABELS, "Projection") if which == "projection"
                         else ("pnlp_mixer_table2", ENCODER_LABELS, "Model"))
    return labels, load_paper_table(stem).set_index(key)


#: Table 2's parameter columns: the MTOP EN joint model as trained (both heads trained, MTOP's labels), the paper's
#: count (an intent model with multiATIS's 18 intents, as the ``sizes`` table counts it) and the paper's
PARAMS_TRAINED, PARAMS_18, PARAMS_PAPER = "params (MTOP EN model, both heads)", "params (18 intents)", "params (paper)"


def chosen_summary(results: pd.DataFrame, which: str) -> pd.DataFrame:
    """Each (task, row) of Table 1 or 2 from its chosen runs: the mean validation scores over its seeds, the number
    of seeds, the chosen learning rate, each seed's best epoch, the cap, whether any run was best at the cap, and
    the parameters as trained; indexed by (task, ``which``), in the table's order."""
    chosen = results[results["chosen"].astype(bool)]
    out = []
    for (task, name), g in chosen.groupby(["task", which], sort=False):
        out.append({"task": task, which: name, "val_intent_acc": g["val_intent_acc"].mean(),
                    "val_exact_match": g["val_exact_match"].mean(), "seeds": len(g),
                    "learning_rate": float(g["learning_rate"].iloc[0]),
                    "best_epochs": ", ".join(str(int(e)) for e in g["best_epoch"]),
                    "max_epochs": int(g["max_epochs"].iloc[0]), "capped": bool(g["capped"].any()),
                    "headline": bool(g["headline"].iloc[0]), "parameters": int(g["parameters"].iloc[0])})
    return pd.DataFrame(out).set_index(["task", which])


def comparison_view(results: pd.DataFrame, which: str, sizes: pd.DataFrame | None = None) -> pd.DataFrame:
    """Table 1 (``which="projection"``) or Table 2 (``"encoder"``), one row per model as the paper prints them: our
    MTOP EN validation exact match and ATIS validation intent accuracy (means over the chosen point's seeds; SNIPS
    when compared) beside the paper's MTOP EN and multiATIS EN columns; per task the seeds, chosen learning rate and
    best epochs of the cap, ``at cap`` marking a row one of whose runs was best at its cap (maybe still improving).

    Table 2 gives two parameter counts, labelled: the MTOP EN model as trained (:data:`PARAMS_TRAINED`: both heads,
    MTOP's labels; empty when MTOP EN is not compared) and, with ``sizes``, the count the paper's column makes (an intent model with 18 intents,
    :data:`PARAMS_18`); :func:`head_gap` says why they differ."""
    labels, paper = paper_rows(which)
    summary = chosen_summary(results, which)
    size18 = sizes.set_index("encoder")["parameters"] if sizes is not None else None
    rows = []
    trained = set(summary.index.get_level_values(which))
    tasks = set(summary.index.get_level_values("task"))
    for name in [n for n in labels if n in trained]:      # the paper's order of rows
        label = labels[name]
        row: dict[str, Any] = {"model": label}
        for task, (metric, column) in TASK_SCORE.items():
            if task not in tasks:
                continue
            short = TASK_LABELS[task]
            row[f"{short} (ours)"] = summary.loc[(task, name), metric] if (task, name) in summary.index else np.nan
            if column is not None:
                row[f"{short} (paper)"] = paper_number(paper.loc[label, column])
            if (task, name) not in summary.index:       # a row the profile trains on the other task only
                row[f"{short} runs"] = "not trained at this profile"
                continue
            r = summary.loc[(task, name)]
            row[f"{short} runs"] = (f"{r['seeds']} seed(s), lr {r['learning_rate']:g}, best epoch {r['best_epochs']} "
                                    f"of {r['max_epochs']}" + (" (at cap)" if r["capped"] else ""))
        if which == "encoder":
            trained = summary.xs(name, level=which)["parameters"]
            row[PARAMS_TRAINED] = int(trained["mtop-en"]) if "mtop-en" in trained.index else np.nan
            if size18 is not None:
                row[PARAMS_18] = int(size18[name]) if name in size18.index else np.nan
            row[PARAMS_PAPER] = paper.loc[label, "#Param."]
        rows.append(row)
    out = pd.DataFrame(rows)
    out.attrs["source"] = paper.attrs.get("source", "")
    return out


def ordering(results: pd.DataFrame, which: str, task: str) -> dict[str, Any]:
    """Our ranking of the rows of one task (means over the chosen runs' seeds, on the task's score) against the
    paper's (MTOP EN exact match for MTOP EN, multiATIS intent accuracy otherwise): Kendall's tau, and whether the
    paper's best row is ours too."""
    labels, table = paper_rows(which)
    metric, column = TASK_SCORE[task]
    paper = table[column or "multiATIS_EN_Intent_Acc"].map(paper_number)
    ours = chosen_summary(results[results["task"] == task], which).xs(task, level="task")[metric]
    names = list(ours.index)
    theirs = [paper[labels[n]] for n in names]
    tau = kendalltau(ours.values, theirs).statistic if len(names) > 1 else float("nan")
    best_paper = names[int(np.argmax(theirs))]
    best_ours = names[int(np.argmax(ours.values))]
    return {"tau": float(tau), "paper_best": labels[best_paper], "our_best": labels[best_ours],
            "same_best": best_paper == best_ours, "n": len(names)}


def _tau_text(tau: float) -> str:
    """Kendall's tau as the prose prints it (signed, two decimals), or why there is none."""
    return f"{tau:+.2f}" if np.isfinite(tau) else "undefined (tied scores)"


def snips_sentence(results: pd.DataFrame, which: str) -> str:
    """The prose on SNIPS's ordering (Table 1 or 2): our best row and Kendall's tau against the paper's multiATIS
    ranking (the paper has no SNIPS column), or that this profile did not compare on SNIPS."""
    if "snips" not in set(results["task"]):
        return "This profile does not compare on SNIPS (the paper profile does)."
    o = ordering(results, which, "snips")
    tau = _tau_text(o["tau"])
    return (f"On SNIPS (validation; the paper prints no SNIPS numbers) the best is {o['our_best']}, and Kendall's "
            f"tau against the paper's multiATIS ranking is {tau}.")


def snips_schedule(table1: pd.DataFrame, profile) -> str:
    """The page's sentence on SNIPS's schedule in Tables 1 and 2: that the profile leaves SNIPS out, or how many
    optimiser steps its models got beside ATIS's (the longest run of each task in ``table1``)."""
    if "snips" not in set(table1["task"]):
        return f"The {profile.name} profile does not compare on SNIPS; the paper profile does."

    def steps(task: str) -> int:
        rows = table1[table1["task"] == task]
        return int(max(math.ceil(n / profile.batch_size) * e for n, e in zip(rows["train_sentences"], rows["epochs"])))

    if not profile.snips_max_epochs:
        return (f"Its models follow ATIS's schedule (at most {profile.max_epochs} epochs, patience "
                f"{profile.patience}): {steps('snips'):,} optimiser steps at most, ATIS's {steps('atis'):,}.")
    return (f"To fit the {profile.name} profile's budget its models train for at most {profile.snips_max_epochs} "
            f"epochs, {steps('snips'):,} optimiser steps (ATIS's: {steps('atis'):,}), so early stopping has little "
            f"room and SNIPS's scores are those of short runs.")


def head_gap(table2: pd.DataFrame, sizes: pd.DataFrame) -> dict[str, list[int]]:
    """Per task of ``table2``: the trained joint models' parameters minus the 18-intent count of the same encoder
    (``sizes``), one value per encoder present in both. The gap is the heads': the joint model's intent head for the
    task's intents and its slot head, against one intent head for 18 intents; it is the same for every encoder."""
    size18 = sizes.set_index("encoder")["parameters"]
    out = {}
    if "chosen" in table2:
        table2 = table2[table2["chosen"].astype(bool)]
    for task, rows in table2.groupby("task", sort=False):
        rows = rows[rows["encoder"].isin(size18.index)]
        out[task] = sorted({int(p) - int(size18[e]) for e, p in zip(rows["encoder"], rows["parameters"])})
    return out


def head_gap_sentence(table2: pd.DataFrame, sizes: pd.DataFrame) -> str:
    """The prose's account of Table 2's two parameter columns (see :func:`head_gap`)."""
    gaps = head_gap(table2, sizes)
    parts = [f"{g[0]:,} more on {TASK_LABELS.get(task, task)}" if len(g) == 1
             else f"{g[0]:,} to {g[-1]:,} more on {TASK_LABELS.get(task, task)}" for task, g in gaps.items()]
    same = all(len(g) == 1 for g in gaps.values())
    return " and ".join(parts) + (", the same for every architecture" if same else ", depending on the architecture")


def sizes_view(sizes: pd.DataFrame) -> pd.DataFrame:
    """Parameters and bytes of every encoder with the paper's intent head, beside Table 2's ``#Param.``."""
    paper = paper_rows("encoder")[1]["#Param."]
    out = sizes.assign(model=sizes["encoder"].map(ENCODER_LABELS))
    out["parameters (paper)"] = out["model"].map(paper)
    return out[["model", "parameters", "parameters (paper)", "float32_bytes", "int8_bytes"]].rename(
        columns={"parameters": "parameters (ours)", "float32_bytes": "float32 (bytes)", "int8_bytes": "8-bit (bytes)"})


def mtop_training_facts(t4: pd.DataFrame, profile) -> dict[str, str]:
    """What the page says of Table 4's training data: §4's printed number of training sentences per language, the
    range the models of ``t4`` were trained on, and the profile's cap on them."""
    from hashlib_core.papers.pnlp_mixer.data import PAPER_MTOP_TRAIN

    trained = t4["train_sentences"]
    caps = [n for n in (profile.train_examples, profile.mtop_train_examples) if n > 0]
    return {"mtop_paper_train": PAPER_MTOP_TRAIN,
            "mtop_train": (f"{int(trained.min()):,} to {int(trained.max()):,}" if trained.min() != trained.max()
                           else f"{int(trained.min()):,}"),
            "mtop_train_cap": (f"a random sample of at most {min(caps):,} of each language's training sentences"
                               if caps else "every training sentence")}


def all_o_floors(t4: pd.DataFrame) -> dict[str, float]:
    """{task: exact match of an all-``O`` tagger on its test split} for the MTOP tasks of ``t4``."""
    from hashlib_core.papers.pnlp_mixer.data import load_task, outside_only_share

    return {task: outside_only_share(load_task(task)) for task in t4["task"].unique()}


def schedule_note(profile) -> str:
    """The protocol's sentence on Tables 1-2's MTOP EN schedule: the profile's own for them, or that they share the
    other MTOP models' (and which profile gives them their own)."""
    if own_mtop_schedule(profile):
        return (f"Tables 1 and 2's MTOP EN models, the slowest to learn, therefore "
                f"{comparison_mtop_schedule(profile)}.")
    return ("Tables 1 and 2's MTOP EN models share this schedule here; the small profile gives them a constant rate, "
            "leaving the end to early stopping (a schedule that on two cores does not fit the budget: the profile's "
            "comment says what was measured).")


def schedule_evidence(profile, trend: str, contrast: str) -> str:
    """The MTOP diagnosis's sentence on Table 1's English MTOP Mixer: trained as Table 4's models (its curve shows
    the second difference), or on its own schedule (the contrast with Table 4's English model, then its curve)."""
    if not trend:
        return "No curve of Table 1's English MTOP Mixer is in the results shown."
    if not own_mtop_schedule(profile):
        return f"Table 1's English MTOP Mixer, trained the same way, shows the second: {trend}."
    rate = "constant rate" if profile.comparison_mtop_lr_schedule == "constant" else "decaying rate"
    lead = (f"Table 1's English MTOP Mixer trains on its own schedule: {contrast}. " if contrast
            else "Table 1's English MTOP Mixer trains on its own schedule. ")
    return f"{lead}Its curve, on its {rate}: {trend}."


def mtop_rows_sentence(profile) -> str:
    """Which rows of Tables 1 and 2 the profile trains on MTOP EN (``comparison_mtop_rows``), in words."""
    if profile.comparison_mtop_rows != "headline":
        return "Every row is trained on every task compared."
    heads = [PROJECTION_LABELS[h] for h in PROJECTION_LABELS if h in {*profile.headline_projections, "minhash"}]
    encs = [ENCODER_LABELS[h] for h in ENCODER_LABELS if h in {*profile.headline_encoders, "mixer"}]
    return (f"On MTOP EN the {profile.name} profile trains the headline rows alone ({', '.join(heads)} in Table 1, "
            f"{', '.join(encs)} in Table 2), what its budget allows at the converging schedule; the other rows' MTOP "
            f"EN cells say so, and the small profile trains every row.")


def at_last_epoch(*tables: pd.DataFrame) -> str:
    """How many of the runs in ``tables`` (rows with ``best_epoch`` and ``max_epochs``, or ``epochs``) were best at
    their epoch cap, i.e. maybe still improving when their schedule ended: "k of n"."""
    rows = pd.concat(tables)
    cap = rows["max_epochs"] if "max_epochs" in rows else rows["epochs"]
    return f"{int((rows['best_epoch'] >= cap).sum())} of {len(rows)}"


def quoted(shown, bench: dict | None = None, scaling: dict | None = None) -> dict[str, str]:
    """Every number the chapter's prose quotes, computed from the shown results."""
    p = shown.profile
    # the scale the verdicts record (most of them: a claim about the paper's model sizes records those)
    scale = shown.table("claims")["scale"].mode().iloc[0] if shown.has("claims") else "-"
    out: dict[str, str] = {"claims_scale": scale, "max_epochs": str(p.max_epochs),
                           "patience": str(p.patience), "batch": str(p.batch_size),
                           "mtop_max_epochs": str(p.mtop_max_epochs), "mtop_patience": str(p.mtop_patience),
                           "max_seq_len": str(p.max_seq_len)}
    t1, t2 = shown.table("table1"), shown.table("table2")
    atis = t1[t1["task"] == "atis"].iloc[0]
    out.update(atis_train=f"{int(atis['train_sentences']):,}", atis_val=f"{int(atis['validation_sentences']):,}",
               val_step=f"{100 / atis['validation_sentences']:.1f}")
    if "mtop-en" in set(t1["task"]):
        mtop = t1[t1["task"] == "mtop-en"].iloc[0]
        out.update(mtop_en_train=f"{int(mtop['train_sentences']):,}",
                   mtop_en_val=f"{int(mtop['validation_sentences']):,}")
    for which, name, prefix in (("projection", "table1", "t1"), ("encoder", "table2", "t2")):
        table = shown.table(name)
        for task in table["task"].unique():
            o, key = ordering(table, which, task), f"{prefix}_{task.replace('-', '_')}"
            out[f"{key}_tau"] = _tau_text(o["tau"])
            out[f"{key}_best"] = o["our_best"]
            out[f"{key}_paper_best"] = o["paper_best"]
        out[f"{prefix}_snips"] = snips_sentence(table, which)
    paper1 = paper_rows("projection")[1]["multiATIS_EN_Intent_Acc"].map(paper_number)
    out["t1_paper_spread"] = f"{paper1.max() - paper1.min():.1f}"
    chosen = pd.concat([t1, t2[t2["encoder"] != "mixer"]])
    chosen = chosen[chosen["chosen"].astype(bool)]
    out["t12_at_last"] = at_last_epoch(chosen[chosen["headline"].astype(bool)])
    out["t12_others_at_last"] = at_last_epoch(chosen[~chosen["headline"].astype(bool)]) if (
        ~chosen["headline"].astype(bool)).any() else "none (every row is a headline row)"
    heads = sorted({*p.headline_projections, "minhash"})
    out["t12_headline"] = (f"{', '.join(PROJECTION_LABELS[h] for h in heads)} in Table 1 and "
                           f"{', '.join(ENCODER_LABELS[h] for h in sorted({*p.headline_encoders, 'mixer'}))} in "
                           f"Table 2")
    out.update(n_points=str(len(p.tuning_points())), n_seeds=str(p.seeds))
    paper3 = load_paper_table("pnlp_mixer_table3").set_index("Model")
    out["t3_paper"] = str(paper3.loc["pNLP-Mixer", "EN"])
    t3i = shown.table("table3_intent")
    out.update(intent_quoted(t3i, paper_number(paper3.loc["pNLP-Mixer", "EN"])))
    by_precision = t3i.groupby("precision")["size_bytes"].first()
    out.update(t3i_params=f"{int(t3i['parameters'].iloc[0]):,}", t3i_bytes=f"{int(by_precision['int8']):,}",
               t3i_float_bytes=f"{int(by_precision['float32']):,}")
    tuning = shown.table("tuning")
    out.update(tuning_facts(tuning))
    spread = tuning["val_intent_acc"].max() - tuning["val_intent_acc"].min()
    out["tune_apart"] = str(round(spread * atis["validation_sentences"] / 100))
    out["t3i_schedule"] = f"at most {p.max_epochs} epochs with a patience of {p.patience}"
    from hashlib_core.papers.pnlp_mixer.data import UNSEEN, load_task

    atis_task = load_task("atis")
    test_intents = atis_task.test.intents
    unseen = sum(i == UNSEEN for i in test_intents)
    combined = sum(i != UNSEEN and "#" in atis_task.intent_names[i] for i in test_intents)
    out.update(t3_unseen=str(unseen), t3_test=f"{len(test_intents):,}", t3_combined=str(combined),
               t3_ceiling=f"{100 * (1 - unseen / len(test_intents)):.1f}")
    out["t2_head_gap"] = head_gap_sentence(t2, shown.table("sizes"))
    snips_task = load_task("snips")
    out.update(snips_limit=snips_schedule(t1, p), snips_train=f"{len(snips_task.train):,}",
               snips_ratio=f"{len(snips_task.train) / len(atis_task.train):.1f}")
    out.update(snips_sizes=" / ".join(f"{len(split):,}" for split in (snips_task.train, snips_task.validation,
                                                                         snips_task.test)),
               snips_intents=str(snips_task.num_intents))
    t4 = shown.table("table4")
    out.update(mtop_training_facts(t4, p))
    out["t4_mean_em"] = f"{t4[t4['precision'] == 'int8']['exact_match'].mean():.1f}"
    floors = all_o_floors(t4)
    out["t4_all_o"] = f"{np.mean(list(floors.values())):.1f}"
    out["t4_all_o_range"] = ", ".join(f"{LANGUAGE_LABELS[t.split('-', 1)[1]]} {v:.1f}%" for t, v in floors.items())
    out["t12_mtop_schedule"] = comparison_mtop_schedule(p)
    out["t12_mtop_rows"] = mtop_rows_sentence(p)
    out["t12_schedule_note"] = schedule_note(p)
    from hashlib_core.papers.pnlp_mixer.longer import longer_quoted

    out.update(longer_quoted(shown, ENCODER_LABELS))
    trend = (epoch_trend(shown.table("table1_curves"), "mtop-en", "val_exact_match", "MTOP EN validation exact match")
             if shown.has("table1_curves") else "")
    out["t4_schedule_evidence"] = schedule_evidence(p, trend, schedule_contrast(t4, t1, p))
    tables_8bit = [t3i, t4]
    if shown.has("massive"):
        massive = shown.table("massive")
        out["massive_mean"] = f"{massive[massive['precision'] == 'int8']['intent_acc'].mean():.1f}"
        out["massive_locales"] = ", ".join(t.split("-", 1)[1].upper() for t in massive["task"].unique())
        tables_8bit.append(massive)
    out.update(quantization_facts(quantization_view(*tables_8bit)))
    if bench is not None:
        r, data, lat = latency_ratios(bench), bench.get("data", bench), medians(bench)
        out.update(lat_total=f"{lat['total_mixer_float32']:.2f}", lat_proj=f"{lat['projection_cached']:.2f}",
                   lat_proj_uncached=f"{lat['projection_uncached']:.2f}",
                   lat_share=f"{100 * r['projection_share']:.1f}%",
                   lat_share_verdict=share_sentence(r["projection_share"]),
                   lat_paper_share=f"{100 * r['paper_projection_share']:.0f}%",
                   lat_matmul=f"{100 * r['matmul_fraction']:.0f}%", lat_gflops=f"{r['core_gflops']:.0f}",
                   lat_matmul_verdict=matmul_sentence(r["matmul_fraction"]),
                   lat_cache=f"{r['cache_speedup']:.1f}",
                   lat_cpu=str(data.get("cpu", "unknown CPU")) + (f", {data['cpu_capability']} kernels"
                                                                   if data.get("cpu_capability") else ""))
        if "matmul_fraction_lean" in r:
            out.update(lat_matmul_lean=f"{100 * r['matmul_fraction_lean']:.0f}%",
                       lat_matmul_lean_verdict=matmul_sentence(r["matmul_fraction_lean"], why=False),
                       lat_total_lean=f"{lat['total_mixer_float32_lean']:.2f}",
                       lat_share_lean=f"{100 * r['projection_share_lean']:.1f}%")
        if "mixer_vs_transformer" in r:
            out["lat_vs_transformer"] = transformer_sentence(r["mixer_vs_transformer"],
                                                             r.get("mixer_vs_transformer_lean"))
        if "mixer_over_transformer_flops" in r:
            flops = data["flops_per_sentence"]
            out.update(lat_flops_ratio=f"{r['mixer_over_transformer_flops']:.1f}",
                       lat_flops_needed=f"{2 * r['mixer_over_transformer_flops']:.1f}",
                       lat_flops_mixer=f"{flops['mixer'] / 1e6:.0f}",
                       lat_flops_transformer=f"{flops['transformer'] / 1e6:.0f}")
    if scaling is not None:
        out.update(scaling_facts(scaling, p.max_seq_len))
    return out
