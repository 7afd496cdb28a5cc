"""Length-grouped batches: rows of similar length in one batch, so a batch padded to its longest row wastes little.

A shuffled batch of short classification sentences is padded to its longest member: on SST-2's training phrases
(13 pieces on average, 40 at most) most of a random batch's positions are padding, and a small encoder's step costs
what its padded length costs. :class:`LengthGroupedBatches` is the usual remedy (Hugging Face's
``group_by_length``, fairseq's length buckets): each epoch shuffles the rows, cuts the permutation into *groups* of
``group`` batches, sorts each group by length, cuts it into batches and shuffles the order of all the epoch's batches.
Every row is still seen once an epoch, each batch is a random draw among rows of about its length, and no ordering
by length survives across the epoch's batches (a group sorted but left in order would feed the longest rows
first).

The permutations come from torch's global generator at the moment the first batch is asked for, as
:class:`torch.utils.data.RandomSampler`'s do, so the shared training loop's per-epoch seeding makes them
reproducible. Cost: O(n log g) an epoch for n rows and groups of g rows.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence

import torch

__all__ = ["LengthGroupedBatches"]


class LengthGroupedBatches(torch.utils.data.Sampler[list[int]]):
    """Batches of row indices (a ``batch_sampler`` for :class:`torch.utils.data.DataLoader`) grouped by ``lengths``.

    ``group`` batches are sorted together (1: plain shuffled batches, the lengths ignored); ``drop_last`` drops the
    epoch's one short batch, as the DataLoader's own option does."""

    def __init__(self, lengths: Sequence[int], batch_size: int, group: int = 50, drop_last: bool = True) -> None:
        for name, value in (("batch_size", batch_size), ("group", group)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"LengthGroupedBatches: {name} must be a positive int, got {value!r}")
        self.lengths = torch.as_tensor(list(lengths), dtype=torch.long)
        if self.lengths.dim() != 1 or not len(self.lengths):
            raise ValueError("LengthGroupedBatches: lengths must be a non-empty sequence of row lengths, one per row")
        if bool((self.lengths < 0).any()):
            raise ValueError("LengthGroupedBatches: lengths must be >= 0")
        self.batch_size, self.group, self.drop_last = batch_size, group, drop_last

    def __len__(self) -> int:
        n = len(self.lengths)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def __iter__(self) -> Iterator[list[int]]:
        n, size = len(self.lengths), self.batch_size
        order = torch.randperm(n)
        keep = len(self) * size if self.drop_last else n
        order = order[:keep]                            # the epoch's short remainder, dropped before grouping
        span = self.group * size
        batches = []
        for start in range(0, keep, span):
            chunk = order[start:start + span]
            chunk = chunk[torch.sort(self.lengths[chunk], descending=True, stable=True).indices]
            batches += [chunk[i:i + size].tolist() for i in range(0, len(chunk), size)]
        for b in torch.randperm(len(batches)).tolist():
            yield batches[b]
