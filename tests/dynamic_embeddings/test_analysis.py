"""The chapter's GLUE comparisons on fixed inputs: the hash-family view, the trend and how far the models trained."""
from __future__ import annotations

from dataclasses import dataclass, field

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from hashlib_core.papers.dynamic_embeddings import analysis, tables  # noqa: E402
from hashlib_core.papers.dynamic_embeddings.profiles import DynamicEmbeddingsProfile  # noqa: E402
from hashlib_core.papers.dynamic_embeddings.tables import glue_table  # noqa: E402
from hashlib_core.papers.dynamic_embeddings.training import trend_name  # noqa: E402

N = 200
LABELS = np.arange(N) % 2
PROFILE = DynamicEmbeddingsProfile(name="cpu", tasks=("sst2", "cola"), ft_seeds=(0, 1), pt_steps=1000,
                                   trend_pt_steps=(100, 300), trend_tasks=("sst2",))


def _predictions(k: int) -> list[int]:
    p = LABELS.copy()
    p[k:] = 1 - p[k:]
    return p.tolist()


def _record(correct: dict[str, tuple[int, ...]]) -> tuple[pd.DataFrame, dict]:
    rows, record = [], {"labels": {"sst2": LABELS.tolist(), "cola": LABELS.tolist()}, "runs": []}
    for name, ks in correct.items():
        for seed, k in enumerate(ks):
            for task in ("sst2", "cola"):
                preds = _predictions(k) if task == "sst2" else [0] * N
                rows.append({"name": name, "model": name.split(" @ ")[0], "task": task, "seed": seed,
                             "score": 100.0 * k / N if task == "sst2" else 0.0,
                             "validation_score": 100.0 * k / N if task == "sst2" else 0.0,
                             "majority_score": 50.0 if task == "sst2" else 0.0, "chosen": True,
                             "learning_rate": 3e-4, "best_epoch": 5 if seed else 3, "max_epochs": 5.0,
                             "total_params": 1, "emb_params": 0, "size_fp32_bytes": 4.0, "size_int8_bytes": 1.0})
                record["runs"].append({"name": name, "task": task, "seed": seed, "predictions": preds})
    return pd.DataFrame(rows), record


@dataclass
class FakeShown:
    tables_: dict
    profile: DynamicEmbeddingsProfile = PROFILE
    jsons: dict = field(default_factory=dict)

    def has(self, name):
        return name in self.tables_ or name in self.jsons

    def table(self, name):
        return self.tables_[name]

    def json(self, name):
        return self.jsons[name]


def _shown(with_md5: bool = True, trend: bool = True, scratch: tuple[int, int] | None = None) -> FakeShown:
    main = {"BERT-tiny": (160, 160), "EELBERT-tiny": (150, 152)}
    if with_md5:
        main["EELBERT-tiny (MD5)"] = (120, 122)
    runs, record = _record(main)
    pre = pd.DataFrame({"name": list(main), "final_loss": [3.0, 3.5, 3.6][: len(main)]})
    curves = pd.DataFrame({"name": ["BERT-tiny"] * 3 + ["EELBERT-tiny"] * 3, "step": [1, 50, 100] * 2,
                           "loss": [9.0, 4.0, 3.8, 9.0, 6.0, 4.0]})
    tables_ = {"glue": glue_table(runs, ["sst2", "cola"]), "glue_runs": runs, "pretraining": pre,
               "pretraining_curves": curves}
    jsons = {"glue_predictions": record}
    if trend:
        t_runs, t_record = _record({trend_name("BERT-tiny", 100): (150, 150), trend_name("EELBERT-tiny", 100):
                                    (110, 110), trend_name("BERT-tiny", 300): (155, 155),
                                    trend_name("EELBERT-tiny", 300): (140, 140)})
        tables_["trend_pretraining"] = pd.DataFrame({"name": sorted(set(t_runs["name"])), "final_loss": 5.0})
        jsons["trend_predictions"] = t_record
    if scratch is not None:     # correct items of BERT-tiny and EELBERT-tiny from random weights (both seeds)
        _, s_record = _record({trend_name("BERT-tiny", 0): (scratch[0],) * 2,
                               trend_name("EELBERT-tiny", 0): (scratch[1],) * 2})
        jsons["scratch_predictions"] = s_record
    return FakeShown(tables_, jsons=jsons)


def test_family_view_compares_md5_with_rolling_on_the_tasks_that_learn():
    view = analysis.family_view(_shown())
    # CoLA stays at its floor: SST-2 and the average over the tasks that learn (SST-2 alone)
    assert view["task"].tolist() == ["SST-2", "average (SST-2)"]
    row = view.iloc[0]
    assert row["EELBERT-tiny (rolling)"] == pytest.approx(75.5) and row["EELBERT-tiny (MD5)"] == pytest.approx(60.5)
    assert row["MD5 - rolling"] == pytest.approx(-15.0) and row["low"] < -15.0 < row["high"] < 0
    assert analysis.family_view(_shown(with_md5=False)).empty
    words = analysis.quoted(_shown())
    assert words["family_average"].startswith("-15.0 [") and "rolling hash does better" in words["family_verdict"]
    assert "only one family" in analysis.quoted(_shown(with_md5=False))["family_verdict"]


