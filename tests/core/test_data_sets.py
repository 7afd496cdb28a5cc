"""The large opaque-id sets (sessions, Gowalla, Wikispeedia): the statistics their SOURCE.md states, recomputed from
the loaders; the plain unpickler refusing every global; parsing errors that name the file and the line."""
from __future__ import annotations

import collections
import os
import pickle
from pathlib import Path

import pytest

from hashlib_core import data
from hashlib_core.data.loaders_sets import _parse_sessions, _parse_user_items, _parse_wikispeedia
from hashlib_core.data.safe_pickle import int_lists, load_plain_pickle
from tests.core.test_data import _source_md, _stated


@pytest.fixture(scope="module")
def sessions(mirror: Path) -> dict:
    return {name: data.load("sessions", name) for name in ("diginetica", "nowplaying")}


# ------------------------------------------------------------------------------------------- the unpickler
class _RunsCode:
    """Pickles as a call of ``os.system``: what a malicious file would carry."""

    def __reduce__(self):
        return (os.system, ("echo should-never-run",))


def test_a_pickle_with_a_global_is_refused_before_anything_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    pickles = [pickle.dumps([[1, 2], _RunsCode()], protocol=p) for p in range(pickle.HIGHEST_PROTOCOL + 1)]
    calls = []
    monkeypatch.setattr(os, "system", lambda *a: calls.append(a))
    for raw in pickles:
        with pytest.raises(data.DataFormatError, match=r"refers to the global (posix|nt|os)\.system.*not loaded"):
            load_plain_pickle(raw, "evil.pkl")
    # a class (no call at all) is a global too; so is a set built by copyreg on old protocols, which the data lacks
    with pytest.raises(data.DataFormatError, match="global collections.OrderedDict"):
        load_plain_pickle(pickle.dumps(collections.OrderedDict(a=1)), "class.pkl")
    assert calls == []


def test_extension_codes_and_persistent_ids_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    import copyreg

    copyreg.add_extension("os", "system", 0x7FF0)
    try:
        raw = pickle.PROTO + bytes([2]) + pickle.EXT2 + (0x7FF0).to_bytes(2, "little") + pickle.STOP
        with pytest.raises(data.DataFormatError, match="global os.system"):
            load_plain_pickle(raw, "ext.pkl")
    finally:
        copyreg.remove_extension("os", "system", 0x7FF0)
    with pytest.raises(data.DataFormatError, match="persistent id"):
        load_plain_pickle(pickle.PERSID + b"x\n" + pickle.STOP, "pid.pkl")


def test_plain_data_round_trips_and_broken_pickles_are_format_errors() -> None:
    value = ([[1, 2, 3], [4]], [5, 6])
    assert load_plain_pickle(pickle.dumps(value, protocol=4), "ok.pkl") == value
    with pytest.raises(data.DataFormatError, match="not a readable pickle"):
        load_plain_pickle(pickle.dumps(value)[:-5], "cut.pkl")
    with pytest.raises(data.DataFormatError, match="not a readable pickle"):
        load_plain_pickle(b"", "empty.pkl")
    assert int_lists([[0, 1], []], "f", "x") == [[0, 1], []]
    for bad in ([[1, -2]], [[1, True]], [(1, 2)], [[1.0]], "12"):
        with pytest.raises(data.DataFormatError, match="f: x"):
            int_lists(bad, "f", "x")
    with pytest.raises(data.DataFormatError, match="at least 1"):
        int_lists([[]], "f", "x", min_length=1)


def test_session_parsing_checks_the_shape() -> None:
    assert _parse_sessions([[3, 1, 3]], "t", "train") == {"items": [[3, 1, 3]]}
    assert _parse_sessions(([[1, 2], [1]], [3, 2]), "t", "test") == {"prefix": [[1, 2], [1]], "target": [3, 2]}
    with pytest.raises(data.DataFormatError, match=r"tuple \(prefixes, targets\)"):
        _parse_sessions([[1, 2]], "t", "test")
    with pytest.raises(data.DataFormatError, match="one per prefix"):
        _parse_sessions(([[1, 2]], [3, 4]), "t", "test")


# ------------------------------------------------------------------------------------------ the real files
def test_session_statistics_match_source_md(mirror: Path, sessions: dict) -> None:
    text = _source_md(mirror, "sessions")
    for name, pattern in (("diginetica", r"Diginetica \(CIKM Cup 2016 e-commerce sessions\): ([\d,]+) training "
                                         r"sessions over ([\d,]+) items \((\d+)K clicks\), ([\d,]+) test sessions"),
                          ("nowplaying", r"Nowplaying \(music listening sessions, Zangerle et al\. 2014\): ([\d,]+) "
                                         r"training sessions over ([\d,]+) items \((\d+)K plays\), ([\d,]+) test "
                                         r"sessions")):
        n_train, n_items, thousands, n_test = _stated(pattern, text)
        train, test = sessions[name]["train"]["items"], sessions[name]["test"]
        assert len(train) == n_train and len(test) == n_test
        items = {i for s in train for i in s}
        assert items == set(range(1, n_items + 1))                      # ids 1..N, every one used in training
        assert round(sum(map(len, train)) / 1000) == thousands
        assert max(test["target"]) <= n_items and min(test["target"]) >= 1
        assert all(len(p) >= 1 for p in test["prefix"])


def test_gowalla_statistics_match_source_md(mirror: Path) -> None:
    users, ids, interactions = _stated(r"([\d,]+) users, ([\d,]+) location ids, ([\d,]+) interactions",
                                       _source_md(mirror, "gowalla"))
    gowalla = data.load("gowalla")
    assert {split: len(ds) for split, ds in gowalla.items()} == {"train": users, "validation": users, "test": users}
    assert all(list(ds["user_id"]) == list(range(users)) for ds in gowalla.values())
    assert len({i for ds in gowalla.values() for row in ds["items"] for i in row}) == ids
    assert sum(len(row) for ds in gowalla.values() for row in ds["items"]) == interactions


def test_wikispeedia_names_are_decoded_and_links_join_the_articles(mirror: Path) -> None:
    text = _source_md(mirror, "wikispeedia")
    (articles_stated,) = _stated(r"([\d,]+) articles \(", text)
    (links_stated,) = _stated(r"\(([\d,]+) link lines in this copy", text)
    links, articles = data.load("wikispeedia", "links"), data.load("wikispeedia", "articles")
    assert len(articles) == articles_stated and len(links) == links_stated
    names = set(articles["article"])
    assert "\u00c1ed\u00e1n_mac_Gabr\u00e1in" in names and not any("%" in n and n.count("%") > 1 for n in names)
    assert set(links["source"]) | set(links["target"]) <= names
    categories = data.load("wikispeedia", "categories")
    assert set(categories["article"]) <= names and all(c.startswith("subject.") for c in categories["category"])


def test_set_parsers_name_the_file_and_line() -> None:
    assert _parse_user_items("0 5 6\n1\n", "f") == {"user_id": [0, 1], "items": [[5, 6], []]}
    with pytest.raises(data.DataFormatError, match="f line 2 is not a user id"):
        _parse_user_items("0 5\n1 x\n", "f")
    with pytest.raises(data.DataFormatError, match="f line 1 is not a user id"):
        _parse_user_items("0 5\u00b2\n", "f")                        # a superscript digit is no id
    rows = _parse_wikispeedia("# c\n\nA%20b\tC\n", "links.tsv", 2)
    assert rows == [["A b", "C"]]
    with pytest.raises(data.DataFormatError, match="links.tsv data line 1 has 1"):
        _parse_wikispeedia("# c\nA\n", "links.tsv", 2)
