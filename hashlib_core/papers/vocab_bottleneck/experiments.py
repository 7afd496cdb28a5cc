"""Chapter "The vocabulary bottleneck": how much of a model is its vocabulary?

For each model shape the papers and the blog talk about, build the model **from its configuration** with
``transformers`` (on the ``meta`` device, so no weights are allocated) and count:

* the input token-embedding matrix ``V x d`` (``get_input_embeddings()``),
* an untied output head over the vocabulary (``get_output_embeddings()``; zero when tied to the input matrix),
* every parameter (tied tensors counted once).

The claims this reproduces (transcribed in ``data/paper_tables/vocabulary_bottleneck.csv``):
HashFormers §1 (BERT-base 23.4M of 110M; RoBERTa-base 38M of 125M), the dynamic-hash-embeddings blog (GPT-2
about 30%, Mistral-7B about 2.5%), and the model sizes of MultiHashFormer's Table 7 (Qwen3 backbones at 100M,
1B and 3B with a 32,768-token vocabulary).

Run it as a command (any profile; ``--materialize_up_to=N`` allocates real weights for models with at most N
parameters and checks that their count equals the meta-device count)::

    python -m hashlib_core.papers.vocab_bottleneck --profile paper
"""
from __future__ import annotations

from typing import Sequence

import pandas as pd
import torch

from hashlib_core.chapter import Chapter, RunContext
from hashlib_core.model_shapes import MODEL_SPECS, ModelSpec
from hashlib_core.papers.vocab_bottleneck.profiles import PROFILES
from hashlib_core.params import count_parameters, embedding_breakdown, instantiate_on_meta

__all__ = ["CHAPTER", "embedding_shares"]

CHAPTER = Chapter("vocab_bottleneck", "The vocabulary bottleneck", PROFILES)


def embedding_shares(
    specs: Sequence[ModelSpec] = MODEL_SPECS, *, materialize_up_to: int = 0, progress: bool = False
) -> pd.DataFrame:
    """One row per model: total parameters, vocabulary parameters and their share (in %).

    ``counted_on`` says whether the row was cross-checked on a model with real (bfloat16) weights; a cross-check
    that disagrees with the meta-device count raises ``RuntimeError``.
    """
    rows = []
    iterator = specs
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(specs, desc="models", unit="model")
    for spec in iterator:
        model = instantiate_on_meta(spec.build)
        b = embedding_breakdown(model)
        counted_on = "meta"
        if b.total <= materialize_up_to:
            previous = torch.get_default_dtype()
            torch.set_default_dtype(torch.bfloat16)
            try:
                real = spec.build()
            finally:
                torch.set_default_dtype(previous)
            real_total = count_parameters(real)
            del real
            if real_total != b.total:
                raise RuntimeError(f"{spec.name}: meta count {b.total} != materialised count {real_total}")
            counted_on = "meta + cpu (bf16)"
        rows.append({
            "model": spec.name,
            "family": spec.family,
            "architecture": spec.architecture,
            "vocab_size": b.vocab_size,
            "hidden_size": b.hidden_size,
            "tied_head": b.tied,
            "total_params": b.total,
            "input_embedding_params": b.input_embedding,
            "output_head_params": b.output_embedding,
            "vocabulary_params": b.vocabulary_parameters,
            "input_embedding_share_%": 100.0 * b.input_share,
            "vocabulary_share_%": 100.0 * b.vocabulary_share,
            "counted_on": counted_on,
            "config": spec.config_note,
        })
        del model
    return pd.DataFrame(rows)


@CHAPTER.experiment("shares", outputs=("embedding_shares",))
def _shares(ctx: RunContext) -> dict:
    """Every model's parameters and vocabulary share (real-weight cross-checks up to ``materialize_up_to``)."""
    return {"embedding_shares": embedding_shares(materialize_up_to=ctx.profile.materialize_up_to,
                                                 progress=ctx.progress)}


from hashlib_core.papers.vocab_bottleneck.claims import CLAIMS  # noqa: E402  (registered last: it reads the rest)

CLAIMS.register(CHAPTER)
