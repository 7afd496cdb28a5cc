"""Superbloom's model (Hugging Face round trip, tied output, m-hash loss, sampled softmax), item masking and the
chapter's tables on fixed inputs."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from hashlib_core.hashing.bloom import BloomHashMaps  # noqa: E402
from hashlib_core.papers.superbloom import figures, tables  # noqa: E402
from hashlib_core.papers.superbloom.data import (  # noqa: E402
    IdSets,
    ItemMaskingCollator,
    ItemSets,
    encode_segments,
    split_pages,
    held_out_segments,
)
from hashlib_core.papers.superbloom.modeling import SuperbloomConfig, SuperbloomForMaskedLM  # noqa: E402
from hashlib_core.papers.superbloom.params import paper_params  # noqa: E402
from hashlib_core.papers.superbloom.profiles import PROFILES  # noqa: E402
from hashlib_core.papers.superbloom.training import model_config  # noqa: E402

SHAPE = dict(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64)


def _model(**extra) -> SuperbloomForMaskedLM:
    torch.manual_seed(0)
    return SuperbloomForMaskedLM(SuperbloomConfig(num_ids=300, alpha=10, num_hashes=2, **SHAPE, **extra))


def test_vocabulary_output_tying_and_counts():
    model = _model()
    assert model.config.vocab_size == 2 * (4 + 30)
    assert model.embedding_parameter_count() == model.config.vocab_size * 32
    assert model.get_output_embeddings() is None            # the output layer reads the input matrix (tied)
    h = torch.randn(3, 32)
    manual = model.transform(h) @ model.superbloom.word_embeddings.weight.T + model.output_bias
    assert torch.allclose(model.scores(h), manual)


def test_round_trip_keeps_weights_and_maps(tmp_path):
    model = _model().eval()
    model.save_pretrained(tmp_path)
    loaded = SuperbloomForMaskedLM.from_pretrained(tmp_path).eval()
    ids = encode_segments([np.array([1, 2, 3])], model.maps, masked=[1])["input_ids"]
    assert torch.equal(model(input_ids=ids).logits, loaded(input_ids=ids).logits)
    assert torch.equal(loaded.hash_table, model.maps.table) and loaded.maps.num_ids == 300


def test_loss_sums_the_hashes_and_runs_at_masked_positions():
    model = _model().eval()
    batch = ItemMaskingCollator(model.maps, seed=0)([np.arange(10), np.arange(20, 26)])
    out = model(**batch)
    full = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    keep = batch["labels"] != -100
    expected = torch.nn.functional.cross_entropy(full[keep], batch["labels"][keep]) * 2
    assert out.logits is None and torch.allclose(out.loss, expected, atol=1e-5)


def test_sampled_softmax_changes_the_training_loss_only():
    model = _model(num_sampled=5)
    batch = ItemMaskingCollator(model.maps, seed=0)([np.arange(10)])
    model.train()
    sampled = model(**batch).loss
    model.eval()
    full = model(**batch).loss
    assert torch.isfinite(sampled) and sampled < full          # fewer competitors, smaller cross-entropy


def test_sampled_loss_scores_only_its_columns_and_equals_the_full_logits_path():
    """The fast path (only the sampled columns of the output layer) equals the reference: the full logits, then the
    same columns, under the same draw."""
    model = _model(num_sampled=7)
    hidden = torch.randn(6, model.config.hidden_size)
    targets = torch.randint(model.maps.offset(0), model.config.vocab_size, (6,))
    torch.manual_seed(3)
    fast = model._sampled_loss(hidden, targets)
    torch.manual_seed(3)
    sample = torch.randint(model.maps.offset(0), model.config.vocab_size, (7,))
    columns, inverse = torch.unique(torch.cat([targets, sample]), return_inverse=True)
    reference = torch.nn.functional.cross_entropy(model.scores(hidden)[:, columns], inverse[:6])
    assert torch.allclose(fast, reference, atol=1e-6)


def test_item_masking_statistics():
    maps = BloomHashMaps(1000, 10, 2)
    collate = ItemMaskingCollator(maps, seed=1)
    segments = [np.random.default_rng(i).choice(1000, 32, replace=False) for i in range(400)]
    batch = collate(segments)
    labels = batch["labels"].reshape(400, 32, 2)
    inputs = batch["input_ids"].reshape(400, 32, 2)
    chosen = (labels != -100).all(-1)
    assert ((labels != -100).any(-1) == chosen).all()           # an item's m labels are set together
    assert chosen.float().mean().item() == pytest.approx(0.15, abs=0.01)
    mask = torch.tensor(maps.special_ids("[MASK]"))
    masked = (inputs == mask).all(-1) & chosen
    kept = (inputs == labels).all(-1) & chosen
    assert masked.sum() / chosen.sum() == pytest.approx(0.8, abs=0.03)
    assert kept.sum() / chosen.sum() == pytest.approx(0.1, abs=0.03)


def test_segments_and_splits():
    sets = IdSets("toy", [str(i) for i in range(50)], [np.arange(i, i + 40) % 50 for i in range(20)])
    train, validation, test = split_pages(sets, 0.1, seed=0)
    assert len(test) == 2 and validation == [] and sorted(train + test) == list(range(20))
    train2, validation2, test2 = split_pages(sets, 0.1, seed=0, validation_share=0.25)
    assert test2 == test and len(validation2) == 5 and sorted(train2 + validation2) == train
    with pytest.raises(ValueError, match="too few"):
        split_pages(IdSets("tiny", ["a", "b"], [np.arange(2)] * 2), 0.4, 0, validation_share=0.5)
    segs = ItemSets(sets, train, 16, seed=0)
    assert all(2 <= len(s) <= 16 for s in segs.segments)
    t = held_out_segments(sets, test, 16, seed=0)
    assert all(t.segments[i][t.positions[i]] == t.targets[i] for i in range(2))
    with pytest.raises(ValueError, match="test_share"):
        split_pages(sets, 1.0, 0)
    with pytest.raises(ValueError, match="empty"):
        encode_segments([np.array([], dtype=np.int64)], BloomHashMaps(50, 5, 2))
    with pytest.raises(ValueError, match="at least one set"):
        encode_segments([], BloomHashMaps(50, 5, 2))


def test_top_k_masks_one_item_and_is_certified():
    model = _model().eval()
    enc = encode_segments([np.array([5, 6, 7])], model.maps, masked=[2])
    out = model.top_k(enc["input_ids"], enc["attention_mask"], torch.tensor([4]), 5)
    exact = model.top_k(enc["input_ids"], enc["attention_mask"], torch.tensor([4]), 5, exhaustive=True)
    assert out.certified.all() and torch.equal(out.scores, exact.scores)


def test_paper_params_follow_the_prose():
    from hashlib_core.papers.superbloom.claims import SIZE_TOLERANCE
    from hashlib_core.papers.superbloom.params import READINGS

    params = paper_params()
    p = params.drop_duplicates("model").set_index("model")
    assert p.loc["superbloom", "hash_tokens"] == 2 * -(-5_281_889 // 50)          # 2N / alpha
    assert p.loc["baseline", "#samples"] == 5_281_889 and p.loc["sampled-softmax", "#samples"] == 128_000
    assert p.loc["superbloom-d256l12", "total_params"] > p.loc["superbloom-d256l1", "total_params"]
    # Table 1 under both readings: one width for all (Superbloom far smaller), and the similar sizes §3.3 implies
    t1 = params[params["table"] == "Table 1"].set_index(["reading", "model"])
    same, similar = READINGS
    size, width = t1["total_params"], t1["d"]
    assert size[(same, "baseline")] > 10 * size[(same, "superbloom")]
    assert size[(same, "baseline")] == size[(same, "sampled-softmax")]
    assert abs(size[(similar, "superbloom")] / size[(similar, "baseline")] - 1) < SIZE_TOLERANCE
    assert size[(similar, "sampled-softmax")] > 5 * size[(similar, "superbloom")]           # "much larger"
    assert width[(similar, "sampled-softmax")] == width[(similar, "superbloom")] > width[(similar, "baseline")]
    assert (t1["#samples"].xs("superbloom", level="model") == 2 * -(-5_281_889 // 50)).all()
    quoted = tables.params_quoted(params)
    assert quoted["p_base_d"] == "256" and quoted["p_matched_d"] == f"{width[(similar, 'superbloom')]:,}"
    assert float(quoted["p_same_ratio"]) > 10 and quoted["p_matched_diff"].endswith("%")
    assert tables.params_view(params)["reading"].tolist()[:6] == [same] * 3 + [similar] * 3


def test_tables_and_figures_on_fixed_inputs():
    segs = pd.DataFrame({"name": ["a"] * 10 + ["b"] * 10, "target": list(range(10)) * 2,
                         "hit@1": [True, False] * 5 + [True] * 10, "hit@10": [True] * 20,
                         "certified": [True] * 20, "scored": [100] * 20, "label_frequency": list(range(10)) * 2})
    recall = tables.recall_table(segs, [1, 10]).set_index("name")
    assert recall.loc["a", "rec@1"] == 50.0 and recall.loc["b", "rec@1"] == 100.0 and recall.loc["a", "segments"] == 10
    deciles = tables.decile_table(segs)
    assert sorted(deciles["decile"].unique()) == list(range(1, 11))
    for _, g in deciles.groupby("name"):
        assert g["decile"].tolist() == list(range(1, 11))            # in order: the figure draws lines through them
    models = pd.DataFrame({"name": ["baseline-L1", "baseline-L4", "superbloom-L1", "superbloom-L4"],
                           "layers": [1, 4, 1, 4], "vocab_size": [100, 100, 20, 20], "total_params": [9, 10, 3, 4],
                           "num_ids": [96] * 4})
    rec = pd.DataFrame({"name": models["name"], "rec@1": [40.0, 42.0, 10.0, 30.0], "segments": [5] * 4,
                        "layers": [1, 4, 1, 4], "hidden": [2, 3, 8, 8], "total_params": [9, 10, 9, 10],
                        "sd rec@1": [1.0, np.nan, 2.0, 0.5], "seeds": [3, 1, 3, 3], "learning_rate": 1e-3,
                        "converged": [True, False, True, True], "certified": 100.0, "mean_scored": 7.0,
                        "matched_to": ["superbloom-L1", "superbloom-L4", "", ""],
                        "size_vs_matched": [0.01, -0.02, np.nan, np.nan]})
    wide = rec.iloc[[3]].assign(name="superbloom-wide-L1", layers=1, hidden=20, matched_to="superbloom-L4",
                                **{"rec@1": 20.0})
    rec = pd.concat([rec, wide],
                    ignore_index=True)
    depth = tables.depth_effect(rec).set_index("model")
    assert depth.loc["superbloom", "ours: gain"] == 20.0 and depth.loc["superbloom", "ours: layers"] == "1 -> 4"
    assert depth.loc["superbloom", "paper: gain"] == pytest.approx(43.4 - 17.8)
    view = tables.depth_view(rec).set_index("layers")               # the wide model is not a depth row
    assert view.loc[1, "Superbloom rec@1"] == "10.0 ± 2.0" and view.loc[4, "baseline rec@1"] == "42.0"
    assert view.loc[4, "Superbloom - baseline"] == -12.0 and len(view) == 2
    shown = tables.recall_view(rec).set_index("model")
    assert shown.loc["baseline-L1", "size vs its match"] == "+1.0% vs superbloom-L1"
    assert shown.loc["baseline-L4", "best before the cap"] == "no (at the cap)"
    assert shown.loc["superbloom-L1", "size vs its match"] == ""
    q = tables._depth_quoted(rec, models)
    assert q["base_widths"] == "2, 3" and q["depth_gap_max"] == "2.0%"
    assert q["wide_verdict"] == "the deep model is ahead"
    assert q["depth_verdict"].startswith("depth helps Superbloom more") and q["at_cap"] == "1"
    sweep = pd.DataFrame({"name": ["a", "a"], "learning_rate": [1e-3, 3e-3], "best_validation": [-5.0, -4.5],
                          "best_step": [200, 400], "steps": [800, 400], "converged": [True, False],
                          "chosen": [False, True]})
    assert tables.sweep_view(sweep).to_dict("records") == [
        {"model": "a", "learning rate": "0.001", "validation loss (nats)": 5.0, "best step": "200 of 800",
         "chosen": ""},
        {"model": "a", "learning rate": "0.003", "validation loss (nats)": 4.5, "best step": "400 of 400 (cap)",
         "chosen": "yes"}]
    assert len(figures.recall_by_decile(deciles).axes[0].lines) == 2
    depth_fig = figures.recall_by_depth(rec)
    assert len(depth_fig.axes[0].containers) == 3                  # two families and the one-layer wide model
    lm = pd.DataFrame({"name": ["baseline-d8"] * 4 + ["superbloom-matched-d8"] * 3, "step": [1, 2, 3, 3, 1, 2, 3],
                       "loss": [9.0, 8.0, 7.5, 7.0, 12.0, 11.0, 10.0],
                       "learning_rate": [1e-3] * 3 + [3e-3] + [1e-3] * 3,
                       "seed": 0, "kind": "validation loss"})
    lm_models = pd.DataFrame({"name": ["baseline-d8", "superbloom-matched-d8"], "learning_rate": [1e-3, 1e-3],
                              "seed": [0, 0]})
    prior = pd.DataFrame({"name": ["test-target frequency (oracle)", "training-token frequency"],
                          "entropy_nats": [5.0, 7.0]})
    assert tables.training_entropy(prior) == 7.0
    fig = figures.language_curves(lm, lm_models, tables.training_entropy(prior))
    assert len(fig.axes[0].lines) == 2 and fig.axes[0].lines[1].get_ydata()[0] == 7.0   # baselines only, the line
    assert list(fig.axes[0].lines[0].get_ydata()) == [9.0, 8.0, 7.5]           # the chosen rate's run only
    beam = pd.DataFrame({"beam": [1, 10], "rec@1": [1.0, 2.0], "rec@10": [3.0, 4.0], "mean_scored": [10, 100]})
    assert len(figures.beam_width(beam).axes) == 2
    other = pd.DataFrame({"dataset": "Last.fm", "name": ["baseline-L4", "superbloom-a50m2-L4"],
                          "rec@1": [7.0, 9.5], "rec@10": [20.0, 15.0], "segments": [300, 300]})
    other_models = pd.DataFrame({"dataset": "Last.fm", "name": other["name"], "num_ids": 17632,
                                 "train_pages": 1700, "test_pages": 190, "alpha": [1, 50], "num_hashes": [1, 2],
                                 "best_validation": [-9.0, -11.0]})
    models = models.assign(alpha=[1, 1, 50, 50], num_hashes=[1, 1, 2, 2], best_validation=-4.0)
    popularity = pd.DataFrame([{"name": "popularity (no model)", "rec@1": 1.0, "segments": 5}])
    view = tables.datasets_view(rec[rec["name"] != "superbloom-L4"], models, other, other_models, "FB15k-237",
                                popularity)
    below = view.pop("below uniform (nats)").tolist()
    assert view.to_dict("records") == [
        {"dataset": "FB15k-237", "ids": 96, "name": "baseline-L4", "rec@1": 42.0, "test segments": 5},
        {"dataset": "FB15k-237", "ids": 96, "name": "popularity (no model)", "rec@1": 1.0, "test segments": 5},
        {"dataset": "Last.fm", "ids": 17632, "name": "baseline-L4", "rec@1": 7.0, "test segments": 300},
        {"dataset": "Last.fm", "ids": 17632, "name": "superbloom-a50m2-L4", "rec@1": 9.5, "test segments": 300}]
    # what each model learned: its validation loss below a uniform guess over its softmax (none for the ranking)
    assert below[0] == pytest.approx(np.log(96) - 4.0) and np.isnan(below[1])
    assert below[3] == pytest.approx(2 * np.log(-(-17632 // 50)) - 11.0)
    assert tables.datasets_quoted(other, other_models) == {
        "other_count": "1", "other_top": "rec@10", "other_ahead_rec1": "1 of 1 (Last.fm)", "other_ahead_top": "0 of 1",
        "other_above_prior": "0 of 1"}
    with_prior = pd.concat([other, pd.DataFrame([{"dataset": "Last.fm", "name": "popularity (no model)",
                                                  "rec@1": 1.0, "rec@10": 18.0, "segments": 300}])])
    assert tables.datasets_quoted(with_prior, other_models)["other_above_prior"] == "1 of 1 (Last.fm)"


def test_profiles():
    cpu = PROFILES.get("cpu", depths=(1, 2, 4, 8), further_depths=())
    names = [m.name for m in cpu.models()]
    assert names[:8] == ["superbloom-L1", "baseline-L1", "superbloom-L2", "baseline-L2", "superbloom-L4",
                         "baseline-L4", "superbloom-L8", "baseline-L8"]
    assert names[8:] == ["superbloom-wide-L1", f"baseline-d{cpu.baseline_hidden}-L8", "superbloom-matched-L8",
                         "sampled-softmax-L8"]
    assert {m.name: m.match for m in cpu.models() if m.match} == {
        "baseline-L1": "superbloom-L1", "baseline-L2": "superbloom-L2", "baseline-L4": "superbloom-L4",
        "baseline-L8": "superbloom-L8", "superbloom-wide-L1": "superbloom-L8",
        "superbloom-matched-L8": f"baseline-d{cpu.baseline_hidden}-L8"}
    assert set(cpu.seeded()) == set(names) - {"superbloom-L2", "baseline-L2", "superbloom-L4", "baseline-L4"}
    assert [m.name for m in cpu.deep_models()] == ["superbloom-L8", "baseline-L8"]
    assert cpu.dataset == "fb15k237" and {"gowalla", "diginetica", "wikispeedia"} <= set(cpu.other_datasets)
    assert PROFILES.get("small").dataset == "gowalla"                 # small (one GPU) keeps the 41K-id set as main
    lm = cpu.language_models()
    assert [(m.name, m.hidden, m.match) for m in lm] == [
        (f"baseline-d{d}", d, "") if i % 2 == 0 else (f"superbloom-matched-d{d}", 0, f"baseline-d{d}")
        for d in cpu.lm_baseline_dims for i in range(2)]
    assert all(m.use_positions and m.layers == cpu.lm_layers for m in lm)
    with pytest.raises(ValueError, match="dataset"):
        PROFILES.get("smoke", dataset="wikipedia")
    with pytest.raises(ValueError, match="repeats the main dataset"):
        PROFILES.get("smoke", other_datasets=("gowalla",))
    with pytest.raises(ValueError, match="other_datasets must be among"):
        PROFILES.get("smoke", other_datasets=("movielens",))
    with pytest.raises(ValueError, match="depths must list increasing"):
        PROFILES.get("smoke", depths=(2, 1))
    with pytest.raises(ValueError, match="validation_share"):
        PROFILES.get("smoke", validation_share=0.0)
    with pytest.raises(ValueError, match="baseline_hidden"):
        PROFILES.get("smoke", baseline_hidden=0)
    assert "sampled" not in PROFILES.get("smoke", baseline_hidden=0, sampled=False).roles()


@pytest.mark.parametrize("name", ["cpu", "small"])
def test_size_matched_widths_come_within_five_percent(name):
    """The profiles' matches at the main data's 40,981 ids (Gowalla) and at Wikispeedia's 4,598: every matched pair
    within 5%, the counts those of the instantiated models."""
    from hashlib_core.papers.superbloom.training import resolve, size_of

    profile = PROFILES.get(name)
    for ids in (40_981, 4_598):
        specs = {s.name: s for s in resolve(profile.models(), profile, ids)}
        for spec in specs.values():
            if spec.match:
                ratio = size_of(spec, profile, ids) / size_of(specs[spec.match], profile, ids)
                assert abs(ratio - 1) <= 0.05, (name, ids, spec.name, ratio)
        roles = profile.roles()
        sampled, matched = specs[roles["sampled"]], specs[roles["superbloom_matched"]]
        assert sampled.hidden == matched.hidden and sampled.layers == matched.layers          # the same Transformer
        assert sampled.num_sampled == profile.num_hashes * -(-ids // profile.alpha)           # Superbloom's tokens
        much = 3 if name == "cpu" and ids > 10_000 else 1            # "much larger" where the id table dominates
        assert size_of(sampled, profile, ids) > much * size_of(matched, profile, ids)
    smoke = PROFILES.get("smoke")
    specs = resolve(smoke.models(), smoke, 300)
    for spec in specs:
        model = SuperbloomForMaskedLM(model_config(spec, smoke, 300))
        assert size_of(spec, smoke, 300) == sum(p.numel() for p in model.parameters()), spec.name


def test_heads_divide_any_matched_width():
    from hashlib_core.papers.superbloom.training import heads_for

    assert [heads_for(w, 4) for w in (1, 2, 3, 6, 9, 64)] == [1, 2, 3, 3, 3, 4]


def test_language_vocabulary_and_greedy_tokenisation():
    from hashlib_core.papers.superbloom.language import build_vocabulary, masked_windows, tokenize, windows

    lines = ["the cat sat on the mat", "the cat ate the rat", "a dog sat on the log"] * 20
    vocab = build_vocabulary(lines, wordpiece_size=60, unigrams=5, bigrams=3)
    assert len(vocab) == vocab.pieces + vocab.unigrams + vocab.bigrams and vocab.tokens[0] == "[UNK]"
    assert "the cat" in vocab.index                                   # the most frequent pair is a token
    pieces = vocab.tokens[1:vocab.pieces]
    assert pieces == sorted(pieces)                                    # a canonical order, not the trainer's
    for _ in range(3):                                                 # the trainer's own order varies by run
        assert build_vocabulary(lines, wordpiece_size=60, unigrams=5, bigrams=3).tokens == vocab.tokens
    ids = tokenize(vocab, "the cat sat on the mat")
    assert ids[0] == vocab.index["the cat"]                           # a bigram wins over its words
    assert [vocab.tokens[i] for i in tokenize(vocab, "zebra")]        # out of vocabulary: WordPiece pieces
    stream = np.arange(100)
    assert [len(w) for w in windows(stream, 32)] == [32, 32, 32]
    test = masked_windows(stream, 32, seed=0)
    assert all(w[p] == t for w, p, t in zip(test.segments, test.positions, test.targets))
    with pytest.raises(ValueError, match="no text"):
        build_vocabulary([], 10, 1, 1)
    with pytest.raises(ValueError, match=">= 2"):
        windows(stream, 1)


def test_item_log_probs_are_what_top_k_decodes():
    model = _model().eval()
    enc = encode_segments([np.array([5, 6, 7]), np.array([8, 9])], model.maps, masked=[0, 1])
    where = torch.tensor([0, 2])
    lp = model.item_log_probs(enc["input_ids"], enc["attention_mask"], where)
    assert lp.shape == (2, 2, model.maps.tokens_per_map)
    torch.testing.assert_close(lp.exp().sum(-1), torch.ones(2, 2))                # one distribution per map
    out = model.top_k(enc["input_ids"], enc["attention_mask"], where, 3, exhaustive=True)
    from hashlib_core.decoding.beam import exhaustive_topk

    assert torch.equal(exhaustive_topk(lp, model.maps, 3).scores, out.scores)


def _tiny_resources(num_ids: int = 300):
    from types import SimpleNamespace

    rng = np.random.default_rng(0)
    sets = IdSets("Last.fm", [str(100 + i) for i in range(num_ids)],
                  [rng.choice(num_ids, size=min(6, num_ids), replace=False) for _ in range(20)])
    return SimpleNamespace(sets=sets, test=held_out_segments(sets, list(range(20)), 32, seed=1))


def test_example_predictions_rank_the_target_with_the_certified_search():
    from hashlib_core.papers.superbloom.training import example_predictions, test_log_probs

    model, res = _model().eval(), _tiny_resources()
    assert test_log_probs(model, res, 100).shape == (20, 2, model.maps.tokens_per_map)   # capped at the segments
    rows = example_predictions(model, res, 4, shown=5, rank_within=300)
    assert [r["example"] for r in rows] == [1, 2, 3, 4]
    for i, row in enumerate(rows):
        segment, where = res.test.segments[i], res.test.positions[i]
        assert row["target"] == int(segment[where]) and len(row["context"]) == len(segment) - 1
        assert row["target"] not in row["context"] and len(row["predicted"]) == 5 and row["certified"]
        assert 1 <= row["target_rank"] <= 300                                  # every id is within 300 of 300


def test_display_names_fall_back_to_ids_without_the_names_file(monkeypatch):
    from hashlib_core import data
    from hashlib_core.papers.superbloom.data import display_names

    res = _tiny_resources(5)

    def unavailable():
        raise data.DatasetUnavailableError("offline", dataset="lastfm_artists", file="artists.dat", paths=[], url="u")

    monkeypatch.setattr(data, "load_lastfm_artists", unavailable)
    names, labels = display_names(res.sets)
    assert names == ["artist 100", "artist 101", "artist 102", "artist 103", "artist 104"]
    assert labels.startswith("artist ids (names not available")
    monkeypatch.setattr(data, "load_lastfm_artists",
                        lambda: {"artist_id": [101, 103], "name": ["Moby", "Björk"]})
    assert display_names(res.sets)[0] == ["artist 100", "Moby", "artist 102", "Björk", "artist 104"]
    fb = IdSets("FB15k-237", ["/m/01", "/m/02"], [])
    assert display_names(fb) == (["/m/01", "/m/02"], "original ids (no names in the data)")


def test_example_and_decoding_tables_on_fixed_inputs():
    names = [f"n{i}" for i in range(10)]
    example = {"example": 1, "context": [1, 2, 3, 4, 5, 6, 7, 8], "target": 9, "predicted": [0, 9, 1, 2, 3],
               "target_rank": 2, "certified": True}
    row = tables.example_row("Last.fm", "superbloom-a50m2-L4", example, names, "names")
    assert row["context"] == "n1; n2; n3; n4; n5; n6; ... (+2 more)" and row["target"] == "n9"
    assert row["predicted"] == "n0; n9; n1; n2; n3" and list(row) == tables.EXAMPLE_COLUMNS
    missed = tables.example_row("Last.fm", "baseline-L4", {**example, "target_rank": 0}, names, "names")
    examples = pd.DataFrame([missed, row])
    view = tables.examples_view(examples)
    assert view["rank of the masked item"].tolist() == ["> 100", "2"]
    assert tables.examples_quoted(examples) == {"ex_count": "1", "ex_dataset": "Last.fm", "ex_labels": "names",
                                                "ex_found_base": "0", "ex_top5_base": "0", "ex_found_sb": "1",
                                                "ex_top5_sb": "1"}
    decoding = pd.DataFrame({"k": [1, 10], "num_ids": 1_000_000, "data_ids": 14541, "tokens_per_map": 20000,
                             "steps": 600, "test_segments": 1454, "positions": 64, "rec@1": 9.25, "rec@10": 20.0,
                             "recall_certified_%": 100.0, "exhaustive_ms_per_position": [5.0, 5.0],
                             "beam_ms_per_position": [0.2, 0.5], "speedup_median_paired": [25.0, 10.0],
                             "speedup_min_paired": [20.0, 8.0], "speedup_max_paired": [30.0, 12.0],
                             "certified_share": [1.0, 0.5], "certified_exact_share": [1.0, 1.0],
                             "mean_candidates_scored": [1000.0, 5000.0]})
    assert tables.decoding_view(decoding)["certified (%)"].tolist() == [100.0, 50.0]
    quoted = tables.decoding_quoted(decoding)
    assert quoted["dec_goal_verdict"] == "the goal is met for 1 of 2 values of k"
    assert (quoted["dec_rec1"], quoted["dec_rec10"], quoted["dec_speedup_min"], quoted["dec_certified"],
            quoted["dec_scored_max"], quoted["dec_ids"]) == ("9.2", "20.0", "10.0", "50%", "0.50%", "1,000,000")


def test_decoding_and_example_knobs_are_checked():
    for knob in ("examples", "decode_ids", "decode_steps"):
        with pytest.raises(ValueError, match=knob):
            PROFILES.get("smoke", **{knob: -1})
    with pytest.raises(ValueError, match="decode_positions"):
        PROFILES.get("smoke", decode_positions=0)
    assert PROFILES.get("cpu").decode_ids == 1_000_000 and PROFILES.get("smoke").decode_ids > 0


def test_table3_parts_partition_the_recall_models_of_every_profile():
    from hashlib_core.papers.superbloom import experiments as ex

    for name in ex.PROFILES.names:
        profile = ex.PROFILES.get(name)
        parts = [ex._part_names(profile, part) for part in ex._RECALL_PARTS]
        flat = [n for names in parts for n in names]
        assert sorted(flat) == sorted(ex._recall_names(profile)) and len(flat) == len(set(flat)), name
    cpu = ex.PROFILES.get("cpu")
    assert ex._part_names(cpu, "recall_L4") == ["superbloom-L4", "baseline-L4"]
    assert ex._part_names(cpu, "recall_wide") == ["superbloom-wide-L1"]
    assert ex._part_names(cpu, "recall_L8") == ["superbloom-L8", "baseline-L8"]    # its further depth
    assert ex._part_names(ex.PROFILES.get("cpu", further_depths=()), "recall_L8") == []
    registered = set(ex.CHAPTER.experiments)
    assert {"recall_L1", "recall_L2", "recall_L4", "recall_L8", "recall_L12", "recall_wide"} <= registered


def test_the_coarseness_diagnosis_table_words_and_figure():
    from hashlib_core.papers.superbloom import figures, tables
    from hashlib_core.papers.superbloom.training import POPULARITY

    models = pd.DataFrame({"name": ["superbloom-a50-L4", "superbloom-a10-L4", "baseline-L4"], "alpha": [50, 10, 1],
                           "num_hashes": [2, 2, 1], "num_ids": 1000, "tokens_per_map": [20, 100, 1000],
                           "total_params": [1000, 2000, 1010], "learning_rate": [1e-3, 1e-3, 3e-3],
                           "best_step": [100, 200, 200], "steps": [200, 200, 200], "max_steps": 200,
                           "converged": [True, False, False], "below_uniform": [0.01, 0.05, 0.2]})
    alpha = pd.DataFrame({"dataset": "Gowalla", "name": [*models["name"], POPULARITY],
                          "rec@1": [0.0, 1.0, 2.0, 0.5], "rec@100": [2.0, 5.0, 20.0, 7.0]})
    view = tables.alpha_view(alpha, models)
    assert list(view["best step"][:3]) == ["100 of 200", "200 of 200 (cap)", "200 of 200 (cap)"]
    assert view["loss below uniform (%)"].iloc[1] == pytest.approx(5.0) and view["alpha"].iloc[3] == ""
    assert list(view["alpha"][:3]) == ["50", "10", "1"] and view["tokens per map"].iloc[2] == "1,000"
    q = tables.alpha_quoted(alpha, models)
    assert q["a_removed"] == "α = 50: 1.0%; α = 10: 5.0%" and q["a_base_removed"] == "20.0%"
    assert q["a_sb_rec"] == "α = 50: 2.0%; α = 10: 5.0%" and q["a_pop_rec"] == "7.0%" and q["a_top"] == "rec@100"
    assert q["a_trend"].startswith("each smaller alpha removes more") and q["a_first_removed"] == "1.0%"
    flat = models.assign(below_uniform=[0.05, 0.01, 0.2])
    assert tables.alpha_quoted(alpha, flat)["a_trend"].startswith("the share removed does not grow")
    curves = pd.DataFrame({"name": ["superbloom-a50-L4"] * 2 + ["baseline-L4"], "step": [1, 2, 1],
                           "loss": [9.9, 9.0, 5.0], "uniform_loss": [10.0, 10.0, 10.0], "kind": "validation loss"})
    fig = figures.alpha_curves(curves)
    assert list(fig.axes[0].lines[0].get_ydata()) == pytest.approx([1.0, 10.0])


def test_the_coarseness_diagnosis_profile_checks():
    from hashlib_core.papers.superbloom.profiles import SuperbloomProfile

    p = SuperbloomProfile(name="smoke", dataset="fb15k237", other_datasets=(), alpha_dataset="gowalla", alphas=(50, 10),
                          depths=(1, 4))
    assert [(m.name, m.alpha, m.layers, m.match) for m in p.alpha_models()] == [
        ("superbloom-a50-L4", 50, 4, ""), ("superbloom-a10-L4", 10, 4, ""),
        ("baseline-L4", 1, 4, "superbloom-a50-L4")]
    assert SuperbloomProfile(name="smoke", other_datasets=()).alpha_models() == []
    with pytest.raises(ValueError, match="the profile's alpha"):
        SuperbloomProfile(name="smoke", other_datasets=(), alpha_dataset="gowalla", alphas=(10, 2))
    with pytest.raises(ValueError, match="decreasing"):
        SuperbloomProfile(name="smoke", other_datasets=(), alpha_dataset="gowalla", alphas=(10, 50))
    with pytest.raises(ValueError, match="alpha_dataset must be one of"):
        SuperbloomProfile(name="smoke", other_datasets=(), alpha_dataset="imdb", alphas=(50,))
