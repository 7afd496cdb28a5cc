"""The every-family chapter's tables, each a function of the committed results (no training).

* :func:`summary`: one row per (task, family, budget): mean report accuracy of the chosen runs, its interval (t
  across seeds where there are several, Wilson over the report items where one seed ran), parameters, bytes, the
  chosen rate and whether every run stopped before its cap;
* :func:`pareto_front`: the rows no other row of the task beats at fewer or equal parameters (or bytes);
* :func:`sweep`, :func:`robustness`, :func:`deciles`, :func:`collision_table`, :func:`throughput_table`;
* :func:`memories`: Track B's bits per byte, each memory's difference from the control with a paired bootstrap
  over the test windows;
* :func:`seed_spread` and :func:`memory_seeds`: every seed of a setting that ran several, side by side, so that a
  seed that collapses is seen rather than averaged away.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from hashlib_core.claims import paired_bootstrap, proportion_interval, seed_interval
from hashlib_core.papers.families.data import TASKS
from hashlib_core.papers.families.track_a import rate_edges
from hashlib_core.papers.families.track_b import unpack_floats

__all__ = ["summary", "pareto_front", "sweep", "robustness", "deciles", "collision_table", "throughput_table",
           "memories", "memory_gap", "seed_spread", "memory_seeds", "catalogue", "memory_catalogue", "not_built",
           "untrained", "stuck", "quoted"]

_SHORT = {"sst2": "SST-2", "massive": "MASSIVE EN"}
#: Track B's pairs the page reads (the published small-scale finding: a plain bigram table beats a gated memory)
_LM_PAIRS = (("bigram-residual", "engram"), ("bigram", "engram"), ("bigram-residual", "bigram"))


def _interval(rows: pd.DataFrame) -> tuple[float, float, float]:
    if len(rows) > 1:
        iv = seed_interval(rows["accuracy"].to_numpy(float))
    else:
        r = rows.iloc[0]
        n = int(r["n_items"])
        iv = proportion_interval(int(round(r["accuracy"] * n / 100)), n)
    return iv.estimate, iv.low, iv.high


def summary(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per (task, family, fraction) over the chosen runs, sorted by task then parameters."""
    out = []
    for (task, family, fraction), rows in runs[runs["chosen"]].groupby(["task", "family", "fraction"], sort=False):
        mean, low, high = _interval(rows)
        out.append({"task": task, "family": family, "sizing": rows["sizing"].iloc[0], "fraction": fraction,
                    "emb_params": int(rows["emb_params"].iloc[0]), "body_params": int(rows["body_params"].iloc[0]),
                    "accuracy": mean, "low": low, "high": high, "seeds": len(rows),
                    "typo_accuracy": rows["typo_accuracy"].mean(),
                    "dev_accuracy": rows["dev_accuracy"].mean() if "dev_accuracy" in rows else np.nan,
                    "learning_rate": rows["learning_rate"].iloc[0],
                    "stored_bytes": int(rows["bytes_int8_zlib"].iloc[0] + rows["lookup_bytes"].iloc[0]),
                    "bytes_int8_zlib": int(rows["bytes_int8_zlib"].iloc[0]),
                    "lookup_bytes": int(rows["lookup_bytes"].iloc[0]),
                    "capped": int((~rows["converged"].astype(bool)).sum())})
    return pd.DataFrame(out).sort_values(["task", "emb_params", "family"], ignore_index=True)


def pareto_front(table: pd.DataFrame, cost: str = "emb_params") -> pd.DataFrame:
    """The rows of each task that no row with ``cost`` at most theirs beats in mean accuracy."""
    keep = []
    for _, rows in table.groupby("task", sort=False):
        best = -np.inf
        for i, r in rows.sort_values([cost, "accuracy"], ascending=[True, False]).iterrows():
            if r["accuracy"] > best:
                keep.append(i)
                best = r["accuracy"]
    return table.loc[keep].sort_values(["task", cost], ignore_index=True)


