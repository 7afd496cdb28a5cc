"""HashFormers token embeddings: Emb, Pool, Add and Proj (Xue & Aletras, EMNLP 2022, §3.1 and §3.4).

* :class:`HashBucketEmbedding` -- **Emb(N)** (§3.1): a hash value picks row ``i = v % N`` of ``E ∈ R^{N×d}``; the
  table also holds the 5 special ids in front (released layout: ``hash % N + 5``).
* :class:`PoolEmbedding` -- **Pool** (§3.4, Eq. 1): the T-bit code is cut into ⌈T/k⌉ k-bit codewords, each looked
  up in one shared codebook ``B ∈ R^{2^k×d}``, and the vectors are averaged with per-dimension softmax weights
  ``softmax(W)``, ``W ∈ R^{⌈T/k⌉×d}``.
* :class:`AdditiveEmbedding` -- **Add** (§3.4, Eq. 2): T codebooks ``B^j ∈ R^{2×d}``, one per bit;
  ``e = Σ_j B^j_{τ_j} / γ`` with ``γ = √T`` (footnote 3); stored as the paper's codebooks or as the T differences
  ``B^j_1 - B^j_0`` alone (the shared part left to a vector the model adds to every word).
* :class:`PearsonProjection` -- **Proj** (§3.4, Eq. 3): ``e_j`` is Pearson's correlation between the bit vector τ
  and a learned vector ``w^j ∈ R^T``.
* :class:`LinearBitProjection` -- a plain dense projection of the bit vector, ProFormer's projection layer
  (Sankar et al., 2021b), used for the ProFormer baseline of Table 2.

The compressed modules take bit codes ``(..., T)`` (any dtype holding 0/1) and an optional boolean ``active`` mask of
shape ``(...)``: inactive positions (special tokens, padding) get an all-zero vector, so the model can add its
special-token embedding there. The released code (``src/model/model.py``) merges Pool and Add into one class
(``RobertaConjEmbeddings``, which is Pool); here they are two modules, as the paper describes them.
"""
from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

__all__ = [
    "HashBucketEmbedding",
    "PoolEmbedding",
    "AdditiveEmbedding",
    "PearsonProjection",
    "LinearBitProjection",
    "bits_to_codewords",
]


def _check_positive(name: str, value: int, owner: str = "") -> int:
    where = f"{owner}: " if owner else ""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{where}{name} must be a positive int, got {type(value).__name__} {value!r:.40}")
    if value < 1:
        raise ValueError(f"{where}{name} must be >= 1, got {value}")
    return value


def _check_binary(owner: str, name: str, values: torch.Tensor) -> None:
    """Raise unless every entry is 0 or 1 (bool always is): one elementwise test and one ``any`` per call."""
    if values.dtype == torch.bool or values.numel() == 0:
        return
    bad = (values != 0) & (values != 1)  # also true for NaN
    if bool(bad.any()):
        found = values[bad].flatten()[:5].tolist()
        raise ValueError(
            f"{owner}: {name} must hold only 0/1 values (the hasher's bit codes), found {found} "
            f"({int(bad.sum())} of {values.numel()} entries); pass the uint8 codes of KeyedMD5Hasher.batch_bits / "
            f"LSHBitHasher.batch_bits, or binarise first, e.g. (x > 0).to(torch.uint8)"
        )


def _bits_as_float(bits: torch.Tensor, num_bits: int, dtype: torch.dtype, owner: str) -> torch.Tensor:
    if not isinstance(bits, torch.Tensor):
        raise TypeError(f"{owner}: bits must be a torch.Tensor of 0/1 values, got {type(bits).__name__}; "
                        f"convert with torch.as_tensor(bits, dtype=torch.uint8)")
    if bits.dim() < 1 or bits.shape[-1] != num_bits:
        raise ValueError(f"{owner}: bits must have a last dimension of {num_bits} (T), got shape {tuple(bits.shape)}; "
                         f"build the module with num_bits={bits.shape[-1] if bits.dim() else 'T'} or pass T-bit codes")
    if bits.is_complex():
        raise TypeError(f"{owner}: bits must be a real tensor of 0/1 values, got dtype {bits.dtype}")
    _check_binary(owner, "bits", bits)
    return bits.to(dtype)


