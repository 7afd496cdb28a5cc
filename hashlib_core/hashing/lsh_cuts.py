"""The LSH features of a word in time linear in its length: exact BPE encodings of all its prefixes and suffixes.

:func:`hashlib_core.hashing.lsh_features.subword_features` counts the BPE subwords of ``word_variants(w)``, the
string ``w-w[:1]-w[1:]-w[:2]-w[2:]-...``. That string has about ``len(w)**2`` characters, so encoding it costs
quadratic time and memory (a 4,000-character token: 25 s and 3 GiB). :class:`CutEncoder` computes the same counts
without building it, for words whose characters are all letters or digits (``\\p{L}``/``\\p{N}`` of the GPT-2
pre-tokenisation regex) and a tokenizer of the :func:`hashlib_core.bpe.train_bpe` or
:func:`hashlib_core.bpe.roberta_bpe` kind (byte-level pre-tokeniser, optional ``Lowercase`` normaliser, plain BPE model,
added tokens only with a character other than a letter, digit or ``'-'``):

1. *Pre-tokens.* Between a letter or digit and ``'-'`` the GPT-2 regex always splits, so ``word_variants(w)``
   pre-tokenises into ``'-'`` and the pre-tokens of ``w``, ``w[:i]`` and ``w[i:]`` separately; those are the
   letter/digit runs of ``w``, cut at ``i``. Per run ``q`` of ``m`` characters only the encodings of its prefixes and
   suffixes are new, so the counts are ``n * E(w) - sum_q (m - 1) E(q) + sum_q C(q)`` with ``E`` the encoding,
   ``n = len(w)`` and ``C(q)`` the sum over the ``m - 1`` inner cuts of the encodings of both sides.
2. *Prefixes of one pre-token* ``u`` with encoding ``E = e_1 .. e_K``. BPE (merge the lowest-ranked adjacent pair,
   leftmost first) has two properties (github/rust-gems, crates/bpe, "Properties of BPE"): a contiguous piece of a
   valid encoding is the valid encoding of its text, and two valid encodings joined are valid exactly when the
   pair of tokens at the joint is (``encode(x + y) == [x, y]``, memoised as :meth:`CutEncoder.compatible`). So for
   a cut ``j`` inside ``e_k``, ``encode(u[:x]) = e_1 .. e_{k-d} + encode(e_{k-d+1} .. e_{k-1} + e_k[:j])`` for the
   smallest back-off ``d >= 0`` whose joint pair is compatible (or whose window reaches the start of ``u``). Usually
   ``d = 0`` for every cut of ``e_k``: the windows ``encode(e_k[:j])`` are then cached per token and the check is
   one pair look-up per distinct ``(e_{k-1}, e_k)``; the multiplicities of the ``e_1 .. e_{k-d}`` parts are summed
   with numpy. Suffixes are the mirror image. A word costs one BPE pass plus O(1) memoised work per token.
3. If a cut needs a back-off beyond :data:`MAX_CONTEXT` tokens (e.g. the suffixes of ``'aaaa...'``, which pair
   their ``a`` s differently from the word), that side of the pre-token takes the exact dynamic programme of the
   same reference instead (:mod:`.lsh_cuts_dp`), still linear.

The order of the ids is their first occurrence in ``word_variants(w)``, as :class:`collections.Counter` keeps it, so
the weights come out in the same order, bit for bit (order matters: a float sum depends on it).
"""
from __future__ import annotations

from collections import Counter
from itertools import chain
from typing import Any, Sequence

import numpy as np
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

from hashlib_core.hashing.lsh_cuts_dp import dp_side

__all__ = ["MAX_CONTEXT", "CutEncoder", "byte_level"]

#: Most E tokens a prefix/suffix window may span before the dynamic programme takes over.
MAX_CONTEXT = 6
#: Entries kept in each memo before it is emptied (bounds memory over millions of words).
_MEMO_LIMIT = 1 << 18
#: Longest text whose encoding is memoised (windows and token pairs are short; whole words are not kept).
_MEMO_MAX_TEXT = 128


def _gpt2_bytes_to_unicode() -> dict[int, str]:
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    table, extra = {b: chr(b) for b in printable}, 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            extra += 1
    return table


