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


TOY = ProfileSet(smoke=Toy(name="smoke"), cpu=Toy(name="cpu", layers=2),
                 small=Toy(name="small", layers=4, accelerator="gpu"),
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
        ProfileSet(smoke=Toy(name="smoke"), cpu=Toy(name="cpu"), small=Toy(name="smoke"), paper=Toy(name="paper"))
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


@dataclass(frozen=True)
class Lists(Profile):
    tasks: tuple[str, ...] = ("sst2",)
    seeds: tuple[int, ...] = (0,)
    EVALUATION_ONLY = frozenset({"tasks"})


LISTS = ProfileSet(smoke=Lists(name="smoke"), cpu=Lists(name="cpu"), small=Lists(name="small"),
                   paper=Lists(name="paper"))


def test_list_settings_take_one_comma_syntax():
    p = LISTS.from_cli(["--profile", "cpu", "--tasks=rte, sst2", "--seeds=0,1,2"])
    assert (p.tasks, p.seeds) == (("rte", "sst2"), (0, 1, 2))
    assert LISTS.get("smoke", tasks=["cola"]).tasks == ("cola",) and LISTS.get("smoke", tasks="").tasks == ()
    with pytest.raises(TypeError, match="expects int"):
        LISTS.get("smoke", seeds="0,x")
    with pytest.raises(TypeError, match="expects a list"):
        LISTS.get("smoke", seeds=3)


def test_weight_settings_leave_out_run_and_evaluation_settings():
    p = LISTS.get("smoke", device="cpu")
    assert p.weight_settings() == {"seed": 0, "seeds": (0,)}
    assert p.weight_settings(["seed"]) == {"seed": 0}
    with pytest.raises(ValueError, match="no weight setting"):
        p.weight_settings(["tasks"])


def test_every_chapter_has_the_four_profiles():
    from hashlib_core.papers import CHAPTERS, chapter

    for slug in CHAPTERS:
        profiles = chapter(slug).profiles
        assert [getattr(profiles, n).name for n in ("smoke", "cpu", "small", "paper")] == [
            "smoke", "cpu", "small", "paper"]
        assert profiles.cpu.accelerator == "cpu" and profiles.cpu.budget_minutes <= 180


def test_synchronize_accepts_devices_and_names_and_is_a_no_op_on_cpu():
    import torch

    from hashlib_core.profiles import synchronize

    assert synchronize("cpu") is None and synchronize(torch.device("cpu")) is None
