"""The configuration of HashFormer models (Xue & Aletras, EMNLP 2022), Hugging Face style.

:class:`HashFormerConfig` holds a RoBERTa encoder's fields and the hashed-embedding fields (which layer replaces the
embedding matrix, which hash made the inputs, N, T, k, gamma). The models are in
:mod:`hashlib_core.papers.hashformers.modeling`; ProFormer's configuration is :func:`proformer_config`.
"""
from __future__ import annotations

from transformers import PreTrainedConfig

from hashlib_core.embeddings.hashed import AdditiveEmbedding

from hashlib_core.papers.hashformers.tokenization import NUM_SPECIAL_TOKENS, PAD_ID

__all__ = ["EMBEDDING_TYPES", "HASH_TYPES", "HashFormerConfig", "proformer_config"]

EMBEDDING_TYPES = ("emb", "pool", "add", "proj", "linear")
HASH_TYPES = ("md5", "lsh", "bpe", "none")


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
    add_shared_gradient:
        ``False`` stops the gradient into Add's shared part (a diagnostic of the chapter, not the paper's model;
        see :class:`hashlib_core.embeddings.hashed.AdditiveEmbedding`).
    add_storage:
        How Add keeps Eq. 2's numbers: ``"codebooks"`` (the paper's ``2 T d``) or ``"differences"`` (the T
        differences ``B^j_1 - B^j_0``, ``T d``; the hashed-word marker row, added to every word, carries the shared
        part: the same functions, trained without Adam moving the shared part √T times as fast; see
        :class:`hashlib_core.embeddings.hashed.AdditiveEmbedding`).
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
    add_shared_gradient: bool = True
    add_storage: str = "codebooks"
    position_embedding_type: str = "learned"

    def __post_init__(self, **kwargs):
        if self.embedding_type not in EMBEDDING_TYPES:
            raise ValueError(f"embedding_type must be one of {EMBEDDING_TYPES}, got {self.embedding_type!r}")
        if self.hash_type not in HASH_TYPES:
            raise ValueError(f"hash_type must be one of {HASH_TYPES}, got {self.hash_type!r}")
        if self.add_storage not in AdditiveEmbedding.STORAGES:
            raise ValueError(f"add_storage must be one of {AdditiveEmbedding.STORAGES} ('codebooks': Eq. 2 as the "
                             f"paper stores it), got {self.add_storage!r}")
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
