"""The Superbloom chapter's tables: ours beside the paper's, and every number the prose quotes."""
from __future__ import annotations

import pandas as pd

from hashlib_core.papers.superbloom.tables_datasets import (  # noqa: F401  (the page reads them from here)
    datasets_quoted,
    datasets_table,
    datasets_view,
    shapes_quoted,
    shapes_view,
    step_caps,
    uniform_loss,
    yardsticks_quoted,
)
from hashlib_core.papers.superbloom.tables_alpha import alpha_quoted, alpha_view  # noqa: F401
from hashlib_core.papers.superbloom.tables_ceiling import ceiling_display, ceiling_quoted, ceiling_table  # noqa: F401
from hashlib_core.papers.superbloom.tables_train_time import train_time_quoted, train_time_view  # noqa: F401
from hashlib_core.papers.superbloom.tables_longer import longer_quoted, longer_view  # noqa: F401
from hashlib_core.papers.superbloom.crowding import crowding_quoted, crowding_view, every_k_quoted  # noqa: F401
from hashlib_core.papers.superbloom.tables_decoding import (  # noqa: F401  (the page reads them from here)
    BENCH_GOAL,
    bench_view,
    decoding_quoted,
    decoding_view,
    speed_quoted,
)
from hashlib_core.papers.superbloom.tables_examples import (  # noqa: F401
    EXAMPLE_COLUMNS,
    example_row,
    example_subset,
    examples_quoted,
    examples_view,
)
from hashlib_core.papers.superbloom.tables_language import (  # noqa: F401
    _mean_sd,
    language_quoted,
    language_view,
    prior_quoted,
    prior_view,
    training_entropy,
)
from hashlib_core.params import humanize
from hashlib_core.results import load_paper_table, parse_printed

__all__ = ["joined", "decile_segments", "recall_table", "decile_table", "paper_table3", "params_view", "params_quoted", "recall_view",
           "depth_rows", "depth_view", "sweep_view", "chosen_curves", "training_entropy", "depth_effect",
           "example_subset", "beam_view", "language_view", "prior_view", "prior_quoted", "bench_view",
           "EXAMPLE_COLUMNS", "example_row", "examples_view", "examples_quoted", "decoding_view", "decoding_quoted",
           "train_time_view", "train_time_quoted", "longer_view", "longer_quoted",
           "crowding_view", "crowding_quoted", "every_k_quoted", "datasets_view", "datasets_quoted", "datasets_table",
           "uniform_loss", "yardsticks_quoted", "ceiling_table", "ceiling_display", "ceiling_quoted", "shapes_view",
           "shapes_quoted", "step_caps",
           "quoted"]


