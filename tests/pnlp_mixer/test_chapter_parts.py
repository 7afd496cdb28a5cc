"""The pNLP-Mixer chapter's parts: task data, the joint model, fitting with early stopping, tables and figures."""
from __future__ import annotations

import math

import matplotlib
import pandas as pd
import pytest
import torch

from hashlib_core.papers.pnlp_mixer import figures, tables
from hashlib_core.papers.pnlp_mixer.configuration import PNLPMixerConfig
from hashlib_core.papers.pnlp_mixer.data import UNSEEN, Split, TaskData, _from_names, load_task, task_language
from hashlib_core.papers.pnlp_mixer.fit import Collator, FitSettings, fit, predict, score
from hashlib_core.papers.pnlp_mixer.joint import PNLPMixerForIntentAndSlots
from hashlib_core.papers.pnlp_mixer.profiles import PROFILES
from hashlib_core.papers.pnlp_mixer.metrics import slot_f1

matplotlib.use("Agg")

# ---------------------------------------------------------------------------------------------- data


def test_task_names_and_their_sources():
    assert task_language("atis") == ("atis", "en") and task_language("mtop-de") == ("mtop", "de")
    assert task_language("massive-th") == ("massive", "th")
    for bad in ("mtop", "mtop-xx", "massive-", "glue"):
        with pytest.raises(ValueError, match="unknown task"):
            task_language(bad)
    with pytest.raises(TypeError):
        task_language(None)


def test_label_inventories_come_from_training_and_unseen_labels_are_marked():
    splits = {"train": ([["a", "b"]], ["x"], [["O", "B-s"]]), "validation": ([["c"]], ["y"], [["B-t"]]),
              "test": ([["d"]], ["x"], [["O"]])}
    task = _from_names("toy", splits)
    assert task.intent_names == ["x"] and task.slot_names == ["O", "B-s"]
    assert task.validation.intents == [UNSEEN] and task.validation.slots == [[UNSEEN]]
    with pytest.raises(ValueError, match="one per word"):
        Split([["a", "b"]], [0], [[0]])


def test_load_task_sizes_and_names(mirror):
    atis = load_task("atis")
    assert (len(atis.train), len(atis.validation), len(atis.test)) == (4478, 500, 893)
    assert atis.slot_names[0] == "O"
    # MTOP in full, its tags the data layer's (hashlib_core.data.load_mtop): the chapter parses no bracket itself
    from hashlib_core.data import load_mtop

    mtop = load_task("mtop-en")
    assert (len(mtop.train), len(mtop.validation), len(mtop.test)) == (15667, 2235, 4386)
    ds = load_mtop("en")
    tags = ds["train"].features["slot_tags"].feature
    assert mtop.train.words[0] == ds["train"][0]["tokens"]
    assert [mtop.slot_names[t] for t in mtop.train.slots[0]] == tags.int2str(ds["train"][0]["slot_tags"])
    massive = load_task("massive-de")
    assert len(massive.train) > 10000 and massive.slot_names[0] == "O"
    with pytest.raises(ValueError, match="unknown task"):
        load_task("mtop")
    with pytest.raises(ValueError, match="unknown task"):
        load_task("mtop-xx")

# ---------------------------------------------------------------------------------------------- model and fit


def _features(sentences):
    """A toy projector: word -> a fixed pseudo-random 16-feature row (no vocabulary needed)."""
    s = 8
    feats = torch.zeros(len(sentences), s, 16)
    mask = torch.zeros(len(sentences), s, dtype=torch.long)
    for b, words in enumerate(sentences):
        for i, w in enumerate(words[:s]):
            g = torch.Generator().manual_seed(sum(map(ord, w)))
            feats[b, i] = torch.randint(0, 3, (16,), generator=g).float()
            mask[b, i] = 1
    return {"input_features": feats, "attention_mask": mask}


def _toy_task() -> TaskData:
    words = [["fly", "to", "boston"], ["fly", "to", "denver"], ["price", "of", "tickets"], ["cheap", "fares"]] * 8
    intents = ["flight", "flight", "fare", "fare"] * 8
    slots = [["O", "O", "B-city"], ["O", "O", "B-city"], ["O", "O", "O"], ["O", "O"]] * 8
    splits = {k: (words, intents, slots) for k in ("train", "validation", "test")}
    return _from_names("toy", splits)


def _toy_model(task: TaskData) -> PNLPMixerForIntentAndSlots:
    torch.manual_seed(0)
    return PNLPMixerForIntentAndSlots(PNLPMixerConfig(num_hashes=4, bloom_size=16, max_seq_len=8, hidden_size=16,
                                                      num_mixer_layers=1, token_mixing_dim=16, channel_mixing_dim=16,
                                                      classifier_hidden=16, num_labels=task.num_intents,
                                                      num_slot_labels=task.num_slots))


def test_joint_model_outputs_and_loss():
    task = _toy_task()
    model = _toy_model(task)
    batch = Collator(_features, 8)(list(zip(task.train.words[:4], task.train.intents[:4], task.train.slots[:4])))
    out = model(**batch)
    assert out.intent_logits.shape == (4, task.num_intents) and out.slot_logits.shape == (4, 8, task.num_slots)
    assert batch["slot_labels"][0].tolist() == [0, 0, 1, -100, -100, -100, -100, -100]
    assert out.loss is not None and out.loss.ndim == 0
    with pytest.raises(ValueError, match="both labels"):
        model(input_features=batch["input_features"], attention_mask=batch["attention_mask"], labels=batch["labels"])
    with pytest.raises(ValueError, match="num_slot_labels"):
        PNLPMixerForIntentAndSlots(PNLPMixerConfig(num_labels=3))


def test_slot_loss_weight_zero_trains_intents_only():
    task = _toy_task()
    model = _toy_model(task)
    batch = Collator(_features, 8)(list(zip(task.train.words[:4], task.train.intents[:4], task.train.slots[:4])))
    joint = model(**batch)
    intent_ce = torch.nn.functional.cross_entropy(joint.intent_logits, batch["labels"])
    model.config.slot_loss_weight = 0.0
    alone = model(**batch)
    torch.testing.assert_close(alone.loss, intent_ce)
    assert joint.loss > alone.loss                                   # the joint loss adds the slot cross-entropy
    alone.loss.backward()
    assert all(p.grad is None or not p.grad.any() for p in model.slot_classifier.parameters())
    for bad in (-1.0, float("inf"), "1", True):
        config = PNLPMixerConfig(num_labels=2, num_slot_labels=3, slot_loss_weight=bad)
        with pytest.raises(ValueError, match="slot_loss_weight"):
            PNLPMixerForIntentAndSlots(config)


