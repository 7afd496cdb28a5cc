"""The rankings through Superbloom's hash: the image of scores through the maps (by hand, scale-free, sharpened, bad
input refused), the hashed target ranks against an exact-arithmetic reference (hypothesis), the power chosen on
validation, and the rows at alpha 1 equal to the unhashed rankings."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hashlib_core.hashing.bloom import BloomHashMaps
from hashlib_core.papers.superbloom.yardsticks import pair_counts, target_ranks
from hashlib_core.papers.superbloom.yardsticks_hashed import (COOCCURRENCE_HASHED, POPULARITY_HASHED, HashImage,
                                                              hashed_popularity_ranks, hashed_rows,
                                                              hashed_yardstick_rows)
from tests.superbloom.test_yardsticks import draw_segment, draw_sets, toy_resources

# Two maps of 4 ids into 2 tokens: hash 0 sends {0, 1} -> 0 and {2, 3} -> 1, hash 1 sends {0, 2} -> 0, {1, 3} -> 1.
TABLE = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])


def test_the_image_by_hand():
    scores = np.array([[3.0, 1.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]])
    out = HashImage(TABLE)(scores)
    # row 0 (scaled by its largest score, 3): hash 0's tokens get 4/3 and 0, hash 1's 1 and 1/3
    #   -> id 0: log 4/3 + log 1, id 1: log 4/3 + log 1/3, ids 2, 3: -inf
    assert np.allclose(out[0, :2], [np.log(4 / 3), np.log(4 / 9)]) and np.isneginf(out[0, 2:]).all()
    assert np.allclose(out[1], np.log(4.0))                             # uniform scores stay uniform
    assert np.allclose(HashImage(TABLE)(7.0 * scores), out)             # the scale does not matter
    # squared: masses 10/9 and 0, 1 and 1/9 -> id 0: log 10/9, id 1: log 10/81
    assert np.allclose(HashImage(TABLE, power=2.0)(scores)[0, :2], [np.log(10 / 9), np.log(10 / 81)])
    assert np.isneginf(HashImage(TABLE)(np.zeros((1, 4)))).all()        # nothing known: every token empty


def test_the_image_writes_to_out_and_sharpens_as_a_power():
    from hashlib_core.papers.superbloom.yardsticks_hashed import _sharpen

    scores = np.random.default_rng(3).random((5, 4))
    image = HashImage(TABLE)
    out = np.empty((5, 4))
    assert image(scores, out=out) is out and np.allclose(out, image(scores))
    assert np.allclose(image(scores[:2]), image(scores)[:2])           # a smaller batch after a larger one
    for power in (0.5, 1.0, 2.0, 3.0, 8.0, 32.0):
        values = scores.copy()
        _sharpen(values, power)
        assert np.allclose(values, scores ** power, rtol=1e-12, atol=0)


def test_the_image_refuses_bad_input():
    with pytest.raises(ValueError, match="non-negative scores"):
        HashImage(TABLE)(-np.ones((1, 4)))
    with pytest.raises(ValueError, match="non-negative scores"):
        HashImage(TABLE)(np.full((1, 4), np.nan))
    with pytest.raises(ValueError, match=r"scores must be \(B, N = 4\)"):
        HashImage(TABLE)(np.ones((1, 3)))
    with pytest.raises(ValueError, match="non-negative integer tokens"):
        HashImage(TABLE - 1)
    with pytest.raises(ValueError, match="non-negative integer tokens"):
        HashImage(TABLE.astype(float))
    with pytest.raises(ValueError, match=r"table must be \(N, m\)"):
        HashImage(TABLE[:, 0])
    with pytest.raises(ValueError, match="power must be a positive finite number"):
        HashImage(TABLE, power=0.0)
    with pytest.raises(ValueError, match="power must be a positive finite number"):
        HashImage(TABLE).with_power(np.inf)


def test_one_id_per_token_keeps_the_order_at_any_power():
    scores = np.random.default_rng(0).random((3, 9))
    table = np.stack([np.random.default_rng(1).permutation(9), np.random.default_rng(2).permutation(9)], axis=1)
    for power in (0.5, 1.0, 4.0):
        image = HashImage(table).with_power(power)
        assert (np.argsort(-image(scores), axis=1) == np.argsort(-scores, axis=1)).all()


def test_hashed_popularity_ranks_by_hand():
    frequency = np.array([5, 0, 3, 1])
    # hash 0: tokens 5, 4; hash 1: tokens 8, 1 -> id 0: 40, 1: 5, 2: 32, 3: 4 -> order 0, 2, 1, 3
    assert hashed_popularity_ranks(np.array([0, 1, 2, 3]), frequency, HashImage(TABLE)).tolist() == [0, 2, 1, 3]
    # ties in the hashed score go to the more frequent id, then the smaller
    assert hashed_popularity_ranks(np.arange(4), np.array([1, 1, 1, 1]), HashImage(TABLE)).tolist() == [0, 1, 2, 3]
    assert hashed_popularity_ranks(np.array([3]), np.array([1, 1, 1, 2]), HashImage(TABLE)).tolist() == [0]


def _exact_hashed_ranks(segment, position, sets, num_ids, table):
    """The target's rank under the hashed count scores in exact arithmetic (Fractions; the product of the token
    masses orders ids as the sum of their logs does), every id ranked, the segment's own ids with no score:
    ``(lo, hi)``, both the rank the tie rule gives unless an id ties with the target by arithmetic coincidence
    (a nonzero score from other tokens), which float sums may put on either side: ``hi`` counts those too. Ties of
    the same tokens or of zero scores follow the rule exactly."""
    context = [int(i) for k, i in enumerate(segment) if k != position]
    f = [sum(i in s for s in sets) for i in range(num_ids)]
    mass = [Fraction(0) if j in context else sum((Fraction(sum(i in s and j in s for s in sets), f[i])
                                                  for i in context if f[i]), Fraction(0)) for j in range(num_ids)]
    m = table.shape[1]
    token_mass = [{t: sum((mass[i] for i in range(num_ids) if table[i, k] == t), Fraction(0))
                   for t in set(table[:, k].tolist())} for k in range(m)]
    product = [np.prod([token_mass[k][table[j, k]] for k in range(m)]) for j in range(num_ids)]
    target = int(segment[position])
    others = [j for j in range(num_ids) if j != target]
    ahead = [j for j in others if product[j] > product[target]]
    tied = [j for j in others if product[j] == product[target]]
    coincidental = [j for j in tied if product[j] and (table[j] != table[target]).any()]
    by_rule = [j for j in tied if j not in coincidental and (-f[j], j) < (-f[target], target)]
    return len(ahead) + len(by_rule), len(ahead) + len(by_rule) + len(coincidental)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_hashed_target_ranks_equal_an_exact_reference(data):
    n, sets = draw_sets(data)
    seg, where = draw_segment(data, n)
    table = BloomHashMaps(n, data.draw(st.integers(1, n)), data.draw(st.integers(1, 3)),
                          data.draw(st.integers(0, 5))).table.numpy()
    c, f = pair_counts(sets, n)
    fast = int(target_ranks([seg], np.array([seg[where]]), np.array([where]), c, f, image=HashImage(table))[0])
    lo, hi = _exact_hashed_ranks(seg, where, sets, n, table)
    assert lo <= fast <= hi


def test_hashed_target_ranks_on_a_coincidental_tie():
    # float sums may split an exact tie: both tokens of the one map get 5/3 in exact arithmetic
    sets = [np.array(sorted(s)) for s in ({0, 1}, {0, 2, 7}, {0, 8, 4}, {1, 4, 7}, {1, 3, 4, 5, 7, 8})]
    table = BloomHashMaps(10, 5, 1, 5).table.numpy()
    seg = np.array([0, 1, 7])
    c, f = pair_counts(sets, 10)
    lo, hi = _exact_hashed_ranks(seg, 1, sets, 10, table)
    # target 1 ties by rule with 2, 3, 6 and its own segment's 7 (same token, and after it); the other token's ids
    # 0 (the segment's own, ranked), 4, 5, 8, 9 tie by coincidence
    assert (lo, hi) == (0, 5)
    assert lo <= target_ranks([seg], np.array([1]), np.array([1]), c, f, image=HashImage(table))[0] <= hi


def test_hashed_rows_at_alpha_one_equal_the_unhashed_rankings():
    from hashlib_core.papers.superbloom.training import popularity_recall

    res = toy_resources()
    rows = hashed_rows(res, (1, 2), 2, lambda alpha: (0, 1), (1, 2))
    assert [(r["alpha"], r["seed"], r["name"]) for r in rows] == [
        (a, s, n) for a in (1, 2) for s in (0, 1) for n in (POPULARITY_HASHED, COOCCURRENCE_HASHED)]
    assert [rows[0][k] for k in ("rec@1", "rec@2")] == [popularity_recall(res, (1, 2))[k] for k in ("rec@1", "rec@2")]
    # the unhashed count ranking's recall (own ids ranked but scoreless: behind every id with a score here)
    assert [rows[1][k] for k in ("rec@1", "rec@2")] == [50.0, 100.0]
    assert rows[4]["tokens_per_map"] == 3 and rows[4]["num_hashes"] == 2 and rows[5]["segments"] == 2
    assert all(r["power"] in (0.5, 1.0, 2.0, 4.0, 8.0) for r in rows)
    frame = hashed_yardstick_rows(["toy"], lambda name: res, (1, 2), lambda name: (2, 3),
                                  lambda name, alpha: (0, 1) if alpha == 2 else (0,), 2)
    assert frame["alpha"].tolist() == [2, 2, 2, 2, 3, 3] and frame["seed"].tolist() == [0, 0, 1, 1, 0, 0]
    frame = frame[frame["alpha"] == 2].iloc[:2]
    assert frame["name"].tolist() == [POPULARITY_HASHED, COOCCURRENCE_HASHED] and frame["alpha"].tolist() == [2, 2]
    assert frame["dataset"].tolist() == ["toy", "toy"] and frame["seed"].tolist() == [0, 0]


def test_the_power_is_chosen_on_validation_and_ties_go_to_the_first():
    from hashlib_core.papers.superbloom.yardsticks_hashed import _chosen

    image = HashImage(TABLE)
    # a validation score that peaks at power 4
    ranks_at = {0.5: np.array([3, 3]), 1.0: np.array([2, 2]), 4.0: np.array([0, 1]), 8.0: np.array([0, 1])}
    chosen = _chosen(lambda im: ranks_at[im.power], image, (0.5, 1.0, 4.0, 8.0), (1, 2))
    assert chosen.power == 4.0 and chosen.table is image.table          # 8 ties with 4: the earlier wins
    with pytest.raises(ValueError, match="powers must name at least one"):
        _chosen(lambda im: np.zeros(1), image, (), (1,))
    res = toy_resources()
    assert [r["power"] for r in hashed_rows(res, (2,), 2, lambda a: (0,), (1, 2), powers=(2.0,))] == [2.0, 2.0]
