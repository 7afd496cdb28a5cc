"""Sentences -> pNLP-Mixer inputs: WordPiece units, cached fingerprints, per-word Bloom filters, padding."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from hashlib_core.hashing.minhash import MinHashFingerprinter, counting_bloom_filter
from hashlib_core.papers.pnlp_mixer.configuration import PNLPMixerConfig
from hashlib_core.papers.pnlp_mixer.heads import PNLPMixerForTokenClassification
from hashlib_core.papers.pnlp_mixer.projection import SentenceProjector, wordpiece_tokenizer

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "Bring", "##ing", "fly", "to", "Boston", "##s", "!", "東", "京"]


@pytest.fixture(scope="module")
def projector():
    return SentenceProjector.from_vocab(VOCAB, MinHashFingerprinter(num_hashes=16), bloom_size=32, max_seq_len=5)


def test_words_are_cut_into_wordpiece_units(projector):
    ids = lambda w: [VOCAB[i] for i in projector.unit_ids(w)]
    assert ids("Bringing") == ["Bring", "##ing"] and ids("fly") == ["fly"] and ids("東京") == ["東", "京"]
    assert ids("xyz") == ["[UNK]"] and ids("Boston!") == ["Boston", "!"]


def test_word_fingerprint_is_the_minimum_of_its_units(projector):
    fp = MinHashFingerprinter(num_hashes=16)
    got = projector.word_fingerprints(["Bringing", "fly"])
    assert got.tolist() == [fp.token_fingerprint(["Bring", "##ing"]).tolist(), fp.unit_fingerprint("fly").tolist()]


def test_sentences_become_padded_bloom_features_and_a_mask(projector):
    batch = projector([["Bringing", "fly", "to", "Boston"], ["fly", "to", "Boston", "fly", "to", "Boston", "!"]])
    features, mask = batch["input_features"], batch["attention_mask"]
    assert features.shape == (2, 5, 32) and features.dtype == torch.float32
    assert mask.tolist() == [[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]]             # the second sentence is cut at 5 words
    assert (features[mask.bool()].sum(-1) == 16).all() and torch.count_nonzero(features[0, 4]) == 0
    expected = counting_bloom_filter(projector.word_fingerprints(["Bringing"]), 32)[0]
    assert np.array_equal(features[0, 0].numpy(), expected)
    config = PNLPMixerConfig(num_hashes=16, bloom_size=32, max_seq_len=5, hidden_size=8, num_mixer_layers=1,
                             token_mixing_dim=4, channel_mixing_dim=4, classifier_hidden=0, num_labels=3)
    logits = PNLPMixerForTokenClassification(config)(**batch).logits
    assert logits.shape == (2, 5, 3)


def test_bad_input(projector):
    with pytest.raises(TypeError, match="list of words"):
        projector.word_fingerprints("fly to Boston")
    with pytest.raises(ValueError, match="sentence 1 is empty"):
        projector([["fly"], []])
    with pytest.raises(ValueError, match="at least one sentence"):
        projector([])
    with pytest.raises(TypeError, match="a word must be a str"):
        projector.unit_ids(None)
    assert projector.unit_ids("\x00") == [1] and projector.unit_ids("a" * 10_000) == [1]   # defined: [UNK]
    with pytest.raises(ValueError, match=r"no \[UNK\] piece"):
        wordpiece_tokenizer(["a", "b"])
