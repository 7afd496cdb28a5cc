"""How far the chapter's models were trained, from the results: whether pre-training had flattened, which learning
rate the sweep chose for each model, and which fine-tuning runs stopped at the epoch cap (still improving there)."""
from __future__ import annotations

from typing import Any

import pandas as pd

from hashlib_core.papers.hashformers.finetuning import PAPER_TASK_COLUMN
from hashlib_core.papers.hashformers.tables import learning_rate, shown_names
from hashlib_core.pretraining import pretraining_flatness

__all__ = ["pretraining_flatness", "finetuning_view", "protocol_quoted"]


def finetuning_view(runs: pd.DataFrame, glue: pd.DataFrame) -> pd.DataFrame:
    """Per model: the learning rate the sweep chose (and on which task), and per task how many of its runs at that
    rate were best at the epoch cap (still improving when they stopped) out of its seeds."""
    chosen = runs[runs["chosen"].astype(bool)]
    names = dict(zip(glue["name"], shown_names(glue)))
    rows = []
    for name, g in chosen.groupby("name", sort=False):
        row: dict[str, Any] = {"model": names.get(name, name),
                               "learning rate": ", ".join(learning_rate(x) for x in sorted(set(g["learning_rate"]))),
                               "chosen on": ", ".join(PAPER_TASK_COLUMN.get(t, t) for t in sorted(set(g["swept_on"])))}
        for task, t in g.groupby("task", sort=False):
            at_cap = int((t["best_epoch"] >= t["max_epochs"]).sum())
            row[f"{PAPER_TASK_COLUMN.get(task, task)} at cap"] = f"{at_cap} of {len(t)}"
        rows.append(row)
    return pd.DataFrame(rows)


def protocol_quoted(shown: Any) -> dict[str, str]:
    """The numbers the page's protocol paragraphs quote."""
    p = shown.profile
    corpus = {"ptb-train+wikitext2-validation": "Penn Treebank's train split and WikiText-2's validation split",
              "ptb-train": "Penn Treebank's train split", "wikitext2-validation": "WikiText-2's validation split",
              "wikipedia+bookcorpus": "English Wikipedia and BookCorpus"}.get(p.corpus, p.corpus)
    out = {"corpus_name": corpus, "pt_steps": f"{p.pt_steps:,}",
           "pt_tokens": f"{p.pt_steps * p.pt_batch * p.seq_len:,}",
           "ft_train_n": f"{p.ft_train_examples:,}" if p.ft_train_examples else "all the",
           "ft_val_n": f"{p.ft_validation_examples:,}", "ft_cap": f"{p.ft_epochs:g}",
           "ft_patience_n": f"{p.ft_patience}" if p.ft_patience else "no",
           "ft_lrs_list": ", ".join(learning_rate(x) for x in p.ft_lrs),
           "ft_sweep": PAPER_TASK_COLUMN.get(p.ft_sweep_task, "every task") if p.ft_sweep_task else "every task"}
    flat = pretraining_flatness(shown.table("pretraining_curves"))
    share = flat["share of the decrease in the second half (%)"].dropna()
    #: a loss that fell by at most this share of its whole decrease over the second half of its steps has flattened
    flat_share = 10.0
    out.update(flat_verdict=("-" if not len(share) else "The losses had flattened" if share.median() <= flat_share
                             else "The losses were still falling"),
               flat_median=f"{share.median():.1f}%" if len(share) else "-",
               flat_max=f"{share.max():.1f}%" if len(share) else "-",
               flat_max_model=str(flat.loc[share.idxmax(), "name"]) if len(share) else "-")
    runs = shown.table("glue_runs")
    chosen = runs[runs["chosen"].astype(bool)] if "chosen" in runs.columns else runs
    if "learning_rate" in chosen.columns and len(p.ft_lrs) > 1:
        rates = chosen.groupby("name")["learning_rate"].first()
        top, bottom = int((rates == max(p.ft_lrs)).sum()), int((rates == min(p.ft_lrs)).sum())
        out.update(lr_edges=f"{top} of {len(rates)} models chose the sweep's largest rate and {bottom} its smallest")
    else:
        out.update(lr_edges="one learning rate is used")
    if "best_epoch" in chosen.columns:
        at_cap = chosen["best_epoch"] >= chosen["max_epochs"]
        out.update(at_cap=f"{int(at_cap.sum())} of {len(chosen)}")
    else:
        out.update(at_cap="-")
    return out
