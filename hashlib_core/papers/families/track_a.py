"""Track A, *replace the table*: one family of the catalogue in place of BERT's ``V x d`` table, trained on one
task under the task's protocol (:mod:`hashlib_core.protocol`): until the selection split's accuracy stops improving,
then scored on every report split, the first also with typos.

:class:`TrackA` is the chapter's shared resource (the tokenizer, the vocabulary and each task tokenised once).
:func:`plan` lists a task's runs; :func:`sweep_task` runs each family's learning-rate sweep (first seed) at its
reference size (:func:`hashlib_core.protocol.run_sweep`), and :func:`finish_task` the other budgets and the other
seeds at the rate chosen (:func:`hashlib_core.protocol.run_seeds`): two stages, each its own experiment. Per-item
correctness of every run on every report split is kept (packed bits), what the deciles and the paired bootstraps
read.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import torch

from hashlib_core.batching import LengthGroupedBatches
from hashlib_core.chapter import RunContext
from hashlib_core.embeddings.catalogue import FAMILIES, code_version, minimum_budget
from hashlib_core.papers.families.data import TaskData, collate, encode, frequency_deciles, load_task, typo_texts
from hashlib_core.papers.families.modeling import (FamilyBertConfig, FamilyBertForSequenceClassification,
                                                   body_parameter_count)
from hashlib_core.papers.families.profiles import VOCABULARY, FamiliesProfile
from hashlib_core.profiles import seed_everything
from hashlib_core.protocol import (Protocol, ProtocolRun, Trained, converge_checkpointed, rate_at_edge, run_seeds,
                                   run_sweep, trained)

__all__ = ["TrackA", "RUN_SETTINGS", "run_settings", "Setting", "settings", "skipped", "plan", "sweep_task",
           "sweep_families", "task_families", "finish_task", "task_deciles", "majority_shares", "pack", "unpack",
           "embedding_bytes", "rate_edges"]


#: the settings that change one Track A run's weights (its checkpoint's digest), besides its task's protocol's
#: cap, patience and scoring interval (:func:`run_settings`): which runs a profile makes (the tasks, families,
#: budgets, rates and seeds) and Track B's settings do not
RUN_SETTINGS = ("layers", "hidden", "heads", "intermediate", "max_len", "train_limit", "sst2_heldout", "sst2_report",
                "eval_limit", "batch", "length_group", "seed")
#: the protocol settings that change a run's weights (the rate and the seed are in the run's own digest)
_PROTOCOL_WEIGHTS = ("max_steps", "patience", "eval_every", "select_on", "schedule")


def run_settings(task: str) -> tuple[str, ...]:
    """The profile settings in the checkpoint digest of a run on ``task`` (or ``"lm"``: Track B's protocol part)."""
    return (*(RUN_SETTINGS if task != "lm" else ()), *(f"{task}_protocol.{k}" for k in _PROTOCOL_WEIGHTS))


@dataclass
class TrackA:
    """The tokenizer, the vocabulary strings and each task's tokenised parts (loaded on first use)."""

    profile: FamiliesProfile
    tasks: dict[str, TaskData] = field(default_factory=dict)

    def __post_init__(self) -> None:
        from hashlib_core.data import load_wordpiece_vocab
        from hashlib_core.wordpiece import bert_tokenizer

        self.tokenizer = bert_tokenizer(VOCABULARY)
        self.vocab = load_wordpiece_vocab(VOCABULARY)

    @property
    def full_table(self) -> int:
        return len(self.vocab) * self.profile.hidden

    def task(self, name: str) -> TaskData:
        if name not in self.tasks:
            p = self.profile
            self.tasks[name] = load_task(name, self.tokenizer, p.max_len, p.train_limit, p.sst2_heldout, p.seed,
                                         eval_limit=p.eval_limit, report=p.sst2_report)
        return self.tasks[name]

    def budget(self, family: str, fraction: float) -> int:
        return self.full_table if family == "full" else max(1, int(self.full_table * fraction))


@dataclass(frozen=True)
class Setting:
    """One model of Track A: a family at a budget fraction (a ``fixed``/``none``/``full`` family has one)."""

    family: str
    fraction: float


def task_families(profile: FamiliesProfile, task: str | None = None) -> list[str]:
    """The families ``task`` trains (``massive_families`` on MASSIVE where set); every family when ``task`` is None."""
    if task == "massive" and profile.massive_families:
        return [f for f in profile.families if f in profile.massive_families]
    return list(profile.families)


def settings(profile: FamiliesProfile, vocab_size: int | None = None, task: str | None = None) -> list[Setting]:
    """Every (family, budget) the profile trains (on ``task``: :func:`task_families`): budget families at each
    budget, the others once (the full table at 100%, a fixed family at its own size, labelled with the sweep budget).
    With ``vocab_size``, the budgets below a family's minimum (:func:`~hashlib_core.embeddings.catalogue.
    minimum_budget`) are left out."""
    out = []
    for name in task_families(profile, task):
        sizing = FAMILIES[name].sizing
        if sizing == "budget":
            out += [Setting(name, b) for b in profile.budgets]
        else:
            out.append(Setting(name, 1.0 if sizing == "full" else profile.sweep_budget))
    if vocab_size is None:
        return out
    return [s for s in out if s.family == "full" or s not in skipped(profile, vocab_size)]


def skipped(profile: FamiliesProfile, vocab_size: int) -> list[Setting]:
    """The (family, budget) settings a budget cannot build (below the family's minimum)."""
    full = vocab_size * profile.hidden
    return [Setting(f, b) for f in profile.families if FAMILIES[f].sizing == "budget" for b in profile.budgets
            if max(1, int(full * b)) < minimum_budget(f, vocab_size, profile.hidden)]


def plan(profile: FamiliesProfile, vocab_size: int | None = None, task: str = "sst2"
         ) -> list[tuple[Setting, bool, list[int]]]:
    """``(setting, swept, seeds)`` of ``task``: the reference setting of each family is swept (every rate, first
    seed); the seeds every setting runs at its chosen rate: all of the task protocol's seeds at a seeded budget (or
    a one-size family's one size) of a seeded family, and at the smallest budget of a ``seeded_smallest`` family; the
    first seed elsewhere."""
    seeded = set(profile.seeded_budgets) or set(profile.budgets)
    all_seeds = list(profile.protocol(task).seeds)
    out = []
    for s in settings(profile, vocab_size, task):
        one_size = FAMILIES[s.family].sizing != "budget"
        swept = one_size or s.fraction == profile.sweep_budget
        every = (one_size or s.fraction in seeded) and (not profile.seeded_families
                                                         or s.family in profile.seeded_families)
        every = every or (s.family in profile.seeded_smallest and s.fraction == min(profile.budgets))
        out.append((s, swept, all_seeds if every else all_seeds[:1]))
    swept_families = {s.family for s, swept, _ in out if swept}
    lost = sorted(set(task_families(profile, task)) - swept_families)
    if lost:
        raise ValueError(f"families {lost} cannot be built at the sweep budget {profile.sweep_budget:g}: raise "
                         f"sweep_budget or leave them out")
    return out


def pack(correct: np.ndarray) -> str:
    """Per-item correctness as hex of its packed bits (what the results keep)."""
    return np.packbits(np.asarray(correct, dtype=bool)).tobytes().hex()


def unpack(text: str, n: int) -> np.ndarray:
    return np.unpackbits(np.frombuffer(bytes.fromhex(text), dtype=np.uint8))[:n].astype(bool)


def embedding_bytes(model: FamilyBertForSequenceClassification) -> dict[str, int]:
    """Bytes of the token embedding: float32 parameters; int8 (one byte a number, a float32 scale per tensor);
    that int8 state compressed (zlib level 9); and the lookup structures the hash needs at run time."""
    words = model.bert.embeddings.word_embeddings
    params = [p.detach() for p in words.parameters()]
    int8 = []
    for p in params:
        scale = float(p.abs().max()) / 127 if p.numel() else 1.0
        int8.append(torch.round(p / (scale or 1.0)).clamp(-127, 127).to(torch.int8).numpy().tobytes())
    blob = b"".join(int8)
    lookup = words.lookup_bytes() if hasattr(words, "lookup_bytes") else 0
    return {"bytes_fp32": 4 * sum(p.numel() for p in params), "bytes_int8": len(blob) + 4 * len(params),
            "bytes_int8_zlib": len(zlib.compress(blob, 9)) + 4 * len(params), "lookup_bytes": lookup}


def _predict(model, rows: list[list[int]], batch: int) -> np.ndarray:
    """The predicted class of every row (batches moved to the model's device, predictions back on the CPU)."""
    model.eval()
    device = next(model.parameters()).device
    out = []
    with torch.no_grad():
        for i in range(0, len(rows), batch):
            b = collate([(ids, 0) for ids in rows[i:i + batch]])
            logits = model(input_ids=b["input_ids"].to(device), attention_mask=b["attention_mask"].to(device)).logits
            out.append(logits.argmax(-1).cpu())
    return torch.cat(out).numpy() if out else np.zeros(0, dtype=np.int64)


def _train_one(ctx: RunContext, res: TrackA, data: TaskData, s: Setting, typo_ids: list[list[int]]):
    """``train_one(lr, seed)`` of :func:`~hashlib_core.protocol.run_sweep`: one family at one budget trained on
    ``data`` under its task's protocol; its :class:`~hashlib_core.protocol.Trained` carries the table row and the
    curves (``extra``)."""
    p = ctx.profile
    protocol = p.protocol(data.name)
    budget = res.budget(s.family, s.fraction)
    train_ids, train_labels = data.parts["train"]
    select_ids, select_labels = data.parts[protocol.select_on]

    def one(lr: float, seed: int) -> Trained:
        seed_everything(seed)
        config = FamilyBertConfig(family=s.family, budget=budget, family_seed=seed, vocab_tokens=res.vocab,
                                  hidden_size=p.hidden, num_hidden_layers=p.layers, num_attention_heads=p.heads,
                                  intermediate_size=p.intermediate, max_position_embeddings=p.max_len,
                                  num_labels=data.num_labels)
        model = FamilyBertForSequenceClassification(config)
        batches = LengthGroupedBatches([len(ids) for ids in train_ids], p.batch, group=p.length_group)
        loader = torch.utils.data.DataLoader(list(zip(train_ids, train_labels.tolist())), batch_sampler=batches,
                                             collate_fn=collate)

        def score(m) -> float:
            return float((_predict(m, select_ids, 256) == select_labels).mean())

        ctx.log(f"{data.name}: {s.family} at {s.fraction:g} of the table, lr {lr:g}, seed {seed}")
        run = converge_checkpointed(ctx, model, loader, score, protocol, lr, seed,
                                    f"a-{data.name}-{s.family}-{s.fraction:g}-lr{lr:g}-s{seed}",
                                    (data.name, s.family, s.fraction, *code_version(s.family)),
                                    settings=run_settings(data.name))
        items = {split: _predict(model, data.parts[split][0], 256) == data.parts[split][1]
                 for split in protocol.report_on}
        first = protocol.report_on[0]
        noisy = _predict(model, typo_ids, 256) == data.parts[first][1]
        row = {"task": data.name, "family": s.family, "sizing": FAMILIES[s.family].sizing, "fraction": s.fraction,
               "budget": budget, "emb_params": model.embedding_parameter_count(),
               "body_params": body_parameter_count(model), "learning_rate": lr, "seed": seed,
               "accuracy": 100 * float(items[first].mean()), "typo_accuracy": 100 * float(noisy.mean()),
               "heldout_accuracy": 100 * run.best_score, "n_items": len(items[first]),
               **{f"{k}_accuracy": 100 * float(v.mean()) for k, v in items.items() if k != first},
               **run.summary(), "at_cap": not run.converged and run.steps >= run.max_steps,
               "restored": run.restored, **embedding_bytes(model), "correct": pack(items[first]),
               "typo_correct": pack(noisy), **{f"{k}_correct": pack(v) for k, v in items.items() if k != first}}
        key = {"task": data.name, "family": s.family, "fraction": s.fraction, "learning_rate": lr, "seed": seed}
        curve = [{**key, "step": st, "value": v, "kind": "train loss"} for st, v in run.losses] + \
                [{**key, "step": st, "value": 100 * v, "kind": "held-out accuracy"} for st, v in run.history]
        return trained(run, items, row=row, curve=curve)
    return one


def _rows(runs: list[ProtocolRun]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The table rows (each marked ``chosen``) and the curves of protocol runs."""
    rows = [{**r.trained.extra["row"], "chosen": r.chosen, "swept": r.swept, "extended": r.extended} for r in runs]
    return rows, [c for r in runs for c in r.trained.extra["curve"]]


def rate_edges(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per (task, family) that was swept: the rates tried (the grid and any added beyond it, in order), the
    rate chosen and whether it is still the smallest or largest tried (``at_edge``: a rate beyond it was not tried,
    so the sweep cannot say it is best; every budget of the family trains at that rate). A family's sweep is its
    first seed's runs at more than one rate."""
    first = runs[runs["seed"] == runs["seed"].min()]
    if "swept" in first:
        first = first[first["swept"].astype(bool)]
    out = []
    for (task, family, fraction), rows in first.groupby(["task", "family", "fraction"], sort=False):
        rates = sorted(set(rows["learning_rate"].astype(float)))
        chosen = rows.loc[rows["chosen"].astype(bool), "learning_rate"]
        if len(rates) < 2 or chosen.empty:
            continue
        extended = int(rows["extended"].astype(bool).sum()) if "extended" in rows else 0
        out.append({"task": task, "family": family, "fraction": fraction, "rates": rates,
                    "chosen": float(chosen.iloc[0]), "extended": extended,
                    "at_edge": rate_at_edge(float(chosen.iloc[0]), rates)})
    return pd.DataFrame(out, columns=["task", "family", "fraction", "rates", "chosen", "extended", "at_edge"])


def _typo_ids(res: TrackA, data: TaskData, p: FamiliesProfile) -> list[list[int]]:
    first = p.protocol(data.name).report_on[0]
    return encode(res.tokenizer, typo_texts(data.texts[first], p.typo_rate, seed=p.seed), p.max_len)


def sweep_families(profile: FamiliesProfile, part: str, task: str | None = None) -> list[str]:
    """The families one part of the sweep runs: ``"claimed"``, the seeded families (the ones the claims compare,
    swept first: the headline gets the budget first), or all of them when every family is seeded; ``"rest"`` and
    ``"rest2"``, the others in two halves (the first one longer by one when they are odd), so that each part of a
    cpu run stays under an hour."""
    families = task_families(profile, task)
    claimed = [f for f in families if not profile.seeded_families or f in profile.seeded_families]
    if part == "claimed":
        return claimed
    others = [f for f in families if f not in claimed]
    half = (len(others) + 1) // 2
    if part == "rest":
        return others[:half]
    if part == "rest2":
        return others[half:]
    raise ValueError(f"part must be 'claimed', 'rest' or 'rest2', got {part!r}")


def sweep_task(ctx: RunContext, task: str, part: str = "claimed") -> dict[str, pd.DataFrame]:
    """The first stage of ``task`` for one part of the families (:func:`sweep_families`): each family's reference
    setting at every learning rate with the first seed; ``chosen`` marks each family's best rate on the selection
    split (the protocol's tie rule). Returns ``runs`` and ``curves``."""
    res: TrackA = ctx.resources
    p = ctx.profile
    data = res.task(task)
    typo_ids = _typo_ids(res, data, p)
    protocol = p.protocol(task)
    families = set(sweep_families(p, part, task))
    rows, curves = [], []
    for s, _, _ in [x for x in plan(p, len(res.vocab), task) if x[1] and x[0].family in families]:
        r, c = _rows(run_sweep(protocol, _train_one(ctx, res, data, s, typo_ids)).runs)
        rows += r
        curves += c
    return {"runs": pd.DataFrame(rows), "curves": pd.DataFrame(curves)}


def finish_task(ctx: RunContext, task: str, swept: pd.DataFrame, swept_curves: pd.DataFrame, part: str = "all"
                ) -> dict[str, pd.DataFrame]:
    """The second stage: the other seeds of each swept setting and every seed of the other budgets, at the family's
    chosen rate (read from ``swept``, the first stage's runs). Returns every run of the task (``runs``, ``curves``).
    ``part``: ``"seeds"`` only the other seeds of the swept settings (and returns only those runs), ``"rest"`` only
    the other budgets (``swept`` then holds the sweep's and the seeds' runs), ``"all"`` both: the two halves keep
    each part of a cpu run under an hour."""
    if part not in ("all", "seeds", "rest"):
        raise ValueError(f"part must be 'all', 'seeds' or 'rest', got {part!r}")
    res: TrackA = ctx.resources
    p = ctx.profile
    data = res.task(task)
    typo_ids = _typo_ids(res, data, p)
    protocol = p.protocol(task)
    chosen_lr = swept[swept["chosen"]].set_index("family")["learning_rate"].to_dict()
    steps = plan(p, len(res.vocab), task)
    missing = sorted({s.family for s, _, _ in steps} - set(chosen_lr))
    if missing:
        raise RuntimeError(f"{task}: no chosen learning rate for {missing}: run the sweep first "
                           f"(--only replace_{task}_sweep)")
    steps = [(s, w, seeds) for s, w, seeds in steps if part == "all" or w == (part == "seeds")]
    rows, curves = ([], []) if part == "seeds" else (swept.to_dict("records"), swept_curves.to_dict("records"))
    for s, was_swept, seeds in steps:
        r, c = _rows(run_seeds(protocol, float(chosen_lr[s.family]), _train_one(ctx, res, data, s, typo_ids),
                               seeds[1:] if was_swept else seeds))
        rows += r
        curves += c
    return {"runs": pd.DataFrame(rows), "curves": pd.DataFrame(curves)}


def majority_shares(data: TaskData, protocol: Protocol) -> dict[str, float]:
    """The share (%) of the commonest label among the selection items and the (first) report items: a model that
    predicts one class scores it."""
    def share(labels: np.ndarray) -> float:
        return 100 * float(np.bincount(labels).max()) / len(labels)

    select, report = protocol.select_on, protocol.report_on[0]
    return {"heldout_majority": share(data.parts[select][1]), "report_majority": share(data.parts[report][1])}


def task_deciles(res: TrackA, task: str, runs: pd.DataFrame) -> pd.DataFrame:
    """Each chosen run's report accuracy by the decile of its items' rarest piece (training counts)."""
    data = res.task(task)
    report = res.profile.protocol(task).report_on[0]
    decile = frequency_deciles(data.parts[report][0], data.train_counts(len(res.vocab)))
    out = []
    for r in runs[runs["chosen"]].itertuples():
        correct = unpack(r.correct, len(decile))
        for d in range(1, 11):
            out.append({"task": task, "family": r.family, "fraction": r.fraction, "seed": r.seed, "decile": d,
                        "accuracy": 100 * float(correct[decile == d].mean())})
    return pd.DataFrame(out)
