"""The vocabulary-bottleneck chapter's four profiles (no training: they differ in how far the meta-device counts
are cross-checked against models with real weights)."""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import ClassVar, Mapping

from hashlib_core.profiles import Profile, ProfileSet

__all__ = ["VocabBottleneckProfile", "PROFILES"]


@dataclass(frozen=True)
class VocabBottleneckProfile(Profile):
    """No training in this chapter: profiles differ only in how far the meta-device counts are cross-checked
    against models with real weights (allocated in bfloat16 on the CPU)."""

    #: build models with at most this many parameters for real and compare counts (0 = meta only)
    materialize_up_to: int = 0

    ZERO_MEANS: ClassVar[Mapping[str, str]] = MappingProxyType({"materialize_up_to": "none (meta only)"})


PROFILES: ProfileSet[VocabBottleneckProfile] = ProfileSet(
    # meta-device counts only
    smoke=VocabBottleneckProfile(name="smoke", materialize_up_to=0, budget_minutes=0.5),
    # every model up to 1.5B parameters also built with real bf16 weights (a few GB of memory)
    cpu=VocabBottleneckProfile(name="cpu", materialize_up_to=1_500_000_000, budget_minutes=3.0),
    # models up to 200M parameters cross-checked
    small=VocabBottleneckProfile(name="small", materialize_up_to=200_000_000, budget_minutes=1.0),
    # every model cross-checked, Mistral-7B included (about 15 GB of memory)
    paper=VocabBottleneckProfile(name="paper", materialize_up_to=8_000_000_000, budget_minutes=5.0),
)
