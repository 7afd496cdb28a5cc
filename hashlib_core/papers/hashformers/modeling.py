"""HashFormer models (Xue & Aletras, EMNLP 2022), as Hugging Face models.

A HashFormer is a RoBERTa/BERT-base encoder (§4.2: 12 layers, d = 768, 3,072, 12 heads, sequence length 512) whose
token-embedding matrix is replaced by a hashed embedding of whole words (§3):

=============  =====================================================================================================
``emb``        Emb(N): ``nn.Embedding(5 + N, d)``; input ids are ``hash % N + 5`` (MD5 §3.2 or LSH §3.3).
``pool``       Pool (Eq. 1) of the word's T-bit code (MD5 or LSH, §3.5).
``add``        Add (Eq. 2).
``proj``       Proj (Eq. 3).
``linear``     A dense projection of the bit code: ProFormer's LSH projection (baseline, §4.1 (iv); see
               :func:`~hashlib_core.papers.hashformers.configuration.proformer_config`).
=============  =====================================================================================================

As in the released code (``src/model/model.py``), the compressed variants add a small special-token embedding
``nn.Embedding(6, d)`` whose rows 0-4 are ``<s> <pad> </s> <unk> <mask>`` and whose row 5 (:data:`HASHED_TOKEN_ID`)
is added to every hashed word; words carry id 5 in ``input_ids`` and their code in ``hash_bits`` ``(B, L, T)``.
Position (RoBERTa numbering from ``pad + 1``, 514 rows) and token-type embeddings are added, then LayerNorm and
dropout, then a ``transformers`` RoBERTa encoder.

Heads: :class:`HashFormerForSequenceClassification` (GLUE; RoBERTa's dense-tanh-dense head on ``<s>``; one label
means regression with MSE, as STS-B) and :class:`HashFormerForShuffleRandom` (the Shuffle+Random pre-training
objective of Yamaguchi et al. (2021), §3.6: dropout + ``Linear(d, 3)`` per token; labels in
:mod:`hashlib_core.papers.hashformers.objectives`).

The configuration is :class:`~hashlib_core.papers.hashformers.configuration.HashFormerConfig`; the BERT baselines
(§4.1) are in :mod:`hashlib_core.papers.hashformers.baselines`.
"""
from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import CrossEntropyLoss, MSELoss
from transformers import PreTrainedModel
from transformers import initialization as init
from transformers.modeling_outputs import BaseModelOutput, SequenceClassifierOutput, TokenClassifierOutput
from transformers.models.roberta.modeling_roberta import RobertaClassificationHead, RobertaEncoder

from hashlib_core.embeddings.hashed import (
    AdditiveEmbedding,
    HashBucketEmbedding,
    LinearBitProjection,
    PearsonProjection,
    PoolEmbedding,
)
from hashlib_core.modeling import check_token_batch, run_encoder
from hashlib_core.papers.hashformers.configuration import EMBEDDING_TYPES, HashFormerConfig
from hashlib_core.papers.hashformers.tokenization import HASHED_TOKEN_ID, NUM_SPECIAL_TOKENS, PAD_ID

__all__ = [
    "EMBEDDING_TYPES",
    "HashFormerConfig",
    "HashFormerEmbeddings",
    "HashFormerPreTrainedModel",
    "HashFormerModel",
    "HashFormerForSequenceClassification",
    "HashFormerForShuffleRandom",
    "NUM_SR_LABELS",
]

#: Shuffle+Random classes: 0 kept, 1 shuffled, 2 random (§3.6).
NUM_SR_LABELS = 3