def test_intent_selection_and_its_quoted_numbers():
    with pytest.raises(ValueError, match="select_on"):
        FitSettings(select_on="slots")
    task = _toy_task()
    model = _toy_model(task)
    model.config.slot_loss_weight = 0.0
    _, summary = fit(model, _features, task, FitSettings(batch_size=8, learning_rate=1e-2, max_epochs=4, patience=4,
                                                         warmup_epochs=0, select_on="intent"))
    best = max(summary["curve"], key=lambda c: c["val_intent_acc"])       # the first epoch with the best accuracy
    assert summary["best_epoch"] == best["epoch"] and summary["val_intent_acc"] == best["val_intent_acc"]
    t3i = pd.DataFrame({"precision": ["float32", "int8"], "parameters": 1_000, "size_bytes": [4000, 1100],
                        "intent_acc": [97.5, 97.3], "best_epoch": 12, "epochs": 17, "val_intent_acc": 98.4,
                        "agreement_with_float_%": [100.0, 99.7]})
    assert tables.intent_quoted(t3i, 98.1) == {
        "t3i_int8": "97.3", "t3i_float": "97.5", "t3i_gap": "-0.8", "t3i_epoch": "12", "t3i_epochs": "17",
        "t3i_val": "98.4", "t3i_agree": "99.7", "t3i_verdict": "within one point of the paper's",
        "t3i_seeds": "one seed"}
    assert tables.intent_quoted(t3i.assign(intent_acc=95.0), 98.1)["t3i_verdict"].startswith("not within")
    seeds = pd.concat([t3i.assign(seed=0, errors=20, errors_unseen=5, errors_combined=3),
                       t3i.assign(seed=1, intent_acc=[96.5, 96.1], best_epoch=8, errors=31, errors_unseen=5,
                                  errors_combined=4)])
    q = tables.intent_quoted(seeds, 98.1)
    assert q["t3i_int8"] == "96.7" and q["t3i_float"] == "97.0" and q["t3i_gap"] == "-1.4"
    assert q["t3i_seeds"] == "the mean of 2 seeds (standard deviation 0.8; per seed 97.3, 96.1)"
    assert q["t3i_epoch"] == "12, 8" and q["t3i_errors"] == "25.5" and q["t3i_errors_combined"] == "3.5"
    view = tables.test_view(seeds).set_index("model")
    assert view.loc["pNLP-Mixer (ours, int8, mean of 2 seeds)", "intent acc. (EN)"] == pytest.approx(96.7)


def test_tie_break_on_validation_loss():
    with pytest.raises(ValueError, match="tie_break"):
        FitSettings(tie_break="last")
    first, by_loss = FitSettings(select_on="intent"), FitSettings(select_on="intent", tie_break="loss")
    scores = {"intent_acc": 97.0, "exact_match": 50.0}
    assert first.selection_key(scores, 0.3) == first.selection_key(scores, 0.1) == (97.0,)
    assert by_loss.selection_key(scores, 0.1) > by_loss.selection_key(scores, 0.3)
    assert by_loss.selection_key({**scores, "intent_acc": 97.2}, 0.9) > by_loss.selection_key(scores, 0.1)
    assert FitSettings().selection_key(scores) == (73.5,)
    with pytest.raises(ValueError, match="validation loss"):
        by_loss.selection_key(scores)
    task = _toy_task()
    model = _toy_model(task)
    model.config.slot_loss_weight = 0.0
    _, summary = fit(model, _features, task, FitSettings(batch_size=8, learning_rate=1e-2, max_epochs=4, patience=4,
                                                         warmup_epochs=0, select_on="intent", tie_break="loss"))
    best = max(summary["curve"], key=lambda c: (c["val_intent_acc"], -c["val_loss"]))
    assert summary["best_epoch"] == best["epoch"] and summary["val_loss"] == best["val_loss"]
    # the curve keeps the training loss and the validation loss apart (one must not overwrite the other)
    assert all(c["loss"] != c["val_loss"] for c in summary["curve"])


def test_intent_errors_split_by_gold_label():
    from hashlib_core.papers.pnlp_mixer.metrics import intent_errors

    names = ["flight", "airfare", "flight#airfare"]
    gold = [0, 1, 2, -1, 0, 2]
    pred = [0, 0, 0, 0, 0, 2]
    assert intent_errors(pred, gold, names) == {"errors": 3, "errors_unseen": 1, "errors_combined": 1,
                                                "errors_single": 1}
    with pytest.raises(ValueError, match="no items"):
        intent_errors([], [], names)


def test_at_last_epoch_counts_models_still_improving():
    a = pd.DataFrame({"epochs": [6, 6, 4], "best_epoch": [6, 5, 4]})
    b = pd.DataFrame({"epochs": [6], "best_epoch": [2]})
    assert tables.at_last_epoch(a, b) == "2 of 4"


def test_fit_learns_a_separable_task_and_keeps_the_best_epoch():
    task = _toy_task()
    model, summary = fit(_toy_model(task), _features, task,
                         FitSettings(batch_size=8, learning_rate=1e-2, max_epochs=30, patience=3, warmup_epochs=0))
    assert summary["val_intent_acc"] == 100.0 and summary["val_exact_match"] == 100.0
    assert summary["epochs"] - summary["best_epoch"] <= 3 and summary["epochs"] < 30       # stopped early
    assert [p["epoch"] for p in summary["curve"]] == list(range(1, summary["epochs"] + 1))
    intents, slots = predict(model, _features, task.test)
    assert score(intents, slots, task.test, task.slot_names)["intent_acc"] == 100.0


def test_predict_tags_words_beyond_the_window_as_outside():
    task = _toy_task()
    long = Split([["fly"] * 12], [0], [[0] * 12])
    _, slots = predict(_toy_model(task), _features, long)
    assert len(slots[0]) == 12 and slots[0][8:] == [0, 0, 0, 0]


