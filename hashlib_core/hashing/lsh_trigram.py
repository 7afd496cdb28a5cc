"""MultiHashFormer's optional LSH signature coordinates (section 6 "MMH3 vs. LSH", Table 4).

The paper replaces some of the ``H`` MurmurHash3 coordinates of a signature by locality-sensitive ones, so that
tokens with similar spelling share buckets. It does not describe the LSH. This module follows the released code as
the implementation notes (A3) document it, for LSH coordinate ``j``:

1. count the token's character trigrams (the whole token if it has fewer than 3 characters), each hashed to one
   of ``F = 16,000`` features with ``mmh3.hash128(trigram, seed=j) % F``;
2. project the count vector to ``P = 512`` dimensions with a Gaussian matrix drawn from a ``torch.Generator``
   seeded 3407, and binarise: ``z_j = sign(x_j R) / sqrt(P)`` (a sign of exactly 0 counts as +1);
3. project ``z_j`` on ``B - 1`` unit-norm Gaussian hyperplanes (``torch.Generator`` seeded 3408) and take
   ``argmax + 1``: the bucket, in ``[1, B)`` like every signature coordinate (bucket 0 is padding).

The notes say the binary codes are "concatenated" before the second projection without saying of what; we read
it as stacking the per-coordinate codes ``z_j`` and projecting each with the same hyperplanes. The trigram hash
seed ``j`` makes the coordinates differ.

:func:`mixed_signature_table` builds a whole ``V x H`` table with the first ``num_lsh`` coordinates from LSH and
the rest from MMH3 (coordinate ``i`` uses seed ``i``, as :class:`~hashlib_core.hashing.MMH3MultiHasher`). Similar
tokens can get equal LSH coordinates, so uniqueness is enforced on the whole signature the way
:class:`~hashlib_core.hashing.SignatureRegistry` does it: a token whose signature is taken has its **last**
coordinate rehashed with MMH3 seeds ``H-1+r``, ``r = 1, 2, ...`` (also when that coordinate is an LSH one, as in
``4:0``; the notes do not say what the released code does then).
"""
from __future__ import annotations

import math
from typing import Any, Iterable, Sequence

import numpy as np
import torch

from hashlib_core.hashing.base import TokenHasher, check_int, validate_tokens
from hashlib_core.hashing.multihash import MAX_SEED, _hash128

__all__ = ["TRIGRAM_FEATURES", "PROJECTION_DIM", "char_trigrams", "TrigramLSHHasher", "mixed_signature_table"]

#: Trigram feature space (notes A3: ``% 16000``).
TRIGRAM_FEATURES = 16000
#: Width of the binary code (notes A3: projection to 512).
PROJECTION_DIM = 512
#: ``torch.Generator`` seeds of the two projections (notes A3).
PROJECTION_SEED = 3407
HYPERPLANE_SEED = 3408
#: Tokens projected at once (bounds memory at CHUNK x (B - 1) doubles).
CHUNK = 1024


def char_trigrams(token: str) -> list[str]:
    """The character trigrams of ``token`` in order (with repeats); the token itself if shorter than 3."""
    if len(token) < 3:
        return [token]
    return [token[i:i + 3] for i in range(len(token) - 2)]


