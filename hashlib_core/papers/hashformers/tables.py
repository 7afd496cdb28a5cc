"""The HashFormers chapter's tables: ours beside the paper's, and every number the prose quotes.

Each function takes result tables (as :class:`hashlib_core.chapter.Shown` reads them) and returns a DataFrame or
a dict of strings; the notebook only displays them (:mod:`hashlib_core.book`).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

from hashlib_core.glue import PRIMARY_METRIC, normalize_task, num_labels
from hashlib_core.papers.hashformers.finetuning import PAPER_TASK_COLUMN
from hashlib_core.papers.hashformers.profiles import PROFILES, TABLE6_MODELS
from hashlib_core.papers.hashformers.table2 import PAPER_COLUMNS
from hashlib_core.papers.hashformers.table3 import table3_comparison, timing_quoted
from hashlib_core.params import humanize
from hashlib_core.results import load_paper_table, paper_vs_ours, parse_printed

__all__ = ["shown_name", "shown_names", "paper_row_label", "pretraining_view", "table2_comparison", "table2_matrix",
           "table2_notes_view", "glue_comparison", "glue_side_by_side", "glue_view", "chance_floor", "at_majority",
           "ordering", "paper_points", "table3_comparison", "table6_comparison", "table6_quoted", "add_parts_view",
           "add_scores", "add_quoted", "quoted"]

#: N of the paper's "Emb (50K)" rows (§4.2: 50,260 buckets; the ``paper`` profile's ``emb_buckets``).
PAPER_EMB_BUCKETS = PROFILES.get("paper").emb_buckets
#: The label Tables 1, 2 and 6 give those rows.
PAPER_EMB_LABEL = "Emb (50K)"


def shown_name(name: str, num_buckets: float | None) -> str:
    """A model's name as our tables show it. An "Emb (50K)" model built with another N than the paper's says its
    real N and the paper's row it stands for (``"MD-Emb (N = 4,096, paper's 50K)"``); other names are unchanged."""
    if PAPER_EMB_LABEL not in name or num_buckets is None or pd.isna(num_buckets) \
            or int(num_buckets) == PAPER_EMB_BUCKETS:
        return name
    return name.replace(PAPER_EMB_LABEL, f"Emb (N = {int(num_buckets):,}, paper's 50K)")


def shown_names(table: pd.DataFrame) -> list[str]:
    """:func:`shown_name` of every row of a result table (``name`` and ``num_buckets`` columns)."""
    buckets = table["num_buckets"] if "num_buckets" in table.columns else [None] * len(table)
    return [shown_name(n, b) for n, b in zip(table["name"], buckets)]


def paper_row_label(model: str, num_buckets: float | None) -> str:
    """The paper's model label in a paper-keyed comparison, with our N when it differs from the paper's
    (``"Emb (50K), ours N = 4,096"``)."""
    if model != PAPER_EMB_LABEL or num_buckets is None or pd.isna(num_buckets) \
            or int(num_buckets) == PAPER_EMB_BUCKETS:
        return model
    return f"{model}, ours N = {int(num_buckets):,}"


def pretraining_view(pretraining: pd.DataFrame) -> pd.DataFrame:
    """The pre-training summary the page shows (model names with their real N, see :func:`shown_name`)."""
    view = pretraining[["name", "objective", "unit", "num_buckets", "distinct_units", "steps", "final_loss",
                        "emb_params", "total_params", "wall_time_s"]].copy()
    view["name"] = shown_names(pretraining)
    return view


#: How close to the majority-class score a mean score may be and still count as "stays at the majority class"
#: (GLUE points, x 100 of the metric).
MAJORITY_MARGIN = 1.0


def table2_comparison(table2: pd.DataFrame) -> pd.DataFrame:
    """Our Table 2 counts beside the printed cells (paper_vs_ours on group + model)."""
    columns = {PAPER_COLUMNS[c]: {"total": "total_params", "emb": "emb_params"}.get(c, c) for c in PAPER_COLUMNS}
    out = paper_vs_ours(load_paper_table("hashformers_table2"), table2, on=["group", "model"], columns=columns)
    source = out.attrs["source"]
    out = out[out["paper"] != "-"].reset_index(drop=True)  # BERT-MLM is the baseline, not a row of Table 2
    out.attrs["source"] = source
    return out


