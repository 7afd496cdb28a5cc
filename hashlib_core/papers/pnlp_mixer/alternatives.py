"""§5.2's encoders (Table 2): what sits between the bottleneck and the head, in place of the MLP-Mixer.

§5.2 first "remove[s] the MLP-Mixer and connect[s] the output of the bottleneck layer to the classification heads"
(projection-only), then replaces it with a CNN, an LSTM and a transformer, keeping the MinHash projection, the
bottleneck and the heads. Table 2 gives only their sizes: projection-only 0.2M, CNN 1.0M, LSTM 1.2M, transformer
1.0M and MLP-Mixer 1.0M parameters. **The paper prints no kernel size, layer count, width or head count for the
alternatives**; the choices below are ours, made so that each model with §4's projection (m = 512), bottleneck
(h = 256) and head (one hidden layer of 256) lands on its Table 2 size (counted exactly in
``tests/pnlp_mixer/test_alternatives.py`` and in the chapter's sizes table; Table 2's column here):

==================  ======================================================================  =====================
encoder             what reads the bottleneck output ``(B, s, h)``                          Table 2
==================  ======================================================================  =====================
``projection-only`` nothing: the bottleneck output goes to the head                         0.2M
``cnn``             4 pre-LayerNorm residual blocks ``x + GELU(Conv1d_k=3(LN(x)))`` of h    1.0M
                    channels (receptive field 9 tokens), final LayerNorm
``lstm``            2 bidirectional LSTM layers of ``d = round(140 h / 256)`` (140) units   1.2M
                    per direction, then ``LayerNorm(Linear(2d -> h))`` so the heads fit
``transformer``     sinusoidal positions (Vaswani et al.) added to the bottleneck output,   1.0M
                    2 pre-LayerNorm ``nn.TransformerEncoderLayer`` (4 heads, GELU
                    feed-forward of ``channel_mixing_dim`` = 256), final LayerNorm
``mixer``           :class:`~hashlib_core.papers.pnlp_mixer.modeling.PNLPMixerModel`, §4    1.0M
==================  ======================================================================  =====================

Padding: every alternative zeroes the features of masked positions before the bottleneck (so ``window_size``
neighbours that are padding read as zeros), the CNN zeroes masked positions before every convolution (a real token
near the padding sees zeros, as at the sentence's edges), the LSTM runs over the packed real tokens only (a mask need
not be a prefix: the real tokens are gathered in order, packed, and scattered back; padded positions output zeros)
and the transformer's attention ignores masked keys. So changing what a masked position holds changes no output at
a real position. The mixer is left exactly as §3.2 describes it: its token mixing is a dense layer over all ``s``
positions, so it *reads* the padded positions (all-zero features from
:class:`~hashlib_core.papers.pnlp_mixer.projection.SentenceProjector`, hence a constant bottleneck output) and is not
invariant to what they hold.

Sizes scale with ``hidden_size`` (and ``channel_mixing_dim`` for the transformer); the layer counts, kernel size and
head count are fixed. The mixer fields (``num_mixer_layers``, ``token_mixing_dim``) size only the mixer.
"""
from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
from transformers.modeling_outputs import BaseModelOutput

from hashlib_core.dropout import Dropout, replace_dropout
from hashlib_core.papers.pnlp_mixer.configuration import ENCODERS, PNLPMixerConfig
from hashlib_core.papers.pnlp_mixer.modeling import (
    PNLPMixerModel,
    PNLPMixerPreTrainedModel,
    _check_mask,
    _features,
    build_bottleneck,
)

__all__ = [
    "CNN_KERNEL_SIZE",
    "CNN_LAYERS",
    "ENCODERS",
    "LSTM_LAYERS",
    "TRANSFORMER_HEADS",
    "TRANSFORMER_LAYERS",
    "PNLPCNNModel",
    "PNLPLSTMModel",
    "PNLPProjectionOnlyModel",
    "PNLPTransformerModel",
    "build_encoder",
    "lstm_width",
]

CNN_LAYERS, CNN_KERNEL_SIZE = 4, 3
LSTM_LAYERS = 2
TRANSFORMER_LAYERS, TRANSFORMER_HEADS = 2, 4


def lstm_width(hidden_size: int) -> int:
    """Units per direction of the LSTM: ``round(140 h / 256)``, 140 for h = 256 (about 1.2M with the head)."""
    return max(1, round(140 * hidden_size / 256))


