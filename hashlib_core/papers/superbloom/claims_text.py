"""The Superbloom chapter's §4 effects (:mod:`~hashlib_core.papers.superbloom.claims`): Superbloom against unhashed
baselines of matched size on masked-token recall in text, read only where the models leave the floor of a model that
reads no context (:func:`lm_floor`), with a two-level paired bootstrap over the test windows and each model's seeds."""
from __future__ import annotations

from typing import Any

import pandas as pd

from hashlib_core.claims import Effect, Interval, NotTestable, bootstrap_means
from hashlib_core.papers.superbloom.claims_recall import _cap_note, _flags, _paired, check_similar_sizes, worst_gap

__all__ = ["lm_floor"]


def _language_pairs(ev: Any) -> list[tuple[str, str]]:
    """§4's (baseline, Superbloom) pairs, matched by size rank; each pair checked for similar sizes."""
    models = ev.table("language_models").groupby("name", sort=False).first().reset_index()
    base = models[models["alpha"] == 1].sort_values("total_params")["name"].tolist()
    sb = models[models["alpha"] > 1].sort_values("total_params")["name"].tolist()
    if not base or len(base) != len(sb):
        raise NotTestable("the language experiment has no equal number of baselines and Superbloom models")
    sizes = models.set_index("name")["total_params"]
    for b, s in zip(base, sb):
        check_similar_sizes(sizes, s, b)
    return list(zip(base, sb))


def _language_windows(ev: Any) -> pd.DataFrame:
    """Per test window hits of every text model and seed (``language_segments``)."""
    if not ev.has("language_segments"):
        raise NotTestable("the language experiment kept no per-window hits in this profile's results")
    return ev.table("language_segments")


def lm_floor(ev: Any) -> dict[str, str]:
    """``{model: why it is at its floor}`` for §4's text models that learned nothing a model reading no context
    does not: an unhashed baseline whose best validation loss (mean over its seeds) is not below the entropy of the
    training tokens' frequencies (the loss of a model that reads no context), and a hashed model whose recall on
    the test windows is below the training-frequency ranking's at every k (its loss, a sum over hashes, does not
    compare)."""
    from hashlib_core.papers.superbloom.language import TRAINING_FREQUENCY

    if not ev.has("language_prior"):
        return {}
    prior = ev.table("language_prior").set_index("name").loc[TRAINING_FREQUENCY]
    entropy = float(prior["entropy_nats"])
    table = ev.table("language_models")
    recall = ev.table("language").set_index("name") if ev.has("language") else None
    out = {}
    for name, rows in table.groupby("name", sort=False):
        if int(rows["alpha"].iloc[0]) == 1:
            loss = float(-rows["best_validation"].mean())
            if loss >= entropy:
                out[name] = f"{name}'s validation loss {loss:.2f} nats, not below the no-context {entropy:.2f}"
        elif recall is not None and name in recall.index:
            ks = sorted(int(c[4:]) for c in recall.columns if c.startswith("rec@"))
            if ks and all(recall.loc[name, f"rec@{k}"] < prior[f"rec@{k}"] for k in ks):
                out[name] = (f"{name}'s recall below the training-frequency ranking's at every k ("
                             + ", ".join(f"rec@{k} {recall.loc[name, f'rec@{k}']:.1f} vs {prior[f'rec@{k}']:.1f}"
                                         for k in ks) + ")")
    return out


def _lm_effect(ev: Any, iv: Interval, ours: str, *names: str) -> Effect:
    """A §4 effect, *no signal* when a baseline compared sits at the no-context floor."""
    floor = lm_floor(ev)
    alphas = ev.table("language_models").groupby("name")["alpha"].first()
    ordered = sorted(names, key=lambda n: int(alphas.get(n, 1)) != 1)          # the baselines first
    stuck = [floor[n] for n in ordered if n in floor]
    base_stuck = [n for n in names if n in floor and int(alphas.get(n, 1)) == 1]
    silent = ("the unhashed baseline compared learned no more than a model that reads no context: " + "; ".join(stuck)
              if base_stuck else "")
    m = ev.table("language_models")
    return Effect(iv, ours, unit="points", note=_cap_note(m, *names), flags=_flags(ev, m, *names)
                  + (("floor",) if stuck else ()), no_signal=silent)


def _language_better(ev: Any) -> Effect:
    """The smallest, over pairs and cut-offs, of Superbloom's recall minus its baseline's, with the two-level paired
    bootstrap of that minimum as one statistic over the test windows and seeds."""
    table = _language_windows(ev)
    ks = sorted(int(c[4:]) for c in table.columns if c.startswith("hit@"))
    pairs = [(s, b) for b, s in _language_pairs(ev)]
    iv, gaps = worst_gap(table, pairs, ks, items="test windows")
    worst = min(gaps, key=gaps.get)
    return _lm_effect(ev, iv, f"smallest of Superbloom minus baseline over pairs and k: {worst[0]} vs {worst[1]}, "
                              f"rec@{worst[2]} {gaps[worst]:+.1f} points", worst[0], worst[1])


def _language_smaller(ev: Any) -> Effect:
    """(Superbloom - baseline) of the smaller pair minus that of the larger pair, rec@1, two-level bootstrap over the
    windows and seeds."""
    table = _language_windows(ev)
    (b_small, s_small), *_, (b_large, s_large) = _language_pairs(ev)
    ss, bs, sl, bl = _paired(table, s_small, b_small, s_large, b_large)
    iv = bootstrap_means({s_small: ss, b_small: bs, s_large: sl, b_large: bl},
                         lambda m: (m[s_small] - m[b_small]) - (m[s_large] - m[b_large]), items="test windows")
    return _lm_effect(ev, iv, f"rec@1 gain of Superbloom: smaller pair {ss.mean() - bs.mean():+.1f}, larger pair "
                              f"{sl.mean() - bl.mean():+.1f} points", s_small, b_small, s_large, b_large)