def glue_comparison(glue: pd.DataFrame, tasks: Sequence[str]) -> pd.DataFrame:
    """Our GLUE dev scores (Table 1 columns) and PRR vs our BERT-MLM (Table 2's PRR columns) beside the paper's."""
    columns = [PAPER_TASK_COLUMN[normalize_task(t)] for t in tasks]
    scores = paper_vs_ours(load_paper_table("hashformers_table1"), glue, on=["group", "model"],
                           columns={c: c for c in columns})
    prr = paper_vs_ours(load_paper_table("hashformers_table2"), glue, on=["group", "model"],
                        columns={f"PRR_{c}": f"PRR_{c}" for c in columns if f"PRR_{c}" in glue.columns})
    out = pd.concat([scores, prr], ignore_index=True)
    out = out[out["ours"] != "-"].reset_index(drop=True)
    out.attrs["source"] = "data/paper_tables/hashformers_table1.csv and hashformers_table2.csv (PRR columns)"
    return out


def glue_side_by_side(glue: pd.DataFrame, tasks: Sequence[str], prr: bool = False
                      ) -> tuple[pd.DataFrame, list[str]]:
    """One row per model: for each task the paper's score and ours (``"paper / ours"``), from
    :func:`glue_comparison`'s pairs; with ``prr`` the PRR columns instead. PRR divides by our BERT-MLM's score, so a
    task on which our BERT-MLM does not beat the majority class (or, for STS-B, no correlation) by more than
    ``MAJORITY_MARGIN`` and its own seed standard deviation has no meaningful PRR: such tasks are left out and
    returned as the second element."""
    long = glue_comparison(glue, tasks)
    columns = [PAPER_TASK_COLUMN[normalize_task(t)] for t in tasks]
    dropped: list[str] = []
    if prr:
        stuck = set(at_majority(glue[glue["name"] == "BERT-MLM"], tasks, with_spread=True)["task"])
        dropped = [c for c in columns if c in stuck]
        columns = [f"PRR_{c}" for c in columns if c not in stuck]
    long = long[long["metric"].isin(columns)]
    names = dict(zip(zip(glue["group"], glue["model"]), shown_names(glue)))
    rows: dict[str, dict[str, str]] = {}
    for _, r in long.iterrows():
        name = names.get((r["group"], r["model"]), r["model"])
        rows.setdefault(name, {"model": name})[r["metric"].replace("PRR_", "")] = f"{r['paper']} / {r['ours']}"
    order = [n for n in shown_names(glue) if n in rows]
    view = pd.DataFrame([rows[n] for n in order]).fillna("-")
    return view, dropped


def paper_points(tasks: Sequence[str], table2: pd.DataFrame) -> pd.DataFrame:
    """The paper's (embedding parameters, GLUE average over ``tasks``) per model, for the parameters picture.

    The average is recomputed from Table 1 over the tasks we ran (the paper's Avg covers eight tasks); embedding
    parameters are Table 2's printed cells, and for the two BERT baselines (not rows of Table 2) our count of the
    50,265 x 768 matrix (``table2``'s BERT-MLM row).
    """
    columns = [PAPER_TASK_COLUMN[normalize_task(t)] for t in tasks]
    t1 = load_paper_table("hashformers_table1")
    t2 = load_paper_table("hashformers_table2").set_index(["group", "model"])
    bert_emb = float(table2.set_index("model").loc["BERT-MLM", "emb_params"])
    rows = []
    for _, r in t1.iterrows():
        key = (r["group"], r["model"])
        if key in t2.index:
            emb = parse_printed(t2.loc[key, "#Emb_Params"]).value
        elif r["model"] in ("BERT-MLM", "BERT-S+R"):
            emb = bert_emb
        else:
            continue
        rows.append({"group": r["group"], "model": r["model"], "emb_params": emb,
                     "avg": float(np.mean([parse_printed(r[c]).value for c in columns]))})
    return pd.DataFrame(rows)


