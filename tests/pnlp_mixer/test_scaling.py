"""The sequence-length benchmark (hashlib_core.benchmarks.pnlp_mixer_scaling) and the page's view, facts and figure
of it. Speed itself is measured by the benchmark, never asserted here."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from hashlib_core.benchmarks.pnlp_mixer_latency import mixer_flops  # noqa: E402
from hashlib_core.benchmarks.pnlp_mixer_scaling import MODELS, main, run_scaling  # noqa: E402
from hashlib_core.papers.pnlp_mixer import figures, tables  # noqa: E402
from hashlib_core.papers.pnlp_mixer.configuration import PNLPMixerConfig  # noqa: E402

TINY = dict(hidden_size=8, token_mixing_dim=6, channel_mixing_dim=8, classifier_hidden=5, num_hashes=8,
            bloom_size=16, num_mixer_layers=2)


def test_run_scaling_counts_and_times_every_model_at_every_length():
    threads = torch.get_num_threads()
    torch.manual_seed(123)
    expected_next = torch.rand(1)
    torch.manual_seed(123)
    payload = run_scaling([12, 4], samples=2, warmup=0, num_labels=3, **TINY)
    # one thread and its own seed while it runs; the caller's thread count and random stream afterwards
    assert payload["threads"] == 1 and torch.get_num_threads() == threads
    assert torch.equal(torch.rand(1), expected_next)
    rows = pd.DataFrame(payload["rows"])
    assert payload["lengths"] == [4, 12]
    assert list(rows["seq_len"]) == [4] * 4 + [12] * 4 and list(rows["model"]) == list(MODELS) * 2
    assert (rows["n"] == 2).all() and (rows["median_ms"] > 0).all()
    for s in (4, 12):
        at = rows[rows["seq_len"] == s].set_index("model")
        config = PNLPMixerConfig(num_labels=3, max_seq_len=s, **TINY)
        # the Mixer's count is the hand formula's; the lean path is the same model, so the same count
        assert at.loc["mixer", "flops"] == at.loc["mixer_lean", "flops"] == mixer_flops(config)
        assert at.loc["transformer", "flops"] == at.loc["transformer_unfused", "flops"]
        assert at.loc["mixer_lean", "lean_equals_eager"]
    # the token-mixing weights are s wide: the Mixer's parameters grow with s; the Transformer's do not
    params = rows.pivot(index="seq_len", columns="model", values="parameters")
    assert params.loc[12, "mixer"] > params.loc[4, "mixer"]
    assert params.loc[12, "transformer"] == params.loc[4, "transformer"]


@pytest.mark.parametrize("lengths", [[], [0], [8, 8], [3.5], [True]])
def test_bad_lengths_are_refused(lengths):
    with pytest.raises(ValueError, match="lengths"):
        run_scaling(lengths, samples=1)


def test_bad_samples_are_refused_and_the_cli_says_so(capsys):
    with pytest.raises(ValueError, match="samples"):
        run_scaling([4], samples=0)
    with pytest.raises(SystemExit):
        main(["--lengths", "8", "8"])
    assert "must not repeat" in capsys.readouterr().err


def _payload(mixer_ms, lean_ms, transformer_ms, mixer_flops_, transformer_flops, lengths=(32, 64, 128, 256),
             unfused_ms=None):
    rows = []
    for i, s in enumerate(lengths):
        models = [("mixer", mixer_ms[i], mixer_flops_[i]), ("mixer_lean", lean_ms[i], mixer_flops_[i]),
                  ("transformer", transformer_ms[i], transformer_flops[i])]
        if unfused_ms is not None:
            models.append(("transformer_unfused", unfused_ms[i], transformer_flops[i]))
        for model, ms, flops in models:
            rows.append({"seq_len": s, "model": model, "parameters": 1000 + (s if model != "transformer" else 0),
                         "flops": flops, "median_ms": ms, "gflops_per_s": flops / ms / 1e6})
    return {"data": {"rows": rows}}


def test_scaling_view_and_facts_on_fixed_numbers():
    bench = _payload(mixer_ms=[4.0, 8.0, 10.0, 20.0], lean_ms=[3.0, 6.0, 9.0, 9.0],
                     transformer_ms=[2.0, 5.0, 12.0, 50.0],
                     mixer_flops_=[1e8, 2e8, 4e8, 8e8], transformer_flops=[5e7, 1.5e8, 4e8, 1.6e9])
    view = tables.scaling_view(bench)
    assert list(view.index) == [32, 64, 128, 256]
    assert view.loc[256, "FLOP T/M"] == 2.0 and view.loc[64, "time T/M"] == 5.0 / 8.0
    assert view.loc[256, "time T/M, lean"] == 50.0 / 9.0 and view.loc[32, "Mixer params (M)"] == 1032 / 1e6
    facts = tables.scaling_facts(bench)
    assert facts["sc_lengths"] == "32, 64, 128, 256" and facts["sc_longest"] == "256"
    assert facts["sc_flops_even"] == "from 128 positions on" and facts["sc_flops_2x"] == "from 256 positions on"
    assert facts["sc_faster"] == "from 128 positions on"            # eager: 12 / 10 at 128
    assert facts["sc_faster_best"] == "from 128 positions on"       # lean: 5 / 6 at 64 is still slower
    assert facts["sc_2x"] == facts["sc_2x_eager"] == "from 256 positions on"
    assert facts["sc_speed_longest"] == "is 5.6 times as fast"
    assert facts["sc_flops_ratio_longest"] == "2.0"
    assert facts["sc_rate_t_longest"] == "32" and facts["sc_rate_m_longest"] == "40"
    assert facts["sc_t_params"] == "the Transformer's stay at 1,000"
    assert facts["sc_goal"] == "is met from 256 positions on"
    assert tables.scaling_facts(bench, chapter_length=64)["sc_goal"] == (
        "is met from 256 positions on, not at the 64 positions of this chapter's models")
    # a chapter length that was not measured is not named
    assert tables.scaling_facts(bench, chapter_length=100)["sc_goal"] == "is met from 256 positions on"


def test_eager_and_lean_verdicts_are_kept_apart():
    # the lean path is twice as fast from 128 on, the eager Mixer only at 256
    bench = _payload(mixer_ms=[4.0, 4.0, 8.0, 4.0], lean_ms=[4.0, 4.0, 4.0, 4.0], transformer_ms=[2.0, 4.0, 9.0, 9.0],
                     mixer_flops_=[1e8] * 4, transformer_flops=[1e8] * 4)
    facts = tables.scaling_facts(bench)
    assert facts["sc_2x"] == "from 128 positions on" and facts["sc_2x_eager"] == "from 256 positions on"
    assert facts["sc_speed_longest"] == "is 2.2 times as fast"
    slower = _payload(mixer_ms=[4.0] * 4, lean_ms=[4.0] * 4, transformer_ms=[3.0] * 4, mixer_flops_=[1e8] * 4,
                      transformer_flops=[1e8] * 4)
    assert tables.scaling_facts(slower)["sc_speed_longest"] == "takes 1.3 times as long"


def test_the_transformer_is_timed_on_its_faster_path():
    bench = _payload(mixer_ms=[4.0, 8.0, 10.0, 20.0], lean_ms=[3.0, 6.0, 9.0, 9.0],
                     transformer_ms=[2.0, 5.0, 12.0, 50.0], unfused_ms=[3.0, 4.0, 12.0, 25.0],
                     mixer_flops_=[1e8, 2e8, 4e8, 8e8], transformer_flops=[5e7, 1.5e8, 4e8, 1.6e9])
    view = tables.scaling_view(bench)
    assert list(view["Transformer ms"]) == [2.0, 4.0, 12.0, 25.0]
    assert view.loc[256, "time T/M"] == 25.0 / 20.0
    facts = tables.scaling_facts(bench)
    assert facts["sc_rate_t_longest"] == "64" and facts["sc_speed_longest"] == f"is {25.0 / 9.0:.1f} times as fast"


def test_facts_say_when_a_goal_is_not_reached_or_is_lost_again():
    bench = _payload(mixer_ms=[4.0, 4.0, 4.0, 4.0], lean_ms=[4.0, 4.0, 4.0, 4.0], transformer_ms=[5.0, 9.0, 3.0, 5.0],
                     mixer_flops_=[1e8] * 4, transformer_flops=[5e7] * 4)
    facts = tables.scaling_facts(bench)
    # faster at 32, 64 and 256 but not at 128: "from" names the start of the last unbroken run
    assert facts["sc_faster"] == "from 256 positions on"
    assert facts["sc_2x"] == "not even at 256 positions, the longest measured"
    assert facts["sc_flops_even"] == "not even at 256 positions, the longest measured"
    # twice as fast at 64 (9 / 4) only: met somewhere, lost at the longest length
    assert tables.scaling_facts(bench, 64)["sc_goal"] == "is met at 64 positions but not at 256, the longest measured"
    never = _payload(mixer_ms=[4.0] * 4, lean_ms=[4.0] * 4, transformer_ms=[5.0] * 4, mixer_flops_=[1e8] * 4,
                     transformer_flops=[1e8] * 4)
    assert tables.scaling_facts(never, 64)["sc_goal"] == "is not met at any length up to 256 positions"


def test_lean_timings_of_another_function_are_refused():
    bench = _payload(mixer_ms=[4.0] * 4, lean_ms=[4.0] * 4, transformer_ms=[5.0] * 4, mixer_flops_=[1e8] * 4,
                     transformer_flops=[1e8] * 4)
    for row in bench["data"]["rows"]:
        if row["model"] == "mixer_lean":
            row["lean_equals_eager"] = row["seq_len"] != 64
    with pytest.raises(ValueError, match="lean path's logits differed"):
        tables.scaling_view(bench)


def test_scaling_needs_both_models():
    with pytest.raises(ValueError, match="pnlp_mixer_scaling"):
        tables.scaling_view({"rows": [{"seq_len": 4, "model": "mixer", "parameters": 1, "flops": 1,
                                       "median_ms": 1.0, "gflops_per_s": 1.0}]})


def test_cost_vs_length_figure():
    bench = _payload(mixer_ms=[4.0, 8.0, 10.0, 20.0], lean_ms=[3.0, 6.0, 9.0, 9.0],
                     transformer_ms=[2.0, 5.0, 12.0, 50.0],
                     mixer_flops_=[1e8, 2e8, 4e8, 8e8], transformer_flops=[5e7, 1.5e8, 4e8, 1.6e9])
    fig = figures.cost_vs_length(bench, chapter_length=64)
    left, right = fig.axes
    # two models on the left, three forwards on the right (the Transformer's faster path), each panel with the
    # chapter's length marked
    assert len(left.lines) == 2 + 1 and len(right.lines) == 3 + 1
    assert list(left.lines[0].get_xdata()) == [32, 64, 128, 256]
    assert list(right.lines[2].get_ydata()) == [2.0, 5.0, 12.0, 50.0]
    assert len(figures.cost_vs_length(bench, chapter_length=1000).axes[0].lines) == 2   # outside: no marker
