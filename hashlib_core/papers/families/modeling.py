"""The every-family chapter's backbones, as Hugging Face models.

* Track A, *replace the table*: :class:`FamilyBertForSequenceClassification`, BERT's sequence classifier whose
  ``word_embeddings`` (the ``V x d`` table) is replaced by one family of the catalogue
  (:func:`hashlib_core.embeddings.catalogue.build`); position and token-type embeddings, LayerNorm, the encoder,
  pooler and classifier are BERT's and identical for every family. ``family="full"`` is the unchanged BERT.
* Track B, *add to the table*: :class:`MemoryCausalLM`, a small causal LM (``GPT2LMHeadModel``'s blocks) whose input
  is the token table **plus** one hashed n-gram memory (:mod:`hashlib_core.embeddings.memories`), built by
  :func:`build_memory` from a budget of added parameters.

Both count the parameters that build a token's vector with ``embedding_parameter_count()``.
"""
from __future__ import annotations

from typing import Any, Sequence

import torch
import torch.nn.functional as F
from torch import nn
from transformers import BertConfig, BertForSequenceClassification, GPT2Config, GPT2LMHeadModel
from transformers.modeling_outputs import CausalLMOutputWithCrossAttentions

from hashlib_core.embeddings import catalogue
from hashlib_core.embeddings.memories import (BigramHashEmbedding, BLTHashNgramEmbedding, EngramMemory,
                                              OverEncodingEmbedding, ResidualBigramEmbedding)

__all__ = ["FamilyBertConfig", "FamilyBertForSequenceClassification", "MEMORIES", "build_memory", "MemoryCausalLM",
           "body_parameter_count"]


class FamilyBertConfig(BertConfig):
    """``BertConfig`` plus the token embedding: ``family`` (a catalogue name), ``budget`` (its parameter budget),
    ``family_seed`` and ``vocab_tokens`` (the vocabulary's strings in id order; ``None`` builds the plain table)."""

    model_type = "family_bert"

    def __init__(self, family: str = "full", budget: int = 0, family_seed: int = 0,
                 vocab_tokens: Sequence[str] | None = None, **kwargs: Any) -> None:
        if family not in catalogue.FAMILIES:
            raise ValueError(f"unknown family {family!r}; choose one of {sorted(catalogue.FAMILIES)}")
        if vocab_tokens is not None:
            vocab_tokens = list(vocab_tokens)
            kwargs["vocab_size"] = len(vocab_tokens)
        super().__init__(**kwargs)
        self.family, self.budget, self.family_seed, self.vocab_tokens = family, budget, family_seed, vocab_tokens


class FamilyBertForSequenceClassification(BertForSequenceClassification):
    """BERT's classifier over any family of the catalogue (the family's module replaces ``word_embeddings``)."""

    config_class = FamilyBertConfig

    def __init__(self, config: FamilyBertConfig) -> None:
        if config.family != "full" and config.vocab_tokens is None:
            raise ValueError(f"family {config.family!r} hashes the vocabulary's strings: pass vocab_tokens")
        if config.family == "full":
            super().__init__(config)
            return
        vocab = config.vocab_size
        config.vocab_size = 1           # BERT's own table is not built (it is replaced below)
        super().__init__(config)
        config.vocab_size = vocab
        self.bert.embeddings.word_embeddings = catalogue.build(
            config.family, config.vocab_tokens, config.budget, config.hidden_size, seed=config.family_seed)

    def embedding_parameter_count(self) -> int:
        words = self.bert.embeddings.word_embeddings
        if isinstance(words, catalogue.CatalogueEmbedding):
            return words.embedding_parameter_count()
        return words.weight.numel()


def body_parameter_count(model: nn.Module) -> int:
    """Every parameter besides the token embedding's (positions, LayerNorms, encoder, head): the same for every
    family of a track."""
    return sum(p.numel() for p in model.parameters()) - model.embedding_parameter_count()


#: Track B's memories: name -> (source, what it hashes)
MEMORIES = {
    "none": ("-", "the token table alone (the control)"),
    "blt": ("Pagnoni et al. 2024; facebookresearch/blt bytelatent/model/blt.py",
            "rolling-polynomial hashes of the 3-, 4- and 5-token windows, one table each, summed"),
    "over-encoding": ("Huang et al. 2025", "2- and 3-gram ids mod m + 2j, k = 2 tables per order, projected"),
    "engram": ("DeepSeek 2026; deepseek-ai/Engram engram_demo_v1.py",
               "canonical-id 2- and 3-gram XOR mixes, 4 heads per order, gated by the hidden state"),
    "bigram": ("openai/parameter-golf", "(36313 t XOR 27191 t-1) mod (B - 1) into a 128-wide table, projected, "
               "added to the input"),
    "bigram-residual": ("KellerJordan/modded-nanogpt (record 2026-01-19)",
                        "the same bigram hash into a full-width table, zero at start, added to the residual stream "
                        "before every block with a learned scale per block"),
}


#: each memory's code version where it is not 1 (as :data:`hashlib_core.embeddings.catalogue.VERSIONS`): engram 2,
#: canonical ids from the decoded texts (the released CompressedTokenizer), no longer from the byte-level strings;
#: over-encoding 2, table sizes m, m + 2, ... over all tables (marin's), no longer restarting at m for each order
MEMORY_VERSIONS: dict[str, int] = {"engram": 2, "over-encoding": 2}


