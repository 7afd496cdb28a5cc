"""A chapter run split into parallel jobs on one machine, then the whole run that reads their work back.

Small models leave a GPU mostly idle: one process spends its time in Python launching kernels, and the chapter's
models train one after another. Here each job is the chapter's own command for a few experiments and models
(``--only ... --models=...``), run as its own process with one CPU thread and its own scratch results folder; all
jobs share the repository's checkpoint folder. A job writes every pre-training checkpoint and every fine-tuning
outcome it trains there, under the same digests the whole run computes. Then the whole chapter run (``final``) finds
each of them and reads it back instead of training: :func:`hashlib_core.training.train` resumes a finished
checkpoint at once (and waits while another process still trains that folder), :func:`hashlib_core.glue.finetune`
returns a finished outcome, and each experiment's metadata adds the time the reused runs cost
(``reused_compute_s``). So the committed results are those of one ordinary chapter run, computed in parallel.

Jobs marked ``shared`` write to the final results folder directly (experiments with no training, which the final
run then leaves out of its ``--only``).

``python -m hashlib_core.parallel <slug> --profile P [--device D] [--workers N] [--deadline S] [--logs DIR]``
(the chapter's ``hashlib_core.papers.<slug>.jobs`` supplies ``parallel_jobs(profile) -> (jobs, final arguments)``).
"""
from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

__all__ = ["Job", "run_jobs", "main"]


@dataclass(frozen=True)
class Job:
    """One process: a name (its log file), the chapter command's arguments after ``--profile`` (an ``--only`` list,
    run with ``--no-dependents``), and whether it writes to the final results folder (``shared``) or to a scratch
    folder of its own."""

    name: str
    args: tuple[str, ...]
    shared: bool = False

    def __post_init__(self) -> None:
        if not self.name or not all(c.isalnum() or c in "-_." for c in self.name):
            raise ValueError(f"a job's name must be letters, digits, '-', '_' or '.', got {self.name!r}")


def _stop_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _command(module: str, common: Sequence[str], args: Sequence[str]) -> list[str]:
    return [sys.executable, "-m", module, *common, *args, "--no-dependents"]


