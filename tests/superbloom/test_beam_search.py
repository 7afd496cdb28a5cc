"""Algorithm 1: certified answers equal exhaustive top-k, the certificate never lies, approximate mode, bad input."""
from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hashlib_core.decoding.beam import beam_topk, exhaustive_topk, score_ids
from hashlib_core.hashing.bloom import BloomHashMaps


def _distributions(maps: BloomHashMaps, batch: int, sharpness: float, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(batch, maps.num_hashes, maps.tokens_per_map, generator=g) * sharpness
    return torch.log_softmax(logits, dim=-1)


def _true_kth(log_probs, maps, k):
    every = score_ids(log_probs, maps, torch.arange(maps.num_ids).expand(log_probs.shape[0], -1))
    return every.sort(dim=1, descending=True).values[:, :k]


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 4), st.integers(1, 12), st.integers(20, 300), st.integers(1, 10), st.sampled_from([0.5, 2.0, 6.0]),
       st.integers(0, 10**6), st.integers(1, 3))
def test_certified_answers_equal_exhaustive_top_k(m, alpha, num_ids, k, sharpness, seed, max_iterations):
    if alpha > num_ids or k > num_ids:
        return
    maps = BloomHashMaps(num_ids, alpha, m, seed=seed)
    lp = _distributions(maps, 6, sharpness, seed)
    exact = exhaustive_topk(lp, maps, k)
    truth = _true_kth(lp, maps, k)
    torch.testing.assert_close(exact.scores, truth)                        # exhaustive is exact (scores; ties aside)
    beam = beam_topk(lp, maps, k, max_iterations=max_iterations)
    for row in range(6):
        if beam.certified[row]:                                            # the certificate never claims wrongly
            torch.testing.assert_close(beam.scores[row], truth[row])
            assert torch.equal(score_ids(lp[row:row + 1], maps, beam.ids[row:row + 1])[0], beam.scores[row])
    unlimited = beam_topk(lp, maps, k)                                     # no iteration limit: always exact
    assert unlimited.certified.all()
    torch.testing.assert_close(unlimited.scores, truth)


