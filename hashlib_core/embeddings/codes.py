"""The codes the catalogue's string-hashing families give each token (:mod:`hashlib_core.embeddings.catalogue`):
MurmurHash3 rows, T-FREE's trigram rows, and the quotient-remainder modulus."""
from __future__ import annotations

import hashlib
import math
from typing import Sequence

import mmh3
import numpy as np
import torch

from hashlib_core.hashing.base import validate_token, validate_tokens

__all__ = ["mmh3_codes", "tfree_rows", "tfree_word_rows", "qr_modulus", "strip_marker", "padded"]


def mmh3_codes(strings: Sequence[str], num_hashes: int, modulus: int, seed: int = 0) -> torch.Tensor:
    """``(V, k)`` int64: column ``j`` is ``mmh3.hash(s, seed + j, signed=False) % modulus`` (MurmurHash3 x86 32-bit
    of the UTF-8 bytes). The strings follow the hashers' token contract (:func:`~hashlib_core.hashing.base.
    validate_tokens`): a lone surrogate is refused here, before it reaches mmh3 (which crashes on one)."""
    strings = validate_tokens(strings)
    out = np.empty((len(strings), num_hashes), dtype=np.int64)
    for j in range(num_hashes):
        out[:, j] = [mmh3.hash(s, seed + j, signed=False) % modulus for s in strings]
    return torch.from_numpy(out)


def strip_marker(piece: str) -> str:
    """A WordPiece continuation piece without its ``##`` marker (the families that hash characters read it so)."""
    return piece[2:] if piece.startswith("##") and len(piece) > 2 else piece


#: the bytes of the trigrams whose case variants share rows in the released code: ASCII letters and the space
_TFREE_SHARING = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ ")


def _tfree_hashed_rows(trigram: bytes, num_rows: int, population: int) -> list[int]:
    """The ``population`` distinct rows a trigram id hashes to, sorted (``initialize_hash_weight``)."""
    t = trigram[0] + 256 * trigram[1] + 65536 * trigram[2]
    rows: set[int] = set()
    for k in range(population):
        j = 0
        while True:
            row = int.from_bytes(hashlib.md5(f"{t}_{k}_{j}".encode(), usedforsecurity=False).digest(), "big") % num_rows
            j += 1
            if row not in rows:
                rows.add(row)
                break
    return sorted(rows)


def tfree_rows(trigram: bytes, num_rows: int, population: int = 10, shared: int = 0) -> list[int]:
    """T-FREE's active rows of one byte trigram, as Aleph-Alpha/trigrams ``trigram_tokenizer.py`` lays them out: for
    ``k = 0 .. population-1`` the first ``md5(f"{t}_{k}_{j}") % num_rows`` (``j = 0, 1, ...``) not already taken
    by this trigram, with ``t = b0 + 256 b1 + 65536 b2``, **sorted** (the md5 digest read as a big-endian integer).

    ``shared`` (``vocab_population_partial_lowercase``; the 7B config: 2 of 10) is the released rule exactly: for a
    trigram made only of ASCII letters and spaces that is not already lower case, its **last** ``shared`` sorted
    rows are replaced by the last ``shared`` rows of its lower-cased trigram; every other trigram (digits,
    punctuation, other bytes) keeps its own rows. The result may repeat a row (a replaced one equal to a kept one),
    as the released table does; a word's rows are a set (:func:`tfree_word_rows`)."""
    if len(trigram) != 3:
        raise ValueError(f"tfree_rows takes 3 bytes, got {trigram!r}")
    if population > num_rows:
        raise ValueError(f"T-FREE needs population <= rows ({population} > {num_rows})")
    if not 0 <= shared <= population:
        raise ValueError(f"T-FREE shares 0 to population ({population}) rows with lower case, got {shared}")
    rows = _tfree_hashed_rows(trigram, num_rows, population)
    lower = trigram.lower()
    if shared and lower != trigram and all(b in _TFREE_SHARING for b in trigram):
        rows[-shared:] = _tfree_hashed_rows(lower, num_rows, population)[-shared:]
    return rows


def tfree_word_rows(word: str, num_rows: int, population: int = 10, shared: int = 0) -> list[int]:
    """The sorted active rows of a word: the union over the byte trigrams of ``" word "`` (UTF-8) of
    :func:`tfree_rows` (a multi-hot vector: a row two trigrams share is active once)."""
    data = f" {validate_token(word)} ".encode("utf-8")
    active: set[int] = set()
    for start in range(len(data) - 2):
        active.update(tfree_rows(data[start:start + 3], num_rows, population, shared))
    return sorted(active)


def padded(rows: list[list[int]]) -> torch.Tensor:
    width = max(1, max(len(r) for r in rows))
    out = np.full((len(rows), width), -1, dtype=np.int32)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return torch.from_numpy(out)


def qr_modulus(num_ids: int, rows: int) -> int:
    """The largest modulus ``M`` with ``ceil(V / M) + M <= rows``; ``ValueError`` when none exists
    (``rows < 2 sqrt(V)`` roughly)."""
    best = 0
    for m in range(1, rows):
        if m + -(-num_ids // m) <= rows:
            best = m
    if not best:
        raise ValueError(f"quotient-remainder: {rows} rows cannot hold {num_ids} ids (need about "
                         f"{2 * math.ceil(math.sqrt(num_ids))}); raise the budget")
    return best
