"""The Shuffle+Random (S+R) pre-training objective (HashFormers §3.6; Yamaguchi et al., EMNLP 2021).

HashFormers cannot use masked language modelling: with an unbounded vocabulary there is no softmax over tokens
(§3.6). They pre-train with S+R, a three-way token classification: was each token kept (label 0), shuffled to
another position (1) or replaced by a random token (2)? :class:`ShuffleRandomCollator` corrupts a batch and
labels it; :class:`hashlib_core.papers.hashformers.modeling.HashFormerForShuffleRandom` (and BERT-S+R,
``build_baseline("shuffle_random", ...)``) predict the labels.

The procedure is the released one (``HUIYINXUE/hashformer``, ``src/model/data_collator.py``, adapted from
``gucci-j/light-transformer-emnlp2021``):

1. one random permutation of the positions, shared by the whole batch (``torch.randperm(L)``); where the source
   position holds a special token (or padding) the token is put back, so such a "shuffle" leaves it unchanged;
2. every non-special token is shuffled with probability p (label 1);
3. every non-special token that was not shuffled is replaced with probability p (label 2) by a random token: a
   uniform id from ``random_id_range`` (Emb variants and BPE baselines), or a random T-bit code (Pool/Add/Proj):
   ``random_bits="per_token_rate"`` draws a rate ~ U(0, 1) per token and then each bit with that rate (the released
   Proj collator), ``"uniform"`` draws fair bits (equivalent to the released Pool collator's uniform chunk ids);
4. special tokens and padding get label -100 (ignored by the loss).

So about p of the tokens are shuffled and p(1 - p) replaced. **p is not set anywhere in the released HashFormers
code.** We use p = 0.10, the default ``manipulate_prob`` of Yamaguchi et al.'s released pre-training script
(``src/pretrainer.py``: "The ratio of shuffled / random tokens over all tokens. The resulting manipulated ratio will
be twice larger"), i.e. ~10% shuffled + ~9% random.

Labels follow the decision, not the outcome (as released): a shuffled token whose source was special, or equal to
itself, keeps label 1 although it did not change. "Special" means any id below 5 (``<s> <pad> </s> <unk>
<mask>``) in index mode, and any id other than the hashed-word marker 5 in bit mode; the released Emb collator uses
``id < 4`` (``<mask>`` is never produced by the word-level tokenizer, so the two agree on its outputs).
"""
from __future__ import annotations

from typing import Any, Literal, Mapping, Sequence

import torch

from hashlib_core.papers.hashformers.tokenization import HASHED_TOKEN_ID, NUM_SPECIAL_TOKENS
from hashlib_core.pretraining import MLMObjective  # re-exported: the BERT-MLM baseline

__all__ = ["MLMObjective", "DEFAULT_MANIPULATE_PROB", "KEPT", "SHUFFLED", "RANDOM", "IGNORE", "ShuffleRandomCollator"]

#: p: Yamaguchi et al. (2021)'s released default (``manipulate_prob=0.10``); not set in the HashFormers code.
DEFAULT_MANIPULATE_PROB = 0.10
KEPT, SHUFFLED, RANDOM, IGNORE = 0, 1, 2, -100


def _stack(examples: Sequence[Mapping[str, Any]], key: str) -> torch.Tensor:
    values = [torch.as_tensor(example[key]) for example in examples]
    shapes = {tuple(v.shape) for v in values}
    if len(shapes) != 1:
        raise ValueError(f"all examples must have the same {key} shape (pad them first), got {sorted(shapes)}")
    return torch.stack(values)


