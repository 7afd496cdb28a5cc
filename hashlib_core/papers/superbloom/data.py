"""The Superbloom chapter's data: sets of opaque ids standing in for Wikipedia pages' links, and item masking.

The paper's data (§3.1) is the set of entities each English Wikipedia page links to (5.3M entities). Not available
here; stand-ins with the same shape (a context and its set of ids), far smaller than 5.3M but large enough that the
unhashed table dominates an unhashed model's parameters (the regime hashing is for):

* **Gowalla** (:func:`gowalla_sets`, the main data): a "page" is a user, its "links" the 40,981 location ids the user
  checked in at (the LightGCN split's three files pooled: 29,858 sets, 34 ids on average).
* **Diginetica** (:func:`session_sets`): a "page" is a shopping session, its "links" the items viewed in it
  (43,097 item ids; sessions are short: 4 distinct items on average).
* **Wikispeedia** (:func:`wikispeedia_sets`): real Wikipedia pages (the selection for schools) and the pages they
  link to: the paper's own kind of data at 4.6K pages, with names for Appendix E's predictions.
* **FB15k-237** (:func:`fb15k237_sets`): a "page" is an entity, its "links" the entities it shares a triple with
  (either direction, any relation; the three splits pooled: 14,541 ids, of which 14,505 occur in the train split,
  the count the dataset's manifest gives; a test checks it).
* **Last.fm HetRec 2011** (:func:`lastfm_sets`): a "page" is a user, its "links" the artists they listened to.

Ids are numbered ``0 .. N-1`` in sorted order of their original names. Pages are split (seeded) into training,
validation (early stopping) and test pages (:func:`split_pages`). :class:`ItemSets` cuts each training page's set into
shuffled segments of at most ``segment`` items (§3.1: 32); :func:`held_out_segments` draws one segment per validation
or test page and masks one of its ids (seeded). :class:`ItemMaskingCollator` is BERT's masking over **items**: 15% of
a segment's items (at least one) are chosen; 80% become the m ``[MASK_j]`` tokens, 10% another item's digest, 10%
stay; labels are the chosen items' m hash tokens.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from hashlib_core.hashing.bloom import BloomHashMaps

__all__ = ["DATASET_NAMES", "IdSets", "load_sets", "gowalla_sets", "session_sets", "wikispeedia_sets", "fb15k237_sets",
           "lastfm_sets", "display_names", "split_pages", "ItemSets", "TestSegments", "held_out_segments",
           "ItemMaskingCollator", "MASK_SHARE", "expected_masked", "encode_segments"]


@dataclass
class IdSets:
    """Pages and their sets of ids: ``sets[p]`` an int64 array of ids in ``[0, len(names))``."""

    name: str
    names: list[str]
    sets: list[np.ndarray]

    @property
    def num_ids(self) -> int:
        return len(self.names)


#: display name of each id-set dataset a profile can name
DATASET_NAMES = {"gowalla": "Gowalla", "diginetica": "Diginetica", "wikispeedia": "Wikispeedia",
                 "fb15k237": "FB15k-237", "lastfm": "Last.fm"}


def _number(pages: np.ndarray, links: np.ndarray, name: str) -> IdSets:
    """Pages -> sets of linked ids (vectorised), ids numbered in sorted order of their names; pages with fewer
    than 2 links dropped (nothing to mask and keep)."""
    names, link_ids = np.unique(links, return_inverse=True)
    _, page_ids = np.unique(pages, return_inverse=True)
    keys = np.unique(page_ids.astype(np.int64) * len(names) + link_ids)        # distinct (page, link), sorted
    page_of, link_of = keys // len(names), keys % len(names)
    cuts = np.flatnonzero(np.diff(page_of)) + 1
    sets = [s for s in np.split(link_of, cuts) if len(s) >= 2]
    return IdSets(name, [str(n) for n in names], sets)


def fb15k237_sets() -> IdSets:
    """Every FB15k-237 entity's set of neighbours (both directions, all relations, all splits)."""
    from hashlib_core.data import load_fb15k237

    heads, tails = [], []
    for split in load_fb15k237().values():
        table = split.to_pandas()
        heads.append(table["head"].to_numpy())
        tails.append(table["tail"].to_numpy())
    h, t = np.concatenate(heads), np.concatenate(tails)
    keep = h != t
    h, t = h[keep], t[keep]
    return _number(np.concatenate([h, t]), np.concatenate([t, h]), DATASET_NAMES["fb15k237"])


def lastfm_sets() -> IdSets:
    """Every Last.fm user's set of artists."""
    from hashlib_core.data import load_lastfm

    table = load_lastfm().to_pandas()
    return _number(table["user_id"].astype(str).to_numpy(), table["artist_id"].astype(str).to_numpy(),
                   DATASET_NAMES["lastfm"])


