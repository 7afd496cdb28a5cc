"""pNLP-Mixer's scores on fixed predictions (counted by hand)."""
from __future__ import annotations

import pytest

from hashlib_core.papers.pnlp_mixer.metrics import exact_match, intent_accuracy, non_o_token_accuracy

GOLD = [["O", "B-city", "O"], ["B-date", "I-date"], ["O"]]
PRED = [["O", "B-city", "O"], ["B-date", "O"], ["B-city"]]


def test_intent_accuracy():
    assert intent_accuracy([1, 2, 3, 4], [1, 2, 0, 4]) == 75.0


def test_exact_match_needs_every_word_right():
    assert exact_match(PRED, GOLD) == pytest.approx(100 / 3)     # only the first sentence is all right
    assert exact_match(GOLD, GOLD) == 100.0


def test_non_o_token_accuracy_counts_only_gold_slots():
    # gold non-O words: B-city (right), B-date (right), I-date (wrong); the wrong B-city on a gold O is not counted
    assert non_o_token_accuracy(PRED, GOLD) == pytest.approx(200 / 3)


def test_bad_input():
    with pytest.raises(ValueError, match="2 predictions for 3 gold"):
        exact_match(PRED[:2], GOLD)
    with pytest.raises(ValueError, match="sentence 1 has 1 predicted tags for 2 words"):
        exact_match([["O", "B-city", "O"], ["O"], ["O"]], GOLD)
    with pytest.raises(TypeError, match="not a string"):
        exact_match(["O"], ["O"])
    with pytest.raises(ValueError, match="no items"):
        intent_accuracy([], [])
    with pytest.raises(ValueError, match="undefined"):
        non_o_token_accuracy([["O"]], [["O"]])
