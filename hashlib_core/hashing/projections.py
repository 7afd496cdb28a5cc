"""pNLP-Mixer's projections (Fusco et al., §3.1 and §5.1) behind one interface: a word -> a float32 feature row.

Every projection maps a **word given as its list of subword-unit ids** (ids into the vocabulary it was built from,
e.g. WordPiece ids from :meth:`SentenceProjector.unit_ids`) to a float32 row of ``width`` features;
:meth:`Projection.features` does a whole list of words at once, vectorised with numpy. Per-piece work is done once,
when the projection is built (a ``|V| x k`` table), so projecting a sentence hashes no string (TSP excepted, see
below). :meth:`Projection.features_from_units` is the uncached reference path, straight from the pieces' strings;
both paths give identical numbers.

=========  ================================================================================================
name       feature of a word with units ``u_0 .. u_{j-1}``
=========  ================================================================================================
minhash    §3.1: counting Bloom filter of size m of the token's n MinHash values (:mod:`.minhash`, unchanged).
binary     §5.1 Binary: a plain Bloom filter (bitmap) of size m = 512 of "256 hash values for each token". The
           paper does not say which hashes; we read them as the token's n = 256 MinHash values (the same
           fingerprint as ``minhash``), so bit ``F_i mod m`` is 1 and the row has at most n ones.
tsp        §5.1 TSP (PRADO, Kaliamoorthi et al. 2019): one 2L-bit hash of the token (L = 512: 1024 bits) read as
           L ternary values. The token is the word's surface string, the concatenation of its pieces with the
           continuation (``##``) or word (``▁``) marker stripped, so a word cut into ``[UNK]`` has the surface
           ``"[UNK]"``. The hash is ``SHAKE-256(b"hashlib_core.tsp" + seed as 8 little-endian bytes + UTF-8)``,
           ``2L / 8`` bytes (the paper and PRADO name no hash; PRADO's code uses MurmurHash). Bits are read
           little-endian (bit k of the stream is bit ``k % 8`` of byte ``k // 8``); value p comes from the pair
           ``(lo, hi) = (bit 2p, bit 2p+1)`` as ``lo - hi``: (0, 0) -> 0, (1, 0) -> +1, (0, 1) -> -1,
           (1, 1) -> 0, so P(-1) = P(+1) = 1/4 and P(0) = 1/2 -- the table ``{0, 1, -1, 0}`` indexed by ``hash & 3``
           that we recall from PRADO's seq_flow_lite projection op (not re-checked against its source here).
simhash    §5.1 SimHash (Manku et al. 2007): the hashed parts of every unit "as in MinHash" (character trigrams,
           or the whole unit for continuation and short units) hashed by the first k MinHash functions
           ``h_0 .. h_{k-1}``; the l = k * b bits of a part are the low b bits of each ``h_i`` (feature index
           ``p = i * b + j`` is bit j of ``h_i``). ``phi_p`` = sum over all parts of all units (a multiset: a
           repeated trigram counts twice) of +1 for a 1 bit and -1 for a 0 bit; the feature is ``sign(phi_p)``
           in {-1, 0, +1} (0 for a tie). The paper says l is "the size (in bits) of the hashes"; its hashes are
           31-bit values modulo 2^31 - 1 (bit 31 is always 0), so we take k = 32 hashes of b = 16 bits for
           l = 512 (the paper's input size in §5.1). The per-piece table holds each piece's ``phi`` (int16:
           122 MB and about 20 s to build for mBERT's 119,547 pieces).
=========  ================================================================================================

TSP hashes the whole word, which no per-piece table can give; it keeps the rows of the last ``cache_size``
distinct words (an LRU dict keyed by the tuple of unit ids, default 65,536 words), so a word is hashed once while it
stays in the cache. :func:`build_projection` builds any of the four by name.
"""
from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections import OrderedDict
from itertools import chain
from typing import Any, ClassVar, Sequence

import numpy as np

from hashlib_core.hashing.base import check_positive_int, validate_token
from hashlib_core.hashing.minhash import FingerprintCache, MinHashFingerprinter, counting_bloom_filter

