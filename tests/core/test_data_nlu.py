"""MTOP in full and MASSIVE: MTOP's slot tags derived from its flat parses (golden examples, malformed lines), checked
against the XSemPLR subset's parses; the row counts and statistics their SOURCE.md states, recomputed from the files."""
from __future__ import annotations

import collections
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hashlib_core import data
from hashlib_core.data import loaders_nlu
from hashlib_core.data.loaders_nlu import _mtop_row, _parse_flat, _parse_massive, _parse_mtop
from tests.core.test_data import MANIFEST, _source_md, _stated

LANGUAGES = data.list_configs("mtop")


@pytest.fixture(scope="module")
def loaded(mirror: Path) -> Callable[[str, str], Any]:
    memo: dict[tuple[str, str], Any] = {}

    def get(name: str, language: str) -> Any:
        if (name, language) not in memo:
            memo[(name, language)] = data.load(name, language)
        return memo[(name, language)]

    return get


def _no_space(text: str) -> str:
    return "".join(text.split())


def _tagged(row: dict[str, Any]) -> list[tuple[str, str]]:
    return list(zip(row["tokens"], row["slot_tags"]))


# ------------------------------------------------------------------------------------- parsing (always run)
def test_parse_flat_golden_and_malformed_parses() -> None:
    assert _parse_flat("[IN:GET_WEATHER [SL:LOCATION Maricopa County ] [SL:DATE_TIME this week ] ]") == (
        "IN:GET_WEATHER", [("LOCATION", ["Maricopa", "County"]), ("DATE_TIME", ["this", "week"])])
    assert _parse_flat("[IN:GET_ALARM ]") == ("IN:GET_ALARM", [])
    for parse, problem in [
        ("[SL:LOCATION Paris ]", r"does not start with an \[IN:"),
        ("[IN:GET_WEATHER [SL:LOCATION Paris ]", "unbalanced brackets"),
        ("[IN:GET_WEATHER [SL:LOCATION [IN:GET_LOCATION [SL:SEARCH_RADIUS near ] ] ] ]", "inside slot 'LOCATION'"),
        ("[IN:GET_WEATHER in [SL:LOCATION Paris ] ]", "word 'in' lies outside every slot"),
        ("[IN:GET_WEATHER [SL:LOCATION ] ]", "slot 'LOCATION' has no words"),
        ("[IN:GET_WEATHER [SL:LOCATION Paris ] ] ]", "text after the intent's closing bracket"),
        ("[IN:GET_WEATHER [LOCATION Paris ] ]", "is not a slot"),
    ]:
        with pytest.raises(data.DataFormatError, match=problem):
            _parse_flat(parse)


