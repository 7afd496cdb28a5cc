"""MultiHashFormer's Hash Encoder: the gated compositional embedding (Xue, Yamaguchi & Aletras, section 3.1).

Every token ``w`` has a signature ``(H_1(w), ..., H_H(w))`` of ``H`` bucket ids, each in ``[0, B)``; bucket 0 is
reserved for padding, so a registered token has every coordinate in ``[1, B)`` and a padding (or unregistered) id
has the all-zero signature. The signatures come from :class:`hashlib_core.hashing.SignatureRegistry` as a ``V x H``
integer table (``registry.table()``), which this module keeps as the persistent buffer ``hash_map``.

The embedding of ``w`` is (section 3.1, equation for ``e``)::

    e = ( sum_i softmax(alpha)_i * E^(i)[H_i(w)] ) W_s,      alpha_i = sigma(E^(i)[H_i(w)] W_1) W_2

with ``H`` tables ``E^(i)`` of shape ``B x d``, a bottleneck gate ``W_1: d -> d_z``, ``sigma`` = SiLU,
``W_2: d_z -> 1``, and the adapter ``W_s: d -> d``. As in the released code (``ContextualGatingCombiner``):

* the ``H`` tables are one ``(H * B) x d`` table, coordinate ``i`` reading row ``i * B + H_i(w)``;
* the gate and the adapter are ``nn.Linear`` layers with biases;
* there is no activation after the adapter (the released code leaves a TODO about it; we keep it linear).

The same ``(H * B) x d`` table is the Hash Decoder's output matrix (weights tied, section 3.3), see
:mod:`hashlib_core.decoding.multihash`.
"""
from __future__ import annotations

import torch
from torch import nn

from hashlib_core.hashing.base import check_int

__all__ = ["validate_signature_table", "GatedCompositionalEmbedding"]


def validate_signature_table(table: torch.Tensor, num_buckets: int, num_hashes: int | None = None) -> torch.Tensor:
    """Check a ``V x H`` signature table and return it as a contiguous CPU ``int64`` tensor.

    A valid table has integer entries in ``[0, num_buckets)``; each row is either all zero (a padding or
    unregistered id: never predicted, never generated) or has every coordinate in ``[1, num_buckets)`` (bucket 0
    is reserved for padding, section 3.1); and no two non-zero rows are equal (signatures are collision-free,
    which is what lets the decoder map a predicted signature back to exactly one token).

    Raises
    ------
    TypeError
        ``table`` is not an integer ``torch.Tensor``.
    ValueError
        Wrong shape, an entry out of range, a row mixing bucket 0 with non-zero buckets, or a duplicated signature
        (the message names the offending ids).
    """
    if not isinstance(table, torch.Tensor):
        raise TypeError(
            f"the signature table must be a torch.Tensor of shape (vocab_size, num_hashes), got "
            f"{type(table).__name__}; use SignatureRegistry.table()"
        )
    if table.dtype.is_floating_point or table.dtype.is_complex or table.dtype == torch.bool:
        raise TypeError(f"the signature table must hold integers, got dtype {table.dtype}; convert with .long()")
    if table.dim() != 2:
        raise ValueError(f"the signature table must be 2-D (vocab_size, num_hashes), got shape {tuple(table.shape)}")
    if num_hashes is not None and table.shape[1] != num_hashes:
        raise ValueError(
            f"the signature table has {table.shape[1]} hash columns but the model uses num_hashes={num_hashes}; "
            f"build the registry with the same number of hash functions"
        )
    table = table.detach().to("cpu", torch.long).contiguous()
    if table.numel() == 0:
        return table
    low, high = int(table.min()), int(table.max())
    if low < 0 or high >= num_buckets:
        raise ValueError(
            f"signature entries must lie in [0, num_buckets={num_buckets}), found values in [{low}, {high}]; "
            f"build the registry with the model's num_buckets"
        )
    zero = table.eq(0)
    mixed = zero.any(1) & ~zero.all(1)
    if bool(mixed.any()):
        ids = mixed.nonzero().flatten()[:5].tolist()
        raise ValueError(
            f"token ids {ids} have signatures mixing bucket 0 with other buckets; bucket 0 is reserved for padding, "
            f"so a row must be all zero (padding/unregistered) or entirely in [1, {num_buckets})"
        )
    registered = table[~zero.all(1)]
    unique = torch.unique(registered, dim=0)
    if unique.shape[0] != registered.shape[0]:
        rows, inverse, counts = torch.unique(table, dim=0, return_inverse=True, return_counts=True)
        dup_groups = [
            (inverse == g).nonzero().flatten()[:5].tolist()
            for g in (counts > 1).nonzero().flatten().tolist()
            if bool(rows[g].ne(0).any())
        ]
        raise ValueError(
            f"{registered.shape[0] - unique.shape[0]} duplicated signature(s), e.g. token ids {dup_groups[0]} share "
            f"one signature; signatures must be collision-free (use SignatureRegistry, which rehashes on collision)"
        )
    return table