class TrigramLSHHasher(TokenHasher):
    """LSH bucket ids of tokens, one column per LSH coordinate (see the module docstring).

    Parameters
    ----------
    num_lsh:
        Number of LSH coordinates (``j = 0 .. num_lsh-1``; coordinate ``j`` hashes trigrams with seed ``j``).
    num_buckets:
        ``B``; buckets are in ``[1, B)``.
    """

    name = "mhf_trigram_lsh"

    def __init__(self, num_lsh: int, num_buckets: int) -> None:
        self.num_lsh = check_int("num_lsh", num_lsh, minimum=1, maximum=MAX_SEED)
        self.num_buckets = check_int("num_buckets", num_buckets, minimum=2, fix="bucket 0 is reserved for padding")
        g = torch.Generator().manual_seed(PROJECTION_SEED)
        self._projection = torch.randn(TRIGRAM_FEATURES, PROJECTION_DIM, generator=g, dtype=torch.float64)
        g = torch.Generator().manual_seed(HYPERPLANE_SEED)
        planes = torch.randn(PROJECTION_DIM, num_buckets - 1, generator=g, dtype=torch.float64)
        self._planes = planes / planes.norm(dim=0, keepdim=True)

    def params(self) -> dict[str, Any]:
        return {"num_lsh": self.num_lsh, "num_buckets": self.num_buckets}

    def codes(self, tokens: Iterable[str], j: int) -> torch.Tensor:
        """The ``(n, 512)`` binary codes ``z_j`` (entries ``+-1/sqrt(512)``) of coordinate ``j``."""
        check_int("j", j, minimum=0, maximum=self.num_lsh - 1)
        tokens = validate_tokens(tokens)
        features, offsets = [], []
        for token in tokens:
            offsets.append(len(features))
            features.extend(_hash128(g, j) % TRIGRAM_FEATURES for g in char_trigrams(token))
        # x_j R as a sum of the projection rows of the token's trigram features (counts without a dense n x F matrix)
        projected = torch.nn.functional.embedding_bag(
            torch.tensor(features, dtype=torch.long), self._projection,
            torch.tensor(offsets, dtype=torch.long), mode="sum")
        return torch.where(projected >= 0, 1.0, -1.0).to(torch.float64) / math.sqrt(PROJECTION_DIM)

    def hash_batch(self, tokens: Iterable[str]) -> np.ndarray:
        """``(n, num_lsh)`` int64 bucket ids in ``[1, B)`` (scored in chunks of :data:`CHUNK` tokens)."""
        tokens = validate_tokens(tokens)
        out = np.zeros((len(tokens), self.num_lsh), dtype=np.int64)
        for start in range(0, len(tokens), CHUNK):
            part = tokens[start:start + CHUNK]
            for j in range(self.num_lsh):
                out[start:start + len(part), j] = ((self.codes(part, j) @ self._planes).argmax(dim=1) + 1).numpy()
        return out

    def hash(self, token: str) -> tuple[int, ...]:
        return tuple(int(v) for v in self.hash_batch([token])[0])


def mixed_signature_table(tokens: Sequence[str], num_lsh: int, num_hashes: int, num_buckets: int) -> torch.Tensor:
    """A collision-free ``V x H`` signature table: ``num_lsh`` LSH coordinates, then ``H - num_lsh`` MMH3 ones.

    Row ``i`` belongs to ``tokens[i]`` (tokens must be distinct). A signature already taken by an earlier token
    gets its last coordinate rehashed with MMH3 seeds ``H-1+r`` until it is free (module docstring).

    Raises ``ValueError`` when ``num_lsh`` is not in ``[0, H]`` or a token cannot be placed (the last coordinate
    has only ``B - 1`` values per prefix).
    """
    check_int("num_hashes", num_hashes, minimum=1)
    check_int("num_lsh", num_lsh, minimum=0, maximum=num_hashes)
    check_int("num_buckets", num_buckets, minimum=2)
    tokens = validate_tokens(tokens)
    if len(set(tokens)) != len(tokens):
        raise ValueError("tokens must be distinct (one signature per vocabulary entry)")
    table = np.zeros((len(tokens), num_hashes), dtype=np.int64)
    if num_lsh:
        table[:, :num_lsh] = TrigramLSHHasher(num_lsh, num_buckets).hash_batch(tokens)
    modulus = num_buckets - 1
    for i in range(num_lsh, num_hashes):
        table[:, i] = [_hash128(t, i) % modulus + 1 for t in tokens]
    taken: set[tuple[int, ...]] = set()
    last = num_hashes - 1
    for row, token in enumerate(tokens):
        signature = tuple(int(v) for v in table[row])
        r = 0
        while signature in taken:
            r += 1
            if r > 64 * num_buckets:
                raise ValueError(f"token {token!r:.40} found no free signature: too many tokens share its first "
                                 f"{last} coordinates for B={num_buckets}; use more buckets or fewer LSH coordinates")
            signature = signature[:last] + (_hash128(token, last + r) % modulus + 1,)
        taken.add(signature)
        table[row] = signature
    return torch.from_numpy(table)
