"""The HashFormers micro run shared by the chapter's tests: every experiment on a 1-layer, width-16 encoder."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from hashlib_core.papers.hashformers.experiments import CHAPTER
from hashlib_core.papers.hashformers.profiles import PROFILES, HashFormersProfile

MICRO_VARIANTS = ("BERT-MLM", "BERT-S+R", "MD-Emb (1K)", "LSH-Emb (50K)", "MD-Proj", "LSH-Pool", "MD-Add")


def micro_profile(**overrides) -> HashFormersProfile:
    settings = dict(
        corpus_max_words=3000, bpe_vocab=400, emb_buckets=64, emb_buckets_small=32, sharing_buckets=(16, 64),
        sharing_words=300, layers=1, hidden=16, heads=2, intermediate=32, seq_len=16, pt_steps=2, pt_batch=4,
        pt_warmup=0, tasks=("stsb", "rte"), ft_train_examples=16, ft_validation_examples=8, ft_eval_examples=16,
        ft_epochs=2.0, ft_patience=1, ft_lrs=(1e-3, 3e-3), ft_batch=8,
        ft_max_len=24, models=MICRO_VARIANTS, timing_repeats=1, timing_batch=2, timing_examples=4,
        trend_pt_steps=(1,), trend_tasks=("rte",), diag_tasks=("rte",), diag_train_examples=(12, 16),
    )
    settings.update(overrides)
    return PROFILES.get("smoke", **settings)


@pytest.fixture(scope="module")
def micro_run(mirror, tmp_path_factory):
    """Every experiment of the chapter for the micro profile: (profile, results root, checkpoint dir)."""
    root = tmp_path_factory.mktemp("results")
    checkpoints = tmp_path_factory.mktemp("checkpoints")
    profile = micro_profile()
    CHAPTER.run(profile, progress=False, results_root=root, checkpoint_root=checkpoints)
    return profile, root, checkpoints


def read(root: Path, name: str) -> pd.DataFrame:
    return CHAPTER.store("smoke", root=root).read_table(name)