def _masked_features(config: PNLPMixerConfig, fingerprints: torch.Tensor | None,
                     input_features: torch.Tensor | None, mask: torch.Tensor | None) -> torch.Tensor:
    """:func:`~hashlib_core.papers.pnlp_mixer.modeling._features` with the masked positions' own features zeroed
    before the window concatenation (a real token's padded neighbours read as zeros)."""
    features = _features(config, fingerprints, input_features)
    _check_mask(mask, tuple(features.shape[:2]))
    if mask is None:
        return features
    keep = mask.to(features.dtype)[..., None]
    w, m, s = config.window_size, config.bloom_size, config.max_seq_len
    if not w:
        return features * keep
    own = nn.functional.pad(features[..., w * m:(w + 1) * m] * keep, (0, 0, w, w))
    return torch.cat([own[:, i:i + s] for i in range(2 * w + 1)], dim=-1)


class _AlternativeEncoder(PNLPMixerPreTrainedModel):
    """Projection features -> the pNLP-Mixer's bottleneck -> :meth:`_encode`; ``BaseModelOutput`` as the mixer's
    (``hidden_states``: the bottleneck output, then each layer's, the last one being ``last_hidden_state``)."""

    def __init__(self, config: PNLPMixerConfig) -> None:
        super().__init__(config)
        self.bottleneck = build_bottleneck(config)

    def get_input_embeddings(self) -> nn.Module:
        return self.bottleneck

    def _encode(self, hidden: torch.Tensor, mask: torch.Tensor | None, states: list | None) -> torch.Tensor:
        raise NotImplementedError

    def forward(self, fingerprints: torch.Tensor | None = None, attention_mask: torch.Tensor | None = None,
                input_features: torch.Tensor | None = None, output_hidden_states: bool | None = None,
                **kwargs) -> BaseModelOutput:
        """As :meth:`PNLPMixerModel.forward <hashlib_core.papers.pnlp_mixer.modeling.PNLPMixerModel.forward>`."""
        if fingerprints is None and kwargs.get("input_ids") is not None:
            fingerprints = kwargs.pop("input_ids")
        if output_hidden_states is None:
            output_hidden_states = self.config.output_hidden_states
        features = _masked_features(self.config, fingerprints, input_features, attention_mask)
        hidden = self.bottleneck(features)
        states = [hidden] if output_hidden_states else None
        mask = attention_mask.bool() if attention_mask is not None else None
        hidden = self._encode(hidden, mask, states)
        if states is not None and states[-1] is not hidden:
            states.append(hidden)
        return BaseModelOutput(last_hidden_state=hidden, hidden_states=tuple(states) if states else None)


class PNLPProjectionOnlyModel(_AlternativeEncoder):
    """Table 2's "Projection-only": the bottleneck output ``(B, s, h)`` is the output (no mixing across tokens)."""

    def __init__(self, config: PNLPMixerConfig) -> None:
        super().__init__(config)
        self.post_init()

    def _encode(self, hidden, mask, states):
        return hidden


