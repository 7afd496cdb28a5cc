"""The MultiHashFormer chapter's tables: ours beside the paper's, and every number the prose quotes.

Each function takes result tables and returns a DataFrame or a dict of strings; the notebook only displays them.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from hashlib_core.params import humanize
from hashlib_core.results import load_paper_table, paper_vs_ours

__all__ = ["table1_comparison", "fig3_comparison", "lm_view", "lm_ordering", "calibration_view", "single_vs_multi_view",
           "card660_comparison", "card660_ablation", "card660_examples_view", "expansion_comparison",
           "lsh_view", "decoding_cost", "quoted"]

_LM_COLUMNS = {"test_perplexity": "test perplexity", "test_accuracy_%": "test accuracy (%)",
               "emb_params": "emb. params", "dec_params": "dec. params", "test_tokens": "test tokens",
               "test_perplexity_calibrated": "calibrated perplexity", "temperature": "T"}


def table1_comparison(t1: pd.DataFrame) -> pd.DataFrame:
    """Table 1's #Param cells as printed beside our counts (formatted like the print), with the exact count."""
    printed = load_paper_table("multihashformer_table1")
    printed = printed[printed["scale"] != "-"]
    ours = t1.rename(columns={"size": "scale"})
    out = paper_vs_ours(printed, ours, on=["scale", "model"], columns={"#Param_Emb": "emb", "#Param_Dec": "dec"})
    source = out.attrs["source"]
    exact = ours.set_index(["scale", "model"])
    out["exact"] = [f"{int(exact.loc[(s, m), 'emb' if metric == '#Param_Emb' else 'dec']):,}"
                    for s, m, metric in zip(out["scale"], out["model"], out["metric"])]
    out.attrs["source"] = source
    return out


def fig3_comparison(f3: pd.DataFrame) -> pd.DataFrame:
    """Section 6's "10M to 102M" beside our counts of H3B4K and H4B32K at 100M (and, for reference, at 1B)."""
    fig3 = load_paper_table("multihashformer_fig3")
    ends = f3.set_index(["size", "variant"])["emb_params"]
    ours = pd.DataFrame({"quantity": ["embedding parameter count, smallest variant",
                                      "embedding parameter count, largest variant"],
                         "ours_100M": [ends[("100M", "H3B4K")], ends[("100M", "H4B32K")]],
                         "ours_1B": [ends[("1B", "H3B4K")], ends[("1B", "H4B32K")]]})
    out = paper_vs_ours(fig3[fig3["quantity"].isin(ours["quantity"])], ours, on="quantity",
                        columns={"value": "ours_100M"})
    out["ours at 1B"] = ours.set_index("quantity").loc[out["quantity"], "ours_1B"].map(lambda v: humanize(v, 1)).values
    return out


def lm_view(lm: pd.DataFrame) -> pd.DataFrame:
    """The language-model table as shown: trained models, then the uniform and unigram baselines."""
    cols = ["model", "built_as", "H", "B", "emb_params", "dec_params", "test_perplexity", "temperature",
            "test_perplexity_calibrated", "test_accuracy_%"]
    view = lm[[c for c in cols if c in lm.columns]].copy()
    for c in ("emb_params", "dec_params"):
        view[c] = view[c].map(lambda v: "-" if pd.isna(v) else humanize(v))
    for c in ("H", "B"):
        view[c] = view[c].astype("Int64")
    return view.rename(columns={**_LM_COLUMNS, "built_as": "built as"})


def _paper_label(model: str) -> str:
    return "Standard+kL" if model.startswith("Standard+") else model


def lm_ordering(lm: pd.DataFrame) -> pd.DataFrame:
    """The Table 1 families ranked by the paper (100M, LAMBADA accuracy) and by us (accuracy, perplexity)."""
    paper = load_paper_table("multihashformer_table1")
    paper = paper[paper["scale"] == "100M"][["model", "LAMBADA"]].copy()
    paper["model"] = [_paper_label(m.replace("MHF (", "").rstrip(")")) for m in paper["model"]]
    trained = lm[lm["built_as"] != "baseline"][["model", "test_accuracy_%", "test_perplexity"]].copy()
    trained["model"] = trained["model"].map(_paper_label)
    order = paper.merge(trained, on="model", how="inner")
    order["paper rank (LAMBADA)"] = order["LAMBADA"].astype(float).rank(ascending=False).astype(int)
    order["our rank (accuracy)"] = order["test_accuracy_%"].rank(ascending=False, method="min").astype(int)
    order["our rank (perplexity)"] = order["test_perplexity"].rank(method="min").astype(int)
    return order.rename(columns=_LM_COLUMNS)


