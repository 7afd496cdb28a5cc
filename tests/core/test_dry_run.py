"""The shared dry-run layer (:mod:`hashlib_core.dry_run`): two steps on two gloo processes through the shared loop
(DDP with a parameter the loss never reaches, the known failure at the second step), checkpoint and resume, the
size check, the hub mock and the ``--dry-run`` command line. Each chapter's own dry run is tested in its folder."""
from __future__ import annotations

import os

import pytest
import torch
from torch import nn

from hashlib_core.dry_run import DataSample, DryRun, ModelSize, mock_hub, text_rows
from hashlib_core.dry_run.runner import model_sizes
from hashlib_core.dry_run.steps import STEPS, launch, two_steps
from hashlib_core.papers.vocab_bottleneck.experiments import CHAPTER as VOCAB_BOTTLENECK
from hashlib_core.profiles import Profile
from hashlib_core.training import TrainConfig, train

#: the chapters whose dry run trains a tiny model (the vocabulary bottleneck trains none)
TRAINING_CHAPTERS = ("hashformers", "superbloom", "multihashformer", "pnlp_mixer", "dynamic_embeddings", "families")


class WithUnusedHead(nn.Module):
    """A body the loss reads and a head it never reaches (an intent model's slot head, an untied MLM bias)."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Linear(4, 4)
        self.unused_head = nn.Linear(4, 3)

    def forward(self, x: torch.Tensor, labels: torch.Tensor) -> dict[str, torch.Tensor]:
        return {"loss": nn.functional.mse_loss(self.body(x), labels)}


def toy() -> tuple[nn.Module, torch.utils.data.DataLoader]:
    xs = torch.randn(16, 4, generator=torch.Generator().manual_seed(0))
    rows = [{"x": xs[i], "labels": xs[i].flip(0)} for i in range(16)]
    return WithUnusedHead(), torch.utils.data.DataLoader(rows, batch_size=4)


def toy_steps(root: str) -> dict:
    """A :func:`launch` target: the dry run's two steps and resume of :func:`toy`."""
    return two_steps(toy, root)


def toy_without_unused_search(root: str) -> int:
    """A :func:`launch` target: two steps of :func:`toy` with an Accelerator that does not tell DDP to look for
    unused parameters (what the shared loop did before)."""
    from accelerate import Accelerator, PartialState

    PartialState(cpu=True)
    model, loader = toy()
    return train(model, loader, TrainConfig(max_steps=STEPS, log_every=1), accelerator=Accelerator(cpu=True),
                 progress=False).steps


def chapters_steps(root: str) -> dict:
    """A :func:`launch` target: every training chapter's paper-profile tiny model, two steps and a resume each."""
    import importlib

    from hashlib_core.dry_run.steps import chapter_steps

    out = {}
    for slug in TRAINING_CHAPTERS:
        chapter = importlib.import_module(f"hashlib_core.papers.{slug}.experiments").CHAPTER
        out[slug] = chapter_steps(slug, chapter.profile("paper"), root=os.path.join(root, slug))
    return out


def test_two_processes_train_a_model_with_unused_parameters_and_resume(tmp_path):
    ranks = launch("tests.core.test_dry_run:toy_steps", (), tmp_path, processes=2)
    assert [r["rank"] for r in ranks] == [0, 1] and {r["processes"] for r in ranks} == {2}
    for r in ranks:
        assert (r["steps"], r["resumed_from_step"], r["resumed_steps"]) == (STEPS, 1, STEPS)
        assert r["resumed_weights"] == r["weights"] != r["fresh_weights"]
    assert ranks[0]["weights"] == ranks[1]["weights"]          # gradients were averaged across the ranks


def test_without_the_unused_parameter_search_ddp_fails_at_the_second_step(tmp_path):
    with pytest.raises(RuntimeError, match="find_unused_parameters"):
        launch("tests.core.test_dry_run:toy_without_unused_search", (), tmp_path, processes=2)


@pytest.mark.slow
def test_every_chapters_tiny_model_trains_two_steps_on_two_processes_and_resumes(tmp_path, mirror):
    ranks = launch("tests.core.test_dry_run:chapters_steps", (), tmp_path, processes=2)
    for slug in TRAINING_CHAPTERS:
        seen = [r[slug] for r in ranks]
        assert [s["processes"] for s in seen] == [2, 2], slug
        assert all((s["steps"], s["resumed_from_step"], s["resumed_steps"]) == (STEPS, 1, STEPS) for s in seen), slug
        assert all(s["resumed_weights"] == s["weights"] for s in seen), slug
        assert seen[0]["weights"] == seen[1]["weights"], slug


