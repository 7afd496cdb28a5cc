"""HashFormer models (Xue & Aletras, EMNLP 2022) and their BERT baselines, as Hugging Face models.

A HashFormer is a RoBERTa/BERT-base encoder (§4.2: 12 layers, d = 768, 3,072, 12 heads, sequence length 512) whose
token-embedding matrix is replaced by a hashed embedding of whole words (§3):

=============  =====================================================================================================
``emb``        Emb(N): ``nn.Embedding(5 + N, d)``; input ids are ``hash % N + 5`` (MD5 §3.2 or LSH §3.3).
``pool``       Pool (Eq. 1) of the word's T-bit code (MD5 or LSH, §3.5).
``add``        Add (Eq. 2).
``proj``       Proj (Eq. 3).
``linear``     A dense projection of the bit code: ProFormer's LSH projection (baseline, §4.1 (iv); see
               :func:`proformer_config`).
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

Baselines (§4.1): BERT-MLM and BERT-S+R are RoBERTa-architecture models over a BPE vocabulary
(:func:`baseline_config`, :func:`build_baseline`), exactly the configuration of Yamaguchi et al.'s released
pre-training script that HashFormers builds on (``max_position_embeddings=514``, ``type_vocab_size=1``,
``layer_norm_eps=1e-5``).
"""
from __future__ import annotations

import math
from typing import Literal

import torch
from torch import nn
from torch.nn import CrossEntropyLoss, MSELoss
from transformers import (
    PreTrainedConfig,
    PreTrainedModel,
    RobertaConfig,
    RobertaForMaskedLM,
    RobertaForSequenceClassification,
    RobertaForTokenClassification,
)
from transformers import initialization as init
from transformers.masking_utils import create_bidirectional_mask
from transformers.modeling_outputs import BaseModelOutput, SequenceClassifierOutput, TokenClassifierOutput
from transformers.models.roberta.modeling_roberta import RobertaClassificationHead, RobertaEncoder

from hashlib_core.embeddings.hashed import (
    AdditiveEmbedding,
    HashBucketEmbedding,
    LinearBitProjection,
    PearsonProjection,
    PoolEmbedding,
)
from hashlib_core.papers.hashformers.tokenization import HASHED_TOKEN_ID, NUM_SPECIAL_TOKENS, PAD_ID

__all__ = [
    "EMBEDDING_TYPES",
    "HashFormerConfig",
    "HashFormerEmbeddings",
    "HashFormerPreTrainedModel",
    "HashFormerModel",
    "HashFormerForSequenceClassification",
    "HashFormerForShuffleRandom",
    "proformer_config",
    "baseline_config",
    "build_baseline",
    "NUM_SR_LABELS",
]

EMBEDDING_TYPES = ("emb", "pool", "add", "proj", "linear")
HASH_TYPES = ("md5", "lsh", "bpe", "none")
#: Shuffle+Random classes: 0 kept, 1 shuffled, 2 random (§3.6).
NUM_SR_LABELS = 3


