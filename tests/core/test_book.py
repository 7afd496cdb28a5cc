"""The page helpers of hashlib_core.book on fixed inputs: number formats, the table style, the profiles table."""
from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import ClassVar, Mapping

import pandas as pd
import pytest

from hashlib_core import book
from hashlib_core.profiles import Profile, ProfileSet


def test_number_formats():
    assert book.fmt_num(1234567) == "1,234,567" and book.fmt_num(1234.0) == "1,234"
    assert book.fmt_num(0.12345) == "0.12" and book.fmt_num(0.12345, 3) == "0.123"
    assert book.fmt_num(float("nan")) == "-" and book.fmt_num(None) == "-" and book.fmt_num(True) == "True"
    assert book.fmt_count(12.6) == "13" and book.fmt_count(math.nan) == "-"


def test_table_right_aligns_numbers_and_renames_headers():
    df = pd.DataFrame({"model": ["a", "b"], "test_accuracy_%": [12.345, 67.0], "count": [1234, 5]})
    html = book.table(df, "caption", columns={"test_accuracy_%": "accuracy (%)"}).to_html()
    assert 'class="hb-table"' in html and "<caption>caption</caption>" in html
    assert "accuracy (%)" in html and "test_accuracy_%" not in html
    assert "12.35" in html and "1,234" in html and "hb-num" in html
    with pytest.raises(KeyError, match="cannot rename missing column"):
        book.table(df, columns={"nope": "x"})
    with pytest.raises(TypeError, match="DataFrame"):
        book.table([1, 2])


@dataclass(frozen=True)
class _Toy(Profile):
    width: int = 4
    examples: int = 100
    tasks: tuple[str, ...] = ("a",)
    extra_epochs: int = 0
    grid: tuple[str, ...] = ()
    sizes: tuple[int, ...] = (10, 0)
    ZERO_MEANS_ALL: ClassVar[frozenset[str]] = frozenset({"examples", "sizes"})
    ZERO_MEANS: ClassVar[Mapping[str, str]] = MappingProxyType({"extra_epochs": "as width", "grid": "none"})


_TOYS = ProfileSet(smoke=_Toy(name="smoke"), cpu=_Toy(name="cpu", examples=0, tasks=("a", "b"), extra_epochs=3,
                                                      grid=("x=1", "y=2")),
                   small=_Toy(name="small", accelerator="gpu", width=16000, tasks=()),
                   paper=_Toy(name="paper", accelerator="gpu", width=64))


def test_profiles_table_shows_every_profile_side_by_side():
    table = book.profiles_table(_TOYS, ["width", "examples", "tasks", "extra_epochs", "grid"]).set_index("setting")
    assert list(table.columns) == ["smoke", "cpu", "small", "paper"]
    assert table.loc["width"].tolist() == ["4", "4", "16,000", "64"]
    assert table.loc["examples", "cpu"] == "all" and table.loc["examples", "smoke"] == "100"   # 0 means all
    assert table.loc["tasks", "cpu"] == "a, b" and table.loc["tasks", "small"] == "(all)"
    assert table.loc["extra_epochs"].tolist() == ["as width", "3", "as width", "as width"]   # 0 defers to another
    assert table.loc["grid"].tolist() == ["none", "x=1, y=2", "none", "none"]   # an empty list has its own text
    assert book.profiles_table(_TOYS, ["sizes"]).set_index("setting").loc["sizes", "smoke"] == "10, all"   # a list's 0 means all too
    assert table.index[0] == "budget_minutes"
    with pytest.raises(KeyError, match="no profile setting"):
        book.profiles_table(_TOYS, ["depth"])
