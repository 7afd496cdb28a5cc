"""The pNLP-Mixer chapter's test tables: English test intent accuracy (Table 3 analog), MTOP test exact match per
language (Table 4 analog), the MASSIVE table, float32 against 8-bit, and the intent model's tuning."""
from __future__ import annotations

import numpy as np
import pandas as pd

from hashlib_core.results import load_paper_table, parse_printed

__all__ = ["test_view", "mtop_view", "epoch_trend", "own_mtop_schedule", "comparison_mtop_schedule", "schedule_contrast",
           "massive_view", "quantization_view", "quantization_facts", "intent_quoted", "tuning_view", "tuning_facts",
           "LANGUAGE_LABELS"]

#: our language codes -> the paper's column labels (Tables 3 and 4)
LANGUAGE_LABELS = {"en": "EN", "es": "ES", "fr": "FR", "de": "DE", "hi": "HI", "th": "TH"}


def _number(cell) -> float:
    parsed = parse_printed(cell)
    return float("nan") if parsed is None else parsed.value


def _language(task: str) -> str:
    return LANGUAGE_LABELS[task.split("-", 1)[1]] if "-" in task else "EN"


def test_view(t3_intent: pd.DataFrame) -> pd.DataFrame:
    """Table 3 analog: our ATIS test intent accuracy (multiATIS EN's test sentences; float32 and 8-bit, means over
    the seeds) beside the paper's multiATIS EN test column."""
    paper = load_paper_table("pnlp_mixer_table3")
    rows = []
    for precision, group in t3_intent.groupby("precision", sort=False):
        seeds = f", mean of {len(group)} seeds" if len(group) > 1 else ""
        rows.append({"model": f"pNLP-Mixer (ours, {precision}{seeds})",
                     "parameters": f"{int(group['parameters'].iloc[0]):,}",
                     "intent acc. (EN)": group["intent_acc"].mean(), "size (bytes)": f"{int(group['size_bytes'].iloc[0]):,}"})
    for _, r in paper.iterrows():
        q = r["quantization"] if r["quantization"] != "-" else ""
        rows.append({"model": f"{r['Model']} (paper{', ' + q if q else ''})", "parameters": r["#Param."],
                     "intent acc. (EN)": _number(r["EN"]), "size (bytes)": "not printed"})
    out = pd.DataFrame(rows)
    out.attrs["source"] = paper.attrs.get("source", "")
    return out


def mtop_view(t4: pd.DataFrame, floors: dict[str, float] | None = None) -> pd.DataFrame:
    """Table 4 analog: 8-bit test exact match per MTOP language beside the paper's pNLP-Mixer row, with each model's
    training sentences and its best epoch against the cap (``at cap``: maybe still improving). ``floors``
    ({task: %}, :func:`~hashlib_core.papers.pnlp_mixer.data.outside_only_share`) adds the exact match of a tagger
    that says ``O`` everywhere, which differs much between languages."""
    table4 = load_paper_table("pnlp_mixer_table4")
    paper = table4.set_index("Model").loc["pNLP-Mixer"]
    rows = []
    for _, r in t4[t4["precision"] == "int8"].iterrows():
        lang = _language(r["task"])
        capped = " (at cap)" if int(r["best_epoch"]) >= int(r["max_epochs"]) else ""
        rows.append({"language": lang, "exact match (ours, 8-bit)": r["exact_match"],
                     "exact match (paper, 8-bit)": _number(paper[lang]), "intent acc. (ours)": r["intent_acc"],
                     "slot F1 (ours)": r["slot_f1"], "training sentences": int(r["train_sentences"]),
                     "test sentences": int(r["test_sentences"]),
                     "best epoch": f"{int(r['best_epoch'])} of {int(r['max_epochs'])}{capped}"})
        if floors is not None:
            rows[-1]["all-O floor"] = floors[r["task"]]
    out = pd.DataFrame(rows)
    out.attrs["source"] = table4.attrs.get("source", "")
    return out