def gowalla_sets() -> IdSets:
    """Every Gowalla user's set of locations (train, validation and test files pooled: the split is ours)."""
    from hashlib_core.data import load_gowalla

    users, items = [], []
    for split in load_gowalla().values():
        table = split.with_format("arrow")[:]                # the columns at once (row by row is 20x slower)
        rows = table.column("items").to_pylist()
        for user, row in zip(table.column("user_id").to_pylist(), rows):
            users.append(np.full(len(row), user, dtype=np.int64))
            items.append(np.asarray(row, dtype=np.int64))
    return _number(np.concatenate(users), np.concatenate(items), DATASET_NAMES["gowalla"])


def session_sets(name: str = "diginetica") -> IdSets:
    """Every training session's set of distinct items (``diginetica``; the test file's prefixes are SR-GNN's
    next-item task, not a set: the split into pages is ours)."""
    from hashlib_core.data import load_sessions

    sessions = load_sessions(name)["train"].with_format("arrow")[:].column("items").to_pylist()
    pages = np.concatenate([np.full(len(s), i, dtype=np.int64) for i, s in enumerate(sessions)])
    return _number(pages, np.concatenate([np.asarray(s, dtype=np.int64) for s in sessions]), DATASET_NAMES[name])


def wikispeedia_sets() -> IdSets:
    """Every Wikispeedia page's set of outgoing links; the ids are page names (URL-decoded)."""
    from hashlib_core.data import load_wikispeedia

    links = load_wikispeedia("links").with_format("arrow")[:]
    return _number(np.asarray(links.column("source").to_pylist(), dtype=object),
                   np.asarray(links.column("target").to_pylist(), dtype=object), DATASET_NAMES["wikispeedia"])


_LOADERS = {"gowalla": gowalla_sets, "diginetica": session_sets, "wikispeedia": wikispeedia_sets,
            "fb15k237": lambda: fb15k237_sets(), "lastfm": lambda: lastfm_sets()}


def load_sets(name: str) -> IdSets:
    """The id sets of a profile's dataset name (a key of :data:`DATASET_NAMES`)."""
    if name not in _LOADERS:
        raise ValueError(f"unknown id-set dataset {name!r}; choose one of {list(DATASET_NAMES)}")
    return _LOADERS[name]()


def display_names(sets: IdSets) -> tuple[list[str], str]:
    """How to show each id of ``sets`` to a reader, and where those labels come from: Last.fm's artist names when
    the names file is at hand (staged, cached or downloadable), otherwise the original ids (FB15k-237's Freebase ids
    have no names in any staged file)."""
    from hashlib_core.data import DataError, load_lastfm_artists

    if sets.name == DATASET_NAMES["lastfm"]:
        try:
            artists = load_lastfm_artists()
        except DataError as exc:
            return [f"artist {n}" for n in sets.names], f"artist ids (names not available: {type(exc).__name__})"
        by_id = dict(zip((str(i) for i in artists["artist_id"]), artists["name"]))
        return [by_id.get(n, f"artist {n}") for n in sets.names], "Last.fm artist names (artists.dat)"
    if sets.name == DATASET_NAMES["wikispeedia"]:
        return [n.replace("_", " ") for n in sets.names], "Wikipedia page titles (Wikispeedia)"
    return list(sets.names), "original ids (no names in the data)"


def split_pages(sets: IdSets, test_share: float, seed: int, validation_share: float = 0.0
                ) -> tuple[list[int], list[int], list[int]]:
    """Page indices ``(train, validation, test)``: ``test_share`` and ``validation_share`` of the pages, drawn with
    ``seed`` (the test pages are the same whatever ``validation_share`` is; validation 0: an empty list)."""
    if not 0 < test_share < 1 or not 0 <= validation_share < 1 or test_share + validation_share >= 1:
        raise ValueError(f"test_share must be in (0, 1) and validation_share in [0, 1) with a sum below 1, got "
                         f"{test_share!r} and {validation_share!r}")
    order = np.random.default_rng(seed).permutation(len(sets.sets))
    cut = max(1, int(round(test_share * len(order))))
    held = int(round(validation_share * len(order))) if validation_share else 0
    if cut + held >= len(order):
        raise ValueError(f"{len(order)} pages are too few to hold out {cut} test and {held} validation pages")
    return (sorted(order[cut + held:].tolist()), sorted(order[cut:cut + held].tolist()),
            sorted(order[:cut].tolist()))


class ItemSets(torch.utils.data.Dataset):
    """Training segments: each training page's ids shuffled (seeded) and cut into pieces of at most ``segment``."""

    def __init__(self, sets: IdSets, pages: Sequence[int], segment: int, seed: int) -> None:
        if segment < 2:
            raise ValueError(f"segment must be >= 2 items (one masked, one kept), got {segment}")
        rng = np.random.default_rng(seed)
        self.segments = []
        for p in pages:
            ids = rng.permutation(sets.sets[p])
            self.segments += [ids[i:i + segment] for i in range(0, len(ids), segment) if len(ids[i:i + segment]) >= 2]
        if not self.segments:
            raise ValueError("no training segment of at least two ids: the pages are too small")

    def __len__(self) -> int:
        return len(self.segments)

    def __getitem__(self, i: int) -> np.ndarray:
        return self.segments[i]


