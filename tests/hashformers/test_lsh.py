"""HashFormers LSH hashing (§3.3, §3.5): subword features, permutation-trick buckets, T-bit sign codes."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, models, pre_tokenizers

from hashlib_core.bpe import train_bpe
from hashlib_core.hashing import lsh as lsh_module
from hashlib_core.hashing import lsh_cuts
from hashlib_core.hashing.base import hasher_from_config
from hashlib_core.hashing.lsh_cuts import CutEncoder, byte_level
from hashlib_core.hashing.lsh_features import MAX_REFERENCE_LENGTH, subword_features_reference
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


def hand_built_bpe() -> Tokenizer:
    """The hand-built byte-level BPE above (also what ``test_lsh_released`` checks the released procedure on)."""
    tokenizer = Tokenizer(models.BPE(VOCAB, MERGES, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    return tokenizer


@pytest.fixture(scope="module")
def bpe() -> Tokenizer:
    return hand_built_bpe()


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
    # the released eta: np.random.seed(42); np.random.normal(0, 1, F), the legacy generator's first normals
    lsh = PermutationLSH(num_hyperplanes=6, feature_dim=5, seed=42)
    golden = [0.49671415, -0.1382643, 0.64768854, 1.52302986, -0.23415337]
    np.testing.assert_allclose(lsh.rotator, golden, rtol=1e-7)
    saved = np.random.get_state()
    np.random.seed(42)
    released = np.random.normal(0, 1, 5)
    np.random.set_state(saved)
    np.testing.assert_array_equal(lsh.rotator, released)
    np.testing.assert_array_equal(PermutationLSH(6, 7, seed=9).rotator, np.random.RandomState(9).normal(0, 1, 7))


def test_bucket_by_hand():
    # N = 4, F = 3, eta = (0.4967, -0.1383, 0.6477); feature k = 1 with weight 2:
    # i = 0: +2 eta[1] = -0.277, i = 1: +2 eta[2] = 1.295, i = 2: -2 eta[0] = -0.993, i = 3: -2 eta[(1+3)%3] = 0.277
    lsh = PermutationLSH(num_hyperplanes=4, feature_dim=3, seed=42)
    eta = lsh.rotator
    scores = lsh.scores(np.array([1]), np.array([2.0]))
    np.testing.assert_allclose(scores, [2 * eta[1], 2 * eta[2], -2 * eta[0], -2 * eta[1]])
    assert lsh.bucket(np.array([1]), np.array([2.0])) == 1


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


def test_released_size_bucket_is_the_lsh_bucket_plus_5(bpe):
    # golden buckets of this vocabulary, from the released procedure: tests/hashformers/test_lsh_released.py
    hasher = LSHBucketHasher(bpe)  # N = F = 50,260, eta seed 42, offset 5
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
    # the released vector of subword 14: np.random.seed(14); np.random.normal(0, 1, 128)
    lsh = SignLSH(num_bits=128)
    expected = (np.random.RandomState(14).normal(0, 1, 128) > 0).astype(np.uint8)
    np.testing.assert_array_equal(lsh.bits(np.array([14]), np.array([0.7])), expected)
    np.testing.assert_array_equal(lsh.bits(np.array([14]), np.array([-0.7])), 1 - expected)
    odd = SignLSH(num_bits=127)  # an odd count leaves a cached Gaussian behind: re-seeding must drop it
    for k in (14, 15, 14):
        np.testing.assert_array_equal(odd._draw(k), np.random.RandomState(k).normal(0, 1, 127))
    seeded = SignLSH(num_bits=128, seed=9).hyperplane_column(14)
    np.testing.assert_array_equal(seeded, np.random.RandomState([9, 14]).normal(0, 1, 128))
    assert not np.array_equal(seeded, lsh.hyperplane_column(14))


def test_sign_lsh_is_weighted_sum_of_columns():
    lsh = SignLSH(num_bits=16)
    ids, weights = np.array([3, 8, 3]), np.array([1.0, 0.5, 2.0])
    rows = [np.random.RandomState(k).normal(0, 1, 16) * w for k, w in zip(ids.tolist(), weights.tolist())]
    manual = np.sum(rows, axis=0)  # the released sum of the rows, in order
    np.testing.assert_array_equal(lsh.projection(ids, weights), manual)
    np.testing.assert_array_equal(lsh.bits(ids, weights), (manual > 0).astype(np.uint8))


def test_bit_hasher_shapes(bpe):
    # golden codes of this vocabulary, from the released procedure: tests/hashformers/test_lsh_released.py
    hasher = LSHBitHasher(bpe)
    codes = hasher.batch_bits(["play", "plays"])
    assert codes.dtype == torch.uint8 and codes.shape == (2, 128)
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
    before_draws = LSHBucketHasher(bpe).config()
    del before_draws["draws"]  # params saved when the hashers drew from PCG64
    with pytest.raises(ValueError, match="draws None.*cannot be rebuilt"):
        hasher_from_config(before_draws)



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


# ---------------------------------------------------------------------- the linear feature path (lsh_cuts)

SENTENCES = [
    "the quick brown fox jumps over the lazy dog", "played playing plays player replay", "über straße café naïve",
    "жизнь и судьба", "中文 字 汉字 文字", "abc123 4567 x9y8",
    "unbelievably understandable misunderstandings",
]
WORD_CHARS = "abcdefghilmnoprstuwyzéüßжизнья中文字0123456789"


def features_equal(a, b) -> bool:
    return a[0].tolist() == b[0].tolist() and a[1].tolist() == b[1].tolist()  # ids, order and weights bit for bit


@pytest.fixture(scope="module")
def trained_bpe() -> Tokenizer:
    rng = np.random.default_rng(0)
    lines = [" ".join(rng.choice(" ".join(SENTENCES).split(), 10)) for _ in range(400)]
    return train_bpe(lines, 420, min_frequency=1, lowercase=True)


@pytest.fixture(scope="module")
def cased_bpe() -> Tokenizer:
    rng = np.random.default_rng(1)
    lines = [" ".join(rng.choice(" ".join(SENTENCES).title().split(), 10)) for _ in range(400)]
    return train_bpe(lines, 380, min_frequency=1)


def dp_only(tokenizer: Tokenizer) -> CutEncoder:
    """A CutEncoder that always takes the dynamic programme (a second, independent linear algorithm)."""
    encoder = CutEncoder(tokenizer)
    encoder._side = lambda *args, **kwargs: None
    return encoder


def test_word_variants_length_is_quadratic():
    # w, then n - 1 times '-' + w[:i] + '-' + w[i:]: n + (n - 1)(n + 2) characters
    assert [len(word_variants("x" * n)) for n in (1, 2, 7, 40)] == [n * n + 2 * n - 2 for n in (1, 2, 7, 40)]


@settings(max_examples=150, deadline=None)
@given(word=st.text(alphabet=st.sampled_from(list(WORD_CHARS + WORD_CHARS.upper()[:20])), min_size=1, max_size=40))
def test_linear_features_equal_the_reference_on_random_words(trained_bpe, cased_bpe, word):
    for tokenizer in (trained_bpe, cased_bpe):
        reference = subword_features_reference(word, tokenizer)
        fast = CutEncoder(tokenizer).features(word)
        if len(word) > 1:
            assert fast is not None  # letters and digits always take the linear path with these tokenizers
        if fast is not None:
            assert features_equal(fast, reference)
        assert features_equal(subword_features(word, tokenizer), reference)
        dynamic = dp_only(tokenizer).features(word)
        assert dynamic is None if len(word) == 1 else features_equal(dynamic, reference)


@settings(max_examples=80, deadline=None)
@given(word=st.text(min_size=1, max_size=30))
def test_any_unicode_word_gives_the_reference_features(trained_bpe, word):
    # punctuation, spaces, marks, controls...: the linear path declines and the reference runs
    assert features_equal(subword_features(word, trained_bpe), subword_features_reference(word, trained_bpe))


@settings(max_examples=60, deadline=None)
@given(word=st.text(alphabet=st.sampled_from(list("plays")), min_size=2, max_size=60))
def test_linear_features_on_the_hand_built_vocabulary(bpe, word):
    fast = CutEncoder(bpe).features(word)
    assert fast is not None and features_equal(fast, subword_features_reference(word, bpe))


def test_linear_features_on_adversarial_vocabularies(monkeypatch):
    # tiny BPEs trained on random 'abc' strings merge almost every pair, so cut encodings rarely rejoin the word's:
    # with MAX_CONTEXT 0 and 1 most pre-tokens fall back to the dynamic programme, with 6 to the windows
    rng = np.random.default_rng(3)
    for vocab in range(4):
        corpus = ["".join(rng.choice(list("abc"), int(rng.integers(3, 30)))) for _ in range(300)]
        tokenizer = train_bpe(corpus, 270 + int(rng.integers(10, 150)), min_frequency=1)
        for context in (6, 1, 0):
            monkeypatch.setattr(lsh_cuts, "MAX_CONTEXT", context)
            encoder = CutEncoder(tokenizer)
            for trial in range(25):
                word = "".join(rng.choice(list("abc" if trial % 2 else "ab"), int(rng.integers(2, 70))))
                fast = encoder.features(word)
                assert fast is not None and features_equal(fast, subword_features_reference(word, tokenizer))


@pytest.mark.parametrize("word", ["a" * 300, "ab" * 150, "played" * 50, "中文" * 100, "x9" * 150, "Café" * 75])
def test_long_words_equal_the_reference(trained_bpe, word):
    fast = CutEncoder(trained_bpe).features(word)
    assert fast is not None
    assert features_equal(fast, subword_features_reference(word, trained_bpe, max_length=None))


def test_ten_thousand_letters_two_linear_algorithms_agree(trained_bpe):
    rng = np.random.default_rng(7)
    for word in ("".join(rng.choice(list("abcdefghilmnoprstuy"), 10_000)), "a" * 10_000, "played" * 1_700):
        windows, dynamic = CutEncoder(trained_bpe).features(word), dp_only(trained_bpe).features(word)
        assert windows is not None and features_equal(windows, dynamic)
        assert abs(float(windows[1].sum())) > 0 and np.all(windows[1] > 0)


def test_long_letter_words_never_build_word_variants(trained_bpe, monkeypatch):
    from hashlib_core.hashing import lsh_features

    def quadratic(word):
        raise AssertionError(f"word_variants built for a {len(word)}-character word")

    expected = subword_features("played" * 20, trained_bpe)
    monkeypatch.setattr(lsh_features, "word_variants", quadratic)
    assert features_equal(subword_features("played" * 20, trained_bpe), expected)
    assert LSHBitHasher(trained_bpe).bits("ab" * 5_000).shape == (128,)
    with pytest.raises(AssertionError, match="5-character"):  # short words keep the literal algorithm
        subword_features("plays", trained_bpe)


def test_words_the_linear_path_cannot_take(trained_bpe):
    assert features_equal(subword_features("e.g.", trained_bpe), subword_features_reference("e.g.", trained_bpe))
    short = "=" * MAX_REFERENCE_LENGTH
    assert features_equal(subword_features(short, trained_bpe), subword_features_reference(short, trained_bpe))
    with pytest.raises(ValueError, match=r"257 characters.*'='.*MAX_REFERENCE_LENGTH = 256.*token\[:256\]"):
        subword_features("=" * (MAX_REFERENCE_LENGTH + 1), trained_bpe)
    with pytest.raises(ValueError, match="257 characters"):
        subword_features_reference("a" * 257, trained_bpe)


def test_unsupported_tokenizers_fall_back_to_the_reference(trained_bpe):
    prefixed = Tokenizer.from_str(trained_bpe.to_str())
    prefixed.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    assert CutEncoder(prefixed).reason is not None and CutEncoder(trained_bpe).reason is None
    assert CutEncoder(prefixed).features("played") is None
    assert features_equal(subword_features("played", prefixed), subword_features_reference("played", prefixed))
    with pytest.raises(ValueError, match="not of the kind the linear algorithm handles"):
        subword_features("a" * 300, prefixed)


def test_byte_level_matches_the_pre_tokenizer():
    pre = pre_tokenizers.ByteLevel(add_prefix_space=False)
    for word in ("café", "жизнь", "中文字", "naïve", "ǅemal", "x" * 5):
        assert [p for p, _ in pre.pre_tokenize_str(word)] == [byte_level(word)]


@settings(max_examples=40, deadline=None)
@given(
    num_hyperplanes=st.integers(1, 300),
    feature_dim=st.integers(1, 300),
    seed=st.integers(0, 2**32 - 1),
    features=st.lists(st.tuples(st.integers(0, 2000), st.floats(0.01, 5.0)), min_size=161, max_size=400),
)
def test_fft_scores_equal_the_explicit_matrix(num_hyperplanes, feature_dim, seed, features):
    # more than 160 features (very long tokens) take the FFT correlation instead of the exact sum
    lsh = PermutationLSH(num_hyperplanes, feature_dim, seed)
    ids = np.array([k for k, _ in features])
    weights = np.array([w for _, w in features])
    fast, reference = lsh.scores(ids, weights), lsh.scores_reference(ids, weights)
    np.testing.assert_allclose(fast, reference, rtol=1e-9, atol=1e-9)
    assert reference[lsh.bucket(ids, weights)] >= reference.max() - 1e-9


def test_up_to_160_features_give_the_released_loop_bit_for_bit(monkeypatch):
    # the released compute_ind: val += eta[(k + i) % F] * w over the features in order (val -= from N/2 on)
    lsh = PermutationLSH()
    rng = np.random.default_rng(0)
    ids, weights = rng.integers(0, 50265, 160), rng.random(160)
    loop, i, half = np.zeros(50260), np.arange(50260), 25130
    for k, w in zip(ids.tolist(), weights.tolist()):
        terms = lsh.rotator[(k + i) % 50260] * w
        loop[:half] += terms[:half]
        loop[half:] -= terms[half:]
    assert np.array_equal(lsh.scores(ids, weights), loop)
    monkeypatch.setattr(lsh_module, "_FFT_MIN_FEATURES", 0)
    np.testing.assert_allclose(lsh.scores(ids, weights), loop, rtol=1e-9, atol=1e-9)


def test_hashers_take_ten_thousand_letter_tokens(trained_bpe):
    token = "".join(np.random.default_rng(2).choice(list("abcdefghilmnoprstuy"), 10_000))
    bucket, bits = LSHBucketHasher(trained_bpe), LSHBitHasher(trained_bpe)
    index = bucket.index(token)
    ids, weights = dp_only(trained_bpe).features(token)
    assert index == bucket.lsh.bucket(ids, weights) + 5
    np.testing.assert_array_equal(bits.bits(token).numpy(), bits.lsh.bits(ids, weights))


def test_benchmark_smoke_run_writes_results(tmp_path, monkeypatch):
    import json

    from hashlib_core.benchmarks.lsh import KINDS, main

    monkeypatch.setenv("HASHLIB_RESULTS_DIR", str(tmp_path))
    payload = main(["--lengths", "5", "40", "--repeats", "1", "--bpe-vocab", "300", "--reference-max-chars", "40"])
    written = json.loads((tmp_path / "benchmarks" / "quick" / "lsh_long_tokens.json").read_text(encoding="utf-8"))
    assert written["meta"]["device"] == "cpu" and written["meta"]["config"]["lengths"] == [5, 40]
    rows = written["data"]["measurements"]
    assert {(r["kind"], r["size"], r["hasher"]) for r in rows} == {
        (kind, size, hasher) for kind in KINDS for size in (5, 40) for hasher in ("bucket", "bits")}
    assert all(r["cold_s"] > 0 and r["warm_min_s"] <= r["warm_s"] <= r["warm_max_s"] for r in rows)
    assert [r["size"] for r in payload["reference"]] == [5, 40]
    assert all(r["identical_ids_and_weights"] for r in payload["reference"])
