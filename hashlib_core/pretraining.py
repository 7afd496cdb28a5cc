"""Pre-training pieces shared by the encoder chapters (HashFormers' BERT baselines, dynamic hash embeddings).

* :func:`wikitext_lines`: the staged WikiText-2 text as non-empty lines, headings (``= ... =``) dropped;
* :class:`Sequences`: fixed-length windows of a token stream, as a ``Dataset`` of ``int64`` rows;
* :func:`with_specials`: ``<s>`` and ``</s>`` around each row;
* :class:`MLMObjective`: BERT's masked-language-modelling corruption (15% of the tokens: 80% ``<mask>``, 10% random,
  10% kept) with its own seeded generator, special ids (below :data:`~hashlib_core.bpe.NUM_SPECIAL_TOKENS`) never
  chosen.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from hashlib_core.bpe import BOS_ID, EOS_ID, NUM_SPECIAL_TOKENS

__all__ = ["wikitext_lines", "Sequences", "with_specials", "MLMObjective"]


def wikitext_lines(split: str = "validation", max_words: int = 0) -> list[str]:
    """Non-empty lines of a staged WikiText-2 split without its headings; stop after ``max_words`` words (0: all)."""
    from hashlib_core.data import load_wikitext2

    out, words = [], 0
    for line in load_wikitext2()[split]["text"]:
        line = line.strip()
        if not line or line.startswith("="):
            continue
        out.append(line)
        words += len(line.split())
        if max_words and words >= max_words:
            break
    return out


class Sequences(torch.utils.data.Dataset):
    """Fixed-length chunks of a unit stream, as rows of unit indices (``int64``)."""

    def __init__(self, unit_ids: np.ndarray, length: int) -> None:
        rows = len(unit_ids) // length
        if rows == 0:
            raise ValueError(f"the corpus has {len(unit_ids)} units, fewer than one sequence of {length}")
        self.rows = torch.from_numpy(np.ascontiguousarray(unit_ids[: rows * length].reshape(rows, length)))

    def __len__(self) -> int:
        return self.rows.shape[0]

    def __getitem__(self, i: int) -> torch.Tensor:
        return self.rows[i]


def with_specials(body: torch.Tensor) -> torch.Tensor:
    """``(rows, L)`` ids -> ``(rows, L + 2)`` with ``<s>`` first and ``</s>`` last."""
    rows = body.shape[0]
    return torch.cat([torch.full((rows, 1), BOS_ID, dtype=torch.long), body,
                      torch.full((rows, 1), EOS_ID, dtype=torch.long)], dim=1)


class MLMObjective:
    """BERT-MLM's corruption (15% of tokens: 80% ``<mask>``, 10% random, 10% kept) with its own seeded generator."""

    def __init__(self, tokenizer: Any, seed: int) -> None:
        from transformers import DataCollatorForLanguageModeling

        self.collator = DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15)
        self.collator.generator = torch.Generator().manual_seed(seed)

    def __call__(self, batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        ids = batch["input_ids"]
        input_ids, labels = self.collator.torch_mask_tokens(ids.clone(), special_tokens_mask=ids.lt(NUM_SPECIAL_TOKENS))
        return {**batch, "input_ids": input_ids, "labels": labels}
