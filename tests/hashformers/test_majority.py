"""The majority diagnosis (why a baseline stays at the majority class) on fixed inputs."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from hashlib_core.papers.hashformers import majority, tables_majority
from hashlib_core.papers.hashformers.profiles import PROFILES


def test_unigram_entropy_is_the_no_context_loss():
    assert majority.unigram_entropy(np.array([0, 0, 1, 1])) == pytest.approx(math.log(2))
    assert majority.unigram_entropy(np.array([7, 7, 7])) == 0.0
    assert majority.unigram_entropy(np.array([0, 1, 2, 3, 3, 3, 3, 3])) == pytest.approx(
        -(3 * (1 / 8) * math.log(1 / 8) + (5 / 8) * math.log(5 / 8)))
    for bad in (np.array([]), np.array([1.5, 2.0]), np.array([-1, 2]), np.array([[1, 2]])):
        with pytest.raises(ValueError, match="non-negative integer ids"):
            majority.unigram_entropy(bad)


def test_bag_features_of_sentences_and_pairs():
    ids = {"a b": [1, 2], "b c c": [2, 3, 3], "c": [3]}.__getitem__
    single = majority.bag_features(ids, ["a b", "b c c"], 4).toarray()
    assert single.tolist() == [[0, 1, 1, 0], [0, 0, 1, 1]]
    pairs = majority.bag_features(ids, [("a b", "b c c"), ("c", "a b")], 4).toarray()
    assert pairs.shape == (2, 12)
    # a's bag, b's bag, the pieces both share
    assert pairs[0].tolist() == [0, 1, 1, 0, 0, 0, 1, 1, 0, 0, 1, 0]
    assert pairs[1].tolist() == [0, 0, 0, 1, 0, 1, 1, 0, 0, 0, 0, 0]
    with pytest.raises(ValueError, match="outside the vocabulary of 3"):
        majority.bag_features(ids, ["b c c"], 3)


def test_chance_floor_and_leaving_the_majority_class():
    assert tables_majority.chance_floor("cola", 0.0) == 0.0
    assert tables_majority.chance_floor("mrpc", 68.4) == 68.4
    assert tables_majority.chance_floor("sst2", 40.0) == 60.0            # the other class predicted throughout
    assert not tables_majority.leaves_majority("mrpc", 69.0, 68.4)       # within the one-point margin
    assert tables_majority.leaves_majority("mrpc", 70.0, 68.4)
    assert tables_majority.leaves_majority("cola", 1.5, 0.0) and not tables_majority.leaves_majority("cola", 0.9, 0.0)
    assert not tables_majority.leaves_majority("cola", float("nan"), 0.0)


def _runs() -> pd.DataFrame:
    rows = []
    for task, maj, scores in (("cola", 0.0, {("pre-trained", 1500): 0.0, ("random", 1500): 0.0,
                                             ("pre-trained", 8000): 5.0, ("random", 8000): 0.0}),
                              ("mrpc", 68.4, {("pre-trained", 1500): 68.4, ("random", 1500): 68.4,
                                              ("pre-trained", 3000): 68.4, ("random", 3000): 68.4})):
        for (init, n), score in scores.items():
            rows.append({"name": "BERT-MLM", "initialisation": init, "task": task, "train_examples": n,
                         "learning_rate": 0.001,
                         "score": score, "majority_score": maj, "train_score": score + 10, "validation_score": score,
                         "best_epoch": 2, "max_epochs": 10.0, "dev_majority_share": 1.0 if score == maj else 0.8})
    return pd.DataFrame(rows)


def _bags() -> pd.DataFrame:
    return pd.DataFrame([{"task": "cola", "train_examples": 1500, "C": 1.0, "train_score": 90.0,
                          "validation_score": 3.0, "score": 4.0, "majority_score": 0.0},
                         {"task": "mrpc", "train_examples": 1500, "C": 1.0, "train_score": 95.0,
                          "validation_score": 70.0, "score": 71.0, "majority_score": 68.4}])


def test_majority_view_orders_rows_and_marks_who_leaves():
    view = tables_majority.majority_view(_runs(), _bags())
    assert view["model"].tolist()[:3] == ["BERT-MLM, pre-trained", "BERT-MLM, random weights",
                                          "bag of pieces (logistic regression)"]
    assert view["task"].tolist() == ["CoLA"] * 5 + ["MRPC"] * 5
    assert view["training examples"].tolist()[:5] == ["1,500", "1,500", "1,500", "8,000", "8,000"]
    assert view["leaves the majority class"].tolist() == ["no", "no", "yes", "yes", "no",
                                                          "no", "no", "yes", "no", "no"]
    assert view["best epoch"].tolist()[0] == "2 of 10" and view["best epoch"].tolist()[2] == "-"
    assert view["dev predictions of the majority class (%)"].tolist()[3] == pytest.approx(80.0)


def test_majority_quoted_says_which_source_leaves_where_and_why():
    floor = pd.DataFrame([{"name": "BERT-MLM", "steps": 1200, "corpus_pieces": 10, "distinct_pieces": 5,
                           "unigram_entropy": 7.0, "final_mlm_loss": 6.3, "below_floor": 0.7,
                           "below_floor_share": 0.1}])
    out = tables_majority.majority_quoted(floor, _runs(), _bags())
    assert out["maj_floor"] == "7.00" and out["maj_below"] == "0.70" and out["maj_below_share"] == "10%"
    assert "BERT-MLM, pre-trained leaves the majority class only with 8,000 examples" in out["maj_findings"]
    assert "BERT-MLM, random weights stays at the majority class at every size" in out["maj_findings"]
    assert "(on its own training examples: 10.0, 15.0)" in out["maj_findings"]
    # CoLA: more data takes it off; MRPC: it fits its training examples (78.4) but not dev
    assert out["maj_cause"] == ("on CoLA more training examples take the pre-trained baseline off the majority class "
                                "(0.0 with 1,500 examples, 5.0 with 8,000); on MRPC the pre-trained baseline fits "
                                "the examples it trains on (78.4) but stays at the majority class on dev: it "
                                "memorises them")
    # the pre-trained encoder cannot fit CoLA where random weights can; pre-training barely below the floor
    runs = _runs()
    pre = (runs["initialisation"] == "pre-trained") & (runs["task"] == "cola")
    runs.loc[pre, ["score", "train_score"]] = 0.0
    runs.loc[(runs["initialisation"] == "random") & (runs["task"] == "cola"), "train_score"] = 20.0
    shallow = floor.assign(below_floor_share=0.04)
    cause = tables_majority.majority_quoted(shallow, runs, _bags())["maj_cause"]
    assert cause.startswith("on CoLA the pre-trained encoder does not even fit the examples it trains on (0.0 on "
                            "them with 8,000 examples) where the randomly initialised one does (20.0)")
    assert cause.endswith("; and pre-training took the masked-piece loss only 4% below the no-context floor: the "
                          "encoder learnt little beyond piece frequencies to bring to either task")
    assert tables_majority.majority_quoted(floor, runs, _bags())["maj_lr"] == "0.001"


def test_profiles_check_the_diagnosis_settings():
    assert PROFILES.get("cpu").diag_task_keys() == ["cola", "mrpc"]
    with pytest.raises(ValueError, match="diag_train_examples must list distinct"):
        PROFILES.get("smoke", diag_train_examples=(64, 64))
    with pytest.raises(ValueError, match="diag_train_examples must list distinct"):
        PROFILES.get("smoke", diag_train_examples=())
    with pytest.raises(ValueError, match="diag_epochs must be > 0"):
        PROFILES.get("smoke", diag_epochs=0.0)
