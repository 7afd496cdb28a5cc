"""§5.2's encoders (Table 2): exact sizes, shapes, padding, save/load, bad names, and that each can learn."""
from __future__ import annotations

import pytest
import torch

from hashlib_core.modeling import embedding_parameter_count
from hashlib_core.papers.pnlp_mixer.alternatives import (
    ENCODERS,
    PNLPCNNModel,
    PNLPLSTMModel,
    PNLPProjectionOnlyModel,
    PNLPTransformerModel,
    build_encoder,
)
from hashlib_core.papers.pnlp_mixer.configuration import PNLPMixerConfig
from hashlib_core.papers.pnlp_mixer.heads import PNLPMixerForSequenceClassification, PNLPMixerForTokenClassification
from hashlib_core.papers.pnlp_mixer.modeling import PNLPMixerModel

ALTERNATIVES = ("projection-only", "cnn", "lstm", "transformer")

# Counted once with §4's sizes (m = 512, h = 256, head hidden 256): (18-intent sequence head, 78-tag token head).
PAPER_COUNTS = {
    "projection-only": (202_258, 217_678),
    "cnn": (992_274, 1_007_694),
    "lstm": (1_193_106, 1_208_526),
    "transformer": (994_322, 1_009_742),
    "mixer": (1_031_250, 1_046_670),
}
# Table 2's sizes, with the band each model must fall in.
TABLE2_BANDS = {"projection-only": (150_000, 250_000), "cnn": (800_000, 1_300_000), "lstm": (800_000, 1_300_000),
                "transformer": (800_000, 1_300_000), "mixer": (800_000, 1_300_000)}


