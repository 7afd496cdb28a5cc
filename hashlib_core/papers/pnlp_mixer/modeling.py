"""pNLP-Mixer models (Fusco et al., §3): projection features -> bottleneck -> MLP-Mixer -> a head, Hugging Face style.

* The projection (§3.1) is parameter-free: a token's MinHash fingerprint becomes a counting Bloom filter
  (:func:`hashlib_core.hashing.minhash.counting_bloom_filter`). The models take either the fingerprints
  ``(B, s, n)`` or the features ``(B, s, m)`` themselves.
* The bottleneck (§3.2): one dense layer, Leaky ReLU, LayerNorm: ``C (s x m) -> B (s x h)``.
* The MLP-Mixer (Tolstikhin et al., 2021), as the original: pre-LayerNorm blocks, a token-mixing MLP over the ``s``
  positions (applied to the transposed matrix) and a channel-mixing MLP over the ``h`` channels, GELU, residuals.
* The heads, on any encoder (:mod:`~hashlib_core.papers.pnlp_mixer.heads`): per token for slot tagging, max pooling
  over the real tokens for intent classification.
"""
from __future__ import annotations

import torch
from torch import nn
from transformers import PreTrainedModel
from transformers.modeling_outputs import BaseModelOutput

from hashlib_core.dropout import Dropout
from hashlib_core.hashing.minhash import counting_bloom_filter
from hashlib_core.papers.pnlp_mixer.configuration import PNLPMixerConfig

__all__ = ["PNLPMixerPreTrainedModel", "PNLPMixerModel", "MixerBlock", "build_bottleneck"]


class _MLP(nn.Sequential):
    def __init__(self, dim: int, hidden: int, dropout: float) -> None:
        super().__init__(nn.Linear(dim, hidden), nn.GELU(), Dropout(dropout), nn.Linear(hidden, dim),
                         Dropout(dropout))


class MixerBlock(nn.Module):
    """``x + TokenMLP(LN(x)^T)^T``, then ``x + ChannelMLP(LN(x))``."""

    def __init__(self, config: PNLPMixerConfig) -> None:
        super().__init__()
        self.token_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.token_mixing = _MLP(config.max_seq_len, config.token_mixing_dim, config.dropout)
        self.channel_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.channel_mixing = _MLP(config.hidden_size, config.channel_mixing_dim, config.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.token_mixing(self.token_norm(x).transpose(1, 2)).transpose(1, 2)
        return x + self.channel_mixing(self.channel_norm(x))


class PNLPMixerPreTrainedModel(PreTrainedModel):
    config_class = PNLPMixerConfig
    base_model_prefix = "pnlp_mixer"
    main_input_name = "fingerprints"

    def embedding_parameter_count(self) -> int:
        """No embedding table: the parameters that turn a token's features into its vector are the bottleneck's."""
        return sum(p.numel() for p in self.base_model.bottleneck.parameters())

    def _through(self, layers, hidden: torch.Tensor, states: list | None, step) -> torch.Tensor:
        """``hidden`` through ``layers`` (``step(layer, hidden)`` each), every output recorded in ``states``, then
        ``final_norm`` (which replaces the last recorded state)."""
        for layer in layers:
            hidden = step(layer, hidden)
            if states is not None:
                states.append(hidden)
        hidden = self.final_norm(hidden)
        if states is not None:
            states[-1] = hidden
        return hidden

    @torch.no_grad()
    def _init_weights(self, module: nn.Module) -> None:
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, std=self.config.initializer_range)
            nn.init.zeros_(module.bias)
        elif isinstance(module, nn.LayerNorm):
            nn.init.ones_(module.weight)
            nn.init.zeros_(module.bias)


