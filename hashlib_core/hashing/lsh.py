"""Locality-sensitive hashing of words from their subword units (HashFormers §3.3 and §3.5).

HashFormers-LSH gives morphologically similar words ('play', 'plays', 'played') the same or similar codes. A word is
first turned into a sparse *morphological feature vector* x, then hashed in one of two ways:

* **Emb-LSH** (§3.3): ``v = argmax(x R)`` over N random hyperplanes, embedding index ``v % N`` (+5 for the special
  ids). R is never stored: "we only store a vector η ... each column r of R is a permutation of η with a unique
  offset" (§3.3) -- :class:`PermutationLSH`;
* **T-bit LSH** (§3.5): bit j is the side of hyperplane j the vector lies on, ``b_j = sgn(sgn(x·r_j) + 1)``, with
  T = 128 -- :class:`SignLSH`.

What the features are. §3.3 describes "character n-grams (n ∈ 1, 2, 3, 4)" with the 50K most frequent n-grams as
feature vocabulary (footnote 2). The released code (``src/utils/free_tokenizer.py``; implementation notes A1) does
something else, and this module follows the code (:func:`subword_features`):

1. for a word w, form w and every single-hyphen split ``w[:i] + '-' + w[i:]`` (i = 1 .. len(w)-1) and join them
   with ``'-'``: ``play -> 'play-p-lay-pl-ay-pla-y'``;
2. tokenise that string with a byte-level BPE tokenizer, without special tokens or a prefix space (released:
   ``roberta-base``'s 50,265 pieces through ``RobertaTokenizerFast.tokenize``; here
   :func:`hashlib_core.bpe.roberta_bpe`, or one trained locally with :func:`hashlib_core.bpe.train_bpe`); count the
   subwords, and drop ``'-'`` unless it is the only subword;
3. a subword s with count c gets weight ``c / max(len(w) + 1 - len(s), 1)`` (``len(s)`` of its byte-level text;
   longer subwords weigh more), and its feature index is its BPE id.

The word is hashed as given (roberta-base's BPE is cased): the released word tokenizer lower-cases text before its
words reach ``_get_lsh``, as :func:`hashlib_core.papers.hashformers.tokenization.word_tokenize` does.

The random numbers are the released ones, each from a local legacy generator (``numpy.random.RandomState``), never
the global ``np.random`` state: η is ``RandomState(42).normal(0, 1, F)`` (released: ``np.random.seed(42);
np.random.normal(0, 1, 50260)``), the T-bit vector of subword k is ``RandomState(k).normal(0, 1, T)`` (released:
``np.random.seed(k); np.random.normal(0, 1, 128)``). With :func:`~hashlib_core.bpe.roberta_bpe` and the defaults,
:class:`LSHBucketHasher` gives the released ``LSHValueTokenizer`` ids and :class:`LSHBitHasher` the released
``LSHTokenizer`` bits (tests/hashformers/test_lsh_released.py re-implements the released procedure).

Taken literally, step 2 encodes a string of about ``len(w)**2`` characters; :mod:`.lsh_features` computes the same
ids and weights in time linear in ``len(w)`` for letter/digit words longer than 32 characters (:mod:`.lsh_cuts`).

Deviations from the released code that remain, on purpose:

* Emb-LSH is computed vectorised over the hyperplanes instead of the numba loop: the word's subwords are added
  one by one, in the loop's order, so the scores are the loop's bit for bit (as compiled without the ``fastmath``
  it asks for, which lets the compiler reorder the sum); above 160 subwords (only very long tokens) one FFT circular
  correlation gives them to ~1e-12 relative, the same bucket unless two scores tie to the last bits;
* the released tokenizer is loaded from the hub; here it is built from the staged files, and any byte-level BPE
  tokenizer can be given instead;
* the empty word raises ``ValueError`` (the released code, never given one by its word tokenizer, would return id 5),
  and so does a word of more than 256 characters that is not all letters/digits (instead of running for minutes);
* the sizes, offset and seeds are parameters, the released values their defaults.

The Emb-LSH rule of the *live* numba function ``compute_ind`` (three other versions are in string literals, not
run): for hyperplane i in ``0 .. N-1`` the score is ``s_i * Σ_k w_k η[(k + i) mod F]`` with ``s_i = +1`` for
``i < N/2`` and ``-1`` otherwise (F = N = 50,260 in the released code); the bucket is the first argmax (a strict
``>`` scan), plus 5.
"""
from __future__ import annotations

import hashlib
import threading
from functools import lru_cache
from typing import Any, Iterable, Mapping

