"""The exact dynamic programme for the BPE encodings of all prefixes (or all suffixes) of one pre-token.

The fallback of :mod:`hashlib_core.hashing.lsh_cuts` for the pre-tokens whose cut encodings do not rejoin the
whole encoding within a few tokens (e.g. runs of one letter: the suffixes of ``'aaaaa'`` pair their ``a`` s
differently). It is the algorithm of github/rust-gems (crates/bpe, "Novel Algorithm"): the last token of the
encoding of every prefix ``u[:x]`` is the one vocabulary token ``t`` ending at ``x`` that BPE encodes as itself and
whose pair with the last token of ``u[:x - len(t)]`` is compatible (there is exactly one, by the uniqueness of
BPE encodings); the encoding of ``u[:x]`` is then the chain ``x -> x - len(t) -> ... -> 0``. Suffixes mirror
this. The chains form a tree, so every token's count is the number of cut positions below it, and its first
appearance the smallest of them: O(len(u) * L) time with L the longest run of vocabulary prefixes/suffixes met.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

__all__ = ["dp_side"]


def dp_side(encoder: Any, u: str, marked: list[bool], prefix: bool, counts: Counter, emitted: list) -> bool:
    """Add the encodings of the prefixes (or suffixes) of ``u`` at the cut positions ``x`` with ``marked[x]``.

    ``encoder`` is a :class:`~hashlib_core.hashing.lsh_cuts.CutEncoder`. Adds every token's count to ``counts``
    and ``(cut, side, position, (token,))`` to ``emitted`` for the cut where it first appears. Returns False if
    some position has no valid last (first) token, which a BPE tokenizer never produces.
    """
    M = len(u)
    heads, tails = encoder.token_pieces()
    pieces = tails if prefix else heads
    singles: dict[str, int | None] = {}
    compat_memo, compatible = encoder._compat_memo, encoder.compatible
    link = [0] * (M + 1)  # prefix: the last token of u[:x]; suffix: the first token of u[x:]
    for x in (range(1, M + 1) if prefix else range(M - 1, -1, -1)):
        room = x if prefix else M - x
        longest = 0  # the longest vocabulary prefix/suffix piece that ends (starts) at x
        while longest < room and (u[x - longest - 1:x] if prefix else u[x:x + longest + 1]) in pieces:
            longest += 1
        for length in range(longest, 0, -1):
            text = u[x - length:x] if prefix else u[x:x + length]
            t = singles.get(text, -1)
            if t == -1:
                t = singles[text] = encoder.single(text)
            if t is None:
                continue
            if length == room:
                break
            key = (link[x - length], t) if prefix else (t, link[x + length])
            ok = compat_memo.get(key)
            if ok or (ok is None and compatible(*key)):
                break
        else:
            return False
        link[x] = t
    size = [int(m) for m in marked]
    low = [x if marked[x] else M + 1 for x in range(M + 1)]
    side = 0 if prefix else 1
    lengths = {t: len(encoder.token_str(t)) for t in set(link[1:] if prefix else link[:M])}
    for x in (range(M, 0, -1) if prefix else range(M)):
        t = link[x]
        parent = x - lengths[t] if prefix else x + lengths[t]
        if size[x]:
            counts[t] += size[x]
            emitted.append((low[x], side, x, (t,)))
        if parent < M:
            size[parent] += size[x]
            low[parent] = min(low[parent], low[x])
    return True
