"""Training and evaluating the Superbloom chapter's models on the shared loop.

:func:`resolve` turns a profile's model list into concrete shapes for the data at hand: a model with ``match`` gets
the width (a multiple of the heads) whose parameter count is nearest its partner's (counted on the ``meta`` device),
and the sampled-softmax model draws as many ids per batch as Superbloom scores hash tokens. :func:`train_run` trains
one model at one learning rate and seed with item masking (:class:`~hashlib_core.papers.superbloom.data.
ItemMaskingCollator`) until its validation loss stops improving (:func:`hashlib_core.early_stopping.
train_until_converged`); :func:`evaluate` masks one id per test (or validation) segment, ranks every id with
Algorithm 1 (certified beam search, beam = k) and returns per-segment hits at each cut-off, whether the answer was
certified and the candidates scored.
"""
from __future__ import annotations

import dataclasses
from functools import cached_property
from typing import Any, Sequence

import numpy as np
import pandas as pd
import torch

from hashlib_core.chapter import RunContext
from hashlib_core.decoding.beam import beam_topk
from hashlib_core.early_stopping import train_until_converged
from hashlib_core.papers.superbloom.data import (
    IdSets,
    ItemMaskingCollator,
    ItemSets,
    TestSegments,
    encode_segments,
    held_out_segments,
    load_sets,
    split_pages,
)
from hashlib_core.papers.superbloom.modeling import SuperbloomConfig, SuperbloomForMaskedLM
from hashlib_core.papers.superbloom.profiles import ModelSpec, SuperbloomProfile
from hashlib_core.params import count_parameters, instantiate_on_meta
from hashlib_core.profiles import seed_everything
from hashlib_core.training import TrainConfig, train

__all__ = ["Resources", "LanguageResources", "model_config", "heads_for", "size_of", "matched_hidden", "resolve",
           "train_run", "evaluate", "scored", "restored_seconds", "test_log_probs", "example_predictions", "label_frequency",
           "masked_item_loss", "validation_score", "VALIDATION_SCORE", "popularity_recall", "POPULARITY",
           "chosen_rates"]

#: the widest width a size match may choose
_WIDEST = 4096
#: the profile settings a run's weights depend on besides its spec, its TrainConfig and its id space (a run is
#: reused, or resumed, only under the same ones; the validation score, VALIDATION_SCORE, is passed apart)
_RUN_SETTINGS = ("seed", "dataset", "test_share", "validation_share", "validation_pages", "segment", "alpha",
                 "num_hashes", "heads", "intermediate", "batch", "eval_every", "patience", "lm_window")


class Resources:
    """The id sets, the page split, the training segments and the validation and test segments of one run (of the
    profile's dataset, or of ``dataset``: one of its ``other_datasets``), and how its runs train (batch, validation
    interval, the cap on steps, the settings their weights depend on)."""

    run_settings = _RUN_SETTINGS

    def __init__(self, ctx: RunContext, dataset: str | None = None) -> None:
        self.ctx = ctx
        self.profile: SuperbloomProfile = ctx.profile
        self.kind = "sets"                                 # names the checkpoints: one per dataset
        if dataset is not None and dataset != ctx.profile.dataset:
            self.profile = dataclasses.replace(ctx.profile, dataset=dataset, other_datasets=())
            self.kind = f"sets-{dataset}"
        self.batch, self.eval_every, self.max_steps = self.profile.batch, self.profile.eval_every, self.profile.steps

    @cached_property
    def sets(self) -> IdSets:
        return load_sets(self.profile.dataset)

    @cached_property
    def pages(self) -> tuple[list[int], list[int], list[int]]:
        """Training, validation and test pages."""
        p = self.profile
        return split_pages(self.sets, p.test_share, p.seed, p.validation_share)

    @cached_property
    def train_segments(self) -> ItemSets:
        return ItemSets(self.sets, self.pages[0], self.profile.segment, self.profile.seed)

    @cached_property
    def validation(self) -> TestSegments:
        pages = self.pages[1]
        if self.profile.validation_pages:
            pages = pages[: self.profile.validation_pages]
        return held_out_segments(self.sets, pages, self.profile.segment, self.profile.seed + 2)

    @cached_property
    def test(self) -> TestSegments:
        pages = self.pages[2]
        if self.profile.test_pages:
            pages = pages[: self.profile.test_pages]
        return held_out_segments(self.sets, pages, self.profile.segment, self.profile.seed + 1)

    @cached_property
    def specs(self) -> dict[str, ModelSpec]:
        """The profile's models with their widths and samples resolved against this data."""
        return {s.name: s for s in resolve(self.profile.models(), self.profile, self.sets.num_ids)}


