"""The dry run of a chapter's profile: what shows, on a laptop and in seconds, that a long GPU run will start.

``python -m hashlib_core.papers.<slug> --profile paper --dry-run`` builds every model of the profile on the
``meta`` device and checks its size against the paper's table, runs the real data loaders on a few hundred records
(the hub mocked by a local fixture of the same columns), trains a tiny copy of the model for two steps on two CPU
processes through the shared training loop, checkpoints and resumes, and writes the plan of the real run.

Modules: :mod:`~hashlib_core.dry_run.spec` (what a chapter declares, ``papers/<slug>/dry_run.py``),
:mod:`~hashlib_core.dry_run.hub` (the hub mock), :mod:`~hashlib_core.dry_run.steps` (two steps on N processes),
:mod:`~hashlib_core.dry_run.runner` (the four checks and their tables), :mod:`~hashlib_core.dry_run.cli` (the
command line).
"""
from hashlib_core.dry_run.hub import mock_hub, text_rows
from hashlib_core.dry_run.runner import DryRunReport, dry_run, render
from hashlib_core.dry_run.spec import DataSample, DryRun, ModelSize, glue_samples, spec_of

__all__ = ["DryRun", "ModelSize", "DataSample", "glue_samples", "spec_of", "mock_hub", "text_rows", "dry_run", "render",
           "DryRunReport"]
