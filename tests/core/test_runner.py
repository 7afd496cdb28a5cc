"""The batch runner: chapter discovery, selection, and going on past a failing chapter."""
from __future__ import annotations

import json

import nbformat
import pytest

from hashlib_core import runner


def _book(tmp_path, cells_by_name):
    (tmp_path / "book").mkdir()
    files = []
    for name, source in cells_by_name.items():
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell('profile = "smoke"\ndevice = "auto"', metadata={"tags": ["parameters"]}),
                    nbformat.v4.new_code_cell(source)]
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nbformat.write(nb, tmp_path / "book" / f"{name}.ipynb")
        files.append(f"  - file: book/{name}")
    (tmp_path / "book" / "intro.md").write_text("# Intro\n")
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: book/intro\nchapters:\n" + "\n".join(files) + "\n")
    return tmp_path


def test_discover_and_select(tmp_path):
    root = _book(tmp_path, {"a": "1", "b": "2"})
    chapters = runner.discover_chapters(root)
    assert [c.name for c in chapters] == ["a", "b"]
    assert [c.name for c in runner.select(chapters, "b")] == ["b"]
    assert runner.select(chapters, "all") == chapters
    with pytest.raises(SystemExit, match="unknown chapter"):
        runner.select(chapters, "c")


def test_repository_toc_lists_real_notebooks():
    names = [c.name for c in runner.discover_chapters()]
    assert "vocab_bottleneck" in names


@pytest.mark.slow
def test_failing_chapter_does_not_stop_the_others(tmp_path, capsys):
    root = _book(tmp_path, {"bad": "raise RuntimeError('boom')", "good": "print(profile, device)"})
    outcomes = runner.run_chapters(runner.discover_chapters(root), profile="small", device="cpu",
                                   build_dir=tmp_path / "_build", timeout=120, root=root)
    assert [(o.chapter, o.status) for o in outcomes] == [("bad", "failed"), ("good", "ok")]
    assert "boom" in outcomes[0].error
    executed = json.loads(outcomes[1].output.read_text())
    printed = "".join("".join(o.get("text", "")) for c in executed["cells"] for o in c.get("outputs", []))
    assert "small cpu" in printed       # papermill injected the parameters
    runner.print_summary(outcomes)
    assert "1 passed, 1 failed" in capsys.readouterr().out
