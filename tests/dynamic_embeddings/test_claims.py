"""The chapter's claims on fixed inputs (effects, intervals, verdicts, the not-testable paths) and on the committed
results; the size fixes (our UNO-EELBERT shape is an assumption that fits neither printed number; BERT-tiny's two
sizes on the page)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from hashlib_core.chapter import Shown
from hashlib_core.claims import NoSignal, evaluate_claims
from hashlib_core.papers.dynamic_embeddings import claims as de_claims
from hashlib_core.papers.dynamic_embeddings import tables
from hashlib_core.papers.dynamic_embeddings.claims import CLAIMS, glue_gap
from hashlib_core.papers.dynamic_embeddings.experiments import CHAPTER
from hashlib_core.papers.dynamic_embeddings.profiles import DynamicEmbeddingsProfile
from hashlib_core.papers.dynamic_embeddings.sizes import fitting_shapes
from hashlib_core.papers.dynamic_embeddings.tables import glue_table

PROFILE = DynamicEmbeddingsProfile(name="cpu", tasks=("sst2", "cola", "stsb"), ft_seeds=(0, 1, 2))
BY_ID = {c.id: c for c in CLAIMS.claims}


@dataclass
class FakeEvidence:
    tables: dict
    profile: object = PROFILE

    def has(self, name):
        return name in self.tables

    def table(self, name):
        return self.tables[name]

    def json(self, name):
        return self.tables[name]


N_DEV = 200
LABELS = np.arange(N_DEV) % 2
#: correct SST-2 dev items per seed (the first k items right, the others wrong)
CORRECT = {"BERT-tiny": (160, 160, 160), "EELBERT-tiny": (157, 159, 161), "UNO-EELBERT (ours)": (120, 120, 120)}


def _sst_predictions(k: int) -> np.ndarray:
    p = LABELS.copy()
    p[k:] = 1 - p[k:]
    return p


def _runs(correct=None) -> tuple[pd.DataFrame, dict]:
    """Per model three seeds: SST-2 learns (majority 50%); CoLA's predictions are constant, at its floor (MCC 0).
    Returns the runs and the predictions record the claims read."""
    correct = correct or CORRECT
    rows, record = [], {"labels": {"sst2": LABELS.tolist(), "cola": LABELS.tolist()}, "runs": []}
    for name, ks in correct.items():
        for seed, k in enumerate(ks):
            for task, preds, majority in (("sst2", _sst_predictions(k), 50.0), ("cola", np.zeros(N_DEV, int), 0.0)):
                score = 100.0 * k / N_DEV if task == "sst2" else 0.0
                rows.append({"name": name, "model": name, "task": task, "seed": seed, "score": score,
                             "validation_score": score, "majority_score": majority, "chosen": True,
                             "total_params": 1000,
                             "emb_params": 0 if name != "BERT-tiny" else 500, "size_fp32_bytes": 4000.0,
                             "size_int8_bytes": 1000.0})
                record["runs"].append({"name": name, "task": task, "seed": seed, "predictions": preds.tolist()})
    return pd.DataFrame(rows), record


def _glue_evidence(correct=None) -> FakeEvidence:
    runs, record = _runs(correct)
    return FakeEvidence({"glue": glue_table(runs, ["sst2", "cola"]), "glue_runs": runs,
                         "glue_predictions": record})


def _verdict(claim_id: str, evidence: FakeEvidence) -> pd.Series:
    return evaluate_claims("P", [BY_ID[claim_id]], evidence, "s").iloc[0]


PROFILE2 = DynamicEmbeddingsProfile(name="cpu", tasks=("sst2", "cola"), ft_seeds=(0, 1, 2))


# ------------------------------------------------------------------------------------------------------- GLUE
def test_learning_tasks_and_the_glue_gap_by_hand():
    ev = _glue_evidence()
    ev.profile = PROFILE2
    glue = ev.table("glue")
    assert tables.learning_tasks(ev) == (["sst2"], ["cola"])         # decided on the held-out scores
    assert tables.task_floor(glue, "cola") == 0.0 and tables.task_floor(glue, "sst2") == 50.0
    sst = glue_gap("EELBERT-tiny", "sst2")(ev)
    # means over the seeds: 79.5 against 80.0; the statistic on every item and seed is the relative gap
    assert sst.interval.estimate == pytest.approx(100 * (79.5 / 80.0 - 1))
    assert sst.interval.low < sst.interval.estimate < sst.interval.high
    assert "bootstrap" in sst.interval.method and sst.unit == "%" and "pt-once" in sst.flags
    # the average over the tasks that learn is SST-2's here
    avg = glue_gap("EELBERT-tiny")(ev)
    assert avg.interval.estimate == pytest.approx(sst.interval.estimate) and "SST-2" in avg.ours


def test_glue_claims_hold_and_fail_on_fixed_inputs():
    ev = _glue_evidence()
    ev.profile = PROFILE2
    assert _verdict("eelbert-sst2", ev)["verdict"] == "holds"          # -0.6%, the interval above -4%
    assert _verdict("eelbert-glue", ev)["verdict"] == "holds"
    assert _verdict("uno-glue", ev)["verdict"] == "does not hold"      # -25%, interval far below -4%
    assert _verdict("eelbert-glue", ev)["region"] == ">= -4%"


def test_glue_claims_not_testable_with_their_reason():
    ev = _glue_evidence()
    ev.profile = PROFILE2
    cola = _verdict("eelbert-cola", ev)
    assert cola["verdict"] == "no signal" and "floor" in cola["reason"] and "CoLA" in cola["reason"]
    assert "not fine-tuned in the cpu profile" in _verdict("eelbert-mrpc", ev)["reason"]
    no_uno = _glue_evidence({"BERT-tiny": (160,) * 3, "EELBERT-tiny": (159,) * 3})
    no_uno.profile = PROFILE2
    assert "UNO-EELBERT (ours) not trained" in _verdict("uno-glue", no_uno)["reason"]
    flat = _glue_evidence({"BERT-tiny": (102,) * 3, "EELBERT-tiny": (101,) * 3, "UNO-EELBERT (ours)": (100,) * 3})
    flat.profile = PROFILE2
    with pytest.raises(NoSignal, match="every model stays at its floor on the held-out part of every task"):
        glue_gap("EELBERT-tiny")(flat)
    # the reference at its floor: a relative gap to it reads chance
    low_ref = _glue_evidence({"BERT-tiny": (102,) * 3, "EELBERT-tiny": (190,) * 3, "UNO-EELBERT (ours)": (190,) * 3})
    low_ref.profile = PROFILE2
    silent = _verdict("eelbert-glue", low_ref)
    assert silent["verdict"] == "no signal" and silent["reason"].startswith("BERT-tiny, the reference, stays at")
    missing = _verdict("eelbert-glue", FakeEvidence({"glue": 1}))
    assert missing["verdict"] == "not testable here" and "glue_predictions" in missing["reason"]


# ------------------------------------------------------------------------------------------------------ sizes
def _sizes(tiny_mb: float) -> pd.DataFrame:
    return pd.DataFrame({"model": ["BERT-base", "EELBERT-base", "BERT-tiny", "EELBERT-tiny"],
                         "embedding": ["table", "dynamic", "table", "dynamic"], "vocab_size": [30522] * 4,
                         "total_params": [100, 80, 10, 1], "emb_params": [20, 0, 9, 0],
                         "fp32_MB": [1.0, 1.0, tiny_mb, 1.0]})


def test_size_claims():
    ok = FakeEvidence({"sizes": _sizes(17.5), "glue_runs": _runs()[0]})
    assert _verdict("size-consistent", ok)["estimate"] == pytest.approx(17.5 / 15)
    assert _verdict("size-consistent", ok)["verdict"] == "holds"
    assert _verdict("size-consistent", FakeEvidence({"sizes": _sizes(20.0)}))["verdict"] == "does not hold"
    assert _verdict("no-table", ok)["verdict"] == "holds"
    leaky = ok.tables["glue_runs"].assign(emb_params=7)
    assert _verdict("no-table", FakeEvidence({"sizes": _sizes(17.5), "glue_runs": leaky}))["verdict"] == \
        "does not hold"
    napkin = pd.DataFrame({"model": ["GPT2", "Mistral 7B"], "input_embedding_share_%": [31.0, 1.8]})
    saving = _verdict("smaller-saves-more", FakeEvidence({"napkin": napkin}))
    assert saving["estimate"] == pytest.approx(31.0 - 1.8) and saving["verdict"] == "holds"
    reversed_ = napkin.assign(**{"input_embedding_share_%": [1.8, 31.0]})
    assert _verdict("smaller-saves-more", FakeEvidence({"napkin": reversed_}))["verdict"] == "does not hold"
    for cid in ("uno-size", "uno-15x"):
        row = _verdict(cid, ok)
        assert row["verdict"] == "not testable here" and "circular" in row["reason"]


def test_our_uno_shape_is_an_assumption_that_fits_neither_printed_number():
    shapes = fitting_shapes(PROFILE)
    ours = shapes[shapes["ours"]].iloc[0]
    assert (ours["layers"], ours["hidden"], ours["storage"]) == (1, 128, "float32")
    assert not ours["fits_MB"] and not ours["fits_ratio"]       # 1.12 MB does not round to 1.2 MB
    size = tables.printed_claim("UNO-EELBERT size")
    assert tables.rounds_to(ours["MB"], size, " MB") == "rounds to 1.1 MB, not the abstract's 1.2 MB"
    assert tables.rounds_to(1.17, size, " MB") == "rounds to the abstract's 1.2 MB"
    assert tables.rounds_to(1.25, size) == "rounds to 1.3, not the abstract's 1.2"   # the upper end is open
    fit = shapes[shapes["fits_MB"]]
    assert ((fit["MB"] >= 1.15) & (fit["MB"] < 1.25)).all()
    both = shapes[shapes["fits_MB"] & shapes["fits_ratio"]]
    assert len(both) > 0 and ((both["BERT-tiny_over_model"] >= 14.5) & (both["BERT-tiny_over_model"] < 15.5)).all()
    assert set(shapes[~shapes["ours"]]["storage"]) <= {"float32", "float16", "int8"}
    assert (shapes["fits_MB"] | shapes["fits_ratio"] | shapes["ours"]).all()


# ------------------------------------------------------------------------------------------------- properties
def _similarity(auc: float, spearman: float) -> pd.DataFrame:
    return pd.DataFrame({"group": ["Card-660 spelling variants", "corpus word families (5-letter prefix)",
                                   "Card-660, all pairs"], "pairs": [30, 1000, 660], "mean_cosine": [0.5, 0.7, 0.2],
                         "random_mean_cosine": [0.1, 0.1, np.nan], "random_pairs": [2000, 2000, 0],
                         "auc": [auc, 0.99, np.nan], "spearman_with_gold": [np.nan, np.nan, spearman]})


def test_property_claims():
    props = pd.DataFrame({"property": ["deterministic", "bounded d-vector", "bounded d-vector", "bounded d-vector"],
                          "check": ["5 strings: largest difference", "one character (1 character): |v|",
                                    "long (10,000 characters): |v|", "the empty string: a ValueError"],
                          "value": [0.0, 0.9, 0.7, np.nan], "holds": [True, True, True, True]})
    ev = FakeEvidence({"properties": props, "similarity": _similarity(0.9, -0.1)})
    assert _verdict("deterministic", ev)["verdict"] == "holds"
    row = _verdict("any-string", ev)
    assert row["verdict"] == "holds" and "2 of 2 odd strings of 1 to 10,000 characters" in row["ours"]
    broken = FakeEvidence({"properties": props.assign(holds=[True, True, False, True])})
    assert _verdict("any-string", broken)["verdict"] == "does not hold"
    assert _verdict("similar-spelling", ev)["verdict"] == "holds"
    assert _verdict("similar-families", ev)["verdict"] == "holds"
    assert _verdict("similar-human", ev)["verdict"] == "does not hold"            # -0.1 over 660 pairs
    near = FakeEvidence({"similarity": _similarity(0.55, 0.0)})
    assert _verdict("similar-spelling", near)["verdict"] == "inconclusive"        # 30 pairs: a wide interval
    gone = FakeEvidence({"similarity": _similarity(0.9, 0.1).iloc[1:]})
    assert "not measured" in _verdict("similar-spelling", gone)["reason"]


def test_napkin_claims_read_binary_units():
    nap = pd.DataFrame({"model": ["Mistral 7B", "GPT2"], "vocab_size": [32000, 50000], "hidden_size": [4096, 768],
                        "total_params": [6 * 2 ** 30, 2 ** 27], "input_embedding_params": [0.15 * 2 ** 30, 768 * 50000],
                        "embedding_fp16_MiB": [0.3 * 1024, 768 * 50000 * 2 / 2 ** 20],
                        "model_fp16_MiB": [12 * 1024, 245.0], "model_fp16_GiB": [12.0, 245 / 1024]})
    ev = FakeEvidence({"napkin": nap})
    for cid in ("napkin-mistral-emb", "napkin-mistral-model", "napkin-gpt2-emb", "napkin-gpt2-model"):
        assert _verdict(cid, ev)["verdict"] == "holds", cid
    assert _verdict("napkin-mistral-emb", ev)["region"] == "in [0.25, 0.35) GiB"
    assert _verdict("napkin-gpt2-model", FakeEvidence({"napkin": nap.assign(model_fp16_MiB=237.0)}))["verdict"] == \
        "does not hold"
    assert "not in the napkin table" in _verdict("napkin-gpt2-emb", FakeEvidence({"napkin": nap.iloc[:1]}))["reason"]


# -------------------------------------------------------------------------------------------- committed results
def test_claims_on_the_committed_results():
    profile = CHAPTER.profiles.get("cpu")
    shown = Shown(profile, CHAPTER.store("cpu"), "committed", "")
    if not shown.has("glue"):
        pytest.skip("no committed cpu results")
    table = CLAIMS.evaluate(shown)
    assert table["id"].tolist() == [c.id for c in CLAIMS.claims]
    _, at_floor = tables.learning_tasks(shown)
    untested = table[table["verdict"] == "not testable here"]
    assert set(untested["id"]) == {"uno-size", "uno-15x"}, untested[["id", "reason"]]
    silent = table[table["verdict"] == "no signal"]
    assert set(silent["id"]) >= {f"eelbert-{t}" for t in at_floor}
    assert silent[silent["id"].str.startswith("eelbert-")]["reason"].str.contains("floor").all()
    assert table.loc[table["headline"], "id"].tolist() == ["eelbert-glue", "uno-glue", "uno-size", "uno-15x"]
    assert "2 x 128" in table["scale"].iloc[0] and f"{profile.pt_steps:,} MLM steps" in table["scale"].iloc[0]


def test_the_page_gives_bert_tinys_sizes():
    profile = CHAPTER.profiles.get("cpu")
    shown = Shown(profile, CHAPTER.store("cpu"), "committed", "")
    if not shown.has("glue"):
        pytest.skip("no committed cpu results")
    q = tables.quoted(shown)
    sizes = shown.table("sizes").set_index("model").loc["BERT-tiny"]
    trained = shown.table("glue").set_index("name").loc["BERT-tiny"]
    assert q["tiny_paper_mb"] == f"{sizes['fp32_MB']:.1f}" and q["tiny_trained_mb"] == \
        f"{trained['size_fp32_bytes'] / 1e6:.2f}"
    head = int(q["head_params"].replace(",", ""))
    # both at BERT's vocabulary: the fine-tuned model adds only SST-2's classifier, d x 2 weights and 2 biases
    assert int(trained["total_params"]) - int(sizes["total_params"]) == head == 128 * 2 + 2
    assert q["uno_mb_fit"].startswith("rounds to 1.1 MB, not")   # not "fits both numbers"
    assert q["tiny_over_ratio_fit"] == "rounds to the abstract's 1.2 MB"


def test_the_claim_module_names_every_chapter_model():
    assert (de_claims.TINY, de_claims.EEL, de_claims.UNO) == ("BERT-tiny", "EELBERT-tiny", "UNO-EELBERT (ours)")
