"""The chapter as parallel jobs (hashlib_core.papers.hashformers.jobs): every model once, and the whole run that reads
the jobs' checkpoints back writes the same numbers as the sequential run (the micro profile, jobs run in-process)."""
from __future__ import annotations

import pandas as pd
import pytest

from hashlib_core.papers.hashformers.experiments import CHAPTER
from hashlib_core.papers.hashformers.jobs import NO_TRAINING, parallel_jobs
from hashlib_core.papers.hashformers.profiles import MODELS, PROFILES, PROFORMER, TABLE6_MODELS, TREND_MODELS

from tests.hashformers.conftest import read


def _split(args: tuple[str, ...]) -> tuple[str, dict[str, str]]:
    only, overrides = "", {}
    rest = list(args)
    while rest:
        item = rest.pop(0)
        if item == "--only":
            only = rest.pop(0)
        else:
            key, value = item[2:].split("=", 1)
            overrides[key] = value
    return only, overrides


def test_every_model_gets_one_job_and_the_whole_run_trains_nothing_new():
    profile = PROFILES.get("small")
    jobs, final = parallel_jobs(profile)
    glue = [_split(j.args) for j in jobs if _split(j.args)[0].startswith("glue_")]
    assert [overrides["only_models"] for _, overrides in glue] == [m.name for m in MODELS] + [PROFORMER.name]
    assert [only for only, o in glue if o["only_models"] == PROFORMER.name] == ["glue_proformer"]
    assert sum(j.name.startswith("table6") for j in jobs) == len(TABLE6_MODELS)
    assert sum(j.name.startswith("add") for j in jobs) == sum(m.embedding_type == "add" for m in MODELS)
    assert sum(j.name.startswith("trend") for j in jobs) == len(TREND_MODELS)
    assert [j.name for j in jobs if j.shared] == ["no-training"]
    assert [only for only, o in glue if o["only_models"] == "BERT-MLM"] == ["glue_baselines,majority"]
    assert final[0] == "--only"
    whole = final[1].split(",")
    assert not set(whole) & {*NO_TRAINING, "claims"}
    assert {"pretraining", "glue", "glue_proformer", "majority", "timing"} <= set(whole)
    assert len({j.name for j in jobs}) == len(jobs)


def test_only_models_restricts_every_group_and_is_checked():
    profile = PROFILES.get("smoke", only_models=("MD-Proj [BPE]", "LSH-Proj"))
    assert [m.name for m in profile.selected()] == ["LSH-Proj"]
    assert [m.name for m in profile.selected(TABLE6_MODELS)] == ["MD-Proj [BPE]"]
    assert [m.name for m in profile.selected(TREND_MODELS)] == ["LSH-Proj"]
    # models (Table 1 only) leaves the other groups whole, as before
    assert len(PROFILES.get("smoke", models=("MD-Pool",)).selected(TABLE6_MODELS)) == len(TABLE6_MODELS)
    with pytest.raises(ValueError, match="only_models names unknown"):
        PROFILES.get("smoke", only_models=("MD-Proj [subword]",))
    # a job's share is evaluation-only: it never changes a checkpoint's digest
    assert profile.weight_settings() == PROFILES.get("smoke").weight_settings()


def test_jobs_then_the_whole_run_reproduce_the_sequential_run(micro_run, tmp_path):
    profile, root, _ = micro_run
    checkpoints = tmp_path / "checkpoints"
    jobs, final = parallel_jobs(profile)
    for job in jobs:
        only, overrides = _split(job.args)
        CHAPTER.run(profile.override(**overrides), only, progress=False,
                    results_root=tmp_path / ("final" if job.shared else job.name),
                    checkpoint_root=checkpoints, dependents=False)
    CHAPTER.run(profile, final[1], progress=False, results_root=tmp_path / "final", checkpoint_root=checkpoints,
                dependents=False)
    CHAPTER.run(profile, "claims", progress=False, results_root=tmp_path / "final", checkpoint_root=checkpoints)
    store = CHAPTER.store("smoke", root=tmp_path / "final")
    # every result the sequential run wrote, with the same numbers (timing aside: it is measured)
    assert set(CHAPTER.result_names(profile)) == {n for n in CHAPTER.result_names(profile) if store.exists(n)}
    for name in ("glue", "glue_runs", "table6", "trend_runs", "add_codebooks", "majority_runs", "pretraining"):
        ours, ref = read(tmp_path / "final", name), read(root, name)
        numbers = [c for c in ref.columns if pd.api.types.is_numeric_dtype(ref[c]) and "wall" not in c
                   and c not in ("resumed_from_step",)]
        pd.testing.assert_frame_equal(ours[numbers], ref[numbers], check_exact=False, rtol=1e-9)
    # the whole run trained nothing: every pre-training was read back, and its cost counted
    pre = read(tmp_path / "final", "pretraining")
    assert (pre["resumed_from_step"] == profile.pt_steps).all() and (pre["wall_time_s"] > 0).all()
    meta = store.read_meta("pretraining")
    assert 0 < meta["reused_compute_s"] <= pre["wall_time_s"].sum()
    assert store.read_meta("glue_md_runs")["reused_compute_s"] > 0
    ours, ref = read(tmp_path / "final", "claims"), read(root, "claims")
    untimed = ~ref["reads"].fillna("").str.contains("timing")        # Table 3's verdicts read measured times
    assert ours[untimed]["verdict"].tolist() == ref[untimed]["verdict"].tolist()


def test_the_headline_by_scale_reads_each_committed_profile(tmp_path):
    from hashlib_core.papers.hashformers import trend

    view = trend.scale_view(CHAPTER)
    assert view["profile"].tolist() == [p for p in trend.SCALE_PROFILES if not CHAPTER.stale(p)
                                        and CHAPTER.store(p).exists("glue_predictions")]
    for row in view.itertuples():
        profile = PROFILES.get(row.profile)
        glue = CHAPTER.store(row.profile).read_table("glue").set_index("name")
        assert row.encoder == f"{profile.layers} x {profile.hidden}"
        assert row._4 == glue.loc["LSH-Proj", "total_params"] and row._5 == glue.loc["BERT-MLM", "total_params"]
        assert row.low <= row.difference <= row.high
        assert row.difference == pytest.approx(row._6 - row._7)
    words = trend.scale_quoted(view)
    if len(view) >= 2:
        assert words["scale_gaps"].startswith(f"{view['profile'].iloc[0]} ") and words["scale_direction"] != "-"
    assert "fewer than two" in trend.scale_quoted(view.iloc[:1])["scale_direction"]
    overlapping = pd.DataFrame({"profile": ["cpu", "small"], "difference": [1.0, -0.5], "low": [-6.0, -5.0],
                                "high": [10.0, 4.0]})
    assert trend.scale_quoted(overlapping) == {
        "scale_gaps": "cpu +1.0 [-6.0, +10.0], small -0.5 [-5.0, +4.0]",
        "scale_direction": "moves by -1.5 points, but the first and last intervals overlap: no clear trend at these "
                           "scales"}
    assert trend.scale_view(CHAPTER, results_root=tmp_path).empty          # nothing committed there