def table6_comparison(glue: pd.DataFrame, table6: pd.DataFrame, tasks: Sequence[str]) -> pd.DataFrame:
    """Table 6: subword (BPE units) vs word HashFormers, ours beside the paper's, per task."""
    columns = [PAPER_TASK_COLUMN[normalize_task(t)] for t in tasks]
    word = glue[glue["name"].isin([v.name.replace(" [BPE]", "") for v in TABLE6_MODELS])].copy()
    word["group"] = word["group"].str.replace(" (Ours)", "", regex=False)
    ours = pd.concat([table6.assign(token="subword"), word.assign(token="word")], ignore_index=True)
    out = paper_vs_ours(load_paper_table("hashformers_table6"), ours, on=["group", "model", "token"],
                        columns={c: c for c in columns})
    buckets = dict(zip(zip(ours["group"], ours["model"]), ours["num_buckets"]))
    out["model"] = [paper_row_label(m, buckets.get((g, m))) for g, m in zip(out["group"], out["model"])]
    return out


def table6_quoted(glue: pd.DataFrame, table6: pd.DataFrame, tasks: Sequence[str]) -> dict[str, str]:
    """For how many of Table 6's models the subword units beat the word units (mean over ``tasks``): ours, paper."""
    columns = [PAPER_TASK_COLUMN[normalize_task(t)] for t in tasks]
    ours = {r["name"].replace(" [BPE]", ""): r[columns].mean() for _, r in table6.iterrows()}
    word = {r["name"]: r[columns].mean() for _, r in glue.iterrows() if r["name"] in ours}
    paper = load_paper_table("hashformers_table6")
    mean = lambda r: float(np.mean([parse_printed(r[c]).value for c in columns]))
    paper_scores = {(r["group"], r["model"], r["token"]): mean(r) for _, r in paper.iterrows()}
    prefix = {"HashFormers-MD": "MD", "HashFormers-LSH": "LSH"}
    paper_wins = sorted(f"{prefix[g]}-{m}" for (g, m, t), v in paper_scores.items()
                        if t == "subword" and v > paper_scores[(g, m, "word")])
    our_wins = sorted(n for n in ours if n in word and ours[n] > word[n])

    def say(wins: list[str], total: int) -> str:
        return f"{len(wins)} of {total}" + (f" ({', '.join(wins)})" if wins else "")

    paper_models = sum(token == "subword" for _, _, token in paper_scores)
    return {"t6_ours": say(our_wins, len(ours)), "t6_paper": say(paper_wins, paper_models),
            "t6_tasks": ", ".join(columns)}


def table2_matrix(table2: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 2 as a matrix of ``"printed → ours (gap)"`` cells, one row per model, and whether each agrees."""
    t2 = table2_comparison(table2)
    cells = t2.assign(cell=t2["paper"] + " → " + t2["ours"] + " (" + t2["gap"] + ")")
    order = list(t2["metric"].unique())
    text = cells.pivot(index=["group", "model"], columns="metric", values="cell")[order]
    agrees = t2.pivot(index=["group", "model"], columns="metric", values="agrees")[order]
    text.columns.name = agrees.columns.name = None
    return text, agrees


def table2_notes_view(table2: pd.DataFrame) -> pd.DataFrame:
    """The Table 2 rows whose cells differ from the print, with the columns and the reason."""
    rows = table2[table2["mismatched"].fillna("") != ""]
    return rows[["group", "model", "mismatched", "note"]].reset_index(drop=True)


def glue_view(glue: pd.DataFrame, tasks: Sequence[str]) -> pd.DataFrame:
    """Our GLUE dev scores as ``mean ± std`` over seeds per task, the average, and a first row with the
    majority-class score of each task."""
    columns = [PAPER_TASK_COLUMN[normalize_task(t)] for t in tasks]

    def cell(mean: float, std: float) -> str:
        if pd.isna(mean):
            return "-"
        return f"{mean:.1f}" if pd.isna(std) else f"{mean:.1f} ± {std:.1f}"

    rows = [{"model": "majority class", "emb. params": "-",
             **{c: "-" if pd.isna(glue[f"{c}_majority"].iloc[0]) else f"{glue[f'{c}_majority'].iloc[0]:.1f}"
                for c in columns}, "Avg": "-"}]
    for (_, r), name in zip(glue.iterrows(), shown_names(glue)):
        rows.append({"model": name, "emb. params": humanize(r["emb_params"]),
                     **{c: cell(r[c], r[f"{c}_std"]) for c in columns},
                     "Avg": "-" if pd.isna(r["Avg"]) else f"{r['Avg']:.1f}"})
    return pd.DataFrame(rows)


def chance_floor(task: str, majority: float) -> float:
    """The best score of a constant prediction: the majority class's (0 for CoLA's MCC and when unknown), and on a
    two-class accuracy task also the other class's (the dev split's majority can differ from the training split's)."""
    key = normalize_task(task)
    if pd.isna(majority):
        return 0.0
    if PRIMARY_METRIC[key] == "accuracy" and num_labels(key) == 2:
        return max(float(majority), 100.0 - float(majority))
    return float(majority)


