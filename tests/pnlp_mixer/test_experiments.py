"""Tables 1 and 2 on ATIS and SNIPS, end to end at micro scale: the path the `paper` profile takes and the others do
not (they compare on MTOP EN and ATIS); the parts of each task are trained, then merged."""
from __future__ import annotations

import dataclasses

from hashlib_core.papers.pnlp_mixer import tables
from hashlib_core.papers.pnlp_mixer.experiments import CHAPTER
from hashlib_core.papers.pnlp_mixer.profiles import PROFILES


def test_comparisons_on_atis_and_snips(mirror, tmp_path):
    profile = dataclasses.replace(PROFILES.get("smoke"), comparison_tasks=("atis", "snips"), projections=("minhash",),
                                  encoders=("projection-only", "mixer"), train_examples=64, eval_examples=32,
                                  max_epochs=1)
    parts = [e.name for e in CHAPTER.selected(profile) if e.name.startswith(("mixer_", "projections_",
                                                                             "architectures_"))]
    # projection-only is the only row besides the MinHash Mixer: no projections part
    assert parts == ["mixer_atis", "architectures_atis", "mixer_snips", "architectures_snips"]
    store = CHAPTER.run(profile, parts, progress=False, results_root=tmp_path)      # the merges run as dependents
    t1, t2 = store.read_table("table1"), store.read_table("table2")
    # the MinHash Mixer is a headline row: two tuning points with seed 0, then seed 1 at the chosen one
    assert sorted(t1["task"]) == ["atis"] * 3 + ["snips"] * 3 and set(t1["projection"]) == {"minhash"}
    assert t1["chosen"].sum() == 4 and sorted(t1[t1["task"] == "atis"]["seed"]) == [0, 0, 1]
    assert sorted(set(zip(t2["task"], t2["encoder"]))) == [("atis", "mixer"), ("atis", "projection-only"),
                                                            ("snips", "mixer"), ("snips", "projection-only")]
    # merged in the profile's order: tasks, then rows (projection-only trains once, the Mixer three times)
    assert list(t2["task"]) == ["atis"] * 4 + ["snips"] * 4
    assert list(t2["encoder"][:4]) == ["projection-only"] + ["mixer"] * 3
    assert not store.exists("projections_atis_runs") and store.exists("mixer_snips_items")
    assert (t1["train_sentences"] == 64).all() and t1["val_intent_acc"].between(0, 100).all()
    view = tables.comparison_view(t2, "encoder")
    assert "SNIPS (paper)" not in view.columns and view["ATIS (paper)"].notna().all()
    assert tables.snips_sentence(t2, "encoder").startswith("On SNIPS (validation")
    items = store.read_json("table1_items")["data"]["runs"]
    assert len(items) == 4 and all(len(r["items"]["intent"]) == 32 for r in items)
