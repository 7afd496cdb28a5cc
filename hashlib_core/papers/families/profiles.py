"""The every-family chapter's four profiles: one comment on every knob.

Track A (*replace the table*) trains BERT's sequence classifier, 2 layers and 64 wide, over BERT's uncased
WordPiece (30,522 pieces: the full table is about 95% of the model), with each family of the catalogue at fractions
of the full table's parameters. Track B (*add to the table*) trains a small causal LM on Penn Treebank with a
4,096-piece byte-level BPE, each memory adding a multiple of the token table's parameters.

Protocol (both tracks, :mod:`hashlib_core.protocol`, one section per task): every model of a comparison gets the same
learning rates with the first seed, at its reference size (a budget family at ``sweep_budget``; Track B's first
multiple); the rate with the best score on the selection split is chosen, and the other budgets and seeds train at
it. Early stopping on the selection split; the report splits, which chose nothing, are read once, after training.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import ClassVar, Mapping

from hashlib_core.embeddings.catalogue import FAMILIES
from hashlib_core.profiles import Profile, ProfileSet
from hashlib_core.protocol import Protocol

__all__ = ["FamiliesProfile", "PROFILES", "VOCABULARY", "SST2_PROTOCOL", "MASSIVE_PROTOCOL", "LM_PROTOCOL"]

#: Track A's tokenizer: BERT's uncased WordPiece (staged under ``vocab/``)
VOCABULARY = "bert-base-uncased"


#: Track A's protocol on SST-2: the held-out part of the training split chooses (the rate, the stopping step); a
#: second held-out part of the training split (10,000 sentences in the cpu profile) and GLUE's dev split report
SST2_PROTOCOL = Protocol(learning_rates=(3e-4, 1e-3, 3e-3), seeds=(0, 1, 2), patience=3, max_steps=8000,
                         eval_every=200, select_on="heldout", report_on=("report", "dev"),
                         schedule="constant_with_warmup", extend_edges=2)
#: Track A's protocol on MASSIVE: its validation split chooses, its test split reports
MASSIVE_PROTOCOL = Protocol(learning_rates=(1e-3, 3e-3, 1e-2), seeds=(0, 1, 2), patience=3, max_steps=8000,
                            eval_every=200, select_on="validation", report_on=("test",),
                            schedule="constant_with_warmup", extend_edges=2)
#: Track B's protocol: PTB's validation windows choose, its test windows report
LM_PROTOCOL = Protocol(learning_rates=(1e-3, 3e-3, 1e-2), seeds=(0, 1, 2), patience=3, max_steps=8000,
                       eval_every=250, select_on="validation", report_on=("test",),
                       schedule="constant_with_warmup", extend_edges=2)


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
    #: families that also run every seed at the smallest budget (a claim reads them there)
    seeded_smallest: tuple[str, ...] = ()
    #: the families MASSIVE trains, among ``families`` (empty: all of them; SST-2 always trains them all)
    massive_families: tuple[str, ...] = ()
    #: each task's protocol (:class:`~hashlib_core.protocol.Protocol`): rates swept at each family's reference size
    #: with the first seed, the other seeds at the rate chosen, early stopping and the rate choice on ``select_on``,
    #: the report splits read once, after training
    sst2_protocol: Protocol = SST2_PROTOCOL
    massive_protocol: Protocol = MASSIVE_PROTOCOL
    #: backbone: BERT layers, width, heads, feed-forward width, longest input (pieces with [CLS] and [SEP])
    layers: int = 2
    hidden: int = 64
    heads: int = 2
    intermediate: int = 256
    max_len: int = 48
    #: training examples kept per task (0: all but the held-out parts); SST-2's held-out parts of its training
    #: split: the selection part (the rate choice and early stopping) and the report part (read once, after training)
    train_limit: int = 0
    sst2_heldout: int = 1000
    sst2_report: int = 10000
    #: MASSIVE's validation and test items and SST-2's dev items scored (0: all; a seeded sample otherwise): the
    #: smoke profile's limit proves the code paths in seconds
    eval_limit: int = 0
    batch: int = 64
    #: batches whose rows are sorted by length together (1: plain shuffled batches): a batch pads to its longest row
    length_group: int = 50
    #: the robustness axis: the share of report-split words given one typo
    typo_rate: float = 0.15
    #: Track B: memories, added budgets as multiples of the token table, BPE size, LM shape, windows and steps
    memories: tuple[str, ...] = ("none", "blt", "over-encoding", "engram", "bigram", "bigram-residual")
    memory_multiples: tuple[float, ...] = (1.0, 4.0)
    lm_vocab: int = 4096
    lm_layers: int = 2
    lm_hidden: int = 128
    lm_heads: int = 2
    lm_seq_len: int = 64
    lm_batch: int = 32
    lm_train_tokens: int = 0
    #: Track B's protocol (rates at the first multiple with the first seed, the other seeds there at the rate
    #: chosen, the other multiples with the first seed)
    lm_protocol: Protocol = LM_PROTOCOL
    #: validation windows scored at each evaluation (0: all)
    lm_validation_windows: int = 0
    #: throughput: timed batch and best-of repeats (one CPU thread)
    bench_batch: int = 32
    bench_length: int = 64
    bench_repeats: int = 5

    #: why the cpu profile may take up to five hours (the page shows it): the headline comparisons need three seeds,
    #: every training sentence and runs that stop before their caps to settle
    BUDGET_NOTE: ClassVar[str] = (
        "The cpu profile of this chapter may take up to five hours rather than three: its comparisons settle only with "
        "three seeds of every compared family, SST-2's training split less its two held-out parts, and step caps high "
        "enough that the chosen runs stop early, for every family of the catalogue on SST-2 and the compared ones on "
        "MASSIVE (every family on both tasks took more than five hours). Track B, on PTB, has what was left.")
    EVALUATION_ONLY: ClassVar[frozenset[str]] = frozenset({"typo_rate", "bench_batch", "bench_length",
                                                           "bench_repeats"})
    ZERO_MEANS_ALL: ClassVar[frozenset[str]] = frozenset({"train_limit", "eval_limit", "lm_train_tokens",
                                                           "lm_validation_windows"})
    ZERO_MEANS: ClassVar[Mapping[str, str]] = MappingProxyType({"seeded_families": "none", "seeded_budgets": "none",
                                                                "seeded_smallest": "none"})
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
        for name in ("seeded_families", "seeded_smallest", "massive_families"):
            if any(f not in self.families for f in getattr(self, name)):
                raise ValueError(f"{name} {getattr(self, name)} must be among the families")
        if any(b not in self.budgets for b in self.seeded_budgets):
            raise ValueError(f"seeded_budgets {self.seeded_budgets} must be among the budgets {self.budgets}")
        for name, splits in (("sst2_protocol", ({"heldout"}, {"report", "dev"})),
                             ("massive_protocol", ({"validation"}, {"test"})), ("lm_protocol", ({"validation"},
                                                                                                 {"test"}))):
            proto = getattr(self, name)
            if not isinstance(proto, Protocol):
                raise TypeError(f"{name} must be a Protocol, got {type(proto).__name__}")
            if proto.select_on not in splits[0] or not set(proto.report_on) <= splits[1]:
                raise ValueError(f"{name} selects on {sorted(splits[0])} and reports on some of {sorted(splits[1])}; "
                                 f"got select_on={proto.select_on!r}, report_on={list(proto.report_on)}")
        if any(m <= 0 for m in self.memory_multiples):
            raise ValueError(f"memory_multiples must be > 0, got {self.memory_multiples}")
        if self.hidden % self.heads or self.lm_hidden % self.lm_heads:
            raise ValueError("hidden must divide by heads and lm_hidden by lm_heads")

    def protocol(self, task: str) -> Protocol:
        """The protocol of Track A's ``task`` (``sst2``, ``massive``) or of Track B (``lm``)."""
        if task not in ("sst2", "massive", "lm"):
            raise ValueError(f"no protocol for {task!r}: the tasks are sst2, massive and lm")
        return getattr(self, f"{task}_protocol")