import numpy as np
import torch
from numpy.lib.stride_tricks import sliding_window_view
from tokenizers import Tokenizer

from hashlib_core.hashing.base import TokenHasher, check_int, validate_token, validate_tokens
from hashlib_core.hashing.lsh_features import (
    MAX_REFERENCE_LENGTH, SubwordFeatureExtractor, subword_features, subword_features_reference, word_variants,
)

__all__ = [
    "DEFAULT_FEATURE_DIM", "DEFAULT_NUM_HYPERPLANES", "DEFAULT_ROTATOR_SEED", "DEFAULT_NUM_BITS", "MAX_SEED", "DRAWS",
    "MAX_REFERENCE_LENGTH", "word_variants", "subword_features", "subword_features_reference",
    "SubwordFeatureExtractor", "PermutationLSH", "SignLSH", "LSHBucketHasher", "LSHBitHasher",
]

#: Length F of the stored random vector η in the released code (the RoBERTa vocabulary minus its 5 special ids).
DEFAULT_FEATURE_DIM = 50260
#: Number of hyperplanes N of the released Emb-LSH (= its number of buckets).
DEFAULT_NUM_HYPERPLANES = 50260
#: Seed of η in the released code (``np.random.seed(42)``); here the seed of a local ``RandomState``.
DEFAULT_ROTATOR_SEED = 42
#: Largest seed a legacy ``numpy.random.RandomState`` takes.
MAX_SEED = 2**32 - 1
#: Names the random draws in a saved hasher's params (the hashes of params without it cannot be rebuilt).
DRAWS = "numpy.random.RandomState"
#: T, the code length of the compressed LSH variants (§4.2: "we set T = 128 to make it comparable to MD5").
DEFAULT_NUM_BITS = 128

#: Above this many subwords :meth:`PermutationLSH.scores` uses one FFT, O(F log F), instead of the exact sum, O(nnz N):
#: about where the two cost the same for F = N = 50,260 on a two-core CPU. Ordinary words keep the exact sum.
_FFT_MIN_FEATURES = 160


