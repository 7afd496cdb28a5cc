"""Tests for hashlib_core.hashing: MD5 / HMAC-MD5 (HashFormers §3.2), MMH3 signatures (MultiHashFormer §3.1),
the TokenHasher interface, token validation, cross-process determinism, and the hashing benchmark.

Golden MMH3 values were computed once with mmh3 5.3.1 and are cross-checked here against a pure-Python
MurmurHash3_x64_128 written from the algorithm's description; mmh3 5.2.0 (the version the official MHF code pins)
gives the same fingerprint.
"""
from __future__ import annotations

import contextlib
import hashlib
import hmac
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import mmh3
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hashlib_core.hashing import (
    KeyedMD5Hasher,
    MMH3MultiHasher,
    TokenHasher,
    hasher_from_config,
    md5_digest,
    md5_hex,
    mmh3_bucket,
    mmh3_fingerprint,
    validate_token,
    validate_tokens,
)

REPO_ROOT = Path(__file__).resolve().parents[2]

#: Any str without surrogates: every script, emoji, whitespace, NUL.
valid_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)


# ----------------------------------------------------------------------------------------------------------------
# A reference MurmurHash3_x64_128 (Appleby's algorithm), to check mmh3 and our reading of its conventions.
# ----------------------------------------------------------------------------------------------------------------
_M64 = (1 << 64) - 1


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _M64


def _fmix(k: int) -> int:
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & _M64
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & _M64
    return k ^ (k >> 33)


def murmur3_x64_128(data: bytes, seed: int) -> int:
    """Unsigned 128-bit MurmurHash3_x64_128 of ``data``, as ``h1 | h2 << 64`` (mmh3's little-endian digest)."""
    c1, c2 = 0x87C37B91114253D5, 0x4CF5AD432745937F
    h1 = h2 = seed
    n_blocks = len(data) // 16
    for i in range(n_blocks):
        k1 = int.from_bytes(data[16 * i : 16 * i + 8], "little")
        k2 = int.from_bytes(data[16 * i + 8 : 16 * i + 16], "little")
        h1 ^= (_rotl((k1 * c1) & _M64, 31) * c2) & _M64
        h1 = (((_rotl(h1, 27) + h2) & _M64) * 5 + 0x52DCE729) & _M64
        h2 ^= (_rotl((k2 * c2) & _M64, 33) * c1) & _M64
        h2 = (((_rotl(h2, 31) + h1) & _M64) * 5 + 0x38495AB5) & _M64
    tail = data[16 * n_blocks :]
    if len(tail) > 8:
        h2 ^= (_rotl((int.from_bytes(tail[8:], "little") * c2) & _M64, 33) * c1) & _M64
    if tail:
        h1 ^= (_rotl((int.from_bytes(tail[:8], "little") * c1) & _M64, 31) * c2) & _M64
    h1 ^= len(data)
    h2 ^= len(data)
    h1 = (h1 + h2) & _M64
    h2 = (h2 + h1) & _M64
    h1, h2 = _fmix(h1), _fmix(h2)
    h1 = (h1 + h2) & _M64
    h2 = (h2 + h1) & _M64
    return h1 | (h2 << 64)


# ----------------------------------------------------------------------------------------------------------------
# MD5 (HashFormers §3.2; implementation notes A1 and E)
# ----------------------------------------------------------------------------------------------------------------
# Notes section E: plain MD5 and the released HMAC-MD5 (key b"en") of 'play' / 'plays'.
MD5_GOLDEN = {
    "play": {"plain": "a3b34c0871dc2fd51eec5559b68f709d", "keyed": "95ea122b0b72902c5a95d7ba740ff838"},
    "plays": {"plain": "ed4018190d63d27337300381ca661fae", "keyed": "f75bd557c7ca967ff75cdd26f4987fc1"},
    "": {"plain": "d41d8cd98f00b204e9800998ecf8427e", "keyed": "8c03f6fd0bc3b2c50678d2201f26002a"},
}
# The digests printed in HashFormers §3.2 (p. 3), made with a key that was not released.
PAPER_PRINTED_MD5 = {"play": "d077f244def8a70e5ea758bd8352fcd8", "plays": "4a258d930b7d3409982d727ddbb4ba88"}
# int(hexdigest, 16) % 50260 + 5 for the digests above.
MD5_INDEX_GOLDEN = {"play": {"plain": 37678, "keyed": 22237}, "plays": {"plain": 47451, "keyed": 1650},
                    "": {"plain": 15791, "keyed": 17687}}


