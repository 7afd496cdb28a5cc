"""The no-training yardsticks: pair counts, the co-occurrence ranking's target ranks (hand-checked, and equal to a
slow reference on random sets), recall rows, and the experiment's registration."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hashlib_core.papers.superbloom.data import IdSets
from hashlib_core.papers.superbloom.data import TestSegments as HeldOut
from hashlib_core.hashing.bloom import BloomHashMaps
from hashlib_core.papers.superbloom.yardsticks import (COOCCURRENCE, cooccurrence_recall, pair_counts, target_ranks,
                                                       yardstick_rows)

TRAIN = [np.array([0, 1, 2]), np.array([0, 1]), np.array([1, 3]), np.array([4, 0])]


def test_pair_counts_and_frequencies():
    c, f = pair_counts(TRAIN, 6)
    assert f.tolist() == [3, 3, 1, 1, 1, 0]
    dense = c.toarray()
    assert dense[0, 1] == dense[1, 0] == 2 and dense[0, 2] == 1 and dense[1, 3] == 1 and dense[0, 4] == 1
    assert np.diag(dense).tolist() == [0] * 6 and dense.sum() == 2 * (2 + 1 + 1 + 1 + 1)
    with pytest.raises(ValueError, match=r"ids must lie in 0 \.\. 5"):
        pair_counts([np.array([0, 6])], 6)
    with pytest.raises(ValueError, match="num_ids must be at least 1"):
        pair_counts(TRAIN, 0)


def test_target_ranks_by_hand():
    c, f = pair_counts(TRAIN, 6)
    # segment [1, 2], 2 masked: context {1} scores 0: 2/3, 2: 1/3, 3: 1/3, others 0; 1 itself excluded.
    #   target 2 ties with 3 (both frequency 1): the smaller id first, so only 0 is before it -> rank 1
    # segment [4, 0], 0 masked: context {4} scores only 0 (1/1): rank 0
    # segment [3, 5], 5 masked: context {3} scores 1 (1/1); 5 scores 0 with frequency 0: after 0, 2, 4 and 1 -> 4
    segs = [np.array([1, 2]), np.array([4, 0]), np.array([3, 5])]
    ranks = target_ranks(segs, np.array([2, 0, 5]), np.array([1, 1, 1]), c, f, chunk=2)
    assert ranks.tolist() == [1, 0, 4]


def _slow_rank(segment, position, sets, num_ids):
    context = [int(i) for k, i in enumerate(segment) if k != position]
    f = [sum(i in s for s in sets) for i in range(num_ids)]
    score = [-np.inf if j in context else sum(sum(i in s and j in s for s in sets) / f[i] for i in context if f[i])
             for j in range(num_ids)]
    order = sorted(range(num_ids), key=lambda j: (-score[j], -f[j], j))
    return order.index(int(segment[position]))


def draw_sets(data) -> tuple[int, list[np.ndarray]]:
    """Hypothesis: ``n`` ids (3 to 12) and 1 to 8 training sets of them."""
    n = data.draw(st.integers(3, 12))
    return n, [np.array(sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=n))))
               for _ in range(data.draw(st.integers(1, 8)))]


def draw_segment(data, n: int) -> tuple[np.ndarray, int]:
    """Hypothesis: a segment of 2 to ``n`` distinct ids and the position of its masked id."""
    seg = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=n, unique=True)))
    return seg, data.draw(st.integers(0, len(seg) - 1))


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_target_ranks_equal_a_slow_reference(data):
    n, sets = draw_sets(data)
    segs, targets, positions = [], [], []
    for _ in range(data.draw(st.integers(1, 5))):
        seg, where = draw_segment(data, n)
        segs.append(seg), targets.append(int(seg[where])), positions.append(where)
    c, f = pair_counts(sets, n)
    fast = target_ranks(segs, np.array(targets), np.array(positions), c, f, chunk=2)
    assert fast.tolist() == [_slow_rank(s, w, sets, n) for s, w in zip(segs, positions)]


def toy_resources():
    """Six ids, training pages ``TRAIN``, two test segments (also the validation segments)."""
    sets = IdSets("toy", [str(i) for i in range(6)], [*TRAIN, np.array([1, 2]), np.array([4, 0])])
    test = HeldOut([np.array([1, 2]), np.array([4, 0])], np.array([2, 0]), np.array([1, 1]))
    return SimpleNamespace(sets=sets, pages=([0, 1, 2, 3], [], [4, 5]), test=test, validation=test)


def test_recall_and_rows_on_fixed_data():
    row = cooccurrence_recall(toy_resources(), (1, 2))
    assert row == {"name": COOCCURRENCE, "rec@1": 50.0, "rec@2": 100.0, "segments": 2, "pairs": 5}
    rows = yardstick_rows(["toy"], lambda name: toy_resources(), (1, 2))
    assert rows["name"].tolist() == ["popularity (no model)", COOCCURRENCE]
    # popularity ranks 0, 1 (3 pages each), then 2, 3, 4: target 2 at rank 2, target 0 at rank 0
    assert rows["rec@1"].tolist() == [50.0, 50.0] and rows["rec@2"].tolist() == [50.0, 100.0]
    assert rows[["dataset", "ids", "train_pages"]].drop_duplicates().values.tolist() == [["toy", 6, 4]]


def test_the_experiment_reads_only_the_split_the_datasets_the_hashing_and_the_batch():
    from hashlib_core.papers.superbloom.experiments import CHAPTER

    exp = CHAPTER.experiments["yardsticks"]
    assert "steps" in exp.independent_of and "hidden" in exp.independent_of
    assert not {"dataset", "other_datasets", "alpha_dataset", "seed", "test_share", "alpha", "alphas",
                "num_hashes", "batch", "seeds", "validation_pages"} & set(exp.independent_of)
    assert exp.outputs == ("yardsticks", "yardsticks_hashed", "set_shapes")


def _view():
    import pandas as pd

    return pd.DataFrame({"dataset": ["Big", "Big", "Big", "Small", "Small", "Small"],
                         "ids": [40_000, 40_000, 40_000, 500, 500, 500],
                         "name": ["superbloom-L4", "baseline-L4", "popularity (no model)"] * 2,
                         "rec@1": [0.1, 0.2, 0.3, 5.0, 6.0, 1.0], "rec@100": [1.0, 5.0, 5.1, 60.0, 70.0, 20.0],
                         "below uniform (nats)": [0.1, 0.2, None, 1.0, 2.0, None],
                         "test segments": [10, 10, 10, 4, 4, 4]})


def _merged():
    import pandas as pd

    from hashlib_core.papers.superbloom.tables_datasets import with_yardsticks

    ys = pd.DataFrame({"dataset": ["Big", "Big", "Small"], "name": ["popularity (no model)", COOCCURRENCE,
                                                                    COOCCURRENCE],
                       "rec@1": [0.3, 9.0, 4.0], "rec@100": [5.1, 70.0, 65.0], "segments": [10, 10, 4]})
    return with_yardsticks(_view(), ys)


def test_with_yardsticks_puts_the_count_row_after_each_dataset():
    import pandas as pd

    out = _merged()
    assert out["name"].tolist()[3] == COOCCURRENCE and out["name"].tolist()[7] == COOCCURRENCE and len(out) == 8
    assert out.loc[3, ["ids", "rec@100", "test segments"]].tolist() == [40_000, 70.0, 10]
    assert pd.isna(out.loc[3, "below uniform (nats)"]) and out.columns.tolist() == _view().columns.tolist()


def test_yardsticks_quoted_reads_the_largest_set():
    from hashlib_core.papers.superbloom.tables_datasets import yardsticks_quoted

    import pandas as pd

    ys = pd.DataFrame({"dataset": ["Big", "Small"], "name": [COOCCURRENCE] * 2, "pairs": [1_234_567, 10]})
    q = yardsticks_quoted(_merged(), ys)
    assert q["ys_top"] == "rec@100" and q["ys_ahead"] == "1 of 2 (Big)"
    assert (q["ys_big"], q["ys_big_ids"], q["ys_big_cooc"], q["ys_big_model"], q["ys_big_pop"]) == (
        "Big", "40,000", "70.0%", "5.0% (baseline-L4)", "5.1%")
    assert q["ys_big_pairs"] == "1,234,567"
    assert q["ys_big_reading"].startswith("the set's contexts give away far more than the trained pair has learned;")
    with pytest.raises(ValueError, match="run yardsticks"):
        yardsticks_quoted(_view(), ys)


# ----------------------------------------------------------------------------------------- what a step holds
def test_expected_masked_by_hand_and_against_the_collator():
    import torch

    from hashlib_core.papers.superbloom.data import ItemMaskingCollator, expected_masked

    assert expected_masked([1]) == pytest.approx(1.0)                  # one item: always masked
    assert expected_masked([2, 4]) == pytest.approx(((0.3 + 0.85**2) + (0.6 + 0.85**4)) / 2)
    with pytest.raises(ValueError, match="at least one item"):
        expected_masked([3, 0])
    with pytest.raises(ValueError, match="at least one segment"):
        expected_masked([])
    maps = BloomHashMaps(50, 5, 2, 0)
    collate = ItemMaskingCollator(maps, seed=0)
    rng = np.random.default_rng(0)
    segments = [rng.permutation(50)[: n] for n in rng.integers(2, 9, 4000)]
    labels = collate(segments)["labels"].reshape(len(segments), -1, 2)
    counted = float((labels[:, :, 0] != -100).sum(dim=1).to(torch.float64).mean())
    assert counted == pytest.approx(expected_masked([len(s) for s in segments]), rel=0.03)


def test_shape_rows_on_fixed_data():
    from hashlib_core.papers.superbloom.data import expected_masked
    from hashlib_core.papers.superbloom.yardsticks import shape_rows

    res = toy_resources()
    res.train_segments = SimpleNamespace(segments=[np.array([0, 1, 2]), np.array([3, 4])])
    rows = shape_rows(["toy"], lambda name: res, 8)
    row = rows.iloc[0]
    assert (row["dataset"], row["ids"], row["train_pages"], row["train_segments"], row["batch"]) == ("toy", 6, 4, 2, 8)
    assert row["items_per_segment"] == 2.5
    assert row["masked_per_step"] == pytest.approx(8 * expected_masked([3, 2]))


def test_shapes_quoted_reads_the_set_with_the_fewest_targets():
    import pandas as pd

    from hashlib_core.papers.superbloom.tables_datasets import shapes_quoted, shapes_view

    shapes = pd.DataFrame({"dataset": ["Small", "Big"], "ids": [500, 40_000], "train_pages": [40, 900],
                           "train_segments": [50, 1000], "items_per_segment": [20.0, 4.0],
                           "masked_per_segment": [3.0, 1.0], "batch": [32, 32], "masked_per_step": [96.0, 32.0]})
    caps = {"Small": 100, "Big": 10}
    q = shapes_quoted(shapes, _merged(), caps)
    assert (q["sh_batch"], q["sh_main"], q["sh_fewest"], q["sh_ratio"]) == ("32", "Small", "Big", "3.0")
    assert q["sh_masked"] == "Small 96; Big 32" and q["sh_items"] == "Small 20.0; Big 4.0"
    assert q["sh_passes"] == "Small 64.00; Big 0.32"                     # 100 x 32 / 50, 10 x 32 / 1000
    assert (q["sh_fewest_model"], q["sh_fewest_pop"], q["sh_fewest_cooc"]) == ("5.0% (baseline-L4)", "5.1%", "70.0%")
    assert q["sh_reading"].startswith("no trained model passes the popularity ranking there")
    assert "(0.32 passes over its segments, 3.0 times fewer targets per step than on Small)" in q["sh_reading"]
    assert q["sh_mask_share"] == "15%"
    # the main set itself has the fewest targets: nothing to read
    swapped = shapes.assign(masked_per_step=[10.0, 32.0])
    assert shapes_quoted(swapped, _merged(), caps)["sh_reading"] == (
        "Small itself has the fewest targets per step, so no other set is trained on fewer")
    # a third set with the fewest whose trained model passes its popularity ranking
    third = pd.concat([shapes, shapes.iloc[[0]].assign(dataset="Mid", masked_per_step=8.0)], ignore_index=True)
    small = _view()[_view()["dataset"] == "Small"]
    view = pd.concat([_merged(), small.assign(dataset="Mid")], ignore_index=True)
    assert shapes_quoted(third, view, {**caps, "Mid": 5})["sh_reading"] == (
        "a trained model passes the popularity ranking there even so")
    view = shapes_view(shapes, caps)
    assert view.columns.tolist()[-1] == "passes over the segments at the cap"
    assert view["training segments"].tolist() == [50, 1000] and view["cap on steps"].tolist() == [100, 10]
    with pytest.raises(ValueError, match=r"no cap on steps given for \['Big'\]"):
        shapes_view(shapes, {"Small": 100})


def test_step_caps_follow_the_profile():
    from hashlib_core.papers.superbloom.profiles import PROFILES
    from hashlib_core.papers.superbloom.tables_datasets import step_caps

    p = PROFILES.get("cpu")
    caps = step_caps(p)
    assert caps["FB15k-237"] == p.steps and caps["Diginetica"] == p.other_steps and caps["Gowalla"] == p.other_steps
    alone = step_caps(PROFILES.get("cpu", other_datasets=(), alpha_steps=0))
    assert alone == {"FB15k-237": p.steps, "Gowalla": p.steps}
    # the main set is also the diagnosis's (as in the small profile): it keeps the main cap
    same = step_caps(PROFILES.get("cpu", dataset="gowalla", other_datasets=("fb15k237",), alpha_steps=123))
    assert same == {"Gowalla": p.steps, "FB15k-237": p.other_steps}
