"""What a chapter page shows: the results of one profile, where they come from, and a one-line provenance.

:class:`Shown` is the evidence a claim reads and the tables and figures draw from (``Chapter.show`` builds it); its
reads go through the :class:`~hashlib_core.results.store.ResultsStore`, so every number is checked against the
digest its run recorded.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import pandas as pd

from hashlib_core.profiles import Profile
from hashlib_core.results.store import ResultsStore

__all__ = ["Shown"]


@dataclass(frozen=True)
class Shown:
    """The results a chapter page shows: which profile, where from, and a one-line provenance."""

    profile: Profile
    store: ResultsStore
    source: str                  # "committed" or "live"
    banner: str                  # Markdown: where the numbers come from
    notes: tuple[str, ...] = ()  # e.g. committed results skipped because they are stale
    #: results written under other settings than ``profile``'s ({name: settings that differ}); a claim refuses them
    stale: Mapping[str, Sequence[str]] = field(default_factory=dict)

    def table(self, name: str) -> pd.DataFrame:
        return self.store.read_table(name)

    def json(self, name: str) -> Any:
        return self.store.read_json(name)["data"]

    def meta(self, name: str) -> dict[str, Any]:
        return self.store.read_meta(name)

    def has(self, name: str) -> bool:
        return self.store.exists(name)