def _check_active(active: Any, shape: tuple[int, ...], owner: str) -> None:
    if not isinstance(active, torch.Tensor):
        raise TypeError(f"{owner}: active must be a bool torch.Tensor (True at word positions) or None, got "
                        f"{type(active).__name__}")
    if tuple(active.shape) != tuple(shape):
        raise ValueError(f"{owner}: active must have the shape of bits without its last dimension, {tuple(shape)}, "
                         f"got {tuple(active.shape)}")
    _check_binary(owner, "active", active)


def _apply_active(embeddings: torch.Tensor, active: torch.Tensor | None, owner: str) -> torch.Tensor:
    if active is None:
        return embeddings
    _check_active(active, embeddings.shape[:-1], owner)
    return embeddings * active.unsqueeze(-1).to(embeddings.dtype)


def bits_to_codewords(bits: torch.Tensor, chunk_bits: int) -> torch.Tensor:
    """Cut ``(..., T)`` bits into ⌈T/k⌉ codewords (first bit most significant); returns ``(..., ⌈T/k⌉)`` long.

    ``[1,0,1,0, 0,1,0,0, 0,0,0,1]`` with k = 4 gives ``[10, 4, 1]`` (§3.4's example). A last chunk shorter than k
    is read as a shorter binary number (T = 128, k = 10: the 13th codeword has 8 bits, values 0-255), as the
    released ``int(base2[120:128], 2)``.
    """
    chunk_bits = _check_positive("chunk_bits", chunk_bits, "bits_to_codewords")
    if not isinstance(bits, torch.Tensor) or bits.dim() < 1:
        got = tuple(bits.shape) if isinstance(bits, torch.Tensor) else type(bits).__name__
        raise TypeError(f"bits_to_codewords: bits must be a torch.Tensor with the bits in its last dimension, got "
                        f"{got}; wrap a single code as bits[None] or torch.as_tensor(code)")
    _check_binary("bits_to_codewords", "bits", bits)
    return _codewords(bits, chunk_bits)


def _codewords(bits: torch.Tensor, chunk_bits: int) -> torch.Tensor:
    num_bits = bits.shape[-1]
    ints = bits.to(torch.long)
    words = []
    for start in range(0, num_bits, chunk_bits):
        chunk = ints[..., start : start + chunk_bits]
        powers = 2 ** torch.arange(chunk.shape[-1] - 1, -1, -1, device=bits.device)
        words.append((chunk * powers).sum(-1))
    return torch.stack(words, dim=-1)


class HashBucketEmbedding(nn.Module):
    """Emb(N) (§3.1): an ``nn.Embedding(num_special + N, d)``; hashed ids are ``v % N + num_special``.

    The first ``num_special`` rows are the special tokens (``<pad>`` at ``padding_idx`` is kept at zero, as any
    ``nn.Embedding`` with a ``padding_idx``). With a BPE vocabulary of size V and ``num_buckets = V - num_special``
    the same module is the BERT baselines' word embedding.
    """

    def __init__(self, num_buckets: int, embedding_dim: int, num_special: int = 5, padding_idx: int | None = 1) -> None:
        super().__init__()
        owner = "HashBucketEmbedding"
        self.num_buckets = _check_positive("num_buckets", num_buckets, owner)
        if isinstance(num_special, bool) or not isinstance(num_special, int) or num_special < 0:
            raise TypeError(f"{owner}: num_special must be an int >= 0 (rows for the special ids, 5 in HashFormers), "
                            f"got {type(num_special).__name__} {num_special!r:.40}")
        self.num_special = num_special
        self.embedding_dim = _check_positive("embedding_dim", embedding_dim, owner)
        rows = num_special + num_buckets
        if padding_idx is not None and (isinstance(padding_idx, bool) or not isinstance(padding_idx, int)
                                        or not 0 <= padding_idx < rows):
            raise ValueError(f"{owner}: padding_idx must be None or an int in [0, {rows}) (the <pad> row, 1 in "
                             f"HashFormers), got {padding_idx!r:.40}")
        self.embedding = nn.Embedding(rows, embedding_dim, padding_idx=padding_idx)

    def embedding_parameter_count(self) -> int:
        """The ``N x d`` hashed rows (the special-token rows are not a word's embedding; Appendix B)."""
        return self.weight[self.num_special :].numel()

    @property
    def weight(self) -> torch.Tensor:
        return self.embedding.weight

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        if not isinstance(input_ids, torch.Tensor):
            raise TypeError(f"HashBucketEmbedding: input_ids must be an integer torch.Tensor, got "
                            f"{type(input_ids).__name__}; convert with torch.as_tensor(ids, dtype=torch.long)")
        if input_ids.dtype not in (torch.long, torch.int32):
            raise TypeError(f"HashBucketEmbedding: input_ids must be an integer tensor (int64 or int32), got "
                            f"{input_ids.dtype}; convert with input_ids.long()")
        rows = self.embedding.num_embeddings
        if input_ids.numel():
            low, high = (int(v) for v in torch.aminmax(input_ids))
            if low < 0 or high >= rows:
                raise ValueError(
                    f"HashBucketEmbedding: input_ids must lie in [0, {rows}) ({self.num_special} special ids + "
                    f"{self.num_buckets} buckets), got values in [{low}, {high}]; hash with num_buckets="
                    f"{self.num_buckets} and offset {self.num_special} (hash % N + {self.num_special})"
                )
        return self.embedding(input_ids)


