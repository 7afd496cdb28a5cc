"""HashFormers LSH hashing (§3.3, §3.5): subword features, permutation-trick buckets, T-bit sign codes."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, models, pre_tokenizers

from hashlib_core.hashing.base import hasher_from_config
from hashlib_core.hashing.lsh import (
    LSHBitHasher,
    LSHBucketHasher,
    PermutationLSH,
    SignLSH,
    subword_features,
    word_variants,
)

# A hand-built byte-level BPE whose tokenisations can be worked out on paper:
# 'play' -> p l a y -(p,l)-> pl a y -(a,y)-> pl ay -(pl,ay)-> play ; 'lay' -> l ay -> lay ; 'pla' -> pl a
VOCAB = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3, "<mask>": 4, "-": 5, "a": 6, "l": 7, "p": 8, "y": 9,
         "s": 10, "pl": 11, "ay": 12, "lay": 13, "play": 14}
MERGES = [("p", "l"), ("a", "y"), ("l", "ay"), ("pl", "ay")]


@pytest.fixture(scope="module")
def bpe() -> Tokenizer:
    tokenizer = Tokenizer(models.BPE(VOCAB, MERGES, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    return tokenizer


def test_word_variants():
    assert word_variants("play") == "play-p-lay-pl-ay-pla-y"
    assert word_variants("a") == "a"
    with pytest.raises(TypeError):
        word_variants(b"play")


def test_golden_features_play(bpe):
    # subwords of 'play-p-lay-pl-ay-pla-y': play, p, lay, pl x2, ay, a, y ('-' x6 dropped); len('play') + 1 = 5
    ids, weights = subword_features("play", bpe)
    assert ids.tolist() == [14, 8, 13, 11, 12, 6, 9]
    np.testing.assert_allclose(weights, [1 / 1, 1 / 4, 1 / 2, 2 / 3, 1 / 3, 1 / 4, 1 / 4])


def test_golden_features_plays(bpe):
    # 'plays-p-lays-pl-ays-pla-ys-play-s': play x2, s x5, p, lay, pl x2, ay, a, y; len + 1 = 6
    ids, weights = subword_features("plays", bpe)
    assert ids.tolist() == [14, 10, 8, 13, 11, 12, 6, 9]
    np.testing.assert_allclose(weights, [2 / 2, 5 / 5, 1 / 5, 1 / 3, 2 / 4, 1 / 4, 1 / 5, 1 / 5])


def test_hyphen_kept_when_it_is_the_only_subword(bpe):
    assert subword_features("-", bpe)[0].tolist() == [5]
    assert subword_features("a", bpe)[0].tolist() == [6]


def test_features_reject_bad_input(bpe):
    with pytest.raises(ValueError, match="empty string"):
        subword_features("", bpe)
    with pytest.raises(TypeError):
        subword_features(3, bpe)
    with pytest.raises(TypeError, match="tokenizers.Tokenizer"):
        subword_features("play", object())


def test_rotator_golden_values():
    # numpy's PCG64 default_rng(42) standard normals: the stored vector eta of the released-size LSH
    lsh = PermutationLSH(num_hyperplanes=6, feature_dim=5, seed=42)
    np.testing.assert_allclose(lsh.rotator, [0.30471708, -1.03998411, 0.7504512, 0.94056472, -1.95103519], rtol=1e-7)


def test_bucket_by_hand():
    # N = 4, F = 3, eta = (0.3047, -1.0400, 0.7505); feature k = 1 with weight 2:
    # i = 0: +2 eta[1] = -2.080, i = 1: +2 eta[2] = 1.501, i = 2: -2 eta[0] = -0.609, i = 3: -2 eta[(1+3)%3] = 2.080
    lsh = PermutationLSH(num_hyperplanes=4, feature_dim=3, seed=42)
    eta = lsh.rotator
    scores = lsh.scores(np.array([1]), np.array([2.0]))
    np.testing.assert_allclose(scores, [2 * eta[1], 2 * eta[2], -2 * eta[0], -2 * eta[1]])
    assert lsh.bucket(np.array([1]), np.array([2.0])) == 3


def test_hyperplanes_are_shifted_copies_with_equal_norm():
    lsh = PermutationLSH(num_hyperplanes=7, feature_dim=5, seed=3)
    matrix = lsh.hyperplane_matrix()
    for i in range(7):
        sign = 1.0 if i < 3 else -1.0
        np.testing.assert_array_equal(matrix[i], sign * np.roll(lsh.rotator, -i))
    np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), np.linalg.norm(lsh.rotator))  # §3.3: same L2-norm


@settings(max_examples=60, deadline=None)
@given(
    num_hyperplanes=st.integers(1, 40),
    feature_dim=st.integers(1, 30),
    seed=st.integers(0, 2**32 - 1),
    features=st.lists(st.tuples(st.integers(0, 200), st.floats(0.01, 5.0)), min_size=1, max_size=90),
)
def test_permutation_trick_equals_explicit_matrix(num_hyperplanes, feature_dim, seed, features):
    lsh = PermutationLSH(num_hyperplanes, feature_dim, seed)
    ids = np.array([k for k, _ in features])
    weights = np.array([w for _, w in features])
    fast, reference = lsh.scores(ids, weights), lsh.scores_reference(ids, weights)
    np.testing.assert_allclose(fast, reference, rtol=1e-9, atol=1e-9)
    best = reference.max()
    assert reference[lsh.bucket(ids, weights)] >= best - 1e-9


def test_released_size_buckets_golden(bpe):
    hasher = LSHBucketHasher(bpe)  # N = F = 50,260, eta seed 42, offset 5
    assert hasher.batch_index(["play", "plays", "a", "-"]).tolist() == [13789, 24645, 31673, 31674]
    ids, weights = subword_features("play", bpe)
    assert hasher.index("play") == hasher.lsh.bucket(ids, weights) + 5


def test_bucket_hasher_range_and_modulo(bpe):
    small = LSHBucketHasher(bpe, num_buckets=10, offset=5, num_hyperplanes=50260)
    full = LSHBucketHasher(bpe, num_buckets=50260, offset=0)
    for word in ["play", "plays", "lay", "pay", "a", "ss"]:
        assert 5 <= small.index(word) < 15
        assert small.index(word) == full.index(word) % 10 + 5  # §3.3: i = v % N
    out = small.batch_index(["play", "lay"])
    assert out.dtype == torch.long and out.shape == (2,)


def test_sign_lsh_single_feature_is_the_sign_of_its_gaussian():
    lsh = SignLSH(num_bits=128)
    expected = (np.random.default_rng(14).standard_normal(128) > 0).astype(np.uint8)
    np.testing.assert_array_equal(lsh.bits(np.array([14]), np.array([0.7])), expected)
    np.testing.assert_array_equal(lsh.bits(np.array([14]), np.array([-0.7])), 1 - expected)
    seeded = SignLSH(num_bits=128, seed=9).hyperplane_column(14)
    np.testing.assert_array_equal(seeded, np.random.default_rng((9, 14)).standard_normal(128))


def test_sign_lsh_is_weighted_sum_of_columns():
    lsh = SignLSH(num_bits=16)
    ids, weights = np.array([3, 8, 3]), np.array([1.0, 0.5, 2.0])
    manual = sum(w * np.random.default_rng(k).standard_normal(16) for k, w in zip(ids, weights))
    np.testing.assert_allclose(lsh.projection(ids, weights), manual)
    np.testing.assert_array_equal(lsh.bits(ids, weights), (manual > 0).astype(np.uint8))


def test_bit_hasher_golden(bpe):
    hasher = LSHBitHasher(bpe)
    codes = hasher.batch_bits(["play", "plays"])
    assert codes.dtype == torch.uint8 and codes.shape == (2, 128)
    assert np.packbits(codes.numpy(), axis=1).tobytes().hex() == (
        "8faddb021d69dfd382dac8e259b3eeff" "0fa4990a1d65de93025ac0ea7cf3ca9f"
    )
    assert torch.equal(hasher.bits("play"), codes[0])
    assert hasher.batch_bits([]).shape == (0, 128)
    assert LSHBitHasher(bpe, num_bits=420).bits("play").shape == (420,)


def test_hasher_configs_round_trip(bpe):
    for hasher in (LSHBucketHasher(bpe, num_buckets=1000), LSHBitHasher(bpe, num_bits=64, seed=3)):
        rebuilt = hasher_from_config(hasher.config())
        assert rebuilt == hasher
        assert torch.equal(torch.as_tensor(rebuilt.hash("plays")), torch.as_tensor(hasher.hash("plays")))
        assert len(repr(hasher)) < 200
    tampered = LSHBitHasher(bpe).config()
    tampered["bpe_sha256"] = "0" * 64
    with pytest.raises(ValueError, match="altered"):
        hasher_from_config(tampered)


def test_hashers_validate_tokens(bpe):
    hasher = LSHBucketHasher(bpe)
    with pytest.raises(TypeError):
        hasher.index(5)
    with pytest.raises(TypeError, match="single str"):
        hasher.batch_index("play")
    with pytest.raises(ValueError):
        hasher.index("")
    with pytest.raises(ValueError):
        PermutationLSH(num_hyperplanes=0)