_BYTE_TABLE = str.maketrans({chr(b): c for b, c in _gpt2_bytes_to_unicode().items()})
#: Byte-level characters of UTF-8 continuation bytes: a cut before one would split a character.
_CONTINUATION = frozenset(_gpt2_bytes_to_unicode()[b] for b in range(0x80, 0xC0))
_IS_CONTINUATION = np.zeros(512, dtype=bool)  # byte-level characters are all below 512
_IS_CONTINUATION[[ord(c) for c in _CONTINUATION]] = True
#: Base that packs two token ids into one int64 key.
_PAIR_BASE = 1 << 31
#: Characters verified against the tokenizers regex: 'L' (\p{L}), 'N' (\p{N}) or '' (neither).
_REGEX_CLASS: dict[str, str] = {}


def byte_level(text: str) -> str:
    """``text`` as the byte-level pre-tokeniser writes it (GPT-2's printable stand-in for every UTF-8 byte)."""
    return text if text.isascii() else text.encode("utf-8").decode("latin-1").translate(_BYTE_TABLE)


def _memo_put(memo: dict, key: Any, value: Any) -> Any:
    if len(memo) >= _MEMO_LIMIT:
        memo.clear()
    memo[key] = value
    return value


class _TokenTexts(dict):
    """id -> byte-level token text, filled from the model on first use."""

    def __init__(self, model: Any) -> None:
        super().__init__()
        self._model = model

    def __missing__(self, token_id: int) -> str:
        text = self[token_id] = self._model.id_to_token(token_id)
        return text


