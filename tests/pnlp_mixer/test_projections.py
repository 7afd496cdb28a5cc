"""pNLP-Mixer §5.1 projections (MinHash, Binary, TSP, SimHash) behind one interface, and the SentenceProjector."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from hashlib_core.hashing.minhash import FingerprintCache, MinHashFingerprinter, counting_bloom_filter
from hashlib_core.hashing.projections import (PROJECTIONS, BinaryProjection, MinHashProjection, Projection,
                                              SimHashProjection, TSPProjection, build_projection)
from hashlib_core.papers.pnlp_mixer.configuration import PNLPMixerConfig
from hashlib_core.papers.pnlp_mixer.heads import PNLPMixerForTokenClassification
from hashlib_core.papers.pnlp_mixer.projection import SentenceProjector

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "Bring", "##ing", "fly", "to", "Boston", "##s", "!", "東", "京"]
WORDS = [[4, 5], [6], [8, 9]]                                   # Bringing, fly, Bostons
UNITS = [[VOCAB[i] for i in w] for w in WORDS]
BUILT = {name: build_projection(name, VOCAB) for name in PROJECTIONS}   # defaults: width 512 for all four


def cosine(x: np.ndarray, y: np.ndarray) -> float:
    return float(x @ y / np.linalg.norm(x) / np.linalg.norm(y))


# Golden values, produced once by build_projection(name, VOCAB).features(WORDS) with the defaults (MinHash and
# Binary: 256 hashes; SimHash: 32 hashes x 16 bits; TSP: seed 0): per word, the first six non-zero positions,
# their values, the row's sum and its number of non-zero entries.
GOLDEN = {
    "minhash": [([0, 2, 4, 6, 9, 16], [1, 1, 1, 2, 1, 1], 256, 201),
                ([0, 2, 4, 6, 8, 10], [1, 1, 1, 1, 1, 1], 256, 254),
                ([2, 3, 5, 6, 7, 10], [1, 3, 2, 1, 1, 1], 256, 211)],
    "binary": [([0, 2, 4, 6, 9, 16], [1, 1, 1, 1, 1, 1], 201, 201),
               ([0, 2, 4, 6, 8, 10], [1, 1, 1, 1, 1, 1], 254, 254),
               ([2, 3, 5, 6, 7, 10], [1, 1, 1, 1, 1, 1], 211, 211)],
    "tsp": [([1, 2, 4, 6, 7, 8], [-1, -1, -1, 1, -1, -1], -17, 285),
            ([1, 2, 4, 5, 6, 7], [-1, -1, 1, 1, -1, 1], -4, 252),
            ([0, 3, 4, 5, 8, 9], [-1, -1, 1, 1, 1, -1], 10, 248)],
    "simhash": [([0, 1, 3, 4, 5, 6], [1, 1, 1, -1, 1, -1], -4, 386),
                ([0, 1, 2, 3, 4, 5], [1, 1, 1, 1, 1, -1], 14, 512),
                ([0, 1, 2, 3, 4, 5], [-1, 1, -1, -1, -1, -1], -42, 512)],
}


@pytest.mark.parametrize("name", sorted(PROJECTIONS))
def test_golden_values_width_and_determinism(name):
    projection = BUILT[name]
    assert isinstance(projection, Projection) and projection.name == name and projection.width == 512
    got = projection.features(WORDS)
    assert got.shape == (3, 512) and got.dtype == np.float32
    for row, (positions, values, total, nonzero) in zip(got, GOLDEN[name]):
        assert np.flatnonzero(row)[:6].tolist() == positions and row[positions].tolist() == values
        assert row.sum() == total and np.count_nonzero(row) == nonzero
    assert np.array_equal(projection.features(WORDS), got)                             # same object, again
    assert np.array_equal(build_projection(name, VOCAB).features(WORDS[::-1]), got[::-1])   # fresh object, reordered


@pytest.mark.parametrize("name", sorted(PROJECTIONS))
def test_cached_and_uncached_paths_agree(name):
    projection = BUILT[name]
    words = WORDS + [[11, 12], [1], [10], [8, 9, 9, 5], [7, 7]]
    units = [[VOCAB[i] for i in w] for w in words]
    assert np.array_equal(projection.features(words), projection.features_from_units(units))
    assert projection.features([]).shape == (0, 512) and projection.features_from_units([]).shape == (0, 512)


def test_minhash_projection_is_the_existing_counting_bloom_filter():
    cache = FingerprintCache(MinHashFingerprinter(num_hashes=16), VOCAB)
    projection = MinHashProjection(cache, 32)
    expected = counting_bloom_filter(cache.token_fingerprints(WORDS), 32)
    assert np.array_equal(projection.features(WORDS), expected)
    assert (projection.features(WORDS).sum(axis=1) == 16).all()


def test_binary_is_a_plain_bloom_filter_of_the_same_fingerprint():
    got, counts = BUILT["binary"].features(WORDS), BUILT["minhash"].features(WORDS)
    assert set(np.unique(got)) <= {0.0, 1.0} and (got.sum(axis=1) <= 256).all()
    assert np.array_equal(got, (counts > 0).astype(np.float32))


def test_tsp_is_ternary_with_the_expected_frequencies():
    tsp = BUILT["tsp"]
    assert tsp.surface(["Bring", "##ing"]) == "Bringing"
    assert tsp.surface(["##a##b", "##c"]) == "a##bc"                        # only a piece's leading marker goes
    values = np.concatenate([tsp.hash_surface(f"word{i}") for i in range(400)])       # 204,800 values
    assert set(np.unique(values)) == {-1, 0, 1}
    for value, p in ((-1, 0.25), (0, 0.5), (1, 0.25)):
        assert abs((values == value).mean() - p) < 0.01
    assert not np.array_equal(TSPProjection(VOCAB, seed=1).features(WORDS), tsp.features(WORDS))   # keyed by seed
    small = TSPProjection(VOCAB, cache_size=2)
    first = small.features(WORDS)
    assert len(small._rows) == 2 and np.array_equal(small.features(WORDS), first)      # LRU evicts, rows unchanged


def test_simhash_is_signed_and_locality_sensitive():
    simhash = BUILT["simhash"]
    got = simhash.features(WORDS)
    assert set(np.unique(got)) <= {-1.0, 0.0, 1.0}
    f = simhash.features_from_units([["international", "##ly"], ["international"], ["mountain"],
                                     ["Boston", "##s"], ["Boston"], ["fly"]])
    assert cosine(f[0], f[1]) > 0.8 > 0.2 > abs(cosine(f[0], f[2]))                     # 0.88 vs -0.06
    assert cosine(f[3], f[4]) > cosine(f[3], f[5]) + 0.5                                 # 0.81 vs 0.0
    narrow = SimHashProjection.from_vocab(VOCAB, num_hashes=4, bits_per_hash=8)
    assert narrow.width == 32 and narrow.table.shape == (len(VOCAB), 32)


def test_bad_input_names_the_fix():
    for projection in BUILT.values():
        with pytest.raises(TypeError, match="list of words"):
            projection.features("Bringing")
        with pytest.raises(TypeError, match="unit_ids"):
            projection.features([4, 5])                                 # one word's ids, not a list of words
        with pytest.raises(ValueError, match=r"word 1 has no unit ids.*\[UNK\]"):
            projection.features([[4], []])
        with pytest.raises(TypeError, match="must be ints"):
            projection.features([[4.0, 5.0]])
        with pytest.raises(TypeError, match="must be ints"):
            projection.features([["Bring", "##ing"]])
        with pytest.raises(ValueError, match=r"unit id 13 is outside \[0, 13\).*tokenizer's own vocabulary"):
            projection.features([[4], [13]])
        with pytest.raises(ValueError, match="outside"):
            projection.features([[-1]])
        with pytest.raises(TypeError, match="piece strings"):
            projection.features_from_units([[]])
    with pytest.raises(ValueError, match="unknown projection 'lsh'.*binary"):
        build_projection("lsh", VOCAB)
    with pytest.raises(ValueError, match="at most 31"):
        SimHashProjection(VOCAB, bits_per_hash=32)
    with pytest.raises(ValueError, match="multiple of 4"):
        TSPProjection(VOCAB, width=30)
    with pytest.raises(TypeError, match="from_vocab"):
        BinaryProjection(MinHashFingerprinter(), 512)
    with pytest.raises(ValueError, match="pass only one"):
        MinHashProjection.from_vocab(VOCAB, num_hashes=8, fingerprinter=MinHashFingerprinter(num_hashes=16))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.lists(st.integers(0, len(VOCAB) - 1), min_size=1, max_size=4), max_size=6),
       st.sampled_from(sorted(PROJECTIONS)))
def test_property_shape_determinism_and_row_independence(words, name):
    projection = BUILT[name]
    got = projection.features(words)
    assert got.shape == (len(words), projection.width) and got.dtype == np.float32
    assert np.array_equal(got, projection.features(words))
    for t, ids in enumerate(words):                                     # a word's row does not depend on the others
        assert np.array_equal(got[t], projection.features([ids])[0])


@pytest.mark.parametrize("name", sorted(PROJECTIONS))
def test_sentence_projector_trains_with_every_projection(name):
    projector = SentenceProjector.with_projection(name, VOCAB, max_seq_len=5)
    assert projector.projection.name == name and projector.bloom_size == 512
    batch = projector([["Bringing", "fly", "to", "Boston"], ["fly"] * 7])
    features, mask = batch["input_features"], batch["attention_mask"]
    assert features.shape == (2, 5, 512) and features.dtype == torch.float32
    assert mask.tolist() == [[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]] and torch.count_nonzero(features[0, 4]) == 0
    assert np.array_equal(features[0, :3].numpy(), BUILT[name].features(WORDS[:2] + [[7]]))
    config = PNLPMixerConfig(num_hashes=256, bloom_size=512, max_seq_len=5, hidden_size=8, num_mixer_layers=1,
                             token_mixing_dim=4, channel_mixing_dim=4, classifier_hidden=0, num_labels=3)
    logits = PNLPMixerForTokenClassification(config)(**batch).logits
    logits.sum().backward()
    assert logits.shape == (2, 5, 3) and torch.isfinite(logits).all()


def test_sentence_projector_constructors():
    cache = FingerprintCache(MinHashFingerprinter(num_hashes=16), VOCAB)
    old = SentenceProjector.from_vocab(VOCAB, MinHashFingerprinter(num_hashes=16), bloom_size=32, max_seq_len=4)
    new = SentenceProjector.from_projection(MinHashProjection(cache, 32), max_seq_len=4)
    sentences = [["Bringing", "Boston!"], ["東京", "xyz"]]
    assert torch.equal(old(sentences)["input_features"], new(sentences)["input_features"])
    assert np.array_equal(old.word_fingerprints(["fly"]), new.word_fingerprints(["fly"]))
    tsp = SentenceProjector.with_projection("tsp", VOCAB, max_seq_len=4)
    with pytest.raises(TypeError, match="word_features"):
        tsp.word_fingerprints(["fly"])
    with pytest.raises(ValueError, match="width"):
        SentenceProjector(old.tokenizer, bloom_size=64, max_seq_len=4, projection=BUILT["tsp"])
    with pytest.raises(TypeError, match="cache and bloom_size"):
        SentenceProjector(old.tokenizer, max_seq_len=4)
    with pytest.raises(TypeError, match="must be a Projection"):
        SentenceProjector(old.tokenizer, max_seq_len=4, projection="tsp")
    with pytest.raises(ValueError, match="build the projection from the same vocabulary"):
        SentenceProjector(old.tokenizer, max_seq_len=4, projection=build_projection("tsp", VOCAB + ["extra"]))
