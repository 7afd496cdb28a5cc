"""Checks on the transcribed paper tables (``data/paper_tables/``) and the bibliography (``references.bib``).

Structure: every CSV is indexed and every index entry has its CSV; every CSV parses as strings with one printed row
per line and unique keys; every index entry has the required fields and cites a key of ``references.bib``.

Consistency: printed averages and retention ratios are recomputed from the transcribed cells, which catches a
mistyped cell (the papers' own tables agree with themselves to the printed digit).

Fidelity: when ``HASHLIB_PAPERS_DIR`` points at the folder holding the papers' texts, a selection of transcribed rows,
the quoted sentences and the captions are looked up verbatim in those texts (skipped otherwise).
"""
from __future__ import annotations

import csv
import os
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from hashlib_core.results import load_paper_table, paper_table_index, paper_tables_dir, repo_root

INDEX_PATH = paper_tables_dir() / "index.yaml"
BIB_PATH = repo_root() / "references.bib"

REQUIRED_FIELDS = ("file", "paper", "table", "page", "location", "caption", "key_columns", "units", "split", "notes")

#: Bib keys that the book cites (fixed by the book's plan; chapters cite them by these names).
REQUIRED_BIB_KEYS = (
    # the five reproduced sources and the EELBERT paper the blog discusses
    "xue2022hashformers", "anderson2020superbloom", "xue2026multihashformer", "julian2023dynamic",
    "cohn2023eelbert", "fusco2023pnlpmixer",
    # models
    "devlin2019bert", "liu2019roberta", "radford2019gpt2", "jiang2023mistral", "qwen2025qwen3",
    "clark2022canine", "sankar2021proformer", "yamaguchi2021frustratingly", "tolstikhin2021mlpmixer",
    "yang2018softmax", "hoffmann2022chinchilla",
    # data sets and benchmarks
    "wang2018glue", "merity2016pointer", "pilehvar2018card660", "luong2013rw", "goo2018slotgated",
    "li2021mtop", "zhang2023xsemplr", "nivre2020ud", "toutanova2015observed", "dettmers2018conve",
    "cantador2011hetrec", "penedo2024fineweb",
    # hashing primitives
    "appleby2011murmurhash3", "broder2000minhash", "bloom1970space", "fan2000summary", "krawczyk1997hmac",
    "rivest1992md5",
)

#: Paper bib key -> file name of its text in ``$HASHLIB_PAPERS_DIR``.
PAPER_TEXTS = {
    "xue2022hashformers": "hashformers-xue-aletras-2022.txt",
    "xue2026multihashformer": "multihashformer-xue-yamaguchi-aletras.txt",
    "fusco2023pnlpmixer": "pnlp-mixer-fusco-et-al.txt",
    "anderson2020superbloom": "superbloom-iclr2020-submission.txt",
    "julian2023dynamic": "dynamic-hash-embeddings-blog-eelbert.md",
}

GLUE_TASKS = ["MNLI", "QNLI", "QQP", "RTE", "SST", "MRPC", "CoLA", "STS"]


def _raw_index() -> dict:
    return yaml.safe_load(INDEX_PATH.read_text(encoding="utf-8"))


def _entries() -> list[dict]:
    return _raw_index()["tables"]


def _entry_ids() -> list[str]:
    return [Path(e["file"]).stem for e in _entries()]


def _bib_keys() -> set[str]:
    return set(re.findall(r"^@\w+\{([^,\s]+),", BIB_PATH.read_text(encoding="utf-8"), flags=re.MULTILINE))


def _row(stem: str, **keys: str) -> pd.Series:
    df = load_paper_table(stem)
    mask = pd.Series(True, index=df.index)
    for column, value in keys.items():
        mask &= df[column] == value
    matched = df[mask]
    assert len(matched) == 1, f"{stem}: expected one row for {keys}, found {len(matched)}"
    return matched.iloc[0]


# ----------------------------------------------------------------------------------------------------------------
# Structure
# ----------------------------------------------------------------------------------------------------------------