def epoch_trend(curves: pd.DataFrame, task: str, metric: str, label: str, step: int = 5) -> str:
    """How the validation ``metric`` of the MinHash Mixer on ``task`` (its first run in ``curves``: the chosen
    point's first seed of Tables 1-2) rose epoch by epoch: its value every ``step`` epochs up to the last, and the
    gain over the last ``step`` epochs, e.g. "12.0 at epoch 5, 30.0 at epoch 10, 41.0 at epoch 15 (+11.0 over the
    last 5 epochs)"."""
    run = curves[(curves["task"] == task) & (curves["projection"] == "minhash") & (curves["encoder"] == "mixer")]
    if run.empty:
        return f"no {label} curve of the MinHash Mixer on {task} in the results shown"
    series = run.drop_duplicates("epoch").set_index("epoch")[metric].sort_index()
    last = int(series.index[-1])
    marks = sorted({e for e in range(step, last, step)} | {last})
    points = ", ".join(f"{series.loc[e]:.1f} at epoch {e}" for e in marks if e in series.index)
    if last <= step:
        return f"{label}: {points}"
    gain = series.loc[last] - series.loc[last - step]
    return f"{label}: {points} ({gain:+.1f} over the last {step} epochs)"


def massive_view(massive: pd.DataFrame, t3_intent: pd.DataFrame | None = None) -> pd.DataFrame:
    """The MASSIVE table: our 8-bit test intent accuracy per MASSIVE locale, and (given) the ATIS test model's mean
    beside it, each labelled with its dataset. MASSIVE is not the paper's multiATIS: no paper column."""
    rows = []
    if t3_intent is not None:
        q = t3_intent[t3_intent["precision"] == "int8"]
        rows.append({"dataset": "ATIS (multiATIS EN test)", "language": "EN",
                     "intent acc. (ours, 8-bit)": q["intent_acc"].mean(),
                     "training sentences": int(q["train_sentences"].iloc[0]) if "train_sentences" in q else np.nan,
                     "test sentences": int(q["test_sentences"].iloc[0]), "best epoch": ""})
    for _, r in massive[massive["precision"] == "int8"].iterrows():
        capped = " (at cap)" if int(r["best_epoch"]) >= int(r["max_epochs"]) else ""
        rows.append({"dataset": "MASSIVE 1.1", "language": _language(r["task"]),
                     "intent acc. (ours, 8-bit)": r["intent_acc"],
                     "training sentences": int(r["train_sentences"]), "test sentences": int(r["test_sentences"]),
                     "best epoch": f"{int(r['best_epoch'])} of {int(r['max_epochs'])}{capped}"})
    return pd.DataFrame(rows)


def quantization_view(*tables: pd.DataFrame) -> pd.DataFrame:
    """Float32 against 8-bit for every tested model (the first seed's where a table has several): bytes, ratio,
    score changes (exact match only for the joint MTOP models), agreement of predictions (the intent, and for a
    joint model every slot tag too)."""
    rows = []
    for task, g in pd.concat([t for t in tables if t is not None]).groupby("task", sort=False):
        if "seed" in g and g["seed"].notna().any():
            g = g[g["seed"] == g["seed"].min()]
        f, q = g.set_index("precision").loc["float32"], g.set_index("precision").loc["int8"]
        joint = "exact_match" in g and not pd.isna(q.get("exact_match"))
        rows.append({"task": task.upper().replace("-", " "), "float32 (bytes)": int(f["size_bytes"]),
                     "8-bit (bytes)": int(q["size_bytes"]), "ratio": q["size_bytes"] / f["size_bytes"],
                     "intent acc. change": q["intent_acc"] - f["intent_acc"],
                     "exact match change": q["exact_match"] - f["exact_match"] if joint else np.nan,
                     "same predictions (%)": q["agreement_with_float_%"]})
    return pd.DataFrame(rows)


