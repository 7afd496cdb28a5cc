"""MultiHashFormer (Xue, Yamaguchi & Aletras): a Qwen3 decoder between a Hash Encoder and a Hash Decoder.

* :class:`MultiHashFormerConfig`, :class:`MultiHashFormerModel` (the base model: Hash Encoder + Qwen3 decoder
  stack, returning hidden states) and :class:`MultiHashFormerForCausalLM` (base model + cascaded Hash Decoder),
  Hugging Face style (``save_pretrained`` / ``from_pretrained``, ``base_model``, ``output_hidden_states``,
  ``get_input_embeddings``). Token ids go through the persistent ``hash_map`` buffer (``V x H`` signatures, saved
  with the model) into the gated compositional embedding (:mod:`hashlib_core.embeddings.multihash`, section 3.1),
  then through a Qwen3 decoder (``transformers.Qwen3Model`` fed with ``inputs_embeds``; its own token embedding is
  removed, sections 3.2 and 4.1), then through the cascaded hash decoder whose bucket classifiers are tied to the
  encoder tables (:mod:`hashlib_core.papers.multihashformer.decoding`, sections 3.3-3.4).
* The book's model protocol (:mod:`hashlib_core.modeling`): :meth:`~MultiHashFormerForCausalLM.vocab_log_probs`
  (``P_inf`` over the valid vocabulary), :meth:`~MultiHashFormerForCausalLM.embedding_parameter_count` (Table 1's
  *Emb*) and :meth:`~MultiHashFormerForCausalLM.expand_vocabulary` (section 4.4: new tokens, no new parameter).
* Presets of Table 7 and the Table 1 model families: :mod:`hashlib_core.papers.multihashformer.presets`.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from huggingface_hub.dataclasses import strict
from torch import nn
from transformers import PreTrainedConfig, PreTrainedModel, Qwen3Config, Qwen3Model
from transformers.cache_utils import Cache
from transformers.modeling_outputs import BaseModelOutputWithPast
from transformers.utils import ModelOutput

from hashlib_core.decoding.multihash import hash_log_probs, multihash_loss, vocab_log_probs
from hashlib_core.embeddings.multihash import GatedCompositionalEmbedding, validate_signature_table
from hashlib_core.papers.multihashformer.decoding import CascadedHashDecoder, check_input_ids
from hashlib_core.params import count_parameters

__all__ = [
    "MultiHashFormerConfig",
    "MultiHashFormerOutput",
    "MultiHashFormerPreTrainedModel",
    "MultiHashFormerModel",
    "MultiHashFormerForCausalLM",
]


@strict
class MultiHashFormerConfig(PreTrainedConfig):
    r"""Configuration of :class:`MultiHashFormerForCausalLM`.

    Hash interface (sections 3.1, 3.3, 4.1): ``vocab_size`` (rows of the signature table), ``num_hashes`` (H),
    ``num_buckets`` (B, bucket 0 = padding), ``gate_bottleneck`` (d_z of the compositional gate) and
    ``mixer_bottleneck`` (b of the cascade mixers), both 64 in the paper.

    Backbone (Qwen3, Table 7): ``hidden_size``, ``intermediate_size``, ``num_hidden_layers``,
    ``num_attention_heads``, ``num_key_value_heads``, ``head_dim`` (default ``hidden_size // num_attention_heads``),
    ``hidden_act``, ``max_position_embeddings``, ``rope_theta`` (1M), ``rms_norm_eps`` (1e-6),
    ``attention_dropout``, ``initializer_range`` (0.02). The defaults are the paper's 100M backbone with H4B16K.
    """

    model_type = "multihashformer"

    vocab_size: int = 32768
    num_hashes: int = 4
    num_buckets: int = 16384
    gate_bottleneck: int = 64
    mixer_bottleneck: int = 64
    hidden_size: int = 768
    intermediate_size: int = 2560
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    num_key_value_heads: int = 2
    head_dim: int | None = None
    hidden_act: str = "silu"
    max_position_embeddings: int = 2048
    rope_theta: float = 1_000_000.0
    rms_norm_eps: float = 1e-6
    attention_dropout: float = 0.0
    initializer_range: float = 0.02
    use_cache: bool = True
    pad_token_id: int | None = None
    bos_token_id: int | None = None
    eos_token_id: int | None = None

    def __post_init__(self, **kwargs):
        for name in ("vocab_size", "num_hashes", "gate_bottleneck", "mixer_bottleneck", "hidden_size",
                     "intermediate_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
                     "max_position_embeddings"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.num_buckets < 2:
            raise ValueError(f"num_buckets must be >= 2 (bucket 0 is reserved for padding), got {self.num_buckets}")
        if self.head_dim is None:
            if self.hidden_size % self.num_attention_heads:
                raise ValueError(f"hidden_size {self.hidden_size} is not divisible by num_attention_heads "
                                 f"{self.num_attention_heads}; pass head_dim explicitly")
            self.head_dim = self.hidden_size // self.num_attention_heads
        if self.num_attention_heads % self.num_key_value_heads:
            raise ValueError(f"num_attention_heads {self.num_attention_heads} must be a multiple of "
                             f"num_key_value_heads {self.num_key_value_heads}")
        super().__post_init__(**kwargs)

    def backbone_config(self) -> Qwen3Config:
        """The ``Qwen3Config`` of the sequence-processing backbone (``vocab_size=1``: its embedding is removed)."""
        return Qwen3Config(
            vocab_size=1,
            hidden_size=self.hidden_size,
            intermediate_size=self.intermediate_size,
            num_hidden_layers=self.num_hidden_layers,
            num_attention_heads=self.num_attention_heads,
            num_key_value_heads=self.num_key_value_heads,
            head_dim=self.head_dim,
            hidden_act=self.hidden_act,
            max_position_embeddings=self.max_position_embeddings,
            rope_parameters={"rope_type": "default", "rope_theta": float(self.rope_theta)},
            rms_norm_eps=self.rms_norm_eps,
            attention_dropout=self.attention_dropout,
            initializer_range=self.initializer_range,
            use_cache=self.use_cache,
            max_window_layers=self.num_hidden_layers,
            tie_word_embeddings=False,
            attn_implementation=self._attn_implementation,
        )


@dataclass
class MultiHashFormerOutput(ModelOutput):
    """Output of :class:`MultiHashFormerForCausalLM`.

    ``hash_logits`` has shape ``(batch, positions, H, B)``: the bucket logits ``o^(1..H)`` of the cascade (raw,
    before ``log_softmax``). ``loss`` is ``-log P_train`` per token when labels are given.
    """

    loss: torch.Tensor | None = None
    hash_logits: torch.Tensor | None = None
    last_hidden_state: torch.Tensor | None = None
    past_key_values: Cache | None = None
    hidden_states: tuple[torch.Tensor, ...] | None = None


class MultiHashFormerPreTrainedModel(PreTrainedModel):
    """Loading, saving and the attention back-ends shared by the MultiHashFormer models."""

    config_class = MultiHashFormerConfig
    base_model_prefix = "multihashformer"
    supports_gradient_checkpointing = True
    _no_split_modules = ["Qwen3DecoderLayer"]
    _supports_sdpa = True
    _supports_flash_attn = True
    _supports_flex_attn = True
    _supports_attention_backend = True


class MultiHashFormerModel(MultiHashFormerPreTrainedModel):
    """The base model: Hash Encoder (gated compositional embedding) + Qwen3 decoder stack.

    ``forward`` returns the final hidden states ``h_t`` (after the last RMSNorm) and, with
    ``output_hidden_states``, the embedding output and every layer's output, as ``Qwen3Model`` does.
    """

    def __init__(self, config: MultiHashFormerConfig) -> None:
        super().__init__(config)
        self.embeddings = GatedCompositionalEmbedding(
            config.vocab_size, config.num_hashes, config.num_buckets, config.hidden_size, config.gate_bottleneck
        )
        self.backbone = Qwen3Model(config.backbone_config())
        # The hash encoder replaces the backbone's token embedding; the backbone only ever sees inputs_embeds.
        self.backbone.embed_tokens = None
        self.post_init()

    @property
    def layers(self) -> nn.ModuleList:
        """The decoder layers (``backbone.layers``)."""
        return self.backbone.layers

    def get_input_embeddings(self) -> GatedCompositionalEmbedding:
        return self.embeddings

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        past_key_values: Cache | None = None,
        use_cache: bool | None = None,
        output_hidden_states: bool | None = None,
        **kwargs,
    ) -> BaseModelOutputWithPast:
        check_input_ids(input_ids)
        if attention_mask is not None:
            past = 0 if past_key_values is None else int(past_key_values.get_seq_length())
            expected = (input_ids.shape[0], past + input_ids.shape[1])
            if not isinstance(attention_mask, torch.Tensor) or tuple(attention_mask.shape) != expected:
                got = tuple(attention_mask.shape) if isinstance(attention_mask, torch.Tensor) else \
                    type(attention_mask).__name__
                raise ValueError(f"attention_mask must have shape (batch, cached + new positions) = {expected}, got "
                                 f"{got}; pass the tokenizer's mask (1 = token, 0 = padding) or None")
        return self.backbone(
            inputs_embeds=self.embeddings(input_ids),
            attention_mask=attention_mask,
            position_ids=position_ids,
            past_key_values=past_key_values,
            use_cache=use_cache,
            output_hidden_states=output_hidden_states,
        )


class MultiHashFormerForCausalLM(MultiHashFormerPreTrainedModel):
    """Hash Encoder -> Qwen3 decoder -> cascaded Hash Decoder (tied), with a persistent ``hash_map`` buffer.

    A freshly built model has an all-zero ``hash_map`` (no registered token); install signatures with
    :meth:`set_signature_table` (e.g. ``SignatureRegistry.table()``, padded with zero rows to ``vocab_size``).
    ``save_pretrained`` / ``from_pretrained`` keep the signatures with the weights.
    """

    def __init__(self, config: MultiHashFormerConfig) -> None:
        super().__init__(config)
        self.multihashformer = MultiHashFormerModel(config)
        self.hash_decoder = CascadedHashDecoder(
            config.num_hashes, config.num_buckets, config.hidden_size, config.mixer_bottleneck
        )
        self.post_init()

    @property
    def embeddings(self) -> GatedCompositionalEmbedding:
        """The Hash Encoder (``base_model.embeddings``)."""
        return self.multihashformer.embeddings

    @property
    def hash_map(self) -> torch.Tensor:
        """The ``V x H`` signature table (int64 buffer; all-zero rows are padding / unregistered ids)."""
        return self.embeddings.hash_map

    def set_signature_table(self, table: torch.Tensor) -> None:
        """Install a ``V x H`` signature table (validated: range, bucket-0 rows, global uniqueness)."""
        self.embeddings.set_signature_table(table)

    def get_input_embeddings(self) -> GatedCompositionalEmbedding:
        return self.embeddings

    def encode(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        past_key_values: Cache | None = None,
        use_cache: bool | None = None,
    ) -> BaseModelOutputWithPast:
        """Hash Encoder + backbone: the final hidden states ``h_t`` (after the backbone's last RMSNorm)."""
        return self.multihashformer(input_ids, attention_mask, position_ids, past_key_values, use_cache)

    def hash_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """Cascaded Hash Decoder on hidden states ``(..., d)``: bucket logits ``(..., H, B)``."""
        return self.hash_decoder(hidden, self.embeddings.table.weight)

    # ---------------------------------------------------------------------------------- the book's model protocol
    def vocab_log_probs(self, hidden: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
        """``log P_inf`` of the next token over the vocabulary, ``(..., V)`` (section 3.4; ``-inf`` for ids
        without a registered signature). With ``temperature`` T, ``P_inf^(1/T)`` renormalised over the valid
        vocabulary (the same ranking of tokens). Materialises ``positions x V``: pass a few hundred positions at a
        time."""
        return vocab_log_probs(hash_log_probs(self.hash_logits(hidden)) / temperature, self.hash_map)

    def embedding_parameter_count(self) -> int:
        """Table 1's *Emb*: every parameter outside the decoder stack (tables, gate, adapter, cascade mixers)."""
        return count_parameters(self) - count_parameters(self.multihashformer.backbone)

    @torch.no_grad()
    def expand_vocabulary(self, table: torch.Tensor) -> None:
        """Section 4.4: grow the vocabulary to ``table.shape[0]`` ids by installing a longer signature table.

        No parameter is added (the tables, gate and cascade serve any signature). The first ``vocab_size`` rows of
        ``table`` must equal the current ``hash_map``, so existing tokens keep their signatures (register the old
        vocabulary first, then the new tokens, in one :class:`~hashlib_core.hashing.SignatureRegistry`).
        """
        table = validate_signature_table(table, self.config.num_buckets, self.config.num_hashes)
        old = self.hash_map
        if table.shape[0] < old.shape[0]:
            raise ValueError(f"the new table has {table.shape[0]} rows, fewer than the vocabulary's {old.shape[0]}; "
                             f"expansion only appends ids")
        if not torch.equal(table[: old.shape[0]], old.cpu()):
            raise ValueError("the new table changes signatures of existing ids; register the old vocabulary first "
                             "and append new tokens after it")
        embeddings = self.embeddings
        embeddings.register_buffer("hash_map", table.to(old.device), persistent=True)
        embeddings.vocab_size = table.shape[0]
        self.config.vocab_size = table.shape[0]
        self.multihashformer.config.vocab_size = table.shape[0]

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        past_key_values: Cache | None = None,
        labels: torch.Tensor | None = None,
        use_cache: bool | None = None,
        logits_to_keep: int = 0,
        output_hidden_states: bool | None = None,
        **kwargs,
    ) -> MultiHashFormerOutput:
        """Bucket logits for every position (or the last ``logits_to_keep``) and, with ``labels``, the loss.

        ``labels`` follow the Hugging Face convention: same shape as ``input_ids``, shifted inside (position ``t``
        predicts ``labels[:, t + 1]``), ``-100`` ignored. The loss is ``sum_k CE_k`` averaged over tokens
        (``-log P_train``, section 3.4).
        """
        if isinstance(logits_to_keep, bool) or not isinstance(logits_to_keep, int) or logits_to_keep < 0:
            raise ValueError(f"logits_to_keep must be an int >= 0 (0 keeps every position), got {logits_to_keep!r}")
        if labels is not None and (not isinstance(labels, torch.Tensor) or labels.dtype not in (torch.int64,
                                                                                                   torch.int32)):
            got = labels.dtype if isinstance(labels, torch.Tensor) else type(labels).__name__
            raise TypeError(f"labels must be an int64 tensor of token ids (-100 = ignored), got {got}; convert with "
                            f"labels.long()")
        outputs = self.multihashformer(input_ids, attention_mask, position_ids, past_key_values, use_cache,
                                       output_hidden_states=output_hidden_states)
        hidden = outputs.last_hidden_state
        if logits_to_keep:
            if labels is not None:
                raise ValueError("logits_to_keep is for decoding; pass logits_to_keep=0 to compute the loss")
            hidden = hidden[:, -logits_to_keep:]
        logits = self.hash_logits(hidden)
        loss = None
        if labels is not None:
            if labels.shape != input_ids.shape:
                raise ValueError(f"labels must have the shape of input_ids {tuple(input_ids.shape)}, "
                                 f"got {tuple(labels.shape)}")
            loss = multihash_loss(logits[:, :-1], labels[:, 1:].to(logits.device), self.hash_map)
        return MultiHashFormerOutput(
            loss=loss, hash_logits=logits, last_hidden_state=outputs.last_hidden_state,
            past_key_values=outputs.past_key_values, hidden_states=outputs.hidden_states,
        )