class LanguageResources:
    """§4's text task with the same interface: the vocabulary (as ``sets.num_ids``) built on Penn Treebank's train
    split, training windows of it, validation windows (early stopping, the learning rate) of its validation split and
    test windows of its test split, one masked token each; runs train with the ``lm_*`` batch, interval and cap."""

    kind = "language"
    #: what a text run's weights depend on besides its spec, its TrainConfig and the vocabulary's size
    run_settings = ("seed", "num_hashes", "heads", "warmup", "patience", "lm_wordpiece", "lm_unigrams", "lm_bigrams",
                    "lm_window", "lm_batch", "lm_eval_every", "lm_validation_windows")

    def __init__(self, ctx: RunContext) -> None:
        from hashlib_core.papers.superbloom.language import build_vocabulary, masked_windows, tokenize, windows
        from hashlib_core.pretraining import ptb_lines

        self.ctx = ctx
        self.profile: SuperbloomProfile = ctx.profile
        p = self.profile
        self.batch, self.eval_every, self.max_steps = p.lm_batch, p.lm_eval_every, p.lm_steps
        train_lines = ptb_lines("train")
        self.vocab = build_vocabulary(train_lines, p.lm_wordpiece, p.lm_unigrams, p.lm_bigrams)
        self.sets = IdSets("Penn Treebank", self.vocab.tokens, [])

        def ids(lines: list[str]) -> np.ndarray:
            return np.array([i for line in lines for i in tokenize(self.vocab, line)], dtype=np.int64)

        self.train_segments = windows(ids(train_lines), p.lm_window)
        self.validation = masked_windows(ids(ptb_lines("validation")), p.lm_window, p.seed + 2,
                                         p.lm_validation_windows)
        self.test = masked_windows(ids(ptb_lines("test")), p.lm_window, p.seed + 1, p.lm_test_windows)


def model_config(spec: ModelSpec, profile: SuperbloomProfile, num_ids: int, seed: int | None = None
                 ) -> SuperbloomConfig:
    """The configuration of a resolved ``spec`` (its width set) over ``num_ids`` ids; ``seed`` draws the hash maps
    (default: the profile's)."""
    if not spec.hidden:
        raise ValueError(f"{spec.name}: its width is not resolved yet (match {spec.match!r}); call resolve() first")
    if spec.num_sampled < 0:
        raise ValueError(f"{spec.name}: its sampled count is not resolved yet; call resolve() first")
    intermediate = (profile.intermediate if profile.intermediate and not spec.match and not spec.use_positions
                    else 4 * spec.hidden)
    return SuperbloomConfig(num_ids=num_ids, alpha=spec.alpha, num_hashes=spec.num_hashes,
                            hash_seed=profile.seed if seed is None else seed, num_sampled=spec.num_sampled,
                            use_positions=spec.use_positions, hidden_size=spec.hidden, num_hidden_layers=spec.layers,
                            num_attention_heads=heads_for(spec.hidden, profile.heads),
                            intermediate_size=intermediate,
                            max_position_embeddings=max(512, (profile.segment + profile.lm_window) * spec.num_hashes))


def heads_for(width: int, heads: int) -> int:
    """Attention heads of a model ``width`` wide: the largest divisor of the width that is at most ``heads`` (a
    size-matched width need not be a multiple of the profile's heads)."""
    return max(h for h in range(1, min(heads, width) + 1) if width % h == 0)


