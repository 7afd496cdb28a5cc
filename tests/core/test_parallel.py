"""hashlib_core.parallel: jobs run side by side in their own results folders, then the whole run; a failure or the
deadline stops the whole run from starting; bad job lists are refused."""
from __future__ import annotations

import json
import os
import textwrap

import pytest

from hashlib_core.parallel import Job, run_jobs

#: a stand-in chapter command: writes its arguments to $HASHLIB_RESULTS_DIR/<name>.json, sleeps or fails on request
FAKE = textwrap.dedent("""
    import json, os, sys, time
    args = sys.argv[1:]
    name = args[args.index("--only") + 1]
    if name == "fail":
        sys.exit(3)
    if name == "sleep":
        time.sleep(60)
    root = os.environ.get("HASHLIB_RESULTS_DIR", "shared-root")
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, name + ".json"), "w") as f:
        json.dump({"args": args, "threads": os.environ.get("OMP_NUM_THREADS")}, f)
""")


@pytest.fixture()
def fake_module(tmp_path, monkeypatch):
    (tmp_path / "fakechapter.py").write_text(FAKE)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.setenv("HASHLIB_RESULTS_DIR", str(tmp_path / "final"))
    return "fakechapter"


def _read(path):
    return json.loads(path.read_text())


def test_jobs_then_the_whole_run(tmp_path, fake_module):
    jobs = [Job("a", ("--only", "a")), Job("b", ("--only", "b")), Job("s", ("--only", "s"), shared=True)]
    summary = run_jobs(fake_module, ["--profile", "smoke"], jobs, ["--only", "whole"], workers=2,
                       logs=tmp_path / "logs", scratch=tmp_path / "scratch")
    assert summary["failed"] == [] and summary["final"]["returncode"] == 0 and not summary["timed_out"]
    # each job in its own scratch folder, one thread, exactly its experiments; the shared one in the final folder
    a = _read(tmp_path / "scratch" / "a" / "a.json")
    assert a["args"] == ["--profile", "smoke", "--only", "a", "--no-dependents"] and a["threads"] == "1"
    assert (tmp_path / "scratch" / "b" / "b.json").is_file()
    assert (tmp_path / "final" / "s.json").is_file()
    whole = _read(tmp_path / "final" / "whole.json")
    assert whole["args"][-2:] == ["whole", "--no-dependents"] and whole["threads"] != "1"
    assert {d["name"] for d in summary["jobs"]} == {"a", "b", "s"}
    assert _read(tmp_path / "logs" / "parallel.json")["final"]["returncode"] == 0


def test_a_failed_job_skips_the_whole_run(tmp_path, fake_module):
    summary = run_jobs(fake_module, [], [Job("ok", ("--only", "ok")), Job("bad", ("--only", "fail"))],
                       ["--only", "whole"], workers=4, logs=tmp_path / "logs", scratch=tmp_path / "scratch")
    assert summary["failed"] == ["bad"] and "final" not in summary
    assert not (tmp_path / "final" / "whole.json").exists()


def test_the_deadline_stops_the_jobs_and_the_whole_run(tmp_path, fake_module):
    summary = run_jobs(fake_module, [], [Job("slow", ("--only", "sleep")), Job("later", ("--only", "x"))],
                       ["--only", "whole"], workers=1, logs=tmp_path / "logs", deadline_s=2.0,
                       scratch=tmp_path / "scratch")
    assert summary["timed_out"] and sorted(summary["failed"]) == ["later", "slow"] and "final" not in summary
    stopped = {d["name"]: d["stopped"] for d in summary["jobs"]}
    assert stopped == {"slow": "deadline", "later": "not started (deadline)"}
    assert summary["wall_s"] < 30


def test_bad_job_lists_are_refused(tmp_path):
    with pytest.raises(ValueError, match="distinct"):
        run_jobs("m", [], [Job("a", ()), Job("a", ())], None, workers=1, logs=tmp_path)
    with pytest.raises(ValueError, match="workers"):
        run_jobs("m", [], [Job("a", ())], None, workers=0, logs=tmp_path)
    with pytest.raises(ValueError, match="letters, digits"):
        Job("a/b", ())


def test_a_chapter_without_jobs_is_named(capsys):
    from hashlib_core.parallel import main

    with pytest.raises(SystemExit):
        main(["vocab_bottleneck", "--profile", "smoke"])
    assert "no parallel jobs" in capsys.readouterr().err
