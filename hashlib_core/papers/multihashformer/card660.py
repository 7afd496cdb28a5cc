"""Rare-word similarity on Card-660 (MultiHashFormer Table 2 and Appendix B, Tables 5-6).

Each word is fed alone, as ``<eos>`` + ``" " + word`` (multi-word entries have their ``_`` replaced by spaces), so it
is read the way a word inside running text is. A word's vector is the hidden state of its last token (the paper)
or the mean over its tokens (our ablation), from the last or the second-to-last layer; the cosine similarity of
each pair is correlated (Pearson, Spearman) with the human scores.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
import torch
from torch import nn

from hashlib_core.modeling import hidden_states
from hashlib_core.papers.multihashformer.lm import LanguageModels, padded_batches

__all__ = ["word_sequences", "word_vectors", "pair_similarities", "card660"]


def word_sequences(lms: LanguageModels, words: Sequence[str]) -> list[list[int]]:
    """``<eos>`` followed by the tokens of ``" " + word`` (``_`` of multi-word entries read as spaces)."""
    texts = [" " + w.replace("_", " ").strip() for w in words]
    return [[lms.eos_id] + e.ids for e in lms.tokenizer.encode_batch(texts, add_special_tokens=False)]


@torch.no_grad()
def word_vectors(lms: LanguageModels, model: nn.Module, words: Sequence[str]) -> dict[tuple[str, str], torch.Tensor]:
    """Vectors of ``words`` keyed by (layer, pooling): layer ``last`` (final hidden state, after the norm) or
    ``second_to_last`` (output of layer L-1); pooling ``last_token`` (the paper) or ``mean`` (of the word's tokens,
    the ``<eos>`` context excluded)."""
    model.eval()
    out: dict[tuple[str, str], list[torch.Tensor]] = {}
    for ids, mask in padded_batches(word_sequences(lms, words), 64, lms.eos_id):
        ids, mask = ids.to(lms.device), mask.to(lms.device)
        states = hidden_states(model, ids, mask)
        lengths = mask.sum(1)
        word_mask = mask.clone().float()
        word_mask[:, 0] = 0.0                                  # the <eos> context is not part of the word
        for layer, h in (("last", states[-1]), ("second_to_last", states[-2])):
            h = h.float()
            last = h[torch.arange(h.shape[0], device=h.device), lengths - 1]
            mean = (h * word_mask[..., None]).sum(1) / word_mask.sum(1, keepdim=True)
            out.setdefault((layer, "last_token"), []).append(last.cpu())
            out.setdefault((layer, "mean"), []).append(mean.cpu())
    return {k: torch.cat(v) for k, v in out.items()}


def pair_similarities(lms: LanguageModels, model: nn.Module, w1: Sequence[str], w2: Sequence[str]
                      ) -> dict[tuple[str, str], np.ndarray]:
    """Cosine similarity of each (w1[i], w2[i]) pair, per (layer, pooling)."""
    vec1, vec2 = word_vectors(lms, model, w1), word_vectors(lms, model, w2)
    return {k: torch.nn.functional.cosine_similarity(vec1[k], vec2[k], dim=1).numpy() for k in vec1}


def card660(lms: LanguageModels, labels: Sequence[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 2 (correlations on all 660 pairs) and Appendix B (the printed example pairs, our similarities)."""
    from scipy.stats import pearsonr, spearmanr

    from hashlib_core.data import load_card660
    from hashlib_core.results import load_paper_table

    pairs = load_card660()
    human = np.asarray(pairs["score"], dtype=float)
    examples = pd.concat([load_paper_table("multihashformer_table5").assign(table="Table 5"),
                          load_paper_table("multihashformer_table6").assign(table="Table 6")], ignore_index=True)
    examples = examples.drop_duplicates(subset=["word_1", "word_2"]).reset_index(drop=True)
    rows, example_cols = [], {}
    for label in labels:
        spec = lms.spec(label)
        model = lms.model(spec)
        sims = pair_similarities(lms, model, pairs["word1"], pairs["word2"])
        for (layer, pooling), sim in sims.items():
            rows.append({"model": spec.label, "layer": layer, "pooling": pooling,
                         "pearson_r": float(pearsonr(sim, human)[0]), "spearman_rho": float(spearmanr(sim, human)[0]),
                         "pairs": len(sim)})
        ex = pair_similarities(lms, model, list(examples["word_1"]), list(examples["word_2"]))
        example_cols[spec.label] = ex[("second_to_last", "last_token")]
    ex_table = examples[["table", "category", "word_1", "word_2", "Human"]].copy()
    for label, values in example_cols.items():
        ex_table[f"ours {label}"] = np.round(values, 4)
    return pd.DataFrame(rows), ex_table