def _spec(size: ModelSize) -> DryRun:
    return DryRun(models=lambda p: [size], data=None, tiny=None, plan=lambda p: [])


def test_a_size_the_paper_prints_otherwise_is_a_problem_unless_the_chapter_explains_it():
    profile = Profile()
    linear = ModelSize("linear", lambda: nn.Linear(10, 10), paper="0.1K", source="a table")
    table, problems = model_sizes(_spec(linear), profile)
    assert table.loc[0, "parameters"] == sum(p.numel() for p in nn.Linear(10, 10).parameters())
    assert table.loc[0, "agrees"] and table.loc[0, "ours"] == "0.1K"
    assert problems == []
    wrong = ModelSize("linear", linear.build, paper="1.0K", source="a table")
    table, problems = model_sizes(_spec(wrong), profile)
    assert not table.loc[0, "agrees"] and len(problems) == 1 and "1.0K" in problems[0] and "a table" in problems[0]
    explained = ModelSize("linear", linear.build, paper="1.0K", source="a table", explained="a known misprint")
    table, problems = model_sizes(_spec(explained), profile)
    assert problems == [] and table.loc[0, "note"] == "a known misprint"


def test_models_are_built_on_the_meta_device():
    seen = []

    def build() -> nn.Module:
        model = nn.Linear(3, 3)
        seen.append(model.weight.device.type)
        return model

    model_sizes(_spec(ModelSize("linear", build)), Profile())
    assert seen == ["meta"]


def test_a_record_without_the_columns_the_chapter_reads_is_refused():
    with pytest.raises(ValueError, match=r"without the columns \['label'\]"):
        DataSample("a source", 3, ("text",), ("text", "label"))
    with pytest.raises(ValueError, match="yielded no records"):
        DataSample("a source", 0, ("text",))


def test_the_hub_mock_answers_load_dataset_locally_and_restores_the_offline_flags(monkeypatch):
    import datasets

    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    with mock_hub({"org/corpus:en": {"id": ["a", "b", "c"], "text": text_rows(3)}}) as hub:
        assert "HF_DATASETS_OFFLINE" not in os.environ
        stream = datasets.load_dataset("org/corpus", "en", split="train", streaming=True)
        records = list(stream)
        with pytest.raises(LookupError, match="no dataset 'org/other'"):
            datasets.load_dataset("org/other", split="train")
        assert hub.served == {"org/corpus:en": ("id", "text")}
    assert [r["text"] for r in records] == text_rows(3) and set(records[0]) == {"id", "text"}
    assert os.environ["HF_DATASETS_OFFLINE"] == "1"
    assert datasets.load_dataset.__module__.startswith("datasets")


def test_the_command_line_runs_the_dry_run_prints_it_and_writes_its_tables(tmp_path, monkeypatch, capsys):
    from functools import partial

    from hashlib_core.dry_run import cli, runner

    monkeypatch.setattr(cli, "dry_run", partial(runner.dry_run, out=tmp_path))
    assert VOCAB_BOTTLENECK.main(["--profile", "paper", "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert "dry run of vocab_bottleneck, profile paper" in printed and "ready: every check passed" in printed
    folder = tmp_path / "vocab_bottleneck" / "paper"
    assert {p.name for p in folder.glob("*.csv")} == {"sizes.csv", "data.csv", "training.csv", "plan.csv"}
    assert not (tmp_path / "vocab_bottleneck" / "paper" / "embedding_shares.csv").exists()   # no experiment ran


def test_a_chapter_without_a_dry_run_is_named_with_the_fix(monkeypatch):
    import sys
    import types

    from hashlib_core.dry_run import spec_of

    with pytest.raises(LookupError, match="there is no chapter 'no_such_chapter'"):
        spec_of("no_such_chapter")
    package = types.ModuleType("hashlib_core.papers.undeclared")
    package.__path__ = []                     # a chapter package without a dry_run module
    monkeypatch.setitem(sys.modules, "hashlib_core.papers.undeclared", package)
    with pytest.raises(LookupError, match=r"add hashlib_core\.papers\.undeclared\.dry_run with DRY_RUN"):
        spec_of("undeclared")


def test_the_dry_run_refuses_to_run_under_a_launcher(monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(SystemExit, match="not under accelerate launch"):
        VOCAB_BOTTLENECK.main(["--profile", "paper", "--dry-run"])
