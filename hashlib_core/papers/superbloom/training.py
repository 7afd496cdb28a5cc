"""Training and evaluating the Superbloom chapter's models on the shared loop.

:func:`train_model` trains one :class:`~hashlib_core.papers.superbloom.profiles.ModelSpec` with item masking
(:class:`~hashlib_core.papers.superbloom.data.ItemMaskingCollator`) on the training pages' segments;
:func:`evaluate` masks one id per test segment, ranks every id with Algorithm 1 (certified beam search, beam = k)
and returns per-segment hits at each cut-off, whether the answer was certified and the candidates scored.
"""
from __future__ import annotations

from functools import cached_property
from typing import Any, Sequence

import numpy as np
import pandas as pd
import torch

from hashlib_core.chapter import RunContext
from hashlib_core.decoding.beam import beam_topk
from hashlib_core.papers.superbloom.data import (
    IdSets,
    ItemMaskingCollator,
    ItemSets,
    encode_segments,
    fb15k237_sets,
    lastfm_sets,
    split_pages,
    held_out_segments,
)
from hashlib_core.papers.superbloom.modeling import SuperbloomConfig, SuperbloomForMaskedLM
from hashlib_core.papers.superbloom.profiles import ModelSpec, SuperbloomProfile
from hashlib_core.params import count_parameters
from hashlib_core.profiles import seed_everything
from hashlib_core.training import TrainConfig, train

__all__ = ["Resources", "model_config", "train_model", "evaluate", "test_log_probs", "example_predictions",
           "label_frequency"]


class Resources:
    """The id sets, the page split, the training segments and the test segments of one run (of the profile's
    dataset, or of ``dataset``: one of its ``other_datasets``)."""

    def __init__(self, ctx: RunContext, dataset: str | None = None) -> None:
        from dataclasses import replace

        self.ctx = ctx
        self.profile: SuperbloomProfile = ctx.profile
        self.kind = "sets"                                 # names the checkpoints: one per dataset
        if dataset is not None and dataset != ctx.profile.dataset:
            self.profile = replace(ctx.profile, dataset=dataset, other_datasets=())
            self.kind = f"sets-{dataset}"

    @cached_property
    def sets(self) -> IdSets:
        return fb15k237_sets() if self.profile.dataset == "fb15k237" else lastfm_sets()

    @cached_property
    def pages(self) -> tuple[list[int], list[int]]:
        return split_pages(self.sets, self.profile.test_share, self.profile.seed)

    @cached_property
    def train_segments(self) -> ItemSets:
        return ItemSets(self.sets, self.pages[0], self.profile.segment, self.profile.seed)

    @cached_property
    def test(self):
        pages = self.pages[1]
        if self.profile.test_pages:
            pages = pages[: self.profile.test_pages]
        return held_out_segments(self.sets, pages, self.profile.segment, self.profile.seed + 1)


class LanguageResources:
    """§4's text task with the same interface: the vocabulary (as ``sets.num_ids``), training windows of the
    WikiText-2 validation split, test windows of its test split with one masked token each."""

    kind = "language"

    def __init__(self, ctx: RunContext) -> None:
        from hashlib_core.papers.superbloom.language import build_vocabulary, masked_windows, tokenize, windows
        from hashlib_core.pretraining import wikitext_lines

        self.ctx = ctx
        self.profile: SuperbloomProfile = ctx.profile
        p = self.profile
        train_lines, test_lines = wikitext_lines("validation"), wikitext_lines("test")
        self.vocab = build_vocabulary(train_lines, p.lm_wordpiece, p.lm_unigrams, p.lm_bigrams)
        self.sets = IdSets("WikiText-2", self.vocab.tokens, [])
        ids = np.array([i for line in train_lines for i in tokenize(self.vocab, line)], dtype=np.int64)
        test_ids = np.array([i for line in test_lines for i in tokenize(self.vocab, line)], dtype=np.int64)
        self.train_segments = windows(ids, p.lm_window)
        self.test = masked_windows(test_ids, p.lm_window, p.seed + 1, p.lm_test_windows)


def model_config(spec: ModelSpec, profile: SuperbloomProfile, num_ids: int) -> SuperbloomConfig:
    sampled = max(1, round(profile.sampled_share * num_ids)) if spec.num_sampled < 0 else spec.num_sampled
    hidden = spec.hidden or profile.hidden
    return SuperbloomConfig(num_ids=num_ids, alpha=spec.alpha, num_hashes=spec.num_hashes, hash_seed=profile.seed,
                            num_sampled=sampled, use_positions=spec.use_positions,
                            hidden_size=hidden, num_hidden_layers=spec.layers, num_attention_heads=profile.heads,
                            intermediate_size=4 * hidden if spec.hidden else profile.intermediate,
                            max_position_embeddings=max(512, (profile.segment + profile.lm_window) * spec.num_hashes))


