"""Profiles, device selection and seeding."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
import torch

from hashlib_core.profiles import Profile, ProfileSet, seed_everything, select_device


@dataclass(frozen=True)
class Toy(Profile):
    layers: int = 1
    lr: float = 1e-3
    compile: bool = False


TOY = ProfileSet(smoke=Toy(name="smoke"), small=Toy(name="small", layers=4, accelerator="gpu"),
                 paper=Toy(name="paper", layers=12, accelerator="gpu"))


def test_get_and_typed_override():
    p = TOY.get("small", layers=6, lr=1)
    assert (p.layers, p.lr, p.name) == (6, 1.0, "small") and isinstance(p.lr, float)
    with pytest.raises(ValueError, match="no setting 'layer'"):
        TOY.get("smoke", layer=3)
    with pytest.raises(TypeError, match="expects int"):
        TOY.get("smoke", layers="four")
    with pytest.raises(TypeError, match="expects int"):
        TOY.get("smoke", layers=True)
    with pytest.raises(ValueError, match="unknown profile"):
        TOY.get("huge")


def test_cli_overrides():
    p = TOY.from_cli(["--profile", "paper", "--layers=24", "--compile=true", "--device", "cpu"])
    assert (p.name, p.layers, p.compile, p.device) == ("paper", 24, True, "cpu")
    with pytest.raises(SystemExit):
        TOY.from_cli(["--profile", "smoke", "--layers=x"])


def test_profile_set_validates_names():
    with pytest.raises(ValueError, match="named 'small'"):
        ProfileSet(smoke=Toy(name="smoke"), small=Toy(name="smoke"), paper=Toy(name="paper"))
    with pytest.raises(ValueError, match="seed"):
        Toy(seed=-1)


def test_select_device(monkeypatch):
    monkeypatch.delenv("HASHLIB_DEVICE", raising=False)
    assert select_device("cpu") == torch.device("cpu")
    assert select_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    monkeypatch.setenv("HASHLIB_DEVICE", "cpu")
    assert select_device(None) == torch.device("cpu")
    with pytest.raises(ValueError, match="unknown device"):
        select_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="no CUDA device"):
            select_device("cuda")


def test_seed_everything_reproduces_streams():
    g1 = seed_everything(5)
    a = (torch.rand(3), np.random.rand(2), g1.random())
    g2 = seed_everything(5)
    b = (torch.rand(3), np.random.rand(2), g2.random())
    assert torch.equal(a[0], b[0]) and np.array_equal(a[1], b[1]) and a[2] == b[2]
    with pytest.raises(ValueError):
        seed_everything(-2)


def test_load_or_run_reuses_only_current_results(tmp_path, monkeypatch):
    from hashlib_core import results
    from hashlib_core.profiles import load_or_run
    from hashlib_core.results import ResultsStore

    state = {"git_commit": "abc", "git_dirty": False}
    monkeypatch.setattr(results, "_git_state", lambda: dict(state))
    calls = []

    def run_for(profile):
        store = ResultsStore("toy", profile.name, root=tmp_path)

        def run():
            calls.append(profile.name)
            store.write_json("r", {"x": 1}, seed=0, config=profile.to_dict())
        return store, run

    smoke = TOY.get("smoke")
    store, run = run_for(smoke)
    load_or_run(store, ["r"], smoke, run)
    load_or_run(store, ["r"], smoke, run)                # same config, same clean commit: reused
    assert calls == ["smoke"]
    other = TOY.get("smoke", layers=2)
    load_or_run(store, ["r"], other, run_for(other)[1])  # another configuration: recomputed
    state["git_commit"] = "def"
    load_or_run(store, ["r"], other, run_for(other)[1])  # another commit: recomputed
    state["git_dirty"] = True
    load_or_run(store, ["r"], other, run_for(other)[1])  # uncommitted changes: always recomputed
    assert calls == ["smoke"] * 4

    paper = TOY.get("paper")
    pstore, prun = run_for(paper)
    load_or_run(pstore, ["r"], paper, prun)
    load_or_run(pstore, ["r"], paper.override(layers=1), prun)   # paper files are shown as they are
    assert calls[-1:] == ["paper"] and calls.count("paper") == 1

    with pytest.raises(RuntimeError, match="did not write"):
        load_or_run(ResultsStore("toy", "small", root=tmp_path), ["missing"], TOY.get("small"), lambda: None)
