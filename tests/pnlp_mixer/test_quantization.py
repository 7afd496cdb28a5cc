"""int8 pNLP-Mixers (torchao): size, agreement with the float model, the float model untouched; the latency
benchmark's pure helpers (FLOP count, payload keys). No speed is asserted."""
from __future__ import annotations

import pytest
import torch

pytest.importorskip("torchao")

from hashlib_core.benchmarks.pnlp_mixer_latency import (  # noqa: E402
    _config_for,
    build_payload,
    matmul_flops,
    main,
    mixer_flops,
    summarize,
    time_interleaved,
)
from hashlib_core.papers.pnlp_mixer.configuration import PNLPMixerConfig  # noqa: E402
from hashlib_core.papers.pnlp_mixer.heads import PNLPMixerForSequenceClassification  # noqa: E402
from hashlib_core.papers.pnlp_mixer.quantization import (  # noqa: E402
    model_size_bytes,
    prediction_agreement,
    quantize_int8,
    state_dict_storage,
)


@pytest.fixture(scope="module")
def paper_model():
    torch.manual_seed(0)
    return PNLPMixerForSequenceClassification(PNLPMixerConfig(num_labels=18)).eval()


@pytest.fixture(scope="module")
def int8_model(paper_model):
    return quantize_int8(paper_model)


def _inputs(n: int, config: PNLPMixerConfig, seed: int = 1):
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(3, config.max_seq_len + 1, (n,), generator=g)
    mask = (torch.arange(config.max_seq_len)[None] < lengths[:, None]).long()
    # counting Bloom filter counts of 256 hashes into 512 counters: mostly 0-2
    features = torch.poisson(torch.full((n, config.max_seq_len, config.bloom_size), 0.5), generator=g)
    return {"input_features": features * mask[..., None], "attention_mask": mask}


def test_int8_model_is_under_035_of_the_float_size(paper_model, int8_model):
    float_bytes, int8_bytes = model_size_bytes(paper_model), model_size_bytes(int8_model)
    assert int8_bytes < 0.35 * float_bytes
    storage = state_dict_storage(int8_model)
    linear_weights = sum(m.weight.numel() for m in paper_model.modules() if isinstance(m, torch.nn.Linear))
    assert storage["int8"] >= linear_weights          # every dense weight stored as int8 values
    assert set(state_dict_storage(paper_model)) == {"float32"}


def test_int8_logits_agree_with_float(paper_model, int8_model):
    inputs = _inputs(100, paper_model.config)
    with torch.inference_mode():
        a = paper_model(**inputs).logits
        b = int8_model(**inputs).logits
    agreement = prediction_agreement(a, b)
    assert agreement["argmax_agreement"] >= 0.95
    assert agreement["relative_l2"] < 0.05
    assert agreement["n"] == 100


def test_dynamic_scheme_agrees_too():
    torch.manual_seed(0)
    config = PNLPMixerConfig(num_labels=5, max_seq_len=8, bloom_size=32, hidden_size=32, num_mixer_layers=2,
                             token_mixing_dim=16, channel_mixing_dim=16, classifier_hidden=16)
    model = PNLPMixerForSequenceClassification(config).eval()
    inputs = _inputs(64, config)
    q = quantize_int8(model, "dynamic")
    with torch.inference_mode():
        agreement = prediction_agreement(model(**inputs).logits, q(**inputs).logits)
    assert agreement["argmax_agreement"] >= 0.9 and agreement["relative_l2"] < 0.1


def test_float_model_is_not_modified(paper_model):
    before = {k: v.clone() for k, v in paper_model.state_dict().items()}
    quantize_int8(paper_model)
    after = paper_model.state_dict()
    assert before.keys() == after.keys()
    assert all(type(after[k]) is torch.Tensor and after[k].dtype == torch.float32 and torch.equal(before[k], after[k])
               for k in before)
    assert all(type(m.weight) is torch.nn.Parameter for m in paper_model.modules() if isinstance(m, torch.nn.Linear))


def test_bad_arguments():
    with pytest.raises(ValueError, match="scheme"):
        quantize_int8(torch.nn.Linear(4, 4), "int4")
    with pytest.raises(TypeError):
        quantize_int8("model")
    with pytest.raises(ValueError, match="same non-empty shape"):
        prediction_agreement(torch.zeros(3, 2), torch.zeros(2, 2))
    assert prediction_agreement(torch.tensor([[1.0, 0.0], [0.0, 1.0]]),
                                torch.tensor([[1.0, 0.0], [1.0, 0.0]]))["argmax_agreement"] == 0.5


def test_flop_count_by_hand():
    config = PNLPMixerConfig(num_labels=3, max_seq_len=4, bloom_size=8, hidden_size=6, num_mixer_layers=2,
                             token_mixing_dim=5, channel_mixing_dim=7, classifier_hidden=9)
    # bottleneck: 4 rows of 8 -> 6; per block: token mixing on 6 rows 4 -> 5 -> 4, channel mixing on 4 rows
    # 6 -> 7 -> 6; head on the pooled vector 6 -> 9 -> 3. 2 FLOPs per multiply-add.
    by_hand = 2 * (4 * 8 * 6 + 2 * (6 * (4 * 5 + 5 * 4) + 4 * (6 * 7 + 7 * 6)) + (6 * 9 + 9 * 3))
    assert mixer_flops(config) == by_hand
    model = PNLPMixerForSequenceClassification(config).eval()
    inputs = _inputs(1, config)
    assert matmul_flops(model, **inputs) == by_hand
    paper = PNLPMixerConfig(num_labels=18)
    assert mixer_flops(paper) == 2 * (64 * 512 * 256 + 5 * (256 * 2 * 64 * 256 + 64 * 2 * 256 * 256)
                                      + 256 * 256 + 256 * 18)