def test_slot_f1_is_span_level():
    gold = [["B-city", "I-city", "O"], ["O", "B-day"]]
    assert slot_f1(gold, gold) == 100.0
    half = [["B-city", "O", "O"], ["O", "B-day"]]                 # one of two spans wrong
    assert slot_f1(half, gold) == pytest.approx(50.0)

# ---------------------------------------------------------------------------------------------- tables, figures


def _results(which: str, task: str = "atis") -> pd.DataFrame:
    """One chosen run per row (seed 0) on ``task``, scores rising with the row's place."""
    names = list(tables.PROJECTION_LABELS if which == "projection" else tables.ENCODER_LABELS)
    return pd.DataFrame({"task": task, which: names, "val_intent_acc": [90.0 + i for i in range(len(names))],
                         "val_exact_match": [50.0 + i for i in range(len(names))], "val_slot_f1": 80.0,
                         "epochs": 6, "best_epoch": 4, "max_epochs": 6, "capped": False, "chosen": True,
                         "headline": True, "seed": 0, "learning_rate": 1e-3, "parameters": 1_000_000})


def test_comparison_and_ordering_on_fixed_inputs():
    t1 = pd.concat([_results("projection", "mtop-en"), _results("projection")])
    # a second seed of MinHash on ATIS (its mean counts), and an unchosen sweep point (ignored)
    extra = t1.iloc[[-1, -1]].assign(seed=[1, 0], val_intent_acc=[95.0, 50.0], chosen=[True, False],
                                     best_epoch=[6, 2], capped=[True, False])
    view = tables.comparison_view(pd.concat([t1, extra]), "projection")
    minhash = view[view["model"] == "MinHash (Ours)"].iloc[0]
    assert minhash["ATIS (paper)"] == 98.57 and minhash["MTOP EN (paper)"] == 82.51
    assert minhash["ATIS (ours)"] == 94.0 and minhash["MTOP EN (ours)"] == 53.0
    assert minhash["ATIS runs"] == "2 seed(s), lr 0.001, best epoch 4, 6 of 6 (at cap)"
    assert minhash["MTOP EN runs"] == "1 seed(s), lr 0.001, best epoch 4 of 6"
    order = tables.ordering(t1, "projection", "atis")
    # ours: binary < tsp < simhash < minhash; the paper: binary 97.97 < tsp 98.17 < simhash 98.38 < minhash 98.57
    assert order["tau"] == pytest.approx(1.0) and order["same_best"] and order["our_best"] == "MinHash (Ours)"
    t2 = _results("encoder").assign(val_intent_acc=[94.0, 93.0, 92.0, 91.0, 90.0])
    order2 = tables.ordering(t2, "encoder", "atis")
    assert order2["our_best"] == "Projection-only" and order2["paper_best"] == "MLP-Mixer" and not order2["same_best"]
    assert tables.comparison_view(t2, "encoder")["params (paper)"].tolist() == ["0.2M", "1.0M", "1.2M", "1.0M",
                                                                                    "1.0M"]
    assert tables.ordering(_results("encoder", "mtop-en"), "encoder", "mtop-en")["paper_best"] == "MLP-Mixer"


def test_a_row_trained_on_one_task_only_says_so_on_the_other():
    # MTOP EN with the headline rows (MinHash, SimHash), ATIS with every projection
    mtop = _results("projection", "mtop-en")
    t1 = pd.concat([mtop[mtop["projection"].isin(["simhash", "minhash"])], _results("projection")])
    view = tables.comparison_view(t1, "projection").set_index("model")
    assert list(view.index) == ["Binary", "TSP", "SimHash", "MinHash (Ours)"]     # the paper's order
    assert view.loc["Binary", "MTOP EN runs"] == "not trained at this profile"
    paper = tables.paper_number(tables.paper_rows("projection")[1].loc["Binary", "MTOP_EN_Exact_Match_Acc"])
    assert math.isnan(view.loc["Binary", "MTOP EN (ours)"]) and view.loc["Binary", "MTOP EN (paper)"] == paper
    assert view.loc["SimHash", "MTOP EN (ours)"] == 52.0 and view.loc["Binary", "ATIS (ours)"] == 90.0


def test_schedule_sentences_follow_the_profile():
    shared = PROFILES.get("cpu", comparison_mtop_max_epochs=0, comparison_mtop_train_examples=0,
                          comparison_mtop_eval_examples=0, comparison_mtop_batch_size=0,
                          comparison_mtop_lr_schedule="linear")
    assert tables.schedule_note(shared).startswith("Tables 1 and 2's MTOP EN models share this schedule here; the "
                                                   "small profile gives them a constant rate")
    assert tables.schedule_evidence(shared, "EM: 1.0 at epoch 5", "ignored") == (
        "Table 1's English MTOP Mixer, trained the same way, shows the second: EM: 1.0 at epoch 5.")
    own = PROFILES.get("cpu", comparison_mtop_lr_schedule="constant", comparison_mtop_batch_size=32)
    assert tables.schedule_note(own) == ("Tables 1 and 2's MTOP EN models, the slowest to learn, therefore "
                                         + tables.comparison_mtop_schedule(own) + ".")
    assert tables.schedule_evidence(own, "EM: 1.0 at epoch 5", "at the same rate, A; B") == (
        "Table 1's English MTOP Mixer trains on its own schedule: at the same rate, A; B. Its curve, on its constant "
        "rate: EM: 1.0 at epoch 5.")
    assert tables.schedule_evidence(own, "", "x") == "No curve of Table 1's English MTOP Mixer is in the results shown."


def test_the_mtop_rows_sentence_names_the_rows_trained():
    cpu = PROFILES.get("cpu", comparison_mtop_rows="headline", headline_projections=("simhash",),
                       headline_encoders=("transformer",))
    assert tables.mtop_rows_sentence(cpu) == (
        "On MTOP EN the cpu profile trains the headline rows alone (SimHash, MinHash (Ours) in Table 1, Transformer, "
        "MLP-Mixer in Table 2), what its budget allows at the converging schedule; the other rows' MTOP EN cells say "
        "so, and the small profile trains every row.")
    assert tables.mtop_rows_sentence(PROFILES.get("cpu", comparison_mtop_rows="all")) == (
        "Every row is trained on every task compared.")


