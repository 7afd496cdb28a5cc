"""Every chapter's command line with every number setting set to 0, -1 and NaN: a clear error naming the setting,
or (0 only) the documented meaning the book's profile table shows. And the runners' own arguments: an unknown
chapter, a file where a folder goes, an empty list, a misspelt device.

The settings are parsed by each chapter's own ``Chapter.main`` parser (what ``python -m hashlib_core.papers.<slug>``
runs first); no experiment starts. A few of the issue's cases also run as real processes.
"""
from __future__ import annotations

import importlib
import subprocess
import sys
import typing
from dataclasses import fields
from typing import get_type_hints

import pytest

from hashlib_core import runner
from hashlib_core.book import profiles_table
from hashlib_core.parallel import main as parallel_main
from hashlib_core.profiles import Profile, check_device

SLUGS = ("dynamic_embeddings", "families", "hashformers", "multihashformer", "pnlp_mixer", "superbloom",
         "vocab_bottleneck")


def _chapter(slug: str):
    return importlib.import_module(f"hashlib_core.papers.{slug}.experiments").CHAPTER


def _number_settings(slug: str) -> list[str]:
    cls = type(_chapter(slug).profiles.smoke)
    hints = get_type_hints(cls)
    out = []
    for f in fields(cls):
        hint = hints[f.name]
        base = typing.get_args(hint)[0] if typing.get_origin(hint) is tuple else hint
        if base in (int, float):
            out.append(f.name)
    return out


CASES = [(slug, name, value) for slug in SLUGS for name in _number_settings(slug) for value in ("0", "-1", "nan")]


def _parse(slug: str, argv: list[str]):
    """What ``Chapter.main`` does with ``argv`` before it runs anything: the profile, or the parser's exit."""
    chapter = _chapter(slug)
    return chapter.profiles.parse_cli(argv, add_arguments=lambda p: p.add_argument(
        "--only", default=None, type=chapter._only_argument))


def _zero_is_documented(profile: Profile, name: str) -> bool:
    """0 is a value of ``name`` the chapter documents: a seed, a ZERO_MEANS(_ALL) setting, or one whose BOUNDS hold 0."""
    listed = isinstance(getattr(profile, name), tuple)
    if name == "seed" or name.endswith("_seed") or (listed and name.endswith("seeds")):
        return True
    if name in profile.BOUNDS:
        return profile.BOUNDS[name].startswith("[0")
    return name in profile.ZERO_MEANS_ALL or (not listed and name in profile.ZERO_MEANS)


@pytest.mark.parametrize("slug,name,value", CASES, ids=[f"{s}-{n}={v}" for s, n, v in CASES])
def test_every_number_setting_at_zero_minus_one_and_nan(slug, name, value, capsys):
    try:
        profile, _ = _parse(slug, ["--profile", "smoke", f"--{name}={value}"])
    except SystemExit as exc:
        assert exc.code == 2
        err = capsys.readouterr().err
        # the parser's message names the setting (and, for an int given "nan", the type it expects)
        assert name in err and "error:" in err, err
        return
    # accepted: only 0, and only where 0 has a documented meaning, which the book's profile table spells out
    assert value == "0", f"{slug} accepted --{name}={value}"
    assert _zero_is_documented(profile, name), f"{slug} accepted --{name}=0 without a documented meaning"
    if name in profile.ZERO_MEANS_ALL or name in profile.ZERO_MEANS:
        shown = profiles_table(_set_in_all(slug, name, value), [name]).iloc[0, 1:]
        assert not isinstance(getattr(profile, name), int) or set(shown) != {"0"}


def _set_in_all(slug: str, name: str, value: str):
    from hashlib_core.profiles import ProfileSet

    chapter = _chapter(slug)
    return ProfileSet(**{p: getattr(chapter.profiles, p).override(**{name: value})
                         for p in ("smoke", "cpu", "small", "paper")})


@pytest.mark.parametrize("text,ok", [("auto", True), ("cpu", True), ("cuda", True), ("cuda:1", True), ("mps", True),
                                     ("CUDA:0", True), ("bogus", False), ("cuda:", False), ("cuda:x", False),
                                     ("", False)])
def test_device_spelling(text, ok):
    if ok:
        assert check_device(text) == text
    else:
        with pytest.raises(ValueError, match="unknown device"):
            check_device(text)


@pytest.mark.parametrize("only", ["", ",", " , "])
def test_an_empty_only_list_is_refused_not_read_as_everything(only, capsys):
    with pytest.raises(SystemExit):
        _parse("families", ["--profile", "smoke", "--only", only])
    assert "names no experiment" in capsys.readouterr().err


def test_an_unknown_experiment_is_refused_at_the_command_line(capsys):
    with pytest.raises(SystemExit):
        _parse("families", ["--profile", "smoke", "--only", "replace,nope"])
    assert "unknown experiment(s) ['nope']" in capsys.readouterr().err


@pytest.mark.parametrize("argv,message", [
    (["nope", "--profile", "smoke"], "unknown chapter 'nope'"),
    (["superbloom", "--profile", "smoke"], "has no parallel jobs"),
    (["hashformers", "--profile", "smoke", "--logs", "README.md"], "--logs README.md is a file"),
    (["hashformers", "--profile", "smoke", "--workers", "0"], "--workers must be >= 1"),
    (["hashformers", "--profile", "smoke", "--deadline", "nan"], "--deadline must be a positive number"),
    (["hashformers", "--profile", "smoke", "--heads=0"], "heads must be >= 1"),
])
def test_the_parallel_runner_refuses_bad_arguments(argv, message, capsys, monkeypatch):
    from hashlib_core.results import repo_root

    monkeypatch.chdir(repo_root())
    with pytest.raises(SystemExit) as info:
        parallel_main(argv)
    assert info.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize("argv,message", [
    (["--chapters", ","], "names no chapter"),
    (["--chapters", ""], "names no chapter"),
    (["--chapters", "vocab_bottleneck", "--build-dir", "README.md"], "is a file, not a folder"),
    (["--chapters", "vocab_bottleneck", "--device", "bogus"], "unknown device 'bogus'"),
    (["--chapters", "vocab_bottleneck", "--timeout", "0"], "--timeout must be a positive number"),
])
def test_the_book_runner_refuses_bad_arguments(argv, message, monkeypatch):
    from hashlib_core.results import repo_root

    monkeypatch.chdir(repo_root())
    with pytest.raises(SystemExit) as info:
        runner.main(argv)
    assert message in str(info.value.code)


@pytest.mark.parametrize("argv,message", [
    (["hashformers", "--heads=0"], "heads must be >= 1, got 0"),
    (["families", "--lm_heads=0"], "lm_heads must be >= 1, got 0"),
    (["hashformers", "--pt_batch=0"], "pt_batch must be >= 1, got 0"),
    (["pnlp_mixer", "--learning_rate=nan"], "learning_rate must be a finite number"),
    (["multihashformer", "--max_train_tokens=-1"], "max_train_tokens must be >= 0 (0: all), got -1"),
    (["pnlp_mixer", "--train_examples=-1"], "train_examples must be >= 0 (0: all), got -1"),
    (["families", "--device", "bogus"], "unknown device 'bogus'"),
    (["families", "--only="], "names no experiment"),
])
def test_the_issues_cases_as_processes(argv, message):
    slug, *rest = argv
    done = subprocess.run([sys.executable, "-m", f"hashlib_core.papers.{slug}", "--profile", "smoke", *rest],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and message in done.stderr, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
