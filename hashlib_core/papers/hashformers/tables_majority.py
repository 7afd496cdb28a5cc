"""The majority diagnosis's tables and the sentences the page quotes from them
(:mod:`~hashlib_core.papers.hashformers.majority`)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from hashlib_core.papers.hashformers.finetuning import PAPER_TASK_COLUMN
from hashlib_core.papers.hashformers.tables import MAJORITY_MARGIN, chance_floor

__all__ = ["chance_floor", "leaves_majority", "majority_floor_view", "majority_view", "majority_quoted"]

#: how the table names each source of a diagnosis row
SOURCES = {"pre-trained": "BERT-MLM, pre-trained", "random": "BERT-MLM, random weights",
           "bags": "bag of pieces (logistic regression)"}


def leaves_majority(task: str, score: float, majority: float, margin: float = MAJORITY_MARGIN) -> bool:
    """Whether ``score`` beats every constant prediction by more than ``margin`` points (the chapter's rule for a
    model that learned something, :func:`~hashlib_core.papers.hashformers.tables.at_majority`)."""
    return bool(not pd.isna(score) and score > chance_floor(task, majority) + margin)


def majority_floor_view(floor: pd.DataFrame) -> pd.DataFrame:
    """BERT-MLM's final masked-piece loss beside the no-context floor (nats)."""
    return pd.DataFrame({
        "model": floor["name"], "pre-training steps": floor["steps"],
        "corpus pieces": floor["corpus_pieces"].map("{:,}".format),
        "distinct pieces": floor["distinct_pieces"].map("{:,}".format),
        "no-context floor: unigram entropy (nats)": floor["unigram_entropy"],
        "final masked-piece loss (nats)": floor["final_mlm_loss"],
        "below the floor (nats)": floor["below_floor"],
        "below the floor (% of it)": 100.0 * floor["below_floor_share"]})


def _rows(runs: pd.DataFrame, bags: pd.DataFrame) -> pd.DataFrame:
    """The runs and the bag-of-pieces references as one frame with a ``source`` column."""
    frames = [runs.assign(source=runs["initialisation"])]
    if len(bags):
        frames.append(bags.assign(source="bags"))
    return pd.concat(frames, ignore_index=True)


def majority_view(runs: pd.DataFrame, bags: pd.DataFrame) -> pd.DataFrame:
    """One row per task, training size and source: the score on the examples it trained on, on the held-out part and
    on dev, the dev majority-class score, the share of dev predictions that are the majority class, the best epoch
    of the cap, and whether it leaves the majority class on dev."""
    rows = _rows(runs, bags)
    order = {s: i for i, s in enumerate(SOURCES)}
    rows = rows.assign(_o=rows["source"].map(order)).sort_values(["task", "train_examples", "_o"], kind="stable")
    epochs = [f"{int(e)} of {m:g}" if not pd.isna(e) else "-"
              for e, m in zip(rows.get("best_epoch", np.nan), rows.get("max_epochs", np.nan))]
    share = rows["dev_majority_share"] if "dev_majority_share" in rows else pd.Series(np.nan, index=rows.index)
    return pd.DataFrame({
        "task": [PAPER_TASK_COLUMN[t] for t in rows["task"]],
        "training examples": rows["train_examples"].map("{:,}".format).to_numpy(),
        "model": rows["source"].map(SOURCES).to_numpy(),
        "its training examples": rows["train_score"].to_numpy(),
        "held-out part": rows["validation_score"].to_numpy(),
        "dev": rows["score"].to_numpy(),
        "dev, majority class": rows["majority_score"].to_numpy(),
        "dev predictions of the majority class (%)": (100.0 * share).to_numpy(),
        "best epoch": epochs,
        "leaves the majority class": ["yes" if leaves_majority(t, s, m) else "no"
                                      for t, s, m in zip(rows["task"], rows["score"], rows["majority_score"])]})


