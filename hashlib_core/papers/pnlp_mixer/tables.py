"""The pNLP-Mixer chapter's tables: ours beside the paper's, the orderings compared, and every number the prose quotes.

Each function takes result tables (and the transcribed paper tables) and returns a DataFrame or a dict of strings;
the notebook only displays them. Our validation scores are ATIS's and SNIPS's; the paper's columns are multiATIS EN
(intent accuracy) and MTOP EN (slot exact match): the same kind of score on related data, not the same data.
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
from hashlib_core.results import load_paper_table, parse_printed

__all__ = ["PROJECTION_LABELS", "ENCODER_LABELS", "paper_number", "paper_rows", "comparison_view", "ordering",
           "snips_sentence", "snips_schedule", "head_gap", "head_gap_sentence", "sizes_view", "test_view", "mtop_view",
           "quantization_view", "quantization_facts", "latency_view", "latency_ratios", "transformer_sentence",
           "matmul_sentence", "share_sentence", "scaling_view", "scaling_facts", "tuning_view", "tuning_facts",
           "mtop_training_share", "quoted"]

#: our names -> the paper's row labels (Tables 1 and 2)
PROJECTION_LABELS = {"binary": "Binary", "tsp": "TSP", "simhash": "SimHash", "minhash": "MinHash (Ours)"}
_MTOP_LANGS = {"en": "EN", "es": "ES", "fr": "FR", "de": "DE", "hi": "HI", "th": "TH"}


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


#: Table 2's parameter columns: the joint model as trained (both heads, the task's labels), the paper's count
#: (an intent model with multiATIS's 18 intents, as the ``sizes`` table counts it) and the paper's
PARAMS_TRAINED, PARAMS_18, PARAMS_PAPER = "params (trained: both heads)", "params (18 intents)", "params (paper)"


def comparison_view(results: pd.DataFrame, which: str, sizes: pd.DataFrame | None = None) -> pd.DataFrame:
    """Table 1 (``which="projection"``) or Table 2 (``"encoder"``): our validation scores per task beside the
    paper's (``intent (paper)``: multiATIS EN intent accuracy; ``EM (paper)``: MTOP EN slot exact match), with the
    gap in intent accuracy (points). The paper has no SNIPS column: SNIPS rows leave the paper's columns empty
    (their ordering is compared by :func:`ordering`).

    Table 2 gives two parameter counts, labelled: the model as trained (:data:`PARAMS_TRAINED`: an intent head for
    the task's intents and a slot head for its tags) and, with ``sizes``, the count the paper's column makes (an
    intent model with 18 intents, :data:`PARAMS_18`, from the ``sizes`` result); :func:`head_gap` says why they
    differ."""
    labels, paper = paper_rows(which)
    size18 = sizes.set_index("encoder")["parameters"] if sizes is not None else None
    rows = []
    for _, r in results.iterrows():
        label = labels[r[which]]
        on_atis = r["task"] == "atis"
        p_intent = paper_number(paper.loc[label, "multiATIS_EN_Intent_Acc"]) if on_atis else np.nan
        p_em = paper_number(paper.loc[label, "MTOP_EN_Exact_Match_Acc"]) if on_atis else np.nan
        row = {"task": r["task"].upper(), "model": label, "intent (ours)": r["val_intent_acc"],
               "intent (paper)": p_intent, "gap": r["val_intent_acc"] - p_intent,
               "EM (ours)": r["val_exact_match"], "EM (paper)": p_em, "slot F1": r["val_slot_f1"],
               "epochs (best)": f"{int(r['epochs'])} ({int(r['best_epoch'])})"}
        if which == "encoder":
            row = {**row, PARAMS_TRAINED: int(r["parameters"]),
                   **({PARAMS_18: int(size18[r[which]]) if r[which] in size18.index else np.nan}
                      if size18 is not None else {}),
                   PARAMS_PAPER: paper.loc[label, "#Param."]}
        rows.append(row)
    out = pd.DataFrame(rows)
    out.attrs["source"] = paper.attrs.get("source", "")
    return out


def ordering(results: pd.DataFrame, which: str, task: str, metric: str = "val_intent_acc") -> dict[str, Any]:
    """Our ranking of the rows of one task against the paper's (multiATIS intent accuracy): Kendall's tau, and
    whether the paper's best row is ours too."""
    labels, table = paper_rows(which)
    paper = table["multiATIS_EN_Intent_Acc"].map(paper_number)
    ours = results[results["task"] == task].set_index(which)[metric]
    names = [n for n in ours.index]
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
        return "This profile compares on ATIS only (SNIPS: see the list at the end of the page)."
    o = ordering(results, which, "snips")
    tau = _tau_text(o["tau"])
    return (f"On SNIPS (validation; the paper prints no SNIPS numbers) the best is {o['our_best']}, and Kendall's "
            f"tau against the paper's multiATIS ranking is {tau}.")


def snips_schedule(table1: pd.DataFrame, profile) -> str:
    """The page's sentence on SNIPS's schedule in Tables 1 and 2: that the profile leaves SNIPS out, or how many
    optimiser steps its models got beside ATIS's (the longest run of each task in ``table1``)."""
    if "snips" not in set(table1["task"]):
        return f"The {profile.name} profile compares on ATIS only; the small and paper profiles compare on both."

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
    for task, rows in table2.groupby("task", sort=False):
        rows = rows[rows["encoder"].isin(size18.index)]
        out[task] = sorted({int(p) - int(size18[e]) for e, p in zip(rows["encoder"], rows["parameters"])})
    return out


def head_gap_sentence(table2: pd.DataFrame, sizes: pd.DataFrame) -> str:
    """The prose's account of Table 2's two parameter columns (see :func:`head_gap`)."""
    gaps = head_gap(table2, sizes)
    parts = [f"{g[0]:,} more on {task.upper()}" if len(g) == 1 else f"{g[0]:,} to {g[-1]:,} more on {task.upper()}"
             for task, g in gaps.items()]
    same = all(len(g) == 1 for g in gaps.values())
    return " and ".join(parts) + (", the same for every architecture" if same else ", depending on the architecture")


def sizes_view(sizes: pd.DataFrame) -> pd.DataFrame:
    """Parameters and bytes of every encoder with the paper's intent head, beside Table 2's ``#Param.``."""
    paper = paper_rows("encoder")[1]["#Param."]
    out = sizes.assign(model=sizes["encoder"].map(ENCODER_LABELS))
    out["parameters (paper)"] = out["model"].map(paper)
    return out[["model", "parameters", "parameters (paper)", "float32_bytes", "int8_bytes"]].rename(
        columns={"parameters": "parameters (ours)", "float32_bytes": "float32 (bytes)", "int8_bytes": "8-bit (bytes)"})


def test_view(t3: pd.DataFrame, t3_intent: pd.DataFrame | None = None) -> pd.DataFrame:
    """Table 3 analog: our ATIS test scores (float32 and 8-bit; the joint model, then the intent-only model when
    given) beside the paper's multiATIS EN test column."""
    paper = load_paper_table("pnlp_mixer_table3")
    rows = [{"model": f"pNLP-Mixer (ours, {r['precision']})", "parameters": f"{int(r['parameters']):,}",
             "intent acc. (EN)": r["intent_acc"], "exact match": r["exact_match"], "slot F1": r["slot_f1"],
             "size (bytes)": int(r["size_bytes"])} for _, r in t3.iterrows()]
    if t3_intent is not None:
        for precision, group in t3_intent.groupby("precision", sort=False):
            seeds = f", mean of {len(group)} seeds" if len(group) > 1 else ""
            rows.append({"model": f"pNLP-Mixer (ours, intents only, {precision}{seeds})",
                         "parameters": f"{int(group['parameters'].iloc[0]):,}",
                         "intent acc. (EN)": group["intent_acc"].mean(), "exact match": np.nan, "slot F1": np.nan,
                         "size (bytes)": int(group["size_bytes"].iloc[0])})
    for _, r in paper.iterrows():
        q = r["quantization"] if r["quantization"] != "-" else ""
        rows.append({"model": f"{r['Model']} (paper{', ' + q if q else ''})", "parameters": r["#Param."],
                     "intent acc. (EN)": paper_number(r["EN"]), "exact match": np.nan, "slot F1": np.nan,
                     "size (bytes)": np.nan})
    out = pd.DataFrame(rows)
    out.attrs["source"] = paper.attrs.get("source", "")
    return out


def mtop_view(t4: pd.DataFrame) -> pd.DataFrame:
    """Table 4 analog: exact match per language on the staged MTOP subset (8-bit) beside the paper's pNLP-Mixer
    row (full MTOP: not the same training data, see the chapter)."""
    table4 = load_paper_table("pnlp_mixer_table4")
    paper = table4.set_index("Model").loc["pNLP-Mixer"]
    int8 = t4[t4["precision"] == "int8"]
    rows = []
    for _, r in int8.iterrows():
        lang = r["task"].split("-", 1)[1]
        rows.append({"language": _MTOP_LANGS[lang], "exact match (ours, 8-bit)": r["exact_match"],
                     "exact match (paper, 8-bit)": paper_number(paper[_MTOP_LANGS[lang]]),
                     "intent acc. (ours)": r["intent_acc"], "slot F1 (ours)": r["slot_f1"],
                     "test sentences": int(r["test_sentences"])})
    out = pd.DataFrame(rows)
    out.attrs["source"] = table4.attrs.get("source", "")
    return out


def quantization_view(t3: pd.DataFrame, t4: pd.DataFrame) -> pd.DataFrame:
    """Float32 against 8-bit for every tested model: bytes, ratio, score changes, agreement of predictions."""
    rows = []
    for task, g in pd.concat([t3, t4]).groupby("task", sort=False):
        f, q = g.set_index("precision").loc["float32"], g.set_index("precision").loc["int8"]
        rows.append({"task": task.upper(), "float32 (bytes)": int(f["size_bytes"]),
                     "8-bit (bytes)": int(q["size_bytes"]),
                     "ratio": q["size_bytes"] / f["size_bytes"],
                     "intent acc. change": q["intent_acc"] - f["intent_acc"],
                     "exact match change": q["exact_match"] - f["exact_match"],
                     "same predictions (%)": q["agreement_with_float_%"]})
    return pd.DataFrame(rows)


def quantization_facts(view: pd.DataFrame, goal: float = 99.0) -> dict[str, str]:
    """The 8-bit section's sentences from :func:`quantization_view`: how many models keep the same predictions on
    at least ``goal``% of their test sentences, the lowest agreement and its task, the largest size ratio."""
    agree = view["same predictions (%)"]
    worst = view.loc[agree.idxmin()]
    return {"q_met": f"{int((agree >= goal).sum())} of {len(view)}", "q_goal": f"{goal:.0f}",
            "q_worst": f"{worst['same predictions (%)']:.1f}", "q_worst_task": str(worst["task"]),
            "q_ratio": f"{view['ratio'].max():.3f}", "q_em_change": f"{view['exact match change'].abs().max():.1f}"}


def mtop_training_share(train_sentences: int) -> dict[str, str]:
    """The MTOP-subset models' training sentences per language against MTOP's training split as §4 prints it
    (:data:`~hashlib_core.papers.pnlp_mixer.data.PAPER_MTOP_TRAIN` per language): the page's numbers."""
    from hashlib_core.papers.pnlp_mixer.data import PAPER_MTOP_TRAIN

    paper = parse_printed(PAPER_MTOP_TRAIN.upper()).value
    return {"mtop_train": f"{train_sentences:,}", "mtop_paper_train": PAPER_MTOP_TRAIN,
            "mtop_fraction": f"1/{round(paper / train_sentences)}"}


def at_last_epoch(*tables: pd.DataFrame) -> str:
    """How many of the models in ``tables`` (rows with ``epochs`` and ``best_epoch``) were best at their last epoch,
    i.e. still improving when their schedule ended: "k of n"."""
    rows = pd.concat(tables)
    return f"{int((rows['best_epoch'] == rows['epochs']).sum())} of {len(rows)}"


def intent_quoted(t3_intent: pd.DataFrame, paper_en: float) -> dict[str, str]:
    """The intent-only test models' numbers the Table 3 paragraph quotes (means over their seeds, with the spread),
    and whether the mean 8-bit accuracy is within one point of the paper's."""
    q, f = t3_intent[t3_intent["precision"] == "int8"], t3_intent[t3_intent["precision"] == "float32"]
    acc = q["intent_acc"].mean()
    gap = acc - paper_en
    n = len(q)
    if n > 1:
        spread = (f"the mean of {n} seeds (standard deviation {q['intent_acc'].std():.1f}; per seed "
                  f"{', '.join(f'{a:.1f}' for a in q['intent_acc'])})")
    else:
        spread = "one seed"
    mean = lambda col, fmt=".1f": format(q[col].mean(), fmt)  # noqa: E731
    out = {"t3i_int8": f"{acc:.1f}", "t3i_float": f"{f['intent_acc'].mean():.1f}", "t3i_gap": f"{gap:+.1f}",
           "t3i_seeds": spread, "t3i_epoch": ", ".join(str(int(e)) for e in q["best_epoch"]),
           "t3i_epochs": ", ".join(str(int(e)) for e in q["epochs"]), "t3i_val": mean("val_intent_acc"),
           "t3i_agree": mean("intent_agreement_with_float_%"),
           "t3i_verdict": ("within one point of the paper's" if abs(gap) <= 1.0
                           else "not within one point of the paper's")}
    if "errors" in q.columns:
        out.update({f"t3i_{k}": mean(k, ".0f" if n == 1 else ".1f")
                    for k in ("errors", "errors_unseen", "errors_combined")})
    return out


_TUNED_LABELS = {"learning_rate": "learning rate", "weight_decay": "weight decay", "dropout": "dropout"}


def tuning_view(tuning: pd.DataFrame) -> pd.DataFrame:
    """The intent model's tuning points with their validation scores, the chosen one marked, and (when scored) each
    point's test accuracy, measured after the choice."""
    out = tuning.rename(columns={**_TUNED_LABELS, "val_intent_acc": "validation acc.", "val_loss": "validation loss",
                                 "test_intent_acc": "test acc. (after the choice)"})
    out["best epoch"] = [f"{int(b)} of {int(e)}" for b, e in zip(tuning["best_epoch"], tuning["epochs"])]
    out["chosen"] = tuning["chosen"].map({True: "✓", False: ""})
    return out[[*_TUNED_LABELS.values(), "validation acc.", "validation loss", "best epoch", "chosen",
                *(["test acc. (after the choice)"] if "test_intent_acc" in tuning else [])]]


def tuning_facts(tuning: pd.DataFrame) -> dict[str, str]:
    """What the prose says of the tuning: how many points, which was chosen (named by how it differs from the first
    point, the profile's own values) and the spread of their validation accuracies."""
    base, chosen = tuning.iloc[0], tuning[tuning["chosen"]].iloc[0]
    changed = [f"{_TUNED_LABELS[k]} {chosen[k]:g}" for k in _TUNED_LABELS if chosen[k] != base[k]]
    acc = tuning["val_intent_acc"]
    return {"tune_n": f"{len(tuning)} point{'s' if len(tuning) != 1 else ''}",
            "tune_chosen": ("the profile's own values" if not changed else " and ".join(changed)),
            "tune_base": ", ".join(f"{_TUNED_LABELS[k]} {base[k]:g}" for k in _TUNED_LABELS),
            "tune_range": f"{acc.min():.1f} to {acc.max():.1f}",
            **(_tuning_test_facts(tuning, chosen) if "test_intent_acc" in tuning else {})}


def _tuning_test_facts(tuning: pd.DataFrame, chosen: pd.Series) -> dict[str, str]:
    test = tuning["test_intent_acc"]
    best_test = tuning.loc[test.idxmax()]
    rank = int((test > chosen["test_intent_acc"]).sum())
    return {"tune_test_range": f"{test.min():.1f} to {test.max():.1f}",
            "tune_test_chosen": f"{chosen['test_intent_acc']:.1f}",
            "tune_test_verdict": ("the chosen point also scores best on test" if rank == 0 else
                                  f"{'one other point scores' if rank == 1 else f'{rank} other points score'} "
                                  f"higher on test than the chosen one (best: "
                                  f"{best_test['test_intent_acc']:.1f}, validation {best_test['val_intent_acc']:.1f})")}


def quoted(shown, bench: dict | None = None, scaling: dict | None = None) -> dict[str, str]:
    """Every number the chapter's prose quotes, computed from the shown results."""
    p = shown.profile
    # the scale the verdicts record (most of them: a claim about the paper's model sizes records those)
    scale = shown.table("claims")["scale"].mode().iloc[0] if shown.has("claims") else "-"
    out: dict[str, str] = {"claims_scale": scale, "max_epochs": str(p.max_epochs),
                           "patience": str(p.patience), "batch": str(p.batch_size),
                           "mtop_max_epochs": str(p.mtop_max_epochs), "mtop_patience": str(p.mtop_patience),
                           "max_seq_len": str(p.max_seq_len)}
    t1 = shown.table("table1")
    atis = t1[t1["task"] == "atis"].iloc[0]
    out.update(atis_train=f"{int(atis['train_sentences']):,}", atis_val=f"{int(atis['validation_sentences']):,}",
               val_step=f"{100 / atis['validation_sentences']:.1f}")
    for which, name, prefix in (("projection", "table1", "t1"), ("encoder", "table2", "t2")):
        table = shown.table(name)
        for task in table["task"].unique():
            o = ordering(table, which, task)
            out[f"{prefix}_{task}_tau"] = _tau_text(o["tau"])
            out[f"{prefix}_{task}_best"] = o["our_best"]
            out[f"{prefix}_{task}_paper_best"] = o["paper_best"]
        out[f"{prefix}_snips"] = snips_sentence(table, which)
    paper1 = paper_rows("projection")[1]["multiATIS_EN_Intent_Acc"].map(paper_number)
    out["t1_paper_spread"] = f"{paper1.max() - paper1.min():.1f}"
    t3 = shown.table("table3").set_index("precision")
    paper3 = load_paper_table("pnlp_mixer_table3").set_index("Model")
    out.update(t3_float=f"{t3.loc['float32', 'intent_acc']:.1f}", t3_int8=f"{t3.loc['int8', 'intent_acc']:.1f}",
               t3_paper=str(paper3.loc["pNLP-Mixer", "EN"]),
               t3_gap=f"{t3.loc['int8', 'intent_acc'] - paper_number(paper3.loc['pNLP-Mixer', 'EN']):+.1f}",
               t3_em=f"{t3.loc['int8', 'exact_match']:.1f}", t3_f1=f"{t3.loc['int8', 'slot_f1']:.1f}",
               t3_agree=f"{t3.loc['int8', 'agreement_with_float_%']:.1f}",
               t3_bytes=f"{int(t3.loc['int8', 'size_bytes']):,}",
               t3_float_bytes=f"{int(t3.loc['float32', 'size_bytes']):,}",
               t3_params=f"{int(t3.loc['int8', 'parameters']):,}", t3_epoch=str(int(t3.loc["int8", "best_epoch"])))
    if shown.has("table3_intent"):
        t3i = shown.table("table3_intent")
        out.update(intent_quoted(t3i, paper_number(paper3.loc["pNLP-Mixer", "EN"])))
        by_precision = t3i.groupby("precision")["size_bytes"].first()
        out.update(t3i_params=f"{int(t3i['parameters'].iloc[0]):,}", t3i_bytes=f"{int(by_precision['int8']):,}",
                   t3i_float_bytes=f"{int(by_precision['float32']):,}")
    if shown.has("tuning"):
        tuning = shown.table("tuning")
        out.update(tuning_facts(tuning))
        spread = tuning["val_intent_acc"].max() - tuning["val_intent_acc"].min()
        out["tune_apart"] = str(round(spread * atis["validation_sentences"] / 100))
    out["t3_training"] = f"at most {p.max_epochs} epochs, patience {p.patience}"
    out["t3i_schedule"] = (f"at most {p.test_max_epochs} epochs with a patience of {p.test_patience}"
                           if p.test_max_epochs else f"Table 1's schedule, at most {p.max_epochs} epochs")
    from hashlib_core.papers.pnlp_mixer.data import UNSEEN, load_task, outside_only_share

    atis_task = load_task("atis")
    test_intents = atis_task.test.intents
    unseen = sum(i == UNSEEN for i in test_intents)
    combined = sum(i != UNSEEN and "#" in atis_task.intent_names[i] for i in test_intents)
    out.update(t3_unseen=str(unseen), t3_test=f"{len(test_intents):,}", t3_combined=str(combined),
               t3_ceiling=f"{100 * (1 - unseen / len(test_intents)):.1f}")
    t2 = shown.table("table2")
    out["t12_at_last"] = at_last_epoch(t1, t2[t2["encoder"] != "mixer"])
    out["t2_head_gap"] = head_gap_sentence(t2, shown.table("sizes"))
    snips_task = load_task("snips")
    out.update(snips_limit=snips_schedule(t1, p), snips_train=f"{len(snips_task.train):,}",
               snips_ratio=f"{len(snips_task.train) / len(atis_task.train):.1f}")
    out.update(snips_sizes=" / ".join(f"{len(split):,}" for split in (snips_task.train, snips_task.validation,
                                                                         snips_task.test)),
               snips_intents=str(snips_task.num_intents))
    t4 = shown.table("table4")
    mtop_train = len(load_task(t4["task"].iloc[0]).train.head(p.train_examples))     # what the models trained on
    out.update(mtop_training_share(mtop_train), mtop_batches=str(math.ceil(mtop_train / p.batch_size)))
    out["t4_mean_em"] = f"{t4[t4['precision'] == 'int8']['exact_match'].mean():.1f}"
    floors = [outside_only_share(load_task(task)) for task in t4["task"].unique()]
    out["t4_all_o"] = f"{np.mean(floors):.1f}"
    out.update(quantization_facts(quantization_view(shown.table("table3"), t4)))
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