def sweep(runs: pd.DataFrame) -> pd.DataFrame:
    """Held-out accuracy of each family's swept runs by learning rate (rates added beyond the grid included, blank
    where a family did not try them), the chosen rate, whether it is still at an end of the rates tried (``at
    edge``) and how many runs stopped at their cap."""
    swept = runs[runs["seed"] == runs["seed"].min()]
    if "swept" in swept:
        swept = swept[swept["swept"].astype(bool)]
    counts = swept.groupby(["task", "family", "fraction"])["learning_rate"].transform("nunique")
    swept = swept[counts > 1]
    table = swept.pivot_table(index=["task", "family", "fraction"], columns="learning_rate",
                              values="heldout_accuracy").reset_index()
    chosen = swept[swept["chosen"]].set_index(["task", "family", "fraction"])["learning_rate"]
    table["chosen"] = [chosen.get((t, f, b)) for t, f, b in zip(table["task"], table["family"], table["fraction"])]
    capped = swept.groupby(["task", "family", "fraction"])["converged"].apply(lambda c: int((~c.astype(bool)).sum()))
    table["capped"] = [capped.get((t, f, b)) for t, f, b in zip(table["task"], table["family"], table["fraction"])]
    edge = rate_edges(runs).set_index(["task", "family", "fraction"])["at_edge"]
    table["at edge"] = ["yes" if edge.get((t, f, b), False) else "" for t, f, b in
                        zip(table["task"], table["family"], table["fraction"])]
    table.columns = [f"lr {c:g}" if isinstance(c, float) else c for c in table.columns]
    return table


def robustness(table: pd.DataFrame) -> pd.DataFrame:
    """Clean and typo accuracy of each row, and the drop (points)."""
    out = table[["task", "family", "sizing", "fraction", "emb_params", "accuracy", "typo_accuracy"]].copy()
    out["drop"] = out["accuracy"] - out["typo_accuracy"]
    return out.sort_values(["task", "drop"], ignore_index=True)


def deciles(table: pd.DataFrame) -> pd.DataFrame:
    """Mean accuracy by decile of the rarest piece's training count (rows: task and family; columns: deciles)."""
    mean = table.groupby(["task", "family", "fraction", "decile"])["accuracy"].mean().reset_index()
    wide = mean.pivot_table(index=["task", "family", "fraction"], columns="decile", values="accuracy").reset_index()
    wide.columns = [f"d{c}" if isinstance(c, (int, np.integer)) else c for c in wide.columns]
    return wide


def collision_table(collisions: pd.DataFrame) -> pd.DataFrame:
    """Tokens sharing their signature, against the birthday bound (the ratio: 1 = as a uniform hash)."""
    out = collisions.copy()
    out["ratio"] = np.where(out["expected"] > 0, out["colliding"] / out["expected"].where(out["expected"] > 0),
                            np.nan)
    return out.sort_values(["fraction", "family"], ascending=[False, True], ignore_index=True)


def throughput_table(throughput: pd.DataFrame) -> pd.DataFrame:
    return throughput[["family", "sizing", "parameters", "build_s", "tokens_per_s", "lookup_bytes"]].sort_values(
        "tokens_per_s", ascending=False, ignore_index=True)


def _window_scores(rows: pd.DataFrame, per_window: np.ndarray) -> np.ndarray:
    """``(seeds, windows)``: each run's bits per test window times (windows / total bytes), so that a run's mean over
    the windows is its bits per byte (what a two-level bootstrap over seeds and windows resamples)."""
    bits = np.stack([unpack_floats(b) for b in rows["window_bits"]])
    if bits.shape[1] != len(per_window):
        raise ValueError(f"{bits.shape[1]} scored windows but bytes for {len(per_window)}")
    return bits * len(per_window) / float(per_window.sum())


