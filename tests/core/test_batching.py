"""Length-grouped batches: every row once an epoch, little padding, reproducible under the training loop's seeding."""
from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hashlib_core.batching import LengthGroupedBatches


def _epoch(sampler: LengthGroupedBatches, seed: int) -> list[list[int]]:
    torch.manual_seed(seed)
    return list(sampler)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 50), min_size=1, max_size=300), st.integers(1, 17), st.integers(1, 6), st.booleans(),
       st.integers(0, 2**31 - 1))
def test_every_row_once_and_batch_sizes(lengths, batch, group, drop_last, seed):
    sampler = LengthGroupedBatches(lengths, batch, group=group, drop_last=drop_last)
    batches = _epoch(sampler, seed)
    assert len(batches) == len(sampler)
    rows = [i for b in batches for i in b]
    assert len(rows) == len(set(rows))
    if drop_last:
        assert all(len(b) == batch for b in batches)
        assert len(rows) == len(lengths) // batch * batch
    else:
        assert sorted(rows) == list(range(len(lengths)))
        assert sum(len(b) < batch for b in batches) <= 1


def test_same_seed_same_epoch_and_other_seed_differs():
    lengths = [i % 37 for i in range(1000)]
    sampler = LengthGroupedBatches(lengths, 16, group=8)
    assert _epoch(sampler, 3) == _epoch(sampler, 3)
    assert _epoch(sampler, 3) != _epoch(sampler, 4)


def test_grouping_cuts_padding_and_group_one_is_a_plain_shuffle():
    gen = torch.Generator().manual_seed(0)
    lengths = torch.randint(3, 41, (4000,), generator=gen).tolist()

    def padded(group: int) -> int:
        batches = _epoch(LengthGroupedBatches(lengths, 64, group=group), 0)
        return sum(len(b) * max(lengths[i] for i in b) for b in batches)

    plain, grouped = padded(1), padded(50)
    assert grouped < 0.7 * plain                  # uniform lengths 3..40: about 22 vs 40 positions a row
    # group 1 keeps the shuffled batches of a plain sampler: the same rows in each batch as an ungrouped cut
    torch.manual_seed(5)
    order = torch.randperm(4000)
    expected = {frozenset(order[i:i + 64].tolist()) for i in range(0, 4000 - 4000 % 64, 64)}
    assert {frozenset(b) for b in _epoch(LengthGroupedBatches(lengths, 64, group=1), 5)} == expected


def test_batch_order_is_shuffled_across_the_epoch():
    lengths = list(range(640))
    batches = _epoch(LengthGroupedBatches(lengths, 10, group=64), 1)    # one group: sorted, then cut
    longest = [max(lengths[i] for i in b) for b in batches]
    assert longest != sorted(longest, reverse=True) and longest != sorted(longest)
    assert all(max(lengths[i] for i in b) - min(lengths[i] for i in b) == 9 for b in batches)


@pytest.mark.parametrize("kwargs, match", [
    ({"lengths": [], "batch_size": 4}, "non-empty"),
    ({"lengths": [1, -2], "batch_size": 4}, ">= 0"),
    ({"lengths": [1, 2], "batch_size": 0}, "batch_size must be a positive int"),
    ({"lengths": [1, 2], "batch_size": 2, "group": 0}, "group must be a positive int"),
    ({"lengths": [1, 2], "batch_size": True}, "batch_size must be a positive int"),
])
def test_bad_arguments_name_the_problem(kwargs, match):
    with pytest.raises(ValueError, match=match):
        LengthGroupedBatches(**kwargs)


def test_works_as_a_dataloader_batch_sampler():
    data = [[1] * n for n in (5, 1, 3, 2, 4, 6)]
    loader = torch.utils.data.DataLoader(data, batch_sampler=LengthGroupedBatches([len(r) for r in data], 2, group=3),
                                         collate_fn=lambda rows: [len(r) for r in rows])
    torch.manual_seed(0)
    got = list(loader)
    assert sorted(n for b in got for n in b) == [1, 2, 3, 4, 5, 6]
