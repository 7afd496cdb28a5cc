"""Profiles (``smoke`` / ``small`` / ``paper``), device selection and seeding, shared by every chapter.

Every chapter runs in three profiles:

``smoke``
    CPU, continuous integration: seconds to a minute, tiny shapes. Proves the code path end to end; its numbers
    are not meant to match a paper.
``small``
    One GPU, at most ten minutes: reproduces the paper's *trends* (orderings, ratios) at reduced scale.
``paper``
    The paper's hyper-parameters, for users with large GPU hosts.

A chapter declares its own knobs by subclassing :class:`Profile` (a frozen dataclass) and listing one instance per
profile in a :class:`ProfileSet`. Overrides are type-checked, in the spirit of nanoGPT's configurator::

    @dataclass(frozen=True)
    class MyProfile(Profile):
        layers: int = 2
        hidden: int = 64

    PROFILES = ProfileSet(
        smoke=MyProfile(name="smoke", layers=1, hidden=32),
        small=MyProfile(name="small", accelerator="gpu", layers=4, hidden=256),
        paper=MyProfile(name="paper", accelerator="gpu", layers=12, hidden=768),
    )
    cfg = PROFILES.get("smoke", hidden=48)            # typed override
    cfg = PROFILES.from_cli(["--profile", "small", "--hidden=128"])
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import random
from dataclasses import dataclass, field, fields, replace
from typing import Any, Callable, ClassVar, Generic, Sequence, TypeVar, get_type_hints

import numpy as np

__all__ = [
    "PROFILE_NAMES",
    "Profile",
    "ProfileSet",
    "load_or_run",
    "select_device",
    "seed_everything",
]

PROFILE_NAMES = ("smoke", "small", "paper")


@dataclass(frozen=True)
class Profile:
    """Knobs every chapter has. Subclass it to add a chapter's own (all fields need defaults)."""

    name: str = "smoke"
    seed: int = 0
    #: what the profile is meant for: "cpu" (runs anywhere) or "gpu" (expects an accelerator; still runs on CPU,
    #: slowly, if asked).
    accelerator: str = "cpu"
    #: "auto" picks CUDA when present, else CPU; "cpu", "cuda", "cuda:1", "mps" force one.
    device: str = "auto"
    #: wall-clock budget the profile is designed for, in minutes (documentation and progress estimates only).
    budget_minutes: float = 1.0

    description: ClassVar[str] = ""

    def __post_init__(self) -> None:
        if self.name not in PROFILE_NAMES:
            raise ValueError(f"profile name must be one of {PROFILE_NAMES}, got {self.name!r}")
        if self.accelerator not in {"cpu", "gpu"}:
            raise ValueError(f"accelerator must be 'cpu' or 'gpu', got {self.accelerator!r}")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative int, got {self.seed!r}")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def override(self, **overrides: Any) -> "Profile":
        """A copy with ``overrides`` applied; unknown keys and wrong types raise ``ValueError``/``TypeError``."""
        hints = get_type_hints(type(self))
        known = {f.name for f in fields(self)}
        for key, value in overrides.items():
            if key not in known:
                raise ValueError(
                    f"{type(self).__name__} has no setting {key!r}; known settings: {', '.join(sorted(known))}"
                )
            overrides[key] = _coerce(key, value, hints[key])
        return replace(self, **overrides)


def _coerce(key: str, value: Any, hint: Any) -> Any:
    """Coerce a CLI string to the field's type; check non-string values."""
    base = {"int": int, "float": float, "str": str, "bool": bool}.get(getattr(hint, "__name__", str(hint)), None)
    if base is None:
        # Optional[...] / unions / containers: accept as given (strings parsed as Python literals if possible)
        if isinstance(value, str):
            import ast

            try:
                return ast.literal_eval(value)
            except (ValueError, SyntaxError):
                return value
        return value
    if isinstance(value, str) and base is not str:
        if base is bool:
            low = value.strip().lower()
            if low in {"1", "true", "yes", "on"}:
                return True
            if low in {"0", "false", "no", "off"}:
                return False
            raise TypeError(f"setting {key!r} expects a boolean (true/false), got {value!r}")
        try:
            return base(value)
        except ValueError:
            raise TypeError(f"setting {key!r} expects {base.__name__}, got {value!r}") from None
    if base is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, base) or (base is int and isinstance(value, bool)):
        raise TypeError(f"setting {key!r} expects {base.__name__}, got {type(value).__name__} {value!r}")
    return value


P = TypeVar("P", bound=Profile)


