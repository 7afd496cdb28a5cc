"""The polynomial rolling hash of n-grams: golden values, the big-integer definition, and the community code's two
differences (its recurrence, int32 wrapping)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hashlib_core.hashing.rolling import (
    DEFAULT_BASE,
    DEFAULT_MODULUS,
    char_codes,
    community_rolling_hash,
    ngram_hashes,
    ngram_hashes_many,
    reference_hash,
    wrap_int32,
)

#: any code point, lone surrogates included
ANY_TEXT = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=40)


def test_golden_values():
    assert ngram_hashes("hashing", 3).tolist() == [60688603, 283975698, 891978420, 69601534, 331853114]
    assert ngram_hashes("ab", 1).tolist() == [98, 99]                      # code point + 1
    assert ngram_hashes("\u00e9t\u00e9", 2).tolist() == [260703495, 130351923]


def test_parameters_are_documented_primes():
    def prime(n: int) -> bool:
        return n > 1 and all(n % k for k in range(2, int(n ** 0.5) + 1))

    assert prime(DEFAULT_BASE) and DEFAULT_BASE > 0x110000 and not any(prime(k) for k in range(0x110001, DEFAULT_BASE))
    assert prime(DEFAULT_MODULUS) and DEFAULT_MODULUS == 10**9 + 7


@settings(max_examples=200, deadline=None)
@given(ANY_TEXT, st.integers(1, 4))
def test_every_window_equals_the_big_integer_definition(text, n):
    got = ngram_hashes(text, n).tolist()
    assert got == [reference_hash(text[i:i + n]) for i in range(len(text) - n + 1)]


@settings(max_examples=100, deadline=None)
@given(st.lists(ANY_TEXT, max_size=8), st.integers(1, 3))
def test_batched_equals_one_by_one(texts, n):
    many = ngram_hashes_many(texts, n)
    assert len(many) == len(texts)
    for text, values in zip(texts, many):
        assert values.tolist() == ngram_hashes(text, n).tolist()


def test_lone_surrogates_and_nul_are_characters():
    assert char_codes("x\ud800\x00").tolist() == [ord("x") + 1, 0xD800 + 1, 1]
    assert ngram_hashes("\x00a", 2).tolist() != ngram_hashes("a", 1).tolist()


def test_community_recurrence_is_not_the_polynomial_hash():
    # the blog's scan starts from (first character, power = n) and adds (c - 96) * power, power *= 31
    assert community_rolling_hash([ord(c) for c in "the"]) == ord("t") + (ord("h") - 96) * 3 + (ord("e") - 96) * 93
    standard = sum(ord(c) * 31 ** (2 - i) for i, c in enumerate("the")) % DEFAULT_MODULUS
    assert community_rolling_hash([ord(c) for c in "the"]) != standard
    assert community_rolling_hash([ord("z")]) == ord("z")                     # n = 1: the raw code point


@settings(max_examples=100, deadline=None)
@given(st.integers(0, DEFAULT_MODULUS - 1), st.integers(2**31, 2**32 - 1))
def test_int32_wrapping_changes_the_product_the_embedding_reduces(value, key_word):
    exact = value * key_word
    wrapped = int(wrap_int32(exact))
    assert -2**31 <= wrapped < 2**31
    assert (wrapped - exact) % 2**32 == 0
    if value:   # a non-zero hash times a key word above 2^31 always leaves the int32 range
        assert wrapped != exact


def test_bad_input_names_the_fix():
    with pytest.raises(TypeError, match="decode bytes"):
        ngram_hashes(b"abc", 2)
    with pytest.raises(ValueError, match="n must be an int >= 1"):
        ngram_hashes("abc", 0)
    with pytest.raises(ValueError, match="base must be an int >= 2"):
        ngram_hashes("abc", 2, base=1)
    with pytest.raises(ValueError, match="2\\^62"):
        ngram_hashes("abc", 2, base=DEFAULT_BASE, modulus=2**50)
    with pytest.raises(ValueError, match="at least one character"):
        community_rolling_hash([])
    assert ngram_hashes("", 1).shape == (0,) and ngram_hashes("ab", 3).shape == (0,)


def test_cost_is_linear_in_length():
    # 10,000 characters: every window hashed in one vectorised pass (no per-window Python loop)
    values = ngram_hashes("abcdefghij" * 1000, 3)
    assert values.shape == (9998,) and values.dtype == np.int64
    assert values[0] == values[10] == reference_hash("abc")
