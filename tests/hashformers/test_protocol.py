"""The protocol views: how flat pre-training ended, which learning rate the sweep chose, which runs hit the cap."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hashlib_core.papers.hashformers.protocol import finetuning_view, pretraining_flatness


def test_flatness_is_the_share_of_the_decrease_left_for_the_second_half():
    steps = [0, 50, 100]
    curves = pd.DataFrame({"name": ["flat"] * 3 + ["falling"] * 3 + ["rising"] * 3, "step": steps * 3,
                           "loss": [10.0, 4.0, 4.0, 10.0, 8.0, 4.0, 4.0, 5.0, 6.0]})
    view = pretraining_flatness(curves).set_index("name")
    share = view["share of the decrease in the second half (%)"]
    assert share["flat"] == pytest.approx(0.0)
    assert share["falling"] == pytest.approx(100.0 * 4.0 / 6.0)
    assert np.isnan(share["rising"])                       # no decrease at all: no share to give
    assert view.loc["falling", "loss halfway"] == 8.0
    assert list(view.index) == ["flat", "falling", "rising"]   # the results' order, not sorted


def test_finetuning_view_counts_chosen_runs_at_the_cap_per_task():
    rows = []
    for name, lr in (("LSH-Proj", 1e-3), ("MD-Emb (50K)", 3e-4)):
        for task in ("sst2", "mrpc"):
            for seed in range(3):
                for swept in (1e-4, 3e-4, 1e-3):
                    chosen = swept == lr
                    rows.append({"name": name, "task": task, "seed": seed, "learning_rate": swept,
                                 "chosen": chosen, "swept_on": "sst2", "max_epochs": 5,
                                 # LSH-Proj's MRPC runs at the chosen rate peak at the cap for two seeds
                                 "best_epoch": 5 if (chosen and name == "LSH-Proj" and task == "mrpc"
                                                     and seed < 2) else 3})
    runs = pd.DataFrame(rows)
    glue = pd.DataFrame({"name": ["LSH-Proj", "MD-Emb (50K)"], "num_buckets": [np.nan, 4096]})
    view = finetuning_view(runs, glue).set_index("model")
    assert list(view.index) == ["LSH-Proj", "MD-Emb (N = 4,096, paper's 50K)"]
    assert view.loc["LSH-Proj", "learning rate"] == "1e-3"
    assert view.loc["MD-Emb (N = 4,096, paper's 50K)", "learning rate"] == "3e-4"
    assert (view["chosen on"] == "SST").all()
    assert view.loc["LSH-Proj", "MRPC at cap"] == "2 of 3"
    assert view.loc["LSH-Proj", "SST at cap"] == "0 of 3"
    assert view.loc["MD-Emb (N = 4,096, paper's 50K)", "MRPC at cap"] == "0 of 3"


def test_protocol_quotes_say_whether_losses_flattened_and_where_the_rates_fell():
    from types import SimpleNamespace

    from hashlib_core.papers.hashformers.profiles import PROFILES
    from hashlib_core.papers.hashformers.protocol import protocol_quoted

    steps = [0, 50, 100]
    runs = pd.DataFrame([{"name": n, "task": "sst2", "seed": 0, "learning_rate": lr, "chosen": True,
                          "best_epoch": e, "max_epochs": 5}
                         for n, lr, e in (("A", 1e-3, 5), ("B", 1e-3, 2), ("C", 1e-4, 3))])

    def quoted(losses):
        curves = pd.DataFrame({"name": ["A"] * 3 + ["B"] * 3, "step": steps * 2, "loss": losses})
        tables = {"pretraining_curves": curves, "glue_runs": runs}
        return protocol_quoted(SimpleNamespace(profile=PROFILES.get("cpu"), table=tables.__getitem__))

    flat = quoted([10.0, 4.0, 4.0, 10.0, 4.5, 4.0])              # 0% and 8.3% of the decrease in the second half
    assert flat["flat_verdict"] == "The losses had flattened" and flat["flat_median"] == "4.2%"
    assert flat["lr_edges"] == "2 of 3 models chose the sweep's largest rate and 1 its smallest"
    assert flat["at_cap"] == "1 of 3"
    falling = quoted([10.0, 8.0, 4.0, 10.0, 7.0, 4.0])           # 67% and 50%: still falling
    assert falling["flat_verdict"] == "The losses were still falling"
