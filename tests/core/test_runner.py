"""The batch runner: chapter discovery, selection, going on past a failing chapter, the notebook parameters, the
staged book (static files, package sources, repository link), stderr warnings, and the single HTML path."""
from __future__ import annotations

import json
import re
import shutil
import subprocess

import nbformat
import pytest
import yaml

from hashlib_core import runner
from hashlib_core.results import repo_root

PARAMETERS = 'profile = "smoke"\ndevice = "auto"\nsource = "live"'


def _book(tmp_path, cells_by_name, parameters=PARAMETERS):
    (tmp_path / "book").mkdir()
    files = []
    for name, source in cells_by_name.items():
        nb = nbformat.v4.new_notebook()
        params = parameters[name] if isinstance(parameters, dict) else parameters
        nb.cells = [nbformat.v4.new_code_cell(params, metadata={"tags": ["parameters"]}),
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
    assert names[0] == "scorecard"                        # first page after the introduction


def test_gathering_pages_execute_after_every_chapter(tmp_path):
    chapters = runner.discover_chapters(_book(tmp_path, {"a": "1", "scorecard": "2", "b": "3"}))
    assert [c.name for c in chapters] == ["a", "scorecard", "b"]          # the book's order
    assert [c.name for c in runner.execution_order(chapters)] == ["a", "b", "scorecard"]


def test_source_option_defaults_to_live_and_accepts_only_live_or_committed(capsys):
    parser = runner.build_parser()
    assert parser.parse_args([]).source == "live"
    assert parser.parse_args(["--source", "committed"]).source == "committed"
    with pytest.raises(SystemExit):
        parser.parse_args(["--source", "paper"])
    assert "invalid choice: 'paper'" in capsys.readouterr().err
    with pytest.raises(ValueError, match="source must be one of"):
        runner.run_chapters([], profile="smoke", device="cpu", build_dir=None, timeout=None, source="cached")


@pytest.mark.slow
def test_failing_chapter_does_not_stop_the_others(tmp_path, capsys):
    params = {"bad": PARAMETERS, "good": PARAMETERS, "old": 'profile = "smoke"\ndevice = "auto"'}
    root = _book(tmp_path, {"bad": "raise RuntimeError('boom')", "good": "print(profile, device, source)",
                            "old": "print(profile, device)"}, parameters=params)
    outcomes = runner.run_chapters(runner.discover_chapters(root), profile="small", device="cpu",
                                   build_dir=tmp_path / "_build", timeout=120, root=root, source="committed")
    # a notebook without a `source` parameter still runs (papermill only warns)
    assert [(o.chapter, o.status) for o in outcomes] == [("bad", "failed"), ("good", "ok"), ("old", "ok")]
    assert "boom" in outcomes[0].error
    for outcome, expected in ((outcomes[1], "small cpu committed"), (outcomes[2], "small cpu")):
        executed = json.loads(outcome.output.read_text())
        printed = "".join("".join(o.get("text", "")) for c in executed["cells"] for o in c.get("outputs", []))
        assert expected in printed       # papermill injected the parameters
    runner.print_summary(outcomes)
    assert "2 passed, 1 failed" in capsys.readouterr().out
    # the failing cell, at its index in the source notebook (papermill's error banner and injected cell not counted)
    assert runner.warn_cell_problems(outcomes) == 1
    assert "[runner] warning: bad: cell 1 (In [3]) of book/bad.ipynb has stderr output or a traceback: " \
           "RuntimeError: boom" in capsys.readouterr().out


# ------------------------------------------------------------------------------- stderr warnings
def _executed_notebook(path):
    nb = nbformat.v4.new_notebook()
    out = nbformat.v4.new_output
    nb.cells = [
        nbformat.v4.new_code_cell('profile = "smoke"', metadata={"tags": ["parameters"]}, execution_count=1),
        nbformat.v4.new_code_cell('profile = "paper"', metadata={"tags": ["injected-parameters"]},
                                  execution_count=2),
        nbformat.v4.new_markdown_cell("# text"),
        nbformat.v4.new_code_cell("print('ok')", execution_count=3,
                                  outputs=[out("stream", name="stdout", text="ok\n")]),
        nbformat.v4.new_code_cell("log()", execution_count=4,
                                  outputs=[out("stream", name="stdout", text="fine\n"),
                                           out("stream", name="stderr", text="\n[RANK 0] Removed shared tensor\n")]),
        nbformat.v4.new_code_cell("1/0", execution_count=5,
                                  outputs=[out("error", ename="ZeroDivisionError", evalue="division by zero",
                                               traceback=["\x1b[31mTraceback\x1b[0m"])]),
        nbformat.v4.new_code_cell("show()", execution_count=6,
                                  outputs=[out("stream", name="stdout",
                                               text="Traceback (most recent call last):\n  File x\nKeyError: 1\n")]),
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def test_cell_problems_name_the_source_cell_index(tmp_path):
    problems = runner.cell_problems(_executed_notebook(tmp_path / "ch.ipynb"))
    # indices are those of the source notebook: the injected-parameters cell (executed index 1) does not count
    assert problems == [
        (3, 4, "stderr: [RANK 0] Removed shared tensor"),
        (4, 5, "ZeroDivisionError: division by zero"),
        (5, 6, "traceback: Traceback (most recent call last):"),
    ]


def test_warn_cell_problems_prints_one_line_per_cell_and_never_fails(tmp_path, capsys):
    clean = nbformat.v4.new_notebook()
    clean.cells = [nbformat.v4.new_code_cell("1", execution_count=1)]
    nbformat.write(clean, tmp_path / "clean.ipynb")
    outcomes = [runner.Outcome("noisy", "ok", 1.0, _executed_notebook(tmp_path / "noisy.ipynb")),
                runner.Outcome("clean", "ok", 1.0, tmp_path / "clean.ipynb"),
                runner.Outcome("missing", "failed", 1.0, tmp_path / "missing.ipynb", "kernel died")]
    assert runner.warn_cell_problems(outcomes) == 3
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "[runner] warning: noisy: cell 3 (In [4]) of book/noisy.ipynb has stderr output or a traceback: "
        "stderr: [RANK 0] Removed shared tensor",
        "[runner] warning: noisy: cell 4 (In [5]) of book/noisy.ipynb has stderr output or a traceback: "
        "ZeroDivisionError: division by zero",
        "[runner] warning: noisy: cell 5 (In [6]) of book/noisy.ipynb has stderr output or a traceback: "
        "traceback: Traceback (most recent call last):",
    ]


# ------------------------------------------------------------------------------- repository URL
@pytest.mark.parametrize(("remote", "expected"), [
    ("https://github.com/owner/repo", "https://github.com/owner/repo"),
    ("https://github.com/owner/repo.git", "https://github.com/owner/repo"),
    ("https://github.com/owner/repo/", "https://github.com/owner/repo"),
    ("http://github.com/owner/repo.git", "https://github.com/owner/repo"),
    ("https://user:secret-token@github.com/owner/repo.git", "https://github.com/owner/repo"),
    ("git@github.com:owner/my.repo.git", "https://github.com/owner/my.repo"),
    ("github.com:owner/repo", "https://github.com/owner/repo"),
    ("ssh://git@github.com/owner/repo.git", "https://github.com/owner/repo"),
    ("ssh://git@github.com:22/owner/repo.git", "https://github.com/owner/repo"),
    ("  git@github.com:owner/repo.git\n", "https://github.com/owner/repo"),
    ("https://gitlab.com/owner/repo.git", None),
    ("git@gitlab.com:owner/repo.git", None),
    ("https://github.com/owner", None),
    ("https://github.com/owner/repo/tree/main", None),
    ("https://github.com.evil.example/owner/repo", None),
    ("../upstream.git", None),
    ("", None),
])
def test_github_remote_is_normalised_to_https(remote, expected):
    assert runner.github_https_url(remote) == expected


def _git_repo(path, remote=None):
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    if remote:
        subprocess.run(["git", "-C", str(path), "remote", "add", "origin", remote], check=True)
    return path


def test_repository_url_prefers_the_variable_then_a_github_origin(tmp_path, monkeypatch):
    monkeypatch.delenv(runner.REPOSITORY_ENV, raising=False)
    on_github = _git_repo(tmp_path / "gh", "git@github.com:owner/book.git")
    assert runner.repository_url(on_github) == "https://github.com/owner/book"
    monkeypatch.setenv(runner.REPOSITORY_ENV, "https://git.example.org/team/book.git/")
    assert runner.repository_url(on_github) == "https://git.example.org/team/book"
    monkeypatch.setenv(runner.REPOSITORY_ENV, "git@github.com:other/book.git")
    assert runner.repository_url(on_github) == "https://github.com/other/book"
    monkeypatch.setenv(runner.REPOSITORY_ENV, "   ")
    assert runner.repository_url(on_github) == "https://github.com/owner/book"


def test_repository_url_is_never_invented(tmp_path, monkeypatch):
    monkeypatch.delenv(runner.REPOSITORY_ENV, raising=False)
    assert runner.repository_url(_git_repo(tmp_path / "local", str(tmp_path / "upstream.git"))) is None
    assert runner.repository_url(_git_repo(tmp_path / "no-remote")) is None
    (tmp_path / "plain").mkdir()
    assert runner.repository_url(tmp_path / "plain") is None


@pytest.mark.parametrize("value", ["github.com/owner/repo", "http://example.org/owner/repo", "https://example.org",
                                   "file:///srv/repo.git"])
def test_bad_repository_variable_is_an_error_naming_the_fix(tmp_path, monkeypatch, value):
    monkeypatch.setenv(runner.REPOSITORY_ENV, value)
    with pytest.raises(SystemExit, match=rf"{runner.REPOSITORY_ENV}=.* is not a repository URL: set it to https://"):
        runner.repository_url(tmp_path)


def test_configure_repository_adds_link_and_launch_buttons_only_with_a_url():
    base = yaml.safe_load((repo_root() / "_config.yml").read_text())
    with_url = runner.configure_repository(json.loads(json.dumps(base)), "https://github.com/o/r", "main", "")
    assert with_url["repository"] == {"url": "https://github.com/o/r", "branch": "main", "path_to_book": ""}
    assert with_url["html"]["use_repository_button"] is True
    assert with_url["launch_buttons"]["colab_url"] == "https://colab.research.google.com"
    assert with_url["launch_buttons"]["binderhub_url"] == "https://mybinder.org"
    assert with_url["launch_buttons"]["notebook_interface"] == "classic"
    assert with_url["sphinx"] == base["sphinx"]
    without = runner.configure_repository(json.loads(json.dumps(with_url)), None, "main", "")
    assert "repository" not in without and "launch_buttons" not in without
    assert without["html"]["use_repository_button"] is False
    # Jupyter Book accepts both and turns them into the theme's options
    from jupyter_book.config import get_final_config

    sphinx, _ = get_final_config(user_yaml=with_url, cli_config={"latex_individualpages": False},
                                 validate=True, raise_on_invalid=True)
    assert sphinx["html_theme_options"]["repository_url"] == "https://github.com/o/r"
    assert sphinx["html_theme_options"]["launch_buttons"]["colab_url"] == "https://colab.research.google.com"
    assert sphinx["html_theme_options"]["use_repository_button"] is True
    sphinx, _ = get_final_config(user_yaml=without, cli_config={"latex_individualpages": False},
                                 validate=True, raise_on_invalid=True)
    assert sphinx["html_theme_options"]["use_repository_button"] is False


# ------------------------------------------------------------------------------------ staging
def _repo_like(tmp_path):
    root = _book(tmp_path, {"ch": "1"})
    for name in ("_config.yml", "references.bib"):
        shutil.copy2(repo_root() / name, root / name)
    (root / "_static").mkdir()
    (root / "_static" / "hashbook.css").write_text("table.hb-table { color: red; }\n")
    package = root / "hashlib_core"
    (package / "papers" / "demo").mkdir(parents=True)
    (package / "__pycache__").mkdir()
    (package / "__init__.py").write_text("")
    (package / "papers" / "demo" / "modeling.py").write_text("def embed(x):\n    return x + 1\n")
    (package / "__pycache__" / "junk.cpython-311.pyc").write_bytes(b"\0")
    (package / "notes.txt").write_text("not a source")
    executed = runner.executed_dir(root / "_build", "smoke") / "book" / "ch.ipynb"
    _executed_notebook(executed)
    return root, [runner.Outcome("ch", "ok", 1.0, executed)]


def test_stage_book_copies_static_files_and_package_sources(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(runner.REPOSITORY_ENV, raising=False)
    root, outcomes = _repo_like(tmp_path)
    stage = runner.stage_book(outcomes, root / "_build", "smoke", root)
    assert (stage / "_static" / "hashbook.css").read_text() == (root / "_static" / "hashbook.css").read_text()
    copied = sorted(p.relative_to(stage).as_posix() for p in (stage / "hashlib_core").rglob("*") if p.is_file())
    assert copied == ["hashlib_core/__init__.py", "hashlib_core/papers/demo/modeling.py"]
    # a chapter's `literalinclude` path, relative to book/<chapter>.ipynb, resolves in the staged book
    assert (stage / "book" / "../hashlib_core/papers/demo/modeling.py").resolve().is_file()
    staged = nbformat.read(stage / "book" / "ch.ipynb", as_version=4)
    assert "remove-cell" in staged.cells[0].metadata["tags"]            # default parameters hidden
    config = yaml.safe_load((stage / "_config.yml").read_text())
    assert "hashlib_core/*" in config["exclude_patterns"]
    assert "repository" not in config and "launch_buttons" not in config
    assert config["html"]["use_repository_button"] is False
    hints = [line for line in capsys.readouterr().out.splitlines() if runner.REPOSITORY_ENV in line]
    assert len(hints) == 1 and "no repository link or Colab/Binder buttons" in hints[0]


def test_stage_book_writes_the_repository_link_when_known(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(runner.REPOSITORY_ENV, "git@github.com:owner/hashbook.git")
    monkeypatch.setenv(runner.BRANCH_ENV, "release")
    root, outcomes = _repo_like(tmp_path)
    config = yaml.safe_load((runner.stage_book(outcomes, root / "_build", "smoke", root) / "_config.yml").read_text())
    assert config["repository"] == {"url": "https://github.com/owner/hashbook", "branch": "release",
                                    "path_to_book": ""}
    assert config["html"]["use_repository_button"] is True
    assert config["launch_buttons"]["colab_url"] == "https://colab.research.google.com"
    assert config["sphinx"]["config"]["mathjax_path"] == "mathjax/tex-chtml.js"
    assert "https://github.com/owner/hashbook (branch release)" in capsys.readouterr().out


# ------------------------------------------------------------------------------- one HTML path
def test_build_output_filter_drops_the_staged_html_paths():
    border = "\x1b[92m" + "=" * 79 + "\x1b[0m\n"
    lines = ["Running Jupyter-Book v1.0.4.post1\n", "Output Path: /x/_build/stage/smoke/_build/html\n",
             "Running Sphinx v7.4.7\n", "build succeeded.\n", "\n",
             "The HTML pages are in _build/stage/smoke/_build/html.\n", "\n", border, "\n",
             "Finished generating HTML for book.\n", "Your book's HTML pages are here:\n",
             "    _build/stage/smoke/_build/html/\n", "Or paste this line directly into your browser bar:\n",
             "    file:///x/_build/stage/smoke/_build/html/index.html\n", "\n", border, "\n"]
    kept = list(runner.filter_build_output(lines))
    assert kept == ["Running Jupyter-Book v1.0.4.post1\n", "Running Sphinx v7.4.7\n", "build succeeded.\n",
                    "\n", "\n", "\n"]
    error_box = [border, "\n", "There was an error in building your book. Look above for the cause.\n", "\n", border]
    assert list(runner.filter_build_output(error_box)) == error_box


@pytest.mark.slow
def test_built_book_serves_its_own_mathjax_css_and_literalinclude(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(runner.REPOSITORY_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    root, outcomes = _repo_like(tmp_path)
    shutil.copy2(repo_root() / "_static" / "hashbook.css", root / "_static" / "hashbook.css")
    executed = nbformat.read(outcomes[0].output, as_version=4)
    executed.cells = [nbformat.v4.new_markdown_cell(
        "# Chapter\n\nThe table $E \\in \\mathbb{R}^{V\\times d}$ and\n\n$$\nh = \\sum_i E_{s_i}\n$$\n\n"
        "```{literalinclude} ../hashlib_core/papers/demo/modeling.py\n:pyobject: embed\n```\n")]
    nbformat.write(executed, outcomes[0].output)
    stage = runner.stage_book(outcomes, root / "_build", "smoke", root)
    assert runner.build_html(stage, root / "_build") == 0
    html = root / "_build" / "html"
    page = (html / "book" / "ch.html").read_text()
    assert re.search(r'<script (async="async"|defer="defer") src="\.\./_static/mathjax/tex-chtml\.js">', page)
    assert "cdn.jsdelivr" not in page and "mathjax@3" not in page
    assert (html / "_static" / "mathjax" / "tex-chtml.js").stat().st_size > 500_000
    assert list((html / "_static" / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2").glob("MathJax_Main-*.woff"))
    assert "_static/hashbook.css" in page and (html / "_static" / "hashbook.css").is_file()
    code = re.sub(r"<[^>]+>", "", page.split('<div class="highlight">', 1)[1].split("</pre>", 1)[0])
    assert code.strip() == "def embed(x):\n    return x + 1"                      # the literalinclude
    printed = capsys.readouterr().out.splitlines()
    assert printed[-1] == "[runner] HTML book: _build/html/index.html"
    assert [line for line in printed if "_build/html" in line] == [printed[-1]]      # one path: the final one
    assert not [line for line in printed if "here:" in line or "Finished generating HTML" in line]
