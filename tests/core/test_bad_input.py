"""Bad input to the public API: every case gets a defined result or a clear error, never a crash deep inside torch.

One table of ``(case id, call, expected)`` rows. ``expected`` is either :func:`raises` (the exception type and
message fragments that name the argument, the offending value and the fix) or :func:`gives` (a predicate on the
defined result). The rows cover the hashers' token contract (lone surrogates, NUL, empty and 10,000-character
tokens, wrong types, empty batches), the embedding modules (out-of-range ids, non-binary or NaN bits), the
HashFormer and MultiHashFormer models and ``generate`` (empty batches, zero-length or 1-D inputs, wrong dtypes) and
the constructors (``None`` and wrong types). Long tokens must return a result; how fast is measured by
``python -m hashlib_core.benchmarks.lsh``, not here.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import Any, Callable

import numpy as np
import pytest
import torch
from tokenizers import Tokenizer, models, pre_tokenizers

from hashlib_core.bpe import train_bpe
from hashlib_core.embeddings.hashed import (
    AdditiveEmbedding,
    HashBucketEmbedding,
    LinearBitProjection,
    PearsonProjection,
    PoolEmbedding,
    bits_to_codewords,
)
from hashlib_core.embeddings.multihash import GatedCompositionalEmbedding
from hashlib_core.hashing import (
    KeyedMD5Hasher,
    LSHBitHasher,
    LSHBucketHasher,
    MMH3MultiHasher,
    SignatureRegistry,
    TrigramLSHHasher,
)
from hashlib_core.hashing.lsh import PermutationLSH, SignLSH
from hashlib_core.hashing.lsh_trigram import mixed_signature_table
from hashlib_core.hashing.lsh_features import MAX_REFERENCE_LENGTH, subword_features
from hashlib_core.papers.hashformers.configuration import HashFormerConfig
from hashlib_core.papers.hashformers.modeling import HashFormerForSequenceClassification
from hashlib_core.papers.hashformers.tokenization import HashFormerTokenizer, word_tokenize
from hashlib_core.papers.multihashformer.decoding import generate
from hashlib_core.papers.multihashformer.modeling import MultiHashFormerConfig, MultiHashFormerForCausalLM


@dataclass(frozen=True)
class Raises:
    exc: type[BaseException]
    fragments: tuple[str, ...]


@dataclass(frozen=True)
class Gives:
    what: str
    check: Callable[[Any], bool]


def raises(exc: type[BaseException], *fragments: str) -> Raises:
    return Raises(exc, fragments)


def gives(what: str, check: Callable[[Any], bool]) -> Gives:
    return Gives(what, check)


# ------------------------------------------------------------------------------ shared objects, built on first use
@cache
def bpe() -> Tokenizer:
    words = "the quick brown fox jumps over a lazy dog while seven wizards hex bold jackdaws playing".split()
    rng = np.random.default_rng(0)
    return train_bpe([" ".join(rng.choice(words, 12)) for _ in range(300)], 320, min_frequency=1, lowercase=True)


@cache
def hand_bpe() -> Tokenizer:  # the hand-built vocabulary of tests/hashformers/test_lsh.py
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3, "<mask>": 4, "-": 5, "a": 6, "l": 7, "p": 8, "y": 9,
             "s": 10, "pl": 11, "ay": 12, "lay": 13, "play": 14}
    tokenizer = Tokenizer(models.BPE(vocab, [("p", "l"), ("a", "y"), ("l", "ay"), ("pl", "ay")], unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    return tokenizer


@cache
def md5() -> KeyedMD5Hasher:
    return KeyedMD5Hasher(num_buckets=1000)


@cache
def mmh3() -> MMH3MultiHasher:
    return MMH3MultiHasher(3, 100)


@cache
def trigram() -> TrigramLSHHasher:
    return TrigramLSHHasher(2, 50)


@cache
def lsh_bucket() -> LSHBucketHasher:
    return LSHBucketHasher(bpe(), num_buckets=1000)


@cache
def lsh_bits() -> LSHBitHasher:
    return LSHBitHasher(bpe())


@cache
def hand_lsh_bucket() -> LSHBucketHasher:
    return LSHBucketHasher(hand_bpe(), num_buckets=1000)


def register(token: str) -> tuple[int, ...]:
    registry = SignatureRegistry(3, 100)
    registry.register(["x", token])
    return registry.signature(token)


TINY_HF = dict(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32, num_labels=2)


@cache
def hashformer(embedding_type: str) -> HashFormerForSequenceClassification:
    extra = {"num_buckets": 100} if embedding_type == "emb" else {}
    torch.manual_seed(0)
    return HashFormerForSequenceClassification(HashFormerConfig(embedding_type=embedding_type, **TINY_HF,
                                                                **extra)).eval()


@cache
def mhf() -> MultiHashFormerForCausalLM:
    config = MultiHashFormerConfig(vocab_size=64, num_hashes=3, num_buckets=17, gate_bottleneck=8,
                                   mixer_bottleneck=8, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                   num_attention_heads=4, num_key_value_heads=2)
    torch.manual_seed(0)
    model = MultiHashFormerForCausalLM(config).eval()
    registry = SignatureRegistry(3, 17)
    registry.register([f"tok{i}" for i in range(60)])
    table = torch.zeros(64, 3, dtype=torch.long)
    table[:60] = registry.table()
    model.set_signature_table(table)
    return model


@cache
def md5_tokenizer() -> HashFormerTokenizer:
    return HashFormerTokenizer(KeyedMD5Hasher(num_buckets=100), max_length=32)


def ids(*shape: int, value: int = 7, dtype: torch.dtype = torch.long) -> torch.Tensor:
    return torch.full(shape, value, dtype=dtype)


def bits(value: float, *shape: int) -> torch.Tensor:
    return torch.full(shape or (2, 12), value)


def pool_inputs(bad_bits: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
    input_ids = torch.tensor([[0, 5, 5, 2], [0, 5, 2, 1]])
    hash_bits = torch.zeros(2, 4, 128, dtype=torch.uint8) if bad_bits is None else bad_bits
    return {"input_ids": input_ids, "hash_bits": hash_bits}


LETTERS = "".join(np.random.default_rng(1).choice(list("abcdefghijklmnopqrstuvwxyz"), 10_000).tolist())


# ------------------------------------------------------------------------------------------------ the hashers
def differs(a: Any, b: Any) -> bool:
    if isinstance(a, tuple) and a and isinstance(a[0], np.ndarray):  # (ids, weights) features
        return any(differs(x, y) for x, y in zip(a, b))
    a, b = np.asarray(a), np.asarray(b)
    return a.shape != b.shape or not np.array_equal(a, b)


def is_index(low: int, high: int) -> Callable[[Any], bool]:
    return lambda r: isinstance(r, int) and low <= r < high


def is_code(length: int) -> Callable[[Any], bool]:
    return lambda r: (isinstance(r, torch.Tensor) and r.dtype == torch.uint8 and tuple(r.shape) == (length,)
                      and bool(((r == 0) | (r == 1)).all()))


def is_signature(length: int, buckets: int) -> Callable[[Any], bool]:
    return lambda r: isinstance(r, tuple) and len(r) == length and all(1 <= int(v) < buckets for v in r)


#: name -> (one token -> result, many tokens -> result, check of one result, check of an empty batch's result)
HASHERS: dict[str, tuple[Callable, Callable, Callable, Callable]] = {
    "md5.index": (lambda t: md5().index(t), lambda ts: md5().batch_index(ts), is_index(5, 1005),
                  lambda r: tuple(r.shape) == (0,) and r.dtype == torch.long),
    "md5.bits": (lambda t: md5().bits(t), lambda ts: md5().batch_bits(ts), is_code(128),
                 lambda r: tuple(r.shape) == (0, 128)),
    "mmh3.signature": (lambda t: mmh3().hash(t), lambda ts: mmh3().batch(ts), is_signature(3, 100),
                       lambda r: tuple(r.shape) == (0, 3)),
    "registry": (register, lambda ts: SignatureRegistry(3, 100).register(ts), is_signature(3, 100),
                 lambda r: tuple(np.shape(r)) == (0,)),
    "lsh.bucket": (lambda t: lsh_bucket().index(t), lambda ts: lsh_bucket().batch_index(ts), is_index(5, 1005),
                   lambda r: tuple(r.shape) == (0,) and r.dtype == torch.long),
    "lsh.bits": (lambda t: lsh_bits().bits(t), lambda ts: lsh_bits().batch_bits(ts), is_code(128),
                 lambda r: tuple(r.shape) == (0, 128)),
    "trigram_lsh": (lambda t: trigram().hash(t), lambda ts: trigram().hash_batch(ts), is_signature(2, 50),
                    lambda r: tuple(r.shape) == (0, 2)),
    "mixed_table": (lambda t: tuple(mixed_signature_table(["x", t], 1, 2, 50)[1].tolist()),
                    lambda ts: mixed_signature_table(ts, 1, 2, 50), is_signature(2, 50),
                    lambda r: tuple(r.shape) == (0, 2)),
}
#: the signature builders, which refuse the empty token (hashlib_core.hashing.base.refuse_empty)
SIGNATURE_BUILDERS = ("registry", "trigram_lsh", "mixed_table")
LSH_HASHERS = ("lsh.bucket", "lsh.bits")


def hasher_cases() -> list[tuple[str, Callable[[], Any], Raises | Gives]]:
    rows = []
    for name, (one, many, ok, empty_ok) in HASHERS.items():
        def row(case: str, call: Callable[[], Any], expected: Raises | Gives) -> None:
            rows.append((f"{name}/{case}", call, expected))

        row("lone surrogate", lambda one=one: one("ab\ud800c"),
            raises(ValueError, "lone surrogate", "'\\ud800'", "errors='replace'"))
        row("NUL inside", lambda one=one: one("a\x00b"), gives("a valid result", ok))
        if name in LSH_HASHERS:  # similar words may share an LSH code, so compare the features
            row("NUL is not stripped",
                lambda: differs(subword_features("ab\x00", bpe()), subword_features("ab", bpe())),
                gives("other features than without the NUL", lambda r: r is True))
        else:
            row("NUL is not stripped",
                lambda one=one: differs(one("ab\x00"), one("ab")) or differs(one("a\x00"), one("a")),
                gives("a different hash than without the NUL", lambda r: r is True))
        row("emoji and combining marks", lambda one=one: one("e\u0301\U0001F600"), gives("a valid result", ok))
        long_token = LETTERS if name in LSH_HASHERS else "x" * 10_000
        row("10,000 characters", lambda one=one, t=long_token: one(t), gives("a valid result", ok))
        row("None", lambda one=one: one(None), raises(TypeError, "token must be a str", "NoneType", "str(token)"))
        row("bytes", lambda one=one: one(b"abc"), raises(TypeError, "token must be a str", "decode"))
        row("int", lambda one=one: one(5), raises(TypeError, "token must be a str", "int 5"))
        if name in LSH_HASHERS:
            row("empty string", lambda one=one: one(""), raises(ValueError, "token '' is empty", "skip empty tokens"))
            row("10,000 punctuation", lambda one=one: one("=" * 10_000),
                raises(ValueError, "10000 characters", f"MAX_REFERENCE_LENGTH = {MAX_REFERENCE_LENGTH}",
                       f"token[:{MAX_REFERENCE_LENGTH}]"))
        elif name in SIGNATURE_BUILDERS:
            position = 0 if name == "trigram_lsh" else 1
            row("empty string", lambda one=one: one(""),
                raises(ValueError, f"token at position {position} is the empty string", "[t for t in tokens if t]"))
        else:
            row("empty string", lambda one=one: one(""), gives("a valid result", ok))
        row("empty batch", lambda many=many: many([]), gives("an empty result", empty_ok))
        row("batch given as one str", lambda many=many: many("abc"),
            raises(TypeError, "single str", "'abc'", "wrap it in a list"))
        row("batch None", lambda many=many: many(None), raises(TypeError, "iterable", "NoneType"))
        row("batch with an int", lambda many=many: many(["a", 3]),
            raises(TypeError, "position 1", "token must be a str", "int 3"))
        row("batch with a surrogate", lambda many=many: many(["a", "b\udfff"]),
            raises(ValueError, "position 1", "lone surrogate", "errors='replace'"))
    return rows


HASHER_CONSTRUCTORS = [
    ("KeyedMD5Hasher(num_buckets=None)", lambda: KeyedMD5Hasher(num_buckets=None),
     raises(TypeError, "num_buckets must be an int", "None")),
    ("KeyedMD5Hasher(num_buckets=0)", lambda: KeyedMD5Hasher(num_buckets=0),
     raises(ValueError, "num_buckets must be >= 1", "0")),
    ("KeyedMD5Hasher(key=5)", lambda: KeyedMD5Hasher(key=5), raises(TypeError, "key must be bytes or None", "int")),
    ("MMH3MultiHasher(None, 100)", lambda: MMH3MultiHasher(None, 100),
     raises(TypeError, "num_hashes must be an int", "None")),
    ("MMH3MultiHasher(3, 1)", lambda: MMH3MultiHasher(3, 1),
     raises(ValueError, "num_buckets", "got 1", "bucket 0 is reserved")),
    ("SignatureRegistry(None, 100)", lambda: SignatureRegistry(None, 100),
     raises(TypeError, "num_hashes must be an int", "None")),
    ("TrigramLSHHasher(None, 50)", lambda: TrigramLSHHasher(None, 50), raises(TypeError, "num_lsh must be an int")),
    ("LSHBucketHasher(None)", lambda: LSHBucketHasher(None),
     raises(TypeError, "tokenizer must be a tokenizers.Tokenizer", "NoneType", "train_bpe")),
    ("LSHBitHasher('roberta-base')", lambda: LSHBitHasher("roberta-base"),
     raises(TypeError, "tokenizer must be a tokenizers.Tokenizer", "str", "train_bpe")),
    ("LSHBucketHasher(num_buckets=0)", lambda: LSHBucketHasher(bpe(), num_buckets=0),
     raises(ValueError, "num_buckets must be >= 1", "0")),
    ("LSHBitHasher(num_bits=None)", lambda: LSHBitHasher(bpe(), num_bits=None),
     raises(TypeError, "num_bits must be an int", "None")),
    ("PermutationLSH(feature_dim=0)", lambda: PermutationLSH(10, 0), raises(ValueError, "feature_dim must be >= 1")),
    ("SignLSH(seed=-1)", lambda: SignLSH(16, seed=-1), raises(ValueError, "seed must be >= 0", "-1")),
    ("subword_features(None, bpe)", lambda: subword_features(None, bpe()),
     raises(TypeError, "token must be a str", "NoneType")),
    ("subword_features('play', None)", lambda: subword_features("play", None),
     raises(TypeError, "tokenizer must be a tokenizers.Tokenizer", "train_bpe")),
    ("hand-built BPE, 10,000 letters", lambda: hand_lsh_bucket().index("plays" * 2000),
     gives("a bucket in [5, 1005)", is_index(5, 1005))),
    ("hand-built BPE, unknown letters", lambda: hand_lsh_bucket().index("qwerty"),
     gives("a bucket in [5, 1005)", is_index(5, 1005))),
]


# ------------------------------------------------------------------------------------------- embedding modules
def embedding_cases() -> list[tuple[str, Callable[[], Any], Raises | Gives]]:
    bucket = HashBucketEmbedding(10, 4)  # rows: 5 special + 10 buckets = 15
    rows = [
        (f"HashBucketEmbedding/id {v}", lambda v=v: bucket(torch.tensor([[3, v]])),
         raises(ValueError, "HashBucketEmbedding", "must lie in [0, 15)", str(v), "num_buckets=10", "offset 5"))
        for v in (-1, 15, 2**40)
    ]
    rows += [
        ("HashBucketEmbedding/float ids", lambda: bucket(torch.zeros(2, 3)),
         raises(TypeError, "HashBucketEmbedding", "input_ids", "integer", "torch.float32", ".long()")),
        ("HashBucketEmbedding/list ids", lambda: bucket([[1, 2]]),
         raises(TypeError, "HashBucketEmbedding", "input_ids", "list", "torch.as_tensor")),
        ("HashBucketEmbedding/no ids", lambda: bucket(torch.zeros(0, dtype=torch.long)),
         gives("an empty (0, 4) result", lambda r: tuple(r.shape) == (0, 4))),
        ("HashBucketEmbedding(None)", lambda: HashBucketEmbedding(None, 4),
         raises(TypeError, "HashBucketEmbedding", "num_buckets must be a positive int", "None")),
        ("HashBucketEmbedding(embedding_dim=0)", lambda: HashBucketEmbedding(10, 0),
         raises(ValueError, "HashBucketEmbedding", "embedding_dim must be >= 1", "0")),
        ("HashBucketEmbedding(num_special=None)", lambda: HashBucketEmbedding(10, 4, num_special=None),
         raises(TypeError, "HashBucketEmbedding", "num_special must be an int >= 0", "None")),
        ("HashBucketEmbedding(padding_idx=99)", lambda: HashBucketEmbedding(10, 4, padding_idx=99),
         raises(ValueError, "HashBucketEmbedding", "padding_idx", "[0, 15)", "99")),
    ]
    modules = {"PoolEmbedding": lambda: PoolEmbedding(12, 4, chunk_bits=5).eval(),
               "AdditiveEmbedding": lambda: AdditiveEmbedding(12, 4),
               "PearsonProjection": lambda: PearsonProjection(12, 4),
               "LinearBitProjection": lambda: LinearBitProjection(12, 4)}
    for name, build in modules.items():
        for value in (2, -1, math.nan, 0.5):
            shown = "nan" if value != value else str(value)
            rows.append((f"{name}/bit {shown}", lambda build=build, value=value: build()(bits(value)),
                         raises(ValueError, name, "bits must hold only 0/1 values", shown, "(x > 0).to(torch.uint8)")))
        rows += [
            (f"{name}/bool bits", lambda build=build: build()(bits(1).bool()),
             gives("a (2, 4) result", lambda r: tuple(r.shape) == (2, 4) and bool(torch.isfinite(r).all()))),
            (f"{name}/no words", lambda build=build: build()(torch.zeros(0, 12, dtype=torch.uint8)),
             gives("an empty (0, 4) result", lambda r: tuple(r.shape) == (0, 4))),
            (f"{name}/wrong T", lambda build=build: build()(torch.zeros(2, 7, dtype=torch.uint8)),
             raises(ValueError, name, "last dimension of 12", "(2, 7)", "num_bits=7")),
            (f"{name}/list bits", lambda build=build: build()([[0, 1] * 6]),
             raises(TypeError, name, "bits must be a torch.Tensor", "list", "torch.as_tensor")),
            (f"{name}/active of the wrong shape", lambda build=build: build()(bits(1), torch.ones(3, dtype=torch.bool)),
             raises(ValueError, name, "active must have the shape", "(2,)", "(3,)")),
            (f"{name}/active of 2s", lambda build=build: build()(bits(1), torch.full((2,), 2)),
             raises(ValueError, name, "active must hold only 0/1 values", "2")),
            (f"{name}(num_bits=None)", lambda build=build, name=name: type(build())(None, 4),
             raises(TypeError, name, "num_bits must be a positive int", "None")),
        ]
    rows += [
        ("PoolEmbedding(chunk_bits=30)", lambda: PoolEmbedding(128, 4, chunk_bits=30),
         raises(ValueError, "PoolEmbedding", "chunk_bits=30", "k <= 24")),
        ("AdditiveEmbedding(scale=0)", lambda: AdditiveEmbedding(12, 4, scale=0.0),
         raises(ValueError, "AdditiveEmbedding", "scale", "0.0", "None")),
        ("bits_to_codewords/bit 3", lambda: bits_to_codewords(torch.tensor([1, 3, 0, 1]), 2),
         raises(ValueError, "bits_to_codewords", "0/1", "3")),
        ("bits_to_codewords/scalar", lambda: bits_to_codewords(torch.tensor(1), 2),
         raises(TypeError, "bits_to_codewords", "last dimension", "bits[None]")),
        ("bits_to_codewords(chunk_bits=0)", lambda: bits_to_codewords(torch.tensor([1, 0]), 0),
         raises(ValueError, "chunk_bits must be >= 1", "0")),
    ]
    gated = GatedCompositionalEmbedding(vocab_size=8, num_hashes=2, num_buckets=5, hidden_size=4, gate_bottleneck=2)
    rows += [
        ("GatedCompositionalEmbedding/id 8", lambda: gated(torch.tensor([[1, 8]])),
         raises(ValueError, "token ids must lie in [0, vocab_size=8)", "[1, 8]")),
        ("GatedCompositionalEmbedding/id -100", lambda: gated(torch.tensor([[-100, 1]])),
         raises(ValueError, "[-100, 1]", "replace ignore labels (-100)")),
        ("GatedCompositionalEmbedding/float ids", lambda: gated(torch.zeros(1, 2)),
         raises(TypeError, "input_ids must be int64", "float32", ".long()")),
        ("GatedCompositionalEmbedding/list ids", lambda: gated([[1, 2]]),
         raises(TypeError, "input_ids must be a torch.Tensor", "list", "torch.as_tensor")),
        ("GatedCompositionalEmbedding/no ids", lambda: gated(torch.zeros(1, 0, dtype=torch.long)),
         gives("an empty (1, 0, 4) result", lambda r: tuple(r.shape) == (1, 0, 4))),
        ("GatedCompositionalEmbedding.compose/bucket 5", lambda: gated.compose(torch.tensor([[1, 5]])),
         raises(ValueError, "GatedCompositionalEmbedding", "[0, num_buckets=5)", "[1, 5]")),
        ("GatedCompositionalEmbedding.compose/float", lambda: gated.compose(torch.ones(1, 2)),
         raises(TypeError, "GatedCompositionalEmbedding", "signatures must be an int64 tensor", "float32")),
        ("GatedCompositionalEmbedding(vocab_size=None)", lambda: GatedCompositionalEmbedding(None, 2, 5, 4),
         raises(TypeError, "vocab_size must be an int", "None")),
        ("GatedCompositionalEmbedding(num_buckets=1)", lambda: GatedCompositionalEmbedding(8, 2, 1, 4),
         raises(ValueError, "num_buckets must be >= 2", "bucket 0 is reserved")),
    ]
    return rows


# ----------------------------------------------------------------------------------------------------- models
def model_cases() -> list[tuple[str, Callable[[], Any], Raises | Gives]]:
    rows = []
    for kind in ("emb", "pool"):
        def run(input_ids: Any, kind: str = kind, **extra: Any) -> Any:
            if kind == "pool" and "hash_bits" not in extra and isinstance(input_ids, torch.Tensor):
                extra["hash_bits"] = torch.zeros(*input_ids.shape, 128, dtype=torch.uint8)
            return hashformer(kind)(input_ids=input_ids, **extra)

        name = f"HashFormer[{kind}]"
        word = 7 if kind == "emb" else 5
        rows += [
            (f"{name}/empty batch", lambda run=run: run(ids(0, 5)),
             raises(ValueError, "input_ids has shape (0, 5)", "at least one sequence", "tokenize at least one text")),
            (f"{name}/zero-length sequences", lambda run=run: run(ids(2, 0)),
             raises(ValueError, "input_ids has shape (2, 0)", "at least one token")),
            (f"{name}/1-D ids", lambda run=run: run(ids(5)),
             raises(ValueError, "input_ids must be a (batch, seq) tensor", "(5,)", "input_ids[None]")),
            (f"{name}/float ids", lambda run=run: run(ids(2, 5, dtype=torch.float32)),
             raises(TypeError, "input_ids must be int64 (or int32) token ids", "float32", ".long()")),
            (f"{name}/list ids", lambda run=run: run([[0, 7, 2]]),
             raises(TypeError, "input_ids must be a (batch, seq) torch.Tensor", "list", "HashFormerTokenizer")),
            (f"{name}/id out of range", lambda run=run: run(ids(1, 4, value=10**6)),
             raises(ValueError, "input_ids must lie in", "1000000", "special ids 0-4")),
            (f"{name}/longer than the positions", lambda run=run, word=word: run(ids(1, 600, value=word)),
             raises(ValueError, "600 positions", "max_position_embeddings=514", "max_length=512")),
            (f"{name}/attention_mask of the wrong shape",
             lambda run=run, word=word: run(ids(2, 5, value=word), attention_mask=torch.ones(2, 4, dtype=torch.long)),
             raises(ValueError, "attention_mask must be a tensor of the shape of input_ids", "(2, 5)", "(2, 4)")),
            (f"{name}/attention_mask of 2s",
             lambda run=run, word=word: run(ids(2, 5, value=word), attention_mask=torch.full((2, 5), 2)),
             raises(ValueError, "attention_mask must hold only 0", "[2]")),
            (f"{name}/token_type_ids of 1", lambda run=run, word=word: run(ids(2, 5, value=word),
                                                                          token_type_ids=torch.ones(2, 5).long()),
             raises(ValueError, "token_type_ids must lie in [0, 1)", "[1, 1]", "type_vocab_size=1")),
            (f"{name}/position_ids beyond the table",
             lambda run=run, word=word: run(ids(1, 3, value=word), position_ids=torch.tensor([[2, 3, 999]])),
             raises(ValueError, "position_ids must lie in [0, 514)", "999", "leave position_ids None")),
            (f"{name}/labels of the wrong count", lambda run=run, word=word: run(ids(2, 5, value=word),
                                                                                labels=torch.tensor([0, 1, 1])),
             raises(ValueError, "labels must be a tensor with one label per sequence", "batch=2", "(3,)")),
            (f"{name}/label out of range", lambda run=run, word=word: run(ids(2, 5, value=word),
                                                                         labels=torch.tensor([0, 5])),
             raises(ValueError, "labels must be class ids in [0, 2)", "[5]", "num_labels=2")),
            (f"{name}/float labels", lambda run=run, word=word: run(ids(2, 5, value=word),
                                                                   labels=torch.tensor([0.0, 1.0])),
             raises(TypeError, "labels of a 2-class head must be int64", "float32", "labels.long()")),
            (f"{name}/one valid sequence", lambda run=run, word=word: run(torch.tensor([[0, word, 2]])).logits,
             gives("(1, 2) finite logits", lambda r: tuple(r.shape) == (1, 2) and bool(torch.isfinite(r).all()))),
        ]
    rows += [
        ("HashFormer[pool]/no hash_bits", lambda: hashformer("pool")(input_ids=torch.tensor([[0, 5, 2]])),
         raises(ValueError, "needs hash_bits of shape", "(1, 3, 128)", "None")),
        ("HashFormer[pool]/hash_bits of 2s", lambda: hashformer("pool")(**pool_inputs(torch.full((2, 4, 128), 2))),
         raises(ValueError, "PoolEmbedding", "bits must hold only 0/1 values", "2")),
        ("HashFormer[pool]/NaN hash_bits", lambda: hashformer("pool")(**pool_inputs(torch.full((2, 4, 128), math.nan))),
         raises(ValueError, "PoolEmbedding", "0/1", "nan")),
        ("HashFormer[emb]/hash_bits given",
         lambda: hashformer("emb")(input_ids=ids(1, 3), hash_bits=bits(1, 1, 3, 128)),
         raises(ValueError, "embedding_type='emb'", "do not pass hash_bits")),
    ]

    def causal(input_ids: Any, **extra: Any) -> Any:
        return mhf()(input_ids=input_ids, **extra)

    rows += [
        ("MultiHashFormer/empty batch", lambda: causal(ids(0, 5)),
         raises(ValueError, "input_ids has shape (0, 5)", "at least one sequence")),
        ("MultiHashFormer/zero-length sequences", lambda: causal(ids(2, 0)),
         raises(ValueError, "input_ids has shape (2, 0)", "at least one token")),
        ("MultiHashFormer/1-D ids", lambda: causal(ids(5)),
         raises(ValueError, "input_ids must be a (batch, seq) tensor", "(5,)", "input_ids[None]")),
        ("MultiHashFormer/float ids", lambda: causal(ids(2, 5, dtype=torch.float64)),
         raises(TypeError, "input_ids must be int64", "float64", ".long()")),
        ("MultiHashFormer/list ids", lambda: causal([[1, 2, 3]]),
         raises(TypeError, "input_ids must be a (batch, seq) torch.Tensor", "list", "torch.as_tensor")),
        ("MultiHashFormer/id 64", lambda: causal(ids(1, 3, value=64)),
         raises(ValueError, "token ids must lie in [0, vocab_size=64)", "[64, 64]")),
        ("MultiHashFormer/float labels", lambda: causal(ids(2, 5), labels=torch.zeros(2, 5)),
         raises(TypeError, "labels must be an int64 tensor", "float32", "labels.long()")),
        ("MultiHashFormer/labels of another shape", lambda: causal(ids(2, 5), labels=ids(2, 4)),
         raises(ValueError, "labels must have the shape of input_ids", "(2, 5)", "(2, 4)")),
        ("MultiHashFormer/unregistered label", lambda: causal(ids(2, 5), labels=ids(2, 5, value=62)),
         raises(ValueError, "no registered signature", "62", "-100")),
        ("MultiHashFormer/one token with labels", lambda: causal(ids(2, 1), labels=ids(2, 1)),
         gives("logits (2, 1, 3, 17) and a NaN loss (no next token to predict)",
               lambda r: tuple(r.hash_logits.shape) == (2, 1, 3, 17) and bool(torch.isnan(r.loss)))),
        ("MultiHashFormer/logits_to_keep=-1", lambda: causal(ids(2, 5), logits_to_keep=-1),
         raises(ValueError, "logits_to_keep must be an int >= 0", "-1")),
        ("MultiHashFormer/attention_mask of the wrong shape",
         lambda: causal(ids(2, 5), attention_mask=torch.ones(2, 4, dtype=torch.long)),
         raises(ValueError, "attention_mask must have shape", "(2, 5)", "(2, 4)")),
        ("generate/empty batch", lambda: generate(mhf(), ids(0, 5), 3),
         raises(ValueError, "input_ids has shape (0, 5)", "at least one sequence")),
        ("generate/empty prompt", lambda: generate(mhf(), ids(2, 0), 3),
         raises(ValueError, "input_ids has shape (2, 0)", "at least one token", "BOS")),
        ("generate/1-D prompt", lambda: generate(mhf(), ids(5), 3),
         raises(ValueError, "input_ids must be a (batch, seq) tensor", "(5,)", "input_ids[None]")),
        ("generate/float prompt", lambda: generate(mhf(), ids(1, 5, dtype=torch.float32), 3),
         raises(TypeError, "input_ids must be int64", "float32", ".long()")),
        ("generate/list prompt", lambda: generate(mhf(), [[1, 2]], 3),
         raises(TypeError, "input_ids must be a (batch, seq) torch.Tensor", "list", "torch.as_tensor")),
        ("generate/prompt id 64", lambda: generate(mhf(), ids(1, 3, value=64), 2),
         raises(ValueError, "token ids must lie in [0, vocab_size=64)", "64")),
        ("generate/model None", lambda: generate(None, ids(1, 3), 2),
         raises(TypeError, "model must be a MultiHashFormerForCausalLM", "NoneType")),
        ("generate/max_new_tokens=-1", lambda: generate(mhf(), ids(1, 3), -1),
         raises(ValueError, "max_new_tokens must be >= 0", "-1")),
        ("generate/max_new_tokens=None", lambda: generate(mhf(), ids(1, 3), None),
         raises(TypeError, "max_new_tokens must be an int", "None")),
        ("generate/max_new_tokens=0", lambda: generate(mhf(), ids(2, 3), 0),
         gives("the prompt unchanged", lambda r: torch.equal(r, ids(2, 3)))),
        ("generate/eos_token_id=64", lambda: generate(mhf(), ids(1, 3), 2, eos_token_id=64),
         raises(ValueError, "eos_token_id must be in [0, 63]", "64")),
        ("generate/right padding", lambda: generate(mhf(), ids(1, 3), 2, attention_mask=torch.tensor([[1, 1, 0]])),
         raises(ValueError, "left-padded", "padding_side = 'left'")),
    ]
    return rows


# -------------------------------------------------------------------------------------------------- tokenizer
TOKENIZER_CASES = [
    ("HashFormerTokenizer(None)", lambda: HashFormerTokenizer(None),
     raises(TypeError, "hasher must have a batch_index(words) method", "NoneType", "KeyedMD5Hasher")),
    ("HashFormerTokenizer(None, mode='bits')", lambda: HashFormerTokenizer(None, mode="bits"),
     raises(TypeError, "hasher must have a batch_bits(words) method", "NoneType", "LSHBitHasher")),
    ("HashFormerTokenizer(mode='bytes')", lambda: HashFormerTokenizer(KeyedMD5Hasher(), mode="bytes"),
     raises(ValueError, "mode must be 'index'", "'bytes'")),
    ("HashFormerTokenizer(max_length=1)", lambda: HashFormerTokenizer(KeyedMD5Hasher(), max_length=1),
     raises(ValueError, "max_length must be >= 2", "1")),
    ("HashFormerTokenizer(max_length=None)", lambda: HashFormerTokenizer(KeyedMD5Hasher(), max_length=None),
     raises(TypeError, "max_length must be an int", "NoneType")),
    ("HashFormerTokenizer(offset 0)", lambda: HashFormerTokenizer(KeyedMD5Hasher(offset=0)),
     raises(ValueError, "offset 0", "collide with the special ids", "offset=5")),
    ("tokenizer(None)", lambda: md5_tokenizer()(None),
     raises(TypeError, "texts must be a str, a (str, str) pair or a list of them", "NoneType")),
    ("tokenizer(5)", lambda: md5_tokenizer()(5), raises(TypeError, "texts must be a str", "int 5")),
    ("tokenizer(b'bytes')", lambda: md5_tokenizer()(b"abc"), raises(TypeError, "texts must be a str", "bytes")),
    ("tokenizer([])", lambda: md5_tokenizer()([]), raises(ValueError, "texts is an empty list", "at least one text")),
    ("tokenizer([None])", lambda: md5_tokenizer()([None]),
     raises(TypeError, "each text must be a str or a (str, str) pair", "NoneType", "str()")),
    ("tokenizer(['a', 3])", lambda: md5_tokenizer()(["a", 3]), raises(TypeError, "each text must be a str", "int 3")),
    ("tokenizer([('a',)])", lambda: md5_tokenizer()([("a",)]), raises(TypeError, "(str, str) pair", "('a',)")),
    ("tokenizer([''])", lambda: md5_tokenizer()([""])["input_ids"],
     gives("<s> </s> only", lambda r: r.tolist() == [[0, 2]])),
    ("tokenizer(10,000 words)", lambda: md5_tokenizer()(["word " * 10_000])["input_ids"],
     gives("one sequence cut to max_length=32", lambda r: tuple(r.shape) == (1, 32) and int(r[0, -1]) == 2)),
    ("tokenizer(surrogate)", lambda: md5_tokenizer()(["ab\ud800"]),
     raises(ValueError, "lone surrogate", "errors='replace'")),
    ("word_tokenize(None)", lambda: word_tokenize(None), raises(TypeError, "word_tokenize expects a str", "NoneType")),
]

CASES = hasher_cases() + HASHER_CONSTRUCTORS + embedding_cases() + model_cases() + TOKENIZER_CASES


def test_case_ids_are_unique():
    names = [name for name, _, _ in CASES]
    assert len(names) == len(set(names))
    assert len(CASES) >= 200


@pytest.mark.parametrize(("call", "expected"), [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_bad_input(call: Callable[[], Any], expected: Raises | Gives) -> None:
    if isinstance(expected, Raises):
        with pytest.raises(expected.exc) as info:
            call()
        message = str(info.value)
        missing = [fragment for fragment in expected.fragments if fragment not in message]
        assert not missing, f"the {expected.exc.__name__} message lacks {missing}: {message!r}"
    else:
        result = call()
        assert expected.check(result), f"expected {expected.what}, got {result!r:.300}"
