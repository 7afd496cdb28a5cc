"""The Hugging Face hub mocked by local ``datasets`` fixtures, so that a chapter's real hub-loading code runs offline.

:func:`mock_hub` saves each fixture (a dict of columns, the schema of the hub dataset it stands for) with
``Dataset.save_to_disk`` in a temporary folder and, while it is active, answers ``datasets.load_dataset(name,
config, split=..., streaming=...)`` from those folders: the chapter's own loader is the code that runs, only the
download is replaced. The offline flags are lifted meanwhile (the loaders refuse to reach the hub under them, and
nothing reaches it: every name is answered locally, an unknown one is refused)::

    with mock_hub({"wikimedia/wikipedia:20231101.en": {"id": [...], "url": [...], "title": [...], "text": [...]}}):
        lines = read_corpus(profile)
"""
from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence
from unittest import mock

__all__ = ["mock_hub", "HubFixture", "text_rows", "OFFLINE_FLAGS"]

#: environment flags that keep ``datasets`` and the loaders off the hub (lifted while the mock answers)
OFFLINE_FLAGS = ("HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE")

#: a few sentences of plain English, repeated to fill text fixtures
_SENTENCES = (
    "The quick brown fox jumps over the lazy dog near the river bank.",
    "A hash function maps a word to one of a fixed number of buckets.",
    "Researchers trained the model on a large corpus of books and articles.",
    "She walked to the station and caught the early train to the city.",
    "Embedding tables grow with the vocabulary, so hashing keeps them small.",
)


def text_rows(n: int, offset: int = 0) -> list[str]:
    """``n`` short paragraphs of English (two sentences each, cycled), for a text column of a fixture."""
    k = len(_SENTENCES)
    return [f"{_SENTENCES[(i + offset) % k]} {_SENTENCES[(i + offset + 2) % k]}" for i in range(n)]


def _key(name: str, config: str | None) -> str:
    return f"{name}:{config}" if config else name


@dataclass
class HubFixture:
    """What :func:`mock_hub` yields: the folder the fixtures are saved in, and the columns of every dataset it
    served (``"repo[:config]"`` -> column names), in the order the loaders asked for them."""

    root: Path
    served: dict[str, tuple[str, ...]] = field(default_factory=dict)


@contextmanager
def mock_hub(fixtures: Mapping[str, Mapping[str, Sequence[Any]]]) -> Iterator[HubFixture]:
    """Answer ``datasets.load_dataset`` from local fixtures: ``{"repo[:config]": {column: values}}``; yields a
    :class:`HubFixture`."""
    import datasets

    if not fixtures:
        raise ValueError("mock_hub needs at least one fixture: {'repo[:config]': {column: values}}")
    bars = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()              # a progress bar per tiny fixture says nothing
    with tempfile.TemporaryDirectory(prefix="hub-fixture-") as tmp:
        root = Path(tmp)
        hub = HubFixture(root)
        folders = {}
        for key, columns in fixtures.items():
            folder = root / key.replace("/", "__").replace(":", "--")
            datasets.Dataset.from_dict({c: list(v) for c, v in columns.items()}).save_to_disk(str(folder))
            folders[key] = folder

        def load_dataset(path: str, name: str | None = None, *args: Any, split: str | None = None,
                         streaming: bool = False, **kwargs: Any) -> Any:
            key = _key(path, name)
            if key not in folders:
                raise LookupError(f"the dry run's hub fixture has no dataset {key!r} (it has {sorted(folders)}): "
                                  f"add one with the same columns to the chapter's dry run")
            table = datasets.load_from_disk(str(folders[key]))
            hub.served[key] = tuple(table.column_names)
            if split not in (None, "train"):
                raise LookupError(f"the dry run's hub fixture {key!r} has only a train split, asked for {split!r}")
            table = table if split else datasets.DatasetDict({"train": table})
            return table.to_iterable_dataset() if streaming and split else table

        saved = {flag: os.environ.pop(flag) for flag in OFFLINE_FLAGS if flag in os.environ}
        try:
            with mock.patch.object(datasets, "load_dataset", load_dataset):
                yield hub
        finally:
            os.environ.update(saved)
            if bars:
                datasets.enable_progress_bars()
