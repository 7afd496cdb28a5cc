"""One model for both of the chapter's tasks: the intent head (max pooling, §3.2) and the slot head (per token).

The paper trains one model per task (intents on multiATIS, slots on MTOP). Training both heads at once halves what
the chapter's CPU budget pays for every row of Tables 1 and 2; the loss is the sum of the two cross-entropies, and
model selection uses the mean of validation intent accuracy and exact match (the paper selects "the models reaching
the best exact match and intent accuracy on the validation set"). This is the chapter's choice, named as such on
the page.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import torch
from torch import nn
from transformers.utils import ModelOutput

from hashlib_core.papers.pnlp_mixer.configuration import PNLPMixerConfig
from hashlib_core.papers.pnlp_mixer.heads import (
    PNLPMixerForSequenceClassification,
    _PNLPMixerWithHead,
    classification_head,
    masked_max_pool,
)

__all__ = ["IntentSlotOutput", "PNLPMixerForIntentAndSlots", "intent_modules"]


@dataclass
class IntentSlotOutput(ModelOutput):
    loss: torch.Tensor | None = None
    intent_logits: torch.Tensor | None = None
    slot_logits: torch.Tensor | None = None
    hidden_states: tuple[torch.Tensor, ...] | None = None


class PNLPMixerForIntentAndSlots(_PNLPMixerWithHead):
    """``classifier``: intents (``config.num_labels``) from the max-pooled real tokens; ``slot_classifier``: slot
    tags (``config.num_slot_labels``) at every position. ``labels`` (B,) and ``slot_labels`` (B, s) with -100 on
    padding give the loss: the intent cross-entropy plus ``config.slot_loss_weight`` (default 1) times the slot
    cross-entropy; 0 trains an intent model only (the paper's setting for its intent tables)."""

    def __init__(self, config: PNLPMixerConfig) -> None:
        slots = getattr(config, "num_slot_labels", None)
        if isinstance(slots, bool) or not isinstance(slots, int) or slots < 1:
            raise ValueError(f"PNLPMixerForIntentAndSlots needs config.num_slot_labels >= 1 (the slot tags), got "
                             f"{slots!r}; pass num_slot_labels=... to PNLPMixerConfig")
        weight = getattr(config, "slot_loss_weight", 1.0)
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0.0 <= weight < float("inf"):
            raise ValueError(f"PNLPMixerForIntentAndSlots: config.slot_loss_weight must be a number >= 0 (0: intents "
                             f"only), got {weight!r}")
        super().__init__(config)
        self.slot_classifier = classification_head(config, slots)
        self.post_init()

    def forward(self, fingerprints: torch.Tensor | None = None, attention_mask: torch.Tensor | None = None,
                input_features: torch.Tensor | None = None, labels: torch.Tensor | None = None,
                slot_labels: torch.Tensor | None = None, output_hidden_states: bool | None = None,
                **kwargs) -> IntentSlotOutput:
        out = self.base_model(fingerprints, attention_mask, input_features, output_hidden_states)
        intent_logits = self.classifier(masked_max_pool(out.last_hidden_state, attention_mask))
        slot_logits = self.slot_classifier(out.last_hidden_state)
        loss = None
        if labels is not None or slot_labels is not None:
            if labels is None or slot_labels is None:
                raise ValueError("pass both labels (intents) and slot_labels to get the joint loss")
            if labels.shape != intent_logits.shape[:1] or slot_labels.shape != slot_logits.shape[:2]:
                raise ValueError(f"labels must be (batch,) and slot_labels (batch, {self.config.max_seq_len}); got "
                                 f"{tuple(labels.shape)} and {tuple(slot_labels.shape)}")
            loss = nn.functional.cross_entropy(intent_logits, labels)
            weight = float(getattr(self.config, "slot_loss_weight", 1.0))
            if weight:
                loss = loss + weight * nn.functional.cross_entropy(slot_logits.reshape(-1, slot_logits.shape[-1]),
                                                                   slot_labels.reshape(-1), ignore_index=-100)
        return IntentSlotOutput(loss=loss, intent_logits=intent_logits, slot_logits=slot_logits,
                                hidden_states=out.hidden_states)


def intent_modules(model: PNLPMixerForIntentAndSlots) -> PNLPMixerForSequenceClassification:
    """The modules an intent model uses, the encoder and the intent head, with ``model``'s weights, as an intent
    classifier (on the CPU, in eval mode): what an intent-only model's parameters and bytes count. A model trained
    with ``slot_loss_weight`` 0 still carries a slot head (never trained, never read for its intents); counting it
    would make the intent model larger than the one the paper describes. Its intent logits are ``model``'s. Built
    without drawing from torch's random generator (its initial weights are overwritten at once)."""
    if not isinstance(model, PNLPMixerForIntentAndSlots):
        raise TypeError(f"intent_modules expects a PNLPMixerForIntentAndSlots, got {type(model).__name__}")
    with torch.random.fork_rng(devices=[]):
        intent = PNLPMixerForSequenceClassification(copy.deepcopy(model.config))
    state = {k: v.detach().cpu() for k, v in model.state_dict().items() if not k.startswith("slot_classifier.")}
    intent.load_state_dict(state)          # strict: every module of the intent model, nothing else
    return intent.eval()
