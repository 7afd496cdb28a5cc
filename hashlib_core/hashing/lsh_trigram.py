"""MultiHashFormer's optional LSH signature coordinates (section 6 "MMH3 vs. LSH", Table 4).

The paper replaces some of the ``H`` MurmurHash3 coordinates of a signature by locality-sensitive ones, so that
tokens with similar spelling share buckets. It does not describe the LSH. This module follows the released code,
``Qwen3Model.initialize_hash_map`` with ``_lsh_binarize`` and ``_get_trigrams`` in HUIYINXUE/MHF
(``hashformer/qwen3/qwen3_hashformer/modeling_qwen3.py``), operation for operation, in float32 as it runs. With
``L = num_lsh`` LSH coordinates:

1. count the token's distinct character trigrams (``collections.Counter``, in order of first appearance; the whole
   token if it has fewer than 3 characters), each hashed to one of ``F = 16,000`` features with
   ``mmh3.hash128(trigram, seed=j) % F`` for coordinate ``j``;
2. draw one Gaussian tensor of shape ``(F, L, 512)`` from a ``torch.Generator`` seeded 3407; coordinate ``j``'s
   binary code is ``z_j = sign(counts @ R[features, j, :]) * 512 ** -0.5`` (a sum of exactly 0 counts as +);
3. concatenate the ``L`` codes into one ``512 L`` vector ``z``; draw a ``(512 L, L, B - 1)`` Gaussian tensor
   (seed 3408), normalised along its **last** axis (``F.normalize(dim=-1)``); coordinate ``j``'s bucket is
   ``argmax(z @ P[:, j, :]) + 1``, in ``[1, B)`` like every signature coordinate (bucket 0 is padding).

So every LSH coordinate sees every coordinate's code, and both random tensors depend on ``L``: the first ``j``
coordinates of an ``L = 3`` hasher are not those of an ``L = 1`` hasher. Each token's code is computed with the
released code's own ``(1, k) @ (k, 512)`` product, so its float32 rounding (which decides the sign of a sum near 0)
is the same; the second stage scores a chunk of tokens in one matrix product, whose rounding can differ from the
released code's one-token products only at an exact near-tie of two buckets (a test checks the rows agree).

:func:`mixed_signature_table` builds a whole ``V x H`` table with the first ``num_lsh`` coordinates from LSH and
the rest from MMH3 (coordinate ``i`` uses seed ``i``, as :class:`~hashlib_core.hashing.MMH3MultiHasher` and the
released code). Similar tokens can get equal LSH coordinates, so uniqueness is enforced on the whole signature:
a token whose signature is taken has its **last** coordinate rehashed with MMH3 seeds ``H-1+r``, ``r = 1, 2, ...``,
as the released code does, with two deliberate differences, both only where signatures would repeat: the
released code remembers one token per prefix (``external_dict[prefix] = {tok: id}`` replaces the earlier ones), so
a third token on a prefix can take a second one's signature, and with ``L = H`` (``4:0``) it leaves repeated
signatures as they are; here every signature is unique (rehashing the last coordinate with MMH3 also when it is an
LSH one).

The empty token is refused (``ValueError``), as :class:`~hashlib_core.hashing.SignatureRegistry` refuses it: a
vocabulary entry that matches no text is almost always a tokenisation bug.
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Sequence

import numpy as np
import torch

from hashlib_core.hashing.base import TokenHasher, check_int, refuse_empty, validate_tokens
from hashlib_core.hashing.multihash import MAX_SEED, _column, _hash128

__all__ = ["TRIGRAM_FEATURES", "PROJECTION_DIM", "char_trigrams", "TrigramLSHHasher", "mixed_signature_table"]

#: Trigram feature space (the released code's ``% 16000``).
TRIGRAM_FEATURES = 16000
#: Width of one coordinate's binary code (the released code's 512).
PROJECTION_DIM = 512
#: ``torch.Generator`` seeds of the two random tensors (the released code's).
PROJECTION_SEED = 3407
HYPERPLANE_SEED = 3408
#: The most bytes the two random tensors may take (L = 4 coordinates at B = 65,536 take about 2 GiB)
MAX_TENSOR_BYTES = 8 * 2**30
#: Tokens scored by one second-stage matrix product (bounds memory at CHUNK x (B - 1) floats).
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
        ``L``, the number of LSH coordinates (``j = 0 .. L-1``; coordinate ``j`` hashes trigrams with seed ``j``).
    num_buckets:
        ``B``; buckets are in ``[1, B)``.
    """

    name = "mhf_trigram_lsh"

    def __init__(self, num_lsh: int, num_buckets: int) -> None:
        self.num_lsh = check_int("num_lsh", num_lsh, minimum=1, maximum=MAX_SEED)
        self.num_buckets = check_int("num_buckets", num_buckets, minimum=2, fix="bucket 0 is reserved for padding")
        size = 4 * num_lsh * PROJECTION_DIM * (TRIGRAM_FEATURES + num_lsh * (num_buckets - 1))
        if size > MAX_TENSOR_BYTES:
            raise ValueError(f"TrigramLSHHasher(num_lsh={num_lsh}, num_buckets={num_buckets}) would draw "
                             f"{size / 2**30:.1f} GiB of random tensors (the released code's shapes: "
                             f"(16000, L, 512) and (512 L, L, B - 1) float32), more than the "
                             f"{MAX_TENSOR_BYTES / 2**30:.0f} GiB allowed; use fewer LSH coordinates or fewer buckets")
        g = torch.Generator().manual_seed(PROJECTION_SEED)
        self._projection = torch.randn((TRIGRAM_FEATURES, num_lsh, PROJECTION_DIM), generator=g)
        g = torch.Generator().manual_seed(HYPERPLANE_SEED)
        planes = torch.randn((PROJECTION_DIM * num_lsh, num_lsh, num_buckets - 1), generator=g)
        self._planes = torch.nn.functional.normalize(planes, dim=-1)
        self._sign = torch.tensor(PROJECTION_DIM ** -0.5, dtype=torch.float32)

    def params(self) -> dict[str, Any]:
        return {"num_lsh": self.num_lsh, "num_buckets": self.num_buckets}

    def codes(self, tokens: Iterable[str], j: int) -> torch.Tensor:
        """The ``(n, 512)`` float32 binary codes ``z_j`` (entries ``+-512 ** -0.5``) of coordinate ``j``."""
        check_int("j", j, minimum=0, maximum=self.num_lsh - 1)
        tokens = refuse_empty(validate_tokens(tokens), type(self).__name__)
        return self._codes(tokens, j)

    def _codes(self, tokens: list[str], j: int) -> torch.Tensor:
        projection = self._projection[:, j, :]
        out = torch.empty((len(tokens), PROJECTION_DIM), dtype=torch.float32)
        for row, token in enumerate(tokens):
            counts = Counter(char_trigrams(token))
            features = [_hash128(g, j) % TRIGRAM_FEATURES for g in counts]
            freq = torch.tensor([list(counts.values())], dtype=torch.float32)
            out[row] = (freq @ projection[features])[0]
        return torch.where(out >= 0, self._sign, -self._sign)

    def hash_batch(self, tokens: Iterable[str]) -> np.ndarray:
        """``(n, num_lsh)`` int64 bucket ids in ``[1, B)`` (scored in chunks of :data:`CHUNK` tokens)."""
        tokens = refuse_empty(validate_tokens(tokens), type(self).__name__)
        out = np.zeros((len(tokens), self.num_lsh), dtype=np.int64)
        for start in range(0, len(tokens), CHUNK):
            part = tokens[start:start + CHUNK]
            z = torch.cat([self._codes(part, j) for j in range(self.num_lsh)], dim=-1)
            for j in range(self.num_lsh):
                out[start:start + len(part), j] = ((z @ self._planes[:, j, :]).argmax(dim=-1) + 1).numpy()
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
    tokens = refuse_empty(validate_tokens(tokens), "mixed_signature_table")
    if len(set(tokens)) != len(tokens):
        raise ValueError("tokens must be distinct (one signature per vocabulary entry)")
    table = np.zeros((len(tokens), num_hashes), dtype=np.int64)
    if num_lsh:
        table[:, :num_lsh] = TrigramLSHHasher(num_lsh, num_buckets).hash_batch(tokens)
    modulus = num_buckets - 1
    for i in range(num_lsh, num_hashes):
        table[:, i] = _column(tokens, i, modulus)
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