def run_jobs(module: str, common: Sequence[str], jobs: Sequence[Job], final: Sequence[str] | None, *,
             workers: int, logs: Path, deadline_s: float | None = None, scratch: Path | None = None,
             env: dict[str, str] | None = None) -> dict:
    """Run ``jobs`` (at most ``workers`` at a time, in the given order) then, if all succeeded, ``final`` (the
    arguments of the whole run; None: none). Every process's output goes to ``logs/<name>.log``; a summary with each
    job's wall time and exit status to ``logs/parallel.json``. Past ``deadline_s`` seconds the jobs still running are
    stopped (their process groups) and the final run is skipped. Returns the summary."""
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    names = [j.name for j in jobs]
    if len(set(names)) != len(names):
        raise ValueError(f"job names must be distinct (they name the log files), got {names}")
    logs.mkdir(parents=True, exist_ok=True)
    scratch = Path(scratch or tempfile.mkdtemp(prefix="parallel-results-"))
    base_env = {**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"}
    start = time.perf_counter()
    pending, running, done = list(jobs), {}, []

    def launch(job: Job) -> subprocess.Popen:
        job_env = dict(base_env, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false")
        if not job.shared:
            job_env["HASHLIB_RESULTS_DIR"] = str(scratch / job.name)
        log = open(logs / f"{job.name}.log", "w")
        proc = subprocess.Popen(_command(module, common, job.args), stdout=log, stderr=subprocess.STDOUT,
                                env=job_env, start_new_session=True)
        log.close()
        return proc

    timed_out = False
    children: list[subprocess.Popen] = []      # every process started, stopped with its group if this one is

    def record(job: Job, returncode: int | None, began: float | None = None, **extra: str) -> dict:
        row = {"name": job.name, "args": list(job.args), "shared": job.shared, "returncode": returncode}
        if began is not None:
            row.update(started_s=round(began - start, 1), wall_s=round(time.perf_counter() - began, 1))
        return {**row, **extra}

    def stop(signum, frame):                    # a SIGTERM (e.g. an outer timeout) stops the jobs too
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        while pending or running:
            while pending and len(running) < workers:
                job = pending.pop(0)
                proc = launch(job)
                children.append(proc)
                running[job.name] = (job, proc, time.perf_counter())
            time.sleep(0.5)
            for name, (job, proc, began) in list(running.items()):
                if proc.poll() is not None:
                    done.append(record(job, proc.returncode, began))
                    del running[name]
            if deadline_s is not None and time.perf_counter() - start > deadline_s and (running or pending):
                timed_out = True
                for job, proc, began in running.values():
                    _stop_group(proc)
                    done.append(record(job, None, began, stopped="deadline"))
                done += [record(job, None, stopped="not started (deadline)") for job in pending]
                running, pending = {}, []
        summary = {"module": module, "common": list(common), "workers": workers, "jobs": done,
                   "jobs_wall_s": round(time.perf_counter() - start, 1), "timed_out": timed_out}
        failed = [d["name"] for d in done if d["returncode"] != 0]
        summary["failed"] = failed
        if final is not None and not failed:
            began = time.perf_counter()
            with open(logs / "final.log", "w") as log:
                proc = subprocess.Popen(_command(module, common, final), stdout=log, stderr=subprocess.STDOUT,
                                        env=base_env, start_new_session=True)
            children.append(proc)
            code = proc.wait()
            summary["final"] = {"args": list(final), "returncode": code,
                                "wall_s": round(time.perf_counter() - began, 1)}
    finally:
        signal.signal(signal.SIGTERM, previous)
        for proc in children:
            if proc.poll() is None:
                _stop_group(proc)
    summary["wall_s"] = round(time.perf_counter() - start, 1)
    (logs / "parallel.json").write_text(json.dumps(summary, indent=1))
    return summary


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapter", help="the chapter's slug (hashlib_core.papers.<slug>.jobs has parallel_jobs)")
    parser.add_argument("--profile", required=True)
    parser.add_argument("--device", default=None)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--deadline", type=float, default=None, help="seconds; stop the jobs and skip the final run")
    parser.add_argument("--logs", type=Path, default=Path("parallel-logs"))
    args, overrides = parser.parse_known_args(argv)
    papers = Path(__file__).resolve().parent / "papers"
    chapters = sorted(p.name for p in papers.iterdir() if (p / "__init__.py").is_file())
    with_jobs = [c for c in chapters if (papers / c / "jobs.py").is_file()]
    if args.chapter not in chapters:
        parser.error(f"unknown chapter {args.chapter!r}; the chapters are {', '.join(chapters)} (with parallel jobs: "
                     f"{', '.join(with_jobs)})")
    if args.chapter not in with_jobs:
        parser.error(f"chapter {args.chapter!r} has no parallel jobs (hashlib_core.papers.{args.chapter}.jobs): run "
                     f"it with python -m hashlib_core.papers.{args.chapter} instead (with parallel jobs: "
                     f"{', '.join(with_jobs)})")
    if args.logs.exists() and not args.logs.is_dir():
        parser.error(f"--logs {args.logs} is a file, not a folder; give a folder for the jobs' logs (created if "
                     f"missing)")
    if args.workers < 1:
        parser.error(f"--workers must be >= 1, got {args.workers}")
    if args.deadline is not None and not (math.isfinite(args.deadline) and args.deadline > 0):
        parser.error(f"--deadline must be a positive number of seconds, got {args.deadline}")
    jobs_module = importlib.import_module(f"hashlib_core.papers.{args.chapter}.jobs")
    common = ["--profile", args.profile, *(["--device", args.device] if args.device else []), *overrides]
    profile, _ = jobs_module.CHAPTER.profiles.parse_cli(common)
    jobs, final = jobs_module.parallel_jobs(profile)
    summary = run_jobs(f"hashlib_core.papers.{args.chapter}", common, jobs, final, workers=args.workers,
                       logs=args.logs, deadline_s=args.deadline)
    print(json.dumps({k: v for k, v in summary.items() if k != "jobs"}, indent=1))
    ok = not summary["failed"] and summary.get("final", {}).get("returncode", 0) == 0
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
