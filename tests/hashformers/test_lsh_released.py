"""Our LSH hashers against HashFormers' released procedure, re-implemented here on its own.

The functions ``released_*`` below follow ``src/utils/free_tokenizer.py`` of HUIYINXUE/hashformer line by line:
``LSHValueTokenizer._get_lsh``/``_get_weight`` with the *live* numba ``compute_ind`` (written as a loop over the
word's subwords, vectorised over the hyperplanes, and once as the literal double loop), ``LSHTokenizer._get_proj``
/``_projection``, and their random numbers drawn as the released code draws them, through the **global**
``np.random.seed`` (the state is restored afterwards). Their tokenizer is ``transformers``' ``RobertaTokenizerFast``
loaded from the staged roberta-base files, the class the released code loads from the hub; none of this goes
through :mod:`hashlib_core.hashing` or :func:`hashlib_core.bpe.roberta_bpe`.
"""
from __future__ import annotations

import re
import shutil
from collections import Counter
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import numpy as np
import pytest
import torch
from tokenizers import Tokenizer

from hashlib_core.bpe import roberta_bpe
from hashlib_core.data import dataset_path
from hashlib_core.hashing.base import hasher_from_config
from hashlib_core.hashing.lsh import LSHBitHasher, LSHBucketHasher, PermutationLSH, SignLSH
from hashlib_core.hashing.lsh_cuts import CutEncoder
from hashlib_core.hashing.lsh_features import subword_features_reference
from tests.hashformers.test_lsh import hand_built_bpe

#: The released sizes: 50,260 hyperplanes (= length of the rotator = buckets), split in two halves of 25,130.
RELEASED_SIZE, RELEASED_HALF = 50260, 25130

WORDS = [
    "the", "of", "and", "to", "in", "is", "was", "for", "that", "with",                      # common
    "play", "plays", "played", "playing", "player", "replay", "run", "runs", "running", "ran",  # morphology
    "happy", "unhappy", "happiness", "unbelievable",
    "Play", "Paris", "The", "McDonald", "NASA",                                                 # capitalised
    "2019", "covid19", "3rd", "a1b2",                                                           # digits
    ",", ".", "...", "!?", "'", "-", "--", '"', "e.g.", "(",                                   # punctuation
    "café", "naïve", "über", "日本",                                                            # non-ASCII
    "internationalization", "antidisestablishmentarianism",                                     # long words
    "supercalifragilisticexpialidocious", "pneumonoultramicroscopicsilicovolcanoconiosis",      # > 32 characters
]


@contextmanager
def released_global_seed(seed: int) -> Iterator[None]:
    """``np.random.seed(seed)`` as the released code calls it, with the global state put back afterwards."""
    saved = np.random.get_state()
    np.random.seed(seed)
    try:
        yield
    finally:
        np.random.set_state(saved)


