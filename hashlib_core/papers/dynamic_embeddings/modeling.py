"""EELBERT-style models (Cohn et al., EMNLP 2023 Industry): BERT whose input embedding table is replaced by the
dynamic hash embedding, as Hugging Face models.

:class:`DynamicBertConfig` is a ``BertConfig`` with the embedding's settings: ``embedding="dynamic"`` builds
:class:`~hashlib_core.embeddings.dynamic.DynamicHashEmbedding` over ``vocab_tokens`` (the tokenizer's strings, in id
order) where BERT has its ``V x d`` ``word_embeddings``; ``embedding="table"`` is the unchanged BERT (the baseline
of the same backbone). Position and token-type embeddings, LayerNorm and the encoder are BERT's.

Pre-training with masked-language modelling needs a softmax over the vocabulary:
:class:`DynamicBertForMaskedLM` keeps BERT's MLM head with its own (untied) ``d x V`` decoder. It is used in
pre-training only and is not part of the fine-tuned model (our reading: the EELBERT abstract says nothing of the
output layer). :class:`DynamicBertForSequenceClassification` is the GLUE model (BERT's pooler + classifier; one
label is regression with MSE, as STS-B). ``save_pretrained`` / ``from_pretrained`` round-trip: the vocabulary strings
travel in the config and the cached vectors are recomputed, not stored.
"""
from __future__ import annotations

from typing import Any, Sequence

import torch.nn.functional as F
from torch import nn
from transformers import BertConfig, BertForMaskedLM, BertForSequenceClassification, BertModel
from transformers.modeling_outputs import MaskedLMOutput

from hashlib_core.embeddings.dynamic import DynamicHashEmbedding
from hashlib_core.hashing.rolling import DEFAULT_BASE, DEFAULT_MODULUS

__all__ = ["EMBEDDINGS", "DynamicBertConfig", "DynamicBertModel", "DynamicBertForMaskedLM",
           "DynamicBertForSequenceClassification", "model_size_bytes"]

EMBEDDINGS = ("dynamic", "table")


class DynamicBertConfig(BertConfig):
    """``BertConfig`` plus the dynamic embedding: ``embedding`` ("dynamic" or "table"), ``vocab_tokens`` (the token
    strings in id order; ``None`` builds a model for counting parameters only), ``max_n``, ``hash_buckets`` (b),
    ``hash_base`` (p), ``hash_modulus`` (M), ``hash_seed``, ``projection`` (a learned ``Linear(d, d)``) and
    ``ngram_hash`` (the n-gram hash family: ``"rolling"``, the blog's, or ``"md5"``)."""

    model_type = "dynamic_bert"

    def __init__(self, embedding: str = "dynamic", vocab_tokens: Sequence[str] | None = None, max_n: int = 3,
                 hash_buckets: int = DEFAULT_MODULUS, hash_base: int = DEFAULT_BASE,
                 hash_modulus: int = DEFAULT_MODULUS, hash_seed: int = 42, projection: bool = False,
                 ngram_hash: str = "rolling", **kwargs: Any) -> None:
        if embedding not in EMBEDDINGS:
            raise ValueError(f"embedding must be one of {EMBEDDINGS}, got {embedding!r}")
        if vocab_tokens is not None:
            vocab_tokens = list(vocab_tokens)
            kwargs["vocab_size"] = len(vocab_tokens)
        if embedding == "dynamic":
            kwargs["tie_word_embeddings"] = False  # there is no input matrix to tie the MLM decoder to
        super().__init__(**kwargs)
        self.embedding, self.vocab_tokens, self.max_n = embedding, vocab_tokens, max_n
        self.hash_buckets, self.hash_base, self.hash_modulus = hash_buckets, hash_base, hash_modulus
        self.hash_seed, self.projection, self.ngram_hash = hash_seed, projection, ngram_hash