def count(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("encoder", ENCODERS)
def test_paper_sizes_are_table_2s(encoder):
    sequence = PNLPMixerForSequenceClassification(PNLPMixerConfig(encoder=encoder, num_labels=18))
    token = PNLPMixerForTokenClassification(PNLPMixerConfig(encoder=encoder, num_labels=78))
    assert (count(sequence), count(token)) == PAPER_COUNTS[encoder]
    low, high = TABLE2_BANDS[encoder]
    assert low <= count(sequence) <= high and low <= count(token) <= high
    assert embedding_parameter_count(sequence) == 512 * 256 + 256 + 2 * 256     # the same bottleneck everywhere


def test_hand_counts_of_the_alternatives():
    """The hard-coded counts, by hand: bottleneck 131,840 and 18-intent head 70,418 around each encoder."""
    h, d, f = 256, 140, 256
    base = (512 * h + h + 2 * h) + (h * 256 + 256 + 256 * 18 + 18)
    assert PAPER_COUNTS["projection-only"][0] == base
    conv = 2 * h + (h * h * 3 + h)
    assert PAPER_COUNTS["cnn"][0] == base + 4 * conv + 2 * h
    lstm = 2 * 4 * (d * h + d * d + 2 * d) + 2 * 4 * (d * 2 * d + d * d + 2 * d)
    assert PAPER_COUNTS["lstm"][0] == base + lstm + (2 * d * h + h) + 2 * h
    layer = (3 * h * h + 3 * h) + (h * h + h) + (h * f + f + f * h + h) + 2 * 2 * h
    assert PAPER_COUNTS["transformer"][0] == base + 2 * layer + 2 * h


def small_config(**overrides) -> PNLPMixerConfig:
    fields = {"num_hashes": 8, "bloom_size": 16, "max_seq_len": 6, "hidden_size": 12, "num_mixer_layers": 2,
              "token_mixing_dim": 10, "channel_mixing_dim": 14, "classifier_hidden": 7, "num_labels": 3}
    fields.update(overrides)
    return PNLPMixerConfig(**fields)


def features(batch: int, config: PNLPMixerConfig, seed: int = 0) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return torch.randint(0, 4, (batch, config.max_seq_len, config.bloom_size), generator=gen).float()


@pytest.mark.parametrize("encoder", ENCODERS)
def test_build_encoder_and_head_shapes(encoder):
    torch.manual_seed(0)
    config = small_config(encoder=encoder)
    body = build_encoder(encoder, config).eval()
    x, mask = features(2, config), torch.tensor([[1, 1, 1, 0, 0, 0], [1, 1, 1, 1, 1, 1]])
    out = body(input_features=x, attention_mask=mask, output_hidden_states=True)
    assert out.last_hidden_state.shape == (2, 6, 12)
    layers = {"projection-only": 1, "cnn": 5, "lstm": 4, "transformer": 3, "mixer": 3}[encoder]
    assert len(out.hidden_states) == layers and torch.equal(out.hidden_states[-1], out.last_hidden_state)
    assert out.hidden_states[0].shape == (2, 6, 12)
    assert body(input_features=x, attention_mask=mask).hidden_states is None
    sequence = PNLPMixerForSequenceClassification(config).eval()
    token = PNLPMixerForTokenClassification(config).eval()
    assert type(sequence.base_model) is type(body) and type(token.pnlp_mixer) is type(body)
    assert sequence(input_features=x, attention_mask=mask, labels=torch.tensor([0, 2])).logits.shape == (2, 3)
    out = token(input_features=x, attention_mask=mask, labels=torch.zeros(2, 6, dtype=torch.long))
    assert out.logits.shape == (2, 6, 3) and out.loss.ndim == 0


def _perturb_padding(model, mask: torch.Tensor, where: str):
    """A context in which the masked positions hold noise: in the input features (``where="features"``) or, by a
    hook, in the bottleneck's output (``where="bottleneck"``: what the encoder body itself must not let through)."""
    if where == "features":
        return None
    padded = ~mask.bool()[..., None]

    def hook(module, args, out):
        return torch.where(padded, 10 * torch.randn_like(out), out)

    return model.base_model.bottleneck.register_forward_hook(hook)


@pytest.mark.parametrize("where", ["features", "bottleneck"])
@pytest.mark.parametrize("window", [0, 1])
@pytest.mark.parametrize("encoder", ALTERNATIVES)
def test_padding_never_reaches_real_tokens(encoder, window, where):
    torch.manual_seed(0)
    config = small_config(encoder=encoder, window_size=window)
    sequence = PNLPMixerForSequenceClassification(config).eval()
    token = PNLPMixerForTokenClassification(config).eval()
    token.pnlp_mixer.load_state_dict(sequence.pnlp_mixer.state_dict())
    mask = torch.tensor([[1, 1, 1, 0, 0, 0], [1, 0, 1, 1, 0, 1], [1, 1, 1, 1, 1, 1]])   # row 1: not a prefix
    x = features(3, config)
    noisy = torch.where(mask.bool()[..., None], x, 10 * torch.rand_like(x)) if where == "features" else x
    real = mask.bool()
    with torch.no_grad():
        clean = (token.pnlp_mixer(input_features=x, attention_mask=mask).last_hidden_state,
                 token(input_features=x, attention_mask=mask).logits,
                 sequence(input_features=x, attention_mask=mask).logits)
        hooks = [_perturb_padding(m, mask, where) for m in (token, sequence)]
        perturbed = (token.pnlp_mixer(input_features=noisy, attention_mask=mask).last_hidden_state,
                     token(input_features=noisy, attention_mask=mask).logits,
                     sequence(input_features=noisy, attention_mask=mask).logits)
        for hook in hooks:
            if hook is not None:
                hook.remove()
    torch.testing.assert_close(clean[0][real], perturbed[0][real])
    torch.testing.assert_close(clean[1][real], perturbed[1][real])
    torch.testing.assert_close(clean[2], perturbed[2])
    if where == "bottleneck" and encoder in ("cnn", "transformer"):     # the LSTM outputs zeros at padding
        assert not torch.allclose(clean[0][~real], perturbed[0][~real])   # the noise did reach the encoder


def test_cnn_sees_padding_as_the_sentence_edge():
    """Masked neighbours read as zeros, as the zero padding beyond the sentence's ends: a sentence's outputs do not
    depend on where in the s positions it sits."""
    torch.manual_seed(0)
    config = small_config(encoder="cnn")
    model = PNLPCNNModel(config).eval()
    x = features(1, config)
    shifted = torch.roll(x, 3, dims=1)
    with torch.no_grad():
        a = model(input_features=x, attention_mask=torch.tensor([[1, 1, 1, 0, 0, 0]])).last_hidden_state
        b = model(input_features=shifted, attention_mask=torch.tensor([[0, 0, 0, 1, 1, 1]])).last_hidden_state
    torch.testing.assert_close(a[0, :3], b[0, 3:])


def test_mixer_reads_padded_positions_as_the_paper_describes():
    """The mixer is left as §3.2's: token mixing is dense over all s positions, so what padding holds matters (the
    projector gives padding all-zero features). This documents the difference from the alternatives."""
    torch.manual_seed(0)
    config = small_config()
    model = PNLPMixerModel(config).eval()
    mask = torch.tensor([[1, 1, 1, 0, 0, 0]])
    x = features(1, config)
    noisy = torch.where(mask.bool()[..., None], x, 10 * torch.rand_like(x))
    with torch.no_grad():
        a = model(input_features=x, attention_mask=mask).last_hidden_state[0, :3]
        b = model(input_features=noisy, attention_mask=mask).last_hidden_state[0, :3]
    assert not torch.allclose(a, b)


def test_lstm_reads_the_real_tokens_in_order_wherever_they_are():
    torch.manual_seed(0)
    config = small_config(encoder="lstm")
    model = PNLPLSTMModel(config).eval()
    x = features(1, config)
    scattered = torch.zeros_like(x)
    scattered[0, [1, 3, 4]] = x[0, :3]
    with torch.no_grad():
        a = model(input_features=x, attention_mask=torch.tensor([[1, 1, 1, 0, 0, 0]])).last_hidden_state
        b = model(input_features=scattered, attention_mask=torch.tensor([[0, 1, 0, 1, 1, 0]])).last_hidden_state
        short = model(input_features=x, attention_mask=torch.tensor([[1, 1, 0, 0, 0, 0]])).last_hidden_state
    torch.testing.assert_close(a[0, :3], b[0, [1, 3, 4]])
    assert not torch.allclose(a[0, :2], short[0, :2])      # the backward direction sees the third token


@pytest.mark.parametrize("encoder", ALTERNATIVES)
def test_save_and_load_round_trip(encoder, tmp_path):
    torch.manual_seed(0)
    config = small_config(encoder=encoder)
    model = PNLPMixerForTokenClassification(config).eval()
    model.save_pretrained(tmp_path)
    loaded = PNLPMixerForTokenClassification.from_pretrained(tmp_path).eval()
    assert loaded.config.encoder == encoder and type(loaded.base_model) is type(model.base_model)
    x, mask = features(2, config), torch.tensor([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]])
    with torch.no_grad():
        torch.testing.assert_close(model(input_features=x, attention_mask=mask).logits,
                                   loaded(input_features=x, attention_mask=mask).logits)


