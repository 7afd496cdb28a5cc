"""HashFormer models (tiny: hidden 32, 2 layers): forward, heads, masking, save/load round trip, baselines."""
from __future__ import annotations

import pytest
import torch

from hashlib_core.hashing.md5 import KeyedMD5Hasher
from hashlib_core.papers.hashformers.baselines import baseline_config, build_baseline
from hashlib_core.papers.hashformers.configuration import HashFormerConfig, proformer_config
from hashlib_core.papers.hashformers.modeling import (
    HashFormerForSequenceClassification,
    HashFormerForShuffleRandom,
    HashFormerModel,
)
from hashlib_core.papers.hashformers.objectives import ShuffleRandomCollator
from hashlib_core.papers.hashformers.tokenization import HashFormerTokenizer

TINY = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)
TEXTS = ["The cat sat on the mat.", ("A man plays a guitar", "Someone is playing music")]


def tiny(embedding_type: str, **extra) -> HashFormerConfig:
    if embedding_type == "emb":
        extra.setdefault("num_buckets", 1000)
    return HashFormerConfig(embedding_type=embedding_type, **TINY, **extra)


def encode(config: HashFormerConfig, texts=TEXTS) -> dict[str, torch.Tensor]:
    if config.embedding_type == "emb":
        hasher = KeyedMD5Hasher(num_buckets=config.num_buckets)
        return HashFormerTokenizer(hasher, mode="index", max_length=32)(texts)
    return HashFormerTokenizer(KeyedMD5Hasher(), mode="bits", max_length=32)(texts)


@pytest.mark.parametrize("embedding_type", ["emb", "pool", "add", "proj"])
def test_classification_forward_and_backward(embedding_type):
    torch.manual_seed(0)
    config = tiny(embedding_type, num_labels=3)
    model = HashFormerForSequenceClassification(config)
    batch = encode(config)
    out = model(**batch, labels=torch.tensor([0, 2]))
    assert out.logits.shape == (2, 3) and torch.isfinite(out.loss)
    out.loss.backward()
    grads = [p.grad for p in model.hashformer.embeddings.word_embeddings.parameters()]
    assert all(g is not None and torch.count_nonzero(g) > 0 for g in grads)


def test_regression_head_uses_mse():
    torch.manual_seed(0)
    model = HashFormerForSequenceClassification(tiny("proj", num_labels=1)).eval()
    batch = encode(model.config)
    labels = torch.tensor([1.5, 4.0])
    out = model(**batch, labels=labels)
    assert out.logits.shape == (2, 1)
    torch.testing.assert_close(out.loss, torch.mean((out.logits.squeeze(-1) - labels) ** 2))


@pytest.mark.parametrize("embedding_type", ["emb", "pool"])
def test_shuffle_random_training_step(embedding_type):
    torch.manual_seed(0)
    config = tiny(embedding_type)
    model = HashFormerForShuffleRandom(config)
    collator = ShuffleRandomCollator(0.3, random_id_range=(5, 5 + config.num_buckets), seed=0)
    batch = collator(encode(config, ["the quick brown fox jumps over the lazy dog again and again"] * 4))
    out = model(**batch)
    assert out.logits.shape == (*batch["input_ids"].shape, 3)
    expected = torch.nn.functional.cross_entropy(out.logits.view(-1, 3), batch["labels"].view(-1), ignore_index=-100)
    torch.testing.assert_close(out.loss, expected)
    out.loss.backward()
    assert model.classifier.weight.grad is not None


@pytest.mark.parametrize("embedding_type", ["emb", "pool", "proj"])
def test_padding_does_not_change_outputs(embedding_type):
    torch.manual_seed(0)
    config = tiny(embedding_type)
    model = HashFormerModel(config).eval()
    alone = encode(config, ["short one"])
    padded = encode(config, ["short one", "a much longer sentence that forces padding of the first"])
    length = alone["input_ids"].shape[1]
    with torch.no_grad():
        a = model(**alone).last_hidden_state[0]
        b = model(**padded).last_hidden_state[0, :length]
    torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("embedding_type", ["emb", "pool", "add", "proj", "linear"])
def test_save_and_load_round_trip(tmp_path, embedding_type):
    torch.manual_seed(0)
    extra = {"position_embedding_type": "sinusoidal"} if embedding_type == "linear" else {}
    model = HashFormerForSequenceClassification(tiny(embedding_type, num_labels=2, hash_type="lsh", **extra)).eval()
    batch = encode(model.config)
    model.save_pretrained(tmp_path)
    loaded = HashFormerForSequenceClassification.from_pretrained(tmp_path).eval()
    saved, restored = model.config.to_dict(), loaded.config.to_dict()
    saved.pop("_name_or_path"), restored.pop("_name_or_path")
    assert restored == saved
    with torch.no_grad():
        assert torch.equal(model(**batch).logits, loaded(**batch).logits)


