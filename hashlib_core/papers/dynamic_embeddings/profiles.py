"""The dynamic-embeddings chapter's models and its four profiles: one comment on every knob.

Every model is BERT (:mod:`~hashlib_core.papers.dynamic_embeddings.modeling`) over one locally trained byte-level
BPE vocabulary: a **table** model is BERT as it is, a **dynamic** model replaces its ``V x d`` table by the dynamic
hash embedding. :data:`MODELS` pairs them on BERT-tiny's shape (2 layers, 128 wide: the paper's reference for
its smallest model) and adds a one-layer dynamic model of the same width, our reading of UNO-EELBERT (the paper's
body is not available here: "UNO" suggests one layer). That shape is an assumption, chosen to come near the
abstract's 1.2 MB and 15x, so the chapter does not test those two numbers with it: it lists the other shapes that
would fit them (:func:`~hashlib_core.papers.dynamic_embeddings.sizes.fitting_shapes`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from hashlib_core.glue import check_finetuning_settings, normalize_task
from hashlib_core.profiles import Profile, ProfileSet

__all__ = ["ModelSpec", "MODELS", "PAPER_MODELS", "PRETRAINING_SETTINGS", "DynamicEmbeddingsProfile", "PROFILES"]


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

    @property
    def slug(self) -> str:
        return "".join(c if c.isalnum() else "-" for c in self.name.lower())

    def config_fields(self) -> dict:
        return dict(embedding=self.embedding, num_hidden_layers=self.layers, hidden_size=self.hidden,
                    num_attention_heads=self.heads, intermediate_size=self.intermediate)


#: The trained models: a table/dynamic pair on BERT-tiny's shape, and the one-layer dynamic model.
MODELS: tuple[ModelSpec, ...] = (
    ModelSpec("BERT-tiny", "table", 2, 128, 2, 512, "BERT-tiny's shape with its embedding table (the baseline)"),
    ModelSpec("EELBERT-tiny", "dynamic", 2, 128, 2, 512, "the same backbone, table replaced by the dynamic embedding"),
    ModelSpec("UNO-EELBERT (ours)", "dynamic", 1, 128, 2, 512,
              "one layer of the same width: our reading of the paper's smallest model"),
)
#: The size table's models at the paper's scale (BERT's 30,522-token WordPiece vocabulary, 512 positions).
PAPER_MODELS: tuple[ModelSpec, ...] = (
    ModelSpec("BERT-base", "table", 12, 768, 12, 3072, "BERT-base"),
    ModelSpec("EELBERT-base", "dynamic", 12, 768, 12, 3072, "BERT-base with the dynamic embedding"),
    *MODELS,
)
#: The profile settings a pre-training run depends on (fine-tuning knobs never retrain the encoder).
PRETRAINING_SETTINGS = ("vocab_size", "corpus_max_words", "max_n", "hash_buckets", "hash_seed", "projection",
                        "seq_len", "pt_steps", "pt_batch", "pt_lr", "pt_warmup", "seed")


@dataclass(frozen=True)
class DynamicEmbeddingsProfile(Profile):
    """Knobs of the chapter."""

    #: byte-level BPE vocabulary trained on the corpus (the paper: BERT's 30,522 WordPiece tokens)
    vocab_size: int = 2000
    #: corpus: the staged WikiText-2 validation split, cut after this many words (0: all of it)
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
    #: fine-tuning with the shared GLUE pipeline (HashFormers' Table 5 optimiser): tasks, training examples per task
    #: (a seeded subset; 0: all), dev examples scored (0: all), epochs, batch, learning rate, maximum length, seeds
    tasks: tuple[str, ...] = ("sst2",)
    ft_train_examples: int = 256
    ft_eval_examples: int = 200
    ft_epochs: float = 2.0
    ft_batch: int = 32
    ft_lr: float = 1e-3
    ft_max_len: int = 64
    ft_seeds: tuple[int, ...] = (0,)
    #: property checks: random pairs drawn per group, and the shared prefix length of the word families
    random_pairs: int = 2000
    prefix_length: int = 5

    ZERO_MEANS_ALL: ClassVar[frozenset[str]] = frozenset({"corpus_max_words", "ft_train_examples",
                                                          "ft_eval_examples"})
    EVALUATION_ONLY: ClassVar[frozenset[str]] = frozenset({"ft_eval_examples", "models", "random_pairs",
                                                           "prefix_length"})

    def __post_init__(self) -> None:
        super().__post_init__()
        check_finetuning_settings(self.tasks, self.ft_seeds)
        unknown = sorted(set(self.models) - {m.name for m in MODELS})
        if unknown:
            raise ValueError(f"unknown model(s) {unknown}; known: {[m.name for m in MODELS]}")
        self.require_positive("vocab_size", "max_n", "seq_len", "pt_steps", "pt_batch", "ft_batch", "ft_max_len",
                              "random_pairs", "prefix_length")

    def selected(self) -> list[ModelSpec]:
        return [m for m in MODELS if not self.models or m.name in self.models]

    def task_keys(self) -> list[str]:
        return [normalize_task(t) for t in self.tasks]


_GLUE5 = ("sst2", "cola", "mrpc", "stsb", "rte")

PROFILES: ProfileSet[DynamicEmbeddingsProfile] = ProfileSet(
    # smoke: CPU, CI: a 1,000-token BPE on 40,000 corpus words, 20 pre-training steps, SST-2 on 128 examples. Proves
    # the code paths; its scores are not to be read.
    smoke=DynamicEmbeddingsProfile(name="smoke", budget_minutes=1.0, vocab_size=1000, corpus_max_words=40_000,
                                   seq_len=32, pt_steps=20, pt_batch=8, ft_train_examples=128, ft_eval_examples=128,
                                   ft_max_len=48, random_pairs=200),
    # cpu: two CPU cores, under an hour: the three models pre-trained for 1,500 steps of 32 x 64 tokens on the whole
    # WikiText-2 validation split (about 9 passes over its 335K BPE tokens), then fine-tuned on five GLUE tasks (at
    # most 8,000 training examples each, 2 epochs, 3 seeds) and scored on the whole dev splits. Measured rates on
    # two cores: about 8 pre-training and 12 fine-tuning steps/s for the 2 x 128 models. The committed run's wall
    # time is in its results.
    cpu=DynamicEmbeddingsProfile(name="cpu", budget_minutes=60.0, vocab_size=2000, seq_len=64, pt_steps=1500,
                                 pt_batch=32, pt_lr=1e-3, pt_warmup=100, tasks=_GLUE5, ft_train_examples=8000,
                                 ft_eval_examples=0, ft_epochs=2.0, ft_lr=1e-3, ft_seeds=(0, 1, 2)),
    # small: one GPU, about ten minutes: an 8,000-token BPE, 3,000 pre-training steps of 64 x 128 tokens, every
    # training example of the five tasks for 2 epochs, 3 seeds. An estimate until a run records its wall time.
    small=DynamicEmbeddingsProfile(name="small", accelerator="gpu", budget_minutes=10.0, vocab_size=8000,
                                   seq_len=128, pt_steps=3000, pt_batch=64, pt_lr=5e-4, pt_warmup=300, tasks=_GLUE5,
                                   ft_train_examples=0, ft_eval_examples=0, ft_epochs=2.0, ft_lr=5e-4,
                                   ft_max_len=128, ft_seeds=(0, 1, 2)),
    # paper: BERT's recipe where the abstract is silent (the paper's own hyper-parameters are not available here):
    # 30,000-token vocabulary, sequence 128, 100K steps of 256, lr 1e-4 with 10K warm-up; GLUE fine-tuning 3
    # epochs at 2e-5 on every example.
    paper=DynamicEmbeddingsProfile(name="paper", accelerator="gpu", budget_minutes=60.0 * 24, vocab_size=30000,
                                   seq_len=128, pt_steps=100_000, pt_batch=256, pt_lr=1e-4, pt_warmup=10_000,
                                   tasks=_GLUE5, ft_train_examples=0, ft_eval_examples=0, ft_epochs=3.0,
                                   ft_lr=2e-5, ft_max_len=128, ft_seeds=(0, 1, 2)),
)