def _install(model: nn.Module, config: DynamicBertConfig) -> None:
    """Swap the base model's ``word_embeddings`` for the dynamic embedding (a "table" model is left as BERT)."""
    if not isinstance(config, DynamicBertConfig):
        raise TypeError(f"expected a DynamicBertConfig, got {type(config).__name__}")
    if config.embedding != "dynamic":
        return
    model.base_model.embeddings.word_embeddings = DynamicHashEmbedding(
        config.vocab_tokens, config.hidden_size, num_embeddings=config.vocab_size, max_n=config.max_n,
        buckets=config.hash_buckets, base=config.hash_base, modulus=config.hash_modulus, seed=config.hash_seed,
        projection=config.projection, ngram_hash=getattr(config, "ngram_hash", "rolling"))


class _EmbeddingCount:
    def embedding_parameter_count(self) -> int:
        """Parameters that build a token's vector: the ``V x d`` table, or the dynamic embedding's projection (0
        without one). The MLM decoder of pre-training is not counted (it is not part of the fine-tuned model)."""
        words = self.base_model.embeddings.word_embeddings
        if isinstance(words, DynamicHashEmbedding):
            return words.embedding_parameter_count()
        return words.weight.numel()


class DynamicBertModel(_EmbeddingCount, BertModel):
    config_class = DynamicBertConfig

    def __init__(self, config: DynamicBertConfig, add_pooling_layer: bool = True) -> None:
        super().__init__(config, add_pooling_layer=add_pooling_layer)
        _install(self, config)


class DynamicBertForMaskedLM(_EmbeddingCount, BertForMaskedLM):
    """BERT's MLM model over the dynamic (or table) embedding. Given ``labels``, the vocabulary softmax is computed
    at the masked positions only (``labels != -100``), the only ones the loss reads: with BERT's 30,522 tokens
    the ``d x V`` decoder at every position would cost several times the whole tiny encoder. The loss equals
    ``BertForMaskedLM``'s; ``logits`` then holds the masked positions' rows only, in order (``(masked, V)``).
    Without ``labels`` it is ``BertForMaskedLM`` unchanged (logits at every position)."""

    config_class = DynamicBertConfig

    def __init__(self, config: DynamicBertConfig) -> None:
        super().__init__(config)
        _install(self, config)

    def forward(self, input_ids: Any = None, attention_mask: Any = None, token_type_ids: Any = None,
                labels: Any = None, **kwargs: Any) -> Any:
        if labels is None:
            return super().forward(input_ids=input_ids, attention_mask=attention_mask,
                                   token_type_ids=token_type_ids, **kwargs)
        if kwargs:
            raise TypeError(f"with labels, DynamicBertForMaskedLM takes input_ids, attention_mask and "
                            f"token_type_ids only; got {sorted(kwargs)}")
        hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                           token_type_ids=token_type_ids).last_hidden_state
        picked = labels != -100
        scores = self.cls(hidden[picked])
        if scores.shape[0] == 0:      # nothing masked: a zero loss that still reaches every parameter's graph
            return MaskedLMOutput(loss=hidden.sum() * 0.0, logits=scores)
        return MaskedLMOutput(loss=F.cross_entropy(scores.float(), labels[picked]), logits=scores)


class DynamicBertForSequenceClassification(_EmbeddingCount, BertForSequenceClassification):
    config_class = DynamicBertConfig

    def __init__(self, config: DynamicBertConfig) -> None:
        super().__init__(config)
        _install(self, config)


def model_size_bytes(model: nn.Module, bytes_per_parameter: float = 4.0) -> float:
    """Bytes of the model's parameters (tied tensors once) at ``bytes_per_parameter`` (4: float32, 1: int8
    weights; scales and buffers not counted). The dynamic embedding stores nothing but its projection."""
    seen, total = set(), 0
    for p in model.parameters():
        if id(p) not in seen:
            seen.add(id(p))
            total += p.numel()
    return total * bytes_per_parameter