def recall_table(segments: pd.DataFrame, ks, models: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per model: recall@k (%) over the test segments, averaged over its seeds, with the standard deviation across
    seeds (``sd rec@k``; NaN for one seed), the share of certified answers, mean candidates scored, test segments and
    seeds. With ``models`` (one row per model and seed): its size, width, depth, learning rate, the size of the model
    it is matched to, and whether every seed's best validation score came before its cap (``converged``)."""
    segments = segments if "seed" in segments else segments.assign(seed=0)
    agg = {f"rec@{k}": (f"hit@{k}", "mean") for k in ks}
    per_seed = segments.groupby(["name", "seed"], sort=False).agg(
        **agg, certified=("certified", "mean"), mean_scored=("scored", "mean"), segments=("target", "size"))
    for column in [f"rec@{k}" for k in ks] + ["certified"]:
        per_seed[column] *= 100.0
    grouped = per_seed.groupby(level="name", sort=False)
    table = grouped.mean()
    for k in ks:
        table[f"sd rec@{k}"] = grouped[f"rec@{k}"].std(ddof=1)
    table["segments"] = grouped["segments"].first()
    table["seeds"] = grouped.size()
    table = table.reset_index()
    if models is not None:
        info = models.groupby("name", sort=False).agg(
            total_params=("total_params", "first"), emb_params=("emb_params", "first"), hidden=("hidden", "first"),
            layers=("layers", "first"), learning_rate=("learning_rate", "first"),
            converged=("converged", "all")).reset_index()
        if "matched_params" in models:
            first = models.groupby("name", sort=False)[["matched_to", "matched_params"]].first()
            info["matched_to"] = info["name"].map(first["matched_to"]).fillna("")
            info["size_vs_matched"] = info["total_params"] / info["name"].map(first["matched_params"]) - 1
        table = table.merge(info, on="name", how="left")
    return table


def decile_table(segments: pd.DataFrame, k: int = 1) -> pd.DataFrame:
    """Fig. 3: mean rec@k per decile of the target's label frequency (decile 1: the rarest targets)."""
    out = segments.copy()
    out["decile"] = pd.qcut(out["label_frequency"].rank(method="first"), 10, labels=range(1, 11)).astype(int)
    table = (out.groupby(["name", "decile"], sort=False)[f"hit@{k}"].mean().mul(100.0)
             .rename(f"rec@{k}").reset_index())
    return table.sort_values("decile", kind="stable").reset_index(drop=True)   # deciles in order, models as given


def paper_table3() -> dict[str, float]:
    """Table 3's four rec@1 values (%), from the prose: baseline-l1, baseline-l12, superbloom-d256l1, -d256l12."""
    t = load_paper_table("superbloom_table3").set_index("model")["rec@1"]
    return {name: parse_printed(value).value for name, value in t.items()}


def params_view(params: pd.DataFrame) -> pd.DataFrame:
    """Our counts at the paper's vocabularies, with Table 1's printed #samples where it has one."""
    printed = load_paper_table("superbloom_table1").set_index("model")["#samples"]
    out = params.copy()
    out["#samples (paper)"] = out["model"].map(printed).fillna("-")
    return out[["table", "reading", "model", "ids", "alpha", "m", "d", "layers", "#samples", "#samples (paper)",
                "emb_params", "total_params", "assumed"]].rename(columns={"emb_params": "embedding params",
                                                                          "total_params": "parameters"})


def params_quoted(params: pd.DataFrame) -> dict[str, str]:
    """The numbers the parameter paragraph quotes: Table 1's sizes under both readings (same width; similar size,
    :mod:`~hashlib_core.papers.superbloom.params`)."""
    from hashlib_core.papers.superbloom.params import READINGS

    t1 = params[params["table"] == "Table 1"].set_index(["reading", "model"])
    same, similar = READINGS
    size = t1["total_params"]
    return {"p_base_d": str(int(t1.loc[(same, "baseline"), "d"])),
            "p_same_base": humanize(size[(same, "baseline")], 2), "p_same_sb": humanize(size[(same, "superbloom")], 1),
            "p_same_ratio": f"{size[(same, 'baseline')] / size[(same, 'superbloom')]:.0f}",
            "p_matched_d": f"{int(t1.loc[(similar, 'superbloom'), 'd']):,}",
            "p_matched_sb": humanize(size[(similar, "superbloom")], 2),
            "p_matched_diff": f"{100 * (size[(similar, 'superbloom')] / size[(similar, 'baseline')] - 1):+.1f}%",
            "p_ss": humanize(size[(similar, "sampled-softmax")], 1),
            "p_ss_ratio": f"{size[(similar, 'sampled-softmax')] / size[(similar, 'superbloom')]:.0f}"}


def joined(shown, *names: str) -> pd.DataFrame:
    """The shown results ``names`` (tables of the same columns, e.g. the recall and Table 1 sweeps) as one table."""
    return pd.concat([shown.table(n) for n in names], ignore_index=True)


#: the models Fig. 3's frequency deciles compare (by role), as many as the profile has
DECILE_ROLES = ("superbloom_deep", "baseline_deep", "superbloom_matched", "baseline_wide", "sampled")


def decile_segments(shown) -> pd.DataFrame:
    """The per-segment hits (Table 3's and Table 1's) of the models Fig. 3's deciles compare."""
    roles = shown.profile.roles()
    segments = joined(shown, "recall_segments", "matched_segments")
    return segments[segments["name"].isin([roles[r] for r in DECILE_ROLES if r in roles])]


def recall_view(recall: pd.DataFrame) -> pd.DataFrame:
    """A :func:`recall_table` (with its models' information) as the page shows it: each model's depth, width and
    size, how far that size is from the model it is matched to, its chosen learning rate and seeds, recall@k (%, mean
    ± standard deviation across seeds), whether every seed's best validation score came before the step cap, and the
    decoder's certified share and candidates scored."""
    ks = [c for c in recall.columns if c.startswith("rec@")]
    out = pd.DataFrame({"model": recall["name"], "layers": recall["layers"], "d": recall["hidden"],
                        "parameters": recall["total_params"]})
    if "size_vs_matched" in recall:
        out["size vs its match"] = [
            "" if not isinstance(m, str) or not m else f"{100 * r:+.1f}% vs {m}"
            for m, r in zip(recall["matched_to"], recall["size_vs_matched"])]
    out["learning rate"] = [f"{lr:g}" for lr in recall["learning_rate"]]
    out["seeds"] = recall["seeds"]
    for k in ks:
        out[k] = [_mean_sd(m, sd) for m, sd in zip(recall[k], recall[f"sd {k}"])]
    out["best before the cap"] = ["yes" if c else "no (at the cap)" for c in recall["converged"]]
    out["certified (%)"] = recall["certified"]
    out["candidates scored"] = recall["mean_scored"]
    return out


_FAMILY_ROWS = r"^(superbloom|baseline)-L\d+$"


def depth_rows(recall: pd.DataFrame) -> pd.DataFrame:
    """Table 3's rows: per depth, Superbloom and the unhashed baseline of its size (rec@k mean and spread, sizes)."""
    rows = recall[recall["name"].str.match(_FAMILY_ROWS)].copy()
    rows["family"] = rows["name"].str.split("-").str[0]
    return rows.sort_values(["layers", "family"], ascending=[True, False], kind="stable")


def depth_view(recall: pd.DataFrame, k: int = 1) -> pd.DataFrame:
    """Per depth: Superbloom's and its size-matched baseline's rec@k (mean ± spread across seeds), both sizes and
    Superbloom minus the baseline."""
    rows = depth_rows(recall).set_index(["layers", "family"])
    out = []
    for layers in sorted({i for i, _ in rows.index}):
        sb, base = rows.loc[(layers, "superbloom")], rows.loc[(layers, "baseline")]
        out.append({"layers": layers, "seeds": int(min(sb["seeds"], base["seeds"])),
                    "Superbloom d": int(sb["hidden"]), "Superbloom params": sb["total_params"],
                    f"Superbloom rec@{k}": _mean_sd(sb[f"rec@{k}"], sb[f"sd rec@{k}"]),
                    "baseline d": int(base["hidden"]), "baseline params": base["total_params"],
                    f"baseline rec@{k}": _mean_sd(base[f"rec@{k}"], base[f"sd rec@{k}"]),
                    "Superbloom - baseline": sb[f"rec@{k}"] - base[f"rec@{k}"]})
    return pd.DataFrame(out)


def chosen_curves(curves: pd.DataFrame, models: pd.DataFrame, seed: int) -> pd.DataFrame:
    """The validation-loss curve of each model at its chosen learning rate (the rate of its rows in ``models``) and
    seed ``seed``: what early stopping watched."""
    chosen = set(zip(models["name"], models["learning_rate"]))
    keep = [(n, lr) in chosen for n, lr in zip(curves["name"], curves["learning_rate"])]
    out = curves[keep]
    return out[(out["seed"] == seed) & (out["kind"] == "validation loss")]


def sweep_view(sweep: pd.DataFrame) -> pd.DataFrame:
    """The learning-rate sweep (seed ``seed``): per model and rate, the lowest validation loss (the score is its
    negative), the step it came at out of the steps run ("cap" when that is the last allowed); the chosen rate
    marked."""
    out = pd.DataFrame({"model": sweep["name"], "learning rate": [f"{lr:g}" for lr in sweep["learning_rate"]],
                        "validation loss (nats)": -sweep["best_validation"],
                        "best step": [f"{int(b):,} of {int(s):,}" + ("" if c else " (cap)")
                                      for b, s, c in zip(sweep["best_step"], sweep["steps"], sweep["converged"])],
                        "chosen": ["yes" if c else "" for c in sweep["chosen"]]})
    return out


def depth_effect(recall: pd.DataFrame, deep: int | None = None) -> pd.DataFrame:
    """Table 3 analog: rec@1 of the baseline and Superbloom at the shallowest depth and at ``deep`` layers (the
    profile's deepest of ``depths``, which the claims read; None: the deepest row), then at the deepest row when that
    is deeper still (a further depth), and the gain from depth, beside the paper's (1 -> 12 layers)."""
    paper = paper_table3()
    rows = depth_rows(recall)
    out = []
    for family, (shallow_paper, deep_paper) in (("baseline", ("baseline-l1", "baseline-l12")),
                                                ("superbloom", ("superbloom-d256l1", "superbloom-d256l12"))):
        own = rows[rows["family"] == family].sort_values("layers")
        if len(own) < 2:
            continue
        shallow, deeper = own.iloc[0], own.iloc[1:]
        read = deeper[deeper["layers"] <= deep] if deep is not None else deeper
        targets = ([read.iloc[-1]] if len(read) else []) + [deeper.iloc[-1]]
        for row in targets[: 1 if targets[0]["layers"] == targets[-1]["layers"] else 2]:
            out.append({"model": family, "ours: layers": f"{int(shallow['layers'])} -> {int(row['layers'])}",
                        "ours: seeds (deep)": int(row["seeds"]),
                        "ours: rec@1 shallow": shallow["rec@1"], "ours: rec@1 deep": row["rec@1"],
                        "ours: gain": row["rec@1"] - shallow["rec@1"], "paper: layers": "1 -> 12",
                        "paper: rec@1 shallow": paper[shallow_paper], "paper: rec@1 deep": paper[deep_paper],
                        "paper: gain": paper[deep_paper] - paper[shallow_paper]})
    return pd.DataFrame(out)


def beam_view(beam: pd.DataFrame) -> pd.DataFrame:
    return beam.rename(columns={"certified_%": "certified (%)", "mean_scored": "candidates scored"})


def _layers(rows: pd.DataFrame) -> str:
    depths = [str(int(d)) for d in rows["layers"]]
    return depths[0] if len(depths) == 1 else f"{', '.join(depths[:-1])} and {depths[-1]}"


def _depth_quoted(recall: pd.DataFrame, models: pd.DataFrame, deep: int | None = None) -> dict[str, str]:
    """The depth paragraph's numbers: the baselines' widths, the largest size gap of a matched pair, the gains from
    depth (ours and the paper's) and which family depth helps more, and the deep-vs-wide comparison."""
    out: dict[str, str] = {}
    rows = depth_rows(recall)
    base = rows[rows["family"] == "baseline"]
    out["base_widths"] = ", ".join(str(int(d)) for d in base["hidden"])
    out["depth_gap_max"] = f"{100 * base['size_vs_matched'].abs().max():.1f}%"
    per_depth = rows.groupby("layers", as_index=False)["seeds"].min()       # a pair's seeds: the fewer of the two
    many, one = per_depth[per_depth["seeds"] > 1], per_depth[per_depth["seeds"] == 1]
    out["depth_seeds_note"] = (
        (f"{int(many['seeds'].max())} seeds at {_layers(many)} layers" if len(many) else "")
        + (" and " if len(many) and len(one) else "")
        + (f"one seed, the learning-rate sweep's, at {_layers(one)} layers" if len(one) else ""))
    depth = depth_effect(recall, deep)
    out["further_depth_text"] = (f"No depth beyond {int(rows['layers'].max())} layers is trained here."
                                 if len(rows) else "")
    for key, at in (("", 0), ("further_", 1)):      # the first row per family: the claims' depth; then the deepest
        rows_at = depth.groupby("model", sort=False).nth(at).set_index("model") if len(depth) else depth
        if not {"baseline", "superbloom"} <= set(rows_at.index):
            continue
        base_gain, sb_gain = rows_at.loc["baseline", "ours: gain"], rows_at.loc["superbloom", "ours: gain"]
        seeds = int(rows_at.loc["superbloom", "ours: seeds (deep)"])
        out.update({f"{key}base_gain": f"{base_gain:+.1f}", f"{key}sb_gain": f"{sb_gain:+.1f}",
                    f"{key}depth_layers": rows_at.loc["superbloom", "ours: layers"].replace(" -> ", " to "),
                    f"{key}depth_seeds": f"{seeds} seed{'s' if seeds > 1 else ''}",
                    f"{key}depth_verdict": ("depth helps Superbloom more than the baseline, as in the paper"
                                            if sb_gain > base_gain else "depth helps the baseline at least as much "
                                            "as Superbloom, the opposite of the paper's finding")})
        if key:
            out["further_depth_text"] = (
                f"Going on to the further depth, from {out['further_depth_layers']} layers "
                f"({out['further_depth_seeds']} at the deeper end), the baseline gains {out['further_base_gain']} "
                f"points and Superbloom {out['further_sb_gain']}: {out['further_depth_verdict']}.")
            if seeds == 1 and len(many):
                spread = depth_rows(recall).query("seeds > 1")["sd rec@1"].max()
                out["further_depth_text"] += (f" With one seed this is a trend, not a test: the seeds of one model "
                                              f"differ by up to {spread:.1f} points (standard deviation) at the "
                                              f"seeded depths.")
        else:
            out.update(paper_base_gain=f"{rows_at.loc['baseline', 'paper: gain']:+.1f}",
                       paper_sb_gain=f"{rows_at.loc['superbloom', 'paper: gain']:+.1f}")
    r = recall.set_index("name")
    if "superbloom-wide-L1" in r.index:
        wide = r.loc["superbloom-wide-L1"]
        deep_name = str(wide["matched_to"])
        deep = r.loc[deep_name]
        out.update(wide_d=str(int(wide["hidden"])), wide_rec1=f"{wide['rec@1']:.1f}",
                   deep_rec1=f"{deep['rec@1']:.1f}", deep_name=deep_name,
                   wide_verdict=("the deep model is ahead" if deep["rec@1"] > wide["rec@1"] else
                                 "the one-layer model is at least as good"))
    seeded = recall[recall["seeds"] > 1]
    out["seeded_models"] = str(len(seeded))
    out["at_cap"] = str(int((~recall["converged"].astype(bool)).sum()))
    return out


def _matched_quoted(matched: pd.DataFrame, models: pd.DataFrame) -> dict[str, str]:
    """The Table 1 paragraph's numbers: the wide baseline's width and how much of it is its id table, the width of
    Superbloom matched to it, the sampled-softmax model's size and samples, and rec@1 of the three."""
    r = matched.set_index("name")
    m = models.groupby("name", sort=False).first()
    base = next(n for n in r.index if n.startswith("baseline"))
    sb = next(n for n in r.index if n.startswith("superbloom"))
    out = {"t1_base": base, "t1_sb": sb, "t1_base_d": str(int(r.loc[base, "hidden"])),
           "t1_base_params": humanize(r.loc[base, "total_params"], 2),
           "t1_table_share": f"{100 * m.loc[base, 'emb_params'] / m.loc[base, 'total_params']:.0f}%",
           "t1_sb_d": str(int(r.loc[sb, "hidden"])), "t1_sb_params": humanize(r.loc[sb, "total_params"], 2),
           "t1_base_rec1": f"{r.loc[base, 'rec@1']:.1f}", "t1_sb_rec1": f"{r.loc[sb, 'rec@1']:.1f}"}
    sampled = [n for n in r.index if n.startswith("sampled")]
    if sampled:
        ss = sampled[0]
        out.update(t1_ss=ss, t1_ss_params=humanize(r.loc[ss, "total_params"], 2),
                   t1_ss_ratio=f"{r.loc[ss, 'total_params'] / r.loc[sb, 'total_params']:.1f}",
                   t1_ss_sampled=f"{int(m.loc[ss, 'num_sampled']):,}", t1_ss_rec1=f"{r.loc[ss, 'rec@1']:.1f}")
    return out


def quoted(shown, bench: dict | None = None) -> dict[str, str]:
    """Every number the chapter's prose quotes, computed from the shown results."""
    p = shown.profile
    from hashlib_core.papers.superbloom.claims import SIZE_TOLERANCE
    from hashlib_core.papers.superbloom.data import DATASET_NAMES

    out: dict[str, str] = {"alpha": str(p.alpha), "m": str(p.num_hashes), "steps": f"{p.steps:,}",
                           "segment": str(p.segment), "dataset": DATASET_NAMES[p.dataset], "hidden": str(p.hidden),
                           "depths": ", ".join(map(str, p.depths)), "seeds": str(p.seeds), "batch": str(p.batch),
                           "all_depths": ", ".join(map(str, (*p.depths, *p.further_depths))),
                           "eval_every": f"{p.eval_every:,}", "patience": str(p.patience),
                           "top_k": str(max(p.recall_at)), "seed": str(p.seed),
                           "learning_rates": ", ".join(f"{lr:g}" for lr in p.learning_rates),
                           "size_tolerance": f"{SIZE_TOLERANCE:.0%}"}
    models = shown.table("models")
    recall = shown.table("recall")
    first = models.iloc[0]
    out.update(ids=f"{int(first['num_ids']):,}", test_segments=f"{int(recall['segments'].iloc[0]):,}")
    out["validation_pages"] = f"{p.validation_pages:,}" if p.validation_pages else "all"
    out.update(_depth_quoted(recall, models, p.deep))
    if shown.has("matched"):
        out.update(_matched_quoted(shown.table("matched"), shown.table("matched_models")))
    out.update(language_quoted(p, shown.table("language_models")))
    if shown.has("recall_datasets"):
        out.update(datasets_quoted(shown.table("recall_datasets"), shown.table("datasets_models")),
                   other_steps=f"{p.other_steps or p.steps:,}")
        if shown.has("yardsticks"):
            out.update(yardsticks_quoted(datasets_table(shown), shown.table("yardsticks")))
        if shown.has("set_shapes"):
            out.update(shapes_quoted(shown.table("set_shapes"), datasets_table(shown), step_caps(shown.profile)))
        if shown.has("yardsticks_hashed"):
            out.update(ceiling_quoted(ceiling_table(shown), p.alpha))
    if shown.has("datasets_examples") and len(shown.table("datasets_examples")):
        out.update(examples_quoted(example_subset(shown.table("datasets_examples"))))
    if shown.has("alpha"):
        out.update(alpha_quoted(shown.table("alpha"), shown.table("alpha_models")))
    if shown.has("decoding_trained"):
        out.update(decoding_quoted(shown.table("decoding_trained")))
    if shown.has("crowding"):
        out.update(crowding_quoted(shown.table("crowding")), **every_k_quoted(
            recall, shown.table("popularity"), p.roles()["superbloom_deep"], p.roles()["baseline_deep"]))
    if shown.has("longer"):
        roles = p.roles()
        out.update(longer_quoted(shown.table("longer"), shown.table("longer_segments"), roles["superbloom_deep"],
                                 roles["baseline_deep"], top=max(p.recall_at)))
    if shown.has("train_time"):
        out.update(train_time_quoted(shown.table("train_time")))
    if shown.has("params"):
        out.update(params_quoted(shown.table("params")))
    if shown.has("language_prior"):
        out.update(prior_quoted(shown.table("language"), shown.table("language_models"), shown.table("language_prior")))
    beam = shown.table("beam_width")
    k = int(beam["beam"].max())
    at_k = beam[beam["beam"] == k].iloc[0]
    one = beam[beam["beam"] == 1].iloc[0]
    out.update(beam_k=str(k), beam1_rec=f"{one[f'rec@{k}']:.1f}", beamk_rec=f"{at_k[f'rec@{k}']:.1f}")
    if bench is not None:
        rows = pd.DataFrame(bench.get("data", bench)["results"])
        out.update(bench_goal=f"{BENCH_GOAL:g}", **speed_quoted(rows, "bench", "in every row", "in {met} of {n} rows"))
    return out