class HandTokenizer:
    """``tokenize``/``convert_tokens_to_ids`` (the two methods the released code calls) of a ``tokenizers`` BPE."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer

    def tokenize(self, text: str) -> list[str]:
        return self.tokenizer.encode(text, add_special_tokens=False).tokens

    def convert_tokens_to_ids(self, token: str) -> int:
        return self.tokenizer.token_to_id(token)


def released_counter(word: str, bpe: Any) -> Counter:
    """The subword counts of ``_get_lsh``/``_get_proj``."""
    variants_list = [word] + list(map(lambda i: ''.join(word[:i] + '-' + word[i:]), [k for k in range(1, len(word))]))
    variants_list = '-'.join(variants_list)
    c = Counter()
    c.update(bpe.tokenize(variants_list))
    if len(c.keys()) > 1:
        c.pop('-', None)  # not count `-`
    return c


def released_get_weight(count_pair: tuple[str, int], word_len: int, bpe: Any) -> list:
    w = count_pair[1] / max(word_len - len(count_pair[0]), 1)
    ind = bpe.convert_tokens_to_ids(count_pair[0])
    return [ind, w]


def released_count_mat(word: str, bpe: Any) -> np.ndarray:
    word_len = len(word) + 1
    return np.array(list(map(lambda x: released_get_weight(x, word_len, bpe), released_counter(word, bpe).items())))


def released_vals(rotator_vec: np.ndarray, pair_mat: np.ndarray) -> np.ndarray:
    """The ``val`` of every hyperplane i in the live ``compute_ind``: the subwords accumulated in order, ``+=``
    below 25,130 and ``-=`` from 25,130 (vectorised over i; per i the same operations in the same order)."""
    vals = np.zeros(RELEASED_SIZE)
    i = np.arange(RELEASED_SIZE)
    for ind, count in pair_mat:
        terms = rotator_vec[(int(ind) + i) % RELEASED_SIZE] * count
        vals[:RELEASED_HALF] += terms[:RELEASED_HALF]
        vals[RELEASED_HALF:] -= terms[RELEASED_HALF:]
    return vals


def released_compute_ind(rotator_vec: np.ndarray, pair_mat: np.ndarray) -> int:
    """The live ``compute_ind``: the first i whose ``val`` beats the running maximum (strict ``>``) wins."""
    max_val, max_idx = -10000000000000000, 0
    for i, val in enumerate(released_vals(rotator_vec, pair_mat).tolist()):
        if val > max_val:
            max_val, max_idx = val, i
    return max_idx


def released_compute_ind_loop(rotator_vec: np.ndarray, pair_mat: np.ndarray) -> int:
    """The live ``compute_ind`` as written (two double loops), in plain Python."""
    rotator, pairs = rotator_vec.tolist(), pair_mat.tolist()
    max_val, max_idx = -10000000000000000, 0
    for i in range(RELEASED_HALF):
        val = 0
        for ind, count in pairs:
            val += rotator[(int(ind) + i) % RELEASED_SIZE] * count
        if val > max_val:
            max_val, max_idx = val, i
    for i in range(RELEASED_HALF, RELEASED_SIZE):
        val = 0
        for ind, count in pairs:
            val -= rotator[(int(ind) + i) % RELEASED_SIZE] * count
        if val > max_val:
            max_val, max_idx = val, i
    return max_idx


def released_rotator() -> np.ndarray:
    """``random.seed(42); self.rotator = np.random.normal(0, 1, 50260)`` (``LSHValueTokenizer.__init__``)."""
    with released_global_seed(42):
        return np.random.normal(0, 1, RELEASED_SIZE)


def released_get_lsh(word: str, bpe: Any, rotator: np.ndarray,
                     compute_ind: Callable[[np.ndarray, np.ndarray], int] = released_compute_ind) -> int:
    """``LSHValueTokenizer._get_lsh``: the embedding id of ``word``."""
    return compute_ind(rotator, released_count_mat(word, bpe)) + 5


def released_get_proj(word: str, bpe: Any) -> str:
    """``LSHTokenizer._get_proj``: the 128-bit code, as the base-36 string of ``value + 5``."""
    def _projection(count_pair, word_len):
        with released_global_seed(bpe.convert_tokens_to_ids(count_pair[0])):
            r = np.random.normal(0, 1, 128)
        w = count_pair[1] / max(word_len - len(count_pair[0]), 1)
        return r * w

    c = released_counter(word, bpe)
    vec = np.sum(list(map(lambda item: _projection(item, len(word) + 1), c.items())), axis=0)
    vec = (vec > 0).astype(int).astype(str)
    base10 = int(''.join(vec), base=2)
    return np.base_repr(base10 + 5, base=36)


def released_bits(code: str) -> list[int]:
    """The collators' expansion of a code to bits: ``format(v - 5, '0>128b')``, most significant bit first."""
    return [int(b) for b in format(int(code, 36) - 5, '0>128b')]


# ------------------------------------------------------------------------------------------ roberta-base's BPE
@pytest.fixture(scope="module")
def released_bpe(mirror, tmp_path_factory) -> Any:
    """``RobertaTokenizerFast`` on the staged roberta-base files (released: ``from_pretrained('roberta-base')``)."""
    from transformers import RobertaTokenizerFast

    folder = tmp_path_factory.mktemp("roberta-base")
    for name in ("vocab.json", "merges.txt"):
        shutil.copy(dataset_path("wordpiece_vocab", f"roberta-base/{name}"), folder / name)
    tokenizer = RobertaTokenizerFast.from_pretrained(str(folder))
    assert len(tokenizer) == 50265
    return tokenizer