def test_encoder_checkpoint_loads_under_a_head(tmp_path):
    torch.manual_seed(0)
    encoder = HashFormerModel(tiny("add")).eval()
    encoder.save_pretrained(tmp_path)
    classifier = HashFormerForSequenceClassification.from_pretrained(tmp_path, num_labels=2).eval()
    batch = encode(encoder.config)
    with torch.no_grad():
        assert torch.equal(encoder(**batch).last_hidden_state, classifier.hashformer(**batch).last_hidden_state)


def test_proformer_config_and_forward():
    config = proformer_config(**TINY)
    assert (config.embedding_type, config.num_bits, config.position_embedding_type) == ("linear", 420, "sinusoidal")
    model = HashFormerForSequenceClassification(config).eval()
    assert model.hashformer.embeddings.position_embeddings is None
    ids = torch.tensor([[0, 5, 5, 2, 1]])
    bits = torch.randint(0, 2, (1, 5, 420), dtype=torch.uint8)
    with torch.no_grad():
        logits = model(ids, (ids != 1).long(), bits).logits
    assert logits.shape == (1, 2)


def test_config_derives_vocab_size_and_validates():
    assert tiny("emb", num_buckets=50260).vocab_size == 50265
    assert tiny("pool").vocab_size == 6
    assert proformer_config().vocab_size == 6
    restored = HashFormerConfig.from_dict(tiny("emb").to_dict())
    assert restored.vocab_size == 1005 and restored.embedding_type == "emb"
    with pytest.raises(ValueError, match="embedding_type"):
        HashFormerConfig(embedding_type="conj")
    with pytest.raises(ValueError, match="vocab_size"):
        HashFormerConfig(embedding_type="proj", vocab_size=50265)
    with pytest.raises(ValueError, match="pad_token_id"):
        HashFormerConfig(pad_token_id=0)


def test_forward_input_errors():
    emb = HashFormerModel(tiny("emb"))
    proj = HashFormerModel(tiny("proj"))
    ids = torch.tensor([[0, 5, 2]])
    with pytest.raises(ValueError, match="hash_bits"):
        proj(ids)
    with pytest.raises(ValueError, match="do not pass hash_bits"):
        emb(ids, hash_bits=torch.zeros(1, 3, 128))
    with pytest.raises(ValueError, match=r"input_ids must lie in \[0, 6\)"):
        proj(torch.tensor([[0, 9, 2]]), hash_bits=torch.zeros(1, 3, 128))
    with pytest.raises(ValueError, match=r"\[0, 1005\)"):
        emb(torch.tensor([[0, 1005, 2]]))


def test_baselines():
    config = baseline_config(300, **TINY)
    assert (config.max_position_embeddings, config.type_vocab_size, config.layer_norm_eps) == (514, 1, 1e-5)
    ids = torch.tensor([[0, 10, 20, 2]])
    mlm = build_baseline("mlm", config).eval()
    assert mlm(ids).logits.shape == (1, 4, 300)
    sr = build_baseline("shuffle_random", config).eval()
    assert sr.classifier.out_features == 3 and sr(ids).logits.shape == (1, 4, 3)
    assert build_baseline("sequence_classification", config)(ids).logits.shape == (1, 2)
    with pytest.raises(ValueError, match="kind"):
        build_baseline("electra", config)
    with pytest.raises(TypeError):
        build_baseline("mlm", tiny("emb"))
    with pytest.raises(ValueError):
        baseline_config(3)


def test_bert_shuffle_random_baseline_pipeline():
    from hashlib_core.papers.hashformers.tokenization import bpe_to_hf_tokenizer, train_bpe

    torch.manual_seed(0)
    bpe = train_bpe(["the cat sat on the mat while the dog played"] * 30, vocab_size=300)
    hf = bpe_to_hf_tokenizer(bpe)
    encoded = hf(["the cat sat on the mat", "the dog played"], padding=True, return_tensors="pt")
    batch = ShuffleRandomCollator(0.3, random_id_range=(5, bpe.get_vocab_size()), seed=1)(dict(encoded))
    assert (batch["labels"][encoded["input_ids"] < 5] == -100).all()
    model = build_baseline("shuffle_random", baseline_config(bpe.get_vocab_size(), **TINY))
    out = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], labels=batch["labels"])
    assert torch.isfinite(out.loss) and out.logits.shape == (2, encoded["input_ids"].shape[1], 3)
