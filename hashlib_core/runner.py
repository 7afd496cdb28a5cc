"""Batch runner: execute chapters with papermill in one profile, then (optionally) build the HTML book.

    python -m hashlib_core.runner                         # every chapter, smoke profile, CPU
    python -m hashlib_core.runner --chapters vocab_bottleneck --profile small --device cuda
    python -m hashlib_core.runner --profile smoke --html  # what `make book` runs

Chapters are the notebooks listed in ``_toc.yml`` (only real chapters are listed there). Each is executed once,
with the parameters ``profile`` and ``device`` injected by papermill, into
``_build/executed/<profile>/<path>.ipynb``; the source notebooks stay without outputs. A failing chapter does not
stop the others: its partly executed copy is kept (the error is in it), the summary table marks it, and the command
exits with status 1.

With ``--html`` the book is built by ``jupyter-book build -W`` from a staging copy of the sources in which every
notebook is replaced by its executed copy, so building the HTML never executes a notebook again.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import yaml

from hashlib_core.profiles import PROFILE_NAMES
from hashlib_core.results import repo_root

__all__ = ["Chapter", "discover_chapters", "run_chapters", "stage_book", "build_html", "main"]

#: top-level files and folders the book needs besides the chapters themselves
BOOK_FILES = ("_config.yml", "_toc.yml", "references.bib")
BOOK_DIR = "book"


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
    found: list[str] = []
    if isinstance(node, dict):
        if "file" in node:
            found.append(str(node["file"]))
        if "root" in node:
            found.append(str(node["root"]))
        for value in node.values():
            if isinstance(value, (list, dict)):
                found.extend(_toc_files(value))
    elif isinstance(node, list):
        for item in node:
            found.extend(_toc_files(item))
    return found


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
    if wanted.strip() in {"", "all"}:
        return chapters
    names = [w.strip() for w in wanted.split(",") if w.strip()]
    known = {c.name: c for c in chapters}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"unknown chapter(s): {', '.join(unknown)}; chapters in _toc.yml: {', '.join(known)}")
    return [known[n] for n in names]


def executed_dir(build_dir: Path, profile: str) -> Path:
    return build_dir / "executed" / profile


def run_chapters(
    chapters: Sequence[Chapter], *, profile: str, device: str, build_dir: Path, timeout: int | None,
    root: Path | None = None, log_output: bool = False,
) -> list[Outcome]:
    """Execute each chapter once with papermill; never raises for a failing chapter."""
    import papermill as pm

    root = root or repo_root()
    outcomes = []
    for ch in chapters:
        out = executed_dir(build_dir, profile) / ch.source.relative_to(root)
        out.parent.mkdir(parents=True, exist_ok=True)
        print(f"[runner] {ch.name}: executing ({profile}, device={device}) -> {out}", flush=True)
        start = time.perf_counter()
        try:
            pm.execute_notebook(
                str(ch.source), str(out), parameters={"profile": profile, "device": device},
                cwd=str(ch.source.parent), progress_bar=False, log_output=log_output,
                execution_timeout=timeout, kernel_name="python3",
            )
            outcomes.append(Outcome(ch.name, "ok", time.perf_counter() - start, out))
        except Exception as exc:  # papermill raises PapermillExecutionError, kernels may die, ...
            first = str(exc).strip().splitlines()
            summary = next((line for line in reversed(first) if line.strip()), type(exc).__name__)
            outcomes.append(Outcome(ch.name, "failed", time.perf_counter() - start, out, summary[:200]))
    return outcomes


def stage_book(chapters_executed: Sequence[Outcome], build_dir: Path, profile: str, root: Path | None = None) -> Path:
    """A copy of the book's sources in which every executed notebook replaces its source."""
    root = root or repo_root()
    stage = build_dir / "stage" / profile
    if stage.exists():
        shutil.rmtree(stage)
    stage.mkdir(parents=True)
    for name in BOOK_FILES:
        shutil.copy2(root / name, stage / name)
    shutil.copytree(root / BOOK_DIR, stage / BOOK_DIR,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    executed_root = executed_dir(build_dir, profile)
    for outcome in chapters_executed:
        rel = outcome.output.relative_to(executed_root)
        _hide_default_parameters(outcome.output, stage / rel)
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


def build_html(stage: Path, build_dir: Path) -> int:
    """``jupyter-book build -W`` on the staged sources; HTML lands in ``<build_dir>/html``."""
    exe = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(exe) if exe.exists() else "jupyter-book", "build", str(stage), "--path-output", str(stage),
           "-W", "-n", "--keep-going", "--all"]
    print("[runner] " + " ".join(cmd), flush=True)
    rc = subprocess.call(cmd)
    html = build_dir / "html"
    if rc == 0:
        if html.exists():
            shutil.rmtree(html)
        shutil.copytree(stage / "_build" / "html", html)
        print(f"[runner] HTML book: {html / 'index.html'}", flush=True)
    return rc


def print_summary(outcomes: Sequence[Outcome]) -> None:
    width = max([len("chapter")] + [len(o.chapter) for o in outcomes])
    print(f"\n{'chapter':<{width}}  status  seconds  output / error")
    for o in outcomes:
        detail = o.error if o.status != "ok" else str(o.output)
        print(f"{o.chapter:<{width}}  {o.status:<6}  {o.seconds:7.1f}  {detail}")
    failed = sum(o.status != "ok" for o in outcomes)
    print(f"{len(outcomes) - failed} passed, {failed} failed")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chapters", default="all", help="comma-separated notebook names, or 'all' (default)")
    parser.add_argument("--profile", choices=PROFILE_NAMES, default="smoke")
    parser.add_argument("--device", default="auto", help="auto (default), cpu, cuda, cuda:N")
    parser.add_argument("--build-dir", default=None, help="default: _build at the repository root")
    parser.add_argument("--timeout", type=int, default=None, help="per-cell timeout in seconds (default: none)")
    parser.add_argument("--html", action="store_true", help="also build the HTML book from the executed copies")
    parser.add_argument("--list", action="store_true", help="list the chapters and exit")
    parser.add_argument("--log-output", action="store_true", help="stream the notebooks' output to this terminal")
    args = parser.parse_args(argv)

    root = repo_root()
    chapters = discover_chapters(root)
    if args.list:
        for ch in chapters:
            print(f"{ch.name}\t{ch.source.relative_to(root)}")
        return 0
    wanted = select(chapters, args.chapters)
    build_dir = Path(args.build_dir) if args.build_dir else root / "_build"
    os.environ.setdefault("HASHLIB_DEVICE", args.device)
    outcomes = run_chapters(wanted, profile=args.profile, device=args.device, build_dir=build_dir,
                            timeout=args.timeout, root=root, log_output=args.log_output)
    print_summary(outcomes)
    rc = 0 if all(o.status == "ok" for o in outcomes) else 1
    if args.html:
        if wanted != chapters:
            print("[runner] --html builds the whole book: the chapters not run now keep no outputs", flush=True)
        stage = stage_book(outcomes, build_dir, args.profile, root)
        rc = build_html(stage, build_dir) or rc
    return rc


if __name__ == "__main__":
    raise SystemExit(main())
