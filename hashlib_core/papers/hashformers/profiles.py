"""The HashFormers chapter's models (one :class:`ModelSpec` per row of Tables 1, 2 and 6) and its four profiles.

Every knob of :class:`HashFormersProfile` has a comment; the ``paper`` profile is Appendix A (Tables 4 and 5).
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import ClassVar, Mapping

from hashlib_core.glue import check_finetuning_settings, normalize_task
from hashlib_core.profiles import Profile, ProfileSet
from hashlib_core.tuning import check_protocol

__all__ = ["ModelSpec", "MODELS", "PROFORMER", "TABLE6_MODELS", "TREND_MODELS", "ADD_DIAGNOSIS_MODELS", "MD_GROUP",
           "LSH_GROUP", "HashFormersProfile", "PROFILES", "PRETRAINING_SETTINGS"]


@dataclass(frozen=True)
class ModelSpec:
    """One model of Tables 1, 2 and 6: a BPE baseline or a HashFormer (hash x embedding type x unit)."""

    group: str                    # Table 1/2 group key ("-", "HashFormers-MD (Ours)", ...)
    model: str                    # Table 1/2 model key ("BERT-MLM", "Emb (50K)", "Pool", ...)
    objective: str                # "mlm" or "sr"
    hash_type: str | None = None  # "md5" or "lsh" (None: BPE baseline)
    embedding_type: str | None = None
    unit: str = "word"            # "word" (Table 1's HashFormers) or "subword" (BPE: the baselines, Table 6)
    add_shared_gradient: bool = True  # False: the chapter's Add diagnostic (see AdditiveEmbedding)
    add_storage: str | None = None    # Add's storage; None: the profile's ``add_storage`` (see AdditiveEmbedding)
    pretrained: bool = True           # False: fine-tuned from random weights (ProFormer; objective "none")
    num_bits: int = 128               # T of an LSH or MD5 bit code (ProFormer: 420)
    layers: int = 0                   # encoder layers; 0: the profile's (ProFormer: 2)

    def __post_init__(self) -> None:
        if self.unit not in ("word", "subword"):
            raise ValueError(f"{self.model}: unit must be 'word' or 'subword', got {self.unit!r}")
        if (self.objective == "none") == self.pretrained:
            raise ValueError(f"{self.model}: a model fine-tuned from random weights has objective 'none' and "
                             f"pretrained=False; a pre-trained one 'mlm' or 'sr', got {self.objective!r} and "
                             f"pretrained={self.pretrained}")
        if self.hash_type is None and self.unit != "subword":
            raise ValueError(f"{self.model}: a BPE baseline's units are BPE subwords (unit='subword'), got "
                             f"{self.unit!r}")

    @property
    def name(self) -> str:
        if self.hash_type is None or not self.pretrained:
            return self.model
        prefix = "MD" if self.hash_type == "md5" else "LSH"
        suffix = "" if self.unit == "word" else " [BPE]"
        notes = [*(["2Td codebooks"] if self.add_storage == "codebooks" else []),
                 *(["Td differences"] if self.add_storage == "differences" else []),
                 *(["shared part frozen"] if not self.add_shared_gradient else [])]
        if notes:
            suffix += f" ({', '.join(notes)})"
        return f"{prefix}-{self.model}{suffix}"

    @property
    def is_baseline(self) -> bool:
        return self.hash_type is None

    @property
    def slug(self) -> str:
        return "".join(c if c.isalnum() else "_" for c in self.name.lower()).strip("_")

    def num_buckets(self, profile: "HashFormersProfile") -> int | None:
        """N of an Emb model in ``profile`` (None for the other types)."""
        if self.embedding_type != "emb":
            return None
        return profile.emb_buckets_small if self.model == "Emb (1K)" else profile.emb_buckets


MD_GROUP, LSH_GROUP = "HashFormers-MD (Ours)", "HashFormers-LSH (Ours)"
_HASHFORMER_TYPES = (("Emb (50K)", "emb"), ("Emb (1K)", "emb"), ("Pool", "pool"), ("Add", "add"), ("Proj", "proj"))

#: Tables 1 and 2: the two BERT baselines and the ten HashFormers.
MODELS: tuple[ModelSpec, ...] = (
    ModelSpec("-", "BERT-MLM", "mlm", unit="subword"),
    ModelSpec("-", "BERT-S+R", "sr", unit="subword"),
    *(ModelSpec(group, model, "sr", hash_type, etype)
      for hash_type, group in (("md5", MD_GROUP), ("lsh", LSH_GROUP)) for model, etype in _HASHFORMER_TYPES),
)
#: ProFormer (Sankar et al., 2021b), Table 1's baseline that is not pre-trained: 420-bit LSH codes of the words
#: through a dense projection, two encoder layers at the profile's width, sinusoidal positions
#: (:func:`~hashlib_core.papers.hashformers.configuration.proformer_config`), fine-tuned from random weights.
PROFORMER = ModelSpec("-", "ProFormer", "none", "lsh", "linear", pretrained=False, num_bits=420, layers=2)
#: Table 6: the Emb (50K) and Proj HashFormers with BPE subwords as units (Appendix C).
TABLE6_MODELS: tuple[ModelSpec, ...] = tuple(
    ModelSpec(group.replace(" (Ours)", ""), model, "sr", hash_type, etype, unit="subword")
    for hash_type, group in (("md5", MD_GROUP), ("lsh", LSH_GROUP))
    for model, etype in (("Emb (50K)", "emb"), ("Proj", "proj"))
)

#: The headline pair whose comparison the pre-training-length trend repeats (the abstract's most efficient
#: HashFormer against BERT-MLM).
TREND_MODELS: tuple[ModelSpec, ...] = tuple(m for m in MODELS if m.name in ("BERT-MLM", "LSH-Proj"))

#: The Add diagnostic: each Add HashFormer stored as the paper's 2Td codebooks, as it is and with no gradient into
#: its shared part (the second is a control, not a model of the paper).
ADD_DIAGNOSIS_MODELS: tuple[ModelSpec, ...] = tuple(
    ModelSpec(m.group, m.model, m.objective, m.hash_type, m.embedding_type, add_shared_gradient=frozen,
              add_storage="codebooks")
    for m in MODELS if m.embedding_type == "add" for frozen in (True, False)
)

#: The settings that decide pre-trained weights (checkpoint digests of pre-training runs use only these, so that
#: fine-tuning or timing settings never retrain a model).
PRETRAINING_SETTINGS = ("corpus", "paper_corpus", "corpus_max_words", "bpe_vocab", "emb_buckets", "emb_buckets_small",
                        "layers", "hidden", "heads", "intermediate", "seq_len", "pt_steps", "pt_batch", "pt_lr",
                        "pt_lr_mlm", "pt_warmup", "pt_beta2", "pt_scheduler", "add_storage", "mixed_precision", "seed")


@dataclass(frozen=True)
class HashFormersProfile(Profile):
    """Knobs of the HashFormers chapter. Sizes follow §4.2 and Appendix A (Tables 4 and 5) in ``paper``."""

    #: pre-training corpus: staged ("wikitext2-validation", "ptb-train", "ptb-train+wikitext2-validation") or
    #: "wikipedia+bookcorpus" (the paper's, §4.2, from the hub)
    corpus: str = "wikitext2-validation"
    #: hub datasets of the paper corpus, "repo[:config]" each (used when corpus == "wikipedia+bookcorpus")
    paper_corpus: tuple[str, ...] = ("wikimedia/wikipedia:20231101.en", "bookcorpus/bookcorpus")
    #: stop reading the corpus after this many words (0 = all of it)
    corpus_max_words: int = 0
    #: the byte-level BPE of the LSH features, the BERT baselines and Table 6's units: 0 = roberta-base's 50,265
    #: pieces (the released code's), else one of this many pieces trained on the corpus
    bpe_vocab: int = 0
    #: N of the "Emb (50K)" rows (the paper: 50,260) and of the "Emb (1K)" rows (1,000)
    emb_buckets: int = 4096
    emb_buckets_small: int = 1000
    #: bucket counts of the bucket-sharing picture, and how many of the most frequent corpus words it hashes (0: all)
    sharing_buckets: tuple[int, ...] = (1000, 4096)
    sharing_words: int = 4000
    #: encoder size (the paper: BERT-base, 12 x 768, FFN 3,072, 12 heads)
    layers: int = 2
    hidden: int = 64
    heads: int = 2
    intermediate: int = 256
    #: how Add stores Eq. 2: "codebooks" (the paper's 2Td numbers) or "differences" (the T differences, Td numbers;
    #: the hashed-word marker row, added to every word, carries the shared part: the same functions). With Adam the
    #: codebooks move the shared part about √T times as fast as any other vector; at our profiles' learning rates
    #: (10-30x the paper's) that keeps Add at the majority class (the chapter's Add diagnosis measures it), so every
    #: profile but ``paper`` uses "differences".
    add_storage: str = "differences"
    #: pre-training (Table 4): sequence length in units (words or BPE pieces, specials included), steps, batch,
    #: peak learning rate of S+R and of MLM, warm-up steps, Adam beta2, schedule
    seq_len: int = 64
    pt_steps: int = 30
    pt_batch: int = 16
    pt_lr: float = 1e-3
    pt_lr_mlm: float = 1e-3
    pt_warmup: int = 3
    pt_beta2: float = 0.999
    pt_scheduler: str = "linear"
    #: fine-tuning (Table 5): GLUE tasks; training examples per task (a seeded subset of the training split after
    #: the held-out part; 0 = all the rest); held-out training examples per task for early stopping and choosing the
    #: learning rate (GLUE dev, which the paper reports, never chooses anything); dev examples scored (0 = all);
    #: the cap on epochs; epochs without a better held-out score before stopping (0: run to the cap); batch;
    #: the learning rates swept for every model (with the first seed; the other seeds at the chosen one); maximum
    #: length in units; seeds (mean, standard deviation and per-item predictions over them)
    tasks: tuple[str, ...] = ("sst2",)
    ft_train_examples: int = 256
    ft_validation_examples: int = 64
    ft_eval_examples: int = 200
    ft_epochs: float = 2.0
    ft_patience: int = 0
    ft_batch: int = 32
    ft_lrs: tuple[float, ...] = (1e-3,)
    #: the task the learning-rate sweep runs on, each model's chosen rate then used on the other tasks ("": sweep
    #: on every task)
    ft_sweep_task: str = ""
    ft_max_len: int = 64
    ft_seeds: tuple[int, ...] = (0,)
    #: which models of Tables 1/2 (names of :data:`MODELS`); empty = all
    models: tuple[str, ...] = ()
    #: a parallel job's share (:mod:`~hashlib_core.papers.hashformers.jobs`): every experiment keeps only these models
    #: (names of :data:`MODELS` or :data:`TABLE6_MODELS`; the Add diagnosis follows its Table 1 Add models) and
    #: writes partial tables; empty = no restriction
    only_models: tuple[str, ...] = ()
    #: the headline comparison (LSH-Proj against BERT-MLM) after shorter pre-training runs: their step counts (each
    #: its own schedule; empty: no trend), and the tasks they are fine-tuned on (empty: ``tasks``)
    trend_pt_steps: tuple[int, ...] = ()
    trend_tasks: tuple[str, ...] = ()
    #: Table 6 (BPE units for HashFormers), and the tasks its four models are fine-tuned on (empty: ``tasks``)
    table6: bool = True
    table6_tasks: tuple[str, ...] = ()
    #: why a baseline stays at the majority class (the majority diagnosis, :mod:`~hashlib_core.papers.hashformers.
    #: majority`): its tasks (empty: no diagnosis), its training sizes (examples per task after the held-out part;
    #: 0: every one), the cap on epochs and the patience of its runs (BERT-MLM at its chosen rate, the first seed)
    diag_tasks: tuple[str, ...] = ()
    diag_train_examples: tuple[int, ...] = ()
    diag_epochs: float = 10.0
    diag_patience: int = 3
    #: Table 1's ProFormer (:data:`PROFORMER`): fine-tuned from random weights on ``tasks`` with the same protocol
    #: (learning-rate sweep, seeds, early stopping) as the pre-trained models
    proformer: bool = False
    #: Table 3: repetitions per measurement, batch size, dev examples for inference; and the same models at
    #: BERT-base's width (12 x 768, sequence 512, random weights): repetitions (0: not timed there) and pre-training
    #: batch
    timing_repeats: int = 3
    timing_batch: int = 8
    timing_examples: int = 64
    timing_base_repeats: int = 0
    timing_base_batch: int = 1
    #: "no", "bf16" or "fp16"
    mixed_precision: str = "no"
    #: save a pre-training checkpoint every N steps (0: at the end only)
    checkpoint_every: int = 0

    SHARE_SETTINGS: ClassVar[frozenset[str]] = frozenset({"only_models"})
    ZERO_MEANS_ALL: ClassVar[frozenset[str]] = frozenset({"corpus_max_words", "sharing_words", "ft_train_examples",
                                                          "ft_eval_examples", "diag_train_examples"})
    ZERO_MEANS: ClassVar[Mapping[str, str]] = MappingProxyType({"ft_patience": "none (to the cap)",
                                                                 "ft_sweep_task": "every task",
                                                                 "bpe_vocab": "roberta-base (50,265)",
                                                                 "timing_base_repeats": "not timed",
                                                                 "checkpoint_every": "at the end only",
                                                                 "pt_warmup": "no warm-up",
                                                                 "diag_patience": "none (to the cap)"})
    BOUNDS: ClassVar[Mapping[str, str]] = MappingProxyType({"pt_beta2": "(0, 1)"})
    EVALUATION_ONLY: ClassVar[frozenset[str]] = frozenset({
        "sharing_buckets", "sharing_words", "ft_eval_examples", "models", "only_models", "table6", "table6_tasks",
        "trend_pt_steps",
        "trend_tasks",
        "timing_repeats", "timing_batch", "timing_examples", "timing_base_repeats", "timing_base_batch",
        "checkpoint_every",
    })

    def __post_init__(self) -> None:
        super().__post_init__()
        from hashlib_core.pretraining import CORPUS_NAMES

        if self.corpus not in (*CORPUS_NAMES, "wikipedia+bookcorpus"):
            raise ValueError(f"corpus must be one of {(*CORPUS_NAMES, 'wikipedia+bookcorpus')}, got {self.corpus!r}")
        check_finetuning_settings((*self.tasks, *self.table6_tasks, *self.trend_tasks, *self.diag_tasks),
                                  self.ft_seeds)
        if self.diag_tasks and (not self.diag_train_examples or len(set(self.diag_train_examples)) !=
                                len(self.diag_train_examples) or any(isinstance(n, bool) or not isinstance(n, int)
                                                                     or n < 0 for n in self.diag_train_examples)):
            raise ValueError("diag_train_examples must list distinct training sizes >= 0 (0: every example not held "
                             f"out) when diag_tasks is set, got {self.diag_train_examples!r}")
        if self.diag_epochs <= 0 or self.diag_patience < 0:
            raise ValueError(f"diag_epochs must be > 0 and diag_patience >= 0, got {self.diag_epochs} and "
                             f"{self.diag_patience}")
        if any(not 0 < s < self.pt_steps for s in self.trend_pt_steps) or \
                list(self.trend_pt_steps) != sorted(set(self.trend_pt_steps)):
            raise ValueError(f"trend_pt_steps must be increasing step counts below pt_steps ({self.pt_steps}), got "
                             f"{self.trend_pt_steps}")
        check_protocol(self.task_keys(), self.ft_lrs, self.ft_validation_examples, self.ft_patience, self.ft_epochs,
                       self.ft_sweep_task)
        if self.seq_len < 4 or self.ft_max_len < 4:
            raise ValueError("seq_len and ft_max_len must be >= 4 (room for the special tokens)")
        from hashlib_core.embeddings.hashed import AdditiveEmbedding   # torch: imported only when a profile is built

        if self.add_storage not in AdditiveEmbedding.STORAGES:
            raise ValueError(f"add_storage must be one of {AdditiveEmbedding.STORAGES}, got {self.add_storage!r}")
        if self.hidden % self.heads:
            raise ValueError(f"hidden ({self.hidden}) must be a multiple of heads ({self.heads})")
        unknown = sorted(set(self.models) - {m.name for m in MODELS})
        if unknown:
            raise ValueError(f"unknown model(s) {unknown}; known: {[m.name for m in MODELS]}")
        known = [m.name for m in (*MODELS, *TABLE6_MODELS, PROFORMER)]
        unknown = sorted(set(self.only_models) - set(known))
        if unknown:
            raise ValueError(f"only_models names unknown model(s) {unknown}; known: {known}")

    def selected(self, models: tuple[ModelSpec, ...] = MODELS) -> list[ModelSpec]:
        """The models of Tables 1/2 this profile trains (``models``), or of another group (Table 6's, the trend's:
        all of them), less those ``only_models`` leaves out."""
        return [m for m in models if (models is not MODELS or not self.models or m.name in self.models)
                and (not self.only_models or m.name in self.only_models)]

    def diag_task_keys(self) -> list[str]:
        """Canonical names of the majority diagnosis's tasks."""
        return [normalize_task(t) for t in self.diag_tasks]

    def task_keys(self, table6: bool = False, trend: bool = False) -> list[str]:
        """Canonical task names (Table 6's, or the trend's, own list when it has one)."""
        tasks = self.tasks
        if table6 and self.table6_tasks:
            tasks = self.table6_tasks
        elif trend and self.trend_tasks:
            tasks = self.trend_tasks
        return [normalize_task(t) for t in tasks]


