"""The Superbloom chapter's dry run (:mod:`hashlib_core.dry_run`): every model of the profile resolved against the
profile's id sets (widths matched by parameter count, as a run resolves them), the id-set datasets through
:func:`~hashlib_core.papers.superbloom.data.load_sets` (the data mirror) into masked batches, Penn Treebank's text
through the chapter's vocabulary, and two steps of a tiny Superbloom.

The submission prints no body for its Tables 1, 3 and 4 (see :mod:`~hashlib_core.papers.superbloom.params`), so no
size is compared with a printed one: the table lists the sizes a run of the profile trains.
"""
from __future__ import annotations

import dataclasses
from functools import lru_cache
from typing import Any

import numpy as np
import torch

from hashlib_core.dry_run import DataSample, DryRun, ModelSize
from hashlib_core.papers.superbloom.data import (DATASET_NAMES, IdSets, ItemMaskingCollator, ItemSets, load_sets,
                                                 split_pages)
from hashlib_core.papers.superbloom.modeling import SuperbloomConfig, SuperbloomForMaskedLM
from hashlib_core.papers.superbloom.profiles import SuperbloomProfile
from hashlib_core.papers.superbloom.training import model_config, resolve

__all__ = ["DRY_RUN", "profile_datasets"]


@lru_cache(maxsize=8)
def _sets(name: str) -> IdSets:
    return load_sets(name)


def profile_datasets(profile: SuperbloomProfile) -> list[str]:
    """The id-set datasets the profile trains on: its own, the ``other_datasets``, and the alpha sweep's."""
    return list(dict.fromkeys([profile.dataset, *profile.other_datasets, *([profile.alpha_dataset]
                                                                           if profile.alpha_dataset else [])]))


def _sizes(profile: SuperbloomProfile) -> list[ModelSize]:
    num_ids = _sets(profile.dataset).num_ids
    out = []
    for spec in resolve(profile.models(), profile, num_ids):
        # the hash maps hold no parameters: one id per hash token gives the same shapes without drawing them
        shaped, tokens = dataclasses.replace(spec, alpha=1), -(-num_ids // spec.alpha)
        out.append(ModelSize(f"{spec.name} (d {spec.hidden}, {DATASET_NAMES[profile.dataset]})",
                             lambda s=shaped, t=tokens: SuperbloomForMaskedLM(model_config(s, profile, t))))
    return out


def _data(profile: SuperbloomProfile, limit: int) -> list[DataSample]:
    from hashlib_core.papers.superbloom.language import build_vocabulary, tokenize
    from hashlib_core.pretraining import ptb_lines

    samples = []
    for name in profile_datasets(profile):
        sets = _sets(name)
        samples.append(DataSample(f"{DATASET_NAMES[name]} id sets (data mirror)", min(limit, len(sets.sets)),
                                  ("page", "ids"), ("page", "ids"),
                                  f"{sets.num_ids} ids; page 0: {len(sets.sets[0])} ids"))
    sets = _sets(profile.dataset)
    train_pages = split_pages(sets, profile.test_share, profile.seed, profile.validation_share)[0][:limit]
    segments = ItemSets(sets, train_pages, profile.segment, profile.seed)
    maps = SuperbloomForMaskedLM(model_config(dataclasses.replace(profile.models()[0], hidden=8), profile,
                                              sets.num_ids)).maps
    batch = ItemMaskingCollator(maps, profile.seed)([segments[i] for i in range(min(len(segments), 4))])
    samples.append(DataSample(f"{DATASET_NAMES[profile.dataset]} masked batch (hash maps, item masking)",
                              int(batch["input_ids"].shape[0]), tuple(batch), ("input_ids", "attention_mask", "labels"),
                              f"input_ids {tuple(batch['input_ids'].shape)}"))
    lines = ptb_lines("train")[:limit]
    vocab = build_vocabulary(lines, profile.lm_wordpiece, profile.lm_unigrams, profile.lm_bigrams)
    ids = [tokenize(vocab, line) for line in lines]
    samples.append(DataSample(f"Penn Treebank train (data mirror), vocabulary of the first {len(lines)} lines",
                              len(ids), ("text", "ids"), ("text", "ids"), lines[0]))
    return samples


def _tiny(profile: SuperbloomProfile) -> tuple[torch.nn.Module, torch.utils.data.DataLoader]:
    config = SuperbloomConfig(num_ids=60, alpha=5, num_hashes=2, hash_seed=0, hidden_size=16, num_hidden_layers=1,
                              num_attention_heads=2, intermediate_size=32, max_position_embeddings=64)
    model = SuperbloomForMaskedLM(config)
    rng = np.random.default_rng(0)
    segments = [rng.choice(60, size=6, replace=False) for _ in range(8)]
    loader = torch.utils.data.DataLoader(segments, batch_size=2, collate_fn=ItemMaskingCollator(model.maps, 0))
    return model, loader


def _plan(profile: SuperbloomProfile) -> list[dict[str, Any]]:
    names = [m.name for m in profile.models()]
    datasets = profile_datasets(profile)
    return [
        {"item": "id-set datasets (data mirror)", "value": ", ".join(DATASET_NAMES[d] for d in datasets)},
        {"item": "models", "value": f"{len(names)}: {', '.join(names)}"},
        {"item": "learning rates x seeds", "value": f"{profile.learning_rates} x {profile.seeds}"},
        {"item": "steps (cap) x batch x segment", "value": f"{profile.steps} x {profile.batch} x {profile.segment}"},
        {"item": "ids seen per run (cap)", "value": profile.steps * profile.batch * profile.segment},
        {"item": "early stopping", "value": f"validation every {profile.eval_every} steps, patience "
                                            f"{profile.patience}"},
        {"item": "text task (Penn Treebank)", "value": f"{profile.lm_steps} steps x {profile.lm_batch} windows of "
                                                       f"{profile.lm_window}; {profile.lm_seeds} seeds"},
        {"item": "checkpoints", "value": "none while a run trains (early stopping keeps the best weights in memory); "
                                         f"the converged run is saved at its end (checkpoints/superbloom/"
                                         f"{profile.name}/<run>-<digest>), an interrupted one restarts"},
    ]


DRY_RUN = DryRun(models=_sizes, data=_data, tiny=_tiny, plan=_plan)
