"""The heads of pNLP-Mixer (§3.2), on any encoder of :mod:`~hashlib_core.papers.pnlp_mixer.alternatives` (the Mixer by
default): per token for slot tagging, max pooling over the real tokens for intent classification.
"""
from __future__ import annotations

import torch
from torch import nn
from transformers.modeling_outputs import SequenceClassifierOutput, TokenClassifierOutput

from hashlib_core.dropout import Dropout
from hashlib_core.papers.pnlp_mixer.alternatives import build_encoder
from hashlib_core.papers.pnlp_mixer.configuration import PNLPMixerConfig
from hashlib_core.papers.pnlp_mixer.modeling import PNLPMixerPreTrainedModel

__all__ = ["PNLPMixerForSequenceClassification", "PNLPMixerForTokenClassification", "classification_head",
           "masked_max_pool"]


def classification_head(config: PNLPMixerConfig, num_outputs: int) -> nn.Module:
    """§4's head: one hidden layer of ``classifier_hidden`` (GELU, dropout) to ``num_outputs``; linear when 0."""
    if config.classifier_hidden:
        return nn.Sequential(nn.Linear(config.hidden_size, config.classifier_hidden), nn.GELU(),
                             Dropout(config.dropout), nn.Linear(config.classifier_hidden, num_outputs))
    return nn.Linear(config.hidden_size, num_outputs)


def masked_max_pool(hidden: torch.Tensor, attention_mask: torch.Tensor | None) -> torch.Tensor:
    """§3.2's sentence vector: the maximum over the real tokens (all positions when there is no mask)."""
    if attention_mask is not None:
        hidden = hidden.masked_fill(~attention_mask.bool()[..., None], torch.finfo(hidden.dtype).min)
    return hidden.max(dim=1).values


class _PNLPMixerWithHead(PNLPMixerPreTrainedModel):
    """The encoder ``config.encoder`` (default the mixer; §5.2's alternatives in
    :mod:`~hashlib_core.papers.pnlp_mixer.alternatives`) and a head of ``classifier_hidden`` width (0: linear) to
    ``num_labels``. The encoder is ``self.pnlp_mixer`` (``base_model``) whichever it is."""

    def __init__(self, config: PNLPMixerConfig) -> None:
        super().__init__(config)
        self.pnlp_mixer = build_encoder(config.encoder, config)
        self.classifier = classification_head(config, config.num_labels)
        self.post_init()


class PNLPMixerForSequenceClassification(_PNLPMixerWithHead):
    """Intent classification: max pooling over the real tokens (§3.2), then the head; cross-entropy with labels."""

    def forward(self, fingerprints: torch.Tensor | None = None, attention_mask: torch.Tensor | None = None,
                input_features: torch.Tensor | None = None, labels: torch.Tensor | None = None,
                output_hidden_states: bool | None = None, **kwargs) -> SequenceClassifierOutput:
        out = self.pnlp_mixer(fingerprints, attention_mask, input_features, output_hidden_states)
        logits = self.classifier(masked_max_pool(out.last_hidden_state, attention_mask))   # mask checked by encoder
        loss = None
        if labels is not None:
            if labels.shape != logits.shape[:1] or int(labels.min()) < 0 or int(labels.max()) >= self.config.num_labels:
                raise ValueError(f"labels must be (batch,) ids in [0, {self.config.num_labels}), got shape "
                                 f"{tuple(labels.shape)}")
            loss = nn.functional.cross_entropy(logits, labels)
        return SequenceClassifierOutput(loss=loss, logits=logits, hidden_states=out.hidden_states)


class PNLPMixerForTokenClassification(_PNLPMixerWithHead):
    """Slot tagging: the head on every position; cross-entropy over positions whose label is not -100."""

    def forward(self, fingerprints: torch.Tensor | None = None, attention_mask: torch.Tensor | None = None,
                input_features: torch.Tensor | None = None, labels: torch.Tensor | None = None,
                output_hidden_states: bool | None = None, **kwargs) -> TokenClassifierOutput:
        out = self.pnlp_mixer(fingerprints, attention_mask, input_features, output_hidden_states)
        logits = self.classifier(out.last_hidden_state)
        loss = None
        if labels is not None:
            valid = labels[labels != -100]
            if labels.shape != logits.shape[:2] or (valid.numel() and (int(valid.min()) < 0
                                                                       or int(valid.max()) >= self.config.num_labels)):
                raise ValueError(f"labels must be (batch, {self.config.max_seq_len}) ids in "
                                 f"[0, {self.config.num_labels}) or -100 (ignored), got shape {tuple(labels.shape)}")
            loss = nn.functional.cross_entropy(logits.reshape(-1, self.config.num_labels), labels.reshape(-1),
                                               ignore_index=-100)
        return TokenClassifierOutput(loss=loss, logits=logits, hidden_states=out.hidden_states)