class GatedCompositionalEmbedding(nn.Module):
    """Token ids -> signatures (``hash_map``) -> gated mixture of ``H`` bucket embeddings -> linear adapter.

    Parameters
    ----------
    vocab_size:
        Number of token ids ``V`` (rows of ``hash_map``).
    num_hashes:
        ``H``, hash functions per signature.
    num_buckets:
        ``B``, buckets per hash function (bucket 0 is padding).
    hidden_size:
        ``d``, the backbone width.
    gate_bottleneck:
        ``d_z``, the gate's hidden width (64 in the paper, section 4.1).

    The ``hash_map`` buffer starts all zero (no registered token); install signatures with
    :meth:`set_signature_table`. Parameters: ``H*B*d`` (tables) + ``d*d_z + d_z + d_z + 1`` (gate) + ``d*d + d``
    (adapter).
    """

    def __init__(
        self, vocab_size: int, num_hashes: int, num_buckets: int, hidden_size: int, gate_bottleneck: int = 64
    ) -> None:
        super().__init__()
        self.vocab_size = check_int("vocab_size", vocab_size, minimum=1)
        self.num_hashes = check_int("num_hashes", num_hashes, minimum=1)
        self.num_buckets = check_int("num_buckets", num_buckets, minimum=2, fix="bucket 0 is reserved for padding")
        self.hidden_size = self.embedding_dim = check_int("hidden_size", hidden_size, minimum=1)
        self.gate_bottleneck = check_int("gate_bottleneck", gate_bottleneck, minimum=1)
        self.table = nn.Embedding(num_hashes * num_buckets, hidden_size)
        self.gate = nn.Sequential(
            nn.Linear(hidden_size, gate_bottleneck), nn.SiLU(), nn.Linear(gate_bottleneck, 1)
        )
        self.adapter = nn.Linear(hidden_size, hidden_size)
        self.register_buffer("hash_map", torch.zeros(vocab_size, num_hashes, dtype=torch.long), persistent=True)

    def embedding_parameter_count(self) -> int:
        """Every parameter of the Hash Encoder: the ``H`` tables, the gate and the adapter (the padding rows of the
        tables included: at B >= 1,000 one row per hash, and the paper counts the tables whole)."""
        return sum(p.numel() for p in self.parameters())

    def set_signature_table(self, table: torch.Tensor) -> None:
        """Install a ``V x H`` signature table (checked with :func:`validate_signature_table`)."""
        table = validate_signature_table(table, self.num_buckets, self.num_hashes)
        if table.shape[0] != self.vocab_size:
            raise ValueError(
                f"the signature table has {table.shape[0]} rows but the model's vocab_size is {self.vocab_size}; "
                f"pad the registry table with all-zero rows up to vocab_size, or set vocab_size={table.shape[0]}"
            )
        with torch.no_grad():
            self.hash_map.copy_(table.to(self.hash_map.device))

    def hash_table(self, k: int) -> torch.Tensor:
        """``E^(k+1)``: rows ``k*B .. (k+1)*B - 1`` of the shared table (a view, shape ``B x d``)."""
        if not 0 <= k < self.num_hashes:
            raise ValueError(f"hash index k must be in [0, {self.num_hashes}), got {k}")
        return self.table.weight[k * self.num_buckets : (k + 1) * self.num_buckets]

    def signatures(self, input_ids: torch.Tensor) -> torch.Tensor:
        """The signatures of ``input_ids`` (any shape): ``hash_map[input_ids]``, shape ``(*input_ids.shape, H)``."""
        if not isinstance(input_ids, torch.Tensor):
            raise TypeError(f"input_ids must be a torch.Tensor of token ids, got {type(input_ids).__name__}; "
                            f"convert with torch.as_tensor(ids, dtype=torch.long)")
        if input_ids.dtype not in (torch.int64, torch.int32):
            raise TypeError(f"input_ids must be int64 (or int32) token ids, got dtype {input_ids.dtype}; "
                            f"convert with input_ids.long()")
        if input_ids.numel():
            low, high = (int(v) for v in torch.aminmax(input_ids))
            if low < 0 or high >= self.vocab_size:
                raise ValueError(
                    f"token ids must lie in [0, vocab_size={self.vocab_size}), got values in [{low}, {high}]; "
                    f"replace ignore labels (-100) before embedding"
                )
        return self.hash_map[input_ids.long()]

    def compose(self, signatures: torch.Tensor) -> torch.Tensor:
        """Embed signatures of shape ``(..., H)`` (entries in ``[0, B)``) into ``(..., d)``."""
        if not isinstance(signatures, torch.Tensor) or signatures.dtype not in (torch.int64, torch.int32):
            got = signatures.dtype if isinstance(signatures, torch.Tensor) else type(signatures).__name__
            raise TypeError(f"GatedCompositionalEmbedding: signatures must be an int64 tensor of bucket ids, got "
                            f"{got}; take them from signatures(input_ids) or SignatureRegistry.table()")
        if signatures.dim() < 1 or signatures.shape[-1] != self.num_hashes:
            raise ValueError(f"GatedCompositionalEmbedding: signatures must end with a dimension of size "
                             f"H={self.num_hashes}, got shape {tuple(signatures.shape)}")
        if signatures.numel():
            low, high = (int(v) for v in torch.aminmax(signatures))
            if low < 0 or high >= self.num_buckets:
                raise ValueError(f"GatedCompositionalEmbedding: signature buckets must lie in [0, num_buckets="
                                 f"{self.num_buckets}), got values in [{low}, {high}]; build the registry with the "
                                 f"model's num_buckets")
        offsets = torch.arange(self.num_hashes, device=signatures.device) * self.num_buckets
        vectors = self.table(signatures + offsets)                        # (..., H, d): E^(i)[H_i(w)]
        weights = torch.softmax(self.gate(vectors).squeeze(-1), dim=-1)   # (..., H): softmax over alpha_i
        mixed = (weights.unsqueeze(-1) * vectors).sum(dim=-2)             # (..., d)
        return self.adapter(mixed)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        """Token ids of any shape -> embeddings of shape ``(*input_ids.shape, d)``."""
        return self.compose(self.signatures(input_ids))

    def extra_repr(self) -> str:
        return (f"vocab_size={self.vocab_size}, num_hashes={self.num_hashes}, num_buckets={self.num_buckets}, "
                f"hidden_size={self.hidden_size}, gate_bottleneck={self.gate_bottleneck}")
