"""Results store (atomic, with metadata) and paper-vs-ours tables."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from hashlib_core.results import (
    ResultsStore,
    format_like,
    load_paper_table,
    paper_table_index,
    paper_vs_ours,
    parse_printed,
)


@pytest.fixture()
def store(tmp_path):
    return ResultsStore("chapter_x", "smoke", root=tmp_path)


def test_table_round_trip_with_metadata(store):
    df = pd.DataFrame({"model": ["a", "b"], "params": [1, 2]})
    path = store.write_table("counts", df, seed=3, device="cpu", wall_time_s=1.23456, config={"k": 1})
    assert path == store.dir / "counts.csv"
    pd.testing.assert_frame_equal(store.read_table("counts"), df)
    meta = store.read_meta("counts")
    assert meta["seed"] == 3 and meta["device"] == "cpu" and meta["wall_time_s"] == 1.2346
    assert meta["config"] == {"k": 1} and meta["rows"] == 2 and meta["profile"] == "smoke"
    assert set(meta["packages"]) >= {"torch", "transformers", "mmh3", "numpy"}
    assert meta["packages"]["torch"].startswith("2.13.0")
    assert "git_commit" in meta and "created_utc" in meta
    assert store.names() == ["counts"]
    # no temporary files are left behind
    assert sorted(p.name for p in store.dir.iterdir()) == ["counts.csv", "counts.meta.json"]


def test_json_round_trip(store):
    store.write_json("summary", {"acc": 0.5, "n": [1, 2]}, seed=None)
    saved = store.read_json("summary")
    assert saved["data"] == {"acc": 0.5, "n": [1, 2]}
    assert json.loads((store.dir / "summary.json").read_text())["meta"]["name"] == "summary"


def test_failed_write_keeps_previous_file(store, monkeypatch):
    store.write_json("summary", {"v": 1}, seed=0)

    class Boom:
        pass

    with pytest.raises(TypeError):
        store.write_json("summary", {"v": Boom()}, seed=0)
    assert store.read_json("summary")["data"] == {"v": 1}
    assert [p.name for p in store.dir.iterdir()] == ["summary.json"]


def test_missing_result_names_the_command(store):
    with pytest.raises(FileNotFoundError, match=r"python -m hashlib_core.papers.chapter_x --profile smoke"):
        store.read_table("nothing")


@pytest.mark.parametrize("bad", ["../x", "", "a/b", ".hidden", 3])
def test_bad_names_refused(tmp_path, bad):
    with pytest.raises(ValueError, match="simple name"):
        ResultsStore(bad, "smoke", root=tmp_path)


@pytest.mark.parametrize(
    "text, value, decimals, suffix",
    [("99.1K", 99_100.0, 1, "K"), ("38.6M", 38_600_000.0, 1, "M"), ("0.9B", 900_000_000.0, 1, "B"),
     ("94.7", 94.7, 1, ""), ("30%", 30.0, 0, ""), ("1,024", 1024.0, 0, ""), ("~0.3", 0.3, 1, ""),
     ("-0.5", -0.5, 1, "")],
)
def test_parse_printed(text, value, decimals, suffix):
    p = parse_printed(text)
    assert p.value == pytest.approx(value) and p.decimals == decimals and p.suffix == suffix


def test_parse_printed_empty_and_bad():
    assert parse_printed("-") is None and parse_printed("") is None
    with pytest.raises(ValueError, match="printed number"):
        parse_printed("twelve")


def test_format_like_rounds_as_printed():
    assert format_like(38_603_520, parse_printed("38.6M")) == "38.6M"
    assert format_like(99_072, parse_printed("99.1K")) == "99.1K"
    assert format_like(31.0169, parse_printed("30%")) == "31%"
    # a gap that rounds to zero at the printed precision carries no sign; others keep theirs
    assert format_like(-0.47, parse_printed("110M"), signed=True) == "0M"
    assert format_like(-600_000, parse_printed("110M"), signed=True) == "-1M"
    assert format_like(28, parse_printed("99.1K"), signed=True) == "0.0K"
    assert format_like(60, parse_printed("99.1K"), signed=True) == "+0.1K"


def test_paper_vs_ours_gap_and_agreement():
    paper = pd.DataFrame({"model": ["a", "b", "c"], "params": ["23.4M", "110M", "1.0K"]})
    ours = pd.DataFrame({"model": ["a", "b", "d"], "n": [23_440_896, 109_482_240, 5]})
    out = paper_vs_ours(paper, ours, on="model", columns={"params": "n"})
    got = out.set_index("model")
    assert got.loc["a", "ours"] == "23.4M" and bool(got.loc["a", "agrees"]) is True
    assert got.loc["b", "ours"] == "109M" and got.loc["b", "gap"] == "-1M" and bool(got.loc["b", "agrees"]) is False
    assert got.loc["b", "gap_rel_%"] == pytest.approx(-0.47, abs=0.01)
    assert got.loc["c", "ours"] == "-" and got.loc["d", "paper"] == "-"   # unmatched rows are kept, not dropped


def test_paper_vs_ours_same_column_name():
    paper = pd.DataFrame({"model": ["a"], "acc": ["50.0"]})
    ours = pd.DataFrame({"model": ["a"], "acc": [0.512]})
    out = paper_vs_ours(paper, ours, on="model", columns=["acc"], ours_scale={"acc": 100})
    assert out.loc[0, "ours"] == "51.2" and out.loc[0, "gap"] == "+1.2"


def test_paper_vs_ours_names_missing_columns():
    paper = pd.DataFrame({"model": ["a"], "acc": ["1"]})
    with pytest.raises(KeyError, match="our table has no column 'f1'"):
        paper_vs_ours(paper, pd.DataFrame({"model": ["a"]}), on="model", columns={"acc": "f1"})


def test_paper_tables_are_loadable_as_printed():
    index = paper_table_index()
    assert "vocabulary_bottleneck" in index
    table = load_paper_table("vocabulary_bottleneck")
    assert table.attrs["source"]["file"] == "vocabulary_bottleneck.csv"
    assert all(table[c].map(type).eq(str).all() for c in table.columns)
    with pytest.raises(KeyError, match="no paper table"):
        load_paper_table("no_such_table")


def test_git_state_counts_code_changes_as_dirty_but_not_written_results(tmp_path, monkeypatch):
    import subprocess

    from hashlib_core.results import store as store_module

    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    (tmp_path / "results" / "ch" / "cpu").mkdir(parents=True)
    (tmp_path / "code.py").write_text("x = 1\n")
    (tmp_path / "results" / "ch" / "cpu" / "a.csv").write_text("a\n1\n")
    git("init", "-q")
    git("-c", "user.email=t@t", "-c", "user.name=t", "add", ".")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init")
    monkeypatch.setattr(store_module, "repo_root", lambda: tmp_path)
    store_module.git_state.cache_clear()
    try:
        assert store_module.git_state()["git_dirty"] is False
        (tmp_path / "results" / "ch" / "cpu" / "a.csv").write_text("a\n2\n")     # a run wrote a result
        store_module.git_state.cache_clear()
        assert store_module.git_state()["git_dirty"] is False
        (tmp_path / "code.py").write_text("x = 2\n")                              # the code changed
        store_module.git_state.cache_clear()
        assert store_module.git_state()["git_dirty"] is True
    finally:
        store_module.git_state.cache_clear()