@pytest.fixture(scope="module")
def bpe(mirror) -> Tokenizer:
    return roberta_bpe()


@pytest.fixture(scope="module")
def rotator() -> np.ndarray:
    return released_rotator()


def test_roberta_bpe_reads_the_staged_files(bpe, released_bpe):
    assert bpe.get_vocab_size() == 50265 and roberta_bpe() is bpe  # cached
    checks = {"Hello world": [31414, 232], " the": [5], "unbelievable": [879, 8494, 18421, 868],
              " unbelievable": [14011]}  # the staged files' SOURCE.md
    for text, ids in checks.items():
        assert bpe.encode(text, add_special_tokens=False).ids == ids
        assert released_bpe(text, add_special_tokens=False)["input_ids"] == ids
    assert bpe.encode("Hello world").ids == [0, 31414, 232, 2]  # <s> ... </s>, as RoBERTa
    assert [bpe.token_to_id(t) for t in ("<s>", "<pad>", "</s>", "<unk>", "<mask>")] == [0, 1, 2, 3, 50264]
    assert bpe.get_vocab() == released_bpe.get_vocab()


def test_roberta_bpe_tokenizes_as_the_released_tokenize(bpe, released_bpe):
    # the released features call RobertaTokenizerFast.tokenize: no prefix space, no special tokens, cased
    for word in WORDS + ["a <s> b", "x</s>y", "<mask>"]:
        text = "-".join([word] + [word[:i] + "-" + word[i:] for i in range(1, len(word))])
        assert bpe.encode(text, add_special_tokens=False).tokens == released_bpe.tokenize(text)


def test_the_literal_loop_equals_the_vectorised_reference(released_bpe, rotator):
    for word in ("play", "e.g.", "Paris"):
        pairs = released_count_mat(word, released_bpe)
        assert released_compute_ind_loop(rotator, pairs) == released_compute_ind(rotator, pairs)


def test_rotator_is_the_released_draw_from_a_local_generator(bpe):
    hasher = LSHBucketHasher(bpe)
    np.testing.assert_array_equal(hasher.lsh.rotator, released_rotator())  # bit for bit


@pytest.mark.parametrize("word", WORDS)
def test_bucket_hasher_equals_the_released_get_lsh(bpe, released_bpe, rotator, word):
    hasher = LSHBucketHasher(bpe, num_buckets=RELEASED_SIZE, feature_dim=RELEASED_SIZE)
    assert hasher.index(word) == released_get_lsh(word, released_bpe, rotator)
    # the features (ids, weights, order) and the scores of all 50,260 hyperplanes, bit for bit
    ids, weights = hasher.features(word)
    pairs = released_count_mat(word, released_bpe)
    assert ids.tolist() == pairs[:, 0].astype(np.int64).tolist() and weights.tolist() == pairs[:, 1].tolist()
    assert np.array_equal(hasher.lsh.scores(ids, weights), released_vals(rotator, pairs))


def test_long_words_take_the_linear_path_on_roberta(bpe):
    assert CutEncoder(bpe).reason is None
    encoder = CutEncoder(bpe)
    for word in ("supercalifragilisticexpialidocious", "internationalization" * 5, "a" * 300, "x9" * 150,
                 "Mississippi" * 20, "naïveté" * 30):
        fast, reference = encoder.features(word), subword_features_reference(word, bpe, max_length=None)
        assert fast is not None
        assert fast[0].tolist() == reference[0].tolist() and fast[1].tolist() == reference[1].tolist()


@pytest.mark.parametrize("word", WORDS)
def test_bit_hasher_equals_the_released_get_proj(bpe, released_bpe, word):
    hasher = LSHBitHasher(bpe)
    assert hasher.bits(word).tolist() == released_bits(released_get_proj(word, released_bpe))


