"""The BERT baselines of HashFormers (§4.1): BERT-MLM and BERT-S+R over a BPE vocabulary.

Both are RoBERTa-architecture models, exactly the configuration of Yamaguchi et al.'s released pre-training script
that HashFormers builds on (``gucci-j/light-transformer-emnlp2021``, ``src/pretrainer.py``).
"""
from __future__ import annotations

from typing import Literal

from transformers import (
    PreTrainedModel,
    RobertaConfig,
    RobertaForMaskedLM,
    RobertaForSequenceClassification,
    RobertaForTokenClassification,
)

from hashlib_core.papers.hashformers.configuration import HashFormerConfig
from hashlib_core.papers.hashformers.modeling import NUM_SR_LABELS
from hashlib_core.papers.hashformers.tokenization import NUM_SPECIAL_TOKENS, PAD_ID

__all__ = ["baseline_config", "build_baseline"]


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