__all__ = ["Projection", "MinHashProjection", "BinaryProjection", "TSPProjection", "SimHashProjection",
           "PROJECTIONS", "build_projection"]

_TSP_PREFIX = b"hashlib_core.tsp"


def _check_words(unit_ids: Any, owner: str) -> Sequence[Any]:
    if isinstance(unit_ids, (str, bytes)) or not hasattr(unit_ids, "__len__"):
        raise TypeError(f"{owner}: pass a list of words, each a list of unit ids (e.g. [[4, 5], [6]]), got "
                        f"{type(unit_ids).__name__}")
    return unit_ids


class Projection(ABC):
    """A parameter-free feature extractor: words (lists of unit ids into ``vocab``) -> ``(words, width)`` float32.

    Subclasses set ``name`` and implement :meth:`_features` (cached: from the flat unit ids) and
    :meth:`_features_from_units` (uncached: from the pieces' strings).
    """

    name: ClassVar[str]
    width: int
    vocab: list[str]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(width={self.width}, vocab_size={len(self.vocab)})"

    def __len__(self) -> int:
        return len(self.vocab)

    def _flatten(self, unit_ids: Any) -> tuple[np.ndarray, np.ndarray]:
        """``(flat ids int64, start offset of each word)``, every id checked to lie in ``[0, |V|)``."""
        owner = type(self).__name__
        words = _check_words(unit_ids, owner)
        lengths = np.empty(len(words), dtype=np.int64)
        for t, ids in enumerate(words):
            if isinstance(ids, (str, bytes)) or not hasattr(ids, "__len__"):
                raise TypeError(f"{owner}: word {t} must be a list of unit ids, got {type(ids).__name__} "
                                f"{ids!r:.40}; cut words into ids with SentenceProjector.unit_ids(word)")
            if len(ids) == 0:
                raise ValueError(f"{owner}: word {t} has no unit ids; give a word the tokenizer cannot cut the "
                                 f"[UNK] id (SentenceProjector.unit_ids does)")
            lengths[t] = len(ids)
        flat = np.asarray(list(chain.from_iterable(words)))
        if flat.size and (flat.ndim != 1 or flat.dtype == bool or not np.issubdtype(flat.dtype, np.integer)):
            raise TypeError(f"{owner}: unit ids must be ints (ids into the vocabulary), got {flat.dtype} values; "
                            f"convert tokens to ids first")
        flat = flat.astype(np.int64)
        if flat.size and (flat.min() < 0 or flat.max() >= len(self.vocab)):
            bad = int(flat[(flat < 0) | (flat >= len(self.vocab))][0])
            raise ValueError(f"{owner}: unit id {bad} is outside [0, {len(self.vocab)}), the vocabulary this "
                             f"projection was built from; build it from the tokenizer's own vocabulary")
        starts = np.zeros(len(words), dtype=np.int64)
        np.cumsum(lengths[:-1], out=starts[1:])
        return flat, starts

    def features(self, unit_ids: Sequence[Sequence[int]]) -> np.ndarray:
        """``(len(unit_ids), width)`` float32: one row per word (cached path; no list of words -> ``(0, width)``)."""
        flat, starts = self._flatten(unit_ids)
        if len(starts) == 0:
            return np.zeros((0, self.width), dtype=np.float32)
        return self._features(flat, starts)

    __call__ = features

    def features_from_units(self, units: Sequence[Sequence[str]]) -> np.ndarray:
        """The same rows computed from the pieces' strings (e.g. ``[["Bring", "##ing"], ["fly"]]``), no table."""
        owner = type(self).__name__
        words = _check_words(units, owner)
        for t, pieces in enumerate(words):
            if isinstance(pieces, str) or not hasattr(pieces, "__len__") or len(pieces) == 0:
                raise TypeError(f"{owner}: word {t} must be a non-empty list of piece strings, e.g. "
                                f"['Bring', '##ing'], got {pieces!r:.40}")
        rows = [self._features_from_units(list(pieces)) for pieces in words]
        return np.stack(rows).astype(np.float32) if rows else np.zeros((0, self.width), dtype=np.float32)

    @abstractmethod
    def _features(self, flat: np.ndarray, starts: np.ndarray) -> np.ndarray: ...

    @abstractmethod
    def _features_from_units(self, pieces: list[str]) -> np.ndarray: ...


