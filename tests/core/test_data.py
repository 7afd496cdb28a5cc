"""Tests of hashlib_core.data: look-up order, checksums, errors, the manifest, and every loader.

Two groups:

* Tests on a tiny synthetic manifest (always run): mirror/cache/download order, checksum refusal, error
  messages, the verification memo, parsers.
* Tests on the real dataset mirror, found only through ``HASHLIB_DATA_DIR`` (fixture ``mirror``): the
  manifest agrees with every dataset's SOURCE.md (files, sizes, sha256, row counts), each loader returns the
  manifest's row counts, and statistics stated in the SOURCE.md prose are recomputed from the loaded data.
  Without ``HASHLIB_DATA_DIR`` these tests are skipped, unless ``HASHLIB_REQUIRE_DATA=1`` (CI), where the
  skip becomes a failure.
"""
from __future__ import annotations

import collections
import gzip
import hashlib
import io
import json
import os
import re
import statistics
import tarfile
import urllib.error
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from datasets import Dataset, DatasetDict

from hashlib_core import data, pretraining
from hashlib_core.data import catalog, lookup  # the modules whose globals the tests patch

REPO_ROOT = Path(__file__).resolve().parents[2]
REAL_FETCH = data.fetch_bytes
MANIFEST = data.manifest()["datasets"]
#: the datasets whose files are in the staged mirror (``staged: false`` files are found in the cache or downloaded)
STAGED = [name for name, entry in MANIFEST.items() if all(spec.get("staged", True) for spec in entry["files"].values())]
UNSTAGED = [name for name in MANIFEST if name not in STAGED]


# --------------------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def loaded(mirror: Path) -> Callable[..., Any]:
    """``loaded(name, config=None)``: the loader's result, computed once per module."""
    memo: dict[tuple[str, str | None], Any] = {}

    def get(name: str, config: str | None = None) -> Any:
        if (name, config) not in memo:
            memo[(name, config)] = data.load(name, config)
        return memo[(name, config)]

    return get


@dataclass
class Toy:
    mirror: Path
    cache: Path
    payload: bytes
    member_payload: bytes
    archive: bytes
    url: str
    archive_url: str
    calls: list[str]

    def mirror_file(self, file: str = "a.txt") -> Path:
        return self.mirror / "toy" / file

    def cache_file(self, file: str = "a.txt") -> Path:
        return self.cache / "toy" / file


