"""Superbloom (Anderson et al., ICLR 2020 submission, §2, Fig. 1) as Hugging Face models.

An item (an opaque id) enters as its **Bloom digest**: the ``m`` hash tokens of :class:`~hashlib_core.hashing.bloom.
BloomHashMaps`, kept as ``m`` consecutive tokens of the sequence (Fig. 1: a set of ``n`` items is ``m n`` hash
tokens). Token embeddings, optional position embeddings (none for sets of ids, §3.2: "we treat the input as a set";
positions for text, §4), LayerNorm and dropout feed ``L`` BERT layers. The output layer (BERT's transform: dense,
GELU, LayerNorm) scores every hash token with the **input embedding matrix** (tied, §3.2: "we use the same hash
functions and the same embedding matrices in the input and output layer") plus a bias. Training is BERT's masked
language model over items (:class:`~hashlib_core.papers.superbloom.data.ItemMaskingCollator`); the loss is the
cross-entropy of each of a masked item's ``m`` hash tokens, **summed over the m hashes** and averaged over items.

:meth:`SuperbloomForMaskedLM.hash_log_probs` turns the hidden states at a masked item's ``m`` positions into the
``m`` distributions of Algorithm 1 (each renormalised over its own map's tokens), and :meth:`~SuperbloomForMaskedLM.
top_k` ranks ids with :func:`~hashlib_core.decoding.beam.beam_topk` (or exhaustively). The unhashed baseline is the
same model with ``alpha = 1`` and ``num_hashes = 1``: one token per id, a full softmax.

The ``N x m`` hash table is a persistent buffer, so ``save_pretrained`` stores the maps with the weights and
``from_pretrained`` checks them against the maps its configuration builds.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from transformers import BertConfig, PreTrainedModel
from transformers.modeling_outputs import BaseModelOutput
from transformers.models.bert.modeling_bert import BertEncoder, BertPredictionHeadTransform
from transformers.utils import ModelOutput

from hashlib_core.decoding.beam import TopK, beam_topk, exhaustive_topk
from hashlib_core.hashing.bloom import DEFAULT_SPECIAL_TOKENS, BloomHashMaps
from hashlib_core.modeling import check_token_batch, run_encoder

__all__ = ["SuperbloomConfig", "SuperbloomOutput", "SuperbloomModel", "SuperbloomForMaskedLM"]


class SuperbloomConfig(BertConfig):
    """``BertConfig`` plus the hashing: ``num_ids`` (|S|), ``alpha`` (ids per hash token), ``num_hashes`` (m),
    ``hash_seed``, ``use_positions`` (position embeddings: False for sets of ids) and ``num_sampled`` (training
    loss over the targets and this many uniformly sampled tokens, shared by the batch: the sampled-softmax baseline
    of Table 1; 0: the full softmax). ``vocab_size`` (hash tokens) and ``pad_token_id`` follow from them."""

    model_type = "superbloom"

    def __init__(self, num_ids: int = 1000, alpha: int = 10, num_hashes: int = 2, hash_seed: int = 0,
                 use_positions: bool = False, num_sampled: int = 0, **kwargs) -> None:
        for name, value in (("num_ids", num_ids), ("alpha", alpha), ("num_hashes", num_hashes)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"SuperbloomConfig: {name} must be an int >= 1, got {value!r}")
        if alpha > num_ids:
            raise ValueError(f"SuperbloomConfig: alpha = {alpha} exceeds num_ids = {num_ids}")
        tokens = -(-num_ids // alpha)
        kwargs["vocab_size"] = num_hashes * (len(DEFAULT_SPECIAL_TOKENS) + tokens)
        kwargs["pad_token_id"] = 0                      # [PAD_1]: the first special token's first hash token
        kwargs.setdefault("type_vocab_size", 1)
        super().__init__(**kwargs)
        self.num_ids, self.alpha, self.num_hashes, self.hash_seed = num_ids, alpha, num_hashes, hash_seed
        self.use_positions = use_positions
        if isinstance(num_sampled, bool) or not isinstance(num_sampled, int) or num_sampled < 0:
            raise ValueError(f"SuperbloomConfig: num_sampled must be an int >= 0 (0: full softmax), got {num_sampled!r}")
        self.num_sampled = num_sampled

    def hash_maps(self) -> BloomHashMaps:
        return BloomHashMaps(self.num_ids, self.alpha, self.num_hashes, self.hash_seed)


@dataclass
class SuperbloomOutput(ModelOutput):
    loss: torch.Tensor | None = None
    logits: torch.Tensor | None = None
    hidden_states: tuple[torch.Tensor, ...] | None = None


class SuperbloomPreTrainedModel(PreTrainedModel):
    config_class = SuperbloomConfig
    base_model_prefix = "superbloom"
    _supports_sdpa = True
    _supports_attention_backend = True

    @torch.no_grad()
    def _init_weights(self, module: nn.Module) -> None:
        super()._init_weights(module)

    def embedding_parameter_count(self) -> int:
        """The hash-token embedding matrix (``vocab_size x d``; tied to the output layer)."""
        return self.base_model.word_embeddings.weight.numel()


class SuperbloomModel(SuperbloomPreTrainedModel):
    """Hash-token embeddings (+ positions when ``use_positions``) -> LayerNorm, dropout -> ``L`` BERT layers."""

    def __init__(self, config: SuperbloomConfig) -> None:
        super().__init__(config)
        self.word_embeddings = nn.Embedding(config.vocab_size, config.hidden_size, padding_idx=config.pad_token_id)
        self.position_embeddings = (nn.Embedding(config.max_position_embeddings, config.hidden_size)
                                    if config.use_positions else None)
        self.norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.encoder = BertEncoder(config)
        self.post_init()

    def get_input_embeddings(self) -> nn.Embedding:
        return self.word_embeddings

    def set_input_embeddings(self, value: nn.Embedding) -> None:
        self.word_embeddings = value

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None,
                output_hidden_states: bool = False, **_: object) -> BaseModelOutput:
        check_token_batch(input_ids, convert="BloomHashMaps.digest(ids).flatten(-2)")
        if int(input_ids.min()) < 0 or int(input_ids.max()) >= self.config.vocab_size:
            raise ValueError(f"input_ids must be hash tokens in [0, {self.config.vocab_size}); digest item ids "
                             f"with BloomHashMaps.digest first")
        hidden = self.word_embeddings(input_ids)
        if self.position_embeddings is not None:
            if input_ids.shape[1] > self.config.max_position_embeddings:
                raise ValueError(f"{input_ids.shape[1]} tokens exceed max_position_embeddings = "
                                 f"{self.config.max_position_embeddings}; use shorter segments")
            hidden = hidden + self.position_embeddings(torch.arange(input_ids.shape[1], device=input_ids.device))
        hidden = self.dropout(self.norm(hidden))
        return run_encoder(self.config, self.encoder.layer, hidden, attention_mask, output_hidden_states)


class SuperbloomForMaskedLM(SuperbloomPreTrainedModel):
    """Superbloom with its tied output layer: ``logits`` over hash tokens at every position (when no ``labels``
    are given), and the m-hash loss (with ``labels``: the output layer then runs at the masked positions only)."""

    def __init__(self, config: SuperbloomConfig) -> None:
        super().__init__(config)
        self.superbloom = SuperbloomModel(config)
        self.transform = BertPredictionHeadTransform(config)
        self.output_bias = nn.Parameter(torch.zeros(config.vocab_size))
        self.register_buffer("hash_table", config.hash_maps().table.clone(), persistent=True)
        self._maps: BloomHashMaps | None = None
        self.post_init()

    @property
    def maps(self) -> BloomHashMaps:
        """The hash maps, rebuilt from the configuration and checked against the stored table once."""
        if self._maps is None:
            maps = self.config.hash_maps()
            if not torch.equal(maps.table, self.hash_table.cpu()):
                raise ValueError("the stored hash table differs from the maps this configuration builds (another "
                                 "numpy permutation?); load the model with the numpy version that saved it")
            self._maps = maps
        return self._maps

    def get_output_embeddings(self) -> None:
        return None          # the output layer reads the input matrix directly: tied by construction

    def scores(self, hidden: torch.Tensor) -> torch.Tensor:
        """``(..., vocab_size)`` logits: the transform, then the tied embedding matrix and the bias."""
        return self.transform(hidden) @ self.superbloom.word_embeddings.weight.T + self.output_bias

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None,
                labels: torch.Tensor | None = None, output_hidden_states: bool = False,
                **_: object) -> SuperbloomOutput:
        out = self.superbloom(input_ids, attention_mask, output_hidden_states=output_hidden_states)
        if labels is None:
            return SuperbloomOutput(logits=self.scores(out.last_hidden_state), hidden_states=out.hidden_states)
        if labels.shape != input_ids.shape:
            raise ValueError(f"labels must have the shape of input_ids {tuple(input_ids.shape)}, got "
                         f"{tuple(labels.shape)} (-100 where nothing is predicted)")
        keep = labels != -100
        # the output layer runs at the masked positions only (about 15% of them): logits is None in training
        hidden = out.last_hidden_state[keep]
        targets = labels[keep]
        if not targets.numel():
            loss = self.scores(hidden).sum() * 0.0                    # nothing masked in this batch
        elif self.config.num_sampled and self.training:
            loss = self._sampled_loss(hidden, targets)
        else:
            loss = nn.functional.cross_entropy(self.scores(hidden).float(), targets)
        loss = loss * self.config.num_hashes                          # summed over the m hashes of an item
        return SuperbloomOutput(loss=loss, logits=None, hidden_states=out.hidden_states)

    def _sampled_loss(self, hidden: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Cross-entropy over the batch's targets plus ``num_sampled`` uniformly drawn item tokens (one shared
        sample; uniform proposals need no log-Q correction). Only those columns of the output layer are computed,
        so a step costs what scoring ``num_sampled`` tokens costs (the paper's "same computational budget"); only
        the loss changes: evaluation uses every token."""
        first = self.maps.offset(0)
        sample = torch.randint(first, self.config.vocab_size, (self.config.num_sampled,), device=hidden.device)
        columns, inverse = torch.unique(torch.cat([targets, sample]), return_inverse=True)
        weight = self.superbloom.word_embeddings.weight[columns]
        logits = self.transform(hidden) @ weight.T + self.output_bias[columns]
        return nn.functional.cross_entropy(logits.float(), inverse[: targets.shape[0]])

    def hash_log_probs(self, hidden: torch.Tensor) -> torch.Tensor:
        """``(batch, m, d)`` hidden states at a masked item's m positions -> ``(batch, m, T)`` log-probabilities,
        each over its own map's tokens (Algorithm 1's ``p_j``)."""
        maps, m = self.maps, self.config.num_hashes
        if hidden.dim() != 3 or hidden.shape[1] != m:
            raise ValueError(f"hidden must be (batch, m = {m}, d): the states at one item's m positions, got "
                             f"{tuple(hidden.shape)}")
        logits = self.scores(hidden).float()
        slices = [logits[:, j, maps.offset(j):maps.offset(j) + maps.tokens_per_map] for j in range(m)]
        return torch.log_softmax(torch.stack(slices, dim=1), dim=-1)

    @torch.no_grad()
    def item_log_probs(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None,
                       item_positions: torch.Tensor) -> torch.Tensor:
        """``(batch, m, T)``: Algorithm 1's ``p_j`` for the item starting at token ``item_positions[b]`` of each
        sequence (its m tokens masked)."""
        hidden = self.superbloom(input_ids, attention_mask).last_hidden_state
        index = item_positions[:, None] + torch.arange(self.config.num_hashes, device=hidden.device)[None, :]
        states = hidden.gather(1, index[..., None].expand(-1, -1, hidden.shape[-1]))
        return self.hash_log_probs(states)

    @torch.no_grad()
    def top_k(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None, item_positions: torch.Tensor,
              k: int, exhaustive: bool = False, **beam_options: object) -> TopK:
        """The top-``k`` ids for the item starting at token ``item_positions[b]`` of each sequence (its m tokens
        masked), by Algorithm 1's beam search (``beam_options``: ``beam``, ``max_iterations``) or exhaustively."""
        return self.decode(self.item_log_probs(input_ids, attention_mask, item_positions), k, exhaustive,
                           **beam_options)

    def decode(self, log_probs: torch.Tensor, k: int, exhaustive: bool = False, **beam_options: object) -> TopK:
        """The top-``k`` ids of ``(batch, m, T)`` hash log-probabilities (:meth:`item_log_probs`), by Algorithm 1's
        beam search (``beam_options``: ``beam``, ``max_iterations``) or exhaustively."""
        if exhaustive:
            return exhaustive_topk(log_probs, self.maps, k)
        return beam_topk(log_probs, self.maps, k, **beam_options)