def sinusoidal_table(num_positions: int, dim: int) -> torch.Tensor:
    """The fixed position encodings of Vaswani et al. (2017): sin on even, cos on odd dimensions."""
    position = torch.arange(num_positions, dtype=torch.float32)[:, None]
    frequency = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(10000.0) / dim))
    table = torch.zeros(num_positions, dim)
    table[:, 0::2] = torch.sin(position * frequency)
    table[:, 1::2] = torch.cos(position * frequency[: dim // 2])
    return table


def _check_ids(name: str, ids: torch.Tensor, shape: tuple[int, ...], upper: int, fix: str) -> None:
    """``ids`` must be an integer tensor of ``shape`` with values in ``[0, upper)`` (one min/max per call)."""
    if not isinstance(ids, torch.Tensor) or ids.dtype not in (torch.int64, torch.int32):
        got = ids.dtype if isinstance(ids, torch.Tensor) else type(ids).__name__
        raise TypeError(f"{name} must be an int64 tensor, got {got}; convert with torch.as_tensor(x, dtype=torch.long)")
    if tuple(ids.shape) != tuple(shape):
        raise ValueError(f"{name} must have the shape of input_ids {tuple(shape)}, got {tuple(ids.shape)}")
    if ids.numel():
        low, high = (int(v) for v in torch.aminmax(ids))
        if low < 0 or high >= upper:
            raise ValueError(f"{name} must lie in [0, {upper}), got values in [{low}, {high}]; {fix}")


def _check_mask(mask: torch.Tensor, shape: tuple[int, ...]) -> None:
    if not isinstance(mask, torch.Tensor) or tuple(mask.shape) != shape:
        got = tuple(mask.shape) if isinstance(mask, torch.Tensor) else type(mask).__name__
        raise ValueError(f"attention_mask must be a tensor of the shape of input_ids {shape}, got {got}; pass the "
                         f"tokenizer's attention_mask (1 = token, 0 = padding) or None")
    if mask.dtype != torch.bool and not bool(((mask == 0) | (mask == 1)).all()):
        raise ValueError(f"attention_mask must hold only 0 (padding) and 1 (token), got "
                         f"{torch.unique(mask[(mask != 0) & (mask != 1)])[:5].tolist()}")


def _check_input_ids(input_ids: torch.Tensor) -> None:
    """A HashFormer batch: a non-empty ``(batch, length)`` integer tensor (the tokenizer's ``input_ids``)."""
    check_token_batch(input_ids, convert="HashFormerTokenizer(...)(texts)['input_ids'] or "
                                         "torch.as_tensor(ids, dtype=torch.long)",
                      empty_fix="tokenize at least one text (HashFormerTokenizer adds <s> and </s>)")


def _position_ids(input_ids: torch.Tensor) -> torch.Tensor:
    """RoBERTa numbering: tokens get ``pad + 1, pad + 2, ...``, padding keeps ``pad`` (fairseq ``make_positions``)."""
    mask = input_ids.ne(PAD_ID).long()
    return torch.cumsum(mask, dim=1) * mask + PAD_ID


class HashFormerEmbeddings(nn.Module):
    """Word (hashed), special-token, position and token-type embeddings, then LayerNorm and dropout."""

    def __init__(self, config: HashFormerConfig) -> None:
        super().__init__()
        d = config.hidden_size
        self.embedding_type = config.embedding_type
        self.num_bits = config.num_bits
        if config.embedding_type == "emb":
            self.word_embeddings = HashBucketEmbedding(config.num_buckets, d, NUM_SPECIAL_TOKENS, padding_idx=PAD_ID)
            self.special_token_embeddings = None
        else:
            rows = NUM_SPECIAL_TOKENS if config.embedding_type == "linear" else NUM_SPECIAL_TOKENS + 1
            self.special_token_embeddings = nn.Embedding(rows, d, padding_idx=PAD_ID)
            if config.embedding_type == "pool":
                self.word_embeddings = PoolEmbedding(
                    config.num_bits, d, config.pool_chunk_bits, config.pool_codeword_dropout
                )
            elif config.embedding_type == "add":
                self.word_embeddings = AdditiveEmbedding(config.num_bits, d, config.add_scale,
                                                          config.add_shared_gradient, config.add_storage)
            elif config.embedding_type == "proj":
                self.word_embeddings = PearsonProjection(config.num_bits, d)
            else:
                self.word_embeddings = LinearBitProjection(config.num_bits, d)
        if config.position_embedding_type == "learned":
            self.position_embeddings = nn.Embedding(config.max_position_embeddings, d, padding_idx=PAD_ID)
        else:
            self.position_embeddings = None
            self.register_buffer("sinusoidal_positions", sinusoidal_table(config.max_position_embeddings, d),
                                 persistent=False)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, d)
        self.LayerNorm = nn.LayerNorm(d, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.vocab_size = config.vocab_size
        self.max_positions = config.max_position_embeddings
        self.type_vocab_size = config.type_vocab_size

    def word_parameter_count(self) -> int:
        """Parameters that build the embedding of a hashed word: HashFormers Appendix B's ``#EmbParams``.

        Counted from this module's tensors: the hashed rows of Emb's table (special-token rows excluded), or all
        parameters of the compressed module minus its padding codeword (Pool) plus the one special-token row that
        is added to every word (the hashed-word marker, row 5; absent for ``linear``). Position and token-type
        embeddings are excluded, as Appendix B says.
        """
        total = self.word_embeddings.embedding_parameter_count()
        if self.special_token_embeddings is not None and self.special_token_embeddings.num_embeddings > HASHED_TOKEN_ID:
            total += self.special_token_embeddings.weight[HASHED_TOKEN_ID].numel()
        return total

    def forward(
        self,
        input_ids: torch.Tensor,
        hash_bits: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
    ) -> torch.Tensor:
        _check_input_ids(input_ids)
        low, high = (int(v) for v in torch.aminmax(input_ids))
        if low < 0 or high >= self.vocab_size:
            raise ValueError(
                f"input_ids must lie in [0, {self.vocab_size}) for embedding_type={self.embedding_type!r}, got "
                f"[{low}, {high}]; Emb takes hash % N + 5, the other types take special ids 0-4 and "
                f"{HASHED_TOKEN_ID} for words"
            )
        if self.special_token_embeddings is None:
            if hash_bits is not None:
                raise ValueError("embedding_type='emb' takes hashed ids in input_ids; do not pass hash_bits")
            embeddings = self.word_embeddings.embedding(input_ids)  # ids checked above
        else:
            if hash_bits is None or hash_bits.shape != (*input_ids.shape, self.num_bits):
                got = None if hash_bits is None else tuple(hash_bits.shape)
                raise ValueError(
                    f"embedding_type={self.embedding_type!r} needs hash_bits of shape "
                    f"{(*input_ids.shape, self.num_bits)} (batch, length, T), got {got}"
                )
            if self.embedding_type == "linear":
                active = input_ids.ge(NUM_SPECIAL_TOKENS)
                special_ids = torch.where(active, torch.full_like(input_ids, PAD_ID), input_ids)
            else:
                active = input_ids.eq(HASHED_TOKEN_ID)
                special_ids = input_ids
            embeddings = self.special_token_embeddings(special_ids) + self.word_embeddings(hash_bits, active)
        if position_ids is None:
            position_ids = _position_ids(input_ids)
            if int(position_ids.max()) >= self.max_positions:
                raise ValueError(
                    f"input_ids has {input_ids.shape[1]} positions but the model numbers at most "
                    f"{self.max_positions - PAD_ID - 1} tokens (max_position_embeddings={self.max_positions}); "
                    f"truncate, e.g. HashFormerTokenizer(max_length={self.max_positions - PAD_ID - 1})"
                )
        else:
            _check_ids("position_ids", position_ids, tuple(input_ids.shape), self.max_positions,
                       "positions start at pad + 1 = 2 (RoBERTa numbering); leave position_ids None")
        if self.position_embeddings is not None:
            embeddings = embeddings + self.position_embeddings(position_ids)
        else:
            embeddings = embeddings + self.sinusoidal_positions[position_ids].to(embeddings.dtype)
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        else:
            _check_ids("token_type_ids", token_type_ids, tuple(input_ids.shape), self.type_vocab_size,
                       f"the model has type_vocab_size={self.type_vocab_size}; pass zeros or leave it None")
        embeddings = embeddings + self.token_type_embeddings(token_type_ids)
        return self.dropout(self.LayerNorm(embeddings))


class HashFormerPreTrainedModel(PreTrainedModel):
    """Weight initialisation and loading for HashFormer models (``from_pretrained`` on a local folder)."""

    config_class = HashFormerConfig
    base_model_prefix = "hashformer"
    supports_gradient_checkpointing = False
    _supports_sdpa = True
    _supports_attention_backend = True
    _no_split_modules = ["HashFormerEmbeddings", "RobertaLayer"]

    def embedding_parameter_count(self) -> int:
        """HashFormers Appendix B's ``#EmbParams`` of this model (see :meth:`HashFormerEmbeddings.word_parameter_count`)."""
        return self.base_model.embeddings.word_parameter_count()

    @torch.no_grad()
    def _init_weights(self, module: nn.Module) -> None:
        super()._init_weights(module)
        std = self.config.initializer_range
        if isinstance(module, PoolEmbedding):
            init.trunc_normal_(module.chunk_weights, mean=0.0, std=std, a=-2 * std, b=2 * std)
        elif isinstance(module, AdditiveEmbedding):
            module.init_normal_(std)
        elif isinstance(module, (PearsonProjection, LinearBitProjection)):
            init.normal_(module.weight, mean=0.0, std=std)
        elif isinstance(module, HashFormerEmbeddings) and module.position_embeddings is None:
            init.copy_(module.sinusoidal_positions, sinusoidal_table(*module.sinusoidal_positions.shape))


class HashFormerModel(HashFormerPreTrainedModel):
    """The bare HashFormer encoder: embeddings + RoBERTa layers; returns ``last_hidden_state`` ``(B, L, d)``."""

    def __init__(self, config: HashFormerConfig) -> None:
        super().__init__(config)
        self.embeddings = HashFormerEmbeddings(config)
        self.encoder = RobertaEncoder(config)
        self.post_init()

    def get_input_embeddings(self) -> nn.Module:
        return self.embeddings.word_embeddings

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        hash_bits: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        output_hidden_states: bool | None = None,
        **kwargs,
    ) -> BaseModelOutput:
        """``last_hidden_state`` ``(B, L, d)``; with ``output_hidden_states`` also ``hidden_states``: the embedding
        output and every layer's output (``num_hidden_layers + 1`` tensors, the last equal to ``last_hidden_state``)."""
        if output_hidden_states is None:
            output_hidden_states = self.config.output_hidden_states
        hidden = self.embeddings(input_ids, hash_bits, token_type_ids, position_ids)
        if attention_mask is not None:
            _check_mask(attention_mask, tuple(input_ids.shape))
        return run_encoder(self.config, self.encoder.layer, hidden, attention_mask, output_hidden_states)


class HashFormerForSequenceClassification(HashFormerPreTrainedModel):
    """HashFormer + RoBERTa classification head (GLUE). ``num_labels == 1`` is regression (MSE), else CE."""

    def __init__(self, config: HashFormerConfig) -> None:
        super().__init__(config)
        self.num_labels = config.num_labels
        self.hashformer = HashFormerModel(config)
        self.classifier = RobertaClassificationHead(config)
        self.post_init()

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        hash_bits: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        output_hidden_states: bool | None = None,
        **kwargs,
    ) -> SequenceClassifierOutput:
        out = self.hashformer(input_ids, attention_mask, hash_bits, token_type_ids, position_ids,
                              output_hidden_states=output_hidden_states)
        logits = self.classifier(out.last_hidden_state)
        loss = None
        if labels is not None:
            _check_labels(labels, input_ids.shape[0], self.num_labels)
            if self.num_labels == 1:
                loss = MSELoss()(logits.squeeze(-1), labels.to(logits.dtype).view(-1))
            else:
                loss = CrossEntropyLoss()(logits.view(-1, self.num_labels), labels.view(-1))
        return SequenceClassifierOutput(loss=loss, logits=logits, hidden_states=out.hidden_states)


