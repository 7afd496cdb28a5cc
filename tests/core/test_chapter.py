"""The chapter skeleton: registration, runs and writes, reuse, staleness, committed results, the command line."""
from __future__ import annotations

from dataclasses import dataclass, fields

import pandas as pd
import pytest
import torch

from hashlib_core.chapter import Chapter, RunContext
from hashlib_core.profiles import Profile, ProfileSet
from hashlib_core.results import store as results_store
from hashlib_core.training import TrainConfig


@dataclass(frozen=True)
class Toy(Profile):
    #: a weight setting
    width: int = 2
    #: an evaluation-only setting
    repeats: int = 1
    tasks: tuple[str, ...] = ("a",)
    EVALUATION_ONLY = frozenset({"repeats"})


PROFILES = ProfileSet(smoke=Toy(name="smoke"), cpu=Toy(name="cpu", width=4), small=Toy(name="small", width=8),
                      paper=Toy(name="paper", width=16))


def make_chapter(calls: list) -> Chapter:
    chapter = Chapter("toy", "A toy chapter", PROFILES, resources=lambda ctx: {"built_for": ctx.profile.width})

    @chapter.experiment("square", outputs=("squares",))
    def square(ctx: RunContext):
        calls.append(("square", ctx.profile.name))
        return {"squares": pd.DataFrame({"x": [1, 2], "y": [ctx.profile.width, ctx.profile.width ** 2]})}

    @chapter.experiment("summary", outputs=("summary", "resources"), when=lambda p: p.width > 2)
    def summary(ctx: RunContext):
        calls.append(("summary", ctx.profile.name))
        return {"summary": {"width": ctx.profile.width}, "resources": ctx.resources}

    return chapter


@pytest.fixture
def clean_commit(monkeypatch):
    state = {"git_commit": "c" * 40, "git_dirty": False}
    monkeypatch.setattr(results_store, "git_state", lambda: dict(state))
    return state


def test_registration_refuses_duplicates_and_selects_experiments():
    chapter = make_chapter([])
    with pytest.raises(ValueError, match="already has an experiment"):
        chapter.experiment("square", outputs=("other",))(lambda ctx: {})
    with pytest.raises(ValueError, match="already written"):
        chapter.experiment("again", outputs=("squares",))(lambda ctx: {})
    assert [e.name for e in chapter.selected(PROFILES.smoke)] == ["square"]            # `when` skips summary
    assert [e.name for e in chapter.selected(PROFILES.cpu)] == ["square", "summary"]
    assert [e.name for e in chapter.selected(PROFILES.smoke, "summary")] == ["summary"]
    assert chapter.result_names(PROFILES.cpu, "summary,square") == ["squares", "summary", "resources"]
    with pytest.raises(ValueError, match="unknown experiment"):
        chapter.selected(PROFILES.smoke, ["nope"])


def test_run_writes_every_output_with_its_metadata(tmp_path):
    calls = []
    store = make_chapter(calls).run(PROFILES.cpu, progress=False, results_root=tmp_path)
    assert store.read_table("squares")["y"].tolist() == [4, 16]
    assert store.read_json("summary")["data"] == {"width": 4}
    assert store.read_json("resources")["data"] == {"built_for": 4}
    meta = store.read_meta("squares")
    assert meta["config"]["width"] == 4 and meta["profile"] == "cpu" and meta["wall_time_s"] >= 0
    assert calls == [("square", "cpu"), ("summary", "cpu")]


def test_an_experiment_must_return_exactly_its_outputs(tmp_path):
    chapter = Chapter("bad", "Bad", PROFILES)
    chapter.experiment("e", outputs=("a", "b"))(lambda ctx: {"a": pd.DataFrame()})
    with pytest.raises(RuntimeError, match="declared"):
        chapter.run(PROFILES.smoke, progress=False, results_root=tmp_path)


def test_only_the_main_process_writes(tmp_path, monkeypatch):
    from hashlib_core import chapter as chapter_module

    monkeypatch.setattr(chapter_module, "is_main_process", lambda: False)
    calls = []
    store = make_chapter(calls).run(PROFILES.smoke, progress=False, results_root=tmp_path)
    assert calls == [("square", "smoke")] and store.names() == []