#: the families the chapter's claims compare, and the control
_CLAIMED = ("full", "hashing-trick", "md5-emb", "lsh-emb", "md5-proj", "gated-signatures", "superbloom")

PROFILES: ProfileSet[FamiliesProfile] = ProfileSet(
    smoke=FamiliesProfile(
        name="smoke", budget_minutes=1.5,
        families=("full", "hashing-trick", "md5-emb", "lsh-emb", "md5-proj", "gated-signatures", "superbloom",
                  "dynamic-ngram", "hashed-nets", "ce-concat", "tt-rec", "low-rank"),
        budgets=(0.25, 0.016), sweep_budget=0.25, seeded_budgets=(0.25,), seeded_smallest=("md5-emb",),
        sst2_protocol=SST2_PROTOCOL.override(learning_rates=(1e-3, 3e-3), seeds=(0, 1), eval_every=4, patience=1,
                                             max_steps=8, extend_edges=1),
        massive_protocol=MASSIVE_PROTOCOL.override(learning_rates=(1e-3, 3e-3), seeds=(0, 1), eval_every=4,
                                                   patience=1, max_steps=8, extend_edges=1),
        layers=1, hidden=16, heads=2, intermediate=32, max_len=16, train_limit=256, sst2_heldout=64, sst2_report=128,
        eval_limit=256, batch=32, memories=("none", "bigram", "bigram-residual", "blt"), memory_multiples=(1.0,),
        lm_vocab=300, lm_layers=1, lm_hidden=16, lm_heads=2, lm_seq_len=16, lm_batch=8, lm_train_tokens=4000,
        lm_protocol=LM_PROTOCOL.override(learning_rates=(3e-3,), seeds=(0,), eval_every=4, max_steps=8),
        lm_validation_windows=16, bench_batch=4, bench_length=8, bench_repeats=1),
    # two CPU cores, up to five hours (the chapter's page says why): each task's sweep at the sweep budget (MASSIVE's
    # at the two rates its shorter runs chose, with the rate held after the warm-up, which favours lower rates), the
    # smallest budget at the chosen rate (the quarter budget is the small profile's), three seeds for the families
    # the claims read (and the full table) where they read
    # them (MASSIVE trains only those: every family on both tasks took more than five hours); caps high enough that
    # the chosen runs stop early; every training example but the held-out parts. Every
    # rate is held after its warm-up: a run stops on its own plateau and the caps are safety nets. Track B gets what
    # Track A's headline left of the five hours: three seeds at one added budget (the table's size), for the memories
    # the speedrun finding compares (BLT and over-encoding: the small profile), 64 wide (the 4,096-way softmax
    # dominates a step on two cores), every memory at one rate fixed in advance (the middle of the protocol's grid)
    # for 2,000 steps: an equal-steps comparison, whose runs are still improving at the cap (an 8,000-step run of
    # the control took seven minutes and improved to its last evaluations)
    cpu=FamiliesProfile(
        name="cpu", budget_minutes=300.0, budgets=(0.0625, 0.016), max_len=40, seeded_families=_CLAIMED,
        seeded_smallest=("md5-emb",), massive_families=_CLAIMED,
        massive_protocol=MASSIVE_PROTOCOL.override(learning_rates=(1e-3, 3e-3)),
        lm_hidden=64, lm_batch=16, lm_validation_windows=200, memory_multiples=(1.0,),
        memories=("none", "engram", "bigram", "bigram-residual"),
        lm_protocol=LM_PROTOCOL.override(learning_rates=(3e-3,), max_steps=2000, extend_edges=0)),
    # one GPU: every budget and the full table at 100% too, all seeds everywhere
    small=FamiliesProfile(
        name="small", accelerator="gpu", budget_minutes=10.0, budgets=(1.0, 0.25, 0.0625, 0.016), seeded_budgets=(),
        sst2_protocol=SST2_PROTOCOL.override(max_steps=8000), massive_protocol=MASSIVE_PROTOCOL.override(
            max_steps=8000), lm_protocol=LM_PROTOCOL.override(max_steps=8000)),
    paper=FamiliesProfile(
        name="paper", accelerator="gpu", budget_minutes=120.0, budgets=(1.0, 0.25, 0.0625, 0.016), seeded_budgets=(),
        hidden=128, heads=2, intermediate=512, sst2_protocol=SST2_PROTOCOL.override(max_steps=20000),
        massive_protocol=MASSIVE_PROTOCOL.override(max_steps=20000), lm_hidden=256, lm_layers=4, lm_heads=4,
        lm_protocol=LM_PROTOCOL.override(max_steps=20000)),
)
