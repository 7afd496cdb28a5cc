"""The MTOP EN length diagnosis (experiment ``longer_mtop``): do Tables 1-2's MTOP EN rankings hold at a longer
schedule?

Tables 1 and 2's MTOP EN models train for at most ``comparison_mtop_max_epochs`` epochs (``mtop_max_epochs`` when
0), and on two CPU cores most are best at their last epoch: still improving when the cap stops them. This
experiment retrains two of them at ``longer_mtop_max_epochs`` with everything else as the tables trained them (the
chosen tuning point, the first seed, the same training and validation sentences, batch and schedule, the learning
rate now decaying to zero at the longer cap):

* the MinHash Mixer, the paper's model, and
* its rival: among Table 2's other encoders on MinHash, the one whose chosen first-seed run has the highest MTOP EN
  validation exact match (read from the tables' results, never chosen on a test split).

:func:`length_table` puts each at both lengths (with best epoch, epochs run and parameters) and :func:`gaps` gives
the Mixer's gap to the rival at each length, with a paired bootstrap over the validation sentences.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from hashlib_core.claims import Interval, paired_bootstrap
from hashlib_core.papers.pnlp_mixer.comparisons import part_name
from hashlib_core.papers.pnlp_mixer.profiles import TUNED
from hashlib_core.papers.pnlp_mixer.runs import run_row

__all__ = ["TASK", "LONGER_PARTS", "rival", "run_longer", "length_table", "gaps", "length_sentence", "length_reading",
           "longer_quoted"]

#: the task of the diagnosis: Tables 1-2's exact-match column
TASK = "mtop-en"
#: the parts of Tables 1-2 the diagnosis reads: the Mixer's and the other encoders'
LONGER_PARTS = tuple(part_name(kind, TASK) for kind in ("mixer", "architectures"))
#: the columns of a run kept in the diagnosis's table
_KEEP = ("encoder", "max_epochs", "epochs", "best_epoch", "capped", "val_exact_match", "val_intent_acc",
         "learning_rate", "seed", "parameters", "wall_time_s")


def _first_chosen(runs: pd.DataFrame, seed: int) -> pd.DataFrame:
    """The chosen MinHash runs of ``seed`` on MTOP EN, one per encoder, indexed by encoder."""
    keep = runs[(runs["task"] == TASK) & (runs["projection"] == "minhash") & runs["chosen"].astype(bool)
                & (runs["seed"] == seed)]
    return keep.drop_duplicates("encoder").set_index("encoder")


def rival(runs: pd.DataFrame, seed: int) -> str:
    """The encoder other than the Mixer whose chosen ``seed`` run on MinHash has the highest MTOP EN validation
    exact match (ties: the first in ``runs``' order)."""
    first = _first_chosen(runs, seed)
    others = first.drop(index="mixer", errors="ignore")
    if others.empty:
        raise ValueError(f"no other encoder than the Mixer has a chosen seed-{seed} run on {TASK}: the length "
                         f"diagnosis needs Table 2's MTOP EN rows (run architectures_mtop_en first)")
    return str(others["val_exact_match"].astype(float).idxmax())


def run_longer(res: Any, evidence: Any) -> dict[str, Any]:
    """Retrain the MinHash Mixer and its :func:`rival` at the profile's ``longer_mtop_max_epochs``; returns the
    outputs ``longer_mtop`` (one row per encoder and length: the tables' run, then the longer one),
    ``longer_mtop_curves`` (every run's per-epoch validation curve) and ``longer_mtop_items`` (every run's
    per-sentence validation correctness)."""
    p = res.profile
    cap = p.longer_mtop_max_epochs
    short_cap = res.schedule(TASK, comparison=True)[0]
    if cap <= short_cap:
        raise ValueError(f"longer_mtop_max_epochs ({cap}) must exceed the tables' MTOP EN cap ({short_cap})")
    runs = pd.concat([evidence.table(f"{n}_runs") for n in LONGER_PARTS], ignore_index=True)
    curves = pd.concat([evidence.table(f"{n}_curves") for n in LONGER_PARTS], ignore_index=True)
    records = [r for n in LONGER_PARTS for r in evidence.json(f"{n}_items")["runs"]]
    first = _first_chosen(runs, p.seed)
    if "mixer" not in first.index:
        raise ValueError(f"no chosen seed-{p.seed} MinHash Mixer on {TASK}: run mixer_mtop_en first")
    rows, curve_rows, items = [], [], []
    for encoder in ("mixer", rival(runs, p.seed)):
        short = first.loc[encoder]
        point = tuple(float(short[k]) for k in TUNED)
        rows.append({"encoder": encoder, **{k: short[k] for k in _KEEP if k != "encoder"}})
        curve_rows += [{"encoder": encoder, "max_epochs": short_cap, **c} for c in
                       curves[(curves["task"] == TASK) & (curves["projection"] == "minhash")
                              & (curves["encoder"] == encoder)].drop(columns=["task", "projection", "encoder"])
                       .to_dict("records")]
        items += [{"encoder": encoder, "max_epochs": short_cap, "items": r["items"]} for r in records
                  if (r["task"], r["projection"], r["encoder"], r["seed"]) == (TASK, "minhash", encoder, p.seed)]
        summary = res.trained(TASK, "minhash", encoder, 0, point, comparison=True, max_epochs=cap)[1]
        row = run_row(TASK, "minhash", encoder, point, p.seed, summary, cap, True, p.headline("minhash", encoder))
        rows.append({k: row[k] for k in _KEEP})
        curve_rows += [{"encoder": encoder, "max_epochs": cap, **c} for c in summary["curve"]]
        items.append({"encoder": encoder, "max_epochs": cap, "items": summary["items"]})
    return {"longer_mtop": pd.DataFrame(rows), "longer_mtop_curves": pd.DataFrame(curve_rows),
            "longer_mtop_items": {"runs": items}}


def length_table(table: pd.DataFrame, labels: dict[str, str]) -> pd.DataFrame:
    """The diagnosis for the page: per encoder (named by ``labels``) and cap, validation exact match and intent
    accuracy, the best epoch (marked when it is the cap) and the parameters."""
    def best(row: pd.Series) -> str:
        return f"{int(row['best_epoch'])}" + (" (at cap)" if bool(row["capped"]) else "")

    out = pd.DataFrame({"encoder": table["encoder"].map(lambda e: labels.get(e, e)),
                        "cap (epochs)": table["max_epochs"].astype(int),
                        "best epoch": table.apply(best, axis=1), "epochs run": table["epochs"].astype(int),
                        "exact match": table["val_exact_match"].astype(float).round(1),
                        "intent acc.": table["val_intent_acc"].astype(float).round(1),
                        "parameters": table["parameters"].map(lambda n: f"{int(n):,}")})
    return out.reset_index(drop=True)


def gaps(items: dict[str, Any]) -> dict[int, Interval]:
    """At each cap, the Mixer minus its rival in validation exact match (points), with a paired bootstrap over the
    validation sentences (both runs scored on the same sentences)."""
    by = {(r["encoder"], int(r["max_epochs"])): np.array([c == "1" for c in r["items"]["exact_match"]],
                                                           dtype=float) for r in items["runs"]}
    caps = sorted({cap for _, cap in by})
    others = sorted({enc for enc, _ in by} - {"mixer"})
    if len(others) != 1:
        raise ValueError(f"the length diagnosis compares the Mixer with one rival, got {others or 'none'}")
    out = {}
    for cap in caps:
        if ("mixer", cap) not in by or (others[0], cap) not in by:
            raise ValueError(f"the length diagnosis lacks the Mixer's or {others[0]}'s run at cap {cap}")
        iv = paired_bootstrap(by[("mixer", cap)], by[(others[0], cap)], items="MTOP EN validation sentences")
        out[cap] = Interval(100 * iv.estimate, 100 * iv.low, 100 * iv.high, iv.method, iv.n, iv.level)
    return out


def length_sentence(table: pd.DataFrame, iv: dict[int, Interval], labels: dict[str, str]) -> str:
    """What the diagnosis shows, in words: each model's exact match at both caps, whether it was best at its cap,
    and the Mixer's gap to the rival at each cap with its interval (``iv``: :func:`gaps`)."""
    caps = sorted(int(c) for c in table["max_epochs"].unique())
    rival_name = next(e for e in table["encoder"] if e != "mixer")
    parts = []
    for encoder in ("mixer", rival_name):
        rows = table[table["encoder"] == encoder].set_index("max_epochs")
        scores = " and ".join(f"{float(rows.loc[c, 'val_exact_match']):.1f} at {c} epochs"
                              + (" (best at the cap)" if bool(rows.loc[c, "capped"]) else
                                 f" (best at epoch {int(rows.loc[c, 'best_epoch'])})") for c in caps)
        parts.append(f"{labels.get(encoder, encoder)}: {scores}")
    gap_text = "; ".join(f"{iv[c].estimate:+.1f} points [{iv[c].low:+.1f}, {iv[c].high:+.1f}] at {c} epochs"
                         for c in caps)
    return (f"Validation exact match on MTOP EN, first seed: {'; '.join(parts)}. The Mixer minus "
            f"{labels.get(rival_name, rival_name)}: {gap_text} (95% paired bootstrap over the validation sentences).")


def length_reading(table: pd.DataFrame, iv: dict[int, Interval], labels: dict[str, str]) -> str:
    """What the two lengths say about the tables' MTOP EN ranking: how much each model gained, whether the
    Mixer's gap to the rival (``iv``: :func:`gaps`) narrowed, widened or changed sign (judged on the intervals),
    and whether the longer runs were still best at their cap."""
    caps = sorted(int(c) for c in table["max_epochs"].unique())
    short, long = caps[0], caps[-1]
    rival_name = next(e for e in table["encoder"] if e != "mixer")
    score = table.set_index(["encoder", "max_epochs"])["val_exact_match"].astype(float)
    gains = {e: score[(e, long)] - score[(e, short)] for e in ("mixer", rival_name)}
    a, b = iv[short], iv[long]
    if a.estimate * b.estimate < 0:
        change = f"changes sign, from {a.estimate:+.1f} to {b.estimate:+.1f} points"
    else:
        change = (f"{'narrows' if abs(b.estimate) < abs(a.estimate) else 'widens'} from {a.estimate:+.1f} to "
                  f"{b.estimate:+.1f} points")
    decided = [c for c, v in ((short, a), (long, b)) if v.low > 0 or v.high < 0]
    sure = ("its interval excludes zero at " + " and ".join(f"{c} epochs" for c in decided) if decided
            else "its interval includes zero at both lengths")
    capped = table[(table["max_epochs"] == long) & table["capped"].astype(bool)]["encoder"].tolist()
    still = (f"At {long} epochs {' and '.join(labels.get(e, e) for e in capped)} "
             f"{'were' if len(capped) > 1 else 'was'} still best at the cap, so more training may move the "
             f"ranking again." if capped else f"At {long} epochs both runs stopped before the cap.")
    return (f"From {short} to {long} epochs the Mixer gains {gains['mixer']:+.1f} points and "
            f"{labels.get(rival_name, rival_name)} {gains[rival_name]:+.1f}; the Mixer's gap {change} ({sure}). "
            f"{still}")


def longer_quoted(shown: Any, labels: dict[str, str]) -> dict[str, str]:
    """The page's words on the diagnosis, or why there is none in the shown profile."""
    if not shown.has("longer_mtop"):
        why = (f"The {shown.profile.name} profile does not run this diagnosis (its longer_mtop_max_epochs is 0 or "
               f"not above the tables' MTOP EN cap).")
        return {"longer_result": why, "longer_reading": ""}
    table, iv = shown.table("longer_mtop"), gaps(shown.json("longer_mtop_items"))
    return {"longer_result": length_sentence(table, iv, labels), "longer_reading": length_reading(table, iv, labels)}