def test_slot_tags_golden_adjacent_nested_and_unsegmented_slots() -> None:
    # adjacent slots; MTOP's tokens split "7pm." into "7 pm .", the utterance does not
    row = _mtop_row("Remind me to call mom at 7pm.",
                    "[IN:CREATE_REMINDER [SL:PERSON_REMINDED me ] [SL:TODO call mom ] [SL:DATE_TIME at 7 pm ] ]")
    assert row["intent"] == "IN:CREATE_REMINDER" and row["unmatched_slots"] == 0
    assert _tagged(row) == [("Remind", "O"), ("me", "B-PERSON_REMINDED"), ("to", "O"), ("call", "B-TODO"),
                            ("mom", "I-TODO"), ("at", "B-DATE_TIME"), ("7pm.", "I-DATE_TIME")]
    assert row["slots"] == [{"label": "PERSON_REMINDED", "start": 7, "end": 9},
                            {"label": "TODO", "start": 13, "end": 21},
                            {"label": "DATE_TIME", "start": 22, "end": 28}]
    # a word-aligned occurrence beats one inside a word ("messages")
    row = _mtop_row("show messages from me", "[IN:GET_MESSAGE [SL:SENDER me ] ]")
    assert row["slot_tags"] == ["O", "O", "O", "B-SENDER"]
    # parse order decides: the clitic "me" of "recuérdame" comes before the TODO that holds the word "me"
    row = _mtop_row("recuérdame pedir desayuno cuando me despierte",
                    "[IN:CREATE_REMINDER [SL:PERSON_REMINDED me ] [SL:TODO pedir desayuno cuando me despierte ] ]")
    assert row["slot_tags"] == ["B-PERSON_REMINDED", "B-TODO", "I-TODO", "I-TODO", "I-TODO", "I-TODO"]
    assert row["slots"][0] == {"label": "PERSON_REMINDED", "start": 8, "end": 10}
    # a slot nested in an earlier one (flattened from a nested parse) keeps its span but tags nothing
    row = _mtop_row("wake me at 6 tomorrow", "[IN:CREATE_ALARM [SL:PERSON_REMINDED me ] "
                                             "[SL:DATE_TIME at 6 tomorrow ] [SL:DATE_TIME tomorrow ] ]")
    assert row["slot_tags"] == ["O", "B-PERSON_REMINDED", "B-DATE_TIME", "I-DATE_TIME", "I-DATE_TIME"]
    assert row["slots"][2] == {"label": "DATE_TIME", "start": 13, "end": 21}
    # the same word claimed twice: both slots share its span
    row = _mtop_row("Erstelle einen Timer für 80 Sekunden",
                    "[IN:CREATE_TIMER [SL:METHOD_TIMER Timer ] [SL:METHOD_TIMER Timer ] "
                    "[SL:DATE_TIME für 80 Sekunden ] ]")
    assert row["slot_tags"] == ["O", "O", "B-METHOD_TIMER", "B-DATE_TIME", "I-DATE_TIME", "I-DATE_TIME"]
    assert row["slots"][0] == row["slots"][1] == {"label": "METHOD_TIMER", "start": 15, "end": 20}
    # unsegmented text (as Thai): one whitespace token holds two slots; the first tags it, both keep their spans
    row = _mtop_row("sendhellotoann now", "[IN:SEND_MESSAGE [SL:CONTENT_EXACT hel lo ] [SL:RECIPIENT ann ] ]")
    assert row["slot_tags"] == ["B-CONTENT_EXACT", "O"]
    assert [(s["start"], s["end"]) for s in row["slots"]] == [(4, 9), (11, 14)]
    # words that are not in the utterance are counted, not guessed
    row = _mtop_row("call mom", "[IN:CREATE_CALL [SL:CONTACT dad ] ]")
    assert row["slot_tags"] == ["O", "O"] and row["slots"] == [] and row["unmatched_slots"] == 1


def test_malformed_mtop_and_massive_lines_name_the_file_and_line() -> None:
    good = "Call mom\t[IN:CREATE_CALL [SL:CONTACT mom ] ]\t[IN:CREATE_CALL [SL:CONTACT mom ] ]\tcalling\ten_XX\n"
    assert [r["slot_tags"] for r in _parse_mtop(good, "en/train.txt")] == [["O", "B-CONTACT"]]
    bad = good + "Call dad\t[IN:CREATE_CALL [SL:CONTACT dad ]\t[IN:CREATE_CALL ]\tcalling\ten_XX\n"
    with pytest.raises(data.DataFormatError, match=r"MTOP file 'en/train.txt' line 2: .*unbalanced brackets"):
        _parse_mtop(bad, "en/train.txt")
    with pytest.raises(data.DataFormatError, match="row 2 has 4 tab-separated fields, expected 5"):
        _parse_mtop(good + "Call dad\t[IN:CREATE_CALL ]\tcalling\ten_XX\n", "en/train.txt")
    with pytest.raises(data.DataFormatError, match="line 1 has an empty utterance"):
        _parse_mtop(" " + good[len("Call mom"):], "en/train.txt")

    good = "wake me up at nine\talarm_set\tO O O O B-time\talarm\ten-US\n"
    assert _parse_massive(good, "en/train_en_raw.txt")[0]["slot_tags"] == ["O", "O", "O", "O", "B-time"]
    with pytest.raises(data.DataFormatError, match="line 2: 5 tokens but 4 slot tags"):
        _parse_massive(good + good.replace("O O O O", "O O O"), "en/train_en_raw.txt")
    with pytest.raises(data.DataFormatError, match="slot tag 'X-time' is not O, B-<slot> or I-<slot>"):
        _parse_massive(good.replace("B-time", "X-time"), "en/train_en_raw.txt")