def calibration_view(cal: pd.DataFrame, lm: pd.DataFrame) -> pd.DataFrame:
    """The P_inf diagnosis: each MHF model beside the "oracle" P_inf built from Standard's own distribution
    through its signatures, with the unigram baseline for scale."""
    view = cal.rename(columns={**_LM_COLUMNS, "source": "scores from"}).copy()
    unigram = lm.set_index("model").loc["unigram"]
    extra = pd.DataFrame([{"model": "unigram", "scores from": "training-token frequencies",
                           "test perplexity": unigram["test_perplexity"],
                           "test accuracy (%)": unigram["test_accuracy_%"]}])
    return pd.concat([view, extra], ignore_index=True)


def single_vs_multi_view(svm: pd.DataFrame) -> pd.DataFrame:
    """Table 3: our H1/H4 rows with collisions and scores, beside the paper's LAMBADA accuracy (1B)."""
    t3 = load_paper_table("multihashformer_table3").set_index("MHF")
    view = svm[["bucket_label", "model", "B", "emb_params", "distinct_signatures", "colliding_tokens",
                "test_perplexity", "test_perplexity_calibrated", "test_accuracy_%"]].copy()
    view["paper LAMBADA (1B)"] = [t3.loc[f"H{h}", b] if b in t3.columns else "-"
                                  for h, b in zip(svm["H"], svm["bucket_label"])]
    return view.rename(columns={**_LM_COLUMNS, "bucket_label": "paper B", "distinct_signatures": "distinct signatures",
                                "colliding_tokens": "colliding tokens"})


def card660_comparison(card: pd.DataFrame) -> pd.DataFrame:
    """Table 2 (last token, last and second-to-last layer): the paper's correlations beside ours. The paper's
    Standard+2L row is compared with the profile's Standard+kL."""
    names = {"H3B10K": "MHF (H3B10K)", "H4B16K": "MHF (H4B16K)"}
    card = card.assign(paper_model=[("Standard+2L" if m.startswith("Standard+") else names.get(m, m))
                                    for m in card["model"]])
    lt = card[card["pooling"] == "last_token"].pivot(index="paper_model", columns="layer",
                                                     values=["pearson_r", "spearman_rho"])
    ours = pd.DataFrame({"model": lt.index, "last_p": lt[("pearson_r", "last")].values,
                         "last_s": lt[("spearman_rho", "last")].values,
                         "stl_p": lt[("pearson_r", "second_to_last")].values,
                         "stl_s": lt[("spearman_rho", "second_to_last")].values})
    return paper_vs_ours(load_paper_table("multihashformer_table2"), ours, on="model",
                         columns={"Last_Pearson_r": "last_p", "Last_Spearman_rho": "last_s",
                                  "SecondToLast_Pearson_r": "stl_p", "SecondToLast_Spearman_rho": "stl_s"})


def card660_ablation(card: pd.DataFrame) -> pd.DataFrame:
    """Spearman rho of every model by layer and pooling (last token vs mean of the word's tokens)."""
    wide = card.pivot_table(index="model", columns=["layer", "pooling"], values="spearman_rho", sort=False)
    wide.columns = [f"{layer.replace('_', ' ')}, {pooling.replace('_', ' ')}" for layer, pooling in wide.columns]
    return wide.reset_index()


def card660_examples_view(ex: pd.DataFrame) -> pd.DataFrame:
    """Appendix B's example pairs: the human score, the paper's similarities and ours (Standard, H4B16K)."""
    printed = pd.concat([load_paper_table("multihashformer_table5"), load_paper_table("multihashformer_table6")],
                        ignore_index=True).drop_duplicates(subset=["word_1", "word_2"])
    printed = printed[["word_1", "word_2", "Std.", "H4B16K"]].rename(
        columns={"Std.": "paper Standard", "H4B16K": "paper H4B16K"})
    view = ex.merge(printed, on=["word_1", "word_2"], how="left")
    ours = [c for c in ex.columns if c in ("ours Standard", "ours H4B16K")]
    return view[["category", "word_1", "word_2", "Human", "paper Standard", *ours[:1], "paper H4B16K", *ours[1:]]]