def _tar_gz(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, content in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


def _sha(payload: bytes) -> str:
    return hashlib.sha256(payload).hexdigest()


def _toy_manifest(toy_url: str, payload: bytes, archive_url: str, archive: bytes, member: bytes) -> dict:
    return {
        "schema_version": 1,
        "datasets": {
            "toy": {
                "title": "Toy", "folder": "toy", "loader": "load_toy", "used_for": "tests", "license": "CC0",
                "citation": "none", "source": [{"repository": "example/toy", "commit": "0" * 40}],
                "files": {
                    "a.txt": {"url": toy_url, "sha256": _sha(payload), "bytes": len(payload), "rows": 2},
                    "b.txt": {"url": archive_url, "sha256": _sha(member), "bytes": len(member), "rows": 1,
                              "archive": {"sha256": _sha(archive), "bytes": len(archive), "member": "b.txt"}},
                },
                "configs": {"default": {"table": {"file": "a.txt"}}},
            }
        },
    }


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Toy:
    """A one-dataset manifest, an empty mirror and cache, and a downloader that reports 'network down'."""
    payload = b"alpha\nbeta\n"
    member_payload = b"gamma\n"
    archive = _tar_gz({"./b.txt": member_payload, "other.txt": b"x"})
    url, archive_url = "https://example.invalid/toy/a.txt", "https://example.invalid/toy/archive.tar.gz"
    manifest_path = tmp_path / "manifest.yaml"
    manifest_path.write_text(yaml.safe_dump(_toy_manifest(url, payload, archive_url, archive, member_payload)))
    calls: list[str] = []

    def network_down(requested: str, timeout: float = 0.0) -> bytes:
        calls.append(requested)
        raise urllib.error.URLError("network is unreachable")

    monkeypatch.setattr(catalog, "MANIFEST_PATH", manifest_path)
    monkeypatch.setattr(lookup, "fetch_bytes", network_down)
    monkeypatch.setattr(lookup, "_VERIFIED", {})
    monkeypatch.setenv(data.DATA_DIR_ENV, str(tmp_path / "mirror"))
    monkeypatch.setenv(data.CACHE_DIR_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(data.OFFLINE_ENV, raising=False)
    return Toy(tmp_path / "mirror", tmp_path / "cache", payload, member_payload, archive, url, archive_url, calls)


def _write(path: Path, payload: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(payload)
    return path


def _flip_first_byte(payload: bytes) -> bytes:
    return bytes([payload[0] ^ 0x01]) + payload[1:]


# ------------------------------------------------------------------------ look-up order and errors
def test_missing_file_error_names_dataset_paths_url_and_fix(toy: Toy) -> None:
    with pytest.raises(data.DatasetUnavailableError) as caught:
        data.dataset_path("toy", "a.txt")
    message = str(caught.value)
    for expected in ("'toy'", "'a.txt'", str(toy.mirror_file()), str(toy.cache_file()), toy.url,
                     "network is unreachable", data.DATA_DIR_ENV, "make the source reachable (network access)"):
        assert expected in message
    # the offline variable is not set, so the fix must not tell the user to unset it
    assert data.OFFLINE_ENV not in message and "download=True" not in message
    assert isinstance(caught.value, data.DataError) and isinstance(caught.value, RuntimeError)
    assert caught.value.paths == (toy.mirror_file(), toy.cache_file())
    assert caught.value.url == toy.url and caught.value.dataset == "toy" and caught.value.file == "a.txt"
    assert toy.calls == [toy.url]
    assert not toy.cache_file().exists()


def test_missing_file_without_mirror_says_the_variable_is_unset(toy: Toy, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(data.DATA_DIR_ENV)
    with pytest.raises(data.DatasetUnavailableError, match=f"{data.DATA_DIR_ENV} is not set") as caught:
        data.dataset_path("toy", "a.txt")
    assert caught.value.paths == (toy.cache_file(),)


@pytest.mark.parametrize("value", ["1", "true", "YES", " on "])
def test_offline_variable_forbids_download(toy: Toy, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(data.OFFLINE_ENV, value)
    assert not data.downloads_enabled()
    with pytest.raises(data.DatasetUnavailableError, match=f"disabled by {data.OFFLINE_ENV}") as caught:
        data.dataset_path("toy", "a.txt")
    assert toy.calls == []
    message = str(caught.value)
    assert f"disabled by {data.OFFLINE_ENV}={value.strip()}" in message
    assert f"or unset {data.OFFLINE_ENV} so that the file is downloaded" in message
    assert "download=True" not in message and "network access" not in message


@pytest.mark.parametrize("value", ["", "0", "false"])
def test_offline_variable_other_values_allow_download(toy: Toy, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(data.OFFLINE_ENV, value)
    assert data.downloads_enabled()


def test_download_false_forbids_download(toy: Toy) -> None:
    with pytest.raises(data.DatasetUnavailableError, match="disabled by download=False") as caught:
        data.dataset_path("toy", "a.txt", download=False)
    assert toy.calls == []
    message = str(caught.value)
    assert "call it with download=True (the default) so that the file is downloaded" in message
    assert data.OFFLINE_ENV not in message


def test_download_false_and_offline_variable_name_both_fixes(toy: Toy, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(data.OFFLINE_ENV, "1")
    with pytest.raises(data.DatasetUnavailableError) as caught:
        data.dataset_path("toy", "a.txt", download=False)
    message = str(caught.value)
    assert f"disabled by download=False and {data.OFFLINE_ENV}=1" in message
    assert f"call it with download=True (the default) and unset {data.OFFLINE_ENV} so that" in message
    assert toy.calls == []


def test_manifest_path_is_the_repository_manifest() -> None:
    assert data.MANIFEST_PATH == REPO_ROOT / "data" / "manifest.yaml" == catalog.MANIFEST_PATH
    assert data.MANIFEST_PATH.is_file()


def test_download_is_verified_cached_and_then_reused(toy: Toy, monkeypatch: pytest.MonkeyPatch) -> None:
    def serve(requested: str, timeout: float = 0.0) -> bytes:
        toy.calls.append(requested)
        return toy.payload

    monkeypatch.setattr(lookup, "fetch_bytes", serve)
    path = data.dataset_path("toy", "a.txt")
    assert path == toy.cache_file()
    assert path.read_bytes() == toy.payload
    assert toy.calls == [toy.url]
    assert data.dataset_path("toy", "a.txt") == path
    assert toy.calls == [toy.url]


def test_corrupt_download_is_refused_and_not_cached(toy: Toy, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lookup, "fetch_bytes", lambda url, timeout=0.0: _flip_first_byte(toy.payload))
    with pytest.raises(data.ChecksumMismatchError, match="nothing was written to the cache") as caught:
        data.dataset_path("toy", "a.txt")
    assert toy.url in str(caught.value) and _sha(toy.payload) in str(caught.value)
    assert not any(path.is_file() for path in toy.cache.rglob("*"))


def test_archive_member_is_downloaded_verified_and_cached(toy: Toy, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lookup, "fetch_bytes", lambda url, timeout=0.0: toy.archive if url == toy.archive_url else b"")
    path = data.dataset_path("toy", "b.txt")
    assert path == toy.cache_file("b.txt")
    assert path.read_bytes() == toy.member_payload


def test_corrupt_archive_is_refused(toy: Toy, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lookup, "fetch_bytes", lambda url, timeout=0.0: _flip_first_byte(toy.archive))
    with pytest.raises(data.ChecksumMismatchError, match="the archive downloaded from"):
        data.dataset_path("toy", "b.txt")
    assert not toy.cache_file("b.txt").exists()


def test_real_downloader_fills_cache_from_a_file_url(toy: Toy, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    source = _write(tmp_path / "upstream" / "a.txt", toy.payload)
    manifest = yaml.safe_load(catalog.MANIFEST_PATH.read_text())
    manifest["datasets"]["toy"]["files"]["a.txt"]["url"] = source.as_uri()
    catalog.MANIFEST_PATH.write_text(yaml.safe_dump(manifest))
    data._read_manifest.cache_clear()
    monkeypatch.setattr(lookup, "fetch_bytes", REAL_FETCH)
    assert data.dataset_path("toy", "a.txt").read_bytes() == toy.payload
    assert toy.cache_file().read_bytes() == toy.payload


def test_real_downloader_failure_becomes_unavailable_error(toy: Toy, monkeypatch: pytest.MonkeyPatch,
                                                           tmp_path: Path) -> None:
    manifest = yaml.safe_load(catalog.MANIFEST_PATH.read_text())
    missing_url = (tmp_path / "upstream" / "missing.txt").as_uri()
    manifest["datasets"]["toy"]["files"]["a.txt"]["url"] = missing_url
    catalog.MANIFEST_PATH.write_text(yaml.safe_dump(manifest))
    data._read_manifest.cache_clear()
    monkeypatch.setattr(lookup, "fetch_bytes", REAL_FETCH)
    with pytest.raises(data.DatasetUnavailableError, match=f"download from {re.escape(missing_url)} failed"):
        data.dataset_path("toy", "a.txt")


def test_fetch_bytes_rejects_non_string_url() -> None:
    with pytest.raises(TypeError, match="url must be a non-empty str"):
        REAL_FETCH(b"https://example.invalid")  # type: ignore[arg-type]


def test_mirror_is_used_before_cache(toy: Toy) -> None:
    _write(toy.mirror_file(), toy.payload)
    _write(toy.cache_file(), toy.payload)
    assert data.dataset_path("toy", "a.txt") == toy.mirror_file()


def test_cache_is_used_when_mirror_lacks_the_file(toy: Toy) -> None:
    toy.mirror.mkdir(parents=True)
    _write(toy.cache_file(), toy.payload)
    assert data.dataset_path("toy", "a.txt") == toy.cache_file()
    assert toy.calls == []


def test_corrupt_mirror_file_is_refused(toy: Toy) -> None:
    path = _write(toy.mirror_file(), _flip_first_byte(toy.payload))
    with pytest.raises(data.ChecksumMismatchError) as caught:
        data.dataset_path("toy", "a.txt")
    message = str(caught.value)
    assert str(path) in message and _sha(toy.payload) in message and _sha(path.read_bytes()) in message
    assert toy.url in message and "Fix:" in message
    assert isinstance(caught.value, data.DataError)
    assert toy.calls == []


def test_corrupt_cache_file_is_refused_not_replaced(toy: Toy) -> None:
    path = _write(toy.cache_file(), _flip_first_byte(toy.payload))
    with pytest.raises(data.ChecksumMismatchError, match=re.escape(str(path))):
        data.dataset_path("toy", "a.txt")
    assert toy.calls == []


def test_wrong_size_is_refused_even_without_verification(toy: Toy) -> None:
    _write(toy.mirror_file(), toy.payload[:-1])
    with pytest.raises(data.ChecksumMismatchError, match=f"expected {len(toy.payload)}"):
        data.dataset_path("toy", "a.txt", verify=False)


def test_verify_false_skips_the_sha256_only(toy: Toy) -> None:
    _write(toy.mirror_file(), _flip_first_byte(toy.payload))
    assert data.dataset_path("toy", "a.txt", verify=False) == toy.mirror_file()
    with pytest.raises(data.ChecksumMismatchError):
        data.dataset_path("toy", "a.txt", verify=True)


def test_sha256_is_computed_once_per_file_state(toy: Toy, monkeypatch: pytest.MonkeyPatch) -> None:
    hashed: list[Path] = []
    real_hash = lookup._sha256_file

    def counting_hash(path: Path) -> str:
        hashed.append(path)
        return real_hash(path)

    monkeypatch.setattr(lookup, "_sha256_file", counting_hash)
    path = _write(toy.mirror_file(), toy.payload)
    data.dataset_path("toy", "a.txt")
    data.dataset_path("toy", "a.txt")
    assert hashed == [path]
    stat = path.stat()
    path.write_bytes(_flip_first_byte(toy.payload))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    with pytest.raises(data.ChecksumMismatchError):
        data.dataset_path("toy", "a.txt")
    assert hashed == [path, path]


def test_cache_dir_default_is_expanded_at_call_time(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(data.CACHE_DIR_ENV, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "one"))
    assert data.cache_dir() == tmp_path / "one" / ".cache" / "hashlib_core" / "data"
    monkeypatch.setenv("HOME", str(tmp_path / "two"))
    assert data.cache_dir() == tmp_path / "two" / ".cache" / "hashlib_core" / "data"
    monkeypatch.setenv(data.CACHE_DIR_ENV, str(tmp_path / "explicit"))
    assert data.cache_dir() == tmp_path / "explicit"


def test_data_dir_unset_or_blank_is_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(data.DATA_DIR_ENV, raising=False)
    assert data.data_dir() is None
    monkeypatch.setenv(data.DATA_DIR_ENV, "  ")
    assert data.data_dir() is None


def test_invalid_manifest_is_rejected_with_the_problem(toy: Toy) -> None:
    manifest = yaml.safe_load(catalog.MANIFEST_PATH.read_text())
    manifest["datasets"]["toy"]["configs"]["default"]["table"]["file"] = "missing.txt"
    catalog.MANIFEST_PATH.write_text(yaml.safe_dump(manifest))
    data._read_manifest.cache_clear()
    with pytest.raises(data.DataError, match="names unknown file 'missing.txt'"):
        data.list_datasets()
    manifest["datasets"]["toy"]["configs"]["default"]["table"]["file"] = "a.txt"
    manifest["datasets"]["toy"]["files"]["a.txt"]["sha256"] = "ABC"
    catalog.MANIFEST_PATH.write_text(yaml.safe_dump(manifest))
    data._read_manifest.cache_clear()
    with pytest.raises(data.DataError, match="64-hex-digit"):
        data.list_datasets()


def _with_gzip_files(toy: Toy, files: dict[str, bytes], compression: str = "gzip") -> None:
    """Add ``files`` (their stored bytes) to the toy manifest and mirror, each marked ``compression``."""
    manifest = yaml.safe_load(catalog.MANIFEST_PATH.read_text())
    for file, stored in files.items():
        manifest["datasets"]["toy"]["files"][file] = {
            "url": f"https://example.invalid/toy/{file}", "sha256": _sha(stored), "bytes": len(stored), "rows": 2,
            "compression": compression}
        _write(toy.mirror_file(file), stored)
    catalog.MANIFEST_PATH.write_text(yaml.safe_dump(manifest))
    data._read_manifest.cache_clear()


def test_gzip_file_is_verified_compressed_and_read_unzipped(toy: Toy) -> None:
    from hashlib_core.data.loaders_text import _read_compressed_text

    _with_gzip_files(toy, {"c.txt.gz": gzip.compress(toy.payload, mtime=0), "bad.gz": toy.payload})
    _write(toy.mirror_file(), toy.payload)
    assert _read_compressed_text("toy", "c.txt.gz", True) == toy.payload.decode()
    assert _read_compressed_text("toy", "a.txt", True) == toy.payload.decode()   # no key: read as it is
    with pytest.raises(data.DataFormatError, match="marked 'compression: gzip' in the manifest but does not"):
        _read_compressed_text("toy", "bad.gz", True)
    assert toy.calls == []


def test_unknown_compression_is_rejected_by_the_manifest_validator(toy: Toy) -> None:
    _with_gzip_files(toy, {"c.zip": b"PK"}, compression="zip")
    with pytest.raises(data.DataError, match=r"'compression' is 'zip'; use one of \['gzip'\], or drop the key"):
        data.list_datasets()


def test_unknown_names_raise_value_errors_listing_the_choices() -> None:
    with pytest.raises(ValueError, match="unknown dataset 'nope'.*'glue'"):
        data.dataset_path("nope", "x")
    with pytest.raises(ValueError, match="has no file 'nope.tsv'.*'CoLA/train.tsv'"):
        data.dataset_path("glue", "nope.tsv")
    with pytest.raises(ValueError, match="needs a config: one of .*'cola'"):
        data.load("glue")
    with pytest.raises(ValueError, match="unknown config 'mnli'"):
        data.load("glue", "mnli")
    with pytest.raises(ValueError, match="has no configs"):
        data.load("card660", "en")
    with pytest.raises(ValueError, match="unknown GLUE task 'mnli'"):
        data.load_glue("mnli")
    with pytest.raises(ValueError, match="unknown config 'xx' for dataset 'ud_pud'"):
        data.load_ud_pud("xx")
    with pytest.raises(TypeError, match="dataset name must be a str"):
        data.dataset_path(3, "x")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="task must be a str"):
        data.load_glue(None)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------- parsers
def test_split_lines_handles_crlf_missing_final_newline_and_unicode_separators() -> None:
    assert data._split_lines("a\r\nb\r\n") == ["a", "b"]
    assert data._split_lines("a\nb") == ["a", "b"]
    assert data._split_lines("a\u2028b\n \n") == ["a\u2028b", " "]
    assert data._split_lines("") == []


def test_tsv_rows_keep_unbalanced_quotes_literally() -> None:
    rows = data._tsv_rows("t", "f", 'a "quoted\tb\n"x\ty\n', 2)
    assert rows == [['a "quoted', "b"], ['"x', "y"]]
    with pytest.raises(data.DataFormatError, match="row 1 has 1 tab-separated fields, expected 2"):
        data._tsv_rows("t", "f", "only\n", 2)


def test_tar_member_reader_accepts_dot_slash_names() -> None:
    archive = _tar_gz({"./train.txt": b"a\tb\tc\r\n"})
    assert data._tar_member(archive, "train.txt") == b"a\tb\tc\r\n"
    with pytest.raises(data.DataFormatError, match="no regular-file member 'test.txt'"):
        data._tar_member(archive, "test.txt")


def test_parse_top_tree() -> None:
    tree = "[IN:GET_WEATHER [SL:LOCATION [IN:GET_LOCATION [SL:SEARCH_RADIUS near ] me ] ] ]"
    assert data._parse_top_tree(tree) == ("IN:GET_WEATHER", ["SL:LOCATION", "SL:SEARCH_RADIUS"])
    with pytest.raises(data.DataFormatError, match="unbalanced"):
        data._parse_top_tree("[IN:X [SL:Y a ]")
    with pytest.raises(data.DataFormatError, match=r"does not start with an \[IN:"):
        data._parse_top_tree("[SL:Y a ]")


CONLLU = (
    "# sent_id = s1\n# text = Don't go.\n"
    "1-2\tDon't\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "1\tDo\tdo\tAUX\tVBP\t_\t3\taux\t_\t_\n"
    "2\tn't\tnot\tPART\tRB\t_\t3\tadvmod\t_\t_\n"
    "3\tgo\tgo\tVERB\tVB\t_\t0\troot\t_\tSpaceAfter=No\n"
    "3.1\tgone\tgo\tVERB\tVB\t_\t_\t_\t3:x\t_\n"
    "4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_\n\n"
    "# sent_id = s2\n# text = Yes = no\n1\tYes\tyes\tINTJ\tUH\t_\t0\troot\t_\t_\n"
)


def test_parse_conllu_skips_multiword_ranges_and_empty_nodes() -> None:
    columns = data._parse_conllu(CONLLU, "toy")
    assert columns["sent_id"] == ["s1", "s2"]
    assert columns["text"] == ["Don't go.", "Yes = no"]
    assert columns["tokens"] == [["Do", "n't", "go", "."], ["Yes"]]
    assert columns["upos"] == [["AUX", "PART", "VERB", "PUNCT"], ["INTJ"]]
    assert columns["head"] == [[3, 3, 0, 3], [0]]
    with pytest.raises(data.DataFormatError, match="UPOS 'NOUNS'"):
        data._parse_conllu(CONLLU.replace("\tPART\t", "\tNOUNS\t"), "toy")


# ------------------------------------------------------------------------------ manifest and README
def test_manifest_structure_and_loader_names() -> None:
    assert data.list_datasets() == list(MANIFEST)
    assert set(MANIFEST) == set(data._LOADERS)
    for name, entry in MANIFEST.items():
        assert data._LOADERS[name].__name__ == entry["loader"]
        for file, spec in entry["files"].items():
            assert spec["url"].startswith("https://"), (name, file)
            assert spec.get("role") == "documentation" or "rows" in spec or "members" in spec, (name, file)


def test_manifest_returns_an_independent_copy() -> None:
    copy_ = data.manifest()
    copy_["datasets"].clear()
    assert data.manifest()["datasets"].keys() == MANIFEST.keys()


def test_readme_table_is_rendered_from_the_manifest() -> None:
    readme = (REPO_ROOT / "data" / "README.md").read_text(encoding="utf-8")
    start, end = "<!-- manifest-table:start -->\n", "<!-- manifest-table:end -->"
    assert start in readme and end in readme
    assert readme.split(start, 1)[1].split(end, 1)[0] == data.manifest_markdown_table()


def test_no_machine_paths_in_data_files() -> None:
    for path in (REPO_ROOT / "data" / "manifest.yaml", REPO_ROOT / "data" / "README.md"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"(?<![\w.])/(work|root|home|tmp|Users)/", text), path


# --------------------------------------------------------------------------------- SOURCE.md parsing
def _source_md(mirror: Path, name: str) -> str:
    return (mirror / MANIFEST[name]["folder"] / "SOURCE.md").read_text(encoding="utf-8")


def _flat(text: str) -> str:
    """SOURCE.md prose with whitespace runs collapsed (sentences wrap across lines)."""
    return " ".join(text.split())


def _md_tables(text: str, first_header: str) -> dict[str, dict[str, str]]:
    """Rows of every markdown table whose first column header is ``first_header``, keyed by that column."""
    rows: dict[str, dict[str, str]] = {}
    header: list[str] | None = None
    for line in text.splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = [cell.strip().strip("`") for cell in line.strip().strip("|").split("|")]
        if header is None:
            header = cells if cells[0] == first_header else []
        elif header and not set(cells[0]) <= set("-: "):
            rows[cells[0]] = dict(zip(header, cells))
    return rows


def _number(text: str) -> int:
    match = re.search(r"\d[\d,]*", text)
    assert match, f"no number in {text!r}"
    return int(match.group().replace(",", ""))


def _stated(pattern: str, text: str) -> tuple[int, ...]:
    """Integers captured by ``pattern`` in the whitespace-collapsed SOURCE.md text."""
    match = re.search(pattern, _flat(text))
    assert match, f"SOURCE.md no longer states {pattern!r}"
    return tuple(int(group.replace(",", "")) for group in match.groups())


def _expand_braces(pattern: str) -> list[str]:
    """Shell-style brace expansion: ``a/{b,c}/d`` gives ``a/b/d`` and ``a/c/d``."""
    match = re.search(r"\{([^{}]*)\}", pattern)
    if match is None:
        return [pattern]
    head, tail = pattern[:match.start()], pattern[match.end():]
    return [path for option in match.group(1).split(",") for path in _expand_braces(head + option + tail)]


def _path_pattern(stated: str) -> re.Pattern[str]:
    """A repository path SOURCE.md states, ``<name>`` placeholders allowed (``<l>/train_<l>_raw.txt``), as a regex:
    a placeholder stands for one path segment or part of one, the same wherever it recurs."""
    parts, seen = [], set()
    for piece in re.split(r"(<\w+>)", stated):
        placeholder = re.fullmatch(r"<(\w+)>", piece)
        if placeholder is None:
            parts.append(re.escape(piece))
        elif placeholder.group(1) in seen:
            parts.append(f"(?P={placeholder.group(1)})")
        else:
            seen.add(placeholder.group(1))
            parts.append(f"(?P<{placeholder.group(1)}>[^/]+)")
    return re.compile("".join(parts))


# SOURCE.md row counts that the staged files contradict. Each entry is checked for its stated reason.
SOURCE_MD_ROW_COUNT_ERRATA = {
    # The last line has no newline: SOURCE.md counted newline characters (wc -l), one fewer than the labels.
    ("pnlp_mixer_labels", "matis_labels.txt"): "counted newlines",
    ("pnlp_mixer_labels", "mtop_labels.txt"): "counted newlines",
    # SOURCE.md repeats the published GLUE size (3,668 + header); the staged copy has 3,668 lines in all,
    # i.e. header + 3,667 pairs.
    ("glue", "MRPC/train.tsv"): "counted the header",
    # SOURCE.md counts every line; the manifest (and the loader) count the data lines, without the # comments.
    ("wikispeedia", "articles.tsv"): "counted comment lines",
    ("wikispeedia", "categories.tsv"): "counted comment lines",
    ("wikispeedia", "links.tsv"): "counted comment lines",
}


def _rows_column(row: dict[str, str]) -> str | None:
    """A SOURCE.md file-table row's row count: the ``rows`` column, or ``lines`` where the table calls it so (PTB)."""
    return row.get("rows", row.get("lines"))


@pytest.mark.parametrize("name", STAGED)
def test_manifest_files_agree_with_source_md(mirror: Path, name: str) -> None:
    """The folder's SOURCE.md lists exactly the files of the manifest entries kept in that folder (Last.fm's counts
    and its artist names are two datasets of one folder), with each file's sha256, size and rows."""
    entry = MANIFEST[name]
    text = _source_md(mirror, name)
    # a row named in parentheses, "(unzipped)", describes the file above it (checked by the loader tests)
    stated = {f: row for f, row in _md_tables(text, "file").items() if not f.startswith("(")}
    in_folder = {f for other in MANIFEST.values() if other["folder"] == entry["folder"] for f in other["files"]}
    assert set(stated) == in_folder
    for file, spec in entry["files"].items():
        described = spec.get("role") == "documentation" and not re.fullmatch(r"[0-9a-f]{64}", stated[file]["sha256"])
        assert described or stated[file]["sha256"] == spec["sha256"], file   # a listing SOURCE.md describes
        assert _number(stated[file]["bytes"]) == spec["bytes"], file
        stated_column = _rows_column(stated[file])
        if "rows" not in spec or stated_column is None or stated_column.strip() in {"-", "–"}:
            continue                                              # rows SOURCE.md does not tabulate: see below
        if stated_column.strip() == "pickle":                     # records, not lines: the loader test counts them
            assert spec.get("format") == "pickle", file
            continue
        stated_rows = _number(stated_column)
        erratum = SOURCE_MD_ROW_COUNT_ERRATA.get((name, file))
        if erratum is None:
            assert stated_rows == spec["rows"], file
            continue
        raw = (mirror / entry["folder"] / file).read_bytes()
        if erratum == "counted comment lines":
            lines = raw.decode("utf-8").splitlines()
            assert len(lines) == stated_rows
            assert spec["rows"] == sum(1 for line in lines if line.strip() and not line.startswith("#"))
        elif erratum == "counted newlines":
            assert not raw.endswith(b"\n") and raw.count(b"\n") == stated_rows
            assert spec["rows"] == stated_rows + 1
        else:
            assert raw.count(b"\n") == stated_rows and raw.endswith(b"\n")
            assert spec["rows"] == stated_rows - 1
    for file, spec in entry["files"].items():
        for member, member_spec in spec.get("members", {}).items():
            member_row = _md_tables(text, "member")[member]
            assert _number(member_row["bytes"]) == member_spec["bytes"], member
            assert _number(member_row["rows"]) == member_spec["rows"], member


@pytest.mark.parametrize("name", STAGED)
def test_manifest_sources_agree_with_source_md(mirror: Path, name: str) -> None:
    text = _source_md(mirror, name)
    stated_paths = {_path_pattern(path) for quoted in re.findall(r"`([^`\s]+)`", text)
                    for path in _expand_braces(quoted)}
    for file, spec in MANIFEST[name]["files"].items():
        url = spec["url"]
        raw = re.fullmatch(r"https://raw\.githubusercontent\.com/([^/]+/[^/]+)/([0-9a-f]{40})/(.+)", url)
        tree = re.fullmatch(r"https://github\.com/([^/]+/[^/]+)/tree/([0-9a-f]{40})/(.+)", url)
        if tree is not None:                 # an assembled file: its sources' folder at the pinned commit
            repository, commit, path = tree.groups()
            assert spec.get("assembled") and repository in text and commit in text and path in text, file
            continue
        if raw is None:
            assert url.startswith("https://huggingface.co/google-bert/bert-base-uncased/"), url
            assert "Hugging Face `bert-base-uncased`" in text
            continue
        repository, commit, path = raw.groups()
        assert repository in text and commit in text, file
        assert any(p.fullmatch(path) for p in stated_paths), f"{path} is not among the repository paths SOURCE.md names"
        archive = spec.get("archive")
        if archive is not None:
            assert archive["sha256"] in text and f"{archive['bytes']:,}" in text and archive["member"] == file


def test_every_mirror_file_verifies(mirror: Path) -> None:
    for name in STAGED:
        entry = MANIFEST[name]
        for file in entry["files"]:
            assert data.dataset_path(name, file) == mirror / entry["folder"] / file


def test_a_file_marked_unstaged_is_not_in_the_mirror(mirror: Path) -> None:
    """``staged: false`` says a file is not in the staged mirror (it is read from the cache or downloaded): the mirror
    must not hold it. Every file of today's manifest is staged (Last.fm's artist names joined the mirror)."""
    assert UNSTAGED == []
    for name in UNSTAGED:
        entry = MANIFEST[name]
        for file in entry["files"]:
            assert not (mirror / entry["folder"] / file).exists(), f"{file} is staged now: drop 'staged: false'"
            with pytest.raises(data.DatasetUnavailableError, match="downloads are disabled"):
                data.dataset_path(name, file)                      # the fixture's empty cache, offline


ARTISTS = ("id\tname\turl\tpictureURL\n1\tMALICE MIZER\thttp://www.last.fm/music/MALICE+MIZER\thttp://p/1.jpg\n"
           "18\tThe Cr\u00fcxshadows\thttp://www.last.fm/music/The+Cr%C3%BCxshadows\t\n")


def test_parse_lastfm_artists_golden_and_errors() -> None:
    from hashlib_core.data.loaders_ids import _parse_artists

    assert _parse_artists(ARTISTS, "toy") == {
        "artist_id": [1, 18], "name": ["MALICE MIZER", "The Cr\u00fcxshadows"],
        "url": ["http://www.last.fm/music/MALICE+MIZER", "http://www.last.fm/music/The+Cr%C3%BCxshadows"]}
    with pytest.raises(data.DataFormatError, match="must start with the header"):
        _parse_artists(ARTISTS.split("\n", 1)[1], "toy")
    with pytest.raises(data.DataFormatError, match="line 3"):
        _parse_artists(ARTISTS.replace("18\t", "x18\t"), "toy")
    with pytest.raises(data.DataFormatError, match="line 2"):
        _parse_artists(ARTISTS.replace("\tMALICE MIZER", "\t "), "toy")
    with pytest.raises(data.DataFormatError, match="repeats an artist id"):
        _parse_artists(ARTISTS.replace("18\t", "1\t"), "toy")


def test_lastfm_artists_name_every_lastfm_artist(mirror: Path, loaded: Callable[..., Any]) -> None:
    """The real names file, from the staged mirror."""
    artists = data.load_lastfm_artists()
    assert len(artists) == MANIFEST["lastfm_artists"]["files"]["artists.dat"]["rows"]
    assert set(loaded("lastfm")["artist_id"][:]) <= set(artists["artist_id"][:])


# ------------------------------------------------------------------------------------ loaders
def _expected_rows(name: str, table: dict[str, Any]) -> int:
    if "rows" in table:                  # the loader's rows where they are not the file's lines (tag lines dropped)
        return table["rows"]
    files = MANIFEST[name]["files"]
    if "member" in table:
        return files[table["file"]]["members"][table["member"]]["rows"]
    counts = {files[f]["rows"] for f in data._table_files(table)}
    assert len(counts) == 1, f"line-aligned files of {name} disagree: {counts}"
    return counts.pop()


LOADER_CASES = [(name, config) for name in STAGED for config in MANIFEST[name]["configs"]]


@pytest.mark.parametrize(("name", "config"), LOADER_CASES, ids=[f"{n}-{c}" for n, c in LOADER_CASES])
def test_loader_row_counts_equal_the_manifest(loaded: Callable[..., Any], name: str, config: str) -> None:
    result = loaded(name, None if config == "default" else config)
    spec = MANIFEST[name]["configs"][config]
    if "splits" in spec:
        assert isinstance(result, DatasetDict)
        assert {split: len(ds) for split, ds in result.items()} == {
            split: _expected_rows(name, table) for split, table in spec["splits"].items()
        }
    else:
        assert isinstance(result, (Dataset, list))
        assert len(result) == _expected_rows(name, spec["table"])


def test_glue_columns_labels_and_quoting(loaded: Callable[..., Any]) -> None:
    cola = loaded("glue", "cola")
    assert cola["train"].features["label"].names == ["unacceptable", "acceptable"]
    assert cola["train"][0]["source"] == "gj04" and cola["train"][0]["idx"] == 0
    rte = loaded("glue", "rte")["validation"]
    assert set(rte.features["label"].int2str(rte["label"][:])) == {"entailment", "not_entailment"}
    mrpc = loaded("glue", "mrpc")["train"]
    assert list(mrpc.features) == ["sentence1", "sentence2", "label", "idx"]
    assert any('"' in s for s in mrpc["sentence2"][:])  # unbalanced quotes survive QUOTE_NONE
    stsb = loaded("glue", "stsb")["validation"]
    assert 0.0 <= min(stsb["label"][:]) and max(stsb["label"][:]) <= 5.0
    assert data.load_glue("SST-2", verify=False)["validation"][0] == loaded("glue", "sst2")["validation"][0]


def test_wikitext2_token_and_type_counts_match_source_md(mirror: Path, loaded: Callable[..., Any]) -> None:
    text = _source_md(mirror, "wikitext2")
    table = _md_tables(text, "file")
    types = dict(zip(("validation", "test"), _stated(r"Only ([\d,]+) \(valid\) and ([\d,]+) \(test\) types", text)))
    for split, file in (("validation", "valid.txt"), ("test", "test.txt")):
        lines = loaded("wikitext2")[split]["text"][:]
        stated_tokens = _number(table[file]["rows"].split("(", 1)[1])
        assert sum(len(line.split()) + 1 for line in lines) == stated_tokens
        assert len({token for line in lines for token in line.split()}) == types[split]


def _ptb_raw_lines(mirror: Path, split: str) -> list[str]:
    """Reference path: the staged .gz file unzipped with ``gzip`` and split at newlines, no loader involved."""
    table = MANIFEST["ptb"]["configs"]["default"]["splits"][split]
    raw = gzip.decompress((mirror / MANIFEST["ptb"]["folder"] / table["file"]).read_bytes()).decode("utf-8")
    assert raw.endswith("\n") and "\r" not in raw
    return raw[:-1].split("\n")


PTB_SPLITS = {"train": "train", "validation": "valid", "test": "test"}   # split -> SOURCE.md's name


def test_ptb_unzipped_sha256_and_verbatim_lines(mirror: Path, loaded: Callable[..., Any]) -> None:
    text = _flat(_source_md(mirror, "ptb"))
    ptb = loaded("ptb")
    assert list(ptb) == list(PTB_SPLITS)
    for split, stated_name in PTB_SPLITS.items():
        match = re.search(rf"Unzipped sha256:.*?\b{stated_name} `([0-9a-f]{{64}})`", text)
        assert match, f"SOURCE.md no longer states the unzipped sha256 of {stated_name}"
        file = MANIFEST["ptb"]["configs"]["default"]["splits"][split]["file"]
        unzipped = gzip.decompress((mirror / "ptb" / file).read_bytes())
        assert hashlib.sha256(unzipped).hexdigest() == match.group(1)
        lines = ptb[split]["text"][:]
        assert lines == _ptb_raw_lines(mirror, split)
        assert ("\n".join(lines) + "\n").encode("utf-8") == unzipped            # verbatim, newline dropped only
        assert len(lines) == MANIFEST["ptb"]["files"][file]["rows"]


def test_ptb_word_counts_match_source_md(mirror: Path, loaded: Callable[..., Any]) -> None:
    """SOURCE.md's train figure counts ``line.split()`` words (and states the count with an ``<eos>`` a line, in
    thousands); its valid and test figures count the LM stream's tokens, ``<eos>`` included (erratum: checked)."""
    train_words, train_lines, train_k, valid, test = _stated(
        r"([\d,]+) train words \(([\d,]+) lines, about (\d+)K tokens with an end-of-sentence token per line\), "
        r"([\d,]+) valid, ([\d,]+) test", _source_md(mirror, "ptb"))
    ptb = loaded("ptb")
    words = {split: sum(len(line.split()) for line in ptb[split]["text"][:]) for split in PTB_SPLITS}
    assert (words["train"], len(ptb["train"])) == (train_words, train_lines)
    assert (words["train"] + train_lines) // 1000 == train_k
    for split, stated in (("validation", valid), ("test", test)):
        assert words[split] != stated and words[split] + len(ptb[split]) == stated, split


def test_corpus_lines_counts_on_the_real_corpora(mirror: Path) -> None:
    """Each corpus name against a reference built here from the raw files (no loader): lines, words, order."""
    ptb = [line.strip() for line in _ptb_raw_lines(mirror, "train") if line.strip()]
    wiki_raw = (mirror / MANIFEST["wikitext2"]["folder"] / "valid.txt").read_text(encoding="utf-8").split("\n")
    wiki = [line.strip() for line in wiki_raw if line.strip() and not line.strip().startswith("=")]
    (ptb_words,) = _stated(r"([\d,]+) train words", _source_md(mirror, "ptb"))
    articles: list[list[str]] = []
    for line in gzip.decompress((mirror / "enwiki2015" / "enwiki-2015-AA.txt.gz").read_bytes()).decode().split("\n"):
        if line.startswith("<doc "):
            articles.append([])
        elif line != "</doc>" and line.strip():
            articles[-1].append(line.strip())
    every = pretraining.ENWIKI_HELDOUT_EVERY
    expected = {"wikitext2-validation": wiki, "ptb-train": ptb, "ptb-train+wikitext2-validation": ptb + wiki,
                "enwiki2015": [x for i, a in enumerate(articles) if i % every != every - 1 for x in a],
                "enwiki2015-heldout": [x for i, a in enumerate(articles) if i % every == every - 1 for x in a]}
    assert set(expected) == set(pretraining.CORPUS_NAMES)
    for name, reference in expected.items():
        assert pretraining.corpus_lines(name) == reference, name
    assert len(ptb) == MANIFEST["ptb"]["files"]["ptb.train.txt.gz"]["rows"]
    assert sum(len(line.split()) for line in ptb) == ptb_words
    assert pretraining.corpus_lines("wikitext2-validation") == pretraining.wikitext_lines("validation")


def _cut_is_minimal(lines: list[str], max_words: int) -> bool:
    words = [len(line.split()) for line in lines]
    return sum(words) >= max_words > sum(words[:-1])


def test_corpus_lines_stop_after_max_words(mirror: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ptb = pretraining.corpus_lines("ptb-train")
    ptb_words = sum(len(line.split()) for line in ptb)
    for name in pretraining.CORPUS_NAMES:
        full = pretraining.corpus_lines(name)
        for max_words in (1, 1000, 12345):
            cut = pretraining.corpus_lines(name, max_words)
            assert cut == full[:len(cut)] and _cut_is_minimal(cut, max_words), (name, max_words)
    both = pretraining.corpus_lines("ptb-train+wikitext2-validation", ptb_words + 1)  # crosses into WikiText-2
    assert both[:len(ptb)] == ptb and len(both) > len(ptb) and _cut_is_minimal(both, ptb_words + 1)
    assert pretraining.corpus_lines("wikitext2-validation", 1000) == pretraining.wikitext_lines("validation", 1000)

    def never_read() -> list[str]:
        raise AssertionError("WikiText-2 was read although the cut fell inside PTB")

    monkeypatch.setitem(pretraining._CORPUS_PARTS, "wikitext2-validation", never_read)
    assert pretraining.corpus_lines("ptb-train+wikitext2-validation", ptb_words) == ptb   # WikiText-2 never opened


def test_corpus_lines_rejects_unknown_names_and_bad_max_words() -> None:
    names = re.escape(str(list(pretraining.CORPUS_NAMES)))
    for name in ("wikitext2-test", "wikitext2-validation+ptb-train", "PTB-train"):
        with pytest.raises(ValueError, match=f"unknown corpus {re.escape(repr(name))}; choose one of {names}"):
            pretraining.corpus_lines(name)
    with pytest.raises(TypeError, match="corpus name must be a str"):
        pretraining.corpus_lines(None)  # type: ignore[arg-type]
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="max_words must be a non-negative int"):
            pretraining.corpus_lines("ptb-train", bad)  # type: ignore[arg-type]


def test_card660_statistics_match_source_md(mirror: Path, loaded: Callable[..., Any]) -> None:
    text = _source_md(mirror, "card660")
    multiword, pairs = _stated(r"([\d,]+) of the ([\d,]+) pairs contain such a term", text)
    (word_types,) = _stated(r"([\d,]+) distinct word types", text)
    (zero_pairs,) = _stated(r"([\d,]+) pairs have score 0", text)
    card = loaded("card660")
    assert len(card) == pairs
    assert sum("_" in a or "_" in b for a, b in zip(card["word1"][:], card["word2"][:])) == multiword
    assert len(set(card["word1"][:]) | set(card["word2"][:])) == word_types
    assert sum(score == 0 for score in card["score"][:]) == zero_pairs
    assert max(abs(s - statistics.fmean(r)) for s, r in zip(card["score"][:], card["annotator_scores"][:])) < 0.0051


def test_stanford_rw_scores_and_ratings(loaded: Callable[..., Any]) -> None:
    rw = loaded("stanford_rw")
    assert 0.0 <= min(rw["score"][:]) and max(rw["score"][:]) <= 10.0
    assert {len(r) for r in rw["ratings"][:]} <= set(range(1, 11))


@pytest.mark.parametrize("name", ["atis", "snips"])
def test_intent_slot_label_counts_match_source_md(mirror: Path, loaded: Callable[..., Any], name: str) -> None:
    text = _source_md(mirror, name)
    train = loaded(name)["train"]
    if name == "atis":
        intents, tags = _stated(r"Train has (\d+) intent labels and (\d+) distinct slot tags", text)
    else:
        match = re.search(r"(\d+) intents \(([^)]*)\) and (\d+) distinct slot tags in train", _flat(text))
        assert match
        intents, tags = int(match.group(1)), int(match.group(3))
        names = {n.strip() for n in match.group(2).split(",")}
        assert set(train.features["intent"].int2str(train["intent"][:])) == names
    assert len(set(train["intent"][:])) == intents
    assert len({tag for line in train["slot_tags"][:] for tag in line}) == tags
    assert all(len(t) == len(s) for t, s in zip(train["tokens"][:], train["slot_tags"][:]))


def test_mtop_intent_and_slot_counts_match_source_md(mirror: Path, loaded: Callable[..., Any]) -> None:
    counts = _stated(r"dev: (\d+) distinct \(English top-level\) intents, (\d+) slot types\. "
                     r"test: (\d+) intents, (\d+) slot types", _source_md(mirror, "mtop_xsemplr"))
    english = loaded("mtop_xsemplr", "en")
    found = []
    for split in ("validation", "test"):
        found += [len(set(english[split]["intent"][:])),
                  len({slot for slots in english[split]["slot_types"][:] for slot in slots})]
    assert tuple(found) == counts
    for language in data.list_configs("mtop_xsemplr"):
        other = loaded("mtop_xsemplr", language)["test"]
        assert other["id"][:] == english["test"]["id"][:]
        assert other["intent"][:] == english["test"]["intent"][:]


def test_pnlp_mixer_labels_are_unique(loaded: Callable[..., Any]) -> None:
    for inventory in ("matis", "mtop"):
        labels = loaded("pnlp_mixer_labels", inventory)
        assert len(set(labels)) == len(labels)
    assert loaded("pnlp_mixer_labels", "mtop")[0] == "O"
    assert any("#" in label for label in loaded("pnlp_mixer_labels", "matis"))


def test_wordpiece_vocab_layout(loaded: Callable[..., Any]) -> None:
    uncased = loaded("wordpiece_vocab", "bert-base-uncased")
    assert uncased[0] == "[PAD]" and uncased[1:100] == [f"[unused{i}]" for i in range(99)]
    assert uncased[100:104] == ["[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    assert uncased[104:999] == [f"[unused{i}]" for i in range(99, 994)]
    cased = loaded("wordpiece_vocab", "bert-base-multilingual-cased")
    assert cased[0] == "[PAD]" and cased[1:100] == [f"[unused{i}]" for i in range(1, 100)]
    assert cased[100:106] == ["[UNK]", "[CLS]", "[SEP]", "[MASK]", "<S>", "<T>"]
    assert len(set(uncased)) == len(uncased) and len(set(cased)) == len(cased)
    path = data.wordpiece_vocab_path("bert-base-uncased")
    assert path.read_text(encoding="utf-8").split("\n")[:-1] == uncased


def test_roberta_bpe_files_hold_the_stated_entries(mirror: Path) -> None:
    """roberta-base's vocab.json and merges.txt: the manifest's rows (entries, lines) counted from the files, and the
    counts SOURCE.md states in prose (its file table has no rows column)."""
    files = MANIFEST["wordpiece_vocab"]["files"]
    folder = mirror / MANIFEST["wordpiece_vocab"]["folder"] / "roberta-base"
    vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
    merges = (folder / "merges.txt").read_text(encoding="utf-8").splitlines()
    assert len(vocab) == files["roberta-base/vocab.json"]["rows"]
    assert len(merges) == files["roberta-base/merges.txt"]["rows"] and merges[0].startswith("#version")
    assert sorted(vocab.values()) == list(range(len(vocab)))              # ids 0..V-1, each once
    text = _flat(_source_md(mirror, "wordpiece_vocab"))
    assert f"{len(vocab):,} entries" in text and f"{len(merges) - 1:,} merges" in text
    assert (vocab["<s>"], vocab["<pad>"], vocab["</s>"], vocab["<unk>"], vocab["<mask>"]) == (0, 1, 2, 3, 50264)


def test_wn18rr_statistics_match_source_md(mirror: Path, loaded: Callable[..., Any]) -> None:
    text = _source_md(mirror, "wn18rr")
    in_train, overall = _stated(r"([\d,]+) entities appear in train \(([\d,]+) over all splits\)", text)
    (relations,) = _stated(r"There are (\d+) relations", text)
    max_degree, median_degree, degree_one = _stated(
        r"Degree: max (\d+), median (\d+), ([\d,]+) entities with degree 1", text)
    wn = loaded("wn18rr")
    train = wn["train"]
    degree = collections.Counter(train["head"][:]) + collections.Counter(train["tail"][:])
    assert len(degree) == in_train
    assert len({e for split in wn.values() for col in ("head", "tail") for e in split[col][:]}) == overall
    assert len(set(train["relation"][:])) == relations
    assert (max(degree.values()), statistics.median(degree.values())) == (max_degree, median_degree)
    assert sum(d == 1 for d in degree.values()) == degree_one
    per_relation = collections.Counter(train["relation"][:])
    stated = re.findall(r"`(_\w+)` ([\d,]+)", _flat(text))
    assert stated and all(per_relation[rel] == int(n.replace(",", "")) for rel, n in stated)


def test_fb15k237_statistics_match_source_md(mirror: Path, loaded: Callable[..., Any]) -> None:
    entities, relations = _stated(r"`train\.txt` has ([\d,]+) distinct entities and (\d+) relations",
                                  _source_md(mirror, "fb15k237"))
    train = loaded("fb15k237")["train"]
    assert len(set(train["head"][:]) | set(train["tail"][:])) == entities
    assert len(set(train["relation"][:])) == relations
    assert not any(tail.endswith("\r") for tail in train["tail"][:])


def test_lastfm_statistics_match_source_md(mirror: Path, loaded: Callable[..., Any]) -> None:
    text = _source_md(mirror, "lastfm")
    users, smallest, median, largest, artists = _stated(
        r"([\d,]+) users \(items per user: min (\d+), median (\d+), max (\d+)\) and ([\d,]+) distinct artist ids",
        text)
    (top_artist_users,) = _stated(r"most frequent artist appears for ([\d,]+) users", text)
    (single_user_artists,) = _stated(r"([\d,]+) artists occur for exactly one user", text)
    lastfm = loaded("lastfm")
    per_user = collections.Counter(lastfm["user_id"][:])
    per_artist = collections.Counter(lastfm["artist_id"][:])
    assert len(per_user) == users
    assert (min(per_user.values()), statistics.median(per_user.values()), max(per_user.values())) == (
        smallest, median, largest)
    assert max(per_artist.values()) == top_artist_users
    # SOURCE.md counted artist ids as raw strings; one line carries "65  " (stray spaces), which it
    # counted as an extra artist seen by one user. As integers that id is artist 65.
    raw_rows = [line.split("\t") for line in
                (mirror / "lastfm_hetrec2011" / "user_artists.dat").read_text(encoding="utf-8").splitlines()]
    raw_artists = collections.Counter(row[1] for row in raw_rows)
    assert len(raw_artists) == artists and sum(c == 1 for c in raw_artists.values()) == single_user_artists
    assert "65  " in raw_artists and "65" in raw_artists
    assert len(per_artist) == artists - 1
    assert sum(c == 1 for c in per_artist.values()) == single_user_artists - 1


@pytest.mark.parametrize("language", ["ar", "en", "hi", "zh"])
def test_ud_pud_token_counts_match_source_md(mirror: Path, loaded: Callable[..., Any], language: str) -> None:
    row = _md_tables(_source_md(mirror, "ud_pud"), "file")[f"{language}_pud-ud-test.conllu"]["rows"]
    stated_tokens = _number(row.split("/", 1)[1])
    treebank = loaded("ud_pud", language)
    assert sum(len(tokens) for tokens in treebank["tokens"][:]) == stated_tokens
    columns = treebank[:]
    assert all(len(t) == len(u) == len(h) for t, u, h in zip(columns["tokens"], columns["upos"], columns["head"]))
    assert treebank["sent_id"][:] == loaded("ud_pud", "en")["sent_id"][:]


# ------------------------------------------------------------------- real files through a tmp mirror
def test_corrupt_copy_of_a_real_file_is_refused(mirror: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    good = (mirror / "pnlp_mixer_labels" / "matis_labels.txt").read_bytes()
    copy_ = _write(tmp_path / "mirror" / "pnlp_mixer_labels" / "matis_labels.txt", _flip_first_byte(good))
    monkeypatch.setenv(data.DATA_DIR_ENV, str(tmp_path / "mirror"))
    monkeypatch.setenv(data.CACHE_DIR_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(data.OFFLINE_ENV)

    def network_down(url: str, timeout: float = 0.0) -> bytes:
        raise urllib.error.URLError("network is unreachable")

    monkeypatch.setattr(lookup, "fetch_bytes", network_down)
    with pytest.raises(data.ChecksumMismatchError, match=re.escape(str(copy_))):
        data.load_pnlp_mixer_labels("matis")
    with pytest.raises(data.DatasetUnavailableError, match="mtop_labels.txt"):
        data.load_pnlp_mixer_labels("mtop")
    copy_.write_bytes(good)
    assert data.load_pnlp_mixer_labels("matis") == (mirror / "pnlp_mixer_labels" / "matis_labels.txt").read_text(
        encoding="utf-8").split("\n")


def test_loader_reads_through_the_download_cache(mirror: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    by_url = {spec["url"]: mirror / MANIFEST["card660"]["folder"] / file
              for file, spec in MANIFEST["card660"]["files"].items()}
    fetched: list[str] = []

    def copy_from_mirror(url: str, timeout: float = 0.0) -> bytes:
        fetched.append(url)
        return by_url[url].read_bytes()

    monkeypatch.delenv(data.DATA_DIR_ENV)
    monkeypatch.delenv(data.OFFLINE_ENV)
    monkeypatch.setenv(data.CACHE_DIR_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(lookup, "fetch_bytes", copy_from_mirror)
    card = data.load_card660()
    assert len(card) == MANIFEST["card660"]["files"]["dataset.tsv"]["rows"]
    assert sorted(fetched) == sorted(MANIFEST["card660"]["files"][f]["url"] for f in ("dataset.tsv", "scores.tsv"))
    for file in ("dataset.tsv", "scores.tsv"):
        assert (tmp_path / "cache" / "card660" / file).read_bytes() == (mirror / "card660" / file).read_bytes()
    assert data.load_card660()[:3] == card[:3]
    assert len(fetched) == 2



def test_enwiki2015_drops_the_tag_lines_and_keeps_each_lines_article(mirror: Path) -> None:
    """SOURCE.md's statements recomputed: the unzipped file's sha256 and line count, 6,514 articles with strictly
    increasing ids, and the words of the text lines (whitespace-split)."""
    text = _source_md(mirror, "enwiki2015")
    unzipped = _md_tables(text, "file")["(unzipped)"]
    raw = gzip.decompress((mirror / "enwiki2015" / "enwiki-2015-AA.txt.gz").read_bytes())
    assert hashlib.sha256(raw).hexdigest() == unzipped["sha256"]
    assert raw.count(b"\n") == _number(unzipped["lines"]) == MANIFEST["enwiki2015"]["files"][
        "enwiki-2015-AA.txt.gz"]["rows"]
    wiki = data.load_enwiki2015(verify=False)
    ids = wiki["doc_id"][:]
    starts = [ids[0]] + [b for a, b in zip(ids, ids[1:]) if b != a]
    assert starts == sorted(set(starts)) and len(starts) == _stated(r"([\d,]+) English Wikipedia articles", text)[0]
    assert sum(len(t.split()) for t in wiki["text"][:]) == _stated(r"\*\*([\d,]+) words\*\*", text)[0]
    assert not any(t.startswith("<doc") or t == "</doc>" or not t.strip() for t in wiki["text"][:])
    assert wiki[0]["title"] == "Anarchism" and wiki[0]["text"] == "Anarchism"


def test_an_assembled_file_that_is_missing_says_how_it_was_built(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """No single URL serves an assembled file: without a mirror or cache copy the error says what it is built from
    and how to stage it, and nothing is downloaded."""
    monkeypatch.setenv(data.DATA_DIR_ENV, str(tmp_path / "nothing"))
    monkeypatch.setenv(data.CACHE_DIR_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv("HASHLIB_OFFLINE", raising=False)
    monkeypatch.setattr(lookup, "fetch_bytes", lambda *a, **k: pytest.fail("an assembled file is never downloaded"))
    with pytest.raises(data.DatasetUnavailableError, match="no single URL serves it") as caught:
        data.dataset_path("enwiki2015", "enwiki-2015-AA.txt.gz")
    assert "SOURCE.md" in str(caught.value) and "wiki_00" in str(caught.value)