def test_certificate_on_peaked_distributions_scores_few_candidates():
    maps = BloomHashMaps(100_000, 50, 2, seed=0)
    lp = _distributions(maps, 8, 8.0, 1)
    out = beam_topk(lp, maps, 10)
    assert out.certified.all() and (out.scored < maps.num_ids // 10).all()
    # ids that share their token in both maps tie exactly, so compare scores (the order among ties is free)
    torch.testing.assert_close(out.scores, exhaustive_topk(lp, maps, 10).scores, rtol=0, atol=0)


def test_approximate_mode_reports_uncertified_rows():
    maps = BloomHashMaps(5000, 10, 2, seed=0)
    # every map ranks its tokens on a gentle ramp, in its own random order: a top-1 token's ids land far down the
    # other map, while the bound (both second-best values) stays high, so beam 1 cannot certify
    g = torch.Generator().manual_seed(0)
    ramp = -0.01 * torch.arange(maps.tokens_per_map, dtype=torch.float32)
    lp = torch.stack([torch.stack([ramp[torch.randperm(maps.tokens_per_map, generator=g)] for _ in range(2)])
                      for _ in range(3)])
    out = beam_topk(lp, maps, 5, beam=1, max_iterations=1)
    assert not out.certified.any() and (out.iterations == 1).all() and (out.beam == 1).all()
    exact = beam_topk(lp, maps, 5, beam=1)                                 # unlimited: widens until certified
    assert exact.certified.all() and (exact.iterations > 1).all() and (exact.beam > 1).all()
    torch.testing.assert_close(exact.scores, exhaustive_topk(lp, maps, 5).scores, rtol=0, atol=0)
    flat = beam_topk(torch.zeros(1, 2, maps.tokens_per_map), maps, 5, beam=1)   # all tied: any 5 are a top 5
    assert flat.certified.all() and flat.iterations.item() == 1


def test_rows_that_certify_late_are_searched_on_their_own_and_stay_exact():
    """A peaked row certifies at once while ramp rows widen past the first ranking (RANK_AHEAD tokens), so later
    iterations search a subset of the rows and rank them again: every answer must still equal exhaustive top k."""
    from hashlib_core.decoding.beam import RANK_AHEAD

    maps = BloomHashMaps(5000, 10, 2, seed=0)
    g = torch.Generator().manual_seed(1)
    ramp = -0.01 * torch.arange(maps.tokens_per_map, dtype=torch.float32)
    ramps = torch.stack([torch.stack([ramp[torch.randperm(maps.tokens_per_map, generator=g)] for _ in range(2)])
                         for _ in range(2)])
    lp = torch.cat([ramps[:1], _distributions(maps, 1, 8.0, 3), ramps[1:]])
    out = beam_topk(lp, maps, 200, beam=1)
    assert out.certified.all()
    assert out.iterations[1] < out.iterations[0] and out.beam[0] > RANK_AHEAD and out.beam[2] > RANK_AHEAD
    torch.testing.assert_close(out.scores, exhaustive_topk(lp, maps, 200).scores, rtol=0, atol=0)


def test_duplicates_are_scored_once():
    maps = BloomHashMaps(200, 4, 3, seed=5)
    lp = _distributions(maps, 2, 3.0, 2)
    out = beam_topk(lp, maps, 50, beam=40)
    for row in out.ids:
        real = row[row >= 0]
        assert real.unique().numel() == real.numel()


def test_bad_input_names_the_fix():
    maps = BloomHashMaps(100, 10, 2)
    lp = torch.zeros(1, 2, 10)
    with pytest.raises(ValueError, match=r"k must be an int in \[1, 100\]"):
        beam_topk(lp, maps, 101)
    with pytest.raises(ValueError, match=r"shape \(batch, 2, 10\)"):
        beam_topk(torch.zeros(1, 3, 10), maps, 1)
    with pytest.raises(ValueError, match="batch size 0"):
        exhaustive_topk(torch.zeros(0, 2, 10), maps, 1)
    with pytest.raises(ValueError, match="NaN"):
        beam_topk(torch.full((1, 2, 10), float("nan")), maps, 1)
    with pytest.raises(TypeError, match="float tensor"):
        beam_topk(torch.zeros(1, 2, 10, dtype=torch.long), maps, 1)


def test_plus_infinity_is_refused_not_ranked_first():
    """+inf beside -inf summed to NaN, ranked first and came back certified: now refused by both searches; -inf alone
    (a token with probability 0) stays accepted and ranks its ids last."""
    maps = BloomHashMaps(100, 10, 2, seed=1)
    lp = torch.log_softmax(torch.randn(1, 2, 10, generator=torch.Generator().manual_seed(0)), dim=-1)
    bad = lp.clone()
    bad[0, 0, 3], bad[0, 1, 4] = float("inf"), float("-inf")
    for search in (beam_topk, exhaustive_topk):
        with pytest.raises(ValueError, match=r"\+inf.*log_softmax"):
            search(bad, maps, 5)
    with pytest.raises(ValueError, match=r"contains 2\.5, and a log-probability is at most 0"):
        beam_topk(lp + 2.5 - lp.max(), maps, 5)                         # logits, not log-probabilities
    zero = lp.clone()
    zero[0, 0, 3] = float("-inf")
    out = exhaustive_topk(zero, maps, 100)
    hit = maps.table[:, 0] == 3
    assert torch.isneginf(out.scores[0, -int(hit.sum()):]).all() and not torch.isnan(out.scores).any()
    assert set(out.ids[0, -int(hit.sum()):].tolist()) == set(torch.nonzero(hit).flatten().tolist())
    with pytest.raises(ValueError, match="beam must be"):
        beam_topk(lp, maps, 1, beam=0)
    with pytest.raises(ValueError, match="growth"):
        beam_topk(lp, maps, 1, growth=1)