def test_snips_rows_have_no_paper_numbers_but_an_ordering():
    atis = _results("projection")
    both = pd.concat([atis, atis.assign(task="snips", val_intent_acc=[99.0, 98.0, 97.0, 96.0])])
    view = tables.comparison_view(both, "projection").set_index("model")
    assert view.loc["MinHash (Ours)", "ATIS (paper)"] == 98.57
    assert "SNIPS (paper)" not in view.columns and view.loc["Binary", "SNIPS (ours)"] == 99.0
    assert tables.snips_sentence(both, "projection") == (
        "On SNIPS (validation; the paper prints no SNIPS numbers) the best is Binary, and Kendall's tau against the "
        "paper's multiATIS ranking is -1.00.")
    assert tables.snips_sentence(atis, "projection").startswith("This profile does not compare on SNIPS")


def test_test_mtop_massive_and_quantization_views():
    t3 = pd.DataFrame({"task": "atis", "precision": ["float32", "int8"] * 2, "seed": [0, 0, 1, 1],
                       "test_sentences": 893, "train_sentences": 4478, "size_bytes": [4_000_000, 1_100_000] * 2,
                       "parameters": 1_046_670, "best_epoch": 5, "max_epochs": 40,
                       "intent_acc": [97.0, 96.9, 97.4, 97.3], "agreement_with_float_%": [100.0, 99.5] * 2})
    view = tables.test_view(t3)
    assert view["model"].tolist()[:2] == ["pNLP-Mixer (ours, float32, mean of 2 seeds)",
                                          "pNLP-Mixer (ours, int8, mean of 2 seeds)"]
    assert view["intent acc. (EN)"].tolist()[:2] == [pytest.approx(97.2), pytest.approx(97.1)]
    assert view.set_index("model").loc["pNLP-Mixer (paper, 8bit)", "intent acc. (EN)"] == 98.1
    # sizes as the reader reads them: whole bytes with separators, and a paper row says it prints none
    assert view["size (bytes)"].tolist()[:2] == ["4,000,000", "1,100,000"]
    assert view.set_index("model").loc["pNLP-Mixer (paper, 8bit)", "size (bytes)"] == "not printed"
    t4 = pd.DataFrame({"task": "mtop-de", "precision": ["float32", "int8"], "test_sentences": 3549,
                       "train_sentences": 13424, "size_bytes": [4_000_000, 1_100_000], "parameters": 1_046_670,
                       "best_epoch": 40, "max_epochs": 40, "intent_acc": [97.0, 96.9], "exact_match": [80.0, 79.0],
                       "slot_f1": [90.0, 90.0], "agreement_with_float_%": [100.0, 98.2]})
    mtop = tables.mtop_view(t4)
    assert mtop["language"].tolist() == ["DE"] and mtop["exact match (paper, 8-bit)"].tolist() == [76.9]
    assert mtop["best epoch"].tolist() == ["40 of 40 (at cap)"] and "all-O floor" not in mtop
    assert tables.mtop_view(t4, {"mtop-de": 12.5})["all-O floor"].tolist() == [12.5]
    massive = t3.assign(task="massive-th", best_epoch=12).iloc[:2]
    m = tables.massive_view(massive, t3)
    assert m["dataset"].tolist() == ["ATIS (multiATIS EN test)", "MASSIVE 1.1"]
    assert m["language"].tolist() == ["EN", "TH"] and m["best epoch"].tolist() == ["", "12 of 40"]
    q = tables.quantization_view(t3, t4)
    assert q["ratio"].tolist() == [0.275, 0.275] and q["intent acc. change"].iloc[0] == pytest.approx(-0.1)
    assert pd.isna(q["exact match change"].iloc[0]) and q["exact match change"].iloc[1] == pytest.approx(-1.0)
    facts = tables.quantization_facts(q)
    assert facts["q_met"] == "1 of 2" and facts["q_worst"] == "98.2" and facts["q_worst_task"] == "MTOP DE"
    assert facts["q_ratio"] == "0.275" and facts["q_goal"] == "99" and facts["q_em_change"] == "1.0"


def test_latency_view_and_ratios():
    stat = lambda ms: {"median_ms": ms, "mean_ms": ms, "min_ms": ms, "max_ms": ms, "n": 100}  # noqa: E731
    bench = {"data": {"cpu": "Some CPU", "paper": {"projection_ms": 0.4, "total_ms": 2.4, "projection_share": 1 / 6},
                      "latency": {"projection_cached": stat(0.2), "projection_uncached": stat(0.8),
                                  "model_mixer_float32": stat(3.8), "total_mixer_float32": stat(4.0),
                                  "model_transformer_float32": stat(9.5), "model_mixer_float32_lean": stat(1.9),
                                  "total_mixer_float32_lean": stat(2.0), "total_mixer_int8_weight_only": stat(4.1)},
                      "ratios": {"fraction_of_core_matmul_model_mixer_float32": 0.5,
                                 "fraction_of_core_matmul_model_mixer_float32_lean": 0.7},
                      "flops_per_sentence": {"mixer": 150, "transformer": 100},
                      "matmul": {"core_gflops_per_s": 80.0}}}
    r = tables.latency_ratios(bench)
    assert r["projection_share"] == pytest.approx(0.05) and r["cache_speedup"] == pytest.approx(4.0)
    assert r["mixer_vs_transformer"] == pytest.approx(2.5) and r["mixer_vs_transformer_lean"] == pytest.approx(5.0)
    assert r["matmul_fraction_lean"] == 0.7 and r["projection_share_lean"] == pytest.approx(0.1)
    assert r["mixer_over_transformer_flops"] == pytest.approx(1.5)
    # with the unfused Transformer timed too, the faster of its two paths counts
    faster = dict(bench["data"]["latency"], model_transformer_float32_unfused=stat(7.6))
    r2 = tables.latency_ratios({"data": {**bench["data"], "latency": faster}})
    assert r2["mixer_vs_transformer"] == pytest.approx(2.0) and r2["mixer_vs_transformer_lean"] == pytest.approx(4.0)
    slower = dict(bench["data"]["latency"], model_transformer_float32_unfused=stat(12.0))
    assert tables.latency_ratios({"data": {**bench["data"], "latency": slower}})["mixer_vs_transformer"] == \
        pytest.approx(2.5)
    stages = tables.latency_view({"data": {**bench["data"], "latency": faster}})["stage"].tolist()
    assert "model: Transformer, float32, unfused path" in stages
    assert tables.transformer_sentence(2.5) == ("the Mixer is 2.5 times as fast as the Transformer, which meets the "
                                                "goal of at least twice as fast")
    assert tables.transformer_sentence(0.6).startswith("the Mixer takes 1.7 times as long as the Transformer, so")
    assert tables.transformer_sentence(0.6, 2.0) == (
        "the Mixer takes 1.7 times as long as the Transformer and its lean inference path is 2.0 times as fast, "
        "which meets the goal of at least twice as fast")
    assert tables.transformer_sentence(0.6, 0.8).endswith("takes 1.2 times as long, so the goal (a Mixer at least "
                                                          "twice as fast) is not met")
    assert tables.transformer_sentence(0.6, 0.96).endswith("lean inference path takes 1.04 times as long, so the goal "
                                                           "(a Mixer at least twice as fast) is not met")
    assert tables.share_sentence(0.046) == "within our goal of at most 5% with the fingerprint cache"
    assert tables.share_sentence(0.066).startswith("above our goal")
    assert tables.matmul_sentence(0.61) == "which meets our goal of 60%"
    assert tables.matmul_sentence(0.42).startswith("short of our goal of 60%: at batch one")
    assert tables.matmul_sentence(0.42, why=False) == "short of our goal of 60%"
    view = tables.latency_view(bench).set_index("stage")
    assert view.loc["projection (cached)", "paper (ms)"] == 0.4
    # the paper's 2.4 ms is "for the non-quantized pNLP-Mixer model" (§6): beside our float32 total, nowhere else
    assert view["paper (ms)"].dropna().to_dict() == {"projection (cached)": 0.4, "total: MLP-Mixer, float32": 2.4}
    assert view.loc["model: Transformer, float32", "median (ms)"] == 9.5
    assert view.loc["total: MLP-Mixer, float32, lean path", "median (ms)"] == 2.0


