"""The every-family chapter's four profiles: one comment on every knob.

Track A (*replace the table*) trains BERT's sequence classifier, 2 layers and 64 wide, over BERT's uncased
WordPiece (30,522 pieces: the full table is about 95% of the model), with each family of the catalogue at fractions
of the full table's parameters. Track B (*add to the table*) trains a small causal LM on Penn Treebank with a
4,096-piece byte-level BPE, each memory adding a multiple of the token table's parameters.

Protocol (both tracks): every model of a comparison gets the same three learning rates with the first seed, at its
reference size (a budget family at ``sweep_budget``; Track B's base model); the rate with the best held-out score is
chosen, and the other budgets and seeds train at it. Early stopping on the held-out part; the report split is read
once, after training.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import ClassVar, Mapping

from hashlib_core.embeddings.catalogue import FAMILIES
from hashlib_core.profiles import Profile, ProfileSet

__all__ = ["FamiliesProfile", "PROFILES", "VOCABULARY"]

#: Track A's tokenizer: BERT's uncased WordPiece (staged under ``vocab/``)
VOCABULARY = "bert-base-uncased"


@dataclass(frozen=True)
class FamiliesProfile(Profile):
    #: Track A: tasks (``sst2``, ``massive``), families, budgets as fractions of the full table
    tasks: tuple[str, ...] = ("sst2", "massive")
    families: tuple[str, ...] = tuple(FAMILIES)
    budgets: tuple[float, ...] = (0.25, 0.0625, 0.016)
    #: the budget at which each budget family's learning rate is chosen and its seeds run
    sweep_budget: float = 0.0625
    #: budgets at which every seed runs (the others: the first seed only); empty: every budget
    seeded_budgets: tuple[float, ...] = (0.0625,)
    #: families that run every seed (the others: the first seed only); empty: every family
    seeded_families: tuple[str, ...] = ()
    learning_rates: tuple[float, ...] = (3e-4, 1e-3, 3e-3)
    seeds: tuple[int, ...] = (0, 1, 2)
    #: backbone: BERT layers, width, heads, feed-forward width, longest input (pieces with [CLS] and [SEP])
    layers: int = 2
    hidden: int = 64
    heads: int = 2
    intermediate: int = 256
    max_len: int = 48
    #: training examples kept per task (0: all); SST-2's held-out part of train (the rate choice and early stopping)
    train_limit: int = 0
    sst2_heldout: int = 1000
    #: MASSIVE's held-out (validation) and report (test) items and SST-2's report items scored (0: all; a seeded
    #: sample otherwise): the smoke profile's limit proves the code paths in seconds
    eval_limit: int = 0
    batch: int = 64
    #: batches whose rows are sorted by length together (1: plain shuffled batches): a batch pads to its longest row
    length_group: int = 50
    #: optimiser steps between held-out evaluations; evaluations without improvement before stopping; step cap
    eval_every: int = 200
    patience: int = 3
    max_steps: int = 4000
    #: MASSIVE's own step cap and learning rates (0 and empty: ``max_steps`` and ``learning_rates``): its 60 intents
    #: learn more slowly than SST-2's two classes
    massive_max_steps: int = 0
    massive_learning_rates: tuple[float, ...] = ()
    #: the robustness axis: the share of report-split words given one typo
    typo_rate: float = 0.15
    #: Track B: memories, added budgets as multiples of the token table, BPE size, LM shape, windows and steps
    memories: tuple[str, ...] = ("none", "blt", "over-encoding", "engram", "bigram")
    memory_multiples: tuple[float, ...] = (1.0, 4.0)
    lm_vocab: int = 4096
    lm_layers: int = 2
    lm_hidden: int = 128
    lm_heads: int = 2
    lm_seq_len: int = 64
    lm_batch: int = 32
    lm_train_tokens: int = 0
    lm_learning_rates: tuple[float, ...] = (1e-3, 3e-3, 1e-2)
    lm_seeds: tuple[int, ...] = (0, 1, 2)
    lm_eval_every: int = 250
    lm_max_steps: int = 3000
    #: validation windows scored at each evaluation (0: all)
    lm_validation_windows: int = 0
    #: throughput: timed batch and best-of repeats (one CPU thread)
    bench_batch: int = 32
    bench_length: int = 64
    bench_repeats: int = 5

    EVALUATION_ONLY: ClassVar[frozenset[str]] = frozenset({"typo_rate", "bench_batch", "bench_length",
                                                           "bench_repeats"})
    ZERO_MEANS_ALL: ClassVar[frozenset[str]] = frozenset({"train_limit", "eval_limit", "lm_train_tokens",
                                                           "lm_validation_windows"})
    ZERO_MEANS: ClassVar[Mapping[str, str]] = MappingProxyType({"massive_max_steps": "as max_steps",
                                                                "massive_learning_rates": "as learning_rates",
                                                                "seeded_families": "none", "seeded_budgets": "none",
                                                                "patience": "never stop early"})
    BOUNDS: ClassVar[Mapping[str, str]] = MappingProxyType({"typo_rate": "[0, 1]", "budgets": "(0, 1]",
                                                            "sweep_budget": "(0, 1]", "seeded_budgets": "(0, 1]"})

    def __post_init__(self) -> None:
        from hashlib_core.papers.families.data import TASKS
        from hashlib_core.papers.families.modeling import MEMORIES

        super().__post_init__()
        unknown = [f for f in self.families if f not in FAMILIES]
        if unknown:
            raise ValueError(f"unknown families {unknown}; choose among {sorted(FAMILIES)}")
        if not self.tasks or any(t not in TASKS for t in self.tasks):
            raise ValueError(f"tasks must be among {sorted(TASKS)}, got {self.tasks}")
        if any(m not in MEMORIES for m in self.memories) or "none" not in self.memories:
            raise ValueError(f"memories must be among {sorted(MEMORIES)} and include 'none' (the control), got "
                             f"{self.memories}")
        if not self.budgets or any(not 0 < b <= 1 for b in self.budgets):
            raise ValueError(f"budgets are fractions of the full table in (0, 1], got {self.budgets}")
        if self.eval_limit == 1:
            raise ValueError(f"eval_limit must be 0 (every item) or at least 2 (a bootstrap needs two items), got "
                             f"{self.eval_limit}")
        if self.sweep_budget not in self.budgets:
            raise ValueError(f"sweep_budget {self.sweep_budget} must be one of the budgets {self.budgets}")
        if any(f not in self.families for f in self.seeded_families):
            raise ValueError(f"seeded_families {self.seeded_families} must be among the families")
        if any(b not in self.budgets for b in self.seeded_budgets):
            raise ValueError(f"seeded_budgets {self.seeded_budgets} must be among the budgets {self.budgets}")
        for name in ("learning_rates", "lm_learning_rates", "massive_learning_rates"):
            rates = getattr(self, name)
            if name == "massive_learning_rates" and not rates:
                continue
            if not rates or len(set(rates)) != len(rates) or min(rates) <= 0:
                raise ValueError(f"{name} must be distinct and positive, got {rates}")
        if not self.seeds or not self.lm_seeds:
            raise ValueError("seeds and lm_seeds need at least one seed each")
        if any(m <= 0 for m in self.memory_multiples):
            raise ValueError(f"memory_multiples must be > 0, got {self.memory_multiples}")
        if self.hidden % self.heads or self.lm_hidden % self.lm_heads:
            raise ValueError("hidden must divide by heads and lm_hidden by lm_heads")

    def task_steps(self, task: str) -> int:
        """The step cap of ``task``'s runs."""
        return self.massive_max_steps if task == "massive" and self.massive_max_steps else self.max_steps

    def task_rates(self, task: str) -> tuple[float, ...]:
        """The learning rates ``task``'s sweep tries."""
        return self.massive_learning_rates if task == "massive" and self.massive_learning_rates else self.learning_rates


