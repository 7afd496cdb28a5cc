"""Dataset manifest, verified file look-up and loaders for every dataset used by the book.

Every dataset is described in ``data/manifest.yaml`` (provenance, license, citation, and for each file its
original source URL, sha256, size and row count). A file is looked up in this order:

1. ``$HASHLIB_DATA_DIR/<folder>/<file>``: a local mirror laid out like the manifest (one folder per dataset).
2. ``$HASHLIB_CACHE_DIR/<folder>/<file>``: the download cache (default ``~/.cache/hashlib_core/data``,
   expanded when the look-up runs).
3. The original source URL from the manifest (a raw file at a pinned commit, or a pinned archive holding the
   file as a member). The bytes are checked against the manifest's size and sha256 *before* they are written
   (atomically) into the cache. Set ``HASHLIB_OFFLINE=1`` to forbid downloads.

A file found in the mirror or the cache is verified on its first use in a process: its size always, and its
sha256 unless ``verify=False``. A successful sha256 check is remembered per (path, size, mtime), so repeated
loads in one process hash each file only once. ``verify=False`` is for speed-critical callers that re-read a
file they trust; it skips the sha256 but still checks the size.

Problems raise subclasses of :class:`DataError`: :class:`DatasetUnavailableError` (file in neither place and
not downloadable), :class:`ChecksumMismatchError` (wrong size or sha256) and :class:`DataFormatError` (content
that does not parse as documented). Each message names the dataset, the path(s), the source URL and the fix.

Split names follow the Hugging Face convention: ``train``, ``validation`` (the files called ``dev`` or
``valid``) and ``test``. Loaders with several splits return a :class:`datasets.DatasetDict`; single-table
datasets (Card-660, Stanford RW, Last.fm, a UD treebank, a Wikispeedia table) return a :class:`datasets.Dataset`; label
inventories and WordPiece vocabularies return ``list[str]``.

Modules: :mod:`~hashlib_core.data.catalog` (the manifest), :mod:`~hashlib_core.data.lookup` (mirror, cache,
download, checksums), :mod:`~hashlib_core.data.errors`, :mod:`~hashlib_core.data.readers` (shared parsing
helpers) and the loaders: :mod:`~hashlib_core.data.loaders_text` (GLUE, WikiText-2, Penn Treebank, rare-word
similarity), :mod:`~hashlib_core.data.loaders_tasks` (intent/slot, the MTOP subset, label lists, vocabularies, UD),
:mod:`~hashlib_core.data.loaders_nlu` (MTOP in full and MASSIVE, one configuration per language),
:mod:`~hashlib_core.data.loaders_ids` (knowledge-graph triples, Last.fm and its artists' names) and
:mod:`~hashlib_core.data.loaders_sets` (sessions, Gowalla, Wikispeedia). Import the public names from
``hashlib_core.data`` itself.

A file marked ``format: pickle`` (the session datasets) is a Python pickle: it is read only with
:class:`~hashlib_core.data.safe_pickle.PlainUnpickler`, which refuses every global, so no code in it can run.

A file marked ``compression: gzip`` in the manifest is kept compressed (checksums are those of the compressed
file) and unzipped in memory by its loader (the Penn Treebank files).

A file marked ``staged: false`` in the manifest is not part of the staged mirror: it is found in the cache or
downloaded, and whatever uses it must work without it (no file of today's manifest is marked so).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from datasets import Dataset, DatasetDict

from hashlib_core.data.catalog import (
    MANIFEST_PATH,
    _entry,
    list_configs,
    list_datasets,
    manifest,
    manifest_markdown_table,
)
from hashlib_core.data.errors import ChecksumMismatchError, DataError, DataFormatError, DatasetUnavailableError
from hashlib_core.data.loaders_ids import load_fb15k237, load_lastfm, load_lastfm_artists, load_wn18rr
from hashlib_core.data.loaders_nlu import load_massive, load_mtop
from hashlib_core.data.loaders_sets import load_gowalla, load_sessions, load_wikispeedia
from hashlib_core.data.loaders_tasks import (
    UPOS_TAGS,
    load_atis,
    load_mtop_xsemplr,
    load_pnlp_mixer_labels,
    load_snips,
    load_ud_pud,
    load_wordpiece_vocab,
    wordpiece_vocab_path,
)
from hashlib_core.data.loaders_text import (load_card660, load_enwiki2015, load_glue, load_ptb, load_stanford_rw,
                                            load_wikitext2)
from hashlib_core.data.lookup import (
    CACHE_DIR_ENV,
    DATA_DIR_ENV,
    OFFLINE_ENV,
    cache_dir,
    data_dir,
    dataset_path,
    downloads_enabled,
    fetch_bytes,
)

# Private helpers that tests/core/test_data.py calls directly, kept reachable as ``hashlib_core.data._name``.
from hashlib_core.data.catalog import _read_manifest, _table_files  # noqa: F401
from hashlib_core.data.loaders_tasks import _parse_conllu, _parse_top_tree  # noqa: F401
from hashlib_core.data.lookup import _tar_member  # noqa: F401
from hashlib_core.data.readers import _split_lines, _tsv_rows  # noqa: F401

__all__ = [
    "MANIFEST_PATH", "DATA_DIR_ENV", "CACHE_DIR_ENV", "OFFLINE_ENV",
    "DataError", "DatasetUnavailableError", "ChecksumMismatchError", "DataFormatError",
    "manifest", "list_datasets", "list_configs", "data_dir", "cache_dir", "downloads_enabled", "fetch_bytes",
    "dataset_path", "manifest_markdown_table", "load",
    "load_glue", "load_wikitext2", "load_ptb", "load_enwiki2015", "load_card660", "load_stanford_rw", "load_atis",
    "load_snips", "load_mtop_xsemplr", "load_mtop", "load_massive", "load_pnlp_mixer_labels", "load_wordpiece_vocab",
    "wordpiece_vocab_path", "load_wn18rr", "load_fb15k237", "load_lastfm", "load_lastfm_artists", "load_sessions",
    "load_gowalla", "load_wikispeedia", "load_ud_pud", "UPOS_TAGS",
]


# -------------------------------------------------------------------------------------------- dispatch
_LOADERS: dict[str, Callable[..., Any]] = {
    "glue": load_glue,
    "wikitext2": load_wikitext2,
    "ptb": load_ptb,
    "enwiki2015": load_enwiki2015,
    "card660": load_card660,
    "stanford_rw": load_stanford_rw,
    "atis": load_atis,
    "snips": load_snips,
    "mtop_xsemplr": load_mtop_xsemplr,
    "mtop": load_mtop,
    "massive": load_massive,
    "pnlp_mixer_labels": load_pnlp_mixer_labels,
    "wordpiece_vocab": load_wordpiece_vocab,
    "wn18rr": load_wn18rr,
    "fb15k237": load_fb15k237,
    "lastfm": load_lastfm,
    "lastfm_artists": load_lastfm_artists,
    "sessions": load_sessions,
    "gowalla": load_gowalla,
    "wikispeedia": load_wikispeedia,
    "ud_pud": load_ud_pud,
}


def load(name: str, config: str | None = None, *, verify: bool = True) -> DatasetDict | Dataset | list[str]:
    """Load dataset ``name`` (see :func:`list_datasets`) through its named loader.

    Single-configuration datasets take no ``config`` (or ``"default"``); the others need one of
    :func:`list_configs` (GLUE task, MTOP, MASSIVE or UD language, label inventory, vocabulary name).
    Returns a DatasetDict, a Dataset or a list of strings, as the named loader does.
    """
    entry = _entry(name)
    if name not in _LOADERS:
        raise DataError(f"dataset {name!r} is in the manifest but has no loader in hashlib_core.data")
    loader = _LOADERS[name]
    configs = list(entry["configs"])
    if configs == ["default"]:
        if config not in (None, "default"):
            raise ValueError(f"dataset {name!r} has no configs; call load({name!r}) without config={config!r}")
        return loader(verify=verify)
    if config is None:
        raise ValueError(f"dataset {name!r} needs a config: one of {configs}")
    if config not in configs:
        raise ValueError(f"unknown config {config!r} for dataset {name!r}; choose one of {configs}")
    return loader(config, verify=verify)
