"""Read a pickle of plain data without running any code it carries.

``pickle.load`` can call any importable function while it reads (a ``GLOBAL``/``STACK_GLOBAL`` or extension opcode
names one, ``REDUCE`` calls it): a downloaded pickle is a program. Every callable a pickle can reach is resolved
through :meth:`pickle.Unpickler.find_class` (the C unpickler included, extension codes too), so an unpickler whose
``find_class`` refuses every name can build only what the pickle protocol constructs without a global: ``None``,
booleans, numbers, strings, bytes, lists, tuples, dicts and sets. Persistent ids are refused as well (the base
class already raises for them; :class:`PlainUnpickler` says why).

The session datasets (Diginetica, Nowplaying) are such pickles: lists of lists of ints, needing no global.
"""
from __future__ import annotations

import io
import pickle
from typing import Any

from hashlib_core.data.errors import DataFormatError

__all__ = ["PlainUnpickler", "load_plain_pickle", "int_lists"]


class PlainUnpickler(pickle.Unpickler):
    """An unpickler that refuses every global (class, function, extension code) and every persistent id."""

    def __init__(self, file: Any, source: str) -> None:
        super().__init__(file)
        self.source = source

    def find_class(self, module: str, name: str) -> Any:
        raise DataFormatError(
            f"{self.source} is a pickle that refers to the global {module}.{name}; the dataset's files hold only "
            "lists of ints and need none, so it was not loaded (a global in a pickle can run code). Replace the "
            "file with the one the manifest pins (its sha256 is checked on the next load)")

    def persistent_load(self, pid: Any) -> Any:
        raise DataFormatError(f"{self.source} is a pickle with a persistent id ({pid!r}); the dataset's files hold "
                              "only lists of ints, so it was not loaded. Replace the file with the pinned one")


def load_plain_pickle(raw: bytes, source: str) -> Any:
    """Unpickle ``raw`` (named ``source`` in errors) with :class:`PlainUnpickler`; a truncated or malformed pickle is
    a :class:`DataFormatError` too."""
    try:
        return PlainUnpickler(io.BytesIO(raw), source).load()
    except DataFormatError:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, IndexError, KeyError, AttributeError,
            MemoryError, RecursionError) as exc:
        raise DataFormatError(f"{source} is not a readable pickle ({type(exc).__name__}: {exc}); replace the file "
                              "with the one the manifest pins") from exc


def int_lists(value: Any, source: str, what: str, *, min_length: int = 0) -> list[list[int]]:
    """``value`` checked to be a list of lists of non-negative ints (each at least ``min_length`` long)."""
    if not isinstance(value, list):
        raise DataFormatError(f"{source}: {what} must be a list of lists of ints, got {type(value).__name__}")
    for i, row in enumerate(value):
        if not isinstance(row, list) or len(row) < min_length or not all(
                type(x) is int and x >= 0 for x in row):
            raise DataFormatError(f"{source}: {what}[{i}] must be a list of at least {min_length} non-negative ints, "
                                  f"got {str(row)[:80]}")
    return value