#: the families the chapter's claims compare, and the control
_CLAIMED = ("full", "hashing-trick", "md5-emb", "lsh-emb", "md5-proj", "gated-signatures", "superbloom")

PROFILES: ProfileSet[FamiliesProfile] = ProfileSet(
    smoke=FamiliesProfile(
        name="smoke", budget_minutes=1.5,
        families=("full", "hashing-trick", "md5-emb", "lsh-emb", "md5-proj", "gated-signatures", "superbloom",
                  "dynamic-ngram", "hashed-nets", "ce-concat", "tt-rec", "low-rank"),
        budgets=(0.25, 0.016), sweep_budget=0.25, seeded_budgets=(0.25,), learning_rates=(1e-3, 3e-3), seeds=(0, 1),
        layers=1, hidden=16, heads=2, intermediate=32, max_len=16, train_limit=256, sst2_heldout=64, eval_limit=256,
        batch=32,
        eval_every=4, patience=1, max_steps=8, memories=("none", "bigram", "blt"), memory_multiples=(1.0,),
        lm_vocab=300, lm_layers=1, lm_hidden=16, lm_heads=2, lm_seq_len=16, lm_batch=8, lm_train_tokens=4000,
        lm_learning_rates=(3e-3,), lm_seeds=(0,), lm_eval_every=4, lm_max_steps=8, lm_validation_windows=16,
        bench_batch=4, bench_length=8, bench_repeats=1),
    # two CPU cores: each task's sweep at the sweep budget, the other budgets at the chosen rate, three seeds there for
    # the families the claims read (and the full table); Track B one seed (no claim reads it; intervals: paired
    # bootstraps over the test windows), 64 wide (the 4,096-way softmax dominates a step on two cores). Each task's
    # training sample is 8,000 examples: its two stages fit an hour each
    cpu=FamiliesProfile(
        name="cpu", budget_minutes=180.0, train_limit=8000,
        max_steps=1200, massive_max_steps=2000, massive_learning_rates=(1e-3, 3e-3, 1e-2), eval_every=100, patience=3,
        max_len=40, seeded_families=_CLAIMED, lm_hidden=64, lm_batch=16,
        lm_seeds=(0,), lm_max_steps=1200, lm_eval_every=100, lm_validation_windows=200),
    # one GPU: every budget and the full table at 100% too, all seeds everywhere
    small=FamiliesProfile(
        name="small", accelerator="gpu", budget_minutes=10.0, budgets=(1.0, 0.25, 0.0625, 0.016), seeded_budgets=(),
        max_steps=6000, lm_max_steps=4000),
    paper=FamiliesProfile(
        name="paper", accelerator="gpu", budget_minutes=120.0, budgets=(1.0, 0.25, 0.0625, 0.016), seeded_budgets=(),
        hidden=128, heads=2, intermediate=512, max_steps=20000, lm_hidden=256, lm_layers=4, lm_heads=4,
        lm_max_steps=20000),
)
