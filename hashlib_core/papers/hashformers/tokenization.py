"""Tokenisation for HashFormers: the released word-level tokenizer and a locally trained byte-level BPE.

HashFormers (Xue & Aletras, EMNLP 2022) hash *words*: §4.2 "we use white space tokenization resulting into a
vocabulary of 11,890,081 unique tokens". The released code (``HUIYINXUE/hashformer``, ``src/utils/free_tokenizer.py``;
implementation notes A1) is more specific, and this module follows it:

* a word is a match of the regular expression ``\\w+|[^\\w\\s]+`` in the **lower-cased** text, so punctuation runs
  are words of their own (``"Hello, world!"`` -> ``hello , world !``);
* special ids ``<s>`` 0, ``<pad>`` 1, ``</s>`` 2, ``<unk>`` 3, ``<mask>`` 4; hashed words get ids from 5 on
  (the Emb variant: ``hash % N + 5``); the compressed variants (Pool/Add/Proj) mark every word with id 5
  (:data:`HASHED_TOKEN_ID`) and carry its T-bit code separately;
* sequences are ``<s> A </s>`` and pairs ``<s> A </s></s> B </s>``; a pair that does not fit keeps the shorter
  sentence whole when it is shorter than ``max_length // 2 - 2`` words, and otherwise cuts both to that length
  (:func:`build_word_sequence`).

The BERT-MLM / BERT-S+R baselines (§4.1) and the LSH features (§3.3, :mod:`hashlib_core.hashing.lsh`) use a BPE
vocabulary; the released code loads ``roberta-base``'s 50K byte-level BPE. This book trains one locally with
:func:`hashlib_core.bpe.train_bpe` (same algorithm and special tokens, smaller corpus), so no hub download is needed.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Literal, Sequence

import torch
from hashlib_core.bpe import (
    BOS_ID, EOS_ID, MASK_ID, NUM_SPECIAL_TOKENS, PAD_ID, SPECIAL_TOKENS, UNK_ID, bpe_to_hf_tokenizer, train_bpe,
)

__all__ = [
    "SPECIAL_TOKENS",
    "BOS_ID",
    "PAD_ID",
    "EOS_ID",
    "UNK_ID",
    "MASK_ID",
    "NUM_SPECIAL_TOKENS",
    "HASHED_TOKEN_ID",
    "WORD_PATTERN",
    "word_tokenize",
    "build_word_sequence",
    "HashFormerTokenizer",
    "SubwordHashFormerTokenizer",
    "bpe_units",
    "train_bpe",
    "bpe_to_hf_tokenizer",
]

# Special ids 0-4 are shared with the local BPE tokenizers; the Emb variant's hashed ids start at NUM_SPECIAL_TOKENS
# (``hash % N + 5``).
#: The id that marks "a hashed word" in the compressed variants (row 5 of their ``nn.Embedding(6, d)``).
HASHED_TOKEN_ID = 5

#: Word pattern of the released tokenizers, applied to lower-cased text.
WORD_PATTERN = re.compile(r"\w+|[^\w\s]+")

TextInput = str | tuple[str, str]


def word_tokenize(text: str) -> list[str]:
    """Lower-case ``text`` and split it into words with :data:`WORD_PATTERN` (released ``tokenize``)."""
    if not isinstance(text, str):
        raise TypeError(f"word_tokenize expects a str, got {type(text).__name__}")
    return WORD_PATTERN.findall(text.lower())


def build_word_sequence(
    words_a: Sequence[str], words_b: Sequence[str] | None = None, max_length: int = 512
) -> list[str]:
    """Add ``<s>``/``</s>`` around one or two word lists and truncate to ``max_length`` as the released code.

    Single sequence: ``<s> A[:max_length-2] </s>``. Pair: ``<s> A </s> </s> B </s>``; when ``len(A) + len(B) >
    max_length - 4``, a sentence shorter than ``max_length // 2 - 2`` words is kept whole and the other one is cut to
    fill the rest, otherwise both are cut to ``max_length // 2 - 2`` words. Padding is not added here.
    """
    if isinstance(max_length, bool) or not isinstance(max_length, int):
        raise TypeError(f"max_length must be an int, got {type(max_length).__name__}")
    minimum = 2 if words_b is None else 4
    if max_length < minimum:
        raise ValueError(f"max_length must be >= {minimum} to hold the special tokens, got {max_length}")
    a = list(words_a)
    if words_b is None:
        return ["<s>", *a[: max_length - 2], "</s>"]
    b = list(words_b)
    budget = max_length - 4
    if len(a) + len(b) > budget:
        half = max_length // 2 - 2
        if min(len(a), len(b)) >= half:
            a, b = a[:half], b[:half]
        elif len(a) <= len(b):
            b = b[: budget - len(a)]
        else:
            a = a[: budget - len(b)]
    return ["<s>", *a, "</s>", "</s>", *b, "</s>"]


class HashFormerTokenizer:
    """Turn texts (or text pairs) into HashFormer inputs using a token hasher.

    Parameters
    ----------
    hasher:
        For ``mode="index"`` an object with ``batch_index(words) -> LongTensor (n,)`` whose ids start at
        :data:`NUM_SPECIAL_TOKENS` (e.g. ``KeyedMD5Hasher()`` or ``LSHBucketHasher``); for ``mode="bits"`` an object
        with ``batch_bits(words) -> uint8 tensor (n, T)`` (``KeyedMD5Hasher`` gives T=128, ``LSHBitHasher`` any T).
    mode:
        ``"index"`` for the Emb variants, ``"bits"`` for Pool/Add/Proj (and ProFormer).
    max_length:
        Longest sequence in words including special tokens (released fine-tuning: 128; pre-training: 512).
    padding:
        ``"longest"`` pads to the longest sequence of the batch, ``"max_length"`` to ``max_length`` (released).

    Calling the tokenizer returns a dict of tensors: ``input_ids`` ``(B, L)`` long, ``attention_mask`` ``(B, L)``
    long and, in ``"bits"`` mode, ``hash_bits`` ``(B, L, T)`` uint8 (all-zero rows at special and padding positions;
    ``input_ids`` is then :data:`HASHED_TOKEN_ID` at every word).
    """

    def __init__(
        self,
        hasher: Any,
        mode: Literal["index", "bits"] = "index",
        max_length: int = 512,
        padding: Literal["longest", "max_length"] = "longest",
    ) -> None:
        if mode not in ("index", "bits"):
            raise ValueError(f"mode must be 'index' (Emb variants) or 'bits' (Pool/Add/Proj), got {mode!r}")
        needed = "batch_index" if mode == "index" else "batch_bits"
        if not callable(getattr(hasher, needed, None)):
            example = "KeyedMD5Hasher(num_buckets=N) or LSHBucketHasher(bpe)" if mode == "index" else \
                "KeyedMD5Hasher() or LSHBitHasher(bpe)"
            raise TypeError(f"hasher must have a {needed}(words) method for mode={mode!r}, got "
                            f"{type(hasher).__name__} {hasher!r:.40}; pass e.g. {example}")
        offset = getattr(hasher, "offset", None)
        if mode == "index" and offset is not None and offset < NUM_SPECIAL_TOKENS:
            raise ValueError(
                f"the hasher's offset {offset} would let hashed ids collide with the special ids 0..4; "
                f"build it with offset={NUM_SPECIAL_TOKENS}"
            )
        if padding not in ("longest", "max_length"):
            raise ValueError(f"padding must be 'longest' or 'max_length', got {padding!r}")
        build_word_sequence([], None, max_length)  # validates max_length
        #: T, the code length in bits mode (read from one hashed probe word), else None.
        self.num_bits = int(hasher.batch_bits(["a"]).shape[1]) if mode == "bits" else None
        self.hasher = hasher
        self.mode = mode
        self.max_length = max_length
        self.padding = padding

    def _sequence(self, item: TextInput) -> list[str]:
        if isinstance(item, str):
            return build_word_sequence(word_tokenize(item), None, self.max_length)
        if isinstance(item, tuple) and len(item) == 2 and all(isinstance(t, str) for t in item):
            return build_word_sequence(word_tokenize(item[0]), word_tokenize(item[1]), self.max_length)
        raise TypeError(f"each text must be a str or a (str, str) pair, got {type(item).__name__} {item!r:.80}; "
                        f"convert it with str() or drop it")

    def __call__(self, texts: TextInput | Sequence[TextInput]) -> dict[str, torch.Tensor]:
        if isinstance(texts, (str, tuple)):
            batch = [texts]
        elif isinstance(texts, Iterable) and not isinstance(texts, (bytes, bytearray)):
            batch = list(texts)  # a list, a generator, a numpy array or a datasets column
        else:
            raise TypeError(f"texts must be a str, a (str, str) pair or a list of them, got "
                            f"{type(texts).__name__} {texts!r:.40}; e.g. "
                            f"tokenizer(['a sentence', ('first', 'second')])")
        if not batch:
            raise ValueError("texts is an empty list: cannot tokenize an empty batch; pass at least one text")
        sequences = [self._sequence(item) for item in batch]
        length = self.max_length if self.padding == "max_length" else max(len(s) for s in sequences)
        # A word never equals a special-token string: WORD_PATTERN splits "<s>" into "<", "s", ">".
        words = sorted({w for s in sequences for w in s if w not in SPECIAL_TOKENS})
        input_ids = torch.full((len(batch), length), PAD_ID, dtype=torch.long)
        attention_mask = torch.zeros((len(batch), length), dtype=torch.long)
        if self.mode == "index":
            values = self.hasher.batch_index(words).tolist() if words else []
            if values and min(values) < NUM_SPECIAL_TOKENS:
                raise ValueError(
                    f"the hasher returned id {min(values)} < {NUM_SPECIAL_TOKENS}, which is a special id; "
                    f"hashed ids must start at {NUM_SPECIAL_TOKENS} (use offset={NUM_SPECIAL_TOKENS})"
                )
            word_ids = dict(zip(words, values))
        else:
            word_ids = dict.fromkeys(words, HASHED_TOKEN_ID)
            codes = self.hasher.batch_bits(words) if words else torch.zeros((0, self.num_bits), dtype=torch.uint8)
            row_of = {w: i for i, w in enumerate(words)}
            hash_bits = torch.zeros((len(batch), length, self.num_bits), dtype=torch.uint8)
        for b, seq in enumerate(sequences):
            attention_mask[b, : len(seq)] = 1
            ids = [SPECIAL_TOKENS[t] if t in SPECIAL_TOKENS else word_ids[t] for t in seq]
            input_ids[b, : len(seq)] = torch.tensor(ids)
            if self.mode == "bits":
                positions = [pos for pos, t in enumerate(seq) if t not in SPECIAL_TOKENS]
                if positions:
                    hash_bits[b, positions] = codes[[row_of[seq[pos]] for pos in positions]].to(torch.uint8)
        out = {"input_ids": input_ids, "attention_mask": attention_mask}
        if self.mode == "bits":
            out["hash_bits"] = hash_bits
        return out


def bpe_units(bpe: Any, text: str) -> list[str]:
    """BPE subwords of ``text`` as strings (surrounding white space removed): Table 6's hashed units."""
    encoding = bpe.encode(text, add_special_tokens=False)
    units = [text[start:end].strip().lower() for start, end in encoding.offsets]
    return [u for u in units if u]


class SubwordHashFormerTokenizer(HashFormerTokenizer):
    """:class:`HashFormerTokenizer` whose units are BPE subwords instead of words (Table 6, Appendix C)."""

    def __init__(self, hasher: Any, bpe: Any, **kwargs: Any) -> None:
        super().__init__(hasher, **kwargs)
        self.bpe = bpe

    def _sequence(self, item: Any) -> list[str]:
        if isinstance(item, str):
            return build_word_sequence(bpe_units(self.bpe, item), None, self.max_length)
        if isinstance(item, tuple) and len(item) == 2 and all(isinstance(t, str) for t in item):
            return build_word_sequence(bpe_units(self.bpe, item[0]), bpe_units(self.bpe, item[1]), self.max_length)
        raise TypeError(f"each text must be a str or a (str, str) pair, got {type(item).__name__} {item!r:.80}; "
                        f"convert it with str() or drop it")