def test_snips_schedule_sentence_on_fixed_inputs():
    atis = pd.DataFrame({"task": "atis", "train_sentences": [4478, 4478], "epochs": [6, 5]})
    cpu = PROFILES.get("cpu", snips_max_epochs=2)
    assert tables.snips_schedule(atis, cpu) == "The cpu profile does not compare on SNIPS; the paper profile does."
    both = pd.concat([atis, pd.DataFrame({"task": "snips", "train_sentences": [13084], "epochs": [2]})])
    # ATIS: ceil(4478 / 128) = 35 steps an epoch, 6 epochs; SNIPS: 103 steps an epoch, 2 epochs
    assert tables.snips_schedule(both, cpu) == (
        "To fit the cpu profile's budget its models train for at most 2 epochs, 206 optimiser steps (ATIS's: 210), so "
        "early stopping has little room and SNIPS's scores are those of short runs.")
    same = PROFILES.get("small")
    assert tables.snips_schedule(both, same) == (
        f"Its models follow ATIS's schedule (at most {same.max_epochs} epochs, patience {same.patience}): 206 "
        f"optimiser steps at most, ATIS's 210.")


def test_figures_on_fixed_inputs():
    t2 = _results("encoder")
    sizes = pd.DataFrame({"encoder": list(tables.ENCODER_LABELS), "parameters": [2e5, 1e6, 1.2e6, 1e6, 1.03e6]})
    fig = figures.accuracy_vs_size(pd.concat([t2, _results("encoder", "mtop-en")]), sizes)
    assert len(fig.axes[0].collections) == 2 * 5 + 2          # ATIS only (intents): ours and the paper's, two keys
    curves = pd.DataFrame({"task": "atis", "projection": ["minhash"] * 3, "epoch": [1, 2, 3],
                           "val_intent_acc": [80.0, 90.0, 95.0], "val_exact_match": [40.0, 60.0, 70.0]})
    fig = figures.validation_curves(curves, "projection")
    assert [len(ax.lines) for ax in fig.axes] == [1]
    both = pd.concat([t2, t2.assign(task="snips", val_intent_acc=t2["val_intent_acc"] + 1)])
    fig = figures.accuracy_vs_size(both, sizes)
    assert len(fig.axes[0].collections) == 3 * 5 + 3
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()][:2] == ["ours (ATIS validation)",
                                                                                "ours (SNIPS validation)"]
    two = pd.concat([curves.assign(task="mtop-en"), curves, curves.assign(projection="binary")])
    fig = figures.validation_curves(two, "projection")
    assert [len(ax.lines) for ax in fig.axes] == [1, 2]
    assert [ax.get_title() for ax in fig.axes] == ["MTOP EN validation: slot exact match (%)",
                                                   "ATIS validation: intent accuracy (%)"]
    assert list(fig.axes[0].lines[0].get_ydata()) == [40.0, 60.0, 70.0]
    with pytest.raises(ValueError, match="no comparison task"):
        figures.validation_curves(curves.assign(task="mtop-de"), "projection")


def test_encoded_split_gives_the_per_batch_features_and_predictions():
    from hashlib_core.papers.pnlp_mixer.fit import encode_split

    task = _toy_task()
    encoded = encode_split(_features, task.validation, 8, chunk=5)
    assert encoded.features.dtype == torch.int8 and len(encoded) == len(task.validation)
    direct = Collator(_features, 8)(list(zip(task.validation.words, task.validation.intents, task.validation.slots)))
    assert torch.equal(encoded.features.float(), direct["input_features"])
    assert torch.equal(encoded.slots, direct["slot_labels"]) and torch.equal(encoded.intents, direct["labels"])
    model = _toy_model(task)
    assert predict(model, _features, task.validation, batch_size=7, encoded=encoded) == \
        predict(model, _features, task.validation, batch_size=7)
    # the oracle: project each batch and run the model on it directly
    model.eval()
    intents, slots = [], []
    with torch.no_grad():
        for start in range(0, len(task.validation), 7):
            words = task.validation.words[start : start + 7]
            out = model(**_features(words))
            intents += out.intent_logits.argmax(-1).tolist()
            slots += [(t + [0] * len(w))[: len(w)] for w, t in zip(words, out.slot_logits.argmax(-1).tolist())]
    assert predict(model, _features, task.validation, batch_size=7) == (intents, slots)


