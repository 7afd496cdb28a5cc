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
2. tokenise that string with a byte-level BPE tokenizer (released: ``roberta-base``'s 50,265-token vocabulary; here
   one trained locally with :func:`hashlib_core.papers.hashformers.tokenization.train_bpe`); count the subwords, and drop ``'-'``
   unless it is the only subword;
3. a subword s with count c gets weight ``c / max(len(w) + 1 - len(s), 1)`` (longer subwords weigh more), and its
   feature index is its BPE id.

Taken literally, step 2 encodes a string of about ``len(w)**2`` characters. :mod:`.lsh_features` and
:mod:`.lsh_cuts` compute the same ids and weights in time linear in ``len(w)`` for letter/digit words longer than
32 characters (the BPE encodings of all prefixes and suffixes of ``w`` from one encoding of ``w``; shorter words
keep the literal algorithm, :func:`~hashlib_core.hashing.lsh_features.subword_features_reference`, faster at that
size), and refuse other words longer than :data:`~hashlib_core.hashing.lsh_features.MAX_REFERENCE_LENGTH`
characters with a clear error.

Deviations from the released code, on purpose:

* random numbers come from explicit ``numpy.random.Generator`` objects (PCG64), never the global
  ``np.random.seed``. The released T-bit LSH calls ``np.random.seed(subword_id)`` then ``np.random.normal(0, 1,
  128)`` (the legacy MT19937 generator with Box-Muller normals), and Emb-LSH draws η with ``np.random.seed(42)``.
  Here hyperplane k is ``default_rng(k).standard_normal(T)`` (or ``default_rng((seed, k))`` with a ``seed``) and
  η is ``default_rng(42).standard_normal(F)``: the same distributions, different numbers. The released codes are
  not reproducible bit for bit anyway, since they depend on roberta-base's vocabulary ids;
* Emb-LSH is computed vectorised (a strided gather of shifted copies of η; above 64 features, as for long
  words, one FFT circular correlation) instead of the numba double loop; the result is the same argmax as the
  explicit hyperplane matrix (:meth:`PermutationLSH.hyperplane_matrix`), up to float rounding.