def memory_gap(lm_runs: pd.DataFrame, windows: pd.DataFrame, a: str, b: str) -> dict:
    """Test bits per byte of memory ``a`` minus memory ``b`` (each at its first added budget, chosen runs), with a
    paired two-level bootstrap: the test windows and each memory's seeds resampled together."""
    chosen = lm_runs[lm_runs["chosen"]]
    per_window = windows.sort_values("window")["bytes"].to_numpy(float)
    first = chosen.loc[chosen["memory"] != "none", "multiple"].min()

    def scores(memory: str) -> np.ndarray:
        rows = chosen[(chosen["memory"] == memory) & ((memory == "none") | (chosen["multiple"] == first))]
        if rows.empty:
            raise ValueError(f"Track B has no chosen run of memory {memory!r}")
        return _window_scores(rows, per_window)

    xa, xb = scores(a), scores(b)
    iv = paired_bootstrap(xa, xb, items="PTB test windows", names=(a, b), resamples=2000)
    return {"a": a, "b": b, "gap": iv.estimate, "low": iv.low, "high": iv.high, "seeds": (len(xa), len(xb))}


def memories(lm_runs: pd.DataFrame, windows: pd.DataFrame) -> pd.DataFrame:
    """Track B: each chosen (memory, multiple) run's test bits per byte and its difference from the control's
    (negative: the memory helps), a paired bootstrap over the test windows and, where there are several, the
    seeds of both (two levels, resampled together)."""
    chosen = lm_runs[lm_runs["chosen"]]
    per_window = windows.sort_values("window")["bytes"].to_numpy(float)
    control = chosen[chosen["memory"] == "none"]
    if control.empty:
        raise ValueError("Track B's table needs the control (memory 'none') among the runs")
    base = _window_scores(control, per_window)
    out = []
    for (memory, multiple), rows in chosen.groupby(["memory", "multiple"], sort=False):
        x = _window_scores(rows, per_window)
        row = {"memory": memory, "multiple": multiple, "memory_params": int(rows["memory_params"].iloc[0]),
               "total_params": int(rows["total_params"].iloc[0]), "learning_rate": rows["learning_rate"].iloc[0],
               "seeds": len(rows), "test_bpb": float(x.mean()),
               "capped": int((~rows["converged"].astype(bool)).sum())}
        if memory != "none":
            iv = paired_bootstrap(x, base, items="PTB test windows", names=(memory, "none"), resamples=2000)
            row.update(vs_control=iv.estimate, low=iv.low, high=iv.high)
        out.append(row)
    return pd.DataFrame(out)


def seed_spread(runs: pd.DataFrame) -> pd.DataFrame:
    """Each (task, family, budget) that ran several seeds at its chosen rate: every seed's report accuracy, the
    spread (best minus worst) and the worst seed's distance below the others' mean (``worst_gap``): a seed far below
    its siblings collapsed, and the mean hides it."""
    out = []
    chosen = runs[runs["chosen"]]
    for (task, family, fraction), rows in chosen.groupby(["task", "family", "fraction"], sort=False):
        if len(rows) < 2:
            continue
        acc = rows.sort_values("seed")["accuracy"].to_numpy(float)
        worst = int(np.argmin(acc))
        others = np.delete(acc, worst)
        out.append({"task": task, "family": family, "fraction": fraction,
                    **{f"seed {int(s)}": a for s, a in zip(rows.sort_values("seed")["seed"], acc)},
                    "spread": float(acc.max() - acc.min()), "worst_gap": float(others.mean() - acc[worst]),
                    "capped": int((~rows["converged"].astype(bool)).sum())})
    return pd.DataFrame(out)


def memory_seeds(lm_runs: pd.DataFrame) -> pd.DataFrame:
    """Track B's chosen runs at the first added budget, one column of test bits per byte per seed, ordered by the
    mean (lower is better), and the memory's rank under each seed: an ordering that holds across seeds."""
    chosen = lm_runs[lm_runs["chosen"]]
    first = chosen[(chosen["memory"] == "none") | (chosen["multiple"] == chosen.loc[chosen["memory"] != "none",
                                                                                     "multiple"].min())]
    wide = first.pivot_table(index="memory", columns="seed", values="test_bpb")
    wide.columns = [f"seed {int(c)}" for c in wide.columns]
    ranks = wide.rank(axis=0).astype("Int64")
    wide["mean"] = wide.mean(axis=1)
    wide["ranks"] = [" ".join(str(v) for v in ranks.loc[m]) for m in wide.index]
    return wide.sort_values("mean").reset_index()


