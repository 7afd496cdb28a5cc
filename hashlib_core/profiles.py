"""Profiles (``smoke`` / ``cpu`` / ``small`` / ``paper``), device selection and seeding, shared by every chapter.

Every chapter runs in four profiles:

``smoke``
    CPU, continuous integration: seconds to a minute, tiny shapes. Proves the code path end to end; its numbers
    are not meant to match a paper.
``cpu``
    Two CPU cores, at most three hours per chapter (each experiment at most an hour; up to five hours where the
    chapter's headline needs it to settle, which its profile class says in a ``BUDGET_NOTE`` the page shows): models
    large enough to really learn, so that a paper's claims can be tested. Its committed results
    (``results/<chapter>/cpu/``) are the book's numbers when no GPU run exists.
``small``
    One GPU, about ten minutes: reproduces the paper's *trends* (orderings, ratios) at reduced scale.
``paper``
    The paper's hyper-parameters, for users with large GPU hosts.

A chapter declares its own knobs by subclassing :class:`Profile` (a frozen dataclass; a comment on every knob)
and listing one instance per profile in a :class:`ProfileSet`. Overrides are type-checked, in the spirit of
nanoGPT's configurator; list settings are tuples, written on the command line as comma-separated values::

    @dataclass(frozen=True)
    class MyProfile(Profile):
        #: encoder depth
        layers: int = 2
        #: GLUE tasks to fine-tune on
        tasks: tuple[str, ...] = ("sst2",)
        #: settings that never change a trained weight (left out of checkpoint digests)
        EVALUATION_ONLY: ClassVar[frozenset[str]] = frozenset({"tasks"})

    PROFILES = ProfileSet(smoke=MyProfile(name="smoke", layers=1), cpu=..., small=..., paper=...)
    cfg = PROFILES.get("smoke", layers=4)                                   # typed override
    cfg = PROFILES.from_cli(["--profile", "small", "--tasks=rte,sst2"])     # the same from a command line

A setting whose value is a dataclass is a **section** (the experimental protocol,
:class:`hashlib_core.protocol.Protocol`): its settings are dotted everywhere, ``--protocol.seeds=0,1,2`` on the
command line, ``protocol.seeds`` in the book's profile tables, in results' configurations and in ``independent_of``,
so that changing one makes stale exactly the results whose experiments read it.
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import os
import random
import typing
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any, Callable, ClassVar, Generic, Mapping, Sequence, TypeVar, get_type_hints

import numpy as np

from hashlib_core.devices import check_device, select_device, synchronize

__all__ = [
    "PROFILE_NAMES",
    "Profile",
    "ProfileSet",
    "select_device",
    "check_device",
    "synchronize",
    "seed_everything",
]

PROFILE_NAMES = ("smoke", "cpu", "small", "paper")
#: Settings of the base class that say where and how a run happens, never what it computes.
RUN_SETTINGS = frozenset({"name", "device", "accelerator", "budget_minutes"})


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
    #: settings (of a subclass) that never change a trained weight: evaluation sizes, which tables to write, ...
    EVALUATION_ONLY: ClassVar[frozenset[str]] = frozenset()
    #: settings (of a subclass, evaluation-only too) that choose a parallel job's share of a run: the whole run is
    #: their default, results written before such a setting existed count as whole runs, and a result written with
    #: any other value is a job's partial result (stale: never shown, see :meth:`hashlib_core.chapter.Chapter.stale`)
    SHARE_SETTINGS: ClassVar[frozenset[str]] = frozenset()
    #: int settings where 0 means "no limit" (every example, every word); the book shows them as "all"
    ZERO_MEANS_ALL: ClassVar[frozenset[str]] = frozenset()
    #: settings where 0 (or, for a list, the empty list) defers to another setting or means "none", and what the book
    #: shows for it there (e.g. "as max_epochs")
    ZERO_MEANS: ClassVar[Mapping[str, str]] = MappingProxyType({})
    #: the range of a number setting the rule below does not fit, written as an interval: ``"[0, 1)"`` (a dropout
    #: rate), ``"[0, inf)"`` (a weight decay, where 0 is an ordinary value), ``"(0, 1)"`` (a share)
    BOUNDS: ClassVar[Mapping[str, str]] = MappingProxyType({})

    def __post_init__(self) -> None:
        if self.name not in PROFILE_NAMES:
            raise ValueError(f"profile name must be one of {PROFILE_NAMES}, got {self.name!r}")
        if self.accelerator not in {"cpu", "gpu"}:
            raise ValueError(f"accelerator must be 'cpu' or 'gpu', got {self.accelerator!r}")
        check_device(self.device)       # its spelling now; whether it exists when a run asks for it
        if not isinstance(self.seed, int) or isinstance(self.seed, bool) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative int, got {self.seed!r}")
        self.check_bounds()

    def check_bounds(self) -> None:
        """Refuse, when the profile is built, a number setting no run can use (before it fails deep in a run).

        Every float (and every number of a list setting) must be finite. Then, unless ``BOUNDS`` gives the setting
        its own interval: a seed (``seed``, ``*_seed``, the elements of ``*seeds`` lists) is ``>= 0``; an int
        setting of ``ZERO_MEANS_ALL`` or ``ZERO_MEANS`` is ``>= 0`` (0 has its documented meaning; a list of
        ``ZERO_MEANS_ALL`` may hold 0s, each meaning "all"); every other int is ``>= 1`` and every other float
        ``> 0``. So ``--heads=0``, ``--learning_rate=nan`` or ``--max_train_tokens=-1`` stop at the command line
        with the setting named, and no negative number is ever read as a limit."""
        hints = get_type_hints(type(self))
        for f in fields(self):
            value = getattr(self, f.name)
            listed = isinstance(value, tuple)
            for v in (value if listed else (value,)):
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    continue
                if isinstance(v, float) and not math.isfinite(v):
                    raise ValueError(f"{f.name} must be a finite number, got {v}")
                if f.name in self.BOUNDS:
                    low, high, closed_low, closed_high = _interval(f.name, self.BOUNDS[f.name])
                    if v < low or v > high or (v == low and not closed_low) or (v == high and not closed_high):
                        raise ValueError(f"{f.name} must lie in {self.BOUNDS[f.name]}, got {v}")
                    continue
                seed_like = f.name == "seed" or f.name.endswith("_seed") or (listed and f.name.endswith("seeds"))
                zero = (f.name in self.ZERO_MEANS_ALL if listed else
                        f.name in self.ZERO_MEANS_ALL or f.name in self.ZERO_MEANS)
                if seed_like or (zero and isinstance(v, int)):
                    if v < 0:
                        meaning = ("" if seed_like else
                                   f" (0: {'all' if f.name in self.ZERO_MEANS_ALL else self.ZERO_MEANS[f.name]})")
                        raise ValueError(f"{f.name} must be >= 0{meaning}, got {v}")
                elif isinstance(v, int) and hints.get(f.name) is not float and v < 1:
                    raise ValueError(f"{f.name} must be >= 1, got {v}")
                elif v <= 0:
                    raise ValueError(f"{f.name} must be > 0, got {v}")

    def to_dict(self) -> dict[str, Any]:
        """Every setting by name; a **section** (a setting whose value is a dataclass, such as the experimental
        protocol) as its dotted settings ``protocol.seeds``, ``protocol.patience``, ..., so that each can be
        overridden (``--protocol.seeds=0,1,2``), shown and compared on its own: changing one makes stale exactly the
        results whose experiments read it."""
        out: dict[str, Any] = {}
        for f in fields(self):
            out.update(_flat(f.name, getattr(self, f.name)))
        return out

    @classmethod
    def default_settings(cls) -> dict[str, Any]:
        """The defaults of every setting that has one, sections flattened as in :meth:`to_dict`."""
        out: dict[str, Any] = {}
        for f in fields(cls):
            if f.default is not dataclasses.MISSING:
                out.update(_flat(f.name, f.default))
            elif f.default_factory is not dataclasses.MISSING:
                out.update(_flat(f.name, f.default_factory()))
        return out

    def expand(self, names: Sequence[str]) -> frozenset[str]:
        """``names`` with a section's bare name standing for all its dotted settings (``"protocol"`` ->
        ``protocol.seeds``, ...). Other names pass as they are: a chapter may name a setting its older results
        recorded and today's profile no longer has."""
        known = self.to_dict()
        out: set[str] = set()
        for name in names:
            out |= {k for k in known if k.startswith(f"{name}.")} or {name}
        return frozenset(out)

    def setting(self, name: str) -> Any:
        """The value of setting ``name``; a section's setting is dotted (``protocol.seeds``)."""
        section, dot, key = name.partition(".")
        value = getattr(self, section)
        return getattr(value, key) if dot else value

    def weight_settings(self, names: Sequence[str] | None = None) -> dict[str, Any]:
        """The settings that decide trained weights: all but :data:`RUN_SETTINGS` and ``EVALUATION_ONLY``, or
        only ``names`` when given (e.g. the pre-training settings of a pre-training run). What checkpoint folders
        are digested from, so that changing how a run is timed or evaluated never retrains a model."""
        evaluation = self.expand(self.EVALUATION_ONLY)
        settings = {k: v for k, v in self.to_dict().items() if k not in RUN_SETTINGS and k not in evaluation}
        if names is None:
            return settings
        unknown = sorted(set(names) - set(settings))
        if unknown:
            raise ValueError(f"{type(self).__name__} has no weight setting(s) {unknown}")
        return {k: settings[k] for k in names}

    def override(self, **overrides: Any) -> "Profile":
        """A copy with ``overrides`` applied; unknown keys and wrong types raise ``ValueError``/``TypeError``. A
        section's settings are dotted (``**{"protocol.seeds": "0,1,2"}``), checked by the section itself."""
        hints = get_type_hints(type(self))
        known = {f.name for f in fields(self)}
        plain: dict[str, Any] = {}
        sections: dict[str, dict[str, Any]] = {}
        for key, value in overrides.items():
            head, dot, sub = key.partition(".")
            if head not in known:
                raise ValueError(f"{type(self).__name__} has no setting {key!r}; known settings: "
                                 f"{', '.join(sorted(self.to_dict()))}")
            current = getattr(self, head)
            if not dot and _is_section(current) and isinstance(value, type(current)):
                plain[key] = value                        # a whole section, from Python
                continue
            if _is_section(current) != bool(dot):
                raise ValueError(f"{head!r} is a section: override its settings as {head}.<name>=value "
                                 f"({', '.join(f.name for f in fields(current))})" if dot == "" else
                                 f"{head!r} has no settings of its own; override it as {head}=value")
            if dot:
                sub_hints = get_type_hints(type(current))
                if sub not in {f.name for f in fields(current)}:
                    raise ValueError(f"section {head!r} has no setting {sub!r}; its settings: "
                                     f"{', '.join(f.name for f in fields(current))}")
                sections.setdefault(head, {})[sub] = _coerce(key, value, sub_hints[sub])
            else:
                plain[key] = _coerce(key, value, hints[key])
        for head, subs in sections.items():
            current = getattr(self, head)
            plain[head] = current.override(**subs) if hasattr(current, "override") else replace(current, **subs)
        return replace(self, **plain)


