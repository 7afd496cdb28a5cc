"""Diagnostics of the catalogue's families (:mod:`hashlib_core.embeddings.catalogue`) that need no training.

:func:`collisions`: how many tokens share their whole **input signature** (what decides a token's vector before any
training: its codes, or the id hash of an id-hashing family) with another token, beside the number a uniformly random
hash into the same code space would give (the birthday bound). A token that collides cannot be told apart from its
partner by the embedding, whatever the training.
"""
from __future__ import annotations

import math

import torch

from hashlib_core.embeddings.catalogue import CatalogueEmbedding

__all__ = ["signatures", "code_space", "expected_colliding", "collisions"]

#: families whose signature is an unordered set of rows (mean or sum of rows): the codes are sorted first
_UNORDERED = {"bloom", "t-free"}
#: families whose signatures are distinct by construction (a registry that rehashes, a table, the QR pair, TT-Rec's
#: digits, the low-rank table's rows)
_DISTINCT_BY_CONSTRUCTION = {"full", "quotient-remainder", "gated-signatures", "tt-rec", "low-rank"}


def signatures(emb: CatalogueEmbedding) -> torch.Tensor:
    """``(V, ...)``: each token's input signature, comparable row by row."""
    ids = torch.arange(emb.vocab_size)
    name, module = emb.family, emb.module
    if emb.codes is not None:
        codes = emb.codes
        return torch.sort(codes, dim=-1).values if name in _UNORDERED else codes
    if name == "robe":
        return module.offsets(ids)
    if name == "dhe":
        return module.encode(ids)
    if name == "quotient-remainder":
        return torch.stack([ids // module.modulus, ids % module.modulus], dim=-1)
    if name == "gated-signatures":
        return module.inner.hash_map
    if name == "dynamic-ngram":
        return module.inner.cache
    if name == "tt-rec":
        return module.digits(ids)
    if name == "hashed-nets":
        slot, sign = module.slots(ids)
        return torch.cat([slot, sign], dim=-1)
    return ids.unsqueeze(-1)      # the full table: every id its own row


def code_space(emb: CatalogueEmbedding) -> float:
    """How many distinct signatures the family's hash can give (``math.inf`` past float range)."""
    name, module = emb.family, emb.module

    def power(base: float, exponent: float) -> float:
        return math.inf if exponent * math.log10(max(base, 1)) > 300 else float(base) ** exponent

    if name in ("hashing-trick", "md5-emb", "lsh-emb"):
        return float(module.num_rows)
    if name == "bloom":
        r = module.num_rows
        return r * (r + 1) / 2
    if name == "hash-embedding":
        return power(module.num_buckets, 2) * module.num_weight_rows
    if name == "superbloom":
        return power(module.num_rows // 2, 2)
    if name == "robe":
        return power(module.size, module.embedding_dim // module.chunk)
    if name == "dhe":
        return power(module.buckets, module.num_hashes)
    if name in ("md5-pool", "md5-add", "md5-proj"):
        return power(2, 128)
    if name == "gated-signatures":
        inner = module.inner
        return power(inner.num_buckets - 1, inner.num_hashes)
    if name == "t-free":
        return power(2, module.num_rows)
    if name == "ce-concat":
        return power(module.num_rows, module.num_chunks)
    if name == "hashed-nets":
        return power(2 * module.size, module.embedding_dim)
    return math.inf


def expected_colliding(num_tokens: int, space: float) -> float:
    """Tokens expected to share their signature with another under a uniform hash into ``space`` values:
    ``V (1 - (1 - 1/C)^(V-1))``."""
    if math.isinf(space):
        return 0.0
    return num_tokens * -math.expm1((num_tokens - 1) * math.log1p(-1.0 / space)) if space > 1 else float(num_tokens)


def collisions(emb: CatalogueEmbedding) -> dict[str, float]:
    """``{"tokens": V, "colliding": tokens sharing their signature, "expected": the birthday bound's count (0 for a
    family distinct by construction), "code_space": C}``."""
    sig = signatures(emb).reshape(emb.vocab_size, -1)
    _, inverse, counts = torch.unique(sig, dim=0, return_inverse=True, return_counts=True)
    colliding = int((counts[inverse] > 1).sum())
    space = code_space(emb)
    expected = 0.0 if emb.family in _DISTINCT_BY_CONSTRUCTION else expected_colliding(emb.vocab_size, space)
    return {"tokens": emb.vocab_size, "colliding": colliding, "expected": expected, "code_space": space}