class ShuffleRandomCollator:
    """Corrupt a batch for S+R and return it with ``labels`` (see the module docstring).

    Parameters
    ----------
    manipulate_prob:
        p, the shuffle probability and the replacement probability of the remaining tokens.
    random_id_range:
        ``(low, high)`` of the uniform random ids in index mode, e.g. ``(5, 5 + N)`` for HashFormer-Emb(N) or
        ``(5, V)`` for a BPE vocabulary of size V; required when the batch has no ``hash_bits``.
    random_bits:
        How random T-bit codes are drawn in bit mode (``"per_token_rate"`` or ``"uniform"``).
    seed:
        Seed of the collator's own ``torch.Generator``; successive calls continue its stream.

    Call it on a list of examples (dicts of equal-length ``input_ids``, ``attention_mask`` and optionally
    ``hash_bits``) or on a batch dict such as :class:`hashlib_core.papers.hashformers.tokenization.HashFormerTokenizer` returns. The
    output has the corrupted ``input_ids`` (index mode) or ``hash_bits`` (bit mode), the unchanged other keys,
    and ``labels`` ``(B, L)``. Inputs are not modified. It works on CPU tensors (collation runs in the data
    loader); move the batch to the accelerator afterwards.
    """

    def __init__(
        self,
        manipulate_prob: float = DEFAULT_MANIPULATE_PROB,
        *,
        random_id_range: tuple[int, int] | None = None,
        random_bits: Literal["per_token_rate", "uniform"] = "per_token_rate",
        seed: int = 0,
    ) -> None:
        if isinstance(manipulate_prob, bool) or not isinstance(manipulate_prob, (int, float)):
            raise TypeError(f"manipulate_prob must be a float, got {type(manipulate_prob).__name__}")
        if not 0.0 <= manipulate_prob <= 1.0:
            raise ValueError(f"manipulate_prob must be in [0, 1], got {manipulate_prob}")
        if random_id_range is not None:
            low, high = random_id_range
            if not (isinstance(low, int) and isinstance(high, int)) or not 0 <= low < high:
                raise ValueError(
                    f"random_id_range must be (low, high) ints with 0 <= low < high, got {random_id_range}"
                )
        if random_bits not in ("per_token_rate", "uniform"):
            raise ValueError(f"random_bits must be 'per_token_rate' or 'uniform', got {random_bits!r}")
        self.manipulate_prob = float(manipulate_prob)
        self.random_id_range = random_id_range
        self.random_bits = random_bits
        self.generator = torch.Generator().manual_seed(seed)

    def _batch(self, examples: Sequence[Mapping[str, Any]] | Mapping[str, Any]) -> dict[str, torch.Tensor]:
        if isinstance(examples, Mapping):
            batch = {k: torch.as_tensor(v).clone() for k, v in examples.items()}
        else:
            if not examples:
                raise ValueError("cannot collate an empty list of examples")
            batch = {k: _stack(examples, k) for k in examples[0]}
        if "input_ids" not in batch:
            raise ValueError("the batch needs input_ids")
        if batch["input_ids"].dim() != 2:
            raise ValueError(f"input_ids must be (batch, length), got shape {tuple(batch['input_ids'].shape)}")
        return batch

    def __call__(self, examples: Sequence[Mapping[str, Any]] | Mapping[str, Any]) -> dict[str, torch.Tensor]:
        batch = self._batch(examples)
        input_ids = batch["input_ids"].long()
        bit_mode = "hash_bits" in batch
        if bit_mode:
            payload = batch["hash_bits"]
            if payload.shape[:2] != input_ids.shape or payload.dim() != 3:
                raise ValueError(
                    f"hash_bits must be (batch, length, T) matching input_ids, got {tuple(payload.shape)}"
                )
            special = input_ids.ne(HASHED_TOKEN_ID)
        else:
            if self.random_id_range is None:
                raise ValueError("index mode needs random_id_range=(low, high) to draw random ids, e.g. (5, 5 + N)")
            payload = input_ids
            special = input_ids.lt(NUM_SPECIAL_TOKENS)
        gen = self.generator
        shape = input_ids.shape

        # 1. one permutation of positions for the whole batch; sources that are special put the token back
        perm = torch.randperm(shape[1], generator=gen)
        shuffled = payload[:, perm].clone()
        source_special = special[:, perm]
        shuffled[source_special] = payload[source_special]
        # 2. shuffle with probability p
        p = torch.full(shape, self.manipulate_prob)
        shuffle_mask = torch.bernoulli(p, generator=gen).bool() & ~special
        # 3. replace with probability p among the tokens not shuffled
        random_mask = torch.bernoulli(p, generator=gen).bool() & ~shuffle_mask & ~special
        corrupted = payload.clone()
        corrupted[shuffle_mask] = shuffled[shuffle_mask]
        count = int(random_mask.sum())
        if bit_mode:
            num_bits = payload.shape[-1]
            if self.random_bits == "per_token_rate":
                rate = torch.rand((count, 1), generator=gen).expand(count, num_bits)
            else:
                rate = torch.full((count, num_bits), 0.5)
            corrupted[random_mask] = torch.bernoulli(rate, generator=gen).to(payload.dtype)
        else:
            low, high = self.random_id_range
            corrupted[random_mask] = torch.randint(low, high, (count,), generator=gen)

        labels = torch.full(shape, KEPT, dtype=torch.long)
        labels[shuffle_mask] = SHUFFLED
        labels[random_mask] = RANDOM
        labels[special] = IGNORE
        batch["hash_bits" if bit_mode else "input_ids"] = corrupted
        batch["labels"] = labels
        return batch