@dataclass
class TestSegments:
    """One segment per test page and the id masked in it (its position in the segment)."""

    segments: list[np.ndarray]
    targets: np.ndarray
    positions: np.ndarray


def held_out_segments(sets: IdSets, pages: Sequence[int], segment: int, seed: int) -> TestSegments:
    """Per test page: ``segment`` of its ids drawn without replacement, and one of them masked (seeded)."""
    rng = np.random.default_rng(seed)
    segs, targets, positions = [], [], []
    for p in pages:
        ids = rng.permutation(sets.sets[p])[:segment]
        where = int(rng.integers(len(ids)))
        segs.append(ids)
        targets.append(int(ids[where]))
        positions.append(where)
    return TestSegments(segs, np.asarray(targets, dtype=np.int64), np.asarray(positions, dtype=np.int64))


def encode_segments(segments: Sequence[np.ndarray], maps: BloomHashMaps, masked: Sequence[int] | None = None
                    ) -> dict[str, torch.Tensor]:
    """Segments of ids -> ``input_ids`` of their digests (m tokens per item, padded with ``[PAD_j]``) and
    ``attention_mask``; ``masked[b]`` (an item position) is replaced by ``[MASK_1..m]``."""
    if not len(segments):
        raise ValueError("no segment to encode: give at least one set of ids")
    m = maps.num_hashes
    longest = max(len(s) for s in segments)
    pad, mask = torch.tensor(maps.special_ids("[PAD]")), torch.tensor(maps.special_ids("[MASK]"))
    input_ids = pad.repeat(len(segments), longest, 1)
    attention = torch.zeros(len(segments), longest * m, dtype=torch.long)
    for b, seg in enumerate(segments):
        if len(seg) == 0:
            raise ValueError(f"segment {b} is empty: every set needs at least one id")
        input_ids[b, :len(seg)] = maps.digest(torch.as_tensor(seg))
        attention[b, :len(seg) * m] = 1
        if masked is not None:
            input_ids[b, int(masked[b])] = mask
    return {"input_ids": input_ids.reshape(len(segments), -1), "attention_mask": attention}


#: BERT's share of masked items
MASK_SHARE = 0.15


def expected_masked(lengths: Sequence[int], mask_share: float = MASK_SHARE) -> float:
    """The mean number of items :class:`ItemMaskingCollator` masks in a segment, over segments of ``lengths`` items:
    each item is chosen with probability ``mask_share`` and a segment with none chosen gets one, so a segment of ``n``
    items has ``n * mask_share + (1 - mask_share) ** n`` masked items on average."""
    n = np.asarray(lengths, dtype=np.float64)
    if not n.size or (n < 1).any():
        raise ValueError("expected_masked needs at least one segment, each of at least one item")
    return float(np.mean(n * mask_share + (1.0 - mask_share) ** n))


class ItemMaskingCollator:
    """BERT's masking over items (15%: 80% ``[MASK_j]``, 10% random item, 10% kept; a segment with no item chosen
    gets one), with its own generator."""

    def __init__(self, maps: BloomHashMaps, seed: int, mask_share: float = MASK_SHARE) -> None:
        self.maps, self.mask_share = maps, mask_share
        self.generator = torch.Generator().manual_seed(seed)
        self.mask_tokens = torch.tensor(maps.special_ids("[MASK]"))

    def __call__(self, segments: list[np.ndarray]) -> dict[str, torch.Tensor]:
        batch = encode_segments(segments, self.maps)
        m = self.maps.num_hashes
        items = batch["input_ids"].reshape(len(segments), -1, m)
        labels = torch.full_like(items, -100)
        g = self.generator
        for b, seg in enumerate(segments):
            n = len(seg)
            chosen = torch.rand(n, generator=g) < self.mask_share
            if not chosen.any():
                chosen[torch.randint(n, (1,), generator=g)] = True
            where = chosen.nonzero().flatten()
            labels[b, where] = items[b, where]
            action = torch.rand(len(where), generator=g)
            masked, randomised = where[action < 0.8], where[(action >= 0.8) & (action < 0.9)]
            items[b, masked] = self.mask_tokens
            if len(randomised):
                random_ids = torch.randint(self.maps.num_ids, (len(randomised),), generator=g)
                items[b, randomised] = self.maps.digest(random_ids)
        return {"input_ids": items.reshape(len(segments), -1), "attention_mask": batch["attention_mask"],
                "labels": labels.reshape(len(segments), -1)}