def quantization_facts(view: pd.DataFrame, goal: float = 99.0) -> dict[str, str]:
    """The 8-bit section's sentences from :func:`quantization_view`: how many models keep the same predictions on
    at least ``goal``% of their test sentences, the lowest agreement and its task, the largest size ratio."""
    agree = view["same predictions (%)"]
    worst = view.loc[agree.idxmin()]
    em = view["exact match change"].abs()
    return {"q_met": f"{int((agree >= goal).sum())} of {len(view)}", "q_goal": f"{goal:.0f}",
            "q_worst": f"{worst['same predictions (%)']:.1f}", "q_worst_task": str(worst["task"]),
            "q_ratio": f"{view['ratio'].max():.3f}",
            "q_em_change": f"{em.max():.1f}" if em.notna().any() else "n/a"}


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
           "t3i_agree": mean("agreement_with_float_%"),
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


def own_mtop_schedule(profile) -> bool:
    """Whether the profile gives Tables 1 and 2's MTOP EN models a schedule of their own (any ``comparison_mtop_*``
    setting away from its default)."""
    p = profile
    return bool(p.comparison_mtop_max_epochs or p.comparison_mtop_train_examples or p.comparison_mtop_batch_size
                or p.comparison_mtop_eval_examples or p.comparison_mtop_lr_schedule != "linear")


def comparison_mtop_schedule(profile) -> str:
    """How Tables 1 and 2's MTOP EN models train, in words (the profile's ``comparison_mtop_*`` settings): "as Table
    4's models" where none is set, else their sample, batch, schedule and cap."""
    p = profile
    if not own_mtop_schedule(p):
        return "train as Table 4's models do"
    caps = [n for n in (p.train_examples, p.mtop_train_examples, p.comparison_mtop_train_examples) if n > 0]
    sample = f"a random sample of {min(caps):,} training sentences" if caps else "every training sentence"
    val = [n for n in (p.eval_examples, p.comparison_mtop_eval_examples) if n > 0]
    chosen = f"a sample of {min(val):,} validation sentences" if val else "the whole validation split"
    rate = ("a constant learning rate after the warm-up, so that early stopping alone ends them"
            if p.comparison_mtop_lr_schedule == "constant" else "the learning rate decaying linearly to zero at the cap")
    return (f"train at batch {p.comparison_mtop_batch_size or p.batch_size} on {sample}, with {rate} (at most "
            f"{p.comparison_mtop_epochs()} epochs, patience {p.mtop_patience}), and are "
            f"chosen on {chosen}")


def schedule_contrast(t4: pd.DataFrame, t1: pd.DataFrame, profile) -> str:
    """Table 4's English model beside Table 1's English MTOP MinHash Mixer at the same learning rate and seed, which
    trains on Tables 1-2's schedule: each one's training sentences, batch, optimiser steps, best epoch against its
    cap and validation exact match (on its own validation sentences: Table 4's the whole eval split, Table 1's
    possibly a sample of it, so the two scores are not paired). Empty when either is missing."""
    four = t4[(t4["task"] == "mtop-en") & (t4["precision"] == "float32")]
    if four.empty:
        return ""
    a = four.iloc[0]
    one = t1[(t1["task"] == "mtop-en") & (t1["projection"] == "minhash") & (t1["encoder"] == "mixer")
             & (t1["seed"] == a["seed"]) & np.isclose(t1["learning_rate"], a["learning_rate"])]
    if one.empty:
        return ""
    b = one.iloc[0]
    p = profile

    def run(r, batch: int, rate: str, val: str) -> str:
        steps = -(-int(r["train_sentences"]) // batch) * int(r["epochs"])
        return (f"{int(r['train_sentences']):,} sentences at batch {batch} with {rate}, {steps:,} optimiser steps, "
                f"best at epoch {int(r['best_epoch'])} of at most {int(r['max_epochs'])}: {r['val_exact_match']:.1f} "
                f"on {val}")

    own_rate = ("a constant rate" if p.comparison_mtop_lr_schedule == "constant" else "the rate decaying to zero")
    sample = (f"a sample of {int(b['validation_sentences']):,} of its sentences"
              if "validation_sentences" in b else "its validation sentences")
    return (f"at the same learning rate ({a['learning_rate']:g}) and seed, Table 4's English model trains on "
            f"{run(a, p.batch_size, 'the rate decaying to zero', 'the whole eval split')}; Table 1's on "
            f"{run(b, p.comparison_mtop_batch_size or p.batch_size, own_rate, sample)}")
