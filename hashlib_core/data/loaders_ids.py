"""Loaders of the opaque-id datasets: knowledge-graph triples (WN18RR, FB15k-237), Last.fm user-artist pairs and
the Last.fm artists' names."""
from __future__ import annotations

import tarfile

from datasets import Dataset, DatasetDict, Features, Value

from hashlib_core.data.catalog import _config, _table
from hashlib_core.data.errors import DataFormatError
from hashlib_core.data.lookup import _read_tar_member, dataset_path
from hashlib_core.data.readers import _dataset, _read_text, _split_lines

__all__ = ["load_wn18rr", "load_fb15k237", "load_lastfm", "load_lastfm_artists"]


# ---------------------------------------------------------------------------- opaque-id datasets
_TRIPLE_FEATURES = Features({"head": Value("string"), "relation": Value("string"), "tail": Value("string")})


def _triples(name: str, source: str, text: str) -> dict[str, list[str]]:
    heads, relations, tails = [], [], []
    for number, line in enumerate(_split_lines(text), start=1):
        fields = line.split("\t")
        if len(fields) != 3:
            raise DataFormatError(f"dataset {name!r} {source} line {number} has {len(fields)} fields, expected 3")
        heads.append(fields[0])
        relations.append(fields[1])
        tails.append(fields[2])
    return {"head": heads, "relation": relations, "tail": tails}


def load_wn18rr(*, verify: bool = True) -> DatasetDict:
    """WN18RR triples (Dettmers et al., AAAI 2018): ``train``/``validation``/``test`` with string columns
    ``head``, ``relation``, ``tail``. Entity ids are 8-digit synset offsets kept as opaque strings."""
    splits = {}
    for split, table in _config("wn18rr", "default")["splits"].items():
        columns = _triples("wn18rr", table["file"], _read_text("wn18rr", table["file"], verify))
        splits[split] = _dataset(columns, _TRIPLE_FEATURES, "wn18rr")
    return DatasetDict(splits)


def load_fb15k237(*, verify: bool = True) -> DatasetDict:
    """FB15k-237 triples (Toutanova and Chen, 2015), read from the members of ``FB15k-237.tar.gz`` in memory.

    Splits ``train``/``validation``/``test`` with string columns ``head``, ``relation``, ``tail`` (Freebase
    ids such as ``/m/027rn``). The members' CRLF line endings are stripped. Nothing is extracted to disk.
    """
    splits_spec = _config("fb15k237", "default")["splits"]
    archives: dict[str, tarfile.TarFile] = {}
    splits = {}
    try:
        for split, table in splits_spec.items():
            source = f"{table['file']}:{table['member']}"
            try:
                if table["file"] not in archives:
                    path = dataset_path("fb15k237", table["file"], verify=verify)
                    archives[table["file"]] = tarfile.open(path, mode="r:gz")
                text = _read_tar_member(archives[table["file"]], table["member"]).decode("utf-8")
            except (tarfile.TarError, UnicodeDecodeError) as exc:
                raise DataFormatError(f"FB15k-237: cannot read {source}: {exc}") from exc
            splits[split] = _dataset(_triples("fb15k237", source, text), _TRIPLE_FEATURES, "fb15k237")
    finally:
        for archive in archives.values():
            archive.close()
    return DatasetDict(splits)


def load_lastfm(*, verify: bool = True) -> Dataset:
    """Last.fm HetRec 2011 user-artist pairs as one Dataset of 92,834 rows.

    Columns: ``user_id`` and ``artist_id`` (int32 opaque ids) and ``weight`` (int64 listening count).
    Fields are stripped of the stray spaces that 8 lines of the file carry around their numbers.
    A user's artists (at most 50) form the "set of ids per context" of the Superbloom chapter.
    """
    file = _table("lastfm", "default", None)["file"]
    users, artists, weights = [], [], []
    for number, line in enumerate(_split_lines(_read_text("lastfm", file, verify)), start=1):
        fields = [field.strip() for field in line.split("\t")]
        if len(fields) != 3 or not all(field.isdigit() for field in fields):
            raise DataFormatError(f"Last.fm {file!r} line {number} is not three tab-separated integers: {line!r}")
        users.append(int(fields[0]))
        artists.append(int(fields[1]))
        weights.append(int(fields[2]))
    features = Features({"user_id": Value("int32"), "artist_id": Value("int32"), "weight": Value("int64")})
    return _dataset({"user_id": users, "artist_id": artists, "weight": weights}, features, "lastfm")


_ARTIST_HEADER = ["id", "name", "url", "pictureURL"]


def _parse_artists(text: str, source: str) -> dict[str, list]:
    """``artists.dat``: a header, then ``id<TAB>name<TAB>url<TAB>pictureURL`` per artist (ids unique)."""
    lines = _split_lines(text)
    if not lines or lines[0].split("\t") != _ARTIST_HEADER:
        raise DataFormatError(f"Last.fm {source!r} must start with the header {'<TAB>'.join(_ARTIST_HEADER)!r}")
    ids, names, urls = [], [], []
    for number, line in enumerate(lines[1:], start=2):
        fields = line.split("\t")
        if len(fields) != 4 or not fields[0].isdigit() or not fields[1].strip():
            raise DataFormatError(f"Last.fm {source!r} line {number} is not an integer id, a name, a URL and a "
                                  f"picture URL separated by tabs: {line!r}")
        ids.append(int(fields[0]))
        names.append(fields[1])
        urls.append(fields[2])
    if len(set(ids)) != len(ids):
        raise DataFormatError(f"Last.fm {source!r} repeats an artist id")
    return {"artist_id": ids, "name": names, "url": urls}


def load_lastfm_artists(*, verify: bool = True) -> Dataset:
    """The Last.fm HetRec 2011 artists, one row each: ``artist_id`` (int32, the ids of :func:`load_lastfm`),
    ``name`` and ``url`` (the artist's Last.fm page), from the staged mirror, the download cache or the pinned
    source, as every dataset."""
    file = _table("lastfm_artists", "default", None)["file"]
    columns = _parse_artists(_read_text("lastfm_artists", file, verify), file)
    features = Features({"artist_id": Value("int32"), "name": Value("string"), "url": Value("string")})
    return _dataset(columns, features, "lastfm_artists")