class HashFormerConfig(PreTrainedConfig):
    """Configuration of a HashFormer: RoBERTa encoder fields plus the hashed-embedding fields.

    Defaults are the paper's BERT-base size (§4.2, Appendix B: 12 layers, d = 768, 3,072, 12 heads) and the
    released RoBERTa settings (514 positions, one token type, LayerNorm eps 1e-5, ``<s>``/``<pad>``/``</s>`` =
    0/1/2). The encoder fields mean what they mean in ``RobertaConfig``.

    Hashed-embedding fields
    -----------------------
    embedding_type:
        ``"emb"``, ``"pool"``, ``"add"``, ``"proj"`` (HashFormers §3.1, §3.4) or ``"linear"`` (ProFormer).
    hash_type:
        Which hash made the inputs: ``"md5"``, ``"lsh"``, ``"bpe"`` (a BPE vocabulary instead of a hash) or
        ``"none"``; recorded for bookkeeping, the model itself does not hash.
    num_buckets:
        N of Emb(N) (50,260 for "50K", as released; 1,000 for "1K").
    num_bits:
        T, the code length of the compressed variants (128 = MD5's digest, §4.2); 420 for ProFormer.
    pool_chunk_bits:
        k of Pool (§4.2: k = 10).
    pool_codeword_dropout:
        Dropout on Pool's looked-up codewords (released: 0.1).
    add_scale:
        γ of Add (Eq. 2); ``None`` means √T (footnote 3).
    position_embedding_type:
        ``"learned"`` (RoBERTa) or ``"sinusoidal"`` (fixed, parameter-free; used by the ProFormer baseline).

    ``vocab_size`` (the number of distinct ``input_ids``) is derived, not set: ``5 + N`` for ``emb`` and 6 (the
    special tokens and the hashed-word marker 5) for the other types.
    """

    model_type = "hashformer"

    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    hidden_act: str = "gelu"
    hidden_dropout_prob: float = 0.1
    attention_probs_dropout_prob: float = 0.1
    max_position_embeddings: int = 514
    type_vocab_size: int = 1
    initializer_range: float = 0.02
    layer_norm_eps: float = 1e-5
    pad_token_id: int = PAD_ID
    bos_token_id: int = 0
    eos_token_id: int = 2
    classifier_dropout: float | None = None
    is_decoder: bool = False
    add_cross_attention: bool = False
    embedding_type: str = "proj"
    hash_type: str = "md5"
    num_buckets: int = 50260
    num_bits: int = 128
    pool_chunk_bits: int = 10
    pool_codeword_dropout: float = 0.1
    add_scale: float | None = None
    position_embedding_type: str = "learned"

    def __post_init__(self, **kwargs):
        if self.embedding_type not in EMBEDDING_TYPES:
            raise ValueError(f"embedding_type must be one of {EMBEDDING_TYPES}, got {self.embedding_type!r}")
        if self.hash_type not in HASH_TYPES:
            raise ValueError(f"hash_type must be one of {HASH_TYPES}, got {self.hash_type!r}")
        if self.position_embedding_type not in ("learned", "sinusoidal"):
            raise ValueError(
                f"position_embedding_type must be 'learned' or 'sinusoidal', got {self.position_embedding_type!r}"
            )
        for name in ("num_buckets", "num_bits", "pool_chunk_bits", "hidden_size", "num_hidden_layers"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(
                f"hidden_size ({self.hidden_size}) must be a multiple of "
                f"num_attention_heads ({self.num_attention_heads})"
            )
        if self.pad_token_id != PAD_ID:
            raise ValueError(
                f"pad_token_id must be {PAD_ID} (the released special-token layout), got {self.pad_token_id}"
            )
        stored = kwargs.pop("vocab_size", None)
        if stored is not None and stored != self.derived_vocab_size():
            raise ValueError(
                f"vocab_size={stored} does not match embedding_type={self.embedding_type!r} "
                f"(expected {self.derived_vocab_size()}); leave vocab_size unset, it is derived"
            )
        super().__post_init__(**kwargs)

    @property
    def vocab_size(self) -> int:
        """Number of distinct ``input_ids`` the model accepts (derived from the embedding fields)."""
        return self.derived_vocab_size()

    def derived_vocab_size(self) -> int:
        """Number of distinct ``input_ids`` the model accepts."""
        if self.embedding_type == "emb":
            return NUM_SPECIAL_TOKENS + self.num_buckets
        return NUM_SPECIAL_TOKENS + 1

    @property
    def uses_hash_bits(self) -> bool:
        """True when the model needs ``hash_bits`` (every type but ``emb``)."""
        return self.embedding_type != "emb"


def sinusoidal_table(num_positions: int, dim: int) -> torch.Tensor:
    """The fixed position encodings of Vaswani et al. (2017): sin on even, cos on odd dimensions."""
    position = torch.arange(num_positions, dtype=torch.float32)[:, None]
    frequency = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(10000.0) / dim))
    table = torch.zeros(num_positions, dim)
    table[:, 0::2] = torch.sin(position * frequency)
    table[:, 1::2] = torch.cos(position * frequency[: dim // 2])
    return table


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
                self.word_embeddings = AdditiveEmbedding(config.num_bits, d, config.add_scale)
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

    def word_parameter_count(self) -> int:
        """Parameters that build the embedding of a hashed word: HashFormers Appendix B's ``#EmbParams``.

        Counted from this module's tensors: the hashed rows of Emb's table (special-token rows excluded), or all
        parameters of the compressed module minus its padding codeword (Pool) plus the one special-token row that
        is added to every word (the hashed-word marker, row 5; absent for ``linear``). Position and token-type
        embeddings are excluded, as Appendix B says.
        """
        if self.special_token_embeddings is None:
            return self.word_embeddings.weight[self.word_embeddings.num_special :].numel()
        total = sum(p.numel() for p in self.word_embeddings.parameters())
        if isinstance(self.word_embeddings, PoolEmbedding):
            total -= self.word_embeddings.codebook.weight[0].numel()
        if self.special_token_embeddings.num_embeddings > HASHED_TOKEN_ID:
            total += self.special_token_embeddings.weight[HASHED_TOKEN_ID].numel()
        return total

    def forward(
        self,
        input_ids: torch.Tensor,
        hash_bits: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
    ) -> torch.Tensor:
        if not isinstance(input_ids, torch.Tensor) or input_ids.dim() != 2:
            raise ValueError("input_ids must be a (batch, length) tensor")
        if input_ids.numel() and (int(input_ids.min()) < 0 or int(input_ids.max()) >= self.vocab_size):
            raise ValueError(
                f"input_ids must lie in [0, {self.vocab_size}) for embedding_type={self.embedding_type!r}, got "
                f"[{int(input_ids.min())}, {int(input_ids.max())}]; Emb takes hash % N + 5, the other types take "
                f"special ids 0-4 and {HASHED_TOKEN_ID} for words"
            )
        if self.special_token_embeddings is None:
            if hash_bits is not None:
                raise ValueError("embedding_type='emb' takes hashed ids in input_ids; do not pass hash_bits")
            embeddings = self.word_embeddings(input_ids)
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
        if self.position_embeddings is not None:
            embeddings = embeddings + self.position_embeddings(position_ids)
        else:
            embeddings = embeddings + self.sinusoidal_positions[position_ids].to(embeddings.dtype)
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
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

    @torch.no_grad()
    def _init_weights(self, module: nn.Module) -> None:
        super()._init_weights(module)
        std = self.config.initializer_range
        if isinstance(module, PoolEmbedding):
            init.trunc_normal_(module.chunk_weights, mean=0.0, std=std, a=-2 * std, b=2 * std)
        elif isinstance(module, AdditiveEmbedding):
            init.normal_(module.codebooks, mean=0.0, std=std)
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
        **kwargs,
    ) -> BaseModelOutput:
        hidden = self.embeddings(input_ids, hash_bits, token_type_ids, position_ids)
        mask = create_bidirectional_mask(config=self.config, inputs_embeds=hidden, attention_mask=attention_mask)
        out = self.encoder(hidden, attention_mask=mask)
        return BaseModelOutput(last_hidden_state=out.last_hidden_state)


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
        **kwargs,
    ) -> SequenceClassifierOutput:
        hidden = self.hashformer(input_ids, attention_mask, hash_bits, token_type_ids, position_ids).last_hidden_state
        logits = self.classifier(hidden)
        loss = None
        if labels is not None:
            if self.num_labels == 1:
                loss = MSELoss()(logits.squeeze(-1), labels.to(logits.dtype).view(-1))
            else:
                loss = CrossEntropyLoss()(logits.view(-1, self.num_labels), labels.view(-1))
        return SequenceClassifierOutput(loss=loss, logits=logits)


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
        **kwargs,
    ) -> TokenClassifierOutput:
        hidden = self.hashformer(input_ids, attention_mask, hash_bits, token_type_ids, position_ids).last_hidden_state
        logits = self.classifier(self.dropout(hidden))
        loss = None
        if labels is not None:
            loss = CrossEntropyLoss(ignore_index=-100)(logits.view(-1, NUM_SR_LABELS), labels.view(-1))
        return TokenClassifierOutput(loss=loss, logits=logits)