def at_majority(glue: pd.DataFrame, tasks: Sequence[str], margin: float = MAJORITY_MARGIN,
                with_spread: bool = False) -> pd.DataFrame:
    """(model, task) pairs whose mean score is within ``margin`` points of the majority-class score (or, for STS-B,
    whose correlation is undefined or within ``margin`` of 0): the models that learned nothing on that task. On a
    two-class accuracy task the other constant prediction (100 minus the majority score, when higher: the dev
    split's majority can differ from the training split's) counts as learning nothing too. With ``with_spread``
    the margin is at least the model's own standard deviation over seeds."""
    rows = []
    for t in tasks:
        c = PAPER_TASK_COLUMN[normalize_task(t)]
        base = glue[f"{c}_majority"].iloc[0]
        floor = chance_floor(t, base)
        for _, r in glue.iterrows():
            spread = r[f"{c}_std"] if with_spread and not pd.isna(r[f"{c}_std"]) else 0.0
            if pd.isna(r[c]) or r[c] <= floor + max(margin, spread):
                rows.append({"model": r["name"], "task": c, "score": r[c], "majority": base})
    return pd.DataFrame(rows, columns=["model", "task", "score", "majority"])


def ordering(glue: pd.DataFrame, tasks: Sequence[str]) -> tuple[pd.DataFrame, float]:
    """The models ranked by their average over ``tasks`` in the paper's Table 1 and in ours (both sides over the
    same tasks: ``["sst2"]`` ranks both by SST-2 alone), and Kendall's tau between the two rankings (models present
    in both)."""
    columns = [PAPER_TASK_COLUMN[normalize_task(t)] for t in tasks]
    t1 = load_paper_table("hashformers_table1")
    paper = pd.DataFrame({"group": t1["group"], "model": t1["model"],
                          "paper avg": [float(np.mean([parse_printed(r[c]).value for c in columns]))
                                        for _, r in t1.iterrows()]})
    ours = glue[["group", "model", "name", "num_buckets"]].assign(
        **{"our avg": glue[columns].mean(axis=1, skipna=False)})
    both = paper.merge(ours, on=["group", "model"], how="inner").dropna(subset=["our avg"])
    both["paper rank"] = both["paper avg"].rank(ascending=False, method="min").astype(int)
    both["our rank"] = both["our avg"].rank(ascending=False, method="min").astype(int)
    tau = float(kendalltau(both["paper avg"], both["our avg"]).statistic) if len(both) > 2 else float("nan")
    both["name"] = shown_names(both)
    view = both.sort_values("paper rank")[["name", "paper avg", "paper rank", "our avg", "our rank"]]
    return view.rename(columns={"name": "model"}).reset_index(drop=True), tau


def add_parts_view(parts: pd.DataFrame) -> pd.DataFrame:
    """Add's shared and word parts (norms) per model and stage, and how far pre-training moved the shared part
    relative to the hashed-word marker (the same gradient), for the diagnosis table."""
    view = parts[["name", "stage", "shared_norm", "word_norm", "position_norm", "shared_over_word",
                  "shared_over_marker_moved"]]
    return view.rename(columns={"name": "model", "shared_norm": "|shared part|", "word_norm": "mean |word part|",
                                "position_norm": "mean |position row|", "shared_over_word": "shared / word",
                                "shared_over_marker_moved": "shared moved / marker moved"})