def _check_features(ids: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ids = np.asarray(ids)
    weights = np.asarray(weights, dtype=np.float64)
    if ids.ndim != 1 or weights.shape != ids.shape:
        raise ValueError(f"ids and weights must be 1-D and of equal length, got shapes {ids.shape} and {weights.shape}")
    if ids.size and (not np.issubdtype(ids.dtype, np.integer) or ids.min() < 0):
        raise ValueError("feature ids must be non-negative integers")
    return ids.astype(np.int64, copy=False), weights


def _check_seed(name: str, value: Any) -> int:
    value = check_int(name, value, minimum=0)
    if value > MAX_SEED:
        raise ValueError(f"{name} must be <= {MAX_SEED} (a numpy.random.RandomState seed), got {value}")
    return value


class PermutationLSH:
    """Emb-LSH bucket ``argmax(x R)`` with every hyperplane a cyclic shift of one stored vector η (§3.3).

    Hyperplane ``i`` (``0 <= i < num_hyperplanes``) has entries ``R[i, k] = s_i * η[(k + i) mod F]`` with
    ``s_i = +1`` for ``i < num_hyperplanes // 2`` and ``-1`` above (released ``compute_ind``). For a sparse feature
    vector (subword ids k with weights w_k) the scores are ``s_i * Σ_k w_k η[(k + i) mod F]``.

    Only η (F floats) is stored. :meth:`scores` adds ``w_k * η[(k + 0..N-1) mod F]`` subword by subword, in the
    order given, each window a slice of a strided view of η repeated end to end (no N x F matrix): O(nnz * N) time
    per word, the released loop's sums bit for bit. Above 160 subwords (very long tokens) it computes the scores as
    one circular cross-correlation of the dense feature vector with η by FFT instead, O(F log F + N) whatever nnz
    is. Both agree with :meth:`scores_reference` to ~1e-12 relative.

    Parameters
    ----------
    num_hyperplanes:
        N, the number of hyperplanes and of possible hash values (released: 50,260).
    feature_dim:
        F, the length of η: feature ids are taken modulo F (released: 50,260, while roberta-base has 50,265 ids,
        so its last five ids share shifts with ids 0-4).
    seed:
        η is ``numpy.random.RandomState(seed).normal(0, 1, F)``, a local legacy generator (released: seed 42, with
        the global ``np.random.seed``; the numbers are the same and the global state is left alone).
    """

    def __init__(
        self,
        num_hyperplanes: int = DEFAULT_NUM_HYPERPLANES,
        feature_dim: int = DEFAULT_FEATURE_DIM,
        seed: int = DEFAULT_ROTATOR_SEED,
    ) -> None:
        self.num_hyperplanes = check_int("num_hyperplanes", num_hyperplanes, minimum=1)
        self.feature_dim = check_int("feature_dim", feature_dim, minimum=1)
        self.seed = _check_seed("seed", seed)
        self.rotator = np.random.RandomState(self.seed).normal(0, 1, self.feature_dim)
        self.rotator.setflags(write=False)
        self.signs = np.where(np.arange(self.num_hyperplanes) < self.num_hyperplanes // 2, 1.0, -1.0)
        # η repeated so that every window η[(k + 0..N-1) mod F], k < F, is a contiguous slice of it.
        reps = -(-(self.feature_dim - 1 + self.num_hyperplanes) // self.feature_dim)
        tiled = np.tile(self.rotator, reps)[: self.feature_dim - 1 + self.num_hyperplanes]
        self._windows = sliding_window_view(tiled, self.num_hyperplanes)  # (F, N) view, no copy
        self._rotator_fft: np.ndarray | None = None

    def scores(self, ids: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """``x R^T``: the signed projection on every hyperplane, shape ``(num_hyperplanes,)``."""
        ids, weights = _check_features(ids, weights)
        shifts = ids % self.feature_dim
        if ids.size > _FFT_MIN_FEATURES:
            return self._scores_fft(shifts, weights)
        total, term = np.zeros(self.num_hyperplanes), np.empty(self.num_hyperplanes)
        for shift, weight in zip(shifts.tolist(), weights.tolist()):  # the released loop's order: val += η[...] * w
            np.multiply(self._windows[shift], weight, out=term)
            total += term
        return total * self.signs  # -(a + b) == (0 - a) - b exactly: the released `val -=` half

    def _scores_fft(self, shifts: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """``Σ_k w_k η[(k + i) mod F]`` for all i at once: irfft(conj(rfft(x)) * rfft(η)), tiled to N entries."""
        if self._rotator_fft is None:
            self._rotator_fft = np.fft.rfft(self.rotator)
        dense = np.bincount(shifts, weights=weights, minlength=self.feature_dim)
        correlation = np.fft.irfft(np.conj(np.fft.rfft(dense)) * self._rotator_fft, n=self.feature_dim)
        reps = -(-self.num_hyperplanes // self.feature_dim)
        return np.tile(correlation, reps)[: self.num_hyperplanes] * self.signs

    def bucket(self, ids: np.ndarray, weights: np.ndarray) -> int:
        """The first index of the largest score (``np.argmax``; the numba loop also keeps the first maximum)."""
        return int(np.argmax(self.scores(ids, weights)))

    def hyperplane_matrix(self) -> np.ndarray:
        """The explicit ``(N, F)`` matrix R (reference for tests; N * F floats, so keep N and F small)."""
        i = np.arange(self.num_hyperplanes)[:, None]
        k = np.arange(self.feature_dim)[None, :]
        return self.signs[:, None] * self.rotator[(k + i) % self.feature_dim]

    def scores_reference(self, ids: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """:meth:`scores` computed as ``R @ x`` with the explicit matrix and a dense x."""
        ids, weights = _check_features(ids, weights)
        dense = np.zeros(self.feature_dim)
        np.add.at(dense, ids % self.feature_dim, weights)
        return self.hyperplane_matrix() @ dense


class SignLSH:
    """T-bit sign LSH ``b_j = [x · r_j > 0]`` with one Gaussian vector per subword (§3.5; released ``LSHTokenizer``).

    The word vector ``Σ_k w_k g_k`` is a weighted sum of per-subword Gaussian vectors ``g_k ∈ R^T``; bit j is 1 when
    its j-th entry is positive. This equals projecting x on T hyperplanes whose k-th coordinate column is g_k, so no
    T x F matrix is stored: g_k is regenerated (and cached) from a generator seeded by the subword id k.

    ``g_k = numpy.random.RandomState(k).normal(0, 1, T)`` with ``seed=None``: the released numbers (``np.random.seed(k);
    np.random.normal(0, 1, T)``), from a local legacy generator rather than the global one. Another ``seed`` draws
    another family, ``RandomState([seed, k]).normal(0, 1, T)``. The sum is taken as the released ``np.sum`` of the
    rows ``w_k * g_k`` in feature order, so the projection is the released one bit for bit.

    A zero projection gives bit 0 (released ``vec > 0``); the paper's ``sgn(sgn(·) + 1)`` would give 1. Exact zeros
    have probability zero for a non-empty word.
    """

    def __init__(self, num_bits: int = DEFAULT_NUM_BITS, seed: int | None = None, cache_size: int = 1 << 17) -> None:
        self.num_bits = check_int("num_bits", num_bits, minimum=1)
        self.seed = None if seed is None else _check_seed("seed", seed)
        self._cached = lru_cache(maxsize=cache_size)(self._draw)
        # one private generator re-seeded per subword: a fresh RandomState(k)'s numbers, without building one
        self._state, self._lock = np.random.RandomState(0), threading.Lock()

    def _draw(self, subword_id: int) -> np.ndarray:
        with self._lock:
            self._state.seed(subword_id if self.seed is None else [self.seed, subword_id])
            vector = self._state.normal(0, 1, self.num_bits)
        vector.setflags(write=False)
        return vector

    def hyperplane_column(self, subword_id: int) -> np.ndarray:
        """g_k, the ``(T,)`` Gaussian vector of subword ``k``."""
        return self._cached(_check_seed("subword_id", int(subword_id)))

    def projection(self, ids: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """``Σ_k w_k g_k``, shape ``(T,)``, summed as the released code does (``np.sum`` over the rows, in order)."""
        ids, weights = _check_features(ids, weights)
        if ids.size == 0:
            return np.zeros(self.num_bits)
        _check_seed("subword id", int(ids.max()))
        columns = np.stack([self._cached(int(k)) for k in ids])
        return np.sum(columns * weights[:, None], axis=0)

    def bits(self, ids: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """The T-bit code as ``uint8`` 0/1, bit 0 first (the released code reads it as the most significant bit)."""
        return (self.projection(ids, weights) > 0).astype(np.uint8)


def _bpe_params(tokenizer: Tokenizer) -> dict[str, Any]:
    text = tokenizer.to_str()
    return {"bpe_json": text, "bpe_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(), "draws": DRAWS}


def _bpe_from_params(params: dict[str, Any]) -> Tokenizer:
    draws = params.pop("draws", None)
    if draws != DRAWS:
        raise ValueError(
            f"these LSH hasher params name the random draws {draws!r}, not {DRAWS!r}: they were saved before the "
            "hashers drew the released numbers (PCG64 default_rng), so their hashes cannot be rebuilt; build the "
            "hasher again and recompute what depends on its hashes"
        )
    text = params.pop("bpe_json")
    digest = params.pop("bpe_sha256", None)
    if digest is not None and hashlib.sha256(text.encode("utf-8")).hexdigest() != digest:
        raise ValueError("bpe_json does not match bpe_sha256: the stored tokenizer was altered")
    return Tokenizer.from_str(text)


class LSHBucketHasher(TokenHasher):
    """HashFormer-LSH-Emb: word -> ``PermutationLSH`` bucket ``% num_buckets + offset`` (§3.3).

    Parameters
    ----------
    tokenizer:
        Byte-level BPE tokenizer giving the subword features: :func:`hashlib_core.bpe.roberta_bpe` (released) or one
        from :func:`hashlib_core.bpe.train_bpe`.
    num_buckets:
        N of the embedding table; ``index = argmax % num_buckets + offset`` (§3.3 "i = v % N").
    offset:
        Added to the index to skip the special ids (released: 5).
    num_hyperplanes:
        Number of hyperplanes (default: ``num_buckets``, as the released 50K model where both are 50,260).
    feature_dim, seed:
        Length and seed of η (:class:`PermutationLSH`).

    ``index``/``batch_index`` match the interface of :class:`hashlib_core.hashing.md5.KeyedMD5Hasher`. With
    ``roberta_bpe()`` and the defaults, ``index(w)`` is the released ``LSHValueTokenizer._get_lsh(w)``.
    """

    name = "lsh_bucket"

    def __init__(
        self,
        tokenizer: Tokenizer,
        num_buckets: int = DEFAULT_NUM_HYPERPLANES,
        offset: int = 5,
        num_hyperplanes: int | None = None,
        feature_dim: int = DEFAULT_FEATURE_DIM,
        seed: int = DEFAULT_ROTATOR_SEED,
        cache_size: int = 1 << 16,
    ) -> None:
        self.features = SubwordFeatureExtractor(tokenizer, cache_size=cache_size)
        self.num_buckets = check_int("num_buckets", num_buckets, minimum=1)
        self.offset = check_int("offset", offset, minimum=0)
        hyperplanes = self.num_buckets if num_hyperplanes is None else num_hyperplanes
        self.lsh = PermutationLSH(hyperplanes, feature_dim, seed)
        self._cached = lru_cache(maxsize=cache_size)(self._compute)

    def _compute(self, token: str) -> int:
        return self.lsh.bucket(*self.features(token)) % self.num_buckets + self.offset

    def index(self, token: str) -> int:
        """The embedding row of ``token``."""
        return self._cached(validate_token(token))

    def batch_index(self, tokens: Iterable[str]) -> torch.Tensor:
        """:meth:`index` of every token as a ``torch.long`` tensor of shape ``(n,)``."""
        return torch.tensor([self._cached(t) for t in validate_tokens(tokens)], dtype=torch.long)

    def hash(self, token: str) -> int:
        """Same as :meth:`index`."""
        return self.index(token)

    def hash_batch(self, tokens: Iterable[str]) -> torch.Tensor:
        """Same as :meth:`batch_index`."""
        return self.batch_index(tokens)

    def params(self) -> dict[str, Any]:
        """The tokenizer (JSON and sha256), the draws' name and the constructor's numbers (:meth:`from_params`)."""
        lsh = self.lsh
        return {**_bpe_params(self.features.tokenizer), "num_buckets": self.num_buckets, "offset": self.offset,
                "num_hyperplanes": lsh.num_hyperplanes, "feature_dim": lsh.feature_dim, "seed": lsh.seed}

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> "LSHBucketHasher":
        """The hasher :meth:`params` describes (same hashes); refuses params saved before the released draws."""
        params = dict(params)
        return cls(_bpe_from_params(params), **params)

    def __repr__(self) -> str:
        return (f"LSHBucketHasher(bpe_vocab={self.features.vocab_size}, num_buckets={self.num_buckets}, offset="
                f"{self.offset}, num_hyperplanes={self.lsh.num_hyperplanes}, feature_dim={self.lsh.feature_dim}, "
                f"seed={self.lsh.seed})")


class LSHBitHasher(TokenHasher):
    """HashFormer-LSH Pool/Add/Proj: word -> T-bit ``SignLSH`` code of its subword features (§3.5).

    ``bits``/``batch_bits`` match :class:`hashlib_core.hashing.md5.KeyedMD5Hasher` (``uint8`` tensors, first bit
    first). With ``num_bits=420`` it also gives ProFormer-style 420-bit codes (Sankar et al., 2021b). With
    ``roberta_bpe()`` and the defaults, ``bits(w)`` are the released ``LSHTokenizer._get_proj(w)`` bits, most
    significant first (``format(int(code, 36) - 5, '0>128b')``).
    """

    name = "lsh_bits"

    def __init__(
        self,
        tokenizer: Tokenizer,
        num_bits: int = DEFAULT_NUM_BITS,
        seed: int | None = None,
        cache_size: int = 1 << 16,
    ) -> None:
        self.features = SubwordFeatureExtractor(tokenizer, cache_size=cache_size)
        self.lsh = SignLSH(num_bits, seed)
        self._cached = lru_cache(maxsize=cache_size)(self._compute)

    @property
    def num_bits(self) -> int:
        """T, the code length."""
        return self.lsh.num_bits

    def _compute(self, token: str) -> np.ndarray:
        code = self.lsh.bits(*self.features(token))
        code.setflags(write=False)
        return code

    def bits(self, token: str) -> torch.Tensor:
        """The ``(T,)`` ``uint8`` code of ``token``."""
        return torch.from_numpy(self._cached(validate_token(token)).copy())

    def batch_bits(self, tokens: Iterable[str]) -> torch.Tensor:
        """The ``(n, T)`` ``uint8`` codes of many tokens."""
        words = validate_tokens(tokens)
        if not words:
            return torch.zeros((0, self.num_bits), dtype=torch.uint8)
        return torch.from_numpy(np.stack([self._cached(t) for t in words]))

    def hash(self, token: str) -> torch.Tensor:
        """Same as :meth:`bits`."""
        return self.bits(token)

    def hash_batch(self, tokens: Iterable[str]) -> torch.Tensor:
        """Same as :meth:`batch_bits`."""
        return self.batch_bits(tokens)

    def params(self) -> dict[str, Any]:
        """The tokenizer (JSON and sha256), the draws' name, ``num_bits`` and ``seed`` (:meth:`from_params`)."""
        return {**_bpe_params(self.features.tokenizer), "num_bits": self.num_bits, "seed": self.lsh.seed}

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> "LSHBitHasher":
        """The hasher :meth:`params` describes (same hashes); refuses params saved before the released draws."""
        params = dict(params)
        return cls(_bpe_from_params(params), **params)

    def __repr__(self) -> str:
        return f"LSHBitHasher(bpe_vocab={self.features.vocab_size}, num_bits={self.num_bits}, seed={self.lsh.seed})"