def _check_labels(labels: torch.Tensor, batch: int, num_labels: int) -> None:
    if not isinstance(labels, torch.Tensor) or labels.numel() != batch:
        got = tuple(labels.shape) if isinstance(labels, torch.Tensor) else type(labels).__name__
        raise ValueError(f"labels must be a tensor with one label per sequence (batch={batch}), got {got}")
    if num_labels == 1:
        if not labels.dtype.is_floating_point and labels.dtype not in (torch.int64, torch.int32):
            raise TypeError(f"labels of a regression head (num_labels=1) must be numbers, got {labels.dtype}")
        return
    if labels.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"labels of a {num_labels}-class head must be int64 class ids, got {labels.dtype}; "
                        f"convert with labels.long()")
    valid = labels.eq(-100) | (labels.ge(0) & labels.lt(num_labels))
    if not bool(valid.all()):
        raise ValueError(f"labels must be class ids in [0, {num_labels}) or -100 (ignored), got "
                         f"{labels[~valid].flatten()[:5].tolist()}; num_labels={num_labels} is set in the config")


class HashFormerForShuffleRandom(HashFormerPreTrainedModel):
    """HashFormer + the Shuffle+Random head: dropout + ``Linear(d, 3)`` on every token (§3.6).

    ``labels`` ``(B, L)``: 0 kept, 1 shuffled, 2 random, -100 ignored (special tokens, padding); see
    :class:`hashlib_core.papers.hashformers.objectives.ShuffleRandomCollator`.
    """

    def __init__(self, config: HashFormerConfig) -> None:
        super().__init__(config)
        self.hashformer = HashFormerModel(config)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.classifier = nn.Linear(config.hidden_size, NUM_SR_LABELS)
        self.post_init()

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        hash_bits: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
        output_hidden_states: bool | None = None,
        **kwargs,
    ) -> TokenClassifierOutput:
        out = self.hashformer(input_ids, attention_mask, hash_bits, token_type_ids, position_ids,
                              output_hidden_states=output_hidden_states)
        logits = self.classifier(self.dropout(out.last_hidden_state))
        loss = None
        if labels is not None:
            loss = CrossEntropyLoss(ignore_index=-100)(logits.view(-1, NUM_SR_LABELS), labels.view(-1))
        return TokenClassifierOutput(loss=loss, logits=logits, hidden_states=out.hidden_states)