The Emb-LSH rule of the *live* numba function ``compute_ind`` (two other versions are commented out): for
hyperplane i in ``0 .. N-1`` the score is ``s_i * Σ_k w_k η[(k + i) mod F]`` with ``s_i = +1`` for
``i < N/2`` and ``-1`` otherwise (F = N = 50,260 in the released code); the bucket is the first argmax, plus 5.
"""
from __future__ import annotations

import hashlib
from functools import lru_cache
from typing import Any, Iterable, Mapping

import numpy as np
import torch
from numpy.lib.stride_tricks import sliding_window_view
from tokenizers import Tokenizer

from hashlib_core.hashing.base import TokenHasher, check_int, validate_token, validate_tokens
from hashlib_core.hashing.lsh_features import (
    MAX_REFERENCE_LENGTH,
    SubwordFeatureExtractor,
    subword_features,
    subword_features_reference,
    word_variants,
)

__all__ = [
    "DEFAULT_FEATURE_DIM",
    "DEFAULT_NUM_HYPERPLANES",
    "DEFAULT_ROTATOR_SEED",
    "DEFAULT_NUM_BITS",
    "MAX_REFERENCE_LENGTH",
    "word_variants",
    "subword_features",
    "subword_features_reference",
    "SubwordFeatureExtractor",
    "PermutationLSH",
    "SignLSH",
    "LSHBucketHasher",
    "LSHBitHasher",
]

#: Length F of the stored random vector η in the released code (the RoBERTa vocabulary minus its 5 special ids).
DEFAULT_FEATURE_DIM = 50260
#: Number of hyperplanes N of the released Emb-LSH (= its number of buckets).
DEFAULT_NUM_HYPERPLANES = 50260
#: Seed of η in the released code (``np.random.seed(42)``); here the seed of a ``default_rng``.
DEFAULT_ROTATOR_SEED = 42
#: T, the code length of the compressed LSH variants (§4.2: "we set T = 128 to make it comparable to MD5").
DEFAULT_NUM_BITS = 128

#: Subwords processed at once by :meth:`PermutationLSH.scores` (bounds memory at ``chunk * N`` floats).
_GATHER_CHUNK = 64
#: Above this many subwords (one gather chunk) :meth:`PermutationLSH.scores` uses one FFT, O(F log F), instead of the
#: gather, O(nnz N); at most this many (every ordinary word) keep the gather, so their buckets are unchanged.
_FFT_MIN_FEATURES = 64


def _check_features(ids: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ids = np.asarray(ids)
    weights = np.asarray(weights, dtype=np.float64)
    if ids.ndim != 1 or weights.shape != ids.shape:
        raise ValueError(f"ids and weights must be 1-D and of equal length, got shapes {ids.shape} and {weights.shape}")
    if ids.size and (not np.issubdtype(ids.dtype, np.integer) or ids.min() < 0):
        raise ValueError("feature ids must be non-negative integers")
    return ids.astype(np.int64, copy=False), weights


class PermutationLSH:
    """Emb-LSH bucket ``argmax(x R)`` with every hyperplane a cyclic shift of one stored vector η (§3.3).

    Hyperplane ``i`` (``0 <= i < num_hyperplanes``) has entries ``R[i, k] = s_i * η[(k + i) mod F]`` with
    ``s_i = +1`` for ``i < num_hyperplanes // 2`` and ``-1`` above (released ``compute_ind``). For a sparse feature
    vector (subword ids k with weights w_k) the scores are ``s_i * Σ_k w_k η[(k + i) mod F]``.

    Only η (F floats) is stored. :meth:`scores` gathers the shifted windows ``η[(k + 0..N-1) mod F]`` of the word's
    subwords from a strided view of η repeated end to end (no N x F matrix), in chunks of 64 subwords, and
    combines them with one matrix-vector product: O(nnz * N) time per word. Above 64 subwords (long words) it
    computes the scores as one circular cross-correlation of the dense feature vector with η by FFT instead,
    O(F log F + N) whatever nnz is; both agree with :meth:`scores_reference` to ~1e-12 relative.

    Parameters
    ----------
    num_hyperplanes:
        N, the number of hyperplanes and of possible hash values (released: 50,260).
    feature_dim:
        F, the length of η: feature ids are taken modulo F (released: 50,260, while roberta-base has 50,265 ids,
        so its last five ids share shifts with ids 0-4).
    seed:
        Seed of the ``numpy.random.default_rng`` that draws η ~ N(0, 1)^F.
    """

    def __init__(
        self,
        num_hyperplanes: int = DEFAULT_NUM_HYPERPLANES,
        feature_dim: int = DEFAULT_FEATURE_DIM,
        seed: int = DEFAULT_ROTATOR_SEED,
    ) -> None:
        self.num_hyperplanes = check_int("num_hyperplanes", num_hyperplanes, minimum=1)
        self.feature_dim = check_int("feature_dim", feature_dim, minimum=1)
        self.seed = check_int("seed", seed, minimum=0)
        self.rotator = np.random.default_rng(self.seed).standard_normal(self.feature_dim)
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
        total = np.zeros(self.num_hyperplanes)
        for start in range(0, ids.size, _GATHER_CHUNK):
            block = self._windows[shifts[start : start + _GATHER_CHUNK]]  # (chunk, N) copy of shifted η windows
            total += weights[start : start + _GATHER_CHUNK] @ block
        return total * self.signs

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

    ``g_k = numpy.random.default_rng(k).standard_normal(T)`` (``seed=None``, the released seeding by id) or
    ``default_rng((seed, k))`` for another family. The released code uses the global legacy generator
    (``np.random.seed(k); np.random.normal(0, 1, T)``), so its numbers differ (see the module docstring).

    A zero projection gives bit 0 (released ``vec > 0``); the paper's ``sgn(sgn(·) + 1)`` would give 1. Exact zeros
    have probability zero for a non-empty word.
    """

    def __init__(self, num_bits: int = DEFAULT_NUM_BITS, seed: int | None = None, cache_size: int = 1 << 17) -> None:
        self.num_bits = check_int("num_bits", num_bits, minimum=1)
        self.seed = None if seed is None else check_int("seed", seed, minimum=0)
        self._cached = lru_cache(maxsize=cache_size)(self._draw)

    def _draw(self, subword_id: int) -> np.ndarray:
        entropy = subword_id if self.seed is None else (self.seed, subword_id)
        vector = np.random.default_rng(entropy).standard_normal(self.num_bits)
        vector.setflags(write=False)
        return vector

    def hyperplane_column(self, subword_id: int) -> np.ndarray:
        """g_k, the ``(T,)`` Gaussian vector of subword ``k``."""
        return self._cached(check_int("subword_id", int(subword_id), minimum=0))

    def projection(self, ids: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """``Σ_k w_k g_k``, shape ``(T,)``."""
        ids, weights = _check_features(ids, weights)
        if ids.size == 0:
            return np.zeros(self.num_bits)
        columns = np.stack([self._cached(int(k)) for k in ids])
        return weights @ columns

    def bits(self, ids: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """The T-bit code as ``uint8`` 0/1, bit 0 first (the released code reads it as the most significant bit)."""
        return (self.projection(ids, weights) > 0).astype(np.uint8)


def _bpe_params(tokenizer: Tokenizer) -> dict[str, Any]:
    text = tokenizer.to_str()
    return {"bpe_json": text, "bpe_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}


def _bpe_from_params(params: dict[str, Any]) -> Tokenizer:
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
        Byte-level BPE tokenizer giving the subword features (:func:`hashlib_core.papers.hashformers.tokenization.train_bpe`).
    num_buckets:
        N of the embedding table; ``index = argmax % num_buckets + offset`` (§3.3 "i = v % N").
    offset:
        Added to the index to skip the special ids (released: 5).
    num_hyperplanes:
        Number of hyperplanes (default: ``num_buckets``, as the released 50K model where both are 50,260).
    feature_dim, seed:
        Length and seed of η (:class:`PermutationLSH`).

    ``index``/``batch_index`` match the interface of :class:`hashlib_core.hashing.md5.KeyedMD5Hasher`.
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
        return self.index(token)

    def hash_batch(self, tokens: Iterable[str]) -> torch.Tensor:
        return self.batch_index(tokens)

    def params(self) -> dict[str, Any]:
        return {
            **_bpe_params(self.features.tokenizer),
            "num_buckets": self.num_buckets,
            "offset": self.offset,
            "num_hyperplanes": self.lsh.num_hyperplanes,
            "feature_dim": self.lsh.feature_dim,
            "seed": self.lsh.seed,
        }

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> "LSHBucketHasher":
        params = dict(params)
        return cls(_bpe_from_params(params), **params)

    def __repr__(self) -> str:
        return (
            f"LSHBucketHasher(bpe_vocab={self.features.vocab_size}, num_buckets={self.num_buckets}, "
            f"offset={self.offset}, num_hyperplanes={self.lsh.num_hyperplanes}, "
            f"feature_dim={self.lsh.feature_dim}, seed={self.lsh.seed})"
        )


class LSHBitHasher(TokenHasher):
    """HashFormer-LSH Pool/Add/Proj: word -> T-bit ``SignLSH`` code of its subword features (§3.5).

    ``bits``/``batch_bits`` match :class:`hashlib_core.hashing.md5.KeyedMD5Hasher` (``uint8`` tensors, first bit
    first). With ``num_bits=420`` it also gives ProFormer-style 420-bit codes (Sankar et al., 2021b).
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
        return self.bits(token)

    def hash_batch(self, tokens: Iterable[str]) -> torch.Tensor:
        return self.batch_bits(tokens)

    def params(self) -> dict[str, Any]:
        return {**_bpe_params(self.features.tokenizer), "num_bits": self.num_bits, "seed": self.lsh.seed}

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> "LSHBitHasher":
        params = dict(params)
        return cls(_bpe_from_params(params), **params)

    def __repr__(self) -> str:
        return f"LSHBitHasher(bpe_vocab={self.features.vocab_size}, num_bits={self.num_bits}, seed={self.lsh.seed})"