class _ConvBlock(nn.Module):
    """``x + Dropout(GELU(Conv1d(LN(x) with masked positions zeroed)))``, ``h`` channels, 'same' zero padding."""

    def __init__(self, config: PNLPMixerConfig) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.conv = nn.Conv1d(config.hidden_size, config.hidden_size, CNN_KERNEL_SIZE, padding=CNN_KERNEL_SIZE // 2)
        self.act, self.dropout = nn.GELU(), Dropout(config.dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        y = self.norm(x)
        if mask is not None:
            y = y.masked_fill(~mask[..., None], 0.0)
        return x + self.dropout(self.act(self.conv(y.transpose(1, 2)).transpose(1, 2)))


class PNLPCNNModel(_AlternativeEncoder):
    """Table 2's CNN: ``CNN_LAYERS`` (4) residual 1-D convolution blocks over positions (kernel ``CNN_KERNEL_SIZE``
    = 3, ``hidden_size`` channels) and a final LayerNorm: about 1.0M parameters with §4's sizes and an 18-intent head
    (Table 2: 1.0M). Layer count and kernel size are ours (the paper prints neither)."""

    def __init__(self, config: PNLPMixerConfig) -> None:
        super().__init__(config)
        self.blocks = nn.ModuleList(_ConvBlock(config) for _ in range(CNN_LAYERS))
        self.final_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.post_init()

    def _encode(self, hidden, mask, states):
        return self._through(self.blocks, hidden, states, lambda block, h: block(h, mask))


def _packed_lstm(lstm: nn.LSTM, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """Run ``lstm`` over the real tokens of each sentence only: gathered in order (a mask need not be a prefix),
    packed, and scattered back to their positions; masked positions output zeros."""
    if mask is None:
        return lstm(x)[0]
    order = torch.argsort((~mask).long(), dim=1, stable=True)        # real positions first, in sentence order
    gathered = x.gather(1, order[..., None].expand_as(x))
    packed = pack_padded_sequence(gathered, mask.sum(1).cpu(), batch_first=True, enforce_sorted=False)
    out = pad_packed_sequence(lstm(packed)[0], batch_first=True, total_length=x.shape[1])[0]
    return torch.zeros_like(out).scatter(1, order[..., None].expand_as(out), out)


class PNLPLSTMModel(_AlternativeEncoder):
    """Table 2's LSTM: ``LSTM_LAYERS`` (2) bidirectional LSTM layers of :func:`lstm_width` units per direction
    (140 for h = 256) over the packed real tokens, then ``LayerNorm(Linear(2d -> h))`` so the heads read ``h``
    features: about 1.2M parameters with §4's sizes and an 18-intent head (Table 2: 1.2M). Depth and width are ours
    (the paper prints neither); ``hidden_states``' LSTM entries are ``2d`` wide."""

    def __init__(self, config: PNLPMixerConfig) -> None:
        super().__init__(config)
        d = lstm_width(config.hidden_size)
        self.lstms = nn.ModuleList(nn.LSTM(config.hidden_size if i == 0 else 2 * d, d, batch_first=True,
                                           bidirectional=True) for i in range(LSTM_LAYERS))
        self.dropout = Dropout(config.dropout)
        self.output = nn.Sequential(nn.Linear(2 * d, config.hidden_size),
                                    nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps))
        self.post_init()

    def _encode(self, hidden, mask, states):
        for lstm in self.lstms:
            hidden = self.dropout(_packed_lstm(lstm, hidden, mask))
            if states is not None:
                states.append(hidden)
        return self.output(hidden)


def sinusoidal_positions(length: int, dim: int, device=None) -> torch.Tensor:
    """``(length, dim)`` sinusoidal position encodings of Vaswani et al. (sin on even, cos on odd channels)."""
    position = torch.arange(length, dtype=torch.float32, device=device)[:, None]
    rate = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32, device=device) * (-math.log(10000.0) / dim))
    table = torch.zeros(length, dim, device=device)
    table[:, 0::2] = torch.sin(position * rate)
    table[:, 1::2] = torch.cos(position * rate[: dim // 2])
    return table


class PNLPTransformerModel(_AlternativeEncoder):
    """Table 2's transformer: sinusoidal positions (no parameters; fixed, like the mixer's position-wise token
    mixing needs none) added to the bottleneck output, ``TRANSFORMER_LAYERS`` (2) pre-LayerNorm
    ``nn.TransformerEncoderLayer`` of ``h`` with ``TRANSFORMER_HEADS`` (4) heads and a GELU feed-forward of
    ``channel_mixing_dim`` (256, the mixer's channel MLP), masked keys ignored, and a final LayerNorm: about
    1.0M parameters with §4's sizes and an 18-intent head (Table 2: 1.0M). Depth, heads and positions are ours (the
    paper prints none of them)."""

    def __init__(self, config: PNLPMixerConfig) -> None:
        if config.hidden_size % TRANSFORMER_HEADS:
            raise ValueError(f"the transformer encoder needs hidden_size divisible by its {TRANSFORMER_HEADS} heads, "
                             f"got hidden_size={config.hidden_size}")
        super().__init__(config)
        self.layers = replace_dropout(nn.ModuleList(
            nn.TransformerEncoderLayer(config.hidden_size, TRANSFORMER_HEADS, config.channel_mixing_dim,
                                       config.dropout, activation="gelu", layer_norm_eps=config.layer_norm_eps,
                                       batch_first=True, norm_first=True)
            for _ in range(TRANSFORMER_LAYERS)))
        self.dropout = Dropout(config.dropout)
        self.final_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.post_init()

    def _encode(self, hidden, mask, states):
        hidden = self.dropout(hidden + sinusoidal_positions(hidden.shape[1], hidden.shape[2], hidden.device))
        padding = ~mask if mask is not None else None
        return self._through(self.layers, hidden, states, lambda layer, h: layer(h, src_key_padding_mask=padding))


_CLASSES = {"projection-only": PNLPProjectionOnlyModel, "cnn": PNLPCNNModel, "lstm": PNLPLSTMModel,
            "transformer": PNLPTransformerModel, "mixer": PNLPMixerModel}


def build_encoder(name: str, config: PNLPMixerConfig) -> PNLPMixerPreTrainedModel:
    """The encoder ``name`` (one of :data:`ENCODERS`) for ``config``: bottleneck + encoder, returning
    ``BaseModelOutput(last_hidden_state (B, s, h), hidden_states)``; the heads of
    :mod:`~hashlib_core.papers.pnlp_mixer.modeling` sit on any of them (``PNLPMixerConfig(encoder=name)``)."""
    if not isinstance(config, PNLPMixerConfig):
        raise TypeError(f"build_encoder needs a PNLPMixerConfig, got {type(config).__name__}")
    if name not in _CLASSES:
        raise ValueError(f"unknown pNLP-Mixer encoder {name!r:.40}; choose one of {', '.join(map(repr, ENCODERS))}")
    return _CLASSES[name](config)