PROFILES: ProfileSet[HashFormersProfile] = ProfileSet(
    # CPU, whole notebook < 90 s: 2 x 64 encoder, 20 pre-training steps on 8 x 32 words, SST-2 only (128 train
    # examples, 128 dev), Emb (50K) at N = 4,096. Proves every code path; its scores are not meant to be read.
    smoke=HashFormersProfile(name="smoke", corpus_max_words=40_000, budget_minutes=1.0, seq_len=32, pt_batch=8,
                             pt_steps=20, ft_train_examples=128, ft_eval_examples=128, ft_max_len=48,
                             timing_repeats=2, diag_tasks=("sst2",), diag_train_examples=(64, 128), diag_epochs=2.0,
                             diag_patience=1, proformer=True),
    # Two CPU cores, at most three hours for the chapter (each experiment under an hour): a 4 x 128 encoder,
    # roberta-base's BPE (50,265 pieces) for the baselines and the LSH features, Emb (50K) at the paper's N = 50,260,
    # pt_steps pre-training steps of 32 x 64 units on Penn Treebank's train split and WikiText-2's validation split
    # (about 1.1M words: S+R's loss has flattened by then, measured on LSH-Proj and MD-Emb, and is still falling at
    # the trend's 150 and 400 steps); fine-tuning on 1,500 training examples per task with 500 more held out for early
    # stopping (at most 5 epochs, patience 2), three learning rates swept on SST-2 for every model (ProFormer, not
    # pre-trained, included), three seeds at the chosen rate, scored on the whole dev splits. The majority diagnosis
    # fine-tunes BERT-MLM on CoLA and MRPC with 1,500 and with every training example, from its pre-trained and from
    # random weights (at most 10 epochs, patience 3). The wall time of the committed run is in its meta files.
    cpu=HashFormersProfile(
        name="cpu", budget_minutes=180.0, corpus="ptb-train+wikitext2-validation", corpus_max_words=0, bpe_vocab=0,
        emb_buckets=50260, emb_buckets_small=1000, sharing_buckets=(1000, 4096, 16384, 50260), sharing_words=0,
        layers=4, hidden=128, heads=2, intermediate=512, seq_len=64, pt_steps=1200, pt_batch=32, pt_lr=5e-4,
        pt_lr_mlm=5e-4, pt_warmup=60, tasks=("sst2", "cola", "mrpc", "stsb", "rte"), ft_train_examples=1500,
        ft_validation_examples=500, ft_eval_examples=0, ft_epochs=5.0, ft_patience=2, ft_batch=32,
        ft_lrs=(1e-4, 3e-4, 1e-3), ft_sweep_task="sst2", ft_max_len=64, ft_seeds=(0, 1, 2), table6_tasks=("sst2",),
        trend_pt_steps=(150, 400), trend_tasks=("sst2",), diag_tasks=("cola", "mrpc"), diag_train_examples=(1500, 0),
        diag_epochs=10.0, diag_patience=3, timing_repeats=3, timing_batch=8, timing_examples=64,
        timing_base_repeats=3, timing_base_batch=1, proformer=True,
    ),
    # One GPU, about 10 minutes for the chapter, run as parallel jobs (python -m hashlib_core.parallel hashformers
    # --profile small --device cuda: one process per model sharing the GPU and the checkpoints, then the whole run
    # reading them back; see hashformers.jobs). The cpu profile's protocol at a wider encoder and longer pre-training:
    # 4 x 256 (4 heads), roberta-base's BPE, Emb (50K) at N = 50,260, 1,000 pre-training steps of 64 x 128 units on
    # Penn Treebank's train split and WikiText-2's validation split (about 8M units, six passes: three times the cpu
    # profile's); every staged GLUE task, 1,500 training examples per task with 500 held out (at most
    # 5 epochs, patience 2), three learning rates swept on SST-2 for every model, three seeds at the chosen rate, the
    # whole dev splits; the trend at 250 and 500 steps; the majority diagnosis at most 4 epochs. Measured on one
    # H100 (the committed run): the 21 jobs keep the GPU busy throughout and all but BERT-MLM's finish in about seven
    # minutes; BERT-MLM's job also runs the majority diagnosis (about three minutes more), then the whole run reads
    # everything back in about a minute and Table 3 needs a few more: about 12 minutes in all, over one 10-minute
    # call (the committed Table 3 was timed on CPU, and ProFormer, added after that run, fine-tuned on two CPU
    # cores). Per-experiment compute is in the meta files.
    small=HashFormersProfile(
        name="small", accelerator="gpu", budget_minutes=10.0, corpus="ptb-train+wikitext2-validation",
        corpus_max_words=0, bpe_vocab=0, emb_buckets=50260, emb_buckets_small=1000,
        sharing_buckets=(1000, 4096, 16384, 50260), sharing_words=0,
        layers=4, hidden=256, heads=4, intermediate=1024, seq_len=128, pt_steps=1000, pt_batch=64,
        pt_lr=5e-4, pt_lr_mlm=5e-4, pt_warmup=50, tasks=("sst2", "cola", "mrpc", "stsb", "rte"),
        ft_train_examples=1500, ft_validation_examples=500, ft_eval_examples=0, ft_epochs=5.0, ft_patience=2,
        ft_batch=32, ft_lrs=(1e-4, 3e-4, 1e-3), ft_sweep_task="sst2", ft_max_len=128, ft_seeds=(0, 1, 2),
        table6_tasks=("sst2",), trend_pt_steps=(250, 500), trend_tasks=("sst2",), diag_tasks=("cola", "mrpc"),
        diag_train_examples=(1500, 0), diag_epochs=4.0, diag_patience=2, timing_repeats=3, timing_batch=32,
        timing_examples=256, timing_base_repeats=3, timing_base_batch=8, mixed_precision="bf16", proformer=True,
    ),
    # Appendix A: 12 x 768, sequence 512, batch 128 (16 x 8 GPUs), 500K steps, peak lr 1e-4 (MLM) / 5e-5, linear,
    # 10K warm-up, Adam beta2 0.9999; fine-tuning 5 epochs, batch 32, lr 3e-5, 3 seeds, max length 128.
    paper=HashFormersProfile(
        name="paper", accelerator="gpu", budget_minutes=60.0 * 24 * 7, corpus="wikipedia+bookcorpus",
        bpe_vocab=0, emb_buckets=50260, sharing_buckets=(1000, 4096, 16384, 50260), sharing_words=0,
        layers=12, hidden=768, heads=12, intermediate=3072, add_storage="codebooks", seq_len=512, pt_steps=500_000, pt_batch=128,
        pt_lr=5e-5, pt_lr_mlm=1e-4, pt_warmup=10_000, pt_beta2=0.9999,
        tasks=("cola", "sst2", "mrpc", "stsb", "rte"), ft_train_examples=0, ft_validation_examples=1000,
        ft_eval_examples=0, ft_epochs=5.0, ft_batch=32, ft_lrs=(3e-5,), ft_max_len=128, ft_seeds=(0, 1, 2),
        timing_repeats=20, timing_batch=16,
        timing_examples=872, mixed_precision="bf16", checkpoint_every=10_000, proformer=True,
    ),
)