def _is_section(value: Any) -> bool:
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


def _flat(name: str, value: Any) -> dict[str, Any]:
    """``{name: value}``, or a section's settings as ``{name.key: value}``."""
    if _is_section(value):
        return {f"{name}.{k}": v for k, v in dataclasses.asdict(value).items()}
    return {name: value}


def _interval(name: str, text: str) -> tuple[float, float, bool, bool]:
    """``"[0, 1)"`` -> ``(0.0, 1.0, True, False)``; ``inf`` for an open end."""
    try:
        low, high = (float(x) for x in text[1:-1].split(","))
        assert text[0] in "[(" and text[-1] in "])" and low <= high
    except (ValueError, AssertionError):
        raise TypeError(f"BOUNDS[{name!r}] must be an interval such as '[0, 1)', got {text!r}") from None
    return low, high, text[0] == "[", text[-1] == "]"


_SCALARS = {"int": int, "float": float, "str": str, "bool": bool}


def _coerce(key: str, value: Any, hint: Any) -> Any:
    """Coerce a CLI string to the field's type; check non-string values.

    ``tuple[X, ...]`` settings take a tuple or list of X, or one comma-separated string (``"rte,sst2"``; an empty
    string is the empty tuple): the one list syntax of every chapter's command line.
    """
    if typing.get_origin(hint) is tuple:
        args = typing.get_args(hint)
        if len(args) != 2 or args[1] is not Ellipsis:
            raise TypeError(f"setting {key!r}: only tuple[X, ...] list settings are supported, got {hint}")
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"setting {key!r} expects a list (comma-separated on the command line, e.g. a,b), "
                            f"got {type(value).__name__} {value!r}")
        return tuple(_coerce(key, v, args[0]) for v in value)
    base = _SCALARS.get(getattr(hint, "__name__", str(hint)), None)
    if base is None:
        raise TypeError(f"setting {key!r} has type {hint}; profiles support int, float, str, bool and "
                        f"tuple[X, ...] settings")
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
    """The four presets of one chapter."""

    smoke: P
    cpu: P
    small: P
    paper: P
    names: tuple[str, ...] = field(default=PROFILE_NAMES, init=False)

    def __post_init__(self) -> None:
        for name in PROFILE_NAMES:
            p = getattr(self, name)
            if not isinstance(p, Profile) or p.name != name:
                raise ValueError(f"ProfileSet.{name} must be a Profile named {name!r}, got {p!r}")
        if len({type(getattr(self, n)) for n in PROFILE_NAMES}) != 1:
            raise TypeError("the profiles of a chapter must be instances of one Profile subclass")

    def get(self, name: str, **overrides: Any) -> P:
        if name not in PROFILE_NAMES:
            raise ValueError(f"unknown profile {name!r}; choose one of {', '.join(PROFILE_NAMES)}")
        return getattr(self, name).override(**overrides)

    def argument_parser(self, description: str = "") -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(
            description=description,
            epilog="Any profile setting can be overridden as --key=value; settings: "
            + ", ".join(k for k in self.smoke.to_dict() if k != "name"),
        )
        parser.add_argument("--profile", choices=PROFILE_NAMES, default="smoke")
        parser.add_argument("--device", default=None, help="auto (default), cpu, cuda, cuda:N or mps")
        return parser

    def from_cli(self, argv: Sequence[str] | None = None, description: str = "") -> P:
        """Parse ``--profile NAME [--device D] [--key=value ...]`` into a typed profile."""
        return self.parse_cli(argv, description)[0]

    def parse_cli(self, argv: Sequence[str] | None = None, description: str = "",
                  add_arguments: Callable[[argparse.ArgumentParser], None] | None = None
                  ) -> tuple[P, argparse.Namespace]:
        """:meth:`from_cli` that also returns the parsed namespace of the caller's own ``add_arguments``."""
        parser = self.argument_parser(description)
        if add_arguments is not None:
            add_arguments(parser)
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
            return self.get(args.profile, **overrides), args
        except (TypeError, ValueError) as exc:
            parser.error(str(exc))
            raise  # unreachable: parser.error exits

    def table(self) -> list[dict[str, Any]]:
        """The presets as rows (for the book's "what each profile runs" tables)."""
        return [getattr(self, n).to_dict() for n in PROFILE_NAMES]


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