def memory_version(name: str) -> tuple[str, ...]:
    """What a Track B checkpoint's digest adds for memory ``name``: ``()`` at version 1, else ``("v<n>",)``."""
    if name not in MEMORIES:
        raise ValueError(f"unknown memory {name!r}; choose one of {sorted(MEMORIES)}")
    version = MEMORY_VERSIONS.get(name, 1)
    return () if version == 1 else (f"v{version}",)


def _memory(name: str, strings: Sequence[str], dim: int, size: int, texts: Sequence[str] | None = None,
            layers: int = 1) -> nn.Module:
    """Memory ``name`` with ``size`` rows (buckets, hash range or rows per head); ``layers``: the blocks a residual
    memory feeds."""
    if name == "blt":
        return BLTHashNgramEmbedding(dim, size, sizes=(3, 4, 5))
    if name == "over-encoding":
        return OverEncodingEmbedding(len(strings), dim, size, max_order=3, tables_per_order=2)
    if name == "engram":
        return EngramMemory(strings, dim, size, heads=4, head_width=16, texts=texts)
    if name == "bigram-residual":
        return ResidualBigramEmbedding(dim, buckets=size, layers=layers)
    return BigramHashEmbedding(dim, buckets=size, width=128)


def build_memory(name: str, strings: Sequence[str], dim: int, budget: int,
                 texts: Sequence[str] | None = None, layers: int = 1) -> nn.Module | None:
    """Memory ``name`` with the most rows whose parameters fit ``budget`` (``None`` for ``"none"``; ``ValueError``
    when even two rows do not fit). ``texts``: each token's decoded text (a byte-level BPE's ``decode([id])``), which
    Engram's canonical ids read; ``layers``: the model's blocks (a residual memory has a scale per block)."""
    if name not in MEMORIES:
        raise ValueError(f"unknown memory {name!r}; choose one of {sorted(MEMORIES)}")
    if name == "none":
        return None

    def count(size: int) -> int:
        return _memory(name, strings, dim, size, layers=layers).embedding_parameter_count()

    low, high = 2, 4
    if count(low) > budget:
        raise ValueError(f"memory {name!r} needs {count(low):,} parameters at its smallest, more than the budget "
                         f"{budget:,}: raise the budget")
    while count(high) <= budget:
        low, high = high, high * 2
    while high - low > 1:                                # count(low) <= budget < count(high)
        mid = (low + high) // 2
        low, high = (mid, high) if count(mid) <= budget else (low, mid)
    return _memory(name, strings, dim, low, texts, layers)


class MemoryCausalLM(nn.Module):
    """A GPT-2-style causal LM whose input is ``wte(ids) + memory(ids)`` (the Engram memory also reads the token
    embedding as its gate's hidden state); a residual memory (:class:`ResidualBigramEmbedding`) is added instead
    before every block, scaled by the block's own ``lambdas[i]``. The output head is tied to ``wte``."""

    def __init__(self, config: GPT2Config, memory: nn.Module | None) -> None:
        super().__init__()
        if isinstance(memory, ResidualBigramEmbedding) and memory.lambdas.numel() != config.n_layer:
            raise ValueError(f"the residual memory has {memory.lambdas.numel()} scales for {config.n_layer} blocks: "
                             f"build it with layers={config.n_layer}")
        self.config, self.lm, self.memory = config, GPT2LMHeadModel(config), memory

    def embedding_parameter_count(self) -> int:
        """The token table plus the memory's parameters."""
        added = self.memory.embedding_parameter_count() if self.memory is not None else 0
        return self.lm.transformer.wte.weight.numel() + added

    def memory_parameter_count(self) -> int:
        return self.memory.embedding_parameter_count() if self.memory is not None else 0

    def forward(self, input_ids: torch.Tensor, labels: torch.Tensor | None = None, **_: Any) -> Any:
        hidden = self.lm.transformer.wte(input_ids)
        hooks = []
        if isinstance(self.memory, ResidualBigramEmbedding):
            rows = self.memory(input_ids)
            for block, scale in zip(self.lm.transformer.h, self.memory.lambdas):
                hooks.append(block.register_forward_pre_hook(_adding(scale * rows), with_kwargs=True))
        elif isinstance(self.memory, EngramMemory):
            hidden = hidden + self.memory(input_ids, hidden)
        elif self.memory is not None:
            hidden = hidden + self.memory(input_ids)
        try:
            logits = self.lm(inputs_embeds=hidden).logits
        finally:
            for hook in hooks:
                hook.remove()
        loss = None
        if labels is not None:      # next-token cross-entropy, the mean over every predicted position
            loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]).float(), labels[:, 1:].reshape(-1))
        return CausalLMOutputWithCrossAttentions(loss=loss, logits=logits)


def _adding(extra: torch.Tensor):
    """A forward pre-hook adding ``extra`` to a block's input hidden states (its first argument)."""
    def hook(_module: nn.Module, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        if args:
            return (args[0] + extra, *args[1:]), kwargs
        return args, {**kwargs, "hidden_states": kwargs["hidden_states"] + extra}
    return hook