def expansion_comparison(paper_scale: pd.DataFrame) -> pd.DataFrame:
    """Section 5.3 at the paper's scale: the extra parameters Standard needs (counted from the 1B models) and, as
    arithmetic on Table 8's vocabulary size, the new tokens and the growth the text quotes."""
    fig2 = load_paper_table("multihashformer_fig2")
    std = paper_scale.set_index("model").loc["Standard"]
    ours = pd.DataFrame({"quantity": ["extra parameters Standard needs for the new tokens",
                                      "new tokens in the expanded vocabulary",
                                      "relative vocabulary growth supported without new parameters"],
                         "value": [std["new_params"] / 1e6, std["new_tokens"], std["growth_%"]],
                         "how": ["counted: 1B Standard after minus before", "Table 8's vocabulary size - 32,768",
                                 "(Table 8's vocabulary size - 32,768) / 32,768"]})
    out = paper_vs_ours(fig2[fig2["quantity"].isin(ours["quantity"])], ours, on="quantity", columns={"value": "value"})
    out["how we get ours"] = ours.set_index("quantity").loc[out["quantity"], "how"].values
    return out


def lsh_view(lsh: pd.DataFrame) -> pd.DataFrame:
    """Table 4: our LSH:MMH3 splits beside the paper's LAMBADA accuracy (1B)."""
    t4 = load_paper_table("multihashformer_table4")
    paper = {c: t4.loc[0, c] for c in t4.columns if ":" in c}
    view = lsh[["mix", "model", "B", "emb_params", "buckets_used_min", "test_perplexity", "test_perplexity_calibrated",
                "test_accuracy_%"]].copy()
    view["paper LAMBADA (1B)"] = view["mix"].map(paper).fillna("-")
    return view.rename(columns={**_LM_COLUMNS, "mix": "LSH:MMH3", "buckets_used_min": "fewest buckets used"})


def decoding_cost(bench: dict) -> pd.DataFrame:
    """The committed decoding benchmark: each method's time over the tied LM head's, per width."""
    timings = pd.DataFrame(bench["results"])
    head = timings[timings["method"] == "lm_head"].set_index("hidden_size")["seconds"]
    timings["vs_lm_head"] = timings["seconds"] / timings["hidden_size"].map(head)
    cost = timings.pivot_table(index="method", columns="hidden_size", values="vs_lm_head", sort=False)
    cost.columns = [f"d = {c}: time / LM head" for c in cost.columns]
    return cost.reset_index()