def test_index_lists_exactly_the_csv_files() -> None:
    listed = [e["file"] for e in _entries()]
    assert len(listed) == len(set(listed)), "a CSV is listed twice in index.yaml"
    on_disk = sorted(p.name for p in paper_tables_dir().glob("*.csv"))
    assert sorted(listed) == on_disk


def test_lead_loader_sees_every_entry() -> None:
    assert sorted(paper_table_index()) == sorted(_entry_ids())


def test_file_names_follow_the_convention() -> None:
    pattern = re.compile(r"^(hashformers|multihashformer|pnlp_mixer|superbloom|eelbert_blog|eelbert)_[a-z0-9]+\.csv$")
    for entry in _entries():
        name = entry["file"]
        assert pattern.match(name) or name == "vocabulary_bottleneck.csv", name


@pytest.mark.parametrize("entry", _entries(), ids=_entry_ids())
def test_index_entry_has_required_fields(entry: dict) -> None:
    missing = [f for f in REQUIRED_FIELDS if f not in entry]
    assert not missing, f"{entry['file']}: missing {missing}"
    for field in ("file", "paper", "table", "location", "caption", "split", "notes"):
        assert isinstance(entry[field], str) and entry[field].strip(), f"{entry['file']}: empty {field}"
    assert entry["page"] is None or (isinstance(entry["page"], int) and entry["page"] > 0)
    assert isinstance(entry["key_columns"], list) and entry["key_columns"]
    assert isinstance(entry["units"], dict)
    for key in (k.strip() for k in entry["paper"].split(",")):
        assert key in _bib_keys(), f"{entry['file']}: paper {key!r} is not a key of references.bib"


