"""Batch runner: execute chapters with papermill in one profile, then (optionally) build the HTML book.

    python -m hashlib_core.runner                         # every chapter, smoke profile, CPU, live results
    python -m hashlib_core.runner --chapters vocab_bottleneck --profile small --device cuda
    python -m hashlib_core.runner --profile smoke --source committed --html   # what `make book` runs

Chapters are the notebooks listed in ``_toc.yml``. Each is executed once into
``_build/executed/<profile>/<path>.ipynb`` with the parameters ``profile``, ``device`` and ``source`` injected by
papermill (``live``: compute the profile; ``committed``: show the richest committed results, paper > small > cpu,
computing only where none exist). A failing chapter does not stop the others (its partly executed copy keeps the
error; exit status 1). Each executed cell with stderr output or a traceback is reported (chapter, cell index).

With ``--html`` the book is built by ``jupyter-book build -W`` from a staging copy of the sources in which every
notebook is replaced by its executed copy (never executed again), with ``_static/``, the ``hashlib_core`` sources
(for ``literalinclude``) and, when the repository URL is known (``$BOOK_REPOSITORY_URL``, else a GitHub
``origin``), the repository link and Colab/Binder buttons. The last line printed is ``_build/html/index.html``.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import yaml

from hashlib_core.profiles import PROFILE_NAMES, check_device
from hashlib_core.repository_link import (BRANCH_ENV, REPOSITORY_ENV, configure_repository,
                                          github_https_url, repository_url, write_staged_config)
from hashlib_core.results import repo_root

__all__ = ["Chapter", "discover_chapters", "execution_order", "run_chapters", "stage_book", "build_html",
           "repository_url", "github_https_url", "configure_repository", "REPOSITORY_ENV", "BRANCH_ENV",
           "cell_problems", "main"]

#: top-level files and folders the book needs besides the chapters themselves
BOOK_FILES = ("_config.yml", "_toc.yml", "references.bib")
BOOK_DIR = "book"
STATIC_DIR = "_static"
PACKAGE_DIR = "hashlib_core"
SOURCES = ("live", "committed")
TRACEBACK = "Traceback (most recent call last)"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True)
class Chapter:
    name: str          # notebook stem, e.g. "vocab_bottleneck"
    source: Path       # the notebook in book/


@dataclass
class Outcome:
    chapter: str
    status: str        # "ok" or "failed"
    seconds: float
    output: Path
    error: str = ""


def _toc_files(node: object) -> list[str]:
    """Every ``file`` and ``root`` entry of a parsed ``_toc.yml``, in book order."""
    if isinstance(node, list):
        return [found for item in node for found in _toc_files(item)]
    if not isinstance(node, dict):
        return []
    found = [str(node[key]) for key in ("file", "root") if key in node]
    return found + [f for value in node.values() if isinstance(value, (list, dict)) for f in _toc_files(value)]


#: pages that gather the other chapters' results (the scorecard): executed after every chapter, whatever their place
#: in the book, so that they read what the chapters computed in the same build
GATHERING = ("scorecard",)


def execution_order(chapters: Sequence[Chapter]) -> list[Chapter]:
    """``chapters`` in book order, with the pages of :data:`GATHERING` moved to the end."""
    return sorted(chapters, key=lambda c: c.name in GATHERING)   # sorted() is stable


def discover_chapters(root: Path | None = None) -> list[Chapter]:
    """The notebooks listed in ``_toc.yml``, in book order."""
    root = root or repo_root()
    toc_path = root / "_toc.yml"
    if not toc_path.exists():
        raise FileNotFoundError(f"no table of contents at {toc_path}")
    chapters = []
    for entry in _toc_files(yaml.safe_load(toc_path.read_text(encoding="utf-8"))):
        path = root / entry
        nb = path if path.suffix == ".ipynb" else path.with_suffix(".ipynb")
        if nb.exists():
            chapters.append(Chapter(nb.stem, nb))
    return chapters


def select(chapters: list[Chapter], wanted: str) -> list[Chapter]:
    """The chapters ``wanted`` names (comma-separated notebook names, or ``all``); ``SystemExit`` naming the
    unknown ones, or when the list names none (``","`` or ``""`` would otherwise run nothing and exit 0)."""
    if wanted.strip() == "all":
        return chapters
    names = [w.strip() for w in wanted.split(",") if w.strip()]
    if not names:
        raise SystemExit(f"--chapters {wanted!r} names no chapter; give comma-separated notebook names (see --list) "
                         f"or 'all'")
    known = {c.name: c for c in chapters}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"unknown chapter(s): {', '.join(unknown)}; chapters in _toc.yml: {', '.join(known)}")
    return [known[n] for n in names]


def executed_dir(build_dir: Path, profile: str) -> Path:
    return build_dir / "executed" / profile


def run_chapters(
    chapters: Sequence[Chapter], *, profile: str, device: str, build_dir: Path, timeout: int | None,
    root: Path | None = None, log_output: bool = False, source: str = "live",
) -> list[Outcome]:
    """Execute each chapter once with papermill; never raises for a failing chapter."""
    import papermill as pm

    if source not in SOURCES:
        raise ValueError(f"source must be one of {SOURCES}, got {source!r}")
    root = root or repo_root()
    outcomes = []
    for ch in execution_order(chapters):
        out = executed_dir(build_dir, profile) / ch.source.relative_to(root)
        out.parent.mkdir(parents=True, exist_ok=True)
        print(f"[runner] {ch.name}: executing ({profile}, device={device}, source={source}) -> {out}", flush=True)
        start = time.perf_counter()
        try:
            pm.execute_notebook(
                str(ch.source), str(out), parameters={"profile": profile, "device": device, "source": source},
                cwd=str(ch.source.parent), progress_bar=False, log_output=log_output,
                execution_timeout=timeout, kernel_name="python3",
            )
            outcomes.append(Outcome(ch.name, "ok", time.perf_counter() - start, out))
        except Exception as exc:  # papermill raises PapermillExecutionError, kernels may die, ...
            first = str(exc).strip().splitlines()
            summary = next((line for line in reversed(first) if line.strip()), type(exc).__name__)
            outcomes.append(Outcome(ch.name, "failed", time.perf_counter() - start, out, summary[:200]))
    return outcomes


# --------------------------------------------------------------------------------- cell problems
def _output_text(output: dict) -> str:
    text = output.get("text", "") if output.get("output_type") == "stream" else output.get("data", {}).get(
        "text/plain", "")
    return "".join(text) if isinstance(text, list) else str(text)


def cell_problems(notebook: Path) -> list[tuple[int, int | None, str]]:
    """``(cell index in the source notebook, execution count, first line)`` for every executed cell that wrote
    to stderr, raised, or printed a traceback. The cells papermill adds (injected parameters, error banners) are
    not counted in the index."""
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    problems, injected = [], 0
    for index, cell in enumerate(nb.cells):
        if {"injected-parameters", "papermill-error-cell-tag"} & set(cell.get("metadata", {}).get("tags", [])):
            injected += 1
            continue
        found = []
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                found.append(("", f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"))
            elif output.get("output_type") == "stream" and output.get("name") == "stderr":
                found.append(("stderr: ", _output_text(output)))
            elif TRACEBACK in _output_text(output):
                text = _output_text(output)
                found.append(("traceback: ", text[text.index(TRACEBACK):]))
        if found:
            prefix, text = found[0]
            text = _ANSI.sub("", text)
            first = next((line.strip() for line in text.splitlines() if line.strip()), "")
            problems.append((index - injected, cell.get("execution_count"), prefix + first))
    return problems


def warn_cell_problems(outcomes: Sequence[Outcome]) -> int:
    """Print one warning per executed cell with stderr output or a traceback (never fails); return how many."""
    count = 0
    for outcome in outcomes:
        if not outcome.output.exists():
            continue
        for index, execution_count, first in cell_problems(outcome.output):
            count += 1
            where = f"cell {index}" + (f" (In [{execution_count}])" if execution_count is not None else "")
            print(f"[runner] warning: {outcome.chapter}: {where} of {BOOK_DIR}/{outcome.chapter}.ipynb has "
                  f"stderr output or a traceback: {first[:160]}", flush=True)
    return count


# ----------------------------------------------------------------------------------------- staging
def stage_book(chapters_executed: Sequence[Outcome], build_dir: Path, profile: str, root: Path | None = None) -> Path:
    """A copy of the book's sources in which every executed notebook replaces its source; with ``_static/``,
    the ``hashlib_core`` ``.py`` sources (for ``literalinclude``) and the repository settings."""
    root = root or repo_root()
    stage = build_dir / "stage" / profile
    if stage.exists():
        shutil.rmtree(stage)
    stage.mkdir(parents=True)
    for name in BOOK_FILES:
        shutil.copy2(root / name, stage / name)
    junk = shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__")
    shutil.copytree(root / BOOK_DIR, stage / BOOK_DIR, ignore=junk)
    if (root / STATIC_DIR).is_dir():
        shutil.copytree(root / STATIC_DIR, stage / STATIC_DIR, ignore=junk)
    for source in sorted((root / PACKAGE_DIR).rglob("*.py")):
        if "__pycache__" not in source.parts:
            target = stage / source.relative_to(root)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    executed_root = executed_dir(build_dir, profile)
    for outcome in chapters_executed:
        rel = outcome.output.relative_to(executed_root)
        _hide_default_parameters(outcome.output, stage / rel)
    write_staged_config(stage, root)
    return stage


def _hide_default_parameters(executed: Path, target: Path) -> None:
    """Copy an executed notebook, tagging the default ``parameters`` cell ``remove-cell`` when papermill injected
    the values actually used (its ``injected-parameters`` cell stays visible in the book)."""
    import nbformat

    nb = nbformat.read(executed, as_version=4)
    tags = [c.get("metadata", {}).get("tags", []) for c in nb.cells]
    if any("injected-parameters" in t for t in tags):
        for cell, cell_tags in zip(nb.cells, tags):
            if "parameters" in cell_tags and "remove-cell" not in cell_tags:
                cell.metadata["tags"] = [*cell_tags, "remove-cell"]
    nbformat.write(nb, target)


# ------------------------------------------------------------------------------------------ build
_BORDER = re.compile(r"^=+$")


def filter_build_output(lines: Iterable[str]) -> Iterable[str]:
    """jupyter-book's output without the lines that name the staged HTML folder (its "Output Path:", its closing
    "Your book's HTML pages are here" box, Sphinx's "The HTML pages are in"): the runner's path is the only one."""
    pending: list[str] = []
    skipping = False
    for line in lines:
        plain = _ANSI.sub("", line).strip()
        if skipping:
            skipping = not _BORDER.match(plain)
            continue
        if _BORDER.match(plain) or (pending and not plain):
            pending.append(line)
            continue
        if pending and "Finished generating HTML" in plain:
            pending, skipping = [], True
            continue
        yield from pending
        pending = []
        if not plain.startswith(("The HTML pages are in", "Output Path:")):
            yield line
    yield from pending


def _display_path(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def build_html(stage: Path, build_dir: Path) -> int:
    """``jupyter-book build -W`` on the staged sources; HTML lands in ``<build_dir>/html``."""
    exe = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(exe) if exe.exists() else "jupyter-book", "build", str(stage), "--path-output", str(stage),
           "-W", "-n", "--keep-going", "--all"]
    print("[runner] jupyter-book build " + _display_path(stage) + " -W -n --keep-going --all", flush=True)
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1) as proc:
        assert proc.stdout is not None
        for line in filter_build_output(proc.stdout):
            print(line, end="", flush=True)
    rc = proc.returncode
    html = build_dir / "html"
    if rc == 0:
        if html.exists():
            shutil.rmtree(html)
        shutil.copytree(stage / "_build" / "html", html)
        print(f"[runner] HTML book: {_display_path(html / 'index.html')}", flush=True)
    else:
        print(f"[runner] jupyter-book failed (exit status {rc}); no HTML book was written", flush=True)
    return rc


def print_summary(outcomes: Sequence[Outcome]) -> None:
    width = max([len("chapter")] + [len(o.chapter) for o in outcomes])
    print(f"\n{'chapter':<{width}}  status  seconds  output / error")
    for o in outcomes:
        detail = o.error if o.status != "ok" else str(o.output)
        print(f"{o.chapter:<{width}}  {o.status:<6}  {o.seconds:7.1f}  {detail}")
    failed = sum(o.status != "ok" for o in outcomes)
    print(f"{len(outcomes) - failed} passed, {failed} failed")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chapters", default="all", help="comma-separated notebook names, or 'all' (default)")
    parser.add_argument("--profile", choices=PROFILE_NAMES, default="smoke")
    parser.add_argument("--device", default="auto", help="auto (default), cpu, cuda, cuda:N")
    parser.add_argument("--source", choices=SOURCES, default="live",
                        help="live (default): compute the profile; committed: show the richest committed results "
                             "(paper > small > cpu) and compute only where none exist")
    parser.add_argument("--build-dir", default=None, help="default: _build at the repository root")
    parser.add_argument("--timeout", type=int, default=None, help="per-cell timeout in seconds (default: none)")
    parser.add_argument("--html", action="store_true", help="also build the HTML book from the executed copies")
    parser.add_argument("--list", action="store_true", help="list the chapters and exit")
    parser.add_argument("--log-output", action="store_true", help="stream the notebooks' output to this terminal")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    root = repo_root()
    chapters = discover_chapters(root)
    if args.list:
        for ch in chapters:
            print(f"{ch.name}\t{ch.source.relative_to(root)}")
        return 0
    wanted = select(chapters, args.chapters)
    build_dir = Path(args.build_dir) if args.build_dir else root / "_build"
    if build_dir.exists() and not build_dir.is_dir():
        raise SystemExit(f"--build-dir {build_dir} is a file, not a folder; give a folder (created if missing)")
    if args.timeout is not None and args.timeout < 1:
        raise SystemExit(f"--timeout must be a positive number of seconds per cell, got {args.timeout}; leave it out "
                         f"for no limit")
    try:
        check_device(args.device)
    except ValueError as exc:
        raise SystemExit(f"--device: {exc}") from None
    os.environ.setdefault("HASHLIB_DEVICE", args.device)
    outcomes = run_chapters(wanted, profile=args.profile, device=args.device, build_dir=build_dir,
                            timeout=args.timeout, root=root, log_output=args.log_output, source=args.source)
    print_summary(outcomes)
    warn_cell_problems(outcomes)
    rc = 0 if all(o.status == "ok" for o in outcomes) else 1
    if args.html:
        if wanted != chapters:
            print("[runner] --html builds the whole book: the chapters not run now keep no outputs", flush=True)
        stage = stage_book(outcomes, build_dir, args.profile, root)
        rc = build_html(stage, build_dir) or rc
    return rc


if __name__ == "__main__":
    raise SystemExit(main())