def test_predict_on_an_empty_split_and_on_a_mismatched_encoding():
    from hashlib_core.papers.pnlp_mixer.fit import encode_split

    task = _toy_task()
    model = _toy_model(task)
    assert predict(model, _features, Split([], [], [])) == ([], [])
    with pytest.raises(ValueError, match="empty split"):
        encode_split(_features, Split([], [], []), 8)
    with pytest.raises(ValueError, match="encoded holds"):
        predict(model, _features, task.validation, encoded=encode_split(_features, task.test.head(5), 8))


def test_validation_loss_comes_from_the_prediction_pass():
    """``fit`` with ``tie_break="loss"`` reads the validation loss off the forward pass that predicts: the same
    loss as a separate :func:`mean_loss` pass, the same predictions as :func:`predict`."""
    from hashlib_core.papers.pnlp_mixer.fit import _predict, encode_split, mean_loss

    task = _toy_task()
    encoded = encode_split(_features, task.validation, 8)
    model = _toy_model(task)
    intents, slots, loss = _predict(model, _features, task.validation, 7, encoded, want_loss=True)
    assert (intents, slots) == predict(model, _features, task.validation, batch_size=7)
    with torch.no_grad():
        by_hand = [(float(model(**encoded.batch(slice(i, i + 7))).loss), len(encoded.batch(slice(i, i + 7))["labels"]))
                   for i in range(0, len(encoded), 7)]
    assert loss == mean_loss(model, encoded, batch_size=7) == sum(l * n for l, n in by_hand) / len(encoded) > 0
    assert _predict(model, _features, task.validation, 7, encoded)[2] is None
    with pytest.raises(ValueError, match="encoded="):
        _predict(model, _features, task.validation, want_loss=True)


def test_outside_only_share_is_the_all_o_taggers_exact_match():
    from hashlib_core.papers.pnlp_mixer.data import outside_only_share

    task = _toy_task()        # half of the sentences have a city, the other half are all O
    assert outside_only_share(task) == 50.0
    intents, _ = predict(_toy_model(task), _features, task.test)
    all_o = [[0] * len(w) for w in task.test.words]
    assert score(intents, all_o, task.test, task.slot_names)["exact_match"] == outside_only_share(task)


def test_each_task_has_its_schedule_objective_and_selection():
    from hashlib_core.papers.pnlp_mixer.runs import Resources, objective

    cpu = PROFILES.get("cpu")

    def res(profile):
        r = Resources.__new__(Resources)
        r.profile = profile
        return r

    atis = res(cpu).settings("atis")
    assert (atis.max_epochs, atis.patience, atis.select_on, atis.tie_break) == (cpu.max_epochs, 5, "intent", "loss")
    mtop = res(cpu).settings("mtop-de")
    assert (mtop.max_epochs, mtop.patience, mtop.select_on) == (cpu.mtop_max_epochs, cpu.mtop_patience, "exact_match")
    assert res(cpu).settings("massive-th").select_on == "intent"
    assert [objective(t) for t in ("atis", "snips", "mtop-en", "massive-en")] == ["intent", "intent", "joint", "intent"]
    capped = PROFILES.get("cpu", train_examples=0, mtop_train_examples=2000)
    assert res(capped).schedule("mtop-en")[2] == 2000 and res(capped).schedule("atis")[2] == 0
    both = PROFILES.get("cpu", train_examples=3000, mtop_train_examples=2000)
    assert res(both).schedule("massive-de")[2] == 2000 and res(both).schedule("atis")[2] == 3000
    assert res(PROFILES.get("cpu", snips_max_epochs=3)).settings("snips").max_epochs == 3
    assert res(PROFILES.get("cpu", snips_max_epochs=0)).settings("snips").max_epochs == cpu.max_epochs
    with pytest.raises(ValueError, match="snips_max_epochs must be >= 0"):
        PROFILES.get("cpu", snips_max_epochs=-1)
    # Tables 1-2's MTOP EN models (comparison=True) have their own sample, batch and schedule; Table 4's, MASSIVE's
    # and every ATIS model keep the shared ones
    own = PROFILES.get("cpu", train_examples=3000, batch_size=128, max_epochs=15, mtop_max_epochs=15,
                       comparison_mtop_max_epochs=25, comparison_mtop_train_examples=2000,
                       comparison_mtop_eval_examples=0, eval_examples=0,
                       comparison_mtop_batch_size=32, comparison_mtop_lr_schedule="constant")
    t12 = res(own).settings("mtop-en", comparison=True)
    assert (t12.batch_size, t12.schedule, t12.max_epochs) == (32, "constant", 25)
    assert res(own).schedule("mtop-en", comparison=True) == (25, own.mtop_patience, 2000)
    assert res(own).eval_examples("mtop-en", comparison=True) == 0   # the profile's own: every sentence
    sampled = PROFILES.get("cpu", eval_examples=0, comparison_mtop_eval_examples=1000)
    assert [res(sampled).eval_examples(t, c) for t, c in (("mtop-en", True), ("mtop-en", False), ("atis", True))] == [
        1000, 0, 0]
    assert res(PROFILES.get("cpu", eval_examples=400, comparison_mtop_eval_examples=1000)).eval_examples(
        "mtop-en", True) == 400
    for task, comparison in (("mtop-en", False), ("mtop-de", False), ("massive-th", False), ("atis", True)):
        other = res(own).settings(task, comparison=comparison)
        assert (other.batch_size, other.schedule, other.max_epochs) == (128, "linear", 15)
        assert res(own).schedule(task, comparison)[2] == 3000
    shared = PROFILES.get("cpu", batch_size=64, comparison_mtop_batch_size=0, comparison_mtop_train_examples=0)
    assert res(shared).settings("mtop-en", comparison=True).batch_size == 64
    assert res(shared).schedule("mtop-en", comparison=True)[2] == shared.train_examples
    for bad, match in ((dict(comparison_mtop_batch_size=-1), "comparison_mtop_batch_size must be >= 0"),
                       (dict(comparison_mtop_max_epochs=-1), "comparison_mtop_max_epochs must be >= 0"),
                       (dict(comparison_mtop_train_examples=-5), "comparison_mtop_train_examples must be >= 0"),
                       (dict(comparison_mtop_eval_examples=-5), "comparison_mtop_eval_examples must be >= 0"),
                       (dict(comparison_mtop_lr_schedule="cosine"), "comparison_mtop_lr_schedule must be one of")):
        with pytest.raises(ValueError, match=match):
            PROFILES.get("cpu", **bad)
    with pytest.raises(ValueError, match="comparison_tasks"):
        PROFILES.get("cpu", comparison_tasks="mtop-de")
    with pytest.raises(ValueError, match="headline_encoders"):
        PROFILES.get("cpu", headline_encoders="rnn")
    # headline rows: the MinHash Mixer always; a headline projection with the Mixer; a headline encoder on MinHash
    smoke = PROFILES.get("smoke")
    assert smoke.headline("minhash", "mixer") and not smoke.headline("binary", "mixer")
    assert cpu.headline("simhash", "mixer") and cpu.headline("minhash", "transformer")
    assert not cpu.headline("simhash", "transformer") and not cpu.headline("minhash", "cnn")