class PoolEmbedding(nn.Module):
    """Pool (§3.4, Eq. 1a-1b): shared codebook of 2^k codewords, softmax-weighted pooling of ⌈T/k⌉ lookups.

    ``e = Σ_j softmax(W)_j ⊙ B[c_j]`` where the softmax runs over the ⌈T/k⌉ chunks separately for every
    dimension. Parameters: codebook ``(2^k + 1) × d`` (row 0 is the padding codeword of the released code, which
    stores ``c_j + 1`` so that 0 can mean "no word"; it stays zero) and ``W`` ``⌈T/k⌉ × d``: the paper's
    ``(⌈T/k⌉ + 2^k) × d`` plus the padding row.

    ``codeword_dropout`` is the dropout the released code applies to the looked-up codewords (0.1); the paper
    does not mention it. ``W`` starts from a normal(0, 0.02) truncated at ±0.04, as released.
    """

    def __init__(self, num_bits: int = 128, embedding_dim: int = 768, chunk_bits: int = 10,
                 codeword_dropout: float = 0.1) -> None:
        super().__init__()
        self.num_bits = _check_positive("num_bits", num_bits, "PoolEmbedding")
        self.chunk_bits = _check_positive("chunk_bits", chunk_bits, "PoolEmbedding")
        if self.chunk_bits > 24:
            raise ValueError(f"PoolEmbedding: chunk_bits={chunk_bits} needs a codebook of 2^{chunk_bits} rows; "
                             f"use k <= 24")
        self.num_chunks = math.ceil(num_bits / chunk_bits)
        self.embedding_dim = _check_positive("embedding_dim", embedding_dim, "PoolEmbedding")
        self.codebook = nn.Embedding(2**chunk_bits + 1, embedding_dim, padding_idx=0)
        self.chunk_weights = nn.Parameter(torch.empty(self.num_chunks, embedding_dim))
        self.dropout = nn.Dropout(codeword_dropout)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.normal_(self.codebook.weight, std=0.02)
        with torch.no_grad():
            self.codebook.weight[0].zero_()
        nn.init.trunc_normal_(self.chunk_weights, mean=0.0, std=0.02, a=-0.04, b=0.04)

    def embedding_parameter_count(self) -> int:
        """``(⌈T/k⌉ + 2^k) × d``: every parameter but the padding codeword (row 0), which no word reads."""
        return sum(p.numel() for p in self.parameters()) - self.codebook.weight[0].numel()

    def forward(self, bits: torch.Tensor, active: torch.Tensor | None = None) -> torch.Tensor:
        _bits_as_float(bits, self.num_bits, self.chunk_weights.dtype, "PoolEmbedding")
        codes = _codewords(bits, self.chunk_bits) + 1  # 1 .. 2^k; 0 is reserved for "no word"
        if active is not None:
            _check_active(active, bits.shape[:-1], "PoolEmbedding")
            codes = codes * active.unsqueeze(-1).to(codes.dtype)
        vectors = self.dropout(self.codebook(codes))  # (..., chunks, d)
        return (vectors * self.chunk_weights.softmax(dim=0)).sum(dim=-2)


