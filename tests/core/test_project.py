"""Project hygiene: pins agree, notebooks are committed clean and parameterised, no machine paths."""
from __future__ import annotations

import json
import re
import subprocess
import tomllib

import pytest
import yaml

from hashlib_core.results import repo_root

ROOT = repo_root()


def _pins_from_pyproject() -> dict[str, str]:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(meta["dependencies"]) + [r for extra in meta["optional-dependencies"].values() for r in extra]
    pins = {}
    for r in reqs:
        name, _, version = r.partition("==")
        assert version, f"{r!r} is not pinned exactly"
        pins[name.lower()] = version
    return pins


def test_environment_yml_has_the_same_pins():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    conda_pins = {n.lower(): v for n, _, v in (p.partition("==") for p in pip if "==" in p)}
    assert conda_pins == _pins_from_pyproject()
    assert _pins_from_pyproject()["torch"] == "2.13.0"
    assert _pins_from_pyproject()["jupyter-book"] == "1.0.4.post1"


def _tracked(pattern: str) -> list:
    try:
        out = subprocess.run(["git", "ls-files", pattern], cwd=ROOT, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [ROOT / p for p in out.stdout.split()]


def test_book_notebooks_are_clean_and_parameterised():
    notebooks = sorted((ROOT / "book").glob("*.ipynb"))
    assert notebooks, "the book has no notebooks"
    for path in notebooks:
        nb = json.loads(path.read_text())
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        assert all(not c.get("outputs") and c.get("execution_count") is None for c in code), f"{path.name} has outputs"
        params = [c for c in code if "parameters" in c.get("metadata", {}).get("tags", [])]
        assert len(params) == 1, f"{path.name} needs exactly one cell tagged 'parameters'"
        src = "".join(params[0]["source"])
        assert re.search(r'^profile = "smoke"$', src, re.M), f"{path.name}: default profile must be smoke"
        assert re.search(r'^device = "auto"$', src, re.M), f"{path.name}: default device must be auto"


def test_no_machine_paths_in_tracked_files():
    # assembled from parts so that this file does not match itself
    roots = ["work", "root", "home/[a-z]+", "tmp/feas"]
    pattern = re.compile("(" + "|".join("/" + r + "/" for r in roots[:3]) + "|/" + roots[3] + ")")
    offenders = []
    for path in _tracked("*"):
        if path.suffix in {".png", ".gz", ".npz", ".pt", ".bin"} or not path.is_file():
            continue
        text = path.read_text(errors="ignore")
        if pattern.search(text):
            offenders.append(str(path.relative_to(ROOT)))
    assert not offenders, f"machine paths in: {offenders}"