def test_transformer_flop_count_by_hand_includes_attention():
    config = PNLPMixerConfig(num_labels=3, max_seq_len=4, bloom_size=8, hidden_size=8, channel_mixing_dim=6,
                             classifier_hidden=9, encoder="transformer")
    # bottleneck 4 rows 8 -> 8; per layer (2): Q, K, V and output projections (4 of 8 -> 8 on 4 rows), Q K^T and
    # A V (4 x 4 x 8 each, over the heads), the feed-forward 8 -> 6 -> 8 on 4 rows; head 8 -> 9 -> 3.
    by_hand = 2 * (4 * 8 * 8 + 2 * (4 * 4 * 8 * 8 + 2 * 4 * 4 * 8 + 4 * (8 * 6 + 6 * 8)) + (8 * 9 + 9 * 3))
    model = PNLPMixerForSequenceClassification(config).eval()
    assert torch.backends.mha.get_fastpath_enabled()
    assert matmul_flops(model, **_inputs(1, config)) == by_hand
    assert torch.backends.mha.get_fastpath_enabled()        # restored after counting


def test_unfused_forward_gives_the_same_logits_and_restores_the_fast_path():
    from hashlib_core.benchmarks.pnlp_mixer_latency import unfused_forward

    config = PNLPMixerConfig(num_labels=3, max_seq_len=4, bloom_size=8, hidden_size=8, channel_mixing_dim=6,
                             classifier_hidden=9, encoder="transformer")
    model = PNLPMixerForSequenceClassification(config).eval()
    inputs = _inputs(1, config)
    with torch.inference_mode():
        torch.testing.assert_close(unfused_forward(model, inputs), model(**inputs).logits, rtol=1e-5, atol=1e-6)
        assert torch.backends.mha.get_fastpath_enabled()
        with pytest.raises(TypeError):
            unfused_forward(model, {"input_features": "not a tensor"})
    assert torch.backends.mha.get_fastpath_enabled()       # restored after an error too


def test_payload_keys_and_ratios():
    timings = {"projection_cached": [0.001, 0.001, 0.002], "projection_uncached": [0.003, 0.003],
               "model_mixer_float32": [0.004, 0.004], "total_mixer_float32": [0.005, 0.005]}
    matmul = {"64x256@256x256": {"flops": 1, "seconds": 1.0, "gflops_per_s": 10.0},
              "64x512@512x256": {"flops": 1, "seconds": 1.0, "gflops_per_s": 20.0}}
    payload = build_payload(timings=timings, flops={"mixer": 40_000_000}, matmul=matmul,
                            sizes={"mixer_float32": 100}, meta={"cpu": "x", "torch": "t", "threads": 1})
    assert {"cpu", "torch", "threads", "paper", "latency", "flops_per_sentence", "matmul", "serialised_bytes",
            "ratios"} <= payload.keys()
    assert payload["latency"]["projection_cached"] == {"median_ms": 1.0, "mean_ms": 1.3333, "min_ms": 1.0,
                                                       "max_ms": 2.0, "n": 3}
    r = payload["ratios"]
    assert r["projection_share_of_total_mixer_float32"] == 0.2
    assert r["gflops_per_s_model_mixer_float32"] == 10.0          # 40 MFLOP in 4 ms
    assert r["fraction_of_core_matmul_model_mixer_float32"] == 0.5   # of the best shape's 20 GFLOP/s
    assert r["uncached_over_cached_projection"] == 3.0
    with pytest.raises(ValueError):
        summarize([])
    interleaved = {"interleaved": {"flops": 1, "seconds": 1.0, "gflops_per_s": 16.0}, **matmul}
    payload = build_payload(timings=timings, flops={"mixer": 40_000_000}, matmul=interleaved, sizes={}, meta={})
    assert payload["matmul"]["core_gflops_per_s"] == 16.0   # the probe timed in turn with the models, not the best
    assert payload["ratios"]["fraction_of_core_matmul_model_mixer_float32"] == 0.625


def test_time_interleaved_runs_jobs_round_robin():
    calls = []
    jobs = {"a": (lambda x: calls.append(("a", x)), [1, 2, 3]), "b": (lambda x: calls.append(("b", x)), [4, 5, 6])}
    times = time_interleaved(jobs, warmup=1, block=2)
    assert calls == [("a", 1), ("b", 4),                                  # warm-up
                     ("a", 1), ("a", 1), ("a", 2), ("b", 4), ("b", 4), ("b", 5),  # block 1: untimed first, 2 timed
                     ("a", 3), ("a", 3), ("b", 6), ("b", 6)]              # block 2
    assert {k: len(v) for k, v in times.items()} == {"a": 3, "b": 3} and min(times["a"] + times["b"]) >= 0
    with pytest.raises(ValueError, match="as many items"):
        time_interleaved({"a": (len, [1]), "b": (len, [1, 2])}, warmup=0)
    with pytest.raises(ValueError, match="block"):
        time_interleaved({"a": (len, [1])}, warmup=0, block=0)


def test_models_option_builds_each_encoder_and_refuses_unknown_ones():
    assert _config_for("transformer", 18).encoder == "transformer"
    assert _config_for("mixer", 18).encoder == "mixer"
    with pytest.raises(ValueError, match="unknown model 'rnn'"):
        _config_for("rnn", 18)
    with pytest.raises(SystemExit):
        main(["--models", "rnn"])
