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


def _notebook(path):
    return json.loads(path.read_text())


def test_notebooks_are_paired_with_their_text_files():
    """book/<slug>.ipynb and book/src/<slug>.md (jupytext, MyST) hold the same cells, so a change reads as a diff."""
    import jupytext

    for path in sorted((ROOT / "book").glob("*.ipynb")):
        text = ROOT / "book" / "src" / f"{path.stem}.md"
        assert text.exists(), f"{path.name} has no paired text file {text.relative_to(ROOT)}"
        paired = jupytext.read(text)
        cells = _notebook(path)["cells"]
        assert [(c["cell_type"], "".join(c["source"]).strip(), c["metadata"].get("tags", [])) for c in cells] == [
            (c.cell_type, c.source.strip(), c.metadata.get("tags", [])) for c in paired.cells
        ], f"{path.name} differs from {text.name}: run `make notebooks` (jupytext --sync)"


def test_notebook_code_is_short_calls_into_the_library():
    forbidden = ("plt.", "matplotlib", "import pandas", ".merge(", ".pivot", ".groupby(", "np.", "glue(")
    for path in sorted((ROOT / "book").glob("*.ipynb")):
        for i, cell in enumerate(_notebook(path)["cells"]):
            if cell["cell_type"] != "code" or "parameters" in cell["metadata"].get("tags", []):
                continue
            src = "".join(cell["source"])
            lines = [line for line in src.splitlines() if line.strip()]
            assert len(lines) <= 10, f"{path.name} cell {i} is longer than ten lines"
            hits = [f for f in forbidden if f in src]
            assert not hits, f"{path.name} cell {i} does analysis or plotting in the notebook: {hits}"
        params = [c for c in _notebook(path)["cells"] if "parameters" in c["metadata"].get("tags", [])]
        assert re.search(r'^source = "live"$', "".join(params[0]["source"]), re.M), path.name


def test_every_figure_has_a_caption_a_label_and_a_reference():
    for path in sorted((ROOT / "book").glob("*.ipynb")):
        prose = "\n".join("".join(c["source"]) for c in _notebook(path)["cells"] if c["cell_type"] == "markdown")
        code = "\n".join("".join(c["source"]) for c in _notebook(path)["cells"] if c["cell_type"] == "code")
        figures = re.findall(r"```\{glue:figure\} (\S+)\n:name: (\S+)\n\n(.+?)```", prose, re.S)
        assert len(figures) == prose.count("{glue:figure}"), f"{path.name}: a figure lacks a :name: or a caption"
        for key, label, caption in figures:
            assert f'book.figure("{key}"' in code, f"{path.name}: figure {key} is never glued"
            assert caption.strip(), f"{path.name}: figure {key} has no caption"
            assert f"{{numref}}`{label}`" in prose, f"{path.name}: figure {label} is never referenced"


def test_committed_results_are_complete_and_not_stale():
    """Every committed results folder (cpu, small, paper) was produced by today's profile of its name and holds every
    result the chapter writes: the book never shows numbers the code would not reproduce."""
    from hashlib_core.chapter import COMMITTED_ORDER
    from hashlib_core.papers import CHAPTERS, chapter

    checked = 0
    for slug in CHAPTERS:
        ch = chapter(slug)
        for name in COMMITTED_ORDER:
            store = ch.store(name)
            if not store.names():
                continue
            checked += 1
            assert ch.stale(name) == {}, f"results/{slug}/{name}/ is stale: rerun --profile {name}"
            missing = [n for n in ch.result_names(ch.profiles.get(name)) if not store.exists(n)]
            assert not missing, f"results/{slug}/{name}/ lacks {missing}"
    assert checked, "no committed results were found"


def test_committed_cpu_runs_keep_to_the_cpu_budget():
    """The cpu profile's promise: at most an hour per experiment, three hours per chapter (wall times recorded in
    the results' metadata by the run that wrote them); up to five where the chapter's headline needs it to settle,
    which its profile says (``budget_minutes`` over 180 and a ``BUDGET_NOTE`` the page shows)."""
    from hashlib_core.papers import CHAPTERS, chapter

    for slug in CHAPTERS:
        ch = chapter(slug)
        store = ch.store("cpu")
        if not store.names():
            continue
        walls = {}
        for exp in ch.selected(ch.profiles.get("cpu")):
            written = [o for o in exp.outputs if store.exists(o)]
            if written:
                meta = store.read_meta(written[0])
                assert meta.get("wall_time_s") is not None, f"{slug}/{written[0]}: no wall time recorded"
                walls[exp.name] = float(meta["wall_time_s"])
        over = {name: round(w / 60, 1) for name, w in walls.items() if w > 3600}
        assert not over, f"{slug}: cpu experiments over an hour (minutes): {over}"
        cpu = ch.profiles.get("cpu")
        budget = min(max(180.0, cpu.budget_minutes), 300.0)
        if cpu.budget_minutes > 180:
            assert getattr(cpu, "BUDGET_NOTE", ""), f"{slug}: a cpu budget over three hours needs a BUDGET_NOTE"
        assert sum(walls.values()) <= budget * 60, \
            f"{slug}: the cpu run took {sum(walls.values()) / 60:.0f} minutes, over its {budget:.0f}"