def train_model(spec: ModelSpec, res: Resources, ctx: RunContext, steps: int | None = None,
                batch: int | None = None, num_ids: int | None = None) -> tuple[SuperbloomForMaskedLM, dict, list]:
    """Train one model (``steps`` and ``batch`` default to the profile's); returns it, a summary row and its loss
    curve. ``num_ids``: an id space larger than the data's (its ids are the first ones; the others never occur),
    for decoding at the paper's |S| with a trained model."""
    p = res.profile
    steps, batch = steps or p.steps, batch or p.batch
    if num_ids is not None and num_ids < res.sets.num_ids:
        raise ValueError(f"num_ids ({num_ids}) must cover the data's {res.sets.num_ids} ids")
    ids = num_ids or res.sets.num_ids
    seed_everything(p.seed)
    model = SuperbloomForMaskedLM(model_config(spec, p, ids))
    loader = torch.utils.data.DataLoader(res.train_segments, batch_size=batch, shuffle=True, drop_last=True,
                                         collate_fn=ItemMaskingCollator(model.maps, p.seed))
    config = TrainConfig(max_steps=steps, learning_rate=p.learning_rate, warmup_steps=min(p.warmup, steps // 10),
                         scheduler="linear", weight_decay=0.01, log_every=max(1, steps // 30), seed=p.seed)
    suffix, extra = ("", ()) if num_ids is None else (f"-ids{ids}", (ids,))      # a larger id space: its own run
    out = ctx.checkpoint_dir(f"{res.kind}-{spec.slug}{suffix}", spec.name, spec.__dict__, steps, batch, *extra)
    ctx.log(f"{spec.name}: training ({steps} steps)")
    result = train(model, loader, config, output_dir=out, device=ctx.device, progress=ctx.progress)
    row = {"name": spec.name, "alpha": spec.alpha, "num_hashes": spec.num_hashes, "layers": spec.layers,
           "num_sampled": model.config.num_sampled, "num_ids": ids, "data_ids": res.sets.num_ids,
           "hidden": model.config.hidden_size, "vocab_size": model.config.vocab_size, "total_params": count_parameters(model),
           "emb_params": model.embedding_parameter_count(), "steps": result.steps,
           "final_loss": result.final_loss, "wall_time_s": result.wall_time_s,
           "resumed_from_step": result.resumed_from_step or 0}   # > 0: wall_time_s covers only the steps after it
    return model, row, [{"name": spec.name, "step": s, "loss": loss} for s, loss in result.losses]


def _masked_log_probs(model: SuperbloomForMaskedLM, res: Resources, count: int, batch: int):
    """``(start, (b, m, T) log-probabilities)`` at the masked item of test segments ``start .. start + b``, for the
    first ``count`` segments in batches of ``batch`` (the model in eval mode meanwhile)."""
    model.eval()
    device = next(model.parameters()).device
    test, m = res.test, model.config.num_hashes
    for start in range(0, count, batch):
        stop = min(start + batch, count)
        where = test.positions[start:stop]
        enc = encode_segments(test.segments[start:stop], model.maps, masked=where)
        yield start, model.item_log_probs(enc["input_ids"].to(device), enc["attention_mask"].to(device),
                                          torch.as_tensor(where * m, device=device))
    model.train()


@torch.no_grad()
def evaluate(model: SuperbloomForMaskedLM, res: Resources, ks: Sequence[int], batch: int = 64,
             beam: int | None = None, max_iterations: int | None = None, exhaustive: bool = False) -> pd.DataFrame:
    """One row per test segment: the target id, hit@k for each k, certified, candidates scored (Algorithm 1 from
    ``beam`` (default: the largest k), widening until certified or ``max_iterations`` searches)."""
    test, k_max = res.test, max(ks)
    rows = []
    for start, log_probs in _masked_log_probs(model, res, len(test.segments), batch):
        out = model.decode(log_probs, k_max, exhaustive, beam=beam if beam is not None else k_max,
                           max_iterations=max_iterations)
        targets = torch.as_tensor(test.targets[start:start + len(log_probs)], device=log_probs.device)
        ranks = (out.ids == targets[:, None])
        for b in range(len(targets)):
            row = {"target": int(targets[b]), "certified": bool(out.certified[b]), "scored": int(out.scored[b])}
            for k in ks:
                row[f"hit@{k}"] = bool(ranks[b, :k].any())
            rows.append(row)
    return pd.DataFrame(rows)


@torch.no_grad()
def test_log_probs(model: SuperbloomForMaskedLM, res: Resources, count: int, batch: int = 64) -> torch.Tensor:
    """``(n, m, T)``: the model's hash distributions at the masked item of the first ``n = min(count, segments)``
    test segments (what Algorithm 1 decodes)."""
    count = min(count, len(res.test.segments))
    return torch.cat([lp for _, lp in _masked_log_probs(model, res, count, batch)])


@torch.no_grad()
def example_predictions(model: SuperbloomForMaskedLM, res: Resources, count: int, shown: int, rank_within: int
                        ) -> list[dict[str, Any]]:
    """Appendix E's examples: for each of the first ``count`` test segments, its visible ids, the masked target,
    the ``shown`` best ids (certified beam search) and the target's rank among the best ``rank_within`` (0: not
    among them)."""
    log_probs = test_log_probs(model, res, count)
    out = beam_topk(log_probs, model.maps, max(shown, rank_within))
    rows = []
    for i in range(log_probs.shape[0]):
        segment, where, target = res.test.segments[i], int(res.test.positions[i]), int(res.test.targets[i])
        ranked = out.ids[i].tolist()
        rows.append({"example": i + 1, "context": [int(x) for j, x in enumerate(segment) if j != where],
                     "target": target, "predicted": ranked[:shown],
                     "target_rank": ranked[:rank_within].index(target) + 1 if target in ranked[:rank_within] else 0,
                     "certified": bool(out.certified[i])})
    return rows


def label_frequency(res: Resources) -> np.ndarray:
    """How many training pages link to each id (the paper's "label frequency")."""
    counts = np.zeros(res.sets.num_ids, dtype=np.int64)
    for p in res.pages[0]:
        counts[res.sets.sets[p]] += 1
    return counts