# --------------------------------------------------------------------------------------------------- MinHash family
class _FingerprintProjection(Projection):
    """Shared by MinHash and Binary: the word's fingerprint is the minimum over its pieces' cached rows."""

    default_num_hashes: ClassVar[int] = 256

    def __init__(self, cache: FingerprintCache, width: int = 512) -> None:
        if not isinstance(cache, FingerprintCache):
            raise TypeError(f"{type(self).__name__} needs a FingerprintCache, got {type(cache).__name__}; use "
                            f"{type(self).__name__}.from_vocab(vocab) to build one")
        self.cache, self.vocab = cache, cache.vocab
        self.width = check_positive_int("width", width, type(self).__name__)
        self.fingerprinter = cache.fingerprinter

    @classmethod
    def from_vocab(cls, vocab: Sequence[str], width: int = 512, num_hashes: int | None = None, *,
                   fingerprinter: MinHashFingerprinter | None = None) -> "_FingerprintProjection":
        """Fingerprint every piece of ``vocab`` (id order) with ``fingerprinter`` (default: ``num_hashes`` = 256
        hashes over character trigrams, WordPiece ``##`` continuations)."""
        if fingerprinter is None:
            fingerprinter = MinHashFingerprinter(num_hashes=num_hashes or cls.default_num_hashes)
        elif num_hashes is not None and num_hashes != fingerprinter.num_hashes:
            raise ValueError(f"{cls.__name__}.from_vocab: num_hashes={num_hashes} but the fingerprinter has "
                             f"{fingerprinter.num_hashes}; pass only one of them")
        return cls(FingerprintCache(fingerprinter, vocab), width)

    def fingerprints(self, flat: np.ndarray, starts: np.ndarray) -> np.ndarray:
        """``(words, n)`` int64: the element-wise minimum of the cached rows of each word's pieces."""
        return np.minimum.reduceat(self.cache.matrix[flat], starts, axis=0).astype(np.int64)

    def _features(self, flat: np.ndarray, starts: np.ndarray) -> np.ndarray:
        return self._bloom(self.fingerprints(flat, starts))

    def _features_from_units(self, pieces: list[str]) -> np.ndarray:
        return self._bloom(self.fingerprinter.token_fingerprint(pieces)[None, :])[0]

    @abstractmethod
    def _bloom(self, fingerprints: np.ndarray) -> np.ndarray: ...


class MinHashProjection(_FingerprintProjection):
    """§3.1: ``C_p = #{i : F_i mod width = p}``, the counting Bloom filter of the word's MinHash fingerprint
    (:func:`~hashlib_core.hashing.minhash.counting_bloom_filter`; each row sums to n)."""

    name = "minhash"

    def _bloom(self, fingerprints: np.ndarray) -> np.ndarray:
        return counting_bloom_filter(fingerprints, self.width)


class BinaryProjection(_FingerprintProjection):
    """§5.1 Binary: bit ``F_i mod width`` set to 1 for each of the word's n MinHash values (default n = 256,
    width = 512), a plain Bloom filter of the same fingerprint as :class:`MinHashProjection`; values in {0, 1}, at
    most n ones per row. "256 hash values for each token" is read as that fingerprint (the paper names no hash)."""

    name = "binary"

    def _bloom(self, fingerprints: np.ndarray) -> np.ndarray:
        out = np.zeros((fingerprints.shape[0], self.width), dtype=np.float32)
        out[np.arange(fingerprints.shape[0])[:, None], fingerprints % self.width] = 1.0
        return out