def test_tuning_points_one_setting_at_a_time_and_bad_entries():
    """``tuning`` varies one of §4's tuned settings at a time around the profile's own values (the first
    point)."""
    base = PROFILES.get("cpu", tuning="")
    assert base.tuning_points() == ((base.learning_rate, base.weight_decay, base.dropout),)
    tuned = PROFILES.get("cpu", tuning="learning_rate=0.004, dropout=0.3,weight_decay=0")
    lr, wd, dropout = base.learning_rate, base.weight_decay, base.dropout
    assert tuned.tuning_points() == ((lr, wd, dropout), (4e-3, wd, dropout), (lr, wd, 0.3), (lr, 0.0, dropout))
    for bad, match in (("lr=0.1", "setting=value"), ("dropout", "setting=value"), ("dropout=x", "needs a number"),
                       ("dropout=1.0", "out of range"), ("learning_rate=0", "out of range"),
                       ("weight_decay=-1", "out of range"), (f"learning_rate={base.learning_rate}", "repeats"),
                       ("dropout=0.2,dropout=0.2", "repeats")):
        with pytest.raises(ValueError, match=match):
            PROFILES.get("cpu", tuning=bad)
    for name in ("smoke", "cpu", "small", "paper"):      # every profile tunes, around its own values
        points = PROFILES.get(name).tuning_points()
        assert len(points) >= 2 and len(set(points)) == len(points)


def test_tuning_selects_on_validation_and_reuses_the_chosen_seed_zero_model(monkeypatch):
    """:func:`tune` trains every point with the profile's seed and marks the best validation accuracy, ties to the
    lower validation loss; the test rows then train at the chosen point, the first seed reusing its model."""
    from hashlib_core.papers.pnlp_mixer import experiments
    from hashlib_core.papers.pnlp_mixer.runs import Resources

    profile = PROFILES.get("smoke", tuning="learning_rate=0.002,dropout=0.2,weight_decay=0.1", seeds=2)
    scores = {(1e-3, 0.01, 0.1): (96.0, 0.20), (2e-3, 0.01, 0.1): (97.0, 0.30), (1e-3, 0.01, 0.2): (97.0, 0.25),
              (1e-3, 0.1, 0.1): (95.0, 0.10)}
    calls = []

    test_split = Split([["a"], ["b"], ["c"], ["d"]], [0, 1, 1, 0], [[0], [0], [0], [0]])
    # each point's model predicts the first k test intents right (k = its index + 1), so its test accuracy is known
    right = {point: i + 1 for i, point in enumerate(profile.tuning_points())}

    class FakeResources:
        def __init__(self):
            self.profile = profile

        def task(self, name):
            return TaskData(name, test_split, test_split, test_split, ["x", "y"], ["O"])

        def projector(self):
            return None

        def trained(self, task, projection="minhash", encoder="mixer", seed_offset=0, point=None, comparison=False):
            calls.append((task, projection, encoder, seed_offset, point))
            acc, loss = scores[point]
            return point, {"epochs": 9, "best_epoch": 4, "val_intent_acc": acc, "val_loss": loss,
                           "val_exact_match": 0.0, "wall_time_s": 1.0}

        def schedule(self, task, comparison=False):
            return 40, 5, 0

        settings = Resources.settings
        chosen_point = Resources.chosen_point

    def fake_predict(model, projector, split):
        k = right[model]
        return [g if i < k else 1 - g for i, g in enumerate(split.intents)], [[0]] * len(split)

    monkeypatch.setattr(experiments, "predict", fake_predict)
    res = FakeResources()
    table = experiments.tune(res)
    assert table["chosen"].tolist() == [False, False, True, False]       # 97.0 twice: the lower loss wins
    assert table["test_intent_acc"].tolist() == [25.0, 50.0, 75.0, 100.0]
    assert {c[4] for c in calls} == set(profile.tuning_points()) and {c[3] for c in calls} == {0}
    assert {c[:3] for c in calls} == {("atis", "minhash", "mixer")}
    facts = tables.tuning_facts(table)
    assert facts == {"tune_n": "4 points", "tune_chosen": "dropout 0.2", "tune_range": "95.0 to 97.0",
                     "tune_base": "learning rate 0.001, weight decay 0.01, dropout 0.1",
                     "tune_test_range": "25.0 to 100.0", "tune_test_chosen": "75.0",
                     "tune_test_verdict": "one other point scores higher on test than the chosen one (best: 100.0, "
                                          "validation 95.0)"}
    assert tables.tuning_facts(table.assign(test_intent_acc=[1.0, 2.0, 3.0, 0.0]))["tune_test_verdict"] == \
        "the chosen point also scores best on test"
    assert tables.tuning_facts(table.assign(chosen=[True, False, False, False]))["tune_chosen"] == \
        "the profile's own values"
    view = tables.tuning_view(table)
    assert view["chosen"].tolist() == ["", "", "✓", ""] and view.columns[-1] == "test acc. (after the choice)"
    assert view["best epoch"].tolist() == ["4 of 9"] * 4
    assert list(view.columns[:3]) == ["learning rate", "weight decay", "dropout"]