@pytest.mark.parametrize("token", sorted(MD5_GOLDEN))
def test_md5_hex_golden_plain_and_keyed(token):
    assert md5_hex(token, key=None) == MD5_GOLDEN[token]["plain"]
    assert md5_hex(token) == MD5_GOLDEN[token]["keyed"]  # default key is the released b"en"
    assert md5_hex(token, key=b"en") == MD5_GOLDEN[token]["keyed"]
    # Same as the standard library's reference implementations.
    assert md5_hex(token, key=None) == hashlib.md5(token.encode("utf-8")).hexdigest()
    assert md5_hex(token) == hmac.new(b"en", token.encode("utf-8"), hashlib.md5).hexdigest()


@pytest.mark.parametrize("token", sorted(PAPER_PRINTED_MD5))
def test_paper_printed_md5_matches_neither_plain_nor_released_key(token):
    # HashFormers §3.2 prints MD5('play') and MD5('plays'); neither our plain nor our keyed digest is that value,
    # so the paper's example used an unreleased key. This test documents the discrepancy (notes E).
    printed = PAPER_PRINTED_MD5[token]
    assert md5_hex(token, key=None) != printed
    assert md5_hex(token, key=b"en") != printed


@pytest.mark.parametrize("token", sorted(MD5_INDEX_GOLDEN))
def test_md5_index_golden(token):
    keyed, plain = KeyedMD5Hasher(), KeyedMD5Hasher(key=None)
    assert keyed.index(token) == MD5_INDEX_GOLDEN[token]["keyed"]
    assert plain.index(token) == MD5_INDEX_GOLDEN[token]["plain"]
    assert keyed.index(token) == int(MD5_GOLDEN[token]["keyed"], 16) % 50260 + 5
    assert keyed(token) == keyed.hash(token) == keyed.index(token)


def test_md5_index_range_and_parameters():
    hasher = KeyedMD5Hasher(num_buckets=7, offset=3, key=b"other")
    ids = hasher.batch_index([f"w{i}" for i in range(500)])
    assert ids.dtype == torch.long
    assert int(ids.min()) == 3 and int(ids.max()) == 9  # all 7 buckets hit by 500 tokens
    assert KeyedMD5Hasher(key=b"other").index("play") != KeyedMD5Hasher().index("play")


def test_md5_bits_golden_msb_first():
    bits = KeyedMD5Hasher().bits("play")
    assert bits.dtype == torch.uint8 and bits.shape == (128,)
    # 0x95 0xea = 1001 0101 1110 1010 (keyed digest of 'play' starts with 95ea).
    assert bits[:16].tolist() == [1, 0, 0, 1, 0, 1, 0, 1, 1, 1, 1, 0, 1, 0, 1, 0]
    # The released collators' expansion: format(v, '0>128b').
    for token, key in (("play", b"en"), ("plays", None), ("", b"en")):
        value = int(md5_hex(token, key), 16)
        expected = [int(c) for c in format(value, "0>128b")]
        assert KeyedMD5Hasher(key=key).bits(token).tolist() == expected


def test_md5_batches_equal_single_calls():
    tokens = ["play", "plays", "", " ", "日本語", "😀", "a\x00b", "x" * 10_000]
    for hasher in (KeyedMD5Hasher(), KeyedMD5Hasher(num_buckets=1000, offset=0, key=None)):
        assert hasher.batch_index(tokens).tolist() == [hasher.index(t) for t in tokens]
        bits = hasher.batch_bits(tokens)
        assert bits.shape == (len(tokens), 128) and bits.dtype == torch.uint8
        assert torch.equal(bits, torch.stack([hasher.bits(t) for t in tokens]))
        assert hasher.batch_digests(tokens) == [hasher.digest(t) for t in tokens]
        assert torch.equal(hasher.hash_batch(tokens), hasher.batch_index(tokens))
    empty = KeyedMD5Hasher()
    assert empty.batch_index([]).shape == (0,)
    assert empty.batch_bits([]).shape == (0, 128)


@settings(max_examples=50, deadline=None)
@given(key=st.one_of(st.none(), st.binary(max_size=150)), tokens=st.lists(valid_text, max_size=5))
def test_hasher_fast_hmac_equals_standard_library(key, tokens):
    # The hasher precomputes the HMAC pads (keys longer than the 64-byte block are hashed first, RFC 2104);
    # md5_digest uses hmac.digest / hashlib directly. Both must agree for every key length.
    hasher = KeyedMD5Hasher(key=key)
    expected = [
        hashlib.md5(t.encode("utf-8")).digest() if key is None else hmac.new(key, t.encode("utf-8"), "md5").digest()
        for t in tokens
    ]
    assert hasher.batch_digests(tokens) == expected
    assert [hasher.digest(t) for t in tokens] == [md5_digest(t, key) for t in tokens] == expected


