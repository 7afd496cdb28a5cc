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
    assert sorted(p.name for p in store.dir.iterdir() if p.name != "patches") == ["counts.csv", "counts.meta.json"]


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
    assert [p.name for p in store.dir.iterdir() if p.name != "patches"] == ["summary.json"]


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
        store_module.git_diff.cache_clear()
        state = store_module.git_state()
        assert state["git_dirty"] is True and state["git_dirty_files"] == ["code.py"]
        # the diff is recorded by digest and kept beside the results, so the code of the run can be rebuilt
        store = ResultsStore("ch", "cpu", root=tmp_path / "results")
        store.write_table("b", pd.DataFrame({"a": [1]}), seed=0)
        meta = store.read_meta("b")
        assert meta["git_dirty_files"] == ["code.py"] and len(meta["git_diff_sha256"]) == 64
        patch = store.dir / "patches" / f"{meta['git_diff_sha256'][:16]}.diff"
        assert "-x = 1" in patch.read_text() and "+x = 2" in patch.read_text()
        assert store.names() == ["a", "b"] or store.names() == ["b"]      # the patches folder is not a result
    finally:
        store_module.git_state.cache_clear()
        store_module.git_diff.cache_clear()


# ------------------------------------------------------------------------------------------------ integrity
def _tables(store):
    df = pd.DataFrame({"model": ["a", "b", "c"], "test_perplexity": [10.5, 12.25, 9.0]})
    store.write_table("lm_quality", df, seed=0)
    store.write_json("summary", {"ppl": [1.5, 2.5], "best": "a"}, seed=0)
    return df


def test_every_result_records_the_digest_of_its_data(store):
    _tables(store)
    assert store.read_meta("lm_quality")["data_sha256_recorded"] == "written"
    assert len(store.read_meta("lm_quality")["data_sha256"]) == 64
    assert store.read_json("summary")["meta"]["data_sha256_recorded"] == "written"


@pytest.mark.parametrize("edit,what", [
    (lambda t: t.assign(test_perplexity=t["test_perplexity"] * 2), "SHA-256 differs"),     # a number doubled
    (lambda t: t.head(1), "records 3 rows, the file holds about 1"),                         # cut to one row
])
def test_a_table_edited_by_hand_is_refused_by_name(store, edit, what):
    from hashlib_core.results.store import ResultFileError

    df = _tables(store)
    edit(df).to_csv(store.path("lm_quality", ".csv"), index=False)
    with pytest.raises(ResultFileError) as info:
        store.read_table("lm_quality")
    message = str(info.value)
    assert "lm_quality.csv" in message and what in message
    assert "python -m hashlib_core.papers.chapter_x --profile smoke" in message and "git checkout --" in message


def test_a_json_result_edited_by_hand_is_refused(store):
    from hashlib_core.results.store import ResultFileError

    _tables(store)
    path = store.path("summary", ".json")
    whole = json.loads(path.read_text())
    whole["data"]["ppl"][0] = 0.5
    path.write_text(json.dumps(whole))
    with pytest.raises(ResultFileError, match="summary.json holds data that is not what its run wrote"):
        store.read_json("summary")