def size_of(spec: ModelSpec, profile: SuperbloomProfile, num_ids: int) -> int:
    """Total parameters of ``spec`` (resolved) over ``num_ids`` ids, counted on the meta device (the hash maps hold
    no parameters, so the model is built over one id per hash token: the same shapes without drawing the maps)."""
    tokens = -(-num_ids // spec.alpha)
    shaped = dataclasses.replace(spec, alpha=1)
    return count_parameters(instantiate_on_meta(lambda: SuperbloomForMaskedLM(model_config(shaped, profile, tokens))))


def matched_hidden(spec: ModelSpec, target: int, profile: SuperbloomProfile, num_ids: int) -> int:
    """The width (at most 4,096) whose model has the parameter count nearest ``target``: a bisection, the count
    growing with the width. Any width is allowed (its heads: :func:`heads_for`), so that a narrow model over many ids,
    whose count moves by the number of ids per unit of width, can still come within a few percent."""
    step = 1
    sizes: dict[int, int] = {}

    def size(k: int) -> int:
        if k not in sizes:
            sizes[k] = size_of(dataclasses.replace(spec, hidden=k * step), profile, num_ids)
        return sizes[k]

    low, high = 1, _WIDEST // step
    if size(high) < target:
        raise ValueError(f"{spec.name}: no width up to {_WIDEST} reaches {target:,} parameters")
    while low < high:                                   # the smallest k with size(k) >= target
        mid = (low + high) // 2
        low, high = (mid + 1, high) if size(mid) < target else (low, mid)
    return min((k for k in (low - 1, low) if k >= 1), key=lambda k: abs(size(k) - target)) * step


def resolve(specs: Sequence[ModelSpec], profile: SuperbloomProfile, num_ids: int) -> list[ModelSpec]:
    """``specs`` with every ``match`` and ``width_of`` width and sampled count fixed for ``num_ids`` ids (a model
    matched to another follows it in the list)."""
    done: dict[str, ModelSpec] = {}
    tokens = profile.num_hashes * -(-num_ids // profile.alpha)      # Superbloom's output: m maps of N / alpha tokens
    for spec in specs:
        if spec.num_sampled < 0:
            spec = dataclasses.replace(spec, num_sampled=min(tokens, num_ids))
        if spec.match:
            if spec.match not in done:
                raise ValueError(f"{spec.name} matches {spec.match!r}, which is not listed before it")
            partner = done[spec.match]
            spec = dataclasses.replace(spec, hidden=matched_hidden(spec, size_of(partner, profile, num_ids),
                                                                   profile, num_ids))
        if spec.width_of:
            if spec.width_of not in done:
                raise ValueError(f"{spec.name} takes the width of {spec.width_of!r}, which is not listed before it")
            spec = dataclasses.replace(spec, hidden=done[spec.width_of].hidden)
        done[spec.name] = spec
    return list(done.values())


@torch.no_grad()
def masked_item_loss(model: SuperbloomForMaskedLM, segments: TestSegments, batch: int = 64) -> float:
    """The mean cross-entropy (nats) of each segment's masked item, summed over its ``m`` hash tokens (the training
    loss, on held-out segments, over every token: no sampling)."""
    total, count = 0.0, 0
    for start, log_probs in _masked_log_probs(model, segments, len(segments.segments), batch):
        targets = torch.as_tensor(segments.targets[start:start + len(log_probs)])
        local = model.maps.local(targets).to(log_probs.device)                     # (b, m) tokens in each map
        total -= float(log_probs.gather(2, local[:, :, None]).sum())
        count += len(targets)
    return total / count


#: what early stopping and the learning-rate choice read (checkpoint names carry it: another score, other runs)
VALIDATION_SCORE = "minus the masked-item loss on the validation segments"


def validation_score(res: Resources):
    """The validation score of early stopping and of the learning-rate choice: minus :func:`masked_item_loss` on
    the validation segments (higher is better). The loss, not recall: recall@k on a thousand segments moves by
    a few hits between evaluations, and early stopping on it stops on noise."""
    def score(model: SuperbloomForMaskedLM) -> float:
        return -masked_item_loss(model, res.validation)
    return score


def _spec_key(spec: ModelSpec) -> dict:
    """What of ``spec`` names its checkpoints: its fields, less ``width_of`` when unset (a field added after runs
    were made, so that their checkpoints keep their names)."""
    return {k: v for k, v in spec.__dict__.items() if not (k == "width_of" and not v)}


def train_run(spec: ModelSpec, res: Resources, ctx: RunContext, learning_rate: float, seed: int,
              steps: int | None = None, num_ids: int | None = None) -> tuple[SuperbloomForMaskedLM, dict, list]:
    """Train one resolved model at ``learning_rate`` with ``seed`` (its initialisation, masks, batch order and hash
    maps) until the validation loss (:func:`validation_score`) stops improving, ``steps`` (default: the profile's)
    the cap; batch, validation interval and cap are ``res``'s (the id sets' or the text's). Returns the model with its
    best weights, a summary row and its loss and validation curves. ``num_ids``:
    an id space larger than the data's (its ids are the first ones; the others never occur), for decoding at the
    paper's |S|."""
    p = res.profile
    steps = steps or res.max_steps
    if num_ids is not None and num_ids < res.sets.num_ids:
        raise ValueError(f"num_ids ({num_ids}) must cover the data's {res.sets.num_ids} ids")
    ids = num_ids or res.sets.num_ids
    seed_everything(seed)
    model = SuperbloomForMaskedLM(model_config(spec, p, ids, seed))
    loader = torch.utils.data.DataLoader(res.train_segments, batch_size=res.batch, shuffle=True, drop_last=True,
                                         collate_fn=ItemMaskingCollator(model.maps, seed))
    config = TrainConfig(max_steps=steps, learning_rate=learning_rate, warmup_steps=min(p.warmup, steps // 10),
                         scheduler="linear", weight_decay=0.01, log_every=max(1, res.eval_every // 5), seed=seed)
    out = ctx.checkpoint_dir(f"{res.kind}-{spec.slug}-lr{learning_rate:g}-s{seed}", _spec_key(spec), config, ids,
                             VALIDATION_SCORE, settings=res.run_settings)
    ctx.log(f"{spec.name}: training at lr {learning_rate:g}, seed {seed} (at most {steps} steps)")
    run = train_until_converged(model, loader, config, validation_score(res), every=res.eval_every,
                                patience=p.patience, output_dir=out, device=ctx.device, progress=ctx.progress)
    row = {"name": spec.name, "family": spec.family, "alpha": spec.alpha, "num_hashes": spec.num_hashes,
           "layers": spec.layers, "hidden": spec.hidden, "matched_to": spec.match,
           "num_sampled": model.config.num_sampled, "num_ids": ids, "data_ids": res.sets.num_ids,
           "vocab_size": model.config.vocab_size, "total_params": count_parameters(model),
           "emb_params": model.embedding_parameter_count(), "learning_rate": learning_rate, "seed": seed,
           "final_loss": run.losses[-1][1] if run.losses else float("nan"), **run.summary(),
           "restored": run.restored}
    curve = ([{"name": spec.name, "learning_rate": learning_rate, "seed": seed, "step": s, "loss": v,
               "kind": "train loss"} for s, v in run.losses]
             + [{"name": spec.name, "learning_rate": learning_rate, "seed": seed, "step": s, "loss": -v,
                 "kind": "validation loss"} for s, v in run.history])
    return model, row, curve


def _masked_log_probs(model: SuperbloomForMaskedLM, test: TestSegments, count: int, batch: int):
    """``(start, (b, m, T) log-probabilities)`` at the masked item of segments ``start .. start + b`` of ``test``,
    for the first ``count`` segments in batches of ``batch`` (the model in eval mode meanwhile, then back in the
    mode it was in)."""
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    m = model.config.num_hashes
    for start in range(0, count, batch):
        stop = min(start + batch, count)
        where = test.positions[start:stop]
        enc = encode_segments(test.segments[start:stop], model.maps, masked=where)
        yield start, model.item_log_probs(enc["input_ids"].to(device), enc["attention_mask"].to(device),
                                          torch.as_tensor(where * m, device=device))
    model.train(was_training)


@torch.no_grad()
def evaluate(model: SuperbloomForMaskedLM, res: Resources, ks: Sequence[int], batch: int = 64,
             beam: int | None = None, max_iterations: int | None = None, exhaustive: bool = False,
             segments: TestSegments | None = None) -> pd.DataFrame:
    """One row per test segment (or per segment of ``segments``, e.g. ``res.validation``): the target id, hit@k for
    each k, certified, candidates scored (Algorithm 1 from ``beam`` (default: the largest k), widening until
    certified or ``max_iterations`` searches)."""
    test, k_max = (segments if segments is not None else res.test), max(ks)
    rows = []
    for start, log_probs in _masked_log_probs(model, test, len(test.segments), batch):
        out = model.decode(log_probs, k_max, exhaustive, beam=beam if beam is not None else k_max,
                           max_iterations=max_iterations)
        targets = torch.as_tensor(test.targets[start:start + len(log_probs)], device=log_probs.device)
        ranks = (out.ids == targets[:, None])
        for b in range(len(targets)):
            row = {"segment": start + b, "target": int(targets[b]), "certified": bool(out.certified[b]),
                   "scored": int(out.scored[b])}
            for k in ks:
                row[f"hit@{k}"] = bool(ranks[b, :k].any())
            rows.append(row)
    return pd.DataFrame(rows)


def scored(model: SuperbloomForMaskedLM, res: Resources, ks: Sequence[int], name: str, seed: int) -> pd.DataFrame:
    """:func:`evaluate` on the test segments, each row named by the model and seed that scored it."""
    hits = evaluate(model, res, ks)
    hits.insert(0, "seed", seed)
    hits.insert(0, "name", name)
    return hits


def restored_seconds(rows: Sequence[dict]) -> float:
    """The training time of the runs among ``rows`` (summary rows of :func:`train_run`) that were read back from a
    finished earlier process, each (name, rate, seed) once: what an experiment reuses."""
    runs = {(r["name"], r["learning_rate"], r["seed"]): r for r in rows}
    return sum(float(r["wall_time_s"]) for r in runs.values() if r.get("restored"))


@torch.no_grad()
def test_log_probs(model: SuperbloomForMaskedLM, res: Resources, count: int, batch: int = 64) -> torch.Tensor:
    """``(n, m, T)``: the model's hash distributions at the masked item of the first ``n = min(count, segments)``
    test segments (what Algorithm 1 decodes)."""
    count = min(count, len(res.test.segments))
    return torch.cat([lp for _, lp in _masked_log_probs(model, res.test, count, batch)])


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


#: the name of the context-free ranking's rows in the recall tables
POPULARITY = "popularity (no model)"


def chosen_rates(sweep: pd.DataFrame, names: Sequence[str]) -> dict[str, float]:
    """The learning rate Table 3's sweep (its ``sweep`` result) chose for each of ``names``: what the experiments
    that retrain a model elsewhere (the diagnoses) train it at."""
    chosen = sweep[sweep["chosen"].astype(bool)].groupby("name")["learning_rate"].first()
    lost = [n for n in names if n not in chosen.index]
    if lost:
        raise RuntimeError(f"Table 3's sweep has no chosen rate for {lost}: rerun recall")
    return {n: float(chosen[n]) for n in names}


def popularity_recall(res: Resources, ks: Sequence[int]) -> dict[str, Any]:
    """The yardstick no trained model should fall below: recall@k (%) on the test segments of ranking every id by
    how many training pages link to it (:func:`label_frequency`, ties by id), whatever the segment holds."""
    frequency = label_frequency(res)
    order = np.argsort(-frequency, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    ranks = rank[np.asarray(res.test.targets)]
    return {"name": POPULARITY, **{f"rec@{k}": 100.0 * float((ranks < k).mean()) for k in ks},
            "segments": len(ranks)}
