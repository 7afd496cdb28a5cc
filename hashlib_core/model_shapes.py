"""The model shapes the papers and the blog talk about, each built from its ``transformers`` configuration (shared by
the vocabulary-bottleneck and dynamic-embeddings chapters)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from torch import nn

__all__ = ["ModelSpec", "MODEL_SPECS"]


@dataclass(frozen=True)
class ModelSpec:
    """A model shape, built from a ``transformers`` configuration (library defaults unless stated)."""

    name: str
    family: str
    architecture: str            # "encoder" or "decoder"
    build: Callable[[], nn.Module]
    config_note: str


def _bert(large: bool = False) -> nn.Module:
    from transformers import BertConfig, BertModel

    cfg = BertConfig() if not large else BertConfig(
        hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)
    return BertModel(cfg)


def _roberta(large: bool = False) -> nn.Module:
    from transformers import RobertaConfig, RobertaModel

    common = dict(vocab_size=50265, max_position_embeddings=514, type_vocab_size=1, layer_norm_eps=1e-5,
                  pad_token_id=1, bos_token_id=0, eos_token_id=2)
    if large:
        common.update(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)
    return RobertaModel(RobertaConfig(**common))


def _gpt2(n_embd: int, n_layer: int, n_head: int) -> nn.Module:
    from transformers import GPT2Config, GPT2LMHeadModel

    return GPT2LMHeadModel(GPT2Config(n_embd=n_embd, n_layer=n_layer, n_head=n_head))


def _mistral_7b() -> nn.Module:
    from transformers import MistralConfig, MistralForCausalLM

    # MistralConfig's defaults are Mistral-7B-v0.1: V=32,000, d=4,096, 32 layers, FFN 14,336, 8 KV heads,
    # untied output head.
    return MistralForCausalLM(MistralConfig())


def _qwen3(hidden: int, intermediate: int, layers: int, heads: int, kv_heads: int) -> nn.Module:
    from transformers import Qwen3Config, Qwen3ForCausalLM

    # MultiHashFormer Table 7 (App. C.1): V=32,768 (Mistral tokenizer), tied embeddings, RoPE theta 1M.
    # head_dim = hidden / heads (64 at 100M, 128 at 1B and 3B).
    return Qwen3ForCausalLM(Qwen3Config(
        vocab_size=32768, hidden_size=hidden, intermediate_size=intermediate, num_hidden_layers=layers,
        num_attention_heads=heads, num_key_value_heads=kv_heads, head_dim=hidden // heads,
        tie_word_embeddings=True, rope_theta=1_000_000.0, rms_norm_eps=1e-6))


MODEL_SPECS: tuple[ModelSpec, ...] = (
    ModelSpec("BERT-base", "BERT", "encoder", _bert, "BertConfig() defaults; BertModel with pooler"),
    ModelSpec("BERT-large", "BERT", "encoder", lambda: _bert(large=True), "d=1024, 24 layers"),
    ModelSpec("RoBERTa-base", "RoBERTa", "encoder", _roberta, "V=50,265, 514 positions; RobertaModel with pooler"),
    ModelSpec("RoBERTa-large", "RoBERTa", "encoder", lambda: _roberta(large=True), "d=1024, 24 layers"),
    ModelSpec("GPT-2", "GPT-2", "decoder", lambda: _gpt2(768, 12, 12), "GPT2Config() defaults, tied LM head"),
    ModelSpec("GPT-2 medium", "GPT-2", "decoder", lambda: _gpt2(1024, 24, 16), "d=1024, 24 layers"),
    ModelSpec("GPT-2 large", "GPT-2", "decoder", lambda: _gpt2(1280, 36, 20), "d=1280, 36 layers"),
    ModelSpec("GPT-2 XL", "GPT-2", "decoder", lambda: _gpt2(1600, 48, 25), "d=1600, 48 layers"),
    ModelSpec("Qwen3-100M (MHF Table 7)", "Qwen3", "decoder", lambda: _qwen3(768, 2560, 12, 12, 2),
              "d=768, FFN 2560, 12 layers, 12/2 heads"),
    ModelSpec("Qwen3-1B (MHF Table 7)", "Qwen3", "decoder", lambda: _qwen3(2048, 6144, 20, 16, 8),
              "d=2048, FFN 6144, 20 layers, 16/8 heads"),
    ModelSpec("Qwen3-3B (MHF Table 7)", "Qwen3", "decoder", lambda: _qwen3(2048, 11008, 36, 16, 2),
              "d=2048, FFN 11008, 36 layers, 16/2 heads"),
    ModelSpec("Mistral-7B", "Mistral", "decoder", _mistral_7b, "MistralConfig() defaults, untied LM head"),
)