def test_md5_key_validation():
    with pytest.raises(TypeError, match="encode it"):
        md5_hex("play", key="en")
    with pytest.raises(TypeError, match="bytes or None"):
        KeyedMD5Hasher(key=5)
    assert md5_digest("play", key=bytearray(b"en")) == md5_digest("play", key=b"en")
    # An empty key is a valid HMAC key and differs from plain MD5.
    assert md5_hex("play", key=b"") != md5_hex("play", key=None)
    # Keys longer than MD5's 64-byte block are hashed first (RFC 2104), in both code paths.
    long_key = bytes(range(100))
    assert KeyedMD5Hasher(key=long_key).digest("play") == hmac.new(long_key, b"play", "md5").digest()


@pytest.mark.parametrize("kwargs, error", [
    ({"num_buckets": 0}, ValueError), ({"offset": -1}, ValueError),
    ({"num_buckets": 2.0}, TypeError), ({"num_buckets": True}, TypeError),
])
def test_md5_hasher_parameter_validation(kwargs, error):
    with pytest.raises(error):
        KeyedMD5Hasher(**kwargs)


# ----------------------------------------------------------------------------------------------------------------
# MMH3 multi-hash signatures (MultiHashFormer §3.1; implementation notes A3)
# ----------------------------------------------------------------------------------------------------------------
# Base signatures computed once with mmh3 5.3.1: coordinate i = mmh3.hash128(token, seed=i) % (B - 1) + 1.
MMH3_GOLDEN_H4_B16384 = {
    "play": (4823, 6800, 15371, 8806),
    "plays": (5857, 3186, 4403, 14871),
    "": (1, 943, 10136, 7684),
    "Ġthe": (5160, 3444, 11198, 3935),
    "日本語": (16152, 5365, 13066, 517),
    "😀": (2824, 688, 1584, 16126),
    "a\x00b": (9361, 11231, 13146, 12264),
}
MMH3_GOLDEN_H3_B10240 = {
    "play": (9764, 7586, 6311),
    "plays": (7813, 5700, 7544),
    "": (1, 7624, 9167),
    "Ġthe": (1011, 2442, 2936),
    "日本語": (6069, 1918, 1378),
    "😀": (5596, 3163, 10206),
    "a\x00b": (8629, 1130, 5322),
}
MMH3_HASH128_GOLDEN = {  # mmh3.hash128(token, seed=0), unsigned x64
    "play": 228170823508511493895370878917551788462,
    "": 0,
    "日本語": 303144469268648892825404180843103776756,
}
#: mmh3_fingerprint() for mmh3 5.3.1 (and 5.2.0): a change means the installed mmh3 hashes differently.
MMH3_FINGERPRINT_GOLDEN = "f519aadf73af551b7a2240bacd88e67e2548bcddb972600e7ddd7540255441ec"


@pytest.mark.parametrize("golden, h, b", [(MMH3_GOLDEN_H4_B16384, 4, 16384), (MMH3_GOLDEN_H3_B10240, 3, 10240)])
def test_mmh3_signature_golden(golden, h, b):
    hasher = MMH3MultiHasher(num_hashes=h, num_buckets=b)
    for token, signature in golden.items():
        assert hasher.signature(token) == signature
        assert hasher(token) == signature
    batch = hasher.batch(list(golden))
    assert batch.dtype == np.int64 and batch.shape == (len(golden), h)
    assert [tuple(row) for row in batch.tolist()] == list(golden.values())


def test_mmh3_hash128_golden_and_reference_implementation():
    for token, value in MMH3_HASH128_GOLDEN.items():
        assert mmh3.hash128(token, seed=0) == value
        assert murmur3_x64_128(token.encode("utf-8"), 0) == value
    # Block/tail boundaries (15, 16, 17, 31, 32, 33 bytes) and several seeds, incl. the largest.
    for length in (0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 100):
        data = bytes(range(length))
        for seed in (0, 1, 3, 2**32 - 1):
            assert mmh3.hash128(data, seed=seed, x64arch=True, signed=False) == murmur3_x64_128(data, seed)


