"""Shuffle+Random collator (HashFormers §3.6, Yamaguchi et al. 2021)."""
from __future__ import annotations

import pytest
import torch

from hashlib_core.papers.hashformers.objectives import IGNORE, KEPT, RANDOM, SHUFFLED, ShuffleRandomCollator


def index_batch(batch: int = 64, length: int = 512, seed: int = 0) -> dict[str, torch.Tensor]:
    """<s> words </s> <pad>..., with word ids in [5, 1005) and random lengths."""
    gen = torch.Generator().manual_seed(seed)
    ids = torch.full((batch, length), 1)
    mask = torch.zeros((batch, length), dtype=torch.long)
    for b in range(batch):
        n = int(torch.randint(length // 2, length - 1, (1,), generator=gen))
        ids[b, 0], ids[b, n + 1] = 0, 2
        ids[b, 1 : n + 1] = torch.randint(5, 1005, (n,), generator=gen)
        mask[b, : n + 2] = 1
    return {"input_ids": ids, "attention_mask": mask}


def bits_batch(batch: int = 32, length: int = 256) -> dict[str, torch.Tensor]:
    base = index_batch(batch, length, seed=1)
    words = base["input_ids"] >= 5
    bits = torch.randint(0, 2, (batch, length, 128), generator=torch.Generator().manual_seed(2), dtype=torch.uint8)
    bits[~words] = 0
    return {"input_ids": torch.where(words, 5, base["input_ids"]), "attention_mask": base["attention_mask"],
            "hash_bits": bits}


def test_index_mode_labels_and_rates():
    batch = index_batch()
    out = ShuffleRandomCollator(0.1, random_id_range=(5, 1005), seed=0)(batch)
    labels, special = out["labels"], batch["input_ids"] < 5
    assert torch.equal(labels == IGNORE, special)
    # no special token (or padding) is ever manipulated
    assert torch.equal(out["input_ids"][special], batch["input_ids"][special])
    # kept tokens are unchanged; random ones come from the id range
    kept = labels == KEPT
    assert torch.equal(out["input_ids"][kept], batch["input_ids"][kept])
    rand = labels == RANDOM
    assert out["input_ids"][rand].min() >= 5 and out["input_ids"][rand].max() < 1005
    # rates over ~24k words: shuffled ~ p = 0.10, random ~ p (1 - p) = 0.09 (5 sigma ~ 0.01)
    words = (~special).sum().item()
    assert abs((labels == SHUFFLED).sum().item() / words - 0.10) < 0.01
    assert abs(rand.sum().item() / words - 0.09) < 0.01
    assert set(out) == {"input_ids", "attention_mask", "labels"}


def test_shuffled_tokens_come_from_one_batch_permutation():
    batch = index_batch(batch=8, length=64, seed=4)
    original = batch["input_ids"].clone()
    collator = ShuffleRandomCollator(0.3, random_id_range=(5, 1005), seed=11)
    out = collator(batch)
    assert torch.equal(batch["input_ids"], original)  # input not modified
    perm = torch.randperm(64, generator=torch.Generator().manual_seed(11))  # the collator's first draw
    shuffled = out["labels"] == SHUFFLED
    source = original[:, perm]
    expected = torch.where(source < 5, original, source)  # special sources put the token back
    assert torch.equal(out["input_ids"][shuffled], expected[shuffled])


def test_bit_mode():
    batch = bits_batch()
    out = ShuffleRandomCollator(0.1, seed=3)(batch)
    labels = out["labels"]
    special = batch["input_ids"] != 5
    assert torch.equal(labels == IGNORE, special)
    assert torch.equal(out["input_ids"], batch["input_ids"])  # only the codes change in bit mode
    assert torch.count_nonzero(out["hash_bits"][special]) == 0
    kept = labels == KEPT
    assert torch.equal(out["hash_bits"][kept], batch["hash_bits"][kept])
    words = (~special).sum().item()
    assert abs((labels == SHUFFLED).sum().item() / words - 0.10) < 0.015
    assert abs((labels == RANDOM).sum().item() / words - 0.09) < 0.015
    # per-token rate ~ U(0,1): random codes have widely varying bit counts
    counts = out["hash_bits"][labels == RANDOM].sum(-1).float()
    assert counts.std() > 20  # fair bits would give std ~ 5.7
    fair = ShuffleRandomCollator(0.1, random_bits="uniform", seed=3)(batch)
    fair_counts = fair["hash_bits"][fair["labels"] == RANDOM].sum(-1).float()
    assert abs(fair_counts.mean().item() - 64) < 3 and fair_counts.std() < 10


def test_deterministic_given_seed_and_list_input():
    batch = index_batch(batch=4, length=32, seed=7)
    examples = [{k: v[i] for k, v in batch.items()} for i in range(4)]
    a = ShuffleRandomCollator(random_id_range=(5, 50), seed=5)(examples)
    b = ShuffleRandomCollator(random_id_range=(5, 50), seed=5)(batch)
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_zero_probability_keeps_everything():
    batch = index_batch(batch=4, length=32)
    out = ShuffleRandomCollator(0.0, random_id_range=(5, 50))(batch)
    assert torch.equal(out["input_ids"], batch["input_ids"])
    assert set(out["labels"].unique().tolist()) == {IGNORE, KEPT}


def test_validation():
    with pytest.raises(ValueError, match="random_id_range"):
        ShuffleRandomCollator()(index_batch(batch=2, length=8))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        ShuffleRandomCollator(1.5)
    with pytest.raises(ValueError, match="random_id_range"):
        ShuffleRandomCollator(random_id_range=(10, 5))
    with pytest.raises(ValueError, match="same input_ids shape"):
        ShuffleRandomCollator(random_id_range=(5, 9))([{"input_ids": [0, 5, 2]}, {"input_ids": [0, 2]}])
    with pytest.raises(ValueError, match="empty"):
        ShuffleRandomCollator(random_id_range=(5, 9))([])