def quoted(shown, bench: dict | None = None) -> dict[str, str]:
    """Every number the chapter's prose quotes, computed from the shown results."""
    p = shown.profile
    out: dict[str, str] = {}
    t1 = shown.table("table1_params")
    cmp_t1 = table1_comparison(t1)
    row = t1.set_index(["size", "model"])
    readings = shown.table("table1_readings").set_index(["reading", "size", "model"])["params"]
    count = lambda size, model, col="emb", d=2: humanize(row.loc[(size, model), col], d)
    out.update(
        t1_agree=f"{int(cmp_t1['agrees'].sum())} of {len(cmp_t1)}",
        t1_100m_h3=count("100M", "MHF (H3B10K)"),
        t1_100m_h3_tables=humanize(readings[("hash tables alone", "100M", "MHF (H3B10K)")], 2),
        t1_100m_h3_nomix=humanize(readings[("tables + gate + adapter (no cascade mixers)", "100M", "MHF (H3B10K)")], 2),
        t1_100m_h4=count("100M", "MHF (H4B16K)"), t1_1b_std=count("1B", "Standard"),
        t1_1b_h3=count("1B", "MHF (H3B10K)"), t1_1b_h4=count("1B", "MHF (H4B16K)"),
        t1_1b_h4_nomix=humanize(readings[("tables + gate + adapter (no cascade mixers)", "1B", "MHF (H4B16K)")], 2),
        t1_1b_dec=count("1B", "Standard", "dec", 3), t1_1b2l_dec=count("1B", "Standard+2L", "dec", 3),
    )
    b9 = [r for r in readings.index if r[0].startswith("hash tables alone with Table 9")][0]
    out["t1_1b_h3_b9"] = humanize(readings[b9], 2)
    out["t1_1b_dec_2kv"] = humanize(readings[("decoder with 2 key-value heads", "1B", "Standard")], 3)
    out["t1_1b2l_dec_2kv"] = humanize(readings[("decoder with 2 key-value heads", "1B", "Standard+2L")], 3)
    f3 = shown.table("fig3_params").set_index(["size", "variant"])["emb_params"]
    out.update(f3_1b_small=humanize(f3[("1B", "H3B4K")], 1), f3_1b_large=humanize(f3[("1B", "H4B32K")], 1))

    lm = shown.table("lm_quality")
    trained = lm[lm["built_as"] != "baseline"]
    by = lm.set_index("model")
    uniform, unigram = by.loc["uniform", "test_perplexity"], by.loc["unigram", "test_perplexity"]
    beat = trained[trained["test_perplexity"] < unigram]["model"].tolist()
    ppl = lambda name: f"{by.loc[name, 'test_perplexity']:.1f}" if name in by.index else "-"  # noqa: E731
    order = lm_ordering(lm)
    best = trained.loc[trained["test_perplexity"].idxmin()]
    out.update(
        lm_steps=f"{p.max_steps:,}", lm_vocab=f"{p.vocab_size:,}", lm_uniform=f"{uniform:,.0f}",
        lm_unigram=f"{unigram:.1f}", lm_best_ppl_model=best["model"], lm_best_ppl=f"{best['test_perplexity']:.1f}",
        lm_std_ppl=ppl("Standard"), lm_h4_ppl=ppl("H4B16K"), lm_h3_ppl=ppl("H3B10K"),
        lm_beat_unigram=("every trained model" if len(beat) == len(trained) else
                         f"{len(beat)} of {len(trained)} trained models ({', '.join(beat) or 'none'})"),
        lm_same_order="the same" if (order["paper rank (LAMBADA)"] == order["our rank (accuracy)"]).all()
        else "a different",
        lm_tokens=f"{int(trained['test_tokens'].iloc[0]):,}",
    )
    beat_cal = trained[trained["test_perplexity_calibrated"] < unigram]["model"].tolist()
    out["lm_beat_unigram_calibrated"] = ("every trained model" if len(beat_cal) == len(trained) else
                                         f"{len(beat_cal)} of {len(trained)} trained models "
                                         f"({', '.join(beat_cal) or 'none'})")
    out["lm_h4_ppl_cal"] = (f"{by.loc['H4B16K', 'test_perplexity_calibrated']:.1f}" if "H4B16K" in by.index else "-")
    out["lm_h4_t"] = f"{by.loc['H4B16K', 'temperature']:.2f}" if "H4B16K" in by.index else "-"
    out["lm_std_t"] = f"{by.loc['Standard', 'temperature']:.2f}"
    out["lm_h4_acc"] = f"{by.loc['H4B16K', 'test_accuracy_%']:.1f}" if "H4B16K" in by.index else "-"
    out["lm_std_acc"] = f"{by.loc['Standard', 'test_accuracy_%']:.1f}"
    cal = shown.table("pinf_calibration")
    oracle = cal[cal["source"] != "trained model"].set_index("model")
    std_row = cal[(cal["model"] == "Standard")].iloc[0]
    out.update(cal_oracle=", ".join(f"{m} {r['test_perplexity']:,.1f}" for m, r in oracle.iterrows()),
               cal_oracle_acc=", ".join(f"{m} {r['test_accuracy_%']:.1f}%" for m, r in oracle.iterrows()),
               cal_std_acc=f"{std_row['test_accuracy_%']:.1f}%", cal_std_ppl=f"{std_row['test_perplexity']:.1f}")
    svm = shown.table("single_vs_multi")
    h1, h4 = svm[svm["H"] == 1].set_index("bucket_label"), svm[svm["H"] == 4].set_index("bucket_label")
    out.update(svm_h4_wins=f"{int((h4['test_accuracy_%'] > h1['test_accuracy_%']).sum())} of {len(h1)}",
               svm_collide_max=f"{int(h1['colliding_tokens'].max()):,}",
               svm_vocab=f"{int(h1['distinct_signatures'].iloc[0] + h1['colliding_tokens'].iloc[0]):,}")
    card = shown.table("card660")
    out.update(card_best=card.loc[card["spearman_rho"].idxmax(), "model"],
               card_best_rho=f"{card['spearman_rho'].max():.2f}", card_k=str(p.added_layers))
    ex = shown.table("card660_examples")
    ours_cols = [c for c in ex.columns if c.startswith("ours ")]
    out.update(ex_median=f"{np.median(ex[ours_cols].values):.2f}", ex_n=str(len(ex)),
               ex_rho="; ".join(f"{c[5:]} {ex[c].corr(ex['Human'].astype(float), method='spearman'):.2f}"
                                for c in ours_cols))
    rk = shown.table("rank").set_index("model")
    out.update(rank_rtol=f"{p.rank_rtol:g}", rank_std=str(int(rk.loc["Standard", "numerical_rank"])),
               rank_d=str(int(rk.loc["Standard", "d"])), rank_h4=str(int(rk.loc["H4B16K", "numerical_rank"])),
               rank_h4_vs="above" if rk.loc["H4B16K", "numerical_rank"] > rk.loc["Standard", "d"] + 1 else "not above",
               rank_h4_bound=str(int(rk.loc["H4B16K", "paper_bound"])), rank_n=str(int(rk.loc["Standard", "contexts"])))
    ps = shown.table("expansion_paper_scale").set_index("model")
    ep = shown.table("expansion_params").set_index("model")
    exp = shown.table("expansion").set_index(["model", "language"])
    wins = [lang for lang in ("ar", "zh", "hi")
            if exp.loc[("H4B16K", lang), "bpb_after"] < exp.loc[("Standard", lang), "bpb_after"]]
    wins_cal = [lang for lang in ("ar", "zh", "hi") if exp.loc[("H4B16K", lang), "bpb_after_calibrated"]
                < exp.loc[("Standard", lang), "bpb_after_calibrated"]]
    out.update(exp_mhf_new_params_paper=f"{int(ps.loc['MHF (H4B16K)', 'new_params']):,}",
               exp_new_tokens_paper=f"{int(ps.loc['Standard', 'new_tokens']):,}",
               exp_vocab_after_paper=f"{int(ps.loc['Standard', 'vocab_after']):,}",
               exp_new_tokens=f"{int(ep['new_tokens'].iloc[0]):,}",
               exp_std_new_params=f"{int(ep.loc['Standard', 'new_params']):,}",
               exp_mhf_new_params=f"{int(ep.loc['H4B16K', 'new_params']):,}",
               exp_h4_en_after=f"{exp.loc[('H4B16K', 'en'), 'bpb_after']:.2f}",
               exp_std_en_after=f"{exp.loc[('Standard', 'en'), 'bpb_after']:.2f}",
               exp_h4_wins=", ".join(wins) if wins else "none of them",
               exp_h4_wins_cal=", ".join(wins_cal) if wins_cal else "none of them",
               exp_h4_en_after_cal=f"{exp.loc[('H4B16K', 'en'), 'bpb_after_calibrated']:.2f}",
               exp_std_en_after_cal=f"{exp.loc[('Standard', 'en'), 'bpb_after_calibrated']:.2f}",
               exp_cpt_steps=f"{int(ep['cpt_steps'].iloc[0]):,}",
               exp_cpt_flat="; ".join(f"{m} {r['cpt_loss_last_tenth']:.3f} against {r['cpt_loss_previous_tenth']:.3f}"
                                      for m, r in ep.iterrows()))
    lsh = shown.table("lsh_mix")
    out.update(lsh_best_mix=lsh.loc[lsh["test_perplexity"].idxmin(), "mix"], lsh_mixes=", ".join(lsh["mix"]),
               lsh_buckets="; ".join(f"{m}: {int(b):,}" for m, b in zip(lsh["mix"], lsh["buckets_used_min"])))
    if bench is not None:
        cost = pd.DataFrame(bench["data"]["results"])
        head = cost[cost["method"] == "lm_head"].set_index("hidden_size")["seconds"]
        ratio = (cost.set_index(["method", "hidden_size"])["seconds"]
                 / cost.set_index(["method", "hidden_size"]).index.get_level_values(1).map(head).values)
        meta = bench["meta"]
        out.update(bench_device=f"{meta['device']} ({meta.get('cpu_count')} cores, torch {meta['packages']['torch']})",
                   bench_h3=f"{ratio[('mhf_scoring_only[H3B10K]', 256)]:.2f}",
                   bench_h4=f"{ratio[('mhf_scoring_only[H4B16K]', 256)]:.2f}",
                   bench_full_h4=f"{ratio[('mhf_streamed[H4B16K]', 256)]:.1f}")
    return out