def test_epoch_trend_reads_the_minhash_mixers_first_run():
    epochs = list(range(1, 13))
    curves = pd.concat([
        pd.DataFrame({"task": "mtop-en", "projection": "minhash", "encoder": "mixer", "epoch": epochs,
                      "val_exact_match": [float(3 * e) for e in epochs]}),
        # another projection on the same task, and a second seed's run of the same model: both ignored
        pd.DataFrame({"task": "mtop-en", "projection": "simhash", "encoder": "mixer", "epoch": epochs,
                      "val_exact_match": 0.0}),
        pd.DataFrame({"task": "mtop-en", "projection": "minhash", "encoder": "mixer", "epoch": epochs,
                      "val_exact_match": 99.0}),
    ])
    trend = tables.epoch_trend(curves, "mtop-en", "val_exact_match", "EM")
    assert trend == "EM: 15.0 at epoch 5, 30.0 at epoch 10, 36.0 at epoch 12 (+15.0 over the last 5 epochs)"
    assert tables.epoch_trend(curves, "atis", "val_exact_match", "EM").startswith("no EM curve")
    short = curves[curves["epoch"] <= 3]
    assert tables.epoch_trend(short, "mtop-en", "val_exact_match", "EM") == "EM: 9.0 at epoch 3"


def test_comparison_mtop_schedule_says_what_tables_1_2_train_with():
    plain = PROFILES.get("cpu", comparison_mtop_max_epochs=0, comparison_mtop_train_examples=0,
                         comparison_mtop_eval_examples=0, comparison_mtop_batch_size=0,
                         comparison_mtop_lr_schedule="linear")
    assert tables.comparison_mtop_schedule(plain) == "train as Table 4's models do"
    own = PROFILES.get("cpu", train_examples=3000, mtop_train_examples=0, mtop_patience=5, eval_examples=0,
                       comparison_mtop_max_epochs=25, comparison_mtop_train_examples=2000,
                       comparison_mtop_eval_examples=1000, comparison_mtop_batch_size=32,
                       comparison_mtop_lr_schedule="constant")
    assert tables.comparison_mtop_schedule(own) == (
        "train at batch 32 on a random sample of 2,000 training sentences, with a constant learning rate after the "
        "warm-up, so that early stopping alone ends them (at most 25 epochs, patience 5), and are chosen on a sample "
        "of 1,000 validation sentences")
    linear = PROFILES.get("cpu", train_examples=0, mtop_train_examples=0, batch_size=128, mtop_max_epochs=40,
                          eval_examples=0, comparison_mtop_eval_examples=0,
                          comparison_mtop_max_epochs=0, comparison_mtop_train_examples=0,
                          comparison_mtop_batch_size=64, comparison_mtop_lr_schedule="linear")
    assert tables.comparison_mtop_schedule(linear) == (
        "train at batch 64 on every training sentence, with the learning rate decaying linearly to zero at the cap "
        "(at most 40 epochs, patience 5), and are chosen on the whole validation split")


def test_schedule_contrast_pairs_table_4s_english_model_with_table_1s():
    t4 = pd.DataFrame([
        {"task": "mtop-en", "precision": "float32", "seed": 0, "learning_rate": 0.002, "train_sentences": 3000,
         "epochs": 15, "best_epoch": 14, "max_epochs": 15, "val_exact_match": 38.25},
        {"task": "mtop-en", "precision": "int8", "seed": 0, "learning_rate": 0.002, "train_sentences": 3000,
         "epochs": 15, "best_epoch": 14, "max_epochs": 15, "val_exact_match": 1.0},
        {"task": "mtop-de", "precision": "float32", "seed": 0, "learning_rate": 0.002, "train_sentences": 3000,
         "epochs": 8, "best_epoch": 3, "max_epochs": 15, "val_exact_match": 2.0}])
    row = {"task": "mtop-en", "projection": "minhash", "encoder": "mixer", "train_sentences": 2000, "max_epochs": 20,
           "validation_sentences": 1000}
    t1 = pd.DataFrame([
        {**row, "seed": 0, "learning_rate": 0.002, "epochs": 16, "best_epoch": 11, "val_exact_match": 41.5},
        # another point, another seed, another projection: not the pair
        {**row, "seed": 0, "learning_rate": 0.004, "epochs": 9, "best_epoch": 4, "val_exact_match": 50.0},
        {**row, "seed": 1, "learning_rate": 0.002, "epochs": 9, "best_epoch": 4, "val_exact_match": 60.0},
        {**row, "projection": "simhash", "seed": 0, "learning_rate": 0.002, "epochs": 9, "best_epoch": 4,
         "val_exact_match": 70.0}])
    profile = PROFILES.get("cpu", batch_size=128, comparison_mtop_batch_size=32, comparison_mtop_lr_schedule="constant")
    assert tables.schedule_contrast(t4, t1, profile) == (
        "at the same learning rate (0.002) and seed, Table 4's English model trains on 3,000 sentences at batch 128 "
        "with the rate decaying to zero, 360 optimiser steps, best at epoch 14 of at most 15: 38.2 on the whole eval "
        "split; Table 1's on 2,000 sentences at batch 32 with a constant rate, 1,008 optimiser steps, best at epoch 11 "
        "of at most 20: 41.5 on a sample of 1,000 of its sentences")
    assert tables.schedule_contrast(t4[t4["task"] != "mtop-en"], t1, profile) == ""
    assert tables.schedule_contrast(t4, t1[t1["seed"] == 1], profile) == ""


def test_a_capped_split_is_a_seeded_sample_not_a_prefix():
    # a split grouped by label, as MASSIVE's training files are: 60 intents of 10 sentences each, in label order
    grouped = Split([[f"w{i}"] for i in range(600)], [i // 10 for i in range(600)], [[0]] * 600)
    assert len(set(grouped.head(300).intents)) == 30
    sample = grouped.sample(300, seed=0)
    assert len(sample) == 300 and len(set(sample.intents)) == 60
    # file order kept, each sentence with its own labels, no sentence twice
    rows = [int(w[0][1:]) for w in sample.words]
    assert rows == sorted(set(rows)) and sample.intents == [r // 10 for r in rows]
    # the same seed draws the same sentences (every model of a task sees them); another seed others
    assert grouped.sample(300, seed=0).words == sample.words
    assert grouped.sample(300, seed=1).words != sample.words
    assert grouped.sample(0, seed=0) is grouped and grouped.sample(600, seed=3) is grouped
    with pytest.raises(ValueError, match="n >= 0"):
        grouped.sample(-1, seed=0)