# ------------------------------------------------------------------------------------------------------- SimHash
class SimHashProjection(Projection):
    """§5.1 SimHash: ``sign(phi_p)`` over the bits of the word's hashed parts (see the module docstring).

    ``fingerprinter`` gives the parts (trigrams or whole units) and the hash family; its ``num_hashes`` k and
    ``bits_per_hash`` b (<= 31) give ``width = k * b`` (default 32 * 16 = 512). ``table`` is ``|V| x width``
    int16, the per-piece ``phi`` (``phi`` of a word is the sum over its pieces: SimHash is additive).
    """

    name = "simhash"

    def __init__(self, vocab: Sequence[str], fingerprinter: MinHashFingerprinter | None = None,
                 bits_per_hash: int = 16, table: np.ndarray | None = None) -> None:
        owner = "SimHashProjection"
        self.fingerprinter = fingerprinter or MinHashFingerprinter(num_hashes=32)
        if not isinstance(self.fingerprinter, MinHashFingerprinter):
            raise TypeError(f"{owner}: fingerprinter must be a MinHashFingerprinter, got "
                            f"{type(self.fingerprinter).__name__}")
        self.bits_per_hash = check_positive_int("bits_per_hash", bits_per_hash, owner)
        if self.bits_per_hash > 31:
            raise ValueError(f"{owner}: bits_per_hash must be at most 31 (the hashes are values mod 2^31 - 1, so "
                             f"bit 31 is always 0), got {bits_per_hash}")
        self.vocab = list(vocab)
        if not self.vocab:
            raise ValueError(f"{owner} needs a non-empty vocabulary (the tokenizer's pieces, in id order)")
        self.width = self.fingerprinter.num_hashes * self.bits_per_hash
        self._shifts = np.arange(self.bits_per_hash, dtype=np.int64)
        if table is None:
            table = np.stack([self.unit_histogram(piece) for piece in self.vocab])
        table = np.asarray(table)
        if table.shape != (len(self.vocab), self.width):
            raise ValueError(f"{owner}: table has shape {table.shape}, expected {(len(self.vocab), self.width)}")
        if table.size and np.abs(table).max() > np.iinfo(np.int16).max:
            raise ValueError(f"{owner}: a piece has more than 32,767 hashed parts; cut the vocabulary's pieces")
        self.table = table.astype(np.int16)

    @classmethod
    def from_vocab(cls, vocab: Sequence[str], num_hashes: int | None = None, bits_per_hash: int = 16, *,
                   fingerprinter: MinHashFingerprinter | None = None) -> "SimHashProjection":
        """``num_hashes`` (default 32) MinHash functions of ``bits_per_hash`` bits each, or a ``fingerprinter``."""
        if fingerprinter is None:
            fingerprinter = MinHashFingerprinter(num_hashes=num_hashes or 32)
        elif num_hashes is not None and num_hashes != fingerprinter.num_hashes:
            raise ValueError(f"SimHashProjection.from_vocab: num_hashes={num_hashes} but the fingerprinter has "
                             f"{fingerprinter.num_hashes}; pass only one of them")
        return cls(vocab, fingerprinter, bits_per_hash)

    def unit_histogram(self, unit: str) -> np.ndarray:
        """``(width,)`` int64 ``phi`` of one piece: over its hashed parts, +1 per 1 bit and -1 per 0 bit."""
        values = self.fingerprinter.hash_values(self.fingerprinter.hashed_parts(unit))      # (parts, k)
        bits = (values[:, :, None] >> self._shifts) & 1                                     # (parts, k, b)
        return (2 * bits - 1).reshape(len(values), self.width).sum(axis=0)

    def _features(self, flat: np.ndarray, starts: np.ndarray) -> np.ndarray:
        phi = np.add.reduceat(self.table[flat].astype(np.int32), starts, axis=0)
        return np.sign(phi).astype(np.float32)

    def _features_from_units(self, pieces: list[str]) -> np.ndarray:
        return np.sign(sum(self.unit_histogram(p) for p in pieces)).astype(np.float32)