@settings(max_examples=60, deadline=None)
@given(token=valid_text, seed=st.integers(0, 2**32 - 1), buckets=st.integers(2, 2**20))
def test_mmh3_bucket_is_utf8_x64_unsigned_mod(token, seed, buckets):
    expected = murmur3_x64_128(token.encode("utf-8"), seed) % (buckets - 1) + 1
    assert mmh3_bucket(token, seed, buckets) == expected
    assert 1 <= expected <= buckets - 1


@settings(max_examples=40, deadline=None)
@given(tokens=st.lists(valid_text, max_size=8), num_hashes=st.integers(1, 5), buckets=st.integers(2, 2**40))
def test_mmh3_signatures_match_reference_and_official_call(tokens, num_hashes, buckets):
    hasher = MMH3MultiHasher(num_hashes, buckets)
    reference = [
        tuple(murmur3_x64_128(t.encode("utf-8"), i) % (buckets - 1) + 1 for i in range(num_hashes)) for t in tokens
    ]
    # The official MHF code calls mmh3.hash128(tok, seed=j) (keyword seed, default x64 and unsigned).
    official = [tuple(mmh3.hash128(t, seed=i) % (buckets - 1) + 1 for i in range(num_hashes)) for t in tokens]
    assert [hasher.signature(t) for t in tokens] == reference == official
    assert [tuple(row) for row in hasher.batch(tokens).tolist()] == reference


def test_mmh3_conventions_documented():
    token = "naïve 日本 😀"
    # str is hashed by its UTF-8 bytes.
    assert mmh3.hash128(token) == mmh3.hash128(token.encode("utf-8"))
    # x64 and x86 variants differ: we use x64 (mmh3's default).
    assert mmh3.hash128(token, seed=0) == mmh3.hash128(token, seed=0, x64arch=True, signed=False)
    assert mmh3.hash128(token, seed=0, x64arch=True) != mmh3.hash128(token, seed=0, x64arch=False)
    # Unsigned: values reach above 2**127 (a signed result would be negative there).
    values = {f"t{i}": mmh3.hash128(f"t{i}", seed=0) for i in range(64)}
    assert min(values.values()) >= 0
    big = next(t for t, v in values.items() if v >= 2**127)
    assert mmh3.hash128(big, seed=0, signed=True) == values[big] - 2**128
    # Our coordinates use the unsigned value, whichever way mmh3 parses positional flags (see multihash._hash128:
    # mmh3 5.2.0/5.3.1 return the signed value for any fourth positional argument, so we pass keywords).
    assert mmh3_bucket(big, 0, 1 << 20) == values[big] % ((1 << 20) - 1) + 1
    assert mmh3_bucket(big, 0, 1 << 20) == murmur3_x64_128(big.encode("utf-8"), 0) % ((1 << 20) - 1) + 1


def test_mmh3_fingerprint_golden():
    assert mmh3_fingerprint() == MMH3_FINGERPRINT_GOLDEN


def test_mmh3_multihasher_ranges_and_small_buckets():
    tokens = [f"tok{i}" for i in range(2000)]
    sig = MMH3MultiHasher(3, 64).batch(tokens)
    assert sig.min() == 1 and sig.max() == 63  # bucket 0 never used (reserved for padding); all others hit
    assert (MMH3MultiHasher(2, 2).batch(tokens) == 1).all()  # B = 2 leaves one usable bucket
    assert MMH3MultiHasher(5, 100).seeds == (0, 1, 2, 3, 4)
    assert MMH3MultiHasher(2, 100).batch([]).shape == (0, 2)
    assert MMH3MultiHasher(4, 16384).coordinate("play", 3) == MMH3_GOLDEN_H4_B16384["play"][3]


@pytest.mark.parametrize("kwargs, error, match", [
    ({"num_hashes": 0, "num_buckets": 16}, ValueError, "at least one hash"),
    ({"num_hashes": 2, "num_buckets": 1}, ValueError, "reserved for padding"),
    ({"num_hashes": 2, "num_buckets": 2**70}, ValueError, "num_buckets"),
    ({"num_hashes": 2.0, "num_buckets": 16}, TypeError, "int"),
    ({"num_hashes": 2, "num_buckets": False}, TypeError, "int"),
])
def test_mmh3_parameter_validation(kwargs, error, match):
    with pytest.raises(error, match=match):
        MMH3MultiHasher(**kwargs)


