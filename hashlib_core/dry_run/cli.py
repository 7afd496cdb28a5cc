"""``python -m hashlib_core.papers.<slug> --profile paper --dry-run``: the chapter skeleton's command line hands the
profile to :func:`run_cli`, which runs :func:`~hashlib_core.dry_run.runner.dry_run`, prints the report and returns
the exit status (1 when a check failed)."""
from __future__ import annotations

import os
from typing import Any

from hashlib_core.dry_run.runner import dry_run, render
from hashlib_core.profiles import Profile

__all__ = ["run_cli"]


def run_cli(chapter: Any, profile: Profile) -> int:
    """Run the dry run of ``profile`` in this process (it starts its own two processes) and print its report."""
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        raise SystemExit("the dry run starts its own processes: run it with `python -m hashlib_core.papers."
                         f"{chapter.slug} --profile {profile.name} --dry-run`, not under accelerate launch / torchrun")
    report = dry_run(chapter, profile)
    print(render(report), flush=True)
    return 0 if report.ok else 1