def test_bad_encoder_gets_a_clear_error():
    with pytest.raises(ValueError, match=r"encoder must be one of 'projection-only', 'cnn', 'lstm', 'transformer', "
                                         r"'mixer', got 'rnn'"):
        PNLPMixerConfig(encoder="rnn")
    with pytest.raises(ValueError, match="unknown pNLP-Mixer encoder 'rnn'; choose one of 'projection-only'"):
        build_encoder("rnn", PNLPMixerConfig())
    with pytest.raises(TypeError, match="needs a PNLPMixerConfig"):
        build_encoder("cnn", {"hidden_size": 256})
    with pytest.raises(ValueError, match="divisible by its 4 heads"):
        PNLPTransformerModel(small_config(hidden_size=10))


def test_encoders_take_fingerprints_like_the_mixer():
    torch.manual_seed(0)
    config = small_config()
    fp = torch.randint(0, 2**31 - 1, (2, config.max_seq_len, config.num_hashes))
    for cls in (PNLPProjectionOnlyModel, PNLPCNNModel, PNLPLSTMModel, PNLPTransformerModel):
        model = cls(config).eval()
        with torch.no_grad():
            assert model(fp).last_hidden_state.shape == (2, 6, 12)
            torch.testing.assert_close(model(input_ids=fp).last_hidden_state, model(fp).last_hidden_state)
        with pytest.raises(ValueError, match="exactly one of fingerprints"):
            model()


@pytest.mark.parametrize("encoder", ENCODERS)
def test_each_encoder_overfits_a_few_sentences(encoder):
    """50 Adam steps on 8 sentences halve the loss (about 0.1-0.5 s each on one idle core; no time assertion, as
    the test machines' cores are shared)."""
    torch.manual_seed(0)
    config = small_config(encoder=encoder, bloom_size=32, max_seq_len=8, hidden_size=32, channel_mixing_dim=32,
                          classifier_hidden=32, num_labels=4)
    model = PNLPMixerForSequenceClassification(config).train()
    x = features(8, config, seed=1)
    mask = (torch.arange(8)[None] < torch.tensor([3, 5, 8, 4, 6, 2, 7, 8])[:, None]).long()
    labels = torch.tensor([0, 1, 2, 3, 0, 1, 2, 3])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(50):
        loss = model(input_features=x, attention_mask=mask, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0] / 2, losses[::10]