@dataclass(frozen=True)
class ProfileSet(Generic[P]):
    """The three presets of one chapter."""

    smoke: P
    small: P
    paper: P
    names: tuple[str, ...] = field(default=PROFILE_NAMES, init=False)

    def __post_init__(self) -> None:
        for name in PROFILE_NAMES:
            p = getattr(self, name)
            if not isinstance(p, Profile) or p.name != name:
                raise ValueError(f"ProfileSet.{name} must be a Profile named {name!r}, got {p!r}")
        if len({type(getattr(self, n)) for n in PROFILE_NAMES}) != 1:
            raise TypeError("the three profiles of a chapter must be instances of one Profile subclass")

    def get(self, name: str, **overrides: Any) -> P:
        if name not in PROFILE_NAMES:
            raise ValueError(f"unknown profile {name!r}; choose one of {', '.join(PROFILE_NAMES)}")
        return getattr(self, name).override(**overrides)

    def argument_parser(self, description: str = "") -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(
            description=description,
            epilog="Any profile setting can be overridden as --key=value; settings: "
            + ", ".join(f.name for f in fields(self.smoke) if f.name != "name"),
        )
        parser.add_argument("--profile", choices=PROFILE_NAMES, default="smoke")
        parser.add_argument("--device", default=None, help="auto (default), cpu, cuda, cuda:N or mps")
        return parser

    def from_cli(self, argv: Sequence[str] | None = None, description: str = "") -> P:
        """Parse ``--profile NAME [--device D] [--key=value ...]`` into a typed profile."""
        parser = self.argument_parser(description)
        args, rest = parser.parse_known_args(argv)
        overrides: dict[str, Any] = {}
        for item in rest:
            if not item.startswith("--") or "=" not in item:
                parser.error(f"unrecognised argument {item!r}: overrides are written --key=value")
            key, value = item[2:].split("=", 1)
            overrides[key.replace("-", "_")] = value
        if args.device is not None:
            overrides["device"] = args.device
        try:
            return self.get(args.profile, **overrides)
        except (TypeError, ValueError) as exc:
            parser.error(str(exc))
            raise  # unreachable: parser.error exits

    def table(self) -> list[dict[str, Any]]:
        """The three presets as rows (for the book's "what each profile runs" tables)."""
        return [getattr(self, n).to_dict() for n in PROFILE_NAMES]


def select_device(preference: str | None = "auto"):
    """The ``torch.device`` to run on.

    ``"auto"`` (or ``None``) honours the environment variable ``HASHLIB_DEVICE`` if set, else picks CUDA when
    available, else CPU. Asking for CUDA on a machine without it raises ``RuntimeError`` saying what to do.
    """
    import torch

    pref = (preference or "auto").strip().lower()
    if pref == "auto":
        pref = os.environ.get("HASHLIB_DEVICE", "auto").strip().lower() or "auto"
    if pref == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if pref.startswith("cuda"):
        if not torch.cuda.is_available():
            raise RuntimeError(
                f"device {preference!r} was requested but this torch build sees no CUDA device "
                f"(torch {torch.__version__}); use --device cpu or install the CUDA build of torch (README, GPU hosts)"
            )
        dev = torch.device(pref)
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise RuntimeError(f"device {pref!r} does not exist: {torch.cuda.device_count()} CUDA device(s) visible")
        return dev
    if pref == "mps":
        if not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
            raise RuntimeError("device 'mps' was requested but is not available; use --device cpu")
        return torch.device("mps")
    if pref == "cpu":
        return torch.device("cpu")
    raise ValueError(f"unknown device {preference!r}; use auto, cpu, cuda, cuda:N or mps")


def seed_everything(seed: int, *, deterministic: bool = False) -> np.random.Generator:
    """Seed Python, NumPy and torch (all devices); return a fresh ``numpy.random.Generator`` for the caller.

    With ``deterministic=True`` torch is also asked for deterministic kernels (slower on GPU).
    """
    import torch

    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
    if deterministic:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True)
    return np.random.default_rng(seed)


def load_or_run(store: Any, names: Sequence[str], profile: Profile, run: Callable[[], Any]) -> Any:
    """Return ``store`` after making sure the results ``names`` exist for ``profile``; call ``run()`` if needed.

    What a chapter notebook calls, so that the book shows the right numbers without repeating work:

    * ``paper``: the results files of a long run (committed, or written by the chapter's command) are shown as they
      are; ``run()`` only if one is missing.
    * ``smoke`` and ``small``: computed in-process, except that results written by the **same configuration at the
      same git commit from a clean tree** are reused (this is what lets continuous integration execute a notebook
      for nbval and again for the book without training twice).
    """
    from hashlib_core.results import _git_state, _jsonable

    def current(name: str) -> bool:
        if not store.exists(name):
            return False
        if profile.name == "paper":
            return True
        meta = store.read_meta(name)
        state = _git_state()
        # compared as stored (JSON): tuple-valued settings come back as lists
        return (meta.get("config") == _jsonable(profile.to_dict()) and state["git_commit"] is not None
                and meta.get("git_commit") == state["git_commit"]
                and meta.get("git_dirty") is False and state["git_dirty"] is False)

    if not all(current(n) for n in names):
        run()
        missing = [n for n in names if not store.exists(n)]
        if missing:
            raise RuntimeError(f"the run did not write {missing} in {store.dir}")
    return store