def test_mmh3_bucket_seed_validation():
    with pytest.raises(ValueError, match="seed"):
        mmh3_bucket("a", 2**32, 16)
    with pytest.raises(ValueError, match="seed"):
        mmh3_bucket("a", -1, 16)


# ----------------------------------------------------------------------------------------------------------------
# Token contract, shared by all hashers
# ----------------------------------------------------------------------------------------------------------------
HASHERS = [KeyedMD5Hasher(), KeyedMD5Hasher(key=None), MMH3MultiHasher(3, 1024)]


def _single(hasher: TokenHasher, token):
    out = hasher.hash(token)
    return out if isinstance(out, (int, tuple)) else tuple(out)


@pytest.mark.parametrize("hasher", HASHERS, ids=lambda h: repr(h))
def test_valid_edge_tokens_are_hashed_by_their_utf8_bytes(hasher):
    edge = ["", " ", "  ", "\t", "a\x00b", "ab", "😀", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "x" * 10_000]
    outputs = [_single(hasher, t) for t in edge]
    # Not normalised or stripped: whitespace variants, NUL and the empty string hash differently.
    assert len(set(outputs)) == len(edge)
    # Deterministic and batch == single.
    assert outputs == [_single(hasher, t) for t in edge]
    batch = hasher.hash_batch(edge)
    assert [tuple(r) if isinstance(r, list) else r for r in batch.tolist()] == outputs


def test_utf8_contract_against_byte_level_references():
    for token in ["", " ", "a\x00b", "😀", "x" * 10_000, "Ġthe"]:
        data = token.encode("utf-8")
        assert md5_hex(token, key=None) == hashlib.md5(data).hexdigest()
        assert mmh3_bucket(token, 0, 1 << 20) == mmh3.hash128(data, seed=0) % ((1 << 20) - 1) + 1


@pytest.mark.parametrize("bad, error, match", [
    (b"play", TypeError, "decode bytes"),
    (bytearray(b"play"), TypeError, "decode bytes"),
    (5, TypeError, "must be a str"),
    (None, TypeError, "must be a str"),
    (["play"], TypeError, "must be a str"),
    ("\ud800", ValueError, "lone surrogate"),
    ("ab\udfffc", ValueError, "character 2"),
])
def test_bad_tokens_raise_clear_errors_in_every_hasher(bad, error, match):
    with pytest.raises(error, match=match):
        validate_token(bad)
    for call in (md5_hex, lambda t: md5_hex(t, key=None), lambda t: mmh3_bucket(t, 0, 16)):
        with pytest.raises(error, match=match):
            call(bad)
    for hasher in HASHERS:
        with pytest.raises(error, match=match):
            hasher.hash(bad)
        with pytest.raises(error, match=match):
            hasher.hash_batch(["ok", "fine", bad])
    with pytest.raises(error, match="position 2"):
        validate_tokens(["ok", "fine", bad])


def test_batch_functions_refuse_a_single_string():
    for hasher in HASHERS:
        with pytest.raises(TypeError, match=r"wrap it in a list"):
            hasher.hash_batch("play")
    with pytest.raises(TypeError, match="iterable"):
        validate_tokens(42)


def test_str_subclasses_are_accepted_as_plain_str():
    token = np.str_("play")
    assert type(validate_token(token)) is str
    assert KeyedMD5Hasher().index(token) == MD5_INDEX_GOLDEN["play"]["keyed"]
    assert MMH3MultiHasher(4, 16384).signature(token) == MMH3_GOLDEN_H4_B16384["play"]
    assert validate_tokens(np.array(["a", "b"])) == ["a", "b"]


# ----------------------------------------------------------------------------------------------------------------
# TokenHasher interface and configs
# ----------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("hasher", HASHERS + [KeyedMD5Hasher(num_buckets=1000, offset=2, key=b"\x00\xffk")],
                         ids=lambda h: repr(h))
def test_config_is_json_and_rebuilds_an_equal_hasher(hasher):
    assert isinstance(hasher, TokenHasher)
    config = json.loads(json.dumps(hasher.config()))
    rebuilt = hasher_from_config(config)
    assert rebuilt == hasher and type(rebuilt) is type(hasher)
    tokens = ["play", "plays", "😀"]
    assert [_single(rebuilt, t) for t in tokens] == [_single(hasher, t) for t in tokens]


