"""EELBERT-style models: Hugging Face round trip, exact parameter counts, and the embedding swap."""
from __future__ import annotations

import pytest
import torch
from transformers import BertForMaskedLM

from hashlib_core.embeddings.dynamic import DynamicHashEmbedding
from hashlib_core.modeling import embedding_parameter_count
from hashlib_core.papers.dynamic_embeddings.modeling import (
    DynamicBertConfig,
    DynamicBertForMaskedLM,
    DynamicBertForSequenceClassification,
    model_size_bytes,
)
from hashlib_core.papers.dynamic_embeddings.profiles import MODELS, PAPER_MODELS, PROFILES
from hashlib_core.papers.dynamic_embeddings.sizes import paper_model
from hashlib_core.params import count_parameters

VOCAB = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"] + [f"tok{i}" for i in range(45)]
SHAPE = dict(hidden_size=24, num_hidden_layers=1, num_attention_heads=2, intermediate_size=48, pad_token_id=1)


@pytest.mark.parametrize("embedding", ["dynamic", "table"])
def test_save_pretrained_round_trip(tmp_path, embedding):
    torch.manual_seed(0)
    model = DynamicBertForMaskedLM(DynamicBertConfig(embedding=embedding, vocab_tokens=VOCAB, **SHAPE)).eval()
    model.save_pretrained(tmp_path)
    loaded = DynamicBertForMaskedLM.from_pretrained(tmp_path).eval()
    ids = torch.tensor([[0, 7, 4, 9, 2]])
    assert torch.equal(model(input_ids=ids).logits, loaded(input_ids=ids).logits)
    words = loaded.base_model.embeddings.word_embeddings
    assert isinstance(words, DynamicHashEmbedding) == (embedding == "dynamic")
    # nothing of the dynamic embedding is stored: the saved weights hold no V x d tensor
    saved = {k: v.shape for k, v in loaded.state_dict().items() if "word_embeddings" in k}
    assert (saved == {}) == (embedding == "dynamic")


def test_dynamic_model_has_no_table_and_an_untied_mlm_decoder():
    model = DynamicBertForMaskedLM(DynamicBertConfig(vocab_tokens=VOCAB, **SHAPE))
    assert model.config.tie_word_embeddings is False
    assert model.embedding_parameter_count() == 0 == embedding_parameter_count(model)
    assert model.get_output_embeddings().weight.shape == (len(VOCAB), 24)
    table = DynamicBertForMaskedLM(DynamicBertConfig(embedding="table", vocab_tokens=VOCAB, **SHAPE))
    assert table.embedding_parameter_count() == len(VOCAB) * 24
    assert table.get_output_embeddings().weight is table.get_input_embeddings().weight


def test_classifier_reads_the_pretrained_encoder():
    mlm = DynamicBertForMaskedLM(DynamicBertConfig(vocab_tokens=VOCAB, **SHAPE))
    cls = DynamicBertForSequenceClassification(DynamicBertConfig(vocab_tokens=VOCAB, num_labels=3, **SHAPE))
    missing, unexpected = cls.base_model.load_state_dict(mlm.base_model.state_dict(), strict=False)
    assert unexpected == [] and all(k.startswith("pooler.") for k in missing)
    out = cls(input_ids=torch.tensor([[0, 5, 6, 2]]), labels=torch.tensor([1]))
    assert out.logits.shape == (1, 3) and out.loss.ndim == 0


def test_paper_scale_parameter_counts_are_exact():
    profile = PROFILES.get("cpu")
    counts = {spec.name: count_parameters(paper_model(spec, profile)) for spec in PAPER_MODELS}
    assert counts["BERT-base"] == 109_482_240            # bert-base-uncased's BertModel
    assert counts["BERT-tiny"] == 4_385_920              # google/bert_uncased_L-2_H-128_A-2
    assert counts["EELBERT-base"] == counts["BERT-base"] - 30522 * 768
    assert counts["EELBERT-tiny"] == counts["BERT-tiny"] - 30522 * 128
    assert counts["UNO-EELBERT (ours)"] == counts["EELBERT-tiny"] - (4 * (128 * 128 + 128) + 2 * 2 * 128
                                                                     + 128 * 512 + 512 + 512 * 128 + 128)


