"""Profiles, device selection and seeding."""
from __future__ import annotations

import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import ClassVar, Mapping

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
        # at most three hours, or up to five where the chapter's headline needs it (its profile class says why)
        cpu = profiles.cpu
        assert cpu.accelerator == "cpu" and cpu.budget_minutes <= 300, slug
        assert cpu.budget_minutes <= 180 or getattr(cpu, "BUDGET_NOTE", ""), slug


def test_synchronize_accepts_devices_and_names_and_is_a_no_op_on_cpu():
    import torch

    from hashlib_core.profiles import synchronize

    assert synchronize("cpu") is None and synchronize(torch.device("cpu")) is None


# ------------------------------------------------------------------------------------------------ bounds
@dataclass(frozen=True)
class _Bounded(Profile):
    heads: int = 2
    rate: float = 1e-3
    limit: int = 0
    steps: tuple[int, ...] = (5,)
    sizes: tuple[int, ...] = (0, 10)
    shift_seed: int = 0
    seeds: tuple[int, ...] = (0, 1)
    dropout: float = 0.1
    patience: int = 0
    ZERO_MEANS_ALL: ClassVar[frozenset[str]] = frozenset({"limit", "sizes"})
    ZERO_MEANS: ClassVar[Mapping[str, str]] = MappingProxyType({"patience": "none", "steps": "no trend"})
    BOUNDS: ClassVar[Mapping[str, str]] = MappingProxyType({"dropout": "[0, 1)"})


@pytest.mark.parametrize("overrides,message", [
    ({"heads": 0}, "heads must be >= 1, got 0"),
    ({"heads": -1}, "heads must be >= 1, got -1"),
    ({"rate": 0.0}, "rate must be > 0, got 0.0"),
    ({"rate": float("nan")}, "rate must be a finite number, got nan"),
    ({"rate": float("inf")}, "rate must be a finite number"),
    ({"limit": -1}, "limit must be >= 0 (0: all), got -1"),
    ({"patience": -2}, "patience must be >= 0 (0: none), got -2"),
    ({"steps": (5, 0)}, "steps must be >= 1, got 0"),        # a list's "none" is the empty list, not a 0
    ({"sizes": (-1,)}, "sizes must be >= 0 (0: all), got -1"),
    ({"shift_seed": -1}, "shift_seed must be >= 0, got -1"),
    ({"seeds": (0, -1)}, "seeds must be >= 0, got -1"),
    ({"dropout": 1.0}, "dropout must lie in [0, 1), got 1.0"),
    ({"dropout": -0.1}, "dropout must lie in [0, 1)"),
    ({"budget_minutes": 0.0}, "budget_minutes must be > 0"),
])
def test_every_number_setting_is_bounded_when_the_profile_is_built(overrides, message):
    with pytest.raises(ValueError) as info:
        _Bounded(**overrides)
    assert message in str(info.value)


def test_the_documented_zeros_and_bounds_are_accepted():
    p = _Bounded(limit=0, patience=0, steps=(), sizes=(0,), shift_seed=0, seeds=(0,), dropout=0.0)
    assert (p.limit, p.patience, p.steps, p.dropout) == (0, 0, (), 0.0)


def test_a_malformed_bounds_entry_is_a_clear_error():
    @dataclass(frozen=True)
    class Bad(Profile):
        rate: float = 0.5
        BOUNDS: ClassVar[Mapping[str, str]] = MappingProxyType({"rate": "0 to 1"})

    with pytest.raises(TypeError, match=r"BOUNDS\['rate'\] must be an interval"):
        Bad()


def test_a_misspelt_device_is_refused_when_the_profile_is_built():
    with pytest.raises(ValueError, match="unknown device 'bogus'"):
        _Bounded(device="bogus")


# ------------------------------------------------------------------------------------------ sections (the protocol)
from hashlib_core.protocol import Protocol  # noqa: E402


@dataclass(frozen=True)
class _Sectioned(Profile):
    width: int = 4
    protocol: Protocol = Protocol(learning_rates=(1e-3, 3e-3), seeds=(0, 1), max_steps=50, eval_every=10)


def _sectioned() -> ProfileSet:
    return ProfileSet(smoke=_Sectioned(name="smoke"), cpu=_Sectioned(name="cpu", width=8),
                      small=_Sectioned(name="small"), paper=_Sectioned(name="paper"))


def test_a_section_is_overridden_shown_and_compared_by_its_dotted_settings():
    profiles = _sectioned()
    p = profiles.from_cli(["--profile", "cpu", "--protocol.seeds=0,1,2", "--protocol.learning_rates=1e-4,1e-3"])
    assert p.protocol.seeds == (0, 1, 2) and p.protocol.learning_rates == (1e-4, 1e-3) and p.width == 8
    flat = p.to_dict()
    assert flat["protocol.seeds"] == (0, 1, 2) and flat["protocol.select_on"] == "heldout" and "protocol" not in flat
    assert p.setting("protocol.patience") == 3 and p.setting("width") == 8
    assert _Sectioned.default_settings()["protocol.max_steps"] == 50
    whole = profiles.get("cpu", protocol=p.protocol.override(patience=0))      # a whole section, from Python
    assert whole.protocol.patience == 0 and whole.protocol.seeds == (0, 1, 2)
    assert {"protocol.seeds", "protocol.max_steps"} <= set(p.weight_settings())
    assert p.expand(["protocol", "width", "gone"]) == {*(k for k in flat if k.startswith("protocol.")), "width",
                                                       "gone"}
    from hashlib_core.book import profiles_table
    table = profiles_table(profiles).set_index("setting")
    assert table.loc["protocol.seeds", "smoke"] == "0, 1" and table.loc["protocol.max_steps", "cpu"] == "50"


@pytest.mark.parametrize("argv, message", [
    (["--protocol.report_on=heldout"], "also the selection split"),
    (["--protocol.seeds=-1"], "seeds must list distinct ints >= 0"),
    (["--protocol.epochs=3"], "section 'protocol' has no setting 'epochs'"),
    (["--protocol=x"], "'protocol' is a section: override its settings as protocol.<name>=value"),
    (["--width.x=1"], "'width' has no settings of its own"),
    (["--protocol.patience=two"], "expects int"),
])
def test_bad_section_overrides_stop_at_the_command_line(argv, message, capsys):
    with pytest.raises(SystemExit):
        _sectioned().from_cli(["--profile", "smoke", *argv])
    assert re.search(message, capsys.readouterr().err)


def test_changing_a_protocol_setting_makes_stale_exactly_the_results_that_read_it(tmp_path, monkeypatch):
    import pandas as pd

    from hashlib_core.chapter import Chapter
    from hashlib_core.results import store as results_store

    monkeypatch.setattr(results_store, "git_state", lambda: {"git_commit": "c" * 40, "git_dirty": False})
    chapter = Chapter("toy_protocol", "A toy", _sectioned())

    @chapter.experiment("tuned", outputs=("tuned",))
    def tuned(ctx):
        return {"tuned": pd.DataFrame({"seeds": [len(ctx.profile.protocol.seeds)]})}

    @chapter.experiment("sizes", outputs=("sizes",), independent_of=("protocol",))   # the whole section
    def sizes(ctx):
        return {"sizes": pd.DataFrame({"width": [ctx.profile.width]})}

    chapter.run(_sectioned().get("cpu"), progress=False, results_root=tmp_path)
    assert chapter.stale("cpu", tmp_path) == {}
    other = _sectioned().get("cpu", **{"protocol.seeds": "0,1,2"})
    assert chapter.stale("cpu", tmp_path, profile=other) == {"tuned": ["protocol.seeds"]}