class CutEncoder:
    """Exact ``subword_features`` counts of letter/digit words for one tokenizer (see the module docstring).

    ``reason`` is ``None`` when the tokenizer is of the supported kind, else why not (then :meth:`features` always
    returns ``None`` and the caller falls back to the quadratic reference).
    """

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        self.reason = self._unsupported(tokenizer)
        self._model = tokenizer.model
        self._pre = tokenizer.pre_tokenizer
        self._lower = isinstance(tokenizer.normalizer, normalizers.Lowercase)
        self._enc_memo: dict[str, tuple[int, ...]] = {}
        self._compat_memo: dict[tuple[int, int], bool] = {}
        self._info_memo: dict[int, tuple] = {}
        self._pair_memo: dict[int, bool] = {}  # left * _PAIR_BASE + right -> compatible(left, right)
        self._str = _TokenTexts(self._model)
        self._in_vocab: dict[str, bool] = {}
        self._pieces: tuple[frozenset, frozenset] | None = None

    @staticmethod
    def _unsupported(tokenizer: Tokenizer) -> str | None:
        model, pre, norm = tokenizer.model, tokenizer.pre_tokenizer, tokenizer.normalizer
        if not isinstance(model, models.BPE):
            return f"the model is {type(model).__name__}, not BPE"
        if model.dropout or model.continuing_subword_prefix or model.end_of_word_suffix or model.byte_fallback \
                or getattr(model, "ignore_merges", False):
            return "the BPE model uses dropout, subword prefixes/suffixes, byte fallback or ignore_merges"
        if not isinstance(pre, pre_tokenizers.ByteLevel) or pre.add_prefix_space or not pre.use_regex:
            return "the pre-tokenizer is not ByteLevel(add_prefix_space=False, use_regex=True)"
        if norm is not None and not isinstance(norm, normalizers.Lowercase):
            return f"the normalizer is {type(norm).__name__} (only None or Lowercase are handled)"
        if tokenizer.truncation is not None or tokenizer.padding is not None:
            return "the tokenizer truncates or pads"
        if model.token_to_id("-") is None:
            return "'-' is not in the vocabulary"
        for added in tokenizer.get_added_tokens_decoder().values():
            if all(ch.isalnum() or ch == "-" for ch in added.content):
                return f"the added token {added.content!r} could match inside a word"
        return None

    # ------------------------------------------------------------------------------------------------ BPE helpers
    def token_str(self, token_id: int) -> str:
        """The byte-level text of a token id."""
        return self._str[token_id]

    def encode(self, text: str) -> tuple[int, ...]:
        """BPE ids of one byte-level pre-token (the tokenizer's own model; short texts are memoised)."""
        ids = self._enc_memo.get(text)
        if ids is None:
            ids = tuple(t.id for t in self._model.tokenize(text))
            if len(text) <= _MEMO_MAX_TEXT:
                _memo_put(self._enc_memo, text, ids)
        return ids

    def compatible(self, left: int, right: int) -> bool:
        """Whether ``[left, right]`` is the BPE encoding of the two tokens' text."""
        key = (left, right)
        ok = self._compat_memo.get(key)
        if ok is None:
            ok = _memo_put(self._compat_memo, key, self.encode(self.token_str(left) + self.token_str(right)) == key)
        return ok

    # ------------------------------------------------------------------------------------------- the word's runs
    def _runs(self, word: str) -> list[tuple[str, int]] | None:
        """The letter/digit runs of the normalised word as ``(byte-level text, characters)``; None if unsupported."""
        text = self.tokenizer.normalizer.normalize_str(word) if self._lower else word
        if len(text) != len(word) or not text.isalnum():
            return None
        distinct = set(text)
        unknown = [ch for ch in distinct if ch not in _REGEX_CLASS]
        if unknown:
            self._classify(unknown)
        kinds = {_REGEX_CLASS[ch] for ch in distinct}
        if "" in kinds:
            return None
        if len(kinds) == 1:
            runs = [text]
        else:
            classes = [_REGEX_CLASS[ch] for ch in text]
            runs, start = [], 0
            for i in range(1, len(text)):
                if classes[i] != classes[i - 1]:
                    runs.append(text[start:i])
                    start = i
            runs.append(text[start:])
        out = [(byte_level(run), len(run)) for run in runs]
        for piece, _ in out:
            for ch in set(piece):
                known = self._in_vocab.get(ch)
                if known is None:
                    known = self._in_vocab[ch] = self._model.token_to_id(ch) is not None
                if not known:
                    return None  # an unknown byte would become <unk>: left to the reference
        return out

    def _classify(self, chars: Sequence[str]) -> None:
        """Record the regex class of ``chars`` as the tokenizers library sees it (one probe per class)."""
        for cls, pad in (("L", "a"), ("N", "0")):
            group = [ch for ch in chars if (ch.isalpha() if cls == "L" else not ch.isalpha())]
            if not group:
                continue
            if len(self._pre.pre_tokenize_str(pad + "".join(group) + pad)) == 1:
                _REGEX_CLASS.update(dict.fromkeys(group, cls))
                continue
            for ch in group:  # rare: a character the two Unicode databases disagree on
                _REGEX_CLASS[ch] = cls if len(self._pre.pre_tokenize_str(pad + ch + pad)) == 1 else ""

    # -------------------------------------------------------------------------------------------- the features
    def features(self, word: str) -> tuple[np.ndarray, np.ndarray] | None:
        """``(ids, weights)`` equal to the reference, or ``None`` when the word or tokenizer is not supported."""
        if self.reason is not None or len(word) < 2:
            return None
        runs = self._runs(word)
        if runs is None:
            return None
        n = len(word)
        counts: Counter[int] = Counter()
        order: dict[int, None] = {}
        encodings = []
        for piece, chars in runs:
            ids = self.encode(piece)
            if "".join(map(self._str.__getitem__, ids)) != piece:
                return None
            encodings.append(ids)
            order.update(dict.fromkeys(ids))
            for t, c in Counter(ids).items():  # n * E(w) - (m - 1) * E(q), see the module docstring
                counts[t] += c * (n - (chars - 1))
        for (piece, chars), ids in zip(runs, encodings):
            if chars > 1 and not self._add_cuts(piece, ids, counts, order):
                return None
        span = n + 1
        out_ids = list(order)
        weights = [counts[t] / max(span - len(self.token_str(t)), 1) for t in out_ids]
        return np.asarray(out_ids, dtype=np.int64), np.asarray(weights, dtype=np.float64)

    def _add_cuts(self, u: str, E: tuple[int, ...], counts: Counter, order: dict) -> bool:
        """Add ``C(u)``, the encodings of both sides of every inner cut of the pre-token ``u``, to ``counts`` and
        their new ids to ``order`` in order of first occurrence (cut by cut, the prefix's before the suffix's)."""
        K = len(E)
        tokens = np.fromiter(E, dtype=np.int64, count=K)
        uniq, inv = np.unique(tokens, return_inverse=True)
        infos = [self._info(t) for t in uniq.tolist()]
        ncuts = np.array([len(i[0]) for i in infos], dtype=np.int64)[inv]
        lengths = np.array([len(self._str[t]) for t in uniq.tolist()], dtype=np.int64)[inv]
        starts = np.cumsum(lengths) - lengths
        codes = np.frombuffer(u.encode("utf-32-le"), dtype=np.uint32)
        boundary = ~_IS_CONTINUATION[codes[starts]]
        boundary[0] = False  # a cut on the boundary before e_k, k >= 1
        emitted: list[tuple] = []  # (cut, side, rank, ids) that may hold an id seen for the first time
        total = np.zeros(len(uniq), dtype=np.int64)
        for side, prefix in enumerate((True, False)):
            found = self._side(E, tokens, inv, infos, ncuts, boundary, prefix)
            if found is None:
                marked = np.zeros(len(u) + 1, dtype=bool)
                marked[1:len(u)] = ~_IS_CONTINUATION[codes[1:]]
                if not dp_side(self, u, marked.tolist(), prefix, counts, emitted):
                    return False
                continue
            multiplicity, windows, fits, back = found
            np.add.at(total, inv, multiplicity)
            for ids, times in windows.items():
                for t in ids:
                    counts[t] += times
            # an id first shows on this side at the first token of a kind (token, back-off or not) or in a window;
            # going left to right, an id seen before on this side (or already ordered) cannot be first here
            kinds = np.unique(inv * 2 + fits, return_index=True)[1]
            seen = set(order)
            for k in np.union1d(kinds, np.flatnonzero(~fits)).tolist():
                cuts = infos[inv[k]][0]
                if not cuts:
                    continue
                windows_k = infos[inv[k]][1 + side] if fits[k] else [ids for _, ids in back[k]]
                start = int(starts[k])
                for j, ids in zip(cuts, windows_k):
                    new = [t for t in ids if t not in seen]
                    if new:
                        seen.update(new)
                        emitted.append((start + j, side, 0, new))
        for t, m in zip(uniq.tolist(), total.tolist()):
            if m:
                counts[t] += m
        emitted.sort(key=lambda item: item[:3])
        for *_, ids in emitted:
            order.update(dict.fromkeys(ids))
        return True

    def _info(self, token: int) -> tuple:
        """Per token: its cuts, encode(token[:j]) and encode(token[j:]) per cut, and the distinct first ids of the
        former and last ids of the latter."""
        info = self._info_memo.get(token)
        if info is None:
            text = self._str[token]
            cuts = tuple(j for j in range(1, len(text)) if text[j] not in _CONTINUATION)
            heads = tuple(self.encode(text[:j]) for j in cuts)
            tails = tuple(self.encode(text[j:]) for j in cuts)
            info = (cuts, heads, tails, tuple({w[0] for w in heads}), tuple({w[-1] for w in tails}))
            info = _memo_put(self._info_memo, token, info)
        return info

    def _side(self, E: tuple[int, ...], tokens: np.ndarray, inv: np.ndarray, infos: list, ncuts: np.ndarray,
              boundary: np.ndarray, prefix: bool) -> tuple | None:
        """Encodings of one side (prefixes or suffixes) of every cut of a pre-token with encoding ``E``.

        The encoding of the prefix at a cut ``j`` inside ``e_k`` is ``e_1 .. e_{k-d}`` (counted through the
        multiplicity of each E token) plus the window ``encode(e_{k-d+1} .. e_{k-1} + e_k[:j])``, ``d`` the
        smallest back-off whose joint pair is compatible (usually 0: the window is ``encode(e_k[:j])``, cached per
        token); suffixes mirror this. Returns ``(multiplicity of each E token, {window ids: times}, per E token
        whether all its cuts have back-off 0, {k: ((d, window ids) per cut)} for the others)``, or ``None`` when a
        cut needs more than :data:`MAX_CONTEXT` tokens.
        """
        K = len(E)
        fits = np.ones(K, dtype=bool)
        if K > 1:
            # back-off 0 works for all cuts of e_k iff its neighbour is compatible with every first (last) token of
            # encode(e_k[:j]) (encode(e_k[j:])): one pair look-up per distinct (neighbour, joint token)
            joints = [info[3 if prefix else 4] for info in infos]
            counts_u = np.array([len(j) for j in joints], dtype=np.int64)
            flat = np.fromiter(chain.from_iterable(joints), dtype=np.int64, count=int(counts_u.sum()))
            owner_u = inv[1:] if prefix else inv[:-1]  # the token whose cuts are checked, per pair position
            many = counts_u[owner_u]
            position = np.repeat(np.arange(K - 1), many)
            within = np.arange(int(many.sum())) - np.repeat(np.cumsum(many) - many, many)
            joint = flat[np.repeat((np.cumsum(counts_u) - counts_u)[owner_u], many) + within]
            other = tokens[:-1][position] if prefix else tokens[1:][position]
            keys = other * _PAIR_BASE + joint if prefix else joint * _PAIR_BASE + other  # (left, right) of the pair
            distinct, key_inv = np.unique(keys, return_inverse=True)
            memo, compat = self._pair_memo, self.compatible
            ok = np.empty(len(distinct), dtype=bool)
            for i, key in enumerate(distinct.tolist()):
                good = memo.get(key)
                if good is None:
                    good = _memo_put(memo, key, compat(*divmod(key, _PAIR_BASE)))
                ok[i] = good
            fine = np.ones(K - 1, dtype=bool)
            fine[position[~ok[key_inv]]] = False
            if prefix:
                fits[1:] = fine
            else:
                fits[:-1] = fine
        fits |= ncuts == 0
        amount = np.zeros(K + 1, dtype=np.int64)  # prefix: ranges [0, e) by their end e; suffix: [s, K) by start s
        amount[:K] += boundary
        if prefix:
            amount[:K] += ncuts * fits
        else:
            amount[1:] += ncuts * fits
        windows: dict[tuple[int, ...], int] = {}
        times = np.bincount(inv[fits & (ncuts > 0)], minlength=len(infos))
        for i in np.flatnonzero(times).tolist():
            for ids in infos[i][1 if prefix else 2]:
                windows[ids] = windows.get(ids, 0) + int(times[i])
        back: dict[int, list] = {}
        joins: list[int] = []  # where the E part of each backed-off cut ends (prefix) or starts (suffix)
        strs, enc_memo, memo, compat, last = self._str, self._enc_memo, self._compat_memo, self.compatible, K - 1
        for k in np.flatnonzero(~fits).tolist():
            info, text, found = infos[inv[k]], strs[E[k]], []
            for j, ids in zip(info[0], info[1] if prefix else info[2]):
                window, d = (text[:j] if prefix else text[j:]), 0
                while (k - d > 0) if prefix else (k + d < last):  # else the window reaches the edge of u
                    key = (E[k - d - 1], ids[0]) if prefix else (ids[-1], E[k + d + 1])
                    good = memo.get(key)
                    if good or (good is None and compat(*key)):
                        break
                    d += 1
                    if d > MAX_CONTEXT:
                        return None
                    window = strs[E[k - d]] + window if prefix else window + strs[E[k + d]]
                    ids = enc_memo.get(window) or self.encode(window)
                found.append((d, ids))
                joins.append(k - d if prefix else k + 1 + d)
                windows[ids] = windows.get(ids, 0) + 1
            back[k] = found
        np.add.at(amount, joins, 1)
        multiplicity = np.cumsum(amount[::-1])[::-1][1:] if prefix else np.cumsum(amount)[:K]
        return multiplicity, windows, fits, back

    # ------------------------------------------------------------------ helpers of the dynamic programme
    def single(self, text: str) -> int | None:
        """The id of ``text`` if BPE encodes it as that one token, else None."""
        known = self._in_vocab.get(text)
        if known is None:
            known = self._in_vocab[text] = self._model.token_to_id(text) is not None
        if not known:
            return None
        ids = self.encode(text)
        return ids[0] if len(ids) == 1 else None

    def token_pieces(self) -> tuple[frozenset, frozenset]:
        """All prefixes and all suffixes of the vocabulary's tokens (built once, on first use)."""
        if self._pieces is None:
            heads, tails = set(), set()
            for text in self.tokenizer.get_vocab(with_added_tokens=False):
                for i in range(1, len(text) + 1):
                    heads.add(text[:i])
                    tails.add(text[-i:])
            self._pieces = (frozenset(heads), frozenset(tails))
        return self._pieces