def add_scores(glue: pd.DataFrame, diagnosis: pd.DataFrame) -> pd.DataFrame:
    """Table 1's Add models beside the diagnosis models (the paper's codebooks, as they are and with the shared part
    frozen) on the diagnosis task(s) (the columns ``diagnosis`` has), with the majority-class score."""
    columns = [c for c in PAPER_TASK_COLUMN.values() if c in diagnosis.columns]
    rows = []
    for _, r in pd.concat([glue[glue["model"] == "Add"], diagnosis], ignore_index=True).iterrows():
        rows.append({"model": r["name"], **{c: f"{r[c]:.1f}" if pd.isna(r[f"{c}_std"])
                                            else f"{r[c]:.1f} ± {r[f'{c}_std']:.1f}" for c in columns},
                     **{f"{c} majority": f"{r[f'{c}_majority']:.1f}" for c in columns}})
    return pd.DataFrame(rows)


def _span(values: pd.Series, decimals: int = 1) -> str:
    low, high = f"{values.min():.{decimals}f}", f"{values.max():.{decimals}f}"
    return low if low == high else f"{low} to {high}"


def add_quoted(parts: pd.DataFrame, glue: pd.DataFrame, diagnosis: pd.DataFrame) -> dict[str, str]:
    """The numbers the Add section quotes: Table 1's Add scores, the codebook models' scores as they are and with
    the shared part frozen, the shared/word ratio before and after pre-training, and how much farther than the
    marker row pre-training moved the shared part, per storage."""
    column = next(c for c in PAPER_TASK_COLUMN.values() if c in diagnosis.columns)
    frozen = diagnosis["name"].str.contains("frozen")
    trained = parts.dropna(subset=["shared_over_marker_moved"])
    initial = parts[parts["shared_over_marker_moved"].isna() & (parts["storage"] == "codebooks")]
    live = ~trained["name"].str.contains("frozen")
    by_storage = lambda t, storage: t[(t["storage"] == storage) & live]
    add = glue[glue["model"] == "Add"]
    codebook = diagnosis[~frozen][column].mean()
    spread = max([MAJORITY_MARGIN, *(v for v in (diagnosis[~frozen][f"{column}_std"].max(),
                                                 add[f"{column}_std"].max()) if pd.notna(v))])
    task = {c: t for t, c in PAPER_TASK_COLUMN.items()}[column]
    if not at_majority(diagnosis[~frozen], [task], with_spread=True).empty:
        effect = "it keeps the model at the majority class"
    elif codebook < add[column].mean() - spread:
        effect = f"it costs {add[column].mean() - codebook:.1f} points against Add stored as its differences"
    else:
        effect = "it does not hold the model back here"
    out = {"add_task": column, "add_scores": _span(add[column]), "add_codebook_effect": effect,
           "add_codebook_scores": _span(diagnosis[~frozen][column]),
           "add_frozen_scores": _span(diagnosis[frozen][column]),
           "add_majority": f"{diagnosis[f'{column}_majority'].iloc[0]:.1f}",
           "add_ratio_init": _span(initial["shared_over_word"]), "add_sqrt_t": _span(np.sqrt(parts["num_bits"]))}
    for storage in ("codebooks", "differences"):
        rows = by_storage(trained, storage)
        if not rows.empty:
            out[f"add_ratio_{storage}"] = _per_model(rows, "shared_over_word")
            out[f"add_speed_{storage}"] = _per_model(rows, "shared_over_marker_moved")
    return out


def _per_model(rows: pd.DataFrame, column: str) -> str:
    """``3.0 (MD) and 1.7 (LSH)``: one value per model, named by its hash."""
    items = [f"{value:.1f} ({name.split('-')[0]})" for name, value in zip(rows["name"], rows[column])]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def learning_rate(value: float) -> str:
    """``3e-5`` (not Python's ``3e-05``)."""
    mantissa, exponent = f"{value:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def _stuck_summary(stuck: pd.DataFrame, n_models: int) -> str:
    """``at_majority``'s pairs as prose: tasks where every model stays first, then the others with their models."""
    if stuck.empty:
        return "none"
    groups = list(stuck.groupby("task", sort=False))
    every = [t for t, g in groups if len(g) == n_models]
    parts = [f"{', '.join(every)}: every model"] if every else []
    parts += [f"{t}: {', '.join(g['model'])}" for t, g in groups if len(g) < n_models]
    return "; ".join(parts)


