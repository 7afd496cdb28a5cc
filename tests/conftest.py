"""Fixtures shared by the test suite.

``mirror``: the real dataset mirror named by ``HASHLIB_DATA_DIR`` (downloads off, empty cache). Tests that need it
are skipped when it is not set, unless ``HASHLIB_REQUIRE_DATA=1`` (CI), where the skip becomes a failure.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from hashlib_core import data


@pytest.fixture(scope="module")
def mirror(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The real dataset mirror named by HASHLIB_DATA_DIR; downloads off and an empty cache meanwhile."""
    root = os.environ.get(data.DATA_DIR_ENV, "").strip()
    if not root:
        message = f"{data.DATA_DIR_ENV} is not set, so the tests that read the real dataset mirror cannot run"
        if os.environ.get("HASHLIB_REQUIRE_DATA") == "1":
            pytest.fail(message + " (HASHLIB_REQUIRE_DATA=1 turns this skip into a failure)")
        pytest.skip(message)
    path = Path(root).expanduser()
    if not path.is_dir():
        pytest.fail(f"{data.DATA_DIR_ENV}={root} is not a directory")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(data.OFFLINE_ENV, "1")
        patch.setenv(data.CACHE_DIR_ENV, str(tmp_path_factory.mktemp("unused-cache")))
        yield path
