"""The Superbloom chapter's §4 training: one pair of text models (an unhashed baseline and Superbloom of its size) on
Penn Treebank, with the id sets' protocol (the sweep, early stopping, seeds); the ``language_d<width>`` experiments
call it and ``language`` merges them."""
from __future__ import annotations

import pandas as pd

from hashlib_core.chapter import RunContext
from hashlib_core.papers.superbloom.training import resolve, restored_seconds, scored, train_run

__all__ = ["language_pair"]


def language_pair(ctx: RunContext, width: int) -> dict[str, pd.DataFrame]:
    """One of §4's pairs (the unhashed baseline ``width`` wide, Superbloom of its size): each model trained at every
    rate of ``lm_learning_rates`` (seed ``seed``) until its validation loss stops improving, the best rate on
    validation kept and the model trained again with ``lm_seeds - 1`` more seeds; every seed scored on the test
    windows (per-window hits kept for the claims' paired bootstrap)."""
    from hashlib_core.papers.superbloom.training import LanguageResources

    res = LanguageResources(ctx)
    p = res.profile
    names = (f"baseline-d{width}", f"superbloom-matched-d{width}")
    rows, sweep, segs, curves = [], [], [], []
    for spec in [s for s in resolve(p.language_models(), p, res.sets.num_ids) if s.name in names]:
        fits = {lr: train_run(spec, res, ctx, lr, p.seed) for lr in p.lm_learning_rates}
        best = max(fits, key=lambda lr: (fits[lr][1]["best_validation"], -lr))
        for lr, (_, row, curve) in fits.items():
            sweep.append({**row, "chosen": lr == best})
            curves += curve
        for seed in range(p.seed, p.seed + p.lm_seeds):
            model, row, curve = fits[best] if seed == p.seed else train_run(spec, res, ctx, best, seed)
            if seed != p.seed:
                curves += curve
            segs.append(scored(model.to(ctx.device), res, p.recall_at, spec.name, seed))
            rows.append({**row, "vocabulary": len(res.vocab), "wordpiece_pieces": res.vocab.pieces,
                         "unigrams": res.vocab.unigrams, "bigrams": res.vocab.bigrams,
                         "train_windows": len(res.train_segments), "validation_windows": len(res.validation.segments)})
    ctx.reuse(restored_seconds([*sweep, *rows]))
    return {"models": pd.DataFrame(rows), "sweep": pd.DataFrame(sweep), "curves": pd.DataFrame(curves),
            "segments": pd.concat(segs, ignore_index=True)}