@pytest.mark.parametrize("entry", _entries(), ids=_entry_ids())
def test_csv_parses_with_one_cell_per_column(entry: dict) -> None:
    path = paper_tables_dir() / entry["file"]
    with path.open(encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    assert body, f"{entry['file']} has no data rows"
    assert len(set(header)) == len(header), f"{entry['file']}: duplicate column names"
    for i, row in enumerate(body, start=2):
        assert len(row) == len(header), f"{entry['file']} line {i}: {len(row)} cells for {len(header)} columns"
        for cell in row:
            assert cell and cell == cell.strip(), f"{entry['file']} line {i}: empty or padded cell {cell!r}"

    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    assert list(df.columns) == header
    assert df.shape == (len(body), len(header))


@pytest.mark.parametrize("entry", _entries(), ids=_entry_ids())
def test_key_columns_exist_and_are_unique(entry: dict) -> None:
    df = load_paper_table(Path(entry["file"]).stem)
    keys = entry["key_columns"]
    assert set(keys) <= set(df.columns), f"{entry['file']}: key columns {keys} not in {list(df.columns)}"
    duplicated = df[df.duplicated(keys, keep=False)]
    assert duplicated.empty, f"{entry['file']}: duplicate keys\n{duplicated[keys]}"
    assert set(entry["units"]) <= set(df.columns), f"{entry['file']}: units for unknown columns"


def test_untranscribed_tables_are_documented() -> None:
    missing = _raw_index()["not_transcribed"]
    assert {(m["paper"], m["table"]) for m in missing} >= {
        ("anderson2020superbloom", "Table 2"), ("anderson2020superbloom", "Table 4"),
        ("anderson2020superbloom", "Table 5"),
    }
    for m in missing:
        assert m["paper"] in _bib_keys() and m["reason"].strip()


# ----------------------------------------------------------------------------------------------------------------
# Bibliography
# ----------------------------------------------------------------------------------------------------------------

def test_bib_has_required_keys_once() -> None:
    keys = re.findall(r"^@\w+\{([^,\s]+),", BIB_PATH.read_text(encoding="utf-8"), flags=re.MULTILINE)
    assert len(keys) == len(set(keys)), "duplicate bib keys"
    assert set(REQUIRED_BIB_KEYS) <= set(keys), sorted(set(REQUIRED_BIB_KEYS) - set(keys))


def test_bib_parses_with_pybtex() -> None:
    database = pytest.importorskip("pybtex.database")
    bib = database.parse_file(str(BIB_PATH))
    assert set(REQUIRED_BIB_KEYS) <= set(bib.entries)
    for key, entry in bib.entries.items():
        assert "title" in entry.fields and "year" in entry.fields, key
        assert entry.persons.get("author"), f"{key} has no author"
    hashformers = bib.entries["xue2022hashformers"]
    assert hashformers.fields["pages"] == "7862--7874"  # MultiHashFormer's reference list


# ----------------------------------------------------------------------------------------------------------------
# Internal consistency of the transcription (the papers agree with themselves to the printed digit)
# ----------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("stem", ["hashformers_table1", "hashformers_table6"])
def test_hashformers_glue_average_is_mean_of_tasks(stem: str) -> None:
    df = load_paper_table(stem)
    means = df[GLUE_TASKS].astype(float).mean(axis=1)
    assert (means - df["Avg"].astype(float)).abs().max() <= 0.05 + 1e-9


def test_hashformers_retention_is_score_over_bert_mlm() -> None:
    scores = load_paper_table("hashformers_table1")
    retention = load_paper_table("hashformers_table2")
    base = _row("hashformers_table1", model="BERT-MLM")
    merged = retention.merge(scores, on=["group", "model"], how="left", validate="one_to_one")
    assert not merged["MNLI"].eq("").any() and merged["MNLI"].notna().all()
    for task in [*GLUE_TASKS, "Avg"]:
        prr_column = "PRR_GLUE_Avg" if task == "Avg" else f"PRR_{task}"
        prr = 100 * merged[task].astype(float) / float(base[task])
        assert (prr - merged[prr_column].astype(float)).abs().max() <= 0.05 + 1e-9, task


def test_hashformers_table6_word_rows_repeat_table1() -> None:
    table6 = load_paper_table("hashformers_table6")
    for _, row in table6[table6["token"] == "word"].iterrows():
        twin = _row("hashformers_table1", group=f"{row['group']} (Ours)", model=row["model"])
        for column in [*GLUE_TASKS, "Avg", "Avg_std"]:
            assert float(row[column]) == float(twin[column]), (row["group"], row["model"], column)


@pytest.mark.parametrize("stem,languages", [
    ("pnlp_mixer_table3", ["EN", "ES", "FR", "DE", "HI", "JA", "PT", "TR", "ZH"]),
    ("pnlp_mixer_table4", ["EN", "ES", "FR", "DE", "HI", "TH"]),
])
def test_pnlp_mixer_average_is_mean_of_languages(stem: str, languages: list[str]) -> None:
    df = load_paper_table(stem)
    means = df[languages].astype(float).mean(axis=1)
    assert (means - df["Avg"].astype(float)).abs().max() <= 0.05 + 1e-9


def test_multihashformer_same_model_same_number_across_tables() -> None:
    # H4B16K with 4 MMH3 functions is one model in Table 3 (H4, B16K) and Table 4 (0:4).
    assert _row("multihashformer_table3", MHF="H4")["B16K"] == _row("multihashformer_table4", **{"LSH:MMH3": "LAMBADA"})["0:4"]


# ----------------------------------------------------------------------------------------------------------------
# Fidelity to the texts (needs HASHLIB_PAPERS_DIR)
# ----------------------------------------------------------------------------------------------------------------

def _papers_dir() -> Path:
    env = os.environ.get("HASHLIB_PAPERS_DIR")
    if not env:
        pytest.skip("HASHLIB_PAPERS_DIR is not set: cannot compare the transcriptions with the papers' texts")
    path = Path(env).expanduser()
    if not path.is_dir():
        pytest.skip(f"HASHLIB_PAPERS_DIR={env!r} is not a folder")
    return path


def _paper_text(paper: str) -> str:
    path = _papers_dir() / PAPER_TEXTS[paper]
    if not path.exists():
        pytest.skip(f"{path.name} is not in HASHLIB_PAPERS_DIR")
    return path.read_text(encoding="utf-8")


def _table_lines(text: str) -> str:
    """The text with inline markup removed, tabs kept: printed table rows are tab-separated lines."""
    return re.sub(r"</?(?:b|u)>", "", text)


def _prose(text: str) -> str:
    """Text reduced for phrase matching: no markdown links/emphasis/math delimiters, single spaces."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"</?(?:b|u|sup)>", "", text)
    text = text.replace("*", "").replace("$", "")
    text = re.sub(r"\s+", " ", text)
    return re.sub(r"\(\s+", "(", re.sub(r"\s+\)", ")", text)).strip()


_GREEK = {"$\\epsilon$": "ε", "ϵ": "ε", "$\\beta_1$": "β1", "$\\beta_2$": "β2", "β_1": "β1", "β_2": "β2"}


def _tab_lines(paper: str) -> str:
    """The paper text with inline markup removed and Greek letters spelled as in the CSVs; tabs kept."""
    text = _table_lines(_paper_text(paper))
    for printed, ours in _GREEK.items():
        text = text.replace(printed, ours)
    return text


def _all_columns_but(*skipped: str):
    return lambda row: [row[c] for c in row.index if c not in skipped]


def _glue_with_average(row: pd.Series) -> list[str]:
    """Model, token, tasks, then the average re-joined as printed: "79.5(0.4)"."""
    return [row["model"], row["token"], *(row[t] for t in GLUE_TASKS), f"{row['Avg']}({row['Avg_std']})"]


def _word_pair(row: pd.Series) -> list[str]:
    return [f"\u2194 {row['word_2']}", row["Human"], row["Std."], row["H3B10K"], row["Std.+2L"], row["H4B16K"]]


def _languages_and_average(row: pd.Series) -> list[str]:
    return [row[c] for c in row.index if c not in {"Model", "#Param.", "quantization"}]


#: How a transcribed row appears in the text: the cells that form one contiguous tab-separated run.
ROW_RENDERERS = {
    "hashformers_table1": _glue_with_average,
    "hashformers_table2": _all_columns_but("group"),
    "hashformers_table3": _all_columns_but("group"),
    "hashformers_table4": _all_columns_but(),
    "hashformers_table5": _all_columns_but(),
    "hashformers_table6": _glue_with_average,
    "multihashformer_table1": _all_columns_but("scale"),
    "multihashformer_table2": _all_columns_but(),
    "multihashformer_table3": _all_columns_but(),
    "multihashformer_table4": _all_columns_but(),
    "multihashformer_table5": _word_pair,
    "multihashformer_table6": _word_pair,
    "multihashformer_table7": _all_columns_but(),
    "multihashformer_table8": _all_columns_but(),
    "multihashformer_table9": _all_columns_but(),
    "pnlp_mixer_table1": _all_columns_but(),
    "pnlp_mixer_table2": _all_columns_but(),
    "pnlp_mixer_table3": _languages_and_average,
    "pnlp_mixer_table4": _languages_and_average,
}

#: Rows whose printed cell wraps over several lines of the text (joined in the CSV; see the index notes).
WRAPPED_ROWS = {("hashformers_table5", "Evaluation steps"), ("multihashformer_table8", "Tokenizer")}


@pytest.mark.parametrize("stem", sorted(ROW_RENDERERS))
def test_every_row_occurs_in_text(stem: str) -> None:
    text = _tab_lines(paper_table_index()[stem]["paper"])
    df = load_paper_table(stem)
    for _, row in df.iterrows():
        if (stem, row.iloc[0]) in WRAPPED_ROWS:
            continue
        printed = "\t".join(ROW_RENDERERS[stem](row))
        whole_cells = re.compile(r"(?:^|\t)" + re.escape(printed) + r"(?:\t|$)", flags=re.MULTILINE)
        assert whole_cells.search(text), f"{stem}: row {row.iloc[0]!r} printed as {printed!r} is not in the paper text"


def test_wrapped_cells_start_as_printed() -> None:
    text = _tab_lines("xue2022hashformers")
    steps = _row("hashformers_table5", Hyperparameter="Evaluation steps")["Fine-tuning"]
    assert f"Evaluation steps\t{steps[:len('2455 for MNLI, 655 for QNLI,')]}" in text
    text = _tab_lines("xue2026multihashformer")
    assert "Tokenizer\texpanded\texpanded\n\tMistral\tMistral" in text
    assert _row("multihashformer_table8", Hyperparameters="Tokenizer")["1B"] == "expanded Mistral"


def test_every_table_with_a_text_row_is_checked() -> None:
    tab_papers = {"xue2022hashformers", "xue2026multihashformer", "fusco2023pnlpmixer"}
    stems = {stem for stem, e in paper_table_index().items() if e["paper"] in tab_papers and "_fig" not in stem}
    assert stems == set(ROW_RENDERERS)


def test_spot_check_superbloom_prose_cells() -> None:
    text = _prose(_paper_text("anderson2020superbloom"))
    # The text breaks the name at a line-end hyphen: "baseline- l12 (55.0%)".
    assert f"baseline- l12 ({_row('superbloom_table3', model='baseline-l12')['rec@1']})" in text
    assert f"baseline-l1 ({_row('superbloom_table3', model='baseline-l1')['rec@1']})" in text
    low = _row("superbloom_table3", model="superbloom-d256l1")["rec@1"]
    high = _row("superbloom_table3", model="superbloom-d256l12")["rec@1"]
    assert f"rec@1 increases from {low} to {high}" in text
    full = _row("superbloom_table1", model="baseline")["#samples"]
    hashed = _row("superbloom_table1", model="superbloom")["#samples"]
    sampled = _row("superbloom_table1", model="sampled-softmax")["#samples"]
    assert f"{full} and {hashed}, respectively" in text and f"we use {sampled} samples" in text


@pytest.mark.parametrize("stem", ["vocabulary_bottleneck", "eelbert_blog_napkin", "multihashformer_fig2",
                                  "multihashformer_fig3"])
def test_quotes_occur_in_text_and_hold_their_cells(stem: str) -> None:
    df = load_paper_table(stem)
    value_columns = [c for c in df.columns if c in {"value", "share", "embedding_share", "vocab_size",
                                                     "embedding_params", "total_params"}]
    for _, row in df.iterrows():
        paper = row["source"] if "source" in df.columns else paper_table_index()[stem]["paper"]
        text = _prose(_paper_text(paper))
        for part in row["quote"].split(" [...] "):
            assert _prose(part) in text, f"{stem}: quote not found: {part!r}"
        for column in value_columns:
            if row[column] != "-":
                standalone = re.compile(r"(?<![\d.])" + re.escape(row[column]) + r"(?!\d)")
                assert standalone.search(row["quote"]), f"{stem}: {column}={row[column]!r} is not in its quote"


def test_eelbert_abstract_values_are_in_their_quotes() -> None:
    # no text of the abstract is shared (see the entry's notes): each value must at least be in its own quote
    for _, row in load_paper_table("eelbert_abstract").iterrows():
        assert row["value"].replace("within ", "") in row["quote"], row["claim"]


#: Captions that are not verbatim in the source text (reconstructed or written by us; see their notes).
NON_VERBATIM_CAPTIONS = {"hashformers_table4", "vocabulary_bottleneck", "eelbert_abstract"}


_VERBATIM = [(e, i) for e, i in zip(_entries(), _entry_ids()) if Path(e["file"]).stem not in NON_VERBATIM_CAPTIONS]


def test_non_verbatim_captions_are_explained() -> None:
    entries = {Path(e["file"]).stem: e for e in _entries()}
    for stem in NON_VERBATIM_CAPTIONS:
        assert "caption" in entries[stem]["notes"].lower() or stem == "vocabulary_bottleneck", stem
        assert entries[stem]["notes"].strip()


@pytest.mark.parametrize("entry", [e for e, _ in _VERBATIM], ids=[i for _, i in _VERBATIM])
def test_captions_are_verbatim(entry: dict) -> None:
    stem = Path(entry["file"]).stem
    text = _prose(_paper_text(entry["paper"]))
    for part in entry["caption"].split(" [...]"):
        assert _prose(part) in text, f"{stem}: caption not found: {part!r}"
