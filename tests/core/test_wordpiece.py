"""BERT's WordPiece from the staged vocabularies: the ids BERT's own tokenizer gives, its template and segments."""
from __future__ import annotations

import pytest

from hashlib_core.wordpiece import bert_tokenizer, wordpiece_tokenizer


@pytest.fixture(scope="module")
def uncased(mirror):
    return bert_tokenizer("bert-base-uncased")


def test_the_ids_of_bert_base_uncased(uncased):
    # transformers' documentation example for bert-base-uncased
    assert uncased("Hello, my dog is cute")["input_ids"] == [101, 7592, 1010, 2026, 3899, 2003, 10140, 102]
    assert len(uncased) == 30522
    assert (uncased.pad_token_id, uncased.unk_token_id, uncased.cls_token_id, uncased.sep_token_id,
            uncased.mask_token_id) == (0, 100, 101, 102, 103)


def test_uncased_lowers_and_strips_accents_and_pairs_carry_segments(uncased):
    assert uncased.tokenize("Héllo WÖRLD") == ["hello", "world"]
    pair = uncased("first text", "second")
    tokens = uncased.convert_ids_to_tokens(pair["input_ids"])
    assert tokens == ["[CLS]", "first", "text", "[SEP]", "second", "[SEP]"]
    assert pair["token_type_ids"] == [0, 0, 0, 0, 1, 1]
    assert uncased("first text", add_special_tokens=False)["input_ids"] == uncased.convert_tokens_to_ids(
        ["first", "text"])


def test_cased_keeps_case_and_unknown_words_become_unk():
    tok = wordpiece_tokenizer(["[UNK]", "Hello", "hello", "##s", "x"])
    assert tok.encode("Hello hellos zzz", add_special_tokens=False).tokens == ["Hello", "hello", "##s", "[UNK]"]
    lower = wordpiece_tokenizer(["[UNK]", "hello"], lowercase=True)
    assert lower.encode("HÉLLO", add_special_tokens=False).tokens == ["hello"]


def test_bad_vocabularies_are_refused_by_name():
    with pytest.raises(ValueError, match="no \\[UNK\\] piece"):
        wordpiece_tokenizer(["a", "b"])
    with pytest.raises(ValueError, match="unknown BERT vocabulary 'bert-large'"):
        bert_tokenizer("bert-large")