def quoted(shown) -> dict[str, str]:
    """Every number the chapter's prose quotes, computed from the shown results (a :class:`~hashlib_core.chapter.Shown`)."""
    profile = shown.profile
    tasks = profile.task_keys()
    cols = [PAPER_TASK_COLUMN[t] for t in tasks]
    table2 = shown.table("table2")
    t2 = table2_comparison(table2)
    bert = table2.set_index("model").loc["BERT-MLM"]
    out = {"t2_agree": f"{int(t2['agrees'].sum())} of {len(t2)}", "bert_emb": humanize(int(bert["emb_params"]), 2),
           "bert_total": humanize(int(bert["total_params"]), 2)}
    md5 = shown.table("md5_example")
    out["md5_none_match"] = "neither" if not (md5["plain_matches"].any() or md5["hmac_matches"].any()) else "one"
    sharing = shown.table("bucket_sharing")
    big = sharing[sharing["num_buckets"] == sharing["num_buckets"].max()].set_index("hash")
    share = lambda h, col="words_sharing": f"{100 * big.loc[h, col] / big.loc[h, 'words']:.1f}%"
    out.update(sharing_n=f"{int(big['num_buckets'].iloc[0]):,}", sharing_words=f"{int(big['words'].iloc[0]):,}",
               sharing_md5=share("MD5"), sharing_lsh=share("LSH"),
               sharing_uniform=share("MD5", "expected_sharing_uniform"),
               largest_md5=f"{int(big.loc['MD5', 'largest_bucket']):,}",
               largest_lsh=f"{int(big.loc['LSH', 'largest_bucket']):,}")
    morph = shown.table("morphology")
    out.update(ham_md5=f"{morph['md5_hamming'].mean():.1f}", ham_lsh=f"{morph['lsh_hamming'].mean():.1f}",
               same_lsh=f"{int(morph['lsh_same_bucket'].sum())} of {len(morph)}",
               same_md5=f"{int(morph['md5_same_bucket'].sum())} of {len(morph)}",
               morph_n=f"{int(morph['num_buckets'].iloc[0]):,}")
    glue = shown.table("glue")
    sst = glue["SST"] if "SST" in glue else pd.Series(dtype=float)
    stuck = at_majority(glue, tasks)
    view, tau = ordering(glue, tasks)
    out["tau_sst"] = f"{ordering(glue, ['sst2'])[1]:.2f}" if "sst2" in tasks else "-"
    out["no_prr"] = ", ".join(glue_side_by_side(glue, tasks, prr=True)[1]) or "none"
    out.update(emb_n=f"{profile.emb_buckets:,}", emb_n_paper=f"{PAPER_EMB_BUCKETS:,}")
    out.update(n_models=str(len(glue)), task_list=", ".join(cols), n_seeds=str(len(profile.ft_seeds)),
               score_range=f"{glue['Avg'].min():.1f} to {glue['Avg'].max():.1f}",
               sst_min=f"{sst.min():.1f}" if len(sst) else "-",
               sst_majority=f"{glue['SST_majority'].iloc[0]:.1f}" if "SST_majority" in glue else "-",
               sst_all_above="every" if len(sst) and (sst > glue["SST_majority"].iloc[0] + MAJORITY_MARGIN).all()
               else "not every",
               stuck=_stuck_summary(stuck, len(glue)),
               tau=f"{tau:.2f}", best_ours=view.loc[view["our rank"].idxmin(), "model"] if len(view) else "-",
               # the paper's best model under the paper's own label (our tables name our Emb rows with their N)
               best_paper=dict(zip(shown_names(glue), glue["name"])).get(
                   view.loc[view["paper rank"].idxmin(), "model"], "-") if len(view) else "-")
    out.update(timing_quoted(shown.table("timing")))
    if shown.has("table6"):
        out.update(table6_quoted(glue, shown.table("table6"), profile.task_keys(table6=True)))
    if shown.has("add_parts"):
        out.update(add_quoted(shown.table("add_parts"), glue, shown.table("add_codebooks")))
        out.update(ft_lr=", ".join(learning_rate(lr) for lr in profile.ft_lrs),
                   ft_lr_paper=", ".join(learning_rate(lr) for lr in PROFILES.get("paper").ft_lrs))
    return out