def _features(config: PNLPMixerConfig, fingerprints: torch.Tensor | None,
              input_features: torch.Tensor | None) -> torch.Tensor:
    """``(B, s, (2w+1) m)`` float features from fingerprints or given features, with clear errors."""
    if (fingerprints is None) == (input_features is None):
        raise ValueError("pass exactly one of fingerprints (B, s, num_hashes) integers or input_features "
                         "(B, s, bloom_size) counts")
    s = config.max_seq_len
    if fingerprints is not None:
        if not isinstance(fingerprints, torch.Tensor) or fingerprints.dim() != 3 or fingerprints.is_floating_point():
            raise TypeError(f"fingerprints must be an integer tensor (batch, {s}, {config.num_hashes}); build them "
                            f"with FingerprintCache.token_fingerprints and pad to max_seq_len")
        if fingerprints.shape[1:] != (s, config.num_hashes) or fingerprints.shape[0] == 0:
            raise ValueError(f"fingerprints must have shape (batch >= 1, {s}, {config.num_hashes}), got "
                             f"{tuple(fingerprints.shape)}; pad or truncate every sentence to max_seq_len tokens")
        features = counting_bloom_filter(fingerprints, config.bloom_size)
    else:
        if not isinstance(input_features, torch.Tensor) or input_features.dim() != 3:
            raise TypeError(f"input_features must be a float tensor (batch, {s}, {config.bloom_size})")
        if input_features.shape[1:] != (s, config.bloom_size) or input_features.shape[0] == 0:
            raise ValueError(f"input_features must have shape (batch >= 1, {s}, {config.bloom_size}), got "
                             f"{tuple(input_features.shape)}")
        features = input_features.float()
    w = config.window_size
    if w:
        padded = nn.functional.pad(features, (0, 0, w, w))
        features = torch.cat([padded[:, i:i + s] for i in range(2 * w + 1)], dim=-1)
    return features


def build_bottleneck(config: PNLPMixerConfig) -> nn.Sequential:
    """§3.2's bottleneck, the same in front of every encoder: dense ``(2w+1) m -> h``, Leaky ReLU, LayerNorm."""
    return nn.Sequential(nn.Linear(config.projection_features, config.hidden_size),
                         nn.LeakyReLU(config.leaky_relu_slope),
                         nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps))


def _check_mask(mask: torch.Tensor | None, shape: tuple[int, int]) -> None:
    if mask is None:
        return
    if not isinstance(mask, torch.Tensor) or tuple(mask.shape) != shape:
        raise ValueError(f"attention_mask must be a (batch, max_seq_len) tensor of shape {shape}, got "
                         f"{getattr(mask, 'shape', type(mask).__name__)}")
    if not bool(((mask == 0) | (mask == 1)).all()) or not bool((mask.sum(1) > 0).all()):
        raise ValueError("attention_mask must hold 0/1 with at least one real token per sentence")


class PNLPMixerModel(PNLPMixerPreTrainedModel):
    """Bottleneck + mixer blocks; ``last_hidden_state`` ``(B, s, h)``."""

    def __init__(self, config: PNLPMixerConfig) -> None:
        super().__init__(config)
        self.bottleneck = build_bottleneck(config)
        self.mixers = nn.ModuleList(MixerBlock(config) for _ in range(config.num_mixer_layers))
        self.final_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.post_init()

    def get_input_embeddings(self) -> nn.Module:
        return self.bottleneck

    def forward(self, fingerprints: torch.Tensor | None = None, attention_mask: torch.Tensor | None = None,
                input_features: torch.Tensor | None = None, output_hidden_states: bool | None = None,
                **kwargs) -> BaseModelOutput:
        """``hidden_states`` (with ``output_hidden_states``): the bottleneck output, then every mixer block's.
        ``input_ids`` is accepted as another name of ``fingerprints`` (what the book's shared helpers pass)."""
        if fingerprints is None and kwargs.get("input_ids") is not None:
            fingerprints = kwargs.pop("input_ids")
        if output_hidden_states is None:
            output_hidden_states = self.config.output_hidden_states
        features = _features(self.config, fingerprints, input_features)
        _check_mask(attention_mask, tuple(features.shape[:2]))
        hidden = self.bottleneck(features)
        states = [hidden] if output_hidden_states else None
        hidden = self._through(self.mixers, hidden, states, lambda block, h: block(h))
        return BaseModelOutput(last_hidden_state=hidden, hidden_states=tuple(states) if states else None)
