"""The dynamic-embeddings chapter's models and its four profiles: one comment on every knob.

Every model is BERT (:mod:`~hashlib_core.papers.dynamic_embeddings.modeling`) over BERT's own vocabulary, the
30,522-piece ``bert-base-uncased`` WordPiece (:data:`VOCABULARY`), where BERT-tiny's table is most of the model: a
**table** model is BERT as it is, a **dynamic** model replaces its ``V x d`` table by the dynamic hash embedding.
:data:`MODELS` pairs them on BERT-tiny's shape (2 layers, 128 wide: the paper's reference for its smallest model),
adds a one-layer dynamic model of the same width, our reading of UNO-EELBERT (the paper's body is not available
here: "UNO" suggests one layer), and the EELBERT-tiny backbone with MD5 in place of the rolling hash (the hash
family the paper's research question is about). The UNO shape is an assumption, chosen to come near the abstract's
1.2 MB and 15x, so the chapter does not test those two numbers with it: it lists the other shapes that would fit
them (:func:`~hashlib_core.papers.dynamic_embeddings.sizes.fitting_shapes`).
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import ClassVar, Mapping

from hashlib_core.glue import check_finetuning_settings, normalize_task
from hashlib_core.profiles import Profile, ProfileSet
from hashlib_core.tuning import check_protocol

__all__ = ["VOCABULARY", "ModelSpec", "MODELS", "PAPER_MODELS", "PRETRAINING_SETTINGS", "DynamicEmbeddingsProfile",
           "PROFILES"]

#: every model's tokenizer: BERT's uncased WordPiece (staged under ``vocab/``), the vocabulary EELBERT replaces
VOCABULARY = "bert-base-uncased"


@dataclass(frozen=True)
class ModelSpec:
    """One model of the chapter: its name, its embedding ("table" or "dynamic") and its BERT shape."""

    name: str
    embedding: str
    layers: int
    hidden: int
    heads: int
    intermediate: int
    #: what the row stands for
    note: str = ""
    #: the dynamic embedding's n-gram hash family ("rolling": the blog's; "md5")
    ngram_hash: str = "rolling"

    @property
    def slug(self) -> str:
        return "".join(c if c.isalnum() else "-" for c in self.name.lower())

    def config_fields(self) -> dict:
        fields = dict(embedding=self.embedding, num_hidden_layers=self.layers, hidden_size=self.hidden,
                      num_attention_heads=self.heads, intermediate_size=self.intermediate)
        if self.ngram_hash != "rolling":
            fields["ngram_hash"] = self.ngram_hash
        return fields


#: The trained models: a table/dynamic pair on BERT-tiny's shape, the one-layer dynamic model, and the dynamic
#: model with MD5 n-gram hashes.
MODELS: tuple[ModelSpec, ...] = (
    ModelSpec("BERT-tiny", "table", 2, 128, 2, 512, "BERT-tiny's shape with its embedding table (the baseline)"),
    ModelSpec("EELBERT-tiny", "dynamic", 2, 128, 2, 512, "the same backbone, table replaced by the dynamic embedding"),
    ModelSpec("UNO-EELBERT (ours)", "dynamic", 1, 128, 2, 512,
              "one layer of the same width: our reading of the paper's smallest model"),
    ModelSpec("EELBERT-tiny (MD5)", "dynamic", 2, 128, 2, 512,
              "EELBERT-tiny with MD5 n-gram hashes in place of the rolling hash", ngram_hash="md5"),
)
#: The size table's models at the paper's scale (BERT's 30,522-token WordPiece vocabulary, 512 positions).
PAPER_MODELS: tuple[ModelSpec, ...] = (
    ModelSpec("BERT-base", "table", 12, 768, 12, 3072, "BERT-base"),
    ModelSpec("EELBERT-base", "dynamic", 12, 768, 12, 3072, "BERT-base with the dynamic embedding"),
    *MODELS[:3],
)
#: The profile settings a pre-training run depends on (fine-tuning knobs never retrain the encoder).
PRETRAINING_SETTINGS = ("corpus", "corpus_max_words", "max_n", "hash_buckets", "hash_seed", "projection", "seq_len",
                        "pt_steps", "pt_batch", "pt_lr", "pt_warmup", "seed")


@dataclass(frozen=True)
class DynamicEmbeddingsProfile(Profile):
    """Knobs of the chapter."""

    #: pre-training corpus (:data:`hashlib_core.pretraining.CORPUS_NAMES`; the HashFormers chapter's by default),
    #: cut after this many words (0: all of it)
    corpus: str = "ptb-train+wikitext2-validation"
    corpus_max_words: int = 0
    #: the dynamic embedding: longest n-gram, bucket size b, seed of the column multipliers, learned projection
    max_n: int = 3
    hash_buckets: int = 1_000_000_007
    hash_seed: int = 42
    projection: bool = False
    #: which models of MODELS (names); empty: all
    models: tuple[str, ...] = ()
    #: masked-language-model pre-training: sequence length in tokens (specials included), steps, batch, peak
    #: learning rate (AdamW, linear decay), warm-up steps
    seq_len: int = 64
    pt_steps: int = 30
    pt_batch: int = 16
    pt_lr: float = 1e-3
    pt_warmup: int = 3
    #: the trend: shorter pre-training runs of BERT-tiny and EELBERT-tiny (increasing steps below pt_steps; empty:
    #: none), each fine-tuned on trend_tasks (empty: tasks) with the same protocol
    trend_pt_steps: tuple[int, ...] = ()
    trend_tasks: tuple[str, ...] = ()
    #: fine-tuning with the shared GLUE pipeline (HashFormers' Table 5 optimiser) and protocol
    #: (:mod:`hashlib_core.tuning`): tasks; training examples per task (a seeded subset; 0: all) with
    #: ft_validation_examples more held out of the training split for early stopping and the learning-rate choice;
    #: dev examples scored (0: all); at most ft_epochs epochs, stopping after ft_patience without improvement (0:
    #: never); batch; the learning rates swept (with the first seed, on ft_sweep_task or, empty, on every task),
    #: the other seeds at the chosen one; maximum length; seeds
    tasks: tuple[str, ...] = ("sst2",)
    ft_train_examples: int = 256
    ft_validation_examples: int = 64
    ft_eval_examples: int = 200
    ft_epochs: float = 2.0
    ft_patience: int = 0
    ft_batch: int = 32
    ft_lrs: tuple[float, ...] = (1e-3,)
    ft_sweep_task: str = ""
    ft_max_len: int = 64
    ft_seeds: tuple[int, ...] = (0,)
    #: property checks: random pairs drawn per group, and the shared prefix length of the word families
    random_pairs: int = 2000
    prefix_length: int = 5

    ZERO_MEANS_ALL: ClassVar[frozenset[str]] = frozenset({"corpus_max_words", "ft_train_examples",
                                                          "ft_eval_examples"})
    ZERO_MEANS: ClassVar[Mapping[str, str]] = MappingProxyType({"ft_patience": "none (to the cap)",
                                                                 "ft_sweep_task": "every task",
                                                                 "trend_pt_steps": "no trend",
                                                                 "trend_tasks": "the tasks",
                                                                 "pt_warmup": "no warm-up"})
    EVALUATION_ONLY: ClassVar[frozenset[str]] = frozenset({"ft_eval_examples", "models", "random_pairs",
                                                           "prefix_length"})

    def __post_init__(self) -> None:
        super().__post_init__()
        from hashlib_core.pretraining import CORPUS_NAMES

        if self.corpus not in CORPUS_NAMES:
            raise ValueError(f"corpus must be one of {CORPUS_NAMES}, got {self.corpus!r}")
        check_finetuning_settings((*self.tasks, *self.trend_tasks), self.ft_seeds)
        unknown = sorted(set(self.models) - {m.name for m in MODELS})
        if unknown:
            raise ValueError(f"unknown model(s) {unknown}; known: {[m.name for m in MODELS]}")
        check_protocol(self.task_keys(), self.ft_lrs, self.ft_validation_examples, self.ft_patience, self.ft_epochs,
                       self.ft_sweep_task)
        if any(not 0 < s < self.pt_steps for s in self.trend_pt_steps) or \
                list(self.trend_pt_steps) != sorted(set(self.trend_pt_steps)):
            raise ValueError(f"trend_pt_steps must be increasing step counts below pt_steps ({self.pt_steps}), got "
                             f"{self.trend_pt_steps}")
        if self.seq_len < 4 or self.ft_max_len < 4:
            raise ValueError("seq_len and ft_max_len must be >= 4 (room for the special tokens)")

    def selected(self) -> list[ModelSpec]:
        return [m for m in MODELS if not self.models or m.name in self.models]

    def task_keys(self, trend: bool = False) -> list[str]:
        """Canonical task names (the trend's own list when it has one)."""
        return [normalize_task(t) for t in (self.trend_tasks if trend and self.trend_tasks else self.tasks)]


_GLUE5 = ("sst2", "cola", "mrpc", "stsb", "rte")
PROFILES: ProfileSet[DynamicEmbeddingsProfile] = ProfileSet(
    # smoke: CPU, CI: 40,000 corpus words, 20 pre-training steps, SST-2 on 128 examples (64 more held out), one
    # learning rate and seed, a trend point at 10 steps. Proves the code paths; its scores are not to be read.
    smoke=DynamicEmbeddingsProfile(name="smoke", budget_minutes=1.0, corpus_max_words=40_000, seq_len=32,
                                   pt_steps=20, pt_batch=8, ft_train_examples=128, ft_eval_examples=128,
                                   ft_max_len=48, random_pairs=200, trend_pt_steps=(10,)),
    # cpu: two CPU cores, at most three hours for the chapter, no experiment over an hour. Sized from two timed probes
    # on two cores (python -m hashlib_core.papers.dynamic_embeddings --profile cpu --only pretraining --pt_steps=150
    # --models=BERT-tiny,EELBERT-tiny, then --only glue on SST-2 alone): 150 pre-training steps of 32 x 64 tokens in
    # about 21 s for either model, an SST-2 run on 3,000 examples for 5 epochs in about half a minute. So: the four
    # models pre-trained for 5,000 MLM steps on Penn Treebank's train split and WikiText-2's validation split (several
    # passes: the pretraining results count its tokens), the vocabulary softmax at the masked positions only (about 45
    # minutes); fine-tuned on SST-2, CoLA, MRPC, STS-B and RTE with the HashFormers chapter's protocol (3,000 training
    # examples per task and 500 more held out, at most 5 epochs, patience 2, three learning rates swept on SST-2, three
    # seeds at the chosen rate, scored on the whole dev splits; about 40 minutes); the trend at 1,000 and 3,000 steps on
    # SST-2 (about 25 minutes).
    cpu=DynamicEmbeddingsProfile(name="cpu", budget_minutes=180.0, seq_len=64, pt_steps=5000, pt_batch=32,
                                 pt_lr=1e-3, pt_warmup=250, tasks=_GLUE5, ft_train_examples=3000,
                                 ft_validation_examples=500, ft_eval_examples=0, ft_epochs=5.0, ft_patience=2,
                                 ft_lrs=(1e-4, 3e-4, 1e-3), ft_sweep_task="sst2", ft_seeds=(0, 1, 2),
                                 trend_pt_steps=(1000, 3000), trend_tasks=("sst2",)),
    # small: one GPU, about ten minutes: 6,000 pre-training steps of 64 x 128 tokens, every training example of the
    # five tasks (500 held out), at most 5 epochs, the same sweep and seeds. An estimate until a run records its
    # wall time.
    small=DynamicEmbeddingsProfile(name="small", accelerator="gpu", budget_minutes=10.0, seq_len=128,
                                   pt_steps=6000, pt_batch=64, pt_lr=5e-4, pt_warmup=300, tasks=_GLUE5,
                                   ft_train_examples=0, ft_validation_examples=500, ft_eval_examples=0,
                                   ft_epochs=5.0, ft_patience=2, ft_lrs=(1e-4, 3e-4, 1e-3), ft_sweep_task="sst2",
                                   ft_max_len=128, ft_seeds=(0, 1, 2), trend_pt_steps=(1000, 3000),
                                   trend_tasks=("sst2",)),
    # paper: BERT's recipe where the abstract is silent (the paper's own hyper-parameters are not available here):
    # sequence 128, 100K steps of 256, lr 1e-4 with 10K warm-up; GLUE fine-tuning at most 3 epochs on every example,
    # BERT's learning rates.
    paper=DynamicEmbeddingsProfile(name="paper", accelerator="gpu", budget_minutes=60.0 * 24, seq_len=128,
                                   pt_steps=100_000, pt_batch=256, pt_lr=1e-4, pt_warmup=10_000, tasks=_GLUE5,
                                   ft_train_examples=0, ft_validation_examples=1000, ft_eval_examples=0,
                                   ft_epochs=3.0, ft_patience=1, ft_lrs=(2e-5, 3e-5, 5e-5), ft_max_len=128,
                                   ft_seeds=(0, 1, 2), trend_pt_steps=(10_000, 30_000), trend_tasks=("sst2",)),
)