def test_load_or_run_reuses_only_current_results(tmp_path, clean_commit):
    calls = []
    chapter = make_chapter(calls)
    smoke = PROFILES.smoke
    chapter.load_or_run(smoke, results_root=tmp_path)
    chapter.load_or_run(smoke, results_root=tmp_path)                 # same config, same clean commit: reused
    assert calls == [("square", "smoke")]
    other = smoke.override(width=3)
    chapter.load_or_run(other, results_root=tmp_path)                 # another configuration: recomputed
    clean_commit["git_commit"] = "d" * 40
    chapter.load_or_run(other, results_root=tmp_path)                 # another commit: recomputed
    clean_commit["git_dirty"] = True
    chapter.load_or_run(other, results_root=tmp_path)                 # uncommitted changes: always recomputed
    assert calls.count(("square", "smoke")) == 4

    paper = PROFILES.paper
    chapter.load_or_run(paper, results_root=tmp_path)
    chapter.load_or_run(paper.override(width=1), results_root=tmp_path)   # paper files are shown as they are
    assert calls.count(("square", "paper")) == 1

    broken = Chapter("broken", "Broken", PROFILES)
    broken.experiment("e", outputs=("missing",))(lambda ctx: {"missing": pd.DataFrame()})
    broken.run = lambda *a, **k: None
    with pytest.raises(RuntimeError, match="did not write"):
        broken.load_or_run(PROFILES.small, results_root=tmp_path)


def test_stale_and_committed_results(tmp_path, clean_commit):
    chapter = make_chapter([])
    assert chapter.committed(tmp_path) == (None, [])
    # the device a run used is recorded, not compared: a cpu run made with --device cpu is not stale
    chapter.run(PROFILES.cpu.override(device="cpu"), progress=False, results_root=tmp_path)
    chosen, notes = chapter.committed(tmp_path)
    assert chosen.name == "cpu" and notes == [] and chapter.stale("cpu", tmp_path) == {}
    # a small run made with other settings is stale: skipped, with a note, and cpu is shown instead
    chapter.run(PROFILES.small.override(width=9), progress=False, results_root=tmp_path)
    assert chapter.stale("small", tmp_path) == {n: ["width"] for n in ("resources", "squares", "summary")}
    chosen, notes = chapter.committed(tmp_path)
    assert chosen.name == "cpu" and "stale" in notes[0] and "width" in notes[0]
    # an incomplete paper run is skipped too
    chapter.run(PROFILES.paper, "square", progress=False, results_root=tmp_path)
    chosen, notes = chapter.committed(tmp_path)
    assert chosen.name == "cpu" and any("incomplete" in n for n in notes)
    shown = chapter.show("smoke", "cpu", "committed", results_root=tmp_path)
    assert shown.source == "committed" and shown.profile.name == "cpu" and shown.json("summary") == {"width": 4}
    assert "committed `cpu` profile" in shown.banner and "results/toy/cpu/" in shown.banner


def test_show_falls_back_to_a_live_run_with_a_banner(tmp_path, clean_commit):
    calls = []
    shown = make_chapter(calls).show("smoke", "cpu", "committed", results_root=tmp_path)
    assert shown.source == "live" and calls == [("square", "smoke")]
    assert "live run of the `smoke` profile" in shown.banner and "not meant to match" in shown.banner
    with pytest.raises(ValueError, match="source"):
        make_chapter([]).show("smoke", "cpu", "best", results_root=tmp_path)


def test_checkpoint_dirs_digest_weight_settings_only(tmp_path):
    chapter = make_chapter([])

    def where(profile, *parts, settings=None):
        return RunContext(chapter, profile, checkpoint_root=tmp_path).checkpoint_dir("m (1)", *parts,
                                                                                   settings=settings)

    base = where(PROFILES.smoke, TrainConfig(max_steps=2))
    assert base.parent == tmp_path / "toy" / "smoke" and base.name.startswith("m__1_-")
    assert where(PROFILES.smoke.override(repeats=5, device="cpu"), TrainConfig(max_steps=2)) == base
    assert where(PROFILES.smoke.override(width=3), TrainConfig(max_steps=2)) != base
    assert where(PROFILES.smoke, TrainConfig(max_steps=3)) != base
    assert where(PROFILES.smoke.override(tasks=("b",)), settings=["width"]) == where(PROFILES.smoke, settings=["width"])