def test_load_mtop_counts_and_warns_about_unmatched_slots(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = {"en/train.txt": "Call mom\t[IN:CREATE_CALL [SL:CONTACT dad ] ]\t[IN:CREATE_CALL ]\tcalling\ten_XX\n",
             "en/eval.txt": "Stop\t[IN:STOP_MUSIC ]\t[IN:STOP_MUSIC ]\tmusic\ten_XX\n",
             "en/test.txt": "Call mom\t[IN:CREATE_CALL [SL:CONTACT mom ] ]\t[IN:CREATE_CALL ]\tcalling\ten_XX\n"}
    monkeypatch.setattr(loaders_nlu, "_read_text", lambda name, file, verify: texts[file])
    with pytest.warns(UserWarning, match=r"en/train.txt: 1 slots in 1 rows do not occur in their utterance"):
        ds = data.load_mtop("en")
    assert ds["train"]["unmatched_slots"][:] == [1] and ds["test"]["unmatched_slots"][:] == [0]
    assert ds["train"].features["intent"].names == ["IN:CREATE_CALL", "IN:STOP_MUSIC"]
    assert ds["train"].features["slot_tags"].feature.names == ["B-CONTACT", "O"]
    with pytest.raises(TypeError, match="language must be a str"):
        data.load_mtop(None)
    with pytest.raises(ValueError, match="unknown config 'xx'"):
        data.load_massive("xx")


# -------------------------------------------------------------------------------- the real files (mirror)
def _per_split(name: str, language: str) -> dict[str, int]:
    """Rows per split from the manifest."""
    entry = MANIFEST[name]
    return {split: entry["files"][table["file"]]["rows"]
            for split, table in entry["configs"][language]["splits"].items()}


@pytest.mark.parametrize("language", LANGUAGES)
def test_mtop_rows_tags_and_spans(mirror: Path, loaded: Callable[[str, str], Any], language: str) -> None:
    stated = _stated(rf"\b{language} ([\d,]+) / ([\d,]+) / ([\d,]+)", _source_md(mirror, "mtop"))
    assert tuple(_per_split("mtop", language).values()) == stated
    mtop = loaded("mtop", language)
    assert {split: len(ds) for split, ds in mtop.items()} == _per_split("mtop", language)
    for ds in mtop.values():
        columns = ds[:]
        assert all(len(tokens) == len(tags) for tokens, tags in zip(columns["tokens"], columns["slot_tags"]))
        assert not any(columns["unmatched_slots"])            # every slot's words occur in its utterance
        for text, parse, slots in zip(columns["text"], columns["parse"], columns["slots"]):
            words = [_no_space("".join(w)) for _, w in _parse_flat(parse)[1]]
            assert [_no_space(text[s["start"]:s["end"]]) for s in slots] == words


def test_mtop_statistics_and_slot_inventory(mirror: Path, loaded: Callable[[str, str], Any]) -> None:
    """SOURCE.md's English intent, slot-type and domain counts are those of the decoupled (nested) parses; the flat
    parses' slot types are exactly the slots of pNLP-Mixer's MTOP label file, whose tags cover every derived tag."""
    intents, slot_types, domains = _stated(r"(\d+) intents, (\d+) slot types, (\d+) domains \(en\)",
                                           _source_md(mirror, "mtop"))
    english = loaded("mtop", "en")
    rows = [line.split("\t") for split in ("train", "eval", "test")
            for line in (mirror / "mtop" / "en" / f"{split}.txt").read_text(encoding="utf-8").splitlines()]
    assert len({m for row in rows for m in re.findall(r"\[IN:(\S+)", row[2])}) == intents
    assert len({m for row in rows for m in re.findall(r"\[SL:(\S+)", row[2])}) == slot_types
    assert len({d for ds in english.values() for d in ds["domain"][:]}) == domains
    inventory = data.load_pnlp_mixer_labels("mtop")
    flat_slots = {s["label"] for ds in english.values() for slots in ds["slots"][:] for s in slots}
    assert flat_slots == {tag[2:] for tag in inventory if tag != "O"}
    for language in LANGUAGES:
        assert set(loaded("mtop", language)["train"].features["slot_tags"].feature.names) <= set(inventory)


def _top_level(tree: str) -> tuple[str, list[tuple[str, str]]]:
    """An XSemPLR (decoupled) tree's intent and its top-level slots as (label, words below it, whitespace removed)."""
    pieces = tree.split()
    slots: list[tuple[str, list[str]]] = []
    depth = 0
    for piece in pieces[1:-1]:
        if piece.startswith("["):
            depth += 1
            if depth == 1:
                slots.append((piece[len("[SL:"):], []))
        elif piece == "]":
            depth -= 1
        else:
            slots[-1][1].append(piece)
    return pieces[0][1:], [(label, "".join(words)) for label, words in slots]


@pytest.mark.parametrize("language", LANGUAGES)
def test_mtop_tags_agree_with_the_xsemplr_subset(mirror: Path, loaded: Callable[[str, str], Any],
                                                 language: str) -> None:
    """Every XSemPLR utterance occurs in the same split of the full data (whitespace aside). Where a row's flat parse
    has XSemPLR's top-level slots (XSemPLR's decoupled trees drop the words between nested slots, so some rows do
    not; they must be a minority), the intent agrees, and each slot whose words occur once among XSemPLR's tokens
    (MTOP's own tokenization) covers the same characters; the tokens it shares with no earlier slot of the row are
    tagged B- then I- with its label."""
    full = loaded("mtop", language)
    compared = total = 0
    for file, split in (("dev.json", "validation"), ("test.json", "test")):
        ours = full[split]
        intents, tags = ours.features["intent"].names, ours.features["slot_tags"].feature.names
        by_text = collections.defaultdict(list)
        for i, text in enumerate(ours["text"][:]):
            by_text[_no_space(text)].append(i)
        items = json.loads((mirror / "mtop_xsemplr" / file).read_text(encoding="utf-8"))
        total += len(items)
        for item in items:
            question, (intent, slots) = item["question"][language], _top_level(item["mr"]["slot_intent"][language])
            assert by_text[_no_space(question)], f"{file}: {question!r} is not in the full {split} split"
            same = [row for row in (ours[i] for i in by_text[_no_space(question)])
                    if sorted((label, "".join(w)) for label, w in _parse_flat(row["parse"])[1]) == sorted(slots)]
            if not same:
                continue
            assert intent in {intents[row["intent"]] for row in same}, question
            row = next(r for r in same if intents[r["intent"]] == intent)
            compared += 1
            tokens, offsets = question.split(), [0]
            for token in tokens:
                offsets.append(offsets[-1] + len(token))
            text, spans = row["text"], [(s["start"], s["end"]) for s in row["slots"]]
            ours_tokens = [m.span() for m in re.finditer(r"\S+", text)]
            for i, ((label, words), (start, end)) in enumerate(zip(_parse_flat(row["parse"])[1], spans)):
                at = [k for k in range(len(tokens) - len(words) + 1) if tokens[k:k + len(words)] == words]
                if len(at) != 1:
                    continue
                assert (len(_no_space(text[:start])), len(_no_space(text[:end]))) == (
                    offsets[at[0]], offsets[at[0] + len(words)]), (question, label)
                free = [k for k, (s, e) in enumerate(ours_tokens) if s < end and e > start
                        and not any(s < pe and ps < e for ps, pe in spans[:i])]
                assert [tags[row["slot_tags"][k]] for k in free] == (
                    [f"B-{label}"] + [f"I-{label}"] * (len(free) - 1))[:len(free)], (question, label)
    assert 2 * compared > total


def test_massive_rows_statistics_and_parallel_locales(mirror: Path, loaded: Callable[[str, str], Any]) -> None:
    """SOURCE.md's per-locale counts (rows per split; intents, slot types and domains over the three splits), one tag
    per token on every row, and the locales as parallel translations: the same intent row by row."""
    intents, slot_types, domains, *rows = _stated(
        r"(\d+) intents, (\d+) slot types, (\d+) domains; ([\d,]+) train / ([\d,]+) dev / ([\d,]+) test utterances "
        r"per locale", _source_md(mirror, "massive"))
    english = loaded("massive", "en")
    for language in data.list_configs("massive"):
        assert list(_per_split("massive", language).values()) == rows
        massive = loaded("massive", language)
        assert {split: len(ds) for split, ds in massive.items()} == _per_split("massive", language)
        train = massive["train"]
        assert len(train.features["intent"].names) == intents
        assert len({tag[2:] for tag in train.features["slot_tags"].feature.names if tag != "O"}) == slot_types
        assert len({d for ds in massive.values() for d in ds["domain"][:]}) == domains
        for split, ds in massive.items():
            columns = ds[:]
            assert all(len(tokens) == len(tags) for tokens, tags in zip(columns["tokens"], columns["slot_tags"]))
            assert all(text.split() == tokens for text, tokens in zip(columns["text"], columns["tokens"]))
            assert ds.features["intent"].int2str(columns["intent"]) == english[split].features["intent"].int2str(
                english[split]["intent"][:])


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab c\t7pm?é\u0e01\u00a0")), max_size=30),
       st.lists(st.text(alphabet=st.sampled_from(list("abc7pm?é\u0e01")), min_size=1, max_size=4), min_size=1,
                max_size=3))
def test_slot_occurrences_fast_path_equals_the_regular_expression(text, words):
    """The whitespace-free search finds exactly the spans the one-regex-per-slot reference finds (overlapping
    ones included), on utterances with spaces, tabs and non-breaking spaces anywhere."""
    from hashlib_core.data.loaders_nlu import _occurrences, _occurrences_reference

    assert _occurrences(text, words) == _occurrences_reference(text, words)