def test_config_errors_and_inequality():
    with pytest.raises(ValueError, match="known hashers: .*md5"):
        hasher_from_config({"name": "sha1"})
    with pytest.raises(ValueError, match="'name' key"):
        hasher_from_config({"num_buckets": 3})
    assert KeyedMD5Hasher() != KeyedMD5Hasher(key=None)
    assert MMH3MultiHasher(4, 16384) != MMH3MultiHasher(4, 16383)
    assert KeyedMD5Hasher().config() == {"name": "md5", "num_buckets": 50260, "offset": 5, "key_hex": "656e"}


def test_hasher_names_must_be_unique():
    with pytest.raises(TypeError, match="already used"):
        type("Clash", (TokenHasher,), {"name": "md5", "hash": None, "hash_batch": None, "params": None})


# ----------------------------------------------------------------------------------------------------------------
# Determinism across processes and PYTHONHASHSEED
# ----------------------------------------------------------------------------------------------------------------
_CHILD = r"""
import json, sys
from hashlib_core.hashing import KeyedMD5Hasher, MMH3MultiHasher, SignatureRegistry
tokens = ["play", "plays", "", " ", "日本語", "😀", "a\x00b"] + [f"w{i}-é" for i in range(300)]
keyed = KeyedMD5Hasher()
reg = SignatureRegistry(2, 32)  # 961 signatures for 306 tokens: many rehashes
ids = reg.register([t for t in tokens if t])
print(json.dumps({
    "md5": [KeyedMD5Hasher(key=None).digest(t).hex() for t in tokens],
    "index": keyed.batch_index(tokens).tolist(),
    "bits": keyed.batch_bits(tokens).sum(dim=1).tolist(),
    "mmh3": MMH3MultiHasher(4, 16384).batch(tokens).tolist(),
    "ids": ids.tolist(),
    "table": reg.table().tolist(),
    "rehash": reg.rehash_counts().tolist(),
}))
"""


def test_outputs_identical_across_processes_and_pythonhashseed():
    outputs = []
    for seed in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO_ROOT)}
        done = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, timeout=120,
                              check=False)
        assert done.returncode == 0, done.stderr
        outputs.append(json.loads(done.stdout))
    assert outputs[0] == outputs[1]
    # ... and equal to this process, whatever its hash seed.
    here = io.StringIO()
    with contextlib.redirect_stdout(here):
        exec(_CHILD, {})
    assert json.loads(here.getvalue()) == outputs[0]
    assert max(outputs[0]["rehash"]) > 0  # the registry part really exercised rehashing
    assert outputs[0]["index"][:2] == [MD5_INDEX_GOLDEN["play"]["keyed"], MD5_INDEX_GOLDEN["plays"]["keyed"]]


# ----------------------------------------------------------------------------------------------------------------
# Benchmark script (speed is recorded, never asserted)
# ----------------------------------------------------------------------------------------------------------------
def test_benchmark_word_list_is_deterministic_distinct_and_multiscript():
    from hashlib_core.benchmarks.hashing import build_word_list

    words = build_word_list(5000, seed=3)
    assert words == build_word_list(5000, seed=3)
    assert words != build_word_list(5000, seed=4)
    assert len(words) == len(set(words)) == 5000
    assert all(words)
    assert any(ord(c) > 0xFFFF for w in words for c in w)  # emoji (non-BMP)
    assert any("\u0400" <= c <= "\u04ff" for w in words for c in w)  # Cyrillic
    assert any("\u4e00" <= c <= "\u9fff" for w in words for c in w)  # CJK
    with pytest.raises(ValueError):
        build_word_list(0)


def test_benchmark_quick_run_writes_results(tmp_path, monkeypatch):
    from hashlib_core.benchmarks.hashing import main

    monkeypatch.setenv("HASHLIB_RESULTS_DIR", str(tmp_path))
    payload = main(["--quick", "--n-tokens", "3000", "--workers", "1", "2"])
    written = json.loads((tmp_path / "benchmarks" / "quick" / "hashing.json").read_text(encoding="utf-8"))
    assert written["data"]["word_list"]["sha256"] == payload["word_list"]["sha256"]
    assert written["meta"]["device"] == "cpu" and written["meta"]["seed"] == 0
    expected = {"md5_plain", "md5_keyed_index", "md5_keyed_bits", "mmh3_signatures", "registry_register_workers_1",
                "registry_register_workers_2", "training_gather", "training_gather_advanced_indexing"}
    assert set(payload["measurements"]) == expected
    assert all(m["tokens_per_s"] > 0 for m in payload["measurements"].values())
    assert payload["registry"]["bit_identical_across_workers"] is True
    assert payload["registry"]["meets_5s_target"] is None  # only judged at >= 1M tokens