def majority_quoted(floor: pd.DataFrame, runs: pd.DataFrame, bags: pd.DataFrame) -> dict[str, str]:
    """The numbers and verdicts the page's diagnosis paragraphs quote."""
    f = floor.iloc[0]
    out = {"maj_floor": f"{f['unigram_entropy']:.2f}", "maj_mlm_loss": f"{f['final_mlm_loss']:.2f}",
           "maj_below": f"{f['below_floor']:.2f}", "maj_below_share": f"{100.0 * f['below_floor_share']:.0f}%",
           "maj_steps": f"{int(f['steps']):,}"}
    rows = _rows(runs, bags)
    sentences = []
    for task, t in rows.groupby("task", sort=False):
        parts = []
        for source in SOURCES:
            s = t[t["source"] == source].sort_values("train_examples")
            if s.empty:
                continue
            cells = [f"{r.score:.1f} with {int(r.train_examples):,} examples" for r in s.itertuples()]
            left = [leaves_majority(task, r.score, r.majority_score) for r in s.itertuples()]
            verdict = ("leaves the majority class at every size" if all(left) else
                       "stays at the majority class at every size" if not any(left) else
                       "leaves the majority class only with " +
                       ", ".join(f"{int(n):,}" for n, ok in zip(s["train_examples"], left) if ok) + " examples")
            fit = ""
            if source != "bags":
                fit = " (on its own training examples: " + ", ".join(f"{x:.1f}" for x in s["train_score"]) + ")"
            parts.append(f"{SOURCES[source]} {verdict}: {'; '.join(cells)}{fit}")
        majority = t["majority_score"].iloc[0]
        sentences.append(f"{PAPER_TASK_COLUMN[task]} (dev majority class {majority:.1f}): " + "; ".join(parts))
    out["maj_findings"] = ". ".join(sentences) + "."

    out["maj_cause"] = "; ".join(_causes(rows, f)) or "no single cause stands out in the table below"
    out["maj_lr"] = ", ".join(sorted({f"{x:g}" for x in runs["learning_rate"]}))
    return out


#: a masked-piece loss less than this share below the no-context floor: pre-training taught little beyond frequencies
SHALLOW_SHARE = 0.1


def _causes(rows: pd.DataFrame, floor: pd.Series) -> list[str]:
    """The findings the diagnosis isolates, per task from its largest training size (whether a model fits the
    examples it trains on is read against the dev split's majority-class score, which stands in for the training
    part's), and from the pre-training floor."""
    out = []
    for task, t in rows.groupby("task", sort=False):
        name = PAPER_TASK_COLUMN[task]
        pre = t[t["source"] == "pre-trained"].sort_values("train_examples")
        rnd = t[t["source"] == "random"].sort_values("train_examples")
        if pre.empty:
            continue
        top = pre.iloc[-1]
        fits = leaves_majority(task, top["train_score"], top["majority_score"])
        left = [leaves_majority(task, r.score, r.majority_score) for r in pre.itertuples()]
        if not fits and len(rnd) and leaves_majority(task, rnd.iloc[-1]["train_score"], rnd.iloc[-1]["majority_score"]):
            out.append(f"on {name} the pre-trained encoder does not even fit the examples it trains on "
                       f"({top['train_score']:.1f} on them with {int(top['train_examples']):,} examples) where the "
                       f"randomly initialised one does ({rnd.iloc[-1]['train_score']:.1f}): at this learning rate the "
                       "pre-trained weights, not the amount of data, hold it at the majority class")
        elif left[-1] and not left[0]:
            out.append(f"on {name} more training examples take the pre-trained baseline off the majority class "
                       f"({pre.iloc[0]['score']:.1f} with {int(pre.iloc[0]['train_examples']):,} examples, "
                       f"{top['score']:.1f} with {int(top['train_examples']):,})")
        elif not any(left) and fits:
            out.append(f"on {name} the pre-trained baseline fits the examples it trains on ({top['train_score']:.1f}) "
                       "but stays at the majority class on dev: it memorises them")
        elif all(left):
            out.append(f"on {name} the pre-trained baseline leaves the majority class at every training size")
    if floor["below_floor_share"] < SHALLOW_SHARE:
        out.append(f"{'and ' if out else ''}pre-training took the masked-piece loss only {100.0 * floor['below_floor_share']:.0f}% "
                   "below the no-context floor: the encoder learnt little beyond piece frequencies to bring to "
                   "either task")
    return out
