"""Model sizes: EELBERT's "1.2 MB, 15x smaller than BERT-tiny" and the blog's napkin arithmetic, from configurations.

:func:`paper_sizes` builds every model of :data:`~hashlib_core.papers.dynamic_embeddings.profiles.PAPER_MODELS` at
BERT's vocabulary (30,522 WordPiece tokens, 512 positions, 2 token types, a pooler: ``BertModel``'s layout) on the
``meta`` device and counts its parameters: megabytes are 10^6 bytes, at 4 bytes per parameter (float32) and 1
(int8 weights, scales not counted). :func:`napkin` recomputes the blog's formulas (embedding matrix in float16,
divided by 1024 x 1024) from the configurations of the models it names, with the share of all weights.
"""
from __future__ import annotations

import pandas as pd

from hashlib_core.params import count_parameters, embedding_breakdown, instantiate_on_meta
from hashlib_core.papers.dynamic_embeddings.modeling import DynamicBertConfig, DynamicBertModel
from hashlib_core.papers.dynamic_embeddings.profiles import PAPER_MODELS, DynamicEmbeddingsProfile, ModelSpec

__all__ = ["BERT_VOCAB", "paper_model", "paper_sizes", "napkin"]

#: BERT's uncased WordPiece vocabulary (bert-base-uncased, BERT-tiny)
BERT_VOCAB = 30522
_MB = 1e6


def paper_model(spec: ModelSpec, profile: DynamicEmbeddingsProfile) -> DynamicBertModel:
    """``spec`` as BERT lays it out (30,522 tokens, 512 positions, 2 token types, pooler), on the meta device."""
    config = DynamicBertConfig(vocab_size=BERT_VOCAB, max_position_embeddings=512, type_vocab_size=2,
                               max_n=profile.max_n, projection=profile.projection, **spec.config_fields())
    return instantiate_on_meta(lambda: DynamicBertModel(config))


def paper_sizes(profile: DynamicEmbeddingsProfile) -> pd.DataFrame:
    """One row per paper-scale model: parameters, embedding-table parameters, megabytes and the ratio to BERT-tiny."""
    rows = []
    for spec in PAPER_MODELS:
        model = paper_model(spec, profile)
        total = count_parameters(model)
        rows.append({"model": spec.name, "embedding": spec.embedding, "layers": spec.layers, "hidden": spec.hidden,
                     "vocab_size": BERT_VOCAB, "total_params": total, "emb_params": model.embedding_parameter_count(),
                     "fp32_MB": 4 * total / _MB, "int8_MB": total / _MB, "note": spec.note})
    table = pd.DataFrame(rows)
    tiny = table.loc[table["model"] == "BERT-tiny", "total_params"].iloc[0]
    table["emb_share_%"] = 100.0 * table["emb_params"] / table["total_params"]
    table["BERT-tiny_over_model"] = tiny / table["total_params"]
    return table


def _blog_models() -> list[tuple[str, object]]:
    from hashlib_core.model_shapes import MODEL_SPECS

    wanted = {"GPT-2": "GPT2", "Mistral-7B": "Mistral 7B", "BERT-base": "BERT-base"}
    return [(wanted[s.name], s.build) for s in MODEL_SPECS if s.name in wanted]


def napkin() -> pd.DataFrame:
    """The blog's formula ``d x V x 2 / 1024^2`` (float16 MiB) and the embedding's share of all weights, for the
    models the blog names (and BERT-tiny, whose share is what the blog's "88%" matches), from their configurations."""
    from hashlib_core.papers.dynamic_embeddings.profiles import MODELS

    builds = _blog_models() + [("BERT-tiny", lambda: paper_model(MODELS[0], DynamicEmbeddingsProfile()))]
    rows = []
    for name, build in builds:
        b = embedding_breakdown(instantiate_on_meta(build))
        rows.append({"model": name, "vocab_size": b.vocab_size, "hidden_size": b.hidden_size, "tied_head": b.tied,
                     "total_params": b.total, "input_embedding_params": b.input_embedding,
                     "embedding_fp16_MiB": 2 * b.input_embedding / 2**20, "model_fp16_MiB": 2 * b.total / 2**20,
                     "model_fp16_GiB": 2 * b.total / 2**30,
                     "input_embedding_share_%": 100.0 * b.input_share,
                     "vocabulary_share_%": 100.0 * b.vocabulary_share})
    return pd.DataFrame(rows)
