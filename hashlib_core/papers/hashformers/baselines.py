"""The BERT baselines of HashFormers (§4.1): BERT-MLM and BERT-S+R over a BPE vocabulary.

Both are RoBERTa-architecture models, exactly the configuration of Yamaguchi et al.'s released pre-training script
that HashFormers builds on (``gucci-j/light-transformer-emnlp2021``, ``src/pretrainer.py``).

BERT-MLM comes in two forms with the same parameters and the same loss: ``RobertaForMaskedLM``, whose output layer
scores every position (the cost the paper's Table 3 measures), and :class:`RobertaForMaskedOnlyLM`, which scores only
the masked positions (``labels != -100``), about 15% of them; the second is the cheaper one to pre-train with.
"""
from __future__ import annotations

from typing import Any, Literal

import torch
from torch.nn import functional as F
from transformers import (
    PreTrainedModel,
    RobertaConfig,
    RobertaForMaskedLM,
    RobertaForSequenceClassification,
    RobertaForTokenClassification,
)
from transformers.modeling_outputs import MaskedLMOutput
from transformers.utils.generic import can_return_tuple

from hashlib_core.papers.hashformers.configuration import HashFormerConfig
from hashlib_core.papers.hashformers.modeling import NUM_SR_LABELS
from hashlib_core.papers.hashformers.tokenization import NUM_SPECIAL_TOKENS, PAD_ID

__all__ = ["IGNORE_INDEX", "RobertaForMaskedOnlyLM", "baseline_config", "build_baseline"]

#: The label of a position the MLM loss ignores (not masked), as in ``torch.nn.CrossEntropyLoss``.
IGNORE_INDEX = -100


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


class RobertaForMaskedOnlyLM(RobertaForMaskedLM):
    """``RobertaForMaskedLM`` whose output layer (``lm_head``: dense, GELU, LayerNorm, vocabulary projection) runs
    only at the masked positions, ``labels != -100``, when ``labels`` are given.

    The head works position by position, so its scores at the masked positions, and hence the loss (the mean
    cross-entropy over those positions, which is all ``CrossEntropyLoss`` averages over in the full model) and every
    gradient, are those of ``RobertaForMaskedLM`` up to float rounding; the parameters and their names are the same,
    so either class loads the other's weights. The returned ``logits`` are then the scores of the masked positions
    only, shape ``(number of masked positions, vocab_size)``, in row-major (batch, position) order. Without
    ``labels`` it is ``RobertaForMaskedLM`` (scores at every position). With no masked position the loss is NaN, as
    in the full model.
    """

    @can_return_tuple
    def forward(self, input_ids: torch.LongTensor | None = None, attention_mask: torch.Tensor | None = None,
                token_type_ids: torch.LongTensor | None = None, position_ids: torch.LongTensor | None = None,
                inputs_embeds: torch.Tensor | None = None, labels: torch.LongTensor | None = None,
                **kwargs: Any) -> MaskedLMOutput:
        """The encoder at every position; the output layer and the loss only where ``labels != -100``."""
        if labels is None:
            return super().forward(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids,
                                   position_ids=position_ids, inputs_embeds=inputs_embeds, **kwargs)
        outputs = self.roberta(input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids,
                               position_ids=position_ids, inputs_embeds=inputs_embeds, return_dict=True, **kwargs)
        hidden = outputs[0]
        labels = labels.to(hidden.device)
        if labels.shape != hidden.shape[:-1]:
            raise ValueError(f"labels must have the shape of input_ids, {tuple(hidden.shape[:-1])}, got "
                             f"{tuple(labels.shape)}")
        masked = labels.ne(IGNORE_INDEX)
        scores = self.lm_head(hidden[masked])
        loss = F.cross_entropy(scores, labels[masked])
        return MaskedLMOutput(loss=loss, logits=scores, hidden_states=outputs.hidden_states,
                              attentions=outputs.attentions)


def build_baseline(
    kind: Literal["mlm", "shuffle_random", "sequence_classification"], config: RobertaConfig, *,
    masked_only: bool = False,
) -> PreTrainedModel:
    """BERT-MLM (``RobertaForMaskedLM``), BERT-S+R (``RobertaForTokenClassification`` with 3 labels: dropout +
    ``Linear(d, 3)``, the head of Yamaguchi et al.'s ``RobertaForShuffleRandomThreeWayClassification``) or the GLUE
    model (``RobertaForSequenceClassification``) for a :func:`baseline_config`.

    ``masked_only=True`` (BERT-MLM only) gives :class:`RobertaForMaskedOnlyLM`: the same model and loss, with the
    output layer computed only at the masked positions (for pre-training; Table 3 times the full head)."""
    if not isinstance(config, RobertaConfig) or isinstance(config, HashFormerConfig):
        raise TypeError("config must be a RobertaConfig from baseline_config(), not a HashFormerConfig")
    if not isinstance(masked_only, bool):
        raise TypeError(f"masked_only must be True or False, got {masked_only!r}")
    if masked_only and kind != "mlm":
        raise ValueError(f"masked_only=True applies to kind='mlm' only (the MLM output layer), got kind={kind!r}; "
                         "drop masked_only for the other kinds")
    if kind == "mlm":
        return RobertaForMaskedOnlyLM(config) if masked_only else RobertaForMaskedLM(config)
    if kind == "shuffle_random":
        # without the 2-label maps a default config carries (they would make transformers warn about num_labels)
        settings = {k: v for k, v in config.to_dict().items() if k not in ("id2label", "label2id")}
        config = RobertaConfig(**settings, num_labels=NUM_SR_LABELS)
        return RobertaForTokenClassification(config)
    if kind == "sequence_classification":
        return RobertaForSequenceClassification(config)
    raise ValueError(f"kind must be 'mlm', 'shuffle_random' or 'sequence_classification', got {kind!r}")