def test_trend_view_reads_each_length_then_the_profiles_own():
    view = analysis.trend_view(_shown())
    assert view["pre-training steps"].tolist() == [100, 300, 1000]
    gaps = [100 * (110 / 150 - 1), 100 * (140 / 155 - 1), 100 * (75.5 / 80 - 1)]
    assert view["relative gap (%)"].tolist() == pytest.approx(gaps)
    assert (view["low"] <= view["relative gap (%)"]).all() and (view["relative gap (%)"] <= view["high"]).all()
    assert view["BERT-tiny loss"].tolist() == [5.0, 5.0, 3.0] and set(view["tasks"]) == {"SST-2"}
    words = analysis.trend_quoted(view)
    assert words["trend_points"] == "100, 300, 1,000" and words["trend_direction"].startswith("narrows")
    fig = analysis.trend_figure(view, 4.0)
    assert len(fig.axes[0].lines) >= 3            # the gap, the bound, zero
    # without the trend's runs only the profile's own length remains; with no task learning, nothing
    assert analysis.trend_view(_shown(trend=False))["pre-training steps"].tolist() == [1000]
    assert analysis.trend_quoted(analysis.trend_view(_shown(trend=False)))["trend_direction"] == "-"
    # no task learns: every held-out score at the floor (the rule reads the held-out part, not dev)
    runs = _shown().tables_["glue_runs"].assign(validation_score=0.0)
    empty = analysis.trend_view(FakeShown({**_shown().tables_, "glue_runs": runs}, jsons=_shown().jsons))
    assert empty.empty and "cannot be read" in analysis.trend_quoted(empty)["trend_direction"]
    assert analysis.trend_figure(empty, 4.0).axes[0].texts


def test_scratch_view_says_what_the_pre_training_adds():
    # pre-trained: BERT-tiny 80.0, EELBERT-tiny 75.5 on SST-2 (CoLA never learns)
    view = analysis.scratch_view(_shown(scratch=(100, 100)))
    assert view["model"].tolist() == ["BERT-tiny", "EELBERT-tiny"]
    assert view["pre-trained"].tolist() == pytest.approx([80.0, 75.5])
    assert view["random weights"].tolist() == pytest.approx([50.0, 50.0])
    assert view["pre-training adds (points)"].tolist() == pytest.approx([30.0, 25.5]) and (view["low"] > 0).all()
    words = analysis.scratch_quoted(view)
    assert "BERT-tiny 80.0 pre-trained against 50.0 from random weights (+30.0 points [" in words["scratch_adds"]
    assert words["scratch_reading"].startswith("the pre-training helps both models")
    # random weights as good as the pre-trained ones: the comparison measures training from scratch
    same = analysis.scratch_quoted(analysis.scratch_view(_shown(scratch=(160, 151))))
    assert "adds nothing measurable" in same["scratch_reading"]
    partly = analysis.scratch_quoted(analysis.scratch_view(_shown(scratch=(100, 151))))
    assert "helps BERT-tiny (interval above zero) but not measurably EELBERT-tiny" in partly["scratch_reading"]
    gaps = analysis.scratch_gaps(_shown(scratch=(100, 90)))
    assert gaps["scratch_gap"].startswith(f"{100 * (45 / 50 - 1):+.1f}% [")
    assert gaps["pretrained_gap"].startswith(f"{100 * (75.5 / 80 - 1):+.1f}% [")
    assert "pre-training does not change the gap" in gaps["gap_reading"]
    assert "changes the gap" in analysis.scratch_gaps(_shown(scratch=(160, 100)))["gap_reading"]
    assert analysis.scratch_gaps(_shown())["scratch_gap"] == "-"
    assert analysis.scratch_view(_shown()).empty       # no control run
    assert "cannot be read" in analysis.scratch_quoted(analysis.scratch_view(_shown()))["scratch_reading"]


def test_protocol_quoted_says_how_far_the_models_trained():
    words = tables.protocol_quoted(_shown())
    # BERT-tiny fell 0.2 of its 5.2 in the second half, EELBERT-tiny 2.0 of its 5.0
    assert words["flat_max_share"] == "40.0%" and words["flat_max_model"] == "EELBERT-tiny"
    assert words["chosen_lrs"] == "BERT-tiny 0.0003, EELBERT-tiny 0.0003, EELBERT-tiny (MD5) 0.0003"
    # seed 1 of every model and task is best at the cap (5 of 5 epochs)
    assert words["ft_at_cap"] == "6 of 12"
