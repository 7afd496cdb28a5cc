"""pNLP-Mixer models: exact parameter counts, the projection inside the model, heads, masking, save/load, bad input."""
from __future__ import annotations

import pytest
import torch

from hashlib_core.hashing.minhash import counting_bloom_filter
from hashlib_core.modeling import embedding_parameter_count, hidden_states
from hashlib_core.papers.pnlp_mixer.configuration import PNLPMixerConfig
from hashlib_core.papers.pnlp_mixer.heads import PNLPMixerForSequenceClassification, PNLPMixerForTokenClassification
from hashlib_core.papers.pnlp_mixer.modeling import PNLPMixerModel


def expected_count(c: PNLPMixerConfig, labels: int) -> int:
    """Counted by hand: bottleneck (dense + LayerNorm), per block two LayerNorms and two 2-layer MLPs, final
    LayerNorm, head (hidden layer + output)."""
    h, s = c.hidden_size, c.max_seq_len
    bottleneck = c.projection_features * h + h + 2 * h
    block = 2 * (2 * h) + (s * c.token_mixing_dim + c.token_mixing_dim + c.token_mixing_dim * s + s) \
        + (h * c.channel_mixing_dim + c.channel_mixing_dim + c.channel_mixing_dim * h + h)
    head = (h * c.classifier_hidden + c.classifier_hidden + c.classifier_hidden * labels + labels
            if c.classifier_hidden else h * labels + labels)
    return bottleneck + c.num_mixer_layers * block + 2 * h + head


@pytest.mark.parametrize("labels", [18, 78])
@pytest.mark.parametrize("cls", [PNLPMixerForSequenceClassification, PNLPMixerForTokenClassification])
def test_paper_model_has_about_one_million_parameters(cls, labels):
    config = PNLPMixerConfig(num_labels=labels)
    model = cls(config)
    count = sum(p.numel() for p in model.parameters())
    assert count == expected_count(config, labels)
    assert 900_000 <= count <= 1_100_000        # §4: "approximately one million parameters"
    assert embedding_parameter_count(model) == config.projection_features * 256 + 256 + 2 * 256


def test_parameter_count_of_other_shapes():
    config = PNLPMixerConfig(num_hashes=64, bloom_size=1024, window_size=1, hidden_size=64, num_mixer_layers=2,
                             classifier_hidden=0, num_labels=5)
    model = PNLPMixerForTokenClassification(config)
    assert config.projection_features == 3 * 1024
    assert sum(p.numel() for p in model.parameters()) == expected_count(config, 5)


def small_config(**overrides) -> PNLPMixerConfig:
    fields = dict(num_hashes=8, bloom_size=16, max_seq_len=6, hidden_size=12, num_mixer_layers=2,
                  token_mixing_dim=10, channel_mixing_dim=14, classifier_hidden=7, num_labels=3)
    fields.update(overrides)
    return PNLPMixerConfig(**fields)


def fingerprints(batch: int, config: PNLPMixerConfig, seed: int = 0) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return torch.randint(0, 2**31 - 1, (batch, config.max_seq_len, config.num_hashes), generator=gen)


def test_fingerprints_and_features_give_the_same_model_output():
    torch.manual_seed(0)
    config = small_config()
    model = PNLPMixerModel(config).eval()
    fp = fingerprints(2, config)
    by_fp = model(fp).last_hidden_state
    by_features = model(input_features=counting_bloom_filter(fp, config.bloom_size)).last_hidden_state
    torch.testing.assert_close(by_fp, by_features)
    states = hidden_states(model, fp)
    assert len(states) == config.num_mixer_layers + 1 and torch.equal(states[-1], by_fp)


def test_window_concatenates_the_neighbours_features():
    torch.manual_seed(0)
    config = small_config(window_size=1)
    model = PNLPMixerModel(config).eval()
    features = torch.rand(1, config.max_seq_len, config.bloom_size)
    captured = {}
    model.bottleneck[0].register_forward_hook(lambda m, args, out: captured.update(x=args[0]))
    model(input_features=features)
    x = captured["x"][0]
    m = config.bloom_size
    assert x.shape == (config.max_seq_len, 3 * m)
    torch.testing.assert_close(x[2, :m], features[0, 1])          # left neighbour
    torch.testing.assert_close(x[2, m:2 * m], features[0, 2])     # the token itself
    torch.testing.assert_close(x[2, 2 * m:], features[0, 3])      # right neighbour
    assert torch.count_nonzero(x[0, :m]) == 0 and torch.count_nonzero(x[-1, 2 * m:]) == 0   # zero padding


def test_sequence_head_max_pools_over_real_tokens_only():
    torch.manual_seed(0)
    config = small_config()
    model = PNLPMixerForSequenceClassification(config).eval()
    fp = fingerprints(2, config)
    mask = torch.tensor([[1, 1, 1, 0, 0, 0], [1, 1, 1, 1, 1, 1]])
    out = model(fp, mask, labels=torch.tensor([0, 2]))
    hidden = model.pnlp_mixer(fp).last_hidden_state
    pooled = torch.stack([hidden[0, :3].max(0).values, hidden[1].max(0).values])
    torch.testing.assert_close(out.logits, model.classifier(pooled))
    assert out.loss is not None and out.loss.ndim == 0


def test_token_head_ignores_minus_100_labels():
    torch.manual_seed(0)
    config = small_config()
    model = PNLPMixerForTokenClassification(config).eval()
    fp = fingerprints(1, config)
    labels = torch.tensor([[0, 1, 2, -100, -100, -100]])
    out = model(fp, labels=labels)
    manual = torch.nn.functional.cross_entropy(out.logits[0, :3], labels[0, :3])
    torch.testing.assert_close(out.loss, manual)


def test_save_and_load_round_trip(tmp_path):
    torch.manual_seed(0)
    config = small_config()
    model = PNLPMixerForTokenClassification(config).eval()
    model.save_pretrained(tmp_path)
    loaded = PNLPMixerForTokenClassification.from_pretrained(tmp_path).eval()
    fp = fingerprints(2, config)
    torch.testing.assert_close(model(fp).logits, loaded(fp).logits)
    assert loaded.config.num_hashes == 8 and loaded.config.model_type == "pnlp_mixer"


def test_bad_input_gets_a_clear_error():
    config = small_config()
    model = PNLPMixerForSequenceClassification(config)
    fp = fingerprints(1, config)
    with pytest.raises(ValueError, match="exactly one of fingerprints"):
        model()
    with pytest.raises(ValueError, match="pad or truncate"):
        model(fp[:, :4])
    with pytest.raises(ValueError, match=r"batch >= 1"):
        model(fp[:0])
    with pytest.raises(TypeError, match="integer tensor"):
        model(fp.float())
    with pytest.raises(ValueError, match="at least one real token"):
        model(fp, torch.zeros(1, config.max_seq_len, dtype=torch.long))
    with pytest.raises(ValueError, match=r"labels must be \(batch,\) ids in \[0, 3\)"):
        model(fp, labels=torch.tensor([3]))
    with pytest.raises(ValueError, match="num_mixer_layers must be a positive int"):
        PNLPMixerConfig(num_mixer_layers=0)
    with pytest.raises(ValueError, match="dropout must lie in"):
        PNLPMixerConfig(dropout=1.5)
