"""Tables 1 and 2 on ATIS and SNIPS, end to end at micro scale: the path the `small` and `paper` profiles take and
the `cpu` and `smoke` profiles do not (they compare on ATIS only)."""
from __future__ import annotations

import dataclasses

from hashlib_core.papers.pnlp_mixer import tables
from hashlib_core.papers.pnlp_mixer.experiments import CHAPTER
from hashlib_core.papers.pnlp_mixer.profiles import PROFILES


def test_comparisons_on_atis_and_snips(mirror, tmp_path):
    profile = dataclasses.replace(PROFILES.get("smoke"), comparison_tasks=("atis", "snips"), projections=("minhash",),
                                  encoders=("projection-only", "mixer"), train_examples=64, eval_examples=32,
                                  max_epochs=1)
    store = CHAPTER.run(profile, ["projections", "architectures"], progress=False, results_root=tmp_path)
    t1, t2 = store.read_table("table1"), store.read_table("table2")
    # the MinHash Mixer is a headline row: two tuning points with seed 0, then seed 1 at the chosen one
    assert sorted(t1["task"]) == ["atis"] * 3 + ["snips"] * 3 and set(t1["projection"]) == {"minhash"}
    assert t1["chosen"].sum() == 4 and sorted(t1[t1["task"] == "atis"]["seed"]) == [0, 0, 1]
    assert sorted(set(zip(t2["task"], t2["encoder"]))) == [("atis", "mixer"), ("atis", "projection-only"),
                                                            ("snips", "mixer"), ("snips", "projection-only")]
    assert (t1["train_sentences"] == 64).all() and t1["val_intent_acc"].between(0, 100).all()
    view = tables.comparison_view(t2, "encoder")
    assert "SNIPS (paper)" not in view.columns and view["ATIS (paper)"].notna().all()
    assert tables.snips_sentence(t2, "encoder").startswith("On SNIPS (validation")
    items = store.read_json("table1_items")["data"]["runs"]
    assert len(items) == 4 and all(len(r["items"]["intent"]) == 32 for r in items)