def test_model_size_bytes_counts_tied_tensors_once():
    model = DynamicBertForMaskedLM(DynamicBertConfig(embedding="table", vocab_tokens=VOCAB, **SHAPE))
    assert model_size_bytes(model) == 4 * count_parameters(model)
    assert model_size_bytes(model, 1.0) == count_parameters(model)


def test_models_and_bad_configuration():
    assert [m.name for m in MODELS] == ["BERT-tiny", "EELBERT-tiny", "UNO-EELBERT (ours)", "EELBERT-tiny (MD5)"]
    assert MODELS[3].config_fields() == {**MODELS[1].config_fields(), "ngram_hash": "md5"}
    with pytest.raises(ValueError, match="corpus must be one of"):
        PROFILES.get("smoke", corpus="bookcorpus")
    with pytest.raises(ValueError, match="trend_pt_steps must be increasing step counts below pt_steps"):
        PROFILES.get("smoke", trend_pt_steps=(20,))
    with pytest.raises(ValueError, match="ft_lrs must list distinct positive learning rates"):
        PROFILES.get("smoke", ft_lrs=(1e-3, 1e-3))
    with pytest.raises(ValueError, match="embedding must be one of"):
        DynamicBertConfig(embedding="bloom")
    with pytest.raises(ValueError, match="unknown model"):
        PROFILES.get("smoke", models=("BERT-huge",))
    with pytest.raises(ValueError, match="not staged"):
        PROFILES.get("smoke", tasks=("mnli",))


@pytest.mark.parametrize("embedding", ["dynamic", "table"])
def test_the_masked_positions_loss_equals_bert_mlms_and_trains_the_same_parameters(embedding):
    torch.manual_seed(0)
    model = DynamicBertForMaskedLM(DynamicBertConfig(embedding=embedding, vocab_tokens=VOCAB, **SHAPE)).eval()
    reference = BertForMaskedLM(model.config).eval()
    reference.load_state_dict(model.state_dict(), strict=False)
    if embedding == "dynamic":   # the reference's table stands in for the computed vectors
        reference.bert.embeddings.word_embeddings = model.bert.embeddings.word_embeddings
    ids = torch.randint(0, len(VOCAB), (3, 9))
    labels = torch.full_like(ids, -100)
    labels[0, 2], labels[1, 5], labels[2, 0], labels[2, 8] = 4, 1, 7, 2
    ours, full = model(input_ids=ids, labels=labels), reference(input_ids=ids, labels=labels)
    assert torch.allclose(ours.loss, full.loss, atol=1e-6)
    # the logits are the masked positions' rows of the full model's, in order
    assert ours.logits.shape == (4, len(VOCAB))
    assert torch.allclose(ours.logits, full.logits[labels != -100], atol=1e-5)
    ours.loss.backward()
    full.loss.backward()
    for (name, p), (_, q) in zip(model.named_parameters(), reference.named_parameters()):
        assert (p.grad is None) == (q.grad is None), name
        if p.grad is not None:
            assert torch.allclose(p.grad, q.grad, atol=1e-5), name
    # nothing masked: a zero loss, not NaN; without labels the logits cover every position
    zero = model(input_ids=ids, labels=torch.full_like(ids, -100))
    assert zero.loss.item() == 0.0 and zero.logits.shape == (0, len(VOCAB))
    assert model(input_ids=ids).logits.shape == (3, 9, len(VOCAB))
    with pytest.raises(TypeError, match="input_ids, attention_mask and token_type_ids only"):
        model(input_ids=ids, labels=labels, output_attentions=True)