def catalogue(profile=None) -> pd.DataFrame:
    """The catalogue's families: name, what each is, its source, how its size follows the budget and (with a
    ``profile``) whether that profile trains it."""
    from hashlib_core.embeddings.catalogue import FAMILIES

    rows = [{"family": f.name, "what it is": f.description, "source": f.source, "sizing": f.sizing}
            for f in FAMILIES.values()]
    if profile is not None:
        for row in rows:
            row[f"in {profile.name}"] = "yes" if row["family"] in profile.families else "not yet"
    return pd.DataFrame(rows)


def untrained(profile) -> str:
    """The catalogue's families ``profile`` does not train, listed (or "none")."""
    from hashlib_core.embeddings.catalogue import FAMILIES

    return ", ".join(f for f in FAMILIES if f not in profile.families) or "none"


def memory_catalogue() -> pd.DataFrame:
    from hashlib_core.papers.families.modeling import MEMORIES

    return pd.DataFrame([{"memory": name, "what it hashes": what, "source": source}
                         for name, (source, what) in MEMORIES.items()])


def _label(r) -> str:
    return r["family"] if r["sizing"] != "budget" else f"{r['family']} ({100 * r['fraction']:g}%)"


def not_built(runs: pd.DataFrame, profile) -> list[tuple[str, float]]:
    """The (family, budget) settings of ``profile`` that no task trained (below the family's minimum budget)."""
    from hashlib_core.embeddings.catalogue import FAMILIES

    trained = {(f, round(b, 6)) for f, b in zip(runs["family"], runs["fraction"])}
    return [(f, b) for f in profile.families if FAMILIES[f].sizing == "budget" for b in profile.budgets
            if (f, round(b, 6)) not in trained]


def stuck(runs: pd.DataFrame, majority: pd.DataFrame, margin: float = 5.0) -> pd.DataFrame:
    """The chosen runs whose best held-out accuracy stayed within ``margin`` points of the held-out majority share:
    models that never left (or barely left) predicting one class."""
    floor = majority.set_index("task")["heldout_majority"]
    chosen = runs[runs["chosen"]]
    near = chosen["heldout_accuracy"] <= chosen["task"].map(floor) + margin
    return chosen[near][["task", "family", "fraction", "learning_rate", "seed", "heldout_accuracy", "accuracy",
                         "best_step"]].reset_index(drop=True)


