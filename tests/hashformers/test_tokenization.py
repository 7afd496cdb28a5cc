"""HashFormers tokenisation: the released word-level tokenizer, pair truncation, hashed inputs, local BPE."""
from __future__ import annotations

import hmac

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hashlib_core.hashing.md5 import KeyedMD5Hasher
from hashlib_core.papers.hashformers.tokenization import (
    HASHED_TOKEN_ID,
    SPECIAL_TOKENS,
    HashFormerTokenizer,
    bpe_to_hf_tokenizer,
    build_word_sequence,
    train_bpe,
    word_tokenize,
)


def released_pair(sent_1, sent_2, max_length):
    """Literal transcription of the released pair branch (src/utils/free_tokenizer.py, _proc_each)."""
    len_1, len_2 = len(sent_1), len(sent_2)
    text_len = len_1 + len_2
    thres = max_length // 2 - 2
    if text_len > max_length - 4:
        if len_1 <= len_2:
            if len_1 >= thres:
                return ["<s>"] + sent_1[:thres] + ["</s>"] * 2 + sent_2[:thres] + ["</s>"]
            return ["<s>"] + sent_1 + ["</s>"] * 2 + sent_2[: max_length - 4 - len_1] + ["</s>"]
        if len_2 >= thres:
            return ["<s>"] + sent_1[:thres] + ["</s>"] * 2 + sent_2[:thres] + ["</s>"]
        return ["<s>"] + sent_1[: max_length - 4 - len_2] + ["</s>"] * 2 + sent_2 + ["</s>"]
    return ["<s>"] + sent_1 + ["</s>"] * 2 + sent_2 + ["</s>"]


def md5_index(word: str) -> int:
    return int(hmac.new(b"en", word.encode(), "md5").hexdigest(), 16) % 50260 + 5


def test_word_tokenize_golden():
    assert word_tokenize("Hello, World!! It's 3.5 km--ok") == ["hello", ",", "world", "!!", "it", "'", "s", "3", ".",
                                                               "5", "km", "--", "ok"]
    assert word_tokenize("<s> café") == ["<", "s", ">", "café"]  # never a special-token string
    with pytest.raises(TypeError):
        word_tokenize(None)


def test_single_sequence_truncation():
    words = [f"w{i}" for i in range(10)]
    assert build_word_sequence(words, max_length=6) == ["<s>", "w0", "w1", "w2", "w3", "</s>"]
    assert build_word_sequence([], max_length=2) == ["<s>", "</s>"]
    with pytest.raises(ValueError, match="max_length"):
        build_word_sequence(words, ["x"], max_length=3)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 40), st.integers(0, 40), st.integers(4, 30))
def test_pair_truncation_matches_released_code(len_a, len_b, max_length):
    a = [f"a{i}" for i in range(len_a)]
    b = [f"b{i}" for i in range(len_b)]
    ours = build_word_sequence(a, b, max_length)
    assert ours == released_pair(a, b, max_length)
    assert len(ours) <= max_length
    if len_a + len_b + 4 > max_length and min(len_a, len_b) < max_length // 2 - 2:
        shorter = a if len_a <= len_b else b
        assert all(w in ours for w in shorter)  # the shorter sentence is kept whole


def test_index_mode_with_md5():
    tokenizer = HashFormerTokenizer(KeyedMD5Hasher(), mode="index", max_length=8)
    out = tokenizer(["Play plays!", ("The cat", "sat")])
    expected_0 = [0, md5_index("play"), md5_index("plays"), md5_index("!"), 2, 1, 1]
    expected_1 = [0, md5_index("the"), md5_index("cat"), 2, 2, md5_index("sat"), 2]
    assert out["input_ids"].tolist() == [expected_0, expected_1]
    assert out["attention_mask"].tolist() == [[1, 1, 1, 1, 1, 0, 0], [1] * 7]
    assert set(out) == {"input_ids", "attention_mask"}


def test_bits_mode_with_md5():
    tokenizer = HashFormerTokenizer(KeyedMD5Hasher(), mode="bits", max_length=6, padding="max_length")
    out = tokenizer("play plays")
    assert out["input_ids"].tolist() == [[0, HASHED_TOKEN_ID, HASHED_TOKEN_ID, 2, 1, 1]]
    bits = out["hash_bits"]
    assert bits.shape == (1, 6, 128) and bits.dtype == torch.uint8
    value = int(hmac.new(b"en", b"plays", "md5").hexdigest(), 16)
    assert "".join(map(str, bits[0, 2].tolist())) == format(value, "0128b")  # released collator expansion
    assert bits[0, [0, 3, 4, 5]].sum() == 0  # special and padding positions carry no code
    empty = tokenizer(["", "?!"])
    assert empty["hash_bits"].shape == (2, 6, 128) and empty["input_ids"][0, :2].tolist() == [0, 2]


def test_tokenizer_rejects_bad_setup():
    with pytest.raises(ValueError, match="offset"):
        HashFormerTokenizer(KeyedMD5Hasher(offset=0), mode="index")
    with pytest.raises(TypeError, match="batch_bits"):
        HashFormerTokenizer(object(), mode="bits")
    with pytest.raises(ValueError, match="mode"):
        HashFormerTokenizer(KeyedMD5Hasher(), mode="words")
    tokenizer = HashFormerTokenizer(KeyedMD5Hasher())
    with pytest.raises(TypeError, match="pair"):
        tokenizer([("a", "b", "c")])
    with pytest.raises(ValueError, match="empty batch"):
        tokenizer([])


CORPUS = ["the player plays and played the playful game", "a cat sat on the mat", "players play games"] * 20


def test_train_bpe_layout():
    tokenizer = train_bpe(CORPUS, vocab_size=300, min_frequency=2)
    assert [tokenizer.token_to_id(t) for t in SPECIAL_TOKENS] == [0, 1, 2, 3, 4]
    assert 261 < tokenizer.get_vocab_size() <= 300  # 5 specials + 256 bytes + merges
    encoding = tokenizer.encode("the players")
    assert encoding.ids[0] == 0 and encoding.ids[-1] == 2
    assert tokenizer.decode(tokenizer.encode("Zürich players", add_special_tokens=False).ids) == "Zürich players"
    lower = train_bpe(CORPUS, vocab_size=300, lowercase=True)
    assert lower.encode("PLAY", add_special_tokens=False).ids == lower.encode("play", add_special_tokens=False).ids
    with pytest.raises(ValueError, match="261"):
        train_bpe(CORPUS, vocab_size=100)
    with pytest.raises(TypeError):
        train_bpe("one string", vocab_size=300)


def test_hf_wrapper_builds_roberta_pairs():
    hf = bpe_to_hf_tokenizer(train_bpe(CORPUS, vocab_size=300))
    ids = hf("the cat", "sat")["input_ids"]
    assert ids[0] == 0 and ids.count(2) == 3 and ids[-1] == 2
    assert hf.pad_token_id == 1 and hf.mask_token_id == 4


def test_lsh_hashers_plug_into_the_tokenizer():
    from hashlib_core.hashing.lsh import LSHBitHasher, LSHBucketHasher

    bpe = train_bpe(CORPUS, vocab_size=300, lowercase=True)
    buckets = LSHBucketHasher(bpe, num_buckets=1000)
    out = HashFormerTokenizer(buckets, mode="index")("Players played")
    assert out["input_ids"][0, 1:3].tolist() == [buckets.index("players"), buckets.index("played")]
    codes = LSHBitHasher(bpe)
    out = HashFormerTokenizer(codes, mode="bits")("Players played")
    assert torch.equal(out["hash_bits"][0, 2], codes.bits("played"))
