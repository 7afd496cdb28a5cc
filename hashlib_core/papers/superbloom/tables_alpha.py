"""The Superbloom chapter's table and quoted numbers for the diagnosis of the hash's coarseness (``alpha``)."""
from __future__ import annotations

import pandas as pd

from hashlib_core.papers.superbloom.tables_datasets import top_cutoff
from hashlib_core.papers.superbloom.training import POPULARITY

__all__ = ["alpha_view", "alpha_quoted"]


def alpha_view(alpha: pd.DataFrame, models: pd.DataFrame) -> pd.DataFrame:
    """Per model: ids per hash token, tokens per map, parameters, learning rate, where its best validation loss came
    (of the steps run), the share of a uniform guess's loss it removed, and recall@k (%); the popularity ranking's
    row last."""
    info = models.set_index("name")
    recalls = [c for c in alpha.columns if c.startswith("rec@")]
    rows = []
    for _, r in alpha.iterrows():
        row = {"model": r["name"]}
        if r["name"] in info.index:
            m = info.loc[r["name"]]
            row.update({"alpha": str(int(m["alpha"])), "tokens per map": f"{int(m['tokens_per_map']):,}",
                        "parameters": f"{int(m['total_params']):,}", "lr": f"{m['learning_rate']:g}",
                        "best step": f"{int(m['best_step']):,} of {int(m['steps']):,}"
                                     + ("" if m["converged"] else " (cap)"),
                        "loss below uniform (%)": 100.0 * m["below_uniform"]})
        rows.append({**row, **{k: r[k] for k in recalls}})
    out = pd.DataFrame(rows)
    text = ["alpha", "tokens per map", "parameters", "lr", "best step"]
    return out.fillna({c: "" for c in text if c in out})


def alpha_quoted(alpha: pd.DataFrame, models: pd.DataFrame) -> dict[str, str]:
    """The numbers the coarseness paragraph quotes: the dataset, its ids, the steps, each Superbloom model's share of
    the uniform loss removed and rec@100 beside the baseline's and the popularity ranking's."""
    top = top_cutoff(alpha)
    rec = alpha.set_index("name")[top]
    sb = models[models["alpha"] > 1].sort_values("alpha", ascending=False)
    base = models[models["alpha"] == 1].iloc[0]
    removed = sb["below_uniform"].to_numpy()                       # alpha decreasing
    rising = bool((removed[1:] > removed[:-1]).all())
    trend = ("each smaller alpha removes more of the uniform loss: the coarser the digest, the less the same model "
             "learns in the same steps" if rising else
             "the share removed does not grow steadily as alpha falls: coarseness alone does not explain it")
    return {"a_dataset": str(alpha["dataset"].iloc[0]), "a_ids": f"{int(base['num_ids']):,}",
            "a_alphas": ", ".join(str(int(a)) for a in sb["alpha"]), "a_top": top,
            "a_removed": "; ".join(f"α = {int(r['alpha'])}: {100 * r['below_uniform']:.1f}%"
                                   for _, r in sb.iterrows()),
            "a_base_removed": f"{100 * base['below_uniform']:.1f}%",
            "a_sb_rec": "; ".join(f"α = {int(r['alpha'])}: {rec[r['name']]:.1f}%" for _, r in sb.iterrows()),
            "a_base_rec": f"{rec[base['name']]:.1f}%", "a_pop_rec": f"{rec[POPULARITY]:.1f}%",
            "a_first_removed": f"{100 * removed[0]:.1f}%", "a_trend": trend, "a_steps": ", ".join(sorted({f"{int(s):,}" for s in models["max_steps"]}))}