def quoted(table: pd.DataFrame, runs: pd.DataFrame, lm: pd.DataFrame, lm_windows: pd.DataFrame,
           collisions: pd.DataFrame, throughput: pd.DataFrame, profile, majority: pd.DataFrame) -> dict[str, str]:
    """The numbers the page's prose cites, computed (glued by name)."""
    sweep_budget = profile.sweep_budget
    chosen = runs[runs["chosen"]]
    protocols = {t: profile.protocol(t) for t in profile.tasks}
    out = {"n_families": str(table["family"].nunique()), "n_runs": f"{len(runs):,}",
           "n_rates": "/".join(sorted({str(len(p.learning_rates)) for p in protocols.values()})),
           "rates": "; ".join(f"{_SHORT[t]}: " + ", ".join(f"{r:g}" for r in p.learning_rates) + " (at most "
                              f"{p.max_steps:,} steps, scored every {p.eval_every:,})" for t, p in protocols.items()),
           "patience": "/".join(sorted({str(p.patience) for p in protocols.values()})),
           "length_group": str(profile.length_group),
           "capped_by_task": "; ".join(f"{_SHORT[t]} {int((~rows['converged'].astype(bool)).sum())} of {len(rows)}"
                                       for t, rows in chosen.groupby("task", sort=False)),
           "n_capped": f"{int((~chosen['converged'].astype(bool)).sum()):,}",
           "n_chosen": f"{int(runs['chosen'].sum()):,}", "sweep_budget": f"{100 * sweep_budget:g}%",
           "not_built": ", ".join(f"{f} at {100 * b:g}%" for f, b in not_built(runs, profile)) or "none",
           "untrained": untrained(profile)}
    edges = rate_edges(runs)
    grown = edges[edges["extended"] > 0]
    out["extend_edges"] = "/".join(sorted({str(p.extend_edges) for p in protocols.values()}))
    out["extended"] = (f"{len(grown)} of {len(edges)} swept families (" + "; ".join(
        f"{_SHORT[t]}: " + ", ".join(rows["family"]) for t, rows in grown.groupby("task", sort=False)) + ")"
        if len(grown) else f"none of the {len(edges)} swept families")
    still = edges[edges["at_edge"].astype(bool)]
    out["edges"] = "; ".join(f"{_SHORT[t]}: " + ", ".join(f"{r['family']} ({r['chosen']:g})"
                                                          for _, r in rows.iterrows())
                             for t, rows in still.groupby("task", sort=False)) or "none"
    caught = stuck(runs, majority)
    out["stuck"] = ", ".join(f"{r['family']} at {100 * r['fraction']:g}%, seed {r['seed']} ({_SHORT[r['task']]}: "
                             f"{r['heldout_accuracy']:.1f}% held out)" for _, r in caught.iterrows()) or "none"
    out["majority"] = "; ".join(f"{_SHORT[r['task']]} {r['heldout_majority']:.1f}% held out, "
                                f"{r['report_majority']:.1f}% report" for _, r in majority.iterrows())
    for task in TASKS:
        label = _SHORT[task]
        split = profile.protocol(task).report_on[0] if task in profile.tasks else ""
        rows = table[table["task"] == task]
        if rows.empty:
            out[f"replace_{task}"] = (f"{label} is not trained in the {profile.name} profile: its "
                                      "runs are still to come.")
            out[f"typo_{task}"] = f"{label}: not trained in this profile."
            continue
        full = rows[rows["family"] == "full"]
        at = rows[np.isclose(rows["fraction"], sweep_budget) & (rows["sizing"] == "budget")]
        ranked = at.sort_values("accuracy", ascending=False)
        bar = full["accuracy"].iloc[0] if len(full) else np.inf
        above = rows[(rows["family"] != "full") & (rows["accuracy"] >= bar)]
        name = label
        sentences = []
        if len(full):
            sentences.append(f"On {name} the full table reaches {bar:.1f}% ({split} split).")
        if len(ranked):
            sentences.append(f"At {100 * sweep_budget:g}% of its parameters the best family is "
                             f"{ranked.iloc[0]['family']} ({ranked.iloc[0]['accuracy']:.1f}%) and the worst "
                             f"{ranked.iloc[-1]['family']} ({ranked.iloc[-1]['accuracy']:.1f}%).")
        sentences.append("The front, from the cheapest point to the most accurate: "
                         + ", ".join(_label(r) for _, r in pareto_front(rows).iterrows()) + ".")
        sentences.append("At or above the full table's accuracy: "
                         + (", ".join(_label(r) for _, r in above.iterrows()) or "no family") + ".")
        out[f"replace_{task}"] = " ".join(sentences)
        drops = robustness(rows)
        out[f"typo_{task}"] = (f"On {name} the smallest drops are "
                               + ", ".join(_label(r) for _, r in drops.head(3).iterrows())
                               + "; the largest " + ", ".join(_label(r) for _, r in drops.tail(3).iloc[::-1].iterrows())
                               + ".")
    mem = memories(lm, lm_windows)
    helped = mem[(mem["memory"] != "none") & (mem["high"] < 0)]
    out["control_bpb"] = f"{mem.loc[mem['memory'] == 'none', 'test_bpb'].iloc[0]:.3f}"
    best = mem[mem["memory"] != "none"].sort_values("vs_control").iloc[0]
    out["best_memory"] = (f"{best['memory']} at {best['multiple']:g}x the table ({best['vs_control']:+.3f} bits per "
                          "byte against the control)")
    out["memories_helping"] = ", ".join(f"{r['memory']} at {r['multiple']:g}x" for _, r in helped.iterrows()) or "none"
    order = memory_seeds(lm)
    out["lm_order"] = (", ".join(f"{r['memory']} ({r['mean']:.3f})" for _, r in order.iterrows())
                       + f"; seeds per memory: {'/'.join(sorted({str(int(n)) for n in mem['seeds']}))}")
    pairs = [(a, b) for a, b in _LM_PAIRS if {a, b} <= set(lm["memory"])]
    gaps = [memory_gap(lm, lm_windows, a, b) for a, b in pairs]
    out["lm_pairs"] = "; ".join(f"{g['a']} minus {g['b']}: {g['gap']:+.3f} [{g['low']:+.3f}, {g['high']:+.3f}]"
                                for g in gaps) or "no pair of these memories was trained"
    spread = seed_spread(runs)
    out["seed_spread"] = "none" if spread.empty else (
        f"{spread['spread'].max():.1f} points at most (" + ", ".join(
            f"{r['family']} on {_SHORT[r['task']]}" for _, r in spread.nlargest(1, "spread").iterrows()) + ")")
    lp = profile.lm_protocol
    steps = f"at most {lp.max_steps:,} steps, scored every {lp.eval_every:,}, {len(lp.seeds)} seeds"
    out["lm_rates"] = ", ".join(f"{r:g}" for r in lp.learning_rates) + ", " + steps
    chosen_lm = lm[lm["chosen"]]
    capped = int((~chosen_lm["converged"].astype(bool)).sum())
    out["lm_tuning"] = (
        f"It is swept like Track A's families, under its own protocol ({out['lm_rates']}), and its other seeds run "
        f"at the rate chosen" if len(lp.learning_rates) > 1 else
        f"Every memory trains alike, at one learning rate fixed in advance ({lp.learning_rates[0]:g}) for {steps}, "
        f"the best validation step kept: an equal-steps comparison rather than a converged one, since Track A's "
        f"comparisons took the rest of the profile's time") + (
        f". {capped} of its {len(chosen_lm)} runs were still improving when they reached the cap" if capped else
        f". Every one of its {len(chosen_lm)} runs stopped on its own plateau before the cap")
    out["sst2_report"] = f"{profile.sst2_report:,}"
    massive = [f for f in profile.families if f in profile.massive_families]
    out["massive_families"] = ("every family" if not massive or len(massive) == len(profile.families) else
                               f"only {len(massive)} families, those the claims read ({', '.join(massive)})")
    out["schedule"] = "; ".join(f"{_SHORT.get(t, 'PTB')}: {p.schedule.replace('_', ' ')}"
                                for t, p in {**protocols, "lm": lp}.items())
    out["budget_note"] = getattr(profile, "BUDGET_NOTE", "") if profile.budget_minutes > 180 else \
        f"The {profile.name} profile keeps to three hours."
    col = collision_table(collisions)
    col = col[col["expected"] > 0]
    out["most_colliding"] = "none"
    if len(col):
        far = col.assign(excess=col["colliding"] - col["expected"]).sort_values("excess", ascending=False).iloc[0]
        out["most_colliding"] = (f"{far['family']} at {100 * far['fraction']:g}% ({int(far['colliding']):,} "
                                 f"pieces share a signature; a uniform hash: {far['expected']:,.0f})")
    speed = throughput_table(throughput)
    out["fastest"] = f"{speed.iloc[0]['family']} ({speed.iloc[0]['tokens_per_s']:,.0f} tokens/s)"
    out["slowest"] = f"{speed.iloc[-1]['family']} ({speed.iloc[-1]['tokens_per_s']:,.0f} tokens/s)"
    slow_build = speed.sort_values("build_s").iloc[-1]
    out["slowest_build"] = f"{slow_build['family']} ({slow_build['build_s']:.1f} s)"
    return out