def test_main_parses_only_and_list_settings(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HASHLIB_RESULTS_DIR", str(tmp_path))
    calls = []
    assert make_chapter(calls).main(["--profile", "cpu", "--only", "square", "--tasks=a,b", "--width=5"]) == 0
    assert calls == [("square", "cpu")]
    store = results_store.ResultsStore("toy", "cpu", root=tmp_path)
    assert store.read_meta("squares")["config"]["tasks"] == ["a", "b"]
    assert "== squares" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        make_chapter([]).main(["--profile", "cpu", "--width=five"])


def test_banner_names_every_device_the_experiments_ran_on(tmp_path, clean_commit):
    """A GPU run counts parameters on the CPU: the banner names the GPU first and the CPU too, never just one."""
    import json

    chapter = make_chapter([])
    chapter.run(PROFILES.cpu.override(device="cpu"), progress=False, results_root=tmp_path)
    meta_path = tmp_path / "toy" / "cpu" / "squares.meta.json"
    meta = json.loads(meta_path.read_text())
    # a CPU run names the CPU model and the instruction set torch uses (they change the numbers a seed trains to)
    assert meta["device_name"] == results_store.cpu_name() and meta["device_name"] not in ("", "unknown")
    assert meta["cpu_capability"] == str(torch.backends.cpu.get_cpu_capability())
    cpu_banner = chapter.show("smoke", "cpu", "committed", results_root=tmp_path).banner
    assert f"cpu ({meta['device_name']}, {meta['cpu_capability']}, {meta['cpu_count']} cores)" in cpu_banner
    meta.update(device="cuda", device_name="NVIDIA H100 80GB HBM3")
    meta_path.write_text(json.dumps(meta))
    banner = chapter.show("smoke", "cpu", "committed", results_root=tmp_path).banner
    assert "Computed on cuda (NVIDIA H100 80GB HBM3" in banner and " and cpu (" in banner


def test_settings_an_experiment_is_independent_of_never_make_it_stale(tmp_path, clean_commit):
    chapter = Chapter("toy", "A toy chapter", PROFILES)

    @chapter.experiment("square", outputs=("squares",), independent_of=("repeats", "tasks"))
    def square(ctx: RunContext):
        return {"squares": pd.DataFrame({"y": [ctx.profile.width ** 2]})}

    @chapter.experiment("echo", outputs=("echo",))
    def echo(ctx: RunContext):
        return {"echo": {"tasks": list(ctx.profile.tasks)}}

    chapter.run(PROFILES.cpu.override(tasks=("b",)), progress=False, results_root=tmp_path)
    # only `echo` reads tasks: the cpu profile's tasks ("a") differ from the run's, so echo is stale, square is not
    assert chapter.stale("cpu", tmp_path) == {"echo": ["tasks"]}
    chapter.run(PROFILES.cpu.override(width=5), progress=False, results_root=tmp_path)
    assert chapter.stale("cpu", tmp_path) == {"squares": ["width"], "echo": ["width"]}


@dataclass(frozen=True)
class SharedToy(Toy):
    #: a parallel job's share of the run (default: the whole run)
    part: tuple[str, ...] = ()
    EVALUATION_ONLY = frozenset({"repeats", "part"})
    SHARE_SETTINGS = frozenset({"part"})


def test_a_jobs_share_is_stale_and_results_older_than_the_setting_are_whole_runs(tmp_path, clean_commit):
    shared = ProfileSet(smoke=SharedToy(name="smoke"), cpu=SharedToy(name="cpu", width=4),
                        small=SharedToy(name="small"), paper=SharedToy(name="paper"))
    chapter = Chapter("toy", "A toy chapter", shared)

    @chapter.experiment("square", outputs=("squares",))
    def square(ctx: RunContext):
        return {"squares": pd.DataFrame({"y": [ctx.profile.width ** 2]})}

    chapter.run(shared.cpu, progress=False, results_root=tmp_path)
    assert chapter.stale("cpu", tmp_path) == {}
    store = chapter.store("cpu", tmp_path)
    old = {k: v for k, v in store.read_meta("squares")["config"].items() if k != "part"}
    store.write_table("squares", store.read_table("squares"), seed=0, config=old)   # written before `part` existed
    assert chapter.stale("cpu", tmp_path) == {}
    chapter.run(shared.cpu.override(part=("x",)), progress=False, results_root=tmp_path)
    assert chapter.stale("cpu", tmp_path) == {"squares": ["part"]}
    # a partial result stays stale even against the very profile that wrote it
    assert chapter.stale("cpu", tmp_path, profile=shared.cpu.override(part=("x",))) == {"squares": ["part"]}


def test_a_setting_added_later_counts_as_its_default(tmp_path, clean_commit):
    shared = ProfileSet(smoke=SharedToy(name="smoke"), cpu=SharedToy(name="cpu", width=4),
                        small=SharedToy(name="small"), paper=SharedToy(name="paper"))
    chapter = Chapter("toy", "A toy chapter", shared)

    @chapter.experiment("square", outputs=("squares",))
    def square(ctx: RunContext):
        return {"squares": pd.DataFrame({"y": [ctx.profile.width ** 2]})}

    chapter.run(shared.cpu, progress=False, results_root=tmp_path)
    store = chapter.store("cpu", tmp_path)
    old = {k: v for k, v in store.read_meta("squares")["config"].items() if k != "width"}
    store.write_table("squares", store.read_table("squares"), seed=0, config=old)   # written before `width` existed
    # the cpu profile's width (4) is not the default (Toy's): the result ran as the default does, so it is stale
    assert chapter.stale("cpu", tmp_path) == {"squares": ["width"]}
    # against a profile at the default width the result is current
    default_width = next(f.default for f in fields(SharedToy) if f.name == "width")
    assert chapter.stale("cpu", tmp_path, profile=shared.cpu.override(width=default_width)) == {}


def test_settings_an_experiment_owns_leave_the_others_current_and_their_checkpoints_kept(tmp_path, clean_commit):
    chapter = Chapter("toy", "A toy chapter", PROFILES)
    folders = {}

    @chapter.experiment("square", outputs=("squares",))
    def square(ctx: RunContext):
        folders.setdefault("square", []).append(ctx.checkpoint_dir("w"))
        return {"squares": pd.DataFrame({"y": [ctx.profile.width ** 2]})}

    @chapter.experiment("echo", outputs=("echo",), owns=("tasks",))
    def echo(ctx: RunContext):
        folders.setdefault("echo", []).append(ctx.checkpoint_dir("w"))
        return {"echo": {"tasks": list(ctx.profile.tasks)}}

    assert chapter.owned_settings() == frozenset({"tasks"})
    chapter.run(PROFILES.cpu.override(tasks=("b",)), progress=False, results_root=tmp_path)
    chapter.run(PROFILES.cpu, progress=False, results_root=tmp_path, only=["square"])
    # only echo reads tasks: square's results and checkpoint folder do not depend on them, echo's do
    assert chapter.stale("cpu", tmp_path) == {"echo": ["tasks"]}
    assert folders["square"][0] == folders["square"][1]
    chapter.run(PROFILES.cpu, progress=False, results_root=tmp_path, only=["echo"])
    assert folders["echo"][0] != folders["echo"][1] and chapter.stale("cpu", tmp_path) == {}
    # outside a run every owned setting is left out of the digest
    outside = RunContext(chapter, PROFILES.cpu.override(tasks=("c",)), checkpoint_root=tmp_path)
    assert outside.checkpoint_dir("w").name == RunContext(chapter, PROFILES.cpu, checkpoint_root=tmp_path
                                                          ).checkpoint_dir("w").name