@pytest.mark.parametrize("name,suffix,damage,what", [
    ("lm_quality", ".meta.json", lambda b: b[: len(b) // 2], "is not whole JSON"),
    ("summary", ".json", lambda b: b[: len(b) // 2], "is not whole JSON"),
    ("lm_quality", ".meta.json", lambda b: b"[1, 2]", "is not a metadata record"),
    ("summary", ".json", lambda b: b'{"data": 1}', "lacks the"),
])
def test_a_truncated_or_foreign_json_file_is_named(store, name, suffix, damage, what):
    from hashlib_core.results.store import ResultFileError

    _tables(store)
    path = store.path(name, suffix)
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(ResultFileError) as info:
        store.read_meta(name)
    assert path.name in str(info.value) and what in str(info.value)


def test_a_garbage_csv_without_a_digest_is_named(store):
    """A table written before digests (no data_sha256) that is not a CSV: a clear error, not pandas' own."""
    from hashlib_core.results.store import ResultFileError

    _tables(store)
    meta = json.loads(store.path("lm_quality", ".meta.json").read_text())
    del meta["data_sha256"]
    store.path("lm_quality", ".meta.json").write_text(json.dumps(meta))
    store.path("lm_quality", ".csv").write_bytes(b'a,b\n1,2,3,4\n"unclosed\n\xff\xfe')
    with pytest.raises(ResultFileError, match="lm_quality.csv does not read as a CSV table"):
        store.read_table("lm_quality")


def test_a_stale_check_on_a_truncated_meta_names_the_file(tmp_path):
    """Chapter.stale reads every result's metadata: a .meta.json cut in half is named, not a JSONDecodeError."""
    from hashlib_core.papers import chapter
    from hashlib_core.results.store import ResultFileError

    ch = chapter("vocab_bottleneck")
    store = ch.store("smoke", tmp_path)
    store.write_table("embedding_shares", pd.DataFrame({"a": [1]}), seed=0, config={})
    path = store.path("embedding_shares", ".meta.json")
    path.write_bytes(path.read_bytes()[:40])
    with pytest.raises(ResultFileError, match="embedding_shares.meta.json is not whole JSON"):
        ch.stale("smoke", tmp_path)


def test_sealing_old_results_keeps_the_evidence_chain_current(tmp_path):
    """Results written before digests: sealing records them, and re-points the evidence digests of the results
    derived from a rewritten JSON result (and of those derived from those), so nothing turns stale."""
    from hashlib_core.results.seal import seal

    store = ResultsStore("ch", "cpu", root=tmp_path)
    store.write_json("a", {"x": 1}, seed=0)
    store.write_json("b", {"y": 2}, seed=0, inputs={"a": store.digest("a")})
    store.write_table("c", pd.DataFrame({"z": [3]}), seed=0, inputs={"b": store.digest("b")})
    for name in ("a", "b"):                        # make them look written before digests existed
        whole = json.loads(store.path(name, ".json").read_text())
        del whole["meta"]["data_sha256"], whole["meta"]["data_sha256_recorded"]
        whole["meta"]["inputs"] = {"a": store.digest("a")} if name == "b" else None
        store.path(name, ".json").write_text(json.dumps(whole, indent=2, sort_keys=True) + "\n")
    meta_c = json.loads(store.path("c", ".meta.json").read_text())
    meta_c["inputs"] = {"b": store.digest("b")}
    del meta_c["data_sha256"]
    store.path("c", ".meta.json").write_text(json.dumps(meta_c))
    counts = seal(tmp_path, today="2026-12-07")
    assert counts["tables"] == 1 and counts["json"] == 2 and counts["inputs"] >= 2   # c re-pointed as b settles
    assert store.read_meta("a")["data_sha256_recorded"] == "sealed 2026-12-07"
    assert store.read_meta("b")["inputs"] == {"a": store.digest("a")}
    assert store.read_meta("c")["inputs"] == {"b": store.digest("b")}
    assert seal(tmp_path) == {"tables": 0, "json": 0, "inputs": 0}        # idempotent
    (store.dir / "notes.json").write_text("[1, 2]")                      # not a result: left alone
    assert seal(tmp_path) == {"tables": 0, "json": 0, "inputs": 0}
    store.path("a", ".json").write_text('{"meta": {')                   # cut short: named, nothing sealed
    with pytest.raises(ValueError, match=r"a.json is not whole JSON .*restore or recompute it before sealing"):
        seal(tmp_path)


def test_a_dirty_tree_with_bytes_that_are_not_utf8_is_recorded_exactly(tmp_path, monkeypatch):
    """git's diff is kept as bytes: a changed file that is not UTF-8 (or has CRLF line ends) is digested and kept
    exactly, never a decoding error that stops the run's writes."""
    import hashlib
    import subprocess

    from hashlib_core.results import store as results_store

    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "code.py").write_bytes(b"x = 1\r\n")
    subprocess.run(["git", "-C", str(repo), "add", "code.py"], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c"],
                   check=True)
    (repo / "code.py").write_bytes(b"x = '\xff\xfe'\r\n")               # latin-1 bytes, CRLF
    monkeypatch.setattr(results_store, "repo_root", lambda: repo)
    results_store.git_state.cache_clear(), results_store.git_diff.cache_clear()
    try:
        state = results_store.git_state()
        files, diff = results_store.git_diff()
        assert state["git_dirty"] and state["git_dirty_files"] == ["code.py"] == files
        assert b"\xff\xfe" in diff and b"\r\n" in diff
        assert state["git_diff_sha256"] == hashlib.sha256(diff).hexdigest()
        store = ResultsStore("ch", "cpu", root=tmp_path / "results")
        store.write_json("r", {"x": 1}, seed=0)
        kept = store.dir / "patches" / f"{state['git_diff_sha256'][:16]}.diff"
        assert kept.read_bytes() == diff and store.read_meta("r")["git_dirty"]
    finally:
        results_store.git_state.cache_clear(), results_store.git_diff.cache_clear()


def test_every_committed_result_carries_a_digest_that_matches():
    """The repository's results: each sealed or written with its digest, and each reads back whole."""
    from hashlib_core.results.store import repo_root

    root = repo_root() / "results"
    read = 0
    for folder in sorted(p for p in root.glob("*/*") if p.is_dir() and p.name != "smoke"):
        store = ResultsStore(folder.parent.name, folder.name, root=root)
        for name in store.names():
            meta = store.read_meta(name)
            assert meta.get("data_sha256"), f"{folder}/{name} has no data digest: run python -m hashlib_core.results.seal"
            store.read_table(name) if store.path(name, ".csv").exists() else store.read_json(name)
            read += 1
    assert read > 100


def test_the_provenance_line_warns_of_results_from_uncommitted_code():
    from hashlib_core.results.banner import results_banner, uncommitted_note

    clean = {"git_commit": "a" * 40, "git_dirty": False, "device": "cpu", "seed": 0, "wall_time_s": 60,
             "created_utc": "2026-12-07T00:00:00", "packages": {"torch": "2.13.0"}}
    assert uncommitted_note("ch", "cpu", [clean]) == ""
    dirty = dict(clean, git_commit="b" * 40, git_dirty=True, git_dirty_files=["hashlib_core/x.py"],
                 git_diff_sha256="c" * 64)
    unknown = dict(clean, git_dirty=True)                  # written before the changes were recorded
    note = uncommitted_note("ch", "cpu", [clean, dirty, unknown])
    assert "2 of 3 experiments ran from a tree with uncommitted changes" in note
    assert "`bbbbbbbbbb`" in note and "`aaaaaaaaaa`" in note and "on commits" in note
    assert "`hashlib_core/x.py`" in note and f"`results/ch/cpu/patches/{'c' * 16}.diff`" in note
    assert "1 of them predates the recording of changes" in note
    assert results_banner("ch", "cpu", [clean, dirty], "committed").endswith(uncommitted_note("ch", "cpu",
                                                                                           [clean, dirty]))