def test_released_ids_golden(bpe, released_bpe, rotator):
    # computed with released_get_lsh / released_get_proj above
    golden_ids = {"play": 26761, "plays": 35409, "played": 7273, "the": 45293}
    golden_code = {"play": "3EUGLAICT6RJUQMZYUAS423P0", "plays": "RIOHZHQ45F35O3WE56LDGSK4"}
    assert {w: released_get_lsh(w, released_bpe, rotator) for w in golden_ids} == golden_ids
    assert {w: released_get_proj(w, released_bpe) for w in golden_code} == golden_code
    assert LSHBucketHasher(bpe).batch_index(list(golden_ids)).tolist() == list(golden_ids.values())
    codes = LSHBitHasher(bpe).batch_bits(list(golden_code))
    assert codes.tolist() == [released_bits(c) for c in golden_code.values()]


def test_sentence_through_the_released_word_tokenizer(bpe, released_bpe, rotator):
    from hashlib_core.papers.hashformers.tokenization import word_tokenize

    text = "Mr. Smith's 3 dogs played in Paris -- e.g. «Les Misérables», 2019!"
    released_words = re.findall(r"\w+|[^\w\s]+", text.lower())  # LSHValueTokenizer.tokenize
    assert word_tokenize(text) == released_words
    expected = [released_get_lsh(w, released_bpe, rotator) for w in released_words]
    assert LSHBucketHasher(bpe).batch_index(word_tokenize(text)).tolist() == expected


def test_hashing_leaves_the_global_random_state_alone(bpe):
    with released_global_seed(7):
        before = np.random.get_state()
        first = LSHBucketHasher(bpe).index("played"), LSHBitHasher(bpe).bits("played").tolist()
        after = np.random.get_state()
        assert np.array_equal(after[1], before[1]) and after[2:] == before[2:]
    with released_global_seed(123):
        assert (LSHBucketHasher(bpe).index("played"), LSHBitHasher(bpe).bits("played").tolist()) == first


def test_seeds_must_fit_a_random_state():
    with pytest.raises(ValueError, match=r"seed must be <= 4294967295"):
        PermutationLSH(4, 3, seed=2**32)
    with pytest.raises(ValueError, match=r"seed must be <= 4294967295"):
        SignLSH(8, seed=2**32)
    with pytest.raises(ValueError, match=r"subword id must be <= 4294967295"):
        SignLSH(8).bits(np.array([2**32]), np.array([1.0]))


def test_saved_params_reload_the_same_hashes(bpe):
    for hasher in (LSHBucketHasher(bpe), LSHBitHasher(bpe)):
        rebuilt = hasher_from_config(hasher.config())
        assert rebuilt == hasher
        for word in ("played", "McDonald", "e.g."):
            assert torch.equal(torch.as_tensor(rebuilt.hash(word)), torch.as_tensor(hasher.hash(word)))


# --------------------------------------------------------------------- a hand-built BPE (tests/.../test_lsh.py)
@pytest.fixture(scope="module")
def hand_bpe() -> Tokenizer:
    return hand_built_bpe()


def test_hand_built_bpe_released_size_golden(hand_bpe, rotator):
    # computed with released_get_lsh / released_get_proj above, on the hand-built vocabulary
    golden_ids = {"play": 34931, "plays": 20117, "a": 15842, "-": 15843}
    golden_code = {"play": "BPNGK2ZIL1NP8V4R8KVXSJ59X", "plays": "BH4VYF2VAW6O89B9TSDS646K7"}
    reference = HandTokenizer(hand_bpe)
    assert {w: released_get_lsh(w, reference, rotator) for w in golden_ids} == golden_ids
    assert {w: released_get_proj(w, reference) for w in golden_code} == golden_code
    assert LSHBucketHasher(hand_bpe).batch_index(list(golden_ids)).tolist() == list(golden_ids.values())
    codes = LSHBitHasher(hand_bpe).batch_bits(list(golden_code))
    assert codes.dtype == torch.uint8 and codes.shape == (2, 128)
    assert codes.tolist() == [released_bits(c) for c in golden_code.values()]