def proformer_config(**overrides) -> HashFormerConfig:
    """ProFormer (Sankar et al., 2021b) as HashFormers' Table 2 baseline: 420-bit LSH codes, 2 encoder layers.

    ProFormer "hashes each token into a 420-bit vector" (Appendix B, Eq. 11: ``#Emb = 420 × d``), has "two encoder
    layers" (§4.1) and "15.1M parameters in total" (§5.2); the HashFormers authors re-implemented it and did not
    release the code. The architecture here is the smallest consistent with those numbers: a bias-free dense
    projection ``420 → d`` of the code (``embedding_type="linear"``), fixed sinusoidal positions, RoBERTa layers
    and head. A learned 514 × 768 position table would add 0.39M and give 15.5M, so the printed 15.1M implies
    parameter-free positions.
    """
    settings = dict(
        embedding_type="linear",
        hash_type="lsh",
        num_bits=420,
        num_hidden_layers=2,
        position_embedding_type="sinusoidal",
    )
    settings.update(overrides)
    return HashFormerConfig(**settings)


def baseline_config(vocab_size: int, **overrides) -> RobertaConfig:
    """``RobertaConfig`` of the BERT-MLM / BERT-S+R baselines over a BPE vocabulary of ``vocab_size`` tokens.

    The settings of Yamaguchi et al.'s released pre-training script (``gucci-j/light-transformer-emnlp2021``,
    ``src/pretrainer.py``): 514 positions, one token type, LayerNorm eps 1e-5, ``<s>``/``<pad>``/``</s>`` = 0/1/2,
    BERT-base sizes. The paper's baselines use RoBERTa's 50,265-token vocabulary (§4.2).
    """
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size < NUM_SPECIAL_TOKENS + 1:
        raise ValueError(f"vocab_size must be an int > {NUM_SPECIAL_TOKENS}, got {vocab_size!r}")
    settings = dict(
        vocab_size=vocab_size,
        max_position_embeddings=514,
        type_vocab_size=1,
        layer_norm_eps=1e-5,
        pad_token_id=PAD_ID,
        bos_token_id=0,
        eos_token_id=2,
    )
    settings.update(overrides)
    return RobertaConfig(**settings)


def build_baseline(
    kind: Literal["mlm", "shuffle_random", "sequence_classification"], config: RobertaConfig
) -> PreTrainedModel:
    """BERT-MLM (``RobertaForMaskedLM``), BERT-S+R (``RobertaForTokenClassification`` with 3 labels: dropout +
    ``Linear(d, 3)``, the head of Yamaguchi et al.'s ``RobertaForShuffleRandomThreeWayClassification``) or the GLUE
    model (``RobertaForSequenceClassification``) for a :func:`baseline_config`."""
    if not isinstance(config, RobertaConfig) or isinstance(config, HashFormerConfig):
        raise TypeError("config must be a RobertaConfig from baseline_config(), not a HashFormerConfig")
    if kind == "mlm":
        return RobertaForMaskedLM(config)
    if kind == "shuffle_random":
        config = RobertaConfig(**{**config.to_dict(), "num_labels": NUM_SR_LABELS})
        return RobertaForTokenClassification(config)
    if kind == "sequence_classification":
        return RobertaForSequenceClassification(config)
    raise ValueError(f"kind must be 'mlm', 'shuffle_random' or 'sequence_classification', got {kind!r}")
