"""The lean inference path equals the Hugging Face model in evaluation (fast and reference paths), keeps its
errors, snapshots the weights and refuses models it cannot run."""
from __future__ import annotations

import pytest
import torch

from hashlib_core.papers.pnlp_mixer.configuration import PNLPMixerConfig
from hashlib_core.papers.pnlp_mixer.heads import PNLPMixerForSequenceClassification, PNLPMixerForTokenClassification
from hashlib_core.papers.pnlp_mixer.inference import MixerForInference


def _model(seed: int = 0, **fields) -> PNLPMixerForSequenceClassification:
    shape = dict(num_labels=5, num_hashes=16, bloom_size=32, max_seq_len=8, hidden_size=12, num_mixer_layers=2,
                 token_mixing_dim=10, channel_mixing_dim=14, classifier_hidden=9)
    torch.manual_seed(seed)
    model = PNLPMixerForSequenceClassification(PNLPMixerConfig(**{**shape, **fields}))
    with torch.no_grad():   # trained-looking weights: away from the zero biases and unit norms of the init
        for p in model.parameters():
            p.add_(0.3 * torch.randn_like(p))
    return model.eval()


def _inputs(batch: int, config: PNLPMixerConfig, seed: int = 1) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(1, config.max_seq_len + 1, (batch,), generator=g)
    mask = (torch.arange(config.max_seq_len)[None] < lengths[:, None]).long()
    features = torch.poisson(torch.full((batch, config.max_seq_len, config.bloom_size), 0.7), generator=g)
    return {"input_features": features * mask[..., None], "attention_mask": mask}


@pytest.mark.parametrize("batch", [1, 4])
@pytest.mark.parametrize("fields", [{}, {"classifier_hidden": 0}, {"window_size": 1}])
def test_lean_path_equals_the_model_in_eval(batch, fields):
    model = _model(**fields)
    inputs = _inputs(batch, model.config)
    with torch.inference_mode():
        reference = model(**inputs).logits
    lean = MixerForInference(model)(**inputs)
    assert lean.shape == reference.shape == (batch, model.config.num_labels)
    torch.testing.assert_close(lean, reference, rtol=1e-5, atol=1e-5)


def test_fingerprints_and_no_mask_as_the_model():
    model = _model()
    fingerprints = torch.randint(0, 2**31 - 1, (3, model.config.max_seq_len, model.config.num_hashes))
    with torch.inference_mode():
        reference = model(fingerprints=fingerprints).logits
    torch.testing.assert_close(MixerForInference(model)(fingerprints=fingerprints), reference, rtol=1e-5, atol=1e-5)


def test_weights_are_a_snapshot():
    model = _model()
    inputs = _inputs(2, model.config)
    lean = MixerForInference(model)
    before = lean(**inputs).clone()
    with torch.no_grad():
        model.classifier[-1].bias.add_(1.0)
    torch.testing.assert_close(lean(**inputs), before)
    assert not torch.allclose(MixerForInference(model)(**inputs), before)


def test_refuses_other_models_and_keeps_the_models_errors():
    config = PNLPMixerConfig(num_labels=3, num_hashes=16, bloom_size=32, max_seq_len=8, hidden_size=12,
                             num_mixer_layers=1, token_mixing_dim=8, channel_mixing_dim=8, classifier_hidden=8)
    with pytest.raises(TypeError, match="mixer encoder"):
        MixerForInference(PNLPMixerForSequenceClassification(PNLPMixerConfig(**{**config.to_dict(),
                                                                                "encoder": "cnn"})))
    with pytest.raises(TypeError, match="PNLPMixerForSequenceClassification"):
        MixerForInference(PNLPMixerForTokenClassification(config))
    lean = MixerForInference(_model())
    with pytest.raises(ValueError, match="exactly one"):
        lean()
    with pytest.raises(ValueError, match="shape"):
        lean(input_features=torch.zeros(1, 3, 32))
    with pytest.raises(ValueError, match="attention_mask"):
        lean(input_features=torch.zeros(1, 8, 32), attention_mask=torch.zeros(1, 8, dtype=torch.long))