# ----------------------------------------------------------------------------------------------------------- TSP
class TSPProjection(Projection):
    """§5.1 TSP: a ``2 * width``-bit SHAKE-256 hash of the word's surface string as ``width`` ternary values.

    ``seed`` keys the hash family; a leading ``continuation_prefix`` / ``word_prefix`` is stripped from each piece to
    form the surface (as :class:`MinHashFingerprinter` strips it); ``cache_size`` bounds the LRU dict of word rows.
    """

    name = "tsp"

    def __init__(self, vocab: Sequence[str], width: int = 512, seed: int = 0, continuation_prefix: str = "##",
                 word_prefix: str | None = None, cache_size: int = 65_536) -> None:
        owner = "TSPProjection"
        self.vocab = list(vocab)
        if not self.vocab:
            raise ValueError(f"{owner} needs a non-empty vocabulary (the tokenizer's pieces, in id order)")
        self.width = check_positive_int("width", width, owner)
        if self.width % 4:
            raise ValueError(f"{owner}: width must be a multiple of 4 (2 * width bits in whole bytes), got {width}")
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
            raise ValueError(f"{owner}: seed must be an int in [0, 2^64), got {seed!r:.40}")
        self.seed, self.cache_size = seed, check_positive_int("cache_size", cache_size, owner)
        self.continuation_prefix, self.word_prefix = continuation_prefix, word_prefix
        self._key = _TSP_PREFIX + seed.to_bytes(8, "little")
        self._stripped = [self._strip(p) for p in self.vocab]
        self._rows: OrderedDict[tuple[int, ...], np.ndarray] = OrderedDict()

    @classmethod
    def from_vocab(cls, vocab: Sequence[str], width: int = 512, seed: int = 0, **kwargs: Any) -> "TSPProjection":
        return cls(vocab, width, seed, **kwargs)

    def _strip(self, piece: str) -> str:
        if not isinstance(piece, str):
            raise TypeError(f"a subword unit must be a str, got {type(piece).__name__}; pass the tokenizer's pieces")
        piece = validate_token(piece)   # hashed by its UTF-8 bytes: a lone surrogate is refused by name
        for marker in (self.word_prefix, self.continuation_prefix):
            if marker:
                piece = piece.removeprefix(marker)
        return piece

    def surface(self, pieces: Sequence[str]) -> str:
        """The token TSP hashes: the pieces joined, markers stripped (``["Bring", "##ing"]`` -> ``"Bringing"``)."""
        return "".join(self._strip(p) for p in pieces)

    def hash_surface(self, surface: str) -> np.ndarray:
        """``(width,)`` int8 in {-1, 0, 1}: ``lo - hi`` for each bit pair of the word's ``2 * width``-bit hash."""
        digest = hashlib.shake_256(self._key + validate_token(surface).encode("utf-8")).digest(self.width // 4)
        bits = np.unpackbits(np.frombuffer(digest, dtype=np.uint8), bitorder="little").astype(np.int8)
        return bits[0::2] - bits[1::2]

    def _features(self, flat: np.ndarray, starts: np.ndarray) -> np.ndarray:
        out = np.empty((len(starts), self.width), dtype=np.float32)
        bounds = np.append(starts, len(flat)).tolist()
        ids = flat.tolist()
        for t in range(len(starts)):
            key = tuple(ids[bounds[t]:bounds[t + 1]])
            row = self._rows.get(key)
            if row is None:
                row = self.hash_surface("".join(self._stripped[i] for i in key))
                self._rows[key] = row
                if len(self._rows) > self.cache_size:
                    self._rows.popitem(last=False)
            else:
                self._rows.move_to_end(key)
            out[t] = row
        return out

    def _features_from_units(self, pieces: list[str]) -> np.ndarray:
        return self.hash_surface(self.surface(pieces)).astype(np.float32)


#: The four projections by name (§5.1's order).
PROJECTIONS: dict[str, type[Projection]] = {cls.name: cls for cls in
                                            (BinaryProjection, TSPProjection, MinHashProjection, SimHashProjection)}


def build_projection(name: str, vocab: Sequence[str], **kwargs: Any) -> Projection:
    """``PROJECTIONS[name].from_vocab(vocab, **kwargs)``; an unknown name lists the known ones."""
    if name not in PROJECTIONS:
        raise ValueError(f"unknown projection {name!r}; choose one of {sorted(PROJECTIONS)}")
    return PROJECTIONS[name].from_vocab(vocab, **kwargs)