class AdditiveEmbedding(nn.Module):
    """Add (§3.4, Eq. 2): ``e = Σ_{j=1..T} B^j_{τ_j} / γ``, T codebooks of two vectors, ``γ = √T`` (footnote 3).

    Every word's vector is a **shared part** ``s = Σ_j (B^j_0 + B^j_1) / (2γ)``, the same for all words, plus a
    **word part** ``Σ_j (τ_j - ½) · D_j / γ`` with ``D_j = B^j_1 - B^j_0`` (:meth:`parts`): Eq. 2's ``2 T d``
    numbers have only ``(T + 1) d`` degrees of freedom. Two storages:

    * ``storage="codebooks"`` (the paper's and the released code's): one ``(T, 2, d)`` parameter, ``2 T d`` numbers.
      Under Adam each of the T pairs takes its own full-size step along the shared gradient, so ``s`` moves about
      ``T / γ = √T`` times as far as a single vector with the same gradient (11x at T = 128).
    * ``storage="differences"``: only the T differences (``T d`` numbers); the shared part is zero. Inside a model
      that adds a learned vector to every word, as HashFormers' hashed-word marker (special-token row 5), that
      vector plays ``s`` and the model computes the same set of functions as with the codebooks, each shared vector
      stepping like any other. :meth:`init_normal_` draws ``D_j`` as the differences of normal codebooks.

    ``shared_gradient=False`` is a diagnostic, not the paper's model: the same function, but no gradient reaches
    ``s`` (only weight decay moves it). :meth:`as_codebooks` gives the ``(T, 2, d)`` codebooks of either storage.
    """

    STORAGES = ("codebooks", "differences")

    def __init__(self, num_bits: int = 128, embedding_dim: int = 768, scale: float | None = None,
                 shared_gradient: bool = True, storage: str = "codebooks") -> None:
        super().__init__()
        self.num_bits = _check_positive("num_bits", num_bits, "AdditiveEmbedding")
        self.embedding_dim = _check_positive("embedding_dim", embedding_dim, "AdditiveEmbedding")
        self.scale = math.sqrt(num_bits) if scale is None else float(scale)
        if self.scale <= 0:
            raise ValueError(f"AdditiveEmbedding: scale (γ) must be positive, got {scale}; leave it None for √T")
        if not isinstance(shared_gradient, bool):
            raise TypeError(f"AdditiveEmbedding: shared_gradient must be a bool, got {shared_gradient!r:.40}")
        if storage not in self.STORAGES:
            raise ValueError(f"AdditiveEmbedding: storage must be one of {self.STORAGES}, got {storage!r:.40}")
        self.shared_gradient = shared_gradient
        self.storage = storage
        if storage == "codebooks":
            self.codebooks = nn.Parameter(torch.empty(num_bits, 2, embedding_dim))
        else:
            self.differences = nn.Parameter(torch.empty(num_bits, embedding_dim))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        self.init_normal_(0.02)

    @torch.no_grad()
    def init_normal_(self, std: float) -> None:
        """Codebook entries i.i.d. ``N(0, std²)``; the differences ``D_j ~ N(0, 2 std²)``, their distribution
        under that init."""
        if self.storage == "codebooks":
            nn.init.normal_(self.codebooks, std=std)
        else:
            nn.init.normal_(self.differences, std=std * math.sqrt(2.0))

    def as_codebooks(self) -> torch.Tensor:
        """The ``(T, 2, d)`` codebooks ``B^j`` of Eq. 2 (the parameter itself for ``storage="codebooks"``;
        ``B^j_{0,1} = ∓ D_j / 2`` for the differences)."""
        if self.storage == "codebooks":
            return self.codebooks
        half = self.differences / 2
        return torch.stack([-half, half], dim=1)

    def embedding_parameter_count(self) -> int:
        """``2 T d`` for the codebooks, ``T d`` for the differences."""
        return sum(p.numel() for p in self.parameters())

    def _dtype(self) -> torch.dtype:
        return next(self.parameters()).dtype

    def parts(self, bits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(shared (d,), word parts (..., d))``; their sum is :meth:`forward` without the active mask."""
        tau = _bits_as_float(bits, self.num_bits, self._dtype(), "AdditiveEmbedding")
        if self.storage == "codebooks":
            zero, one = self.codebooks[:, 0], self.codebooks[:, 1]
            shared, differences = (zero + one).sum(dim=0) / (2 * self.scale), one - zero
        else:
            differences = self.differences
            shared = differences.new_zeros(self.embedding_dim)
        if not self.shared_gradient:
            shared = shared.detach()
        return shared, (tau - 0.5) @ differences / self.scale

    def forward(self, bits: torch.Tensor, active: torch.Tensor | None = None) -> torch.Tensor:
        if not self.shared_gradient or self.storage == "differences":
            shared, word = self.parts(bits)
            return _apply_active(shared + word, active, "AdditiveEmbedding")
        tau = _bits_as_float(bits, self.num_bits, self.codebooks.dtype, "AdditiveEmbedding")
        zero, one = self.codebooks[:, 0], self.codebooks[:, 1]
        embeddings = (zero.sum(dim=0) + tau @ (one - zero)) / self.scale
        return _apply_active(embeddings, active, "AdditiveEmbedding")

    def forward_reference(self, bits: torch.Tensor) -> torch.Tensor:
        """Eq. 2 literally: gather ``B^j_{τ_j}`` for every j and sum (for tests)."""
        index = _bits_as_float(bits, self.num_bits, self._dtype(), "AdditiveEmbedding").long()  # (..., T)
        j = torch.arange(self.num_bits, device=index.device).expand_as(index)
        return self.as_codebooks()[j, index].sum(dim=-2) / self.scale


class PearsonProjection(nn.Module):
    """Proj (§3.4, Eq. 3): ``e_j = PCC(τ, w^j)`` for d learned vectors ``w^j ∈ R^T`` (``T × d`` parameters).

    As the released ``DropoutLinearCosNorm``: centre τ over its T bits and each ``w^j`` over its T entries,
    L2-normalise both (norms clamped at 1e-8) and take dot products, i.e. a bias-free linear map of unit vectors.
    A constant code (all zeros or all ones) has no defined correlation and gives the zero vector. Every output lies
    in [-1, 1]. Weights start from normal(0, 0.02) (the released ``_init_weights``; the scale does not matter).
    """

    def __init__(self, num_bits: int = 128, embedding_dim: int = 768, eps: float = 1e-8) -> None:
        super().__init__()
        self.num_bits = _check_positive("num_bits", num_bits, "PearsonProjection")
        self.embedding_dim = _check_positive("embedding_dim", embedding_dim, "PearsonProjection")
        self.weight = nn.Parameter(torch.empty(embedding_dim, num_bits))
        self.eps = eps
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.normal_(self.weight, std=0.02)

    def embedding_parameter_count(self) -> int:
        """``T d``: the projection weights."""
        return self.weight.numel()

    def forward(self, bits: torch.Tensor, active: torch.Tensor | None = None) -> torch.Tensor:
        tau = _bits_as_float(bits, self.num_bits, self.weight.dtype, "PearsonProjection")
        tau = tau - tau.mean(dim=-1, keepdim=True)
        tau = tau / tau.norm(dim=-1, keepdim=True).clamp(min=self.eps)
        w = self.weight - self.weight.mean(dim=1, keepdim=True)
        w = w / w.norm(dim=1, keepdim=True).clamp(min=self.eps)
        return _apply_active(F.linear(tau, w), active, "PearsonProjection")


class LinearBitProjection(nn.Module):
    """A bias-free dense map of the T-bit code to d dimensions (ProFormer's LSH projection layer, ``T × d``)."""

    def __init__(self, num_bits: int = 420, embedding_dim: int = 768) -> None:
        super().__init__()
        self.num_bits = _check_positive("num_bits", num_bits, "LinearBitProjection")
        self.embedding_dim = _check_positive("embedding_dim", embedding_dim, "LinearBitProjection")
        self.weight = nn.Parameter(torch.empty(embedding_dim, num_bits))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.normal_(self.weight, std=0.02)

    def embedding_parameter_count(self) -> int:
        """``T d``: the projection weights."""
        return self.weight.numel()

    def forward(self, bits: torch.Tensor, active: torch.Tensor | None = None) -> torch.Tensor:
        tau = _bits_as_float(bits, self.num_bits, self.weight.dtype, "LinearBitProjection")
        return _apply_active(F.linear(tau, self.weight), active, "LinearBitProjection")
