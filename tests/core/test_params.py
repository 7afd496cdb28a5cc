"""Parameter accounting from instantiated modules."""
from __future__ import annotations

import pytest
from torch import nn

from hashlib_core.params import count_parameters, embedding_breakdown, humanize, instantiate_on_meta


def test_count_parameters_dedupes_tied_weights():
    emb = nn.Embedding(10, 4)
    head = nn.Linear(4, 10, bias=False)
    head.weight = emb.weight
    model = nn.ModuleDict({"emb": emb, "head": head})
    assert count_parameters(model) == 40
    emb.weight.requires_grad_(False)
    assert count_parameters(model, trainable_only=True) == 0
    with pytest.raises(TypeError):
        count_parameters("not a module")


def test_tiny_gpt2_breakdown_exact():
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(vocab_size=100, n_positions=16, n_embd=8, n_layer=1, n_head=2)
    b = embedding_breakdown(GPT2LMHeadModel(cfg))
    # wte 100*8 + wpe 16*8 + block (ln1 16 + attn 8*24+24 + proj 8*8+8 + ln2 16 + fc 8*32+32 + proj 32*8+8) + ln_f 16
    assert b.total == 800 + 128 + (16 + 216 + 72 + 16 + 288 + 264) + 16
    assert (b.input_embedding, b.output_embedding, b.tied) == (800, 0, True)


def test_untied_head_counted():
    from transformers import MistralConfig, MistralForCausalLM

    cfg = MistralConfig(vocab_size=50, hidden_size=8, intermediate_size=16, num_hidden_layers=1,
                        num_attention_heads=2, num_key_value_heads=1, tie_word_embeddings=False)
    b = embedding_breakdown(instantiate_on_meta(lambda: MistralForCausalLM(cfg)))
    assert (b.input_embedding, b.output_embedding, b.tied) == (400, 400, False)
    assert b.vocabulary_parameters == 800


def test_meta_instantiation_allocates_nothing_and_counts_like_cpu():
    from transformers import BertConfig, BertModel

    cfg = BertConfig(vocab_size=30, hidden_size=8, num_hidden_layers=1, num_attention_heads=2, intermediate_size=16)
    meta = instantiate_on_meta(lambda: BertModel(cfg))
    assert all(p.is_meta for p in meta.parameters())
    assert count_parameters(meta) == count_parameters(BertModel(cfg))


def test_breakdown_needs_an_input_embedding():
    with pytest.raises(TypeError, match="get_input_embeddings"):
        embedding_breakdown(nn.Linear(2, 2))


@pytest.mark.parametrize("n, text", [(23_440_896, "23.4M"), (99_072, "99.1K"), (7_241_732_096, "7.2B"), (512, "512")])
def test_humanize(n, text):
    assert humanize(n) == text


def test_humanize_accepts_numpy_and_rejects_text():
    import numpy as np

    assert humanize(np.int64(38_603_520)) == "38.6M"
    with pytest.raises(TypeError):
        humanize("12")
