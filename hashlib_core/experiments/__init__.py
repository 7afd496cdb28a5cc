"""Experiment plumbing shared by the chapters: profiles, device and seed, training loop, batch runner.

Each chapter's experiments are a module here, runnable as a command
(``python -m hashlib_core.experiments.<chapter> --profile paper``); the chapter's notebook calls the same
functions in-process for the ``smoke`` and ``small`` profiles and reads the results files of longer runs.
"""
from hashlib_core.experiments.profiles import (
    PROFILE_NAMES, Profile, ProfileSet, load_or_run, seed_everything, select_device,
)

__all__ = ["PROFILE_NAMES", "Profile", "ProfileSet", "load_or_run", "seed_everything", "select_device"]
