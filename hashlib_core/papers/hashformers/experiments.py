"""Chapter "HashFormers": hashed word embeddings instead of a vocabulary (Xue & Aletras, EMNLP 2022).

Experiments of the chapter, each writing ``results/hashformers/<profile>/<name>.csv`` through
:class:`hashlib_core.results.ResultsStore`:

``table2``
    Table 2's memory columns counted from instantiated BERT-base-sized modules
    (:func:`hashlib_core.papers.hashformers.table2.hashformers_table2`).
``md5_example``
    The MD5 digests §3.2 prints for 'play' and 'plays' beside plain MD5 and the released HMAC-MD5 (key ``b"en"``).
``bucket_sharing`` / ``morphology``
    How MD5 and LSH spread a corpus vocabulary over N buckets (words sharing a bucket; the expectation under a
    uniform random hash), and how close they put morphological variants ('play', 'plays', 'played'): same Emb
    bucket or not, Hamming distance of the 128-bit codes (§3.2, §3.3, §3.5).
``pretraining`` / ``pretraining_curves`` / ``glue``
    Table 1 and the PRR columns of Table 2, scaled down: every variant (MD5/LSH x Emb(N)/Emb(1K)/Pool/Add/Proj) and
    both baselines (BERT-MLM with masked language modelling, BERT-S+R) are pre-trained on the corpus (HashFormers
    and BERT-S+R with Shuffle+Random, §3.6), then fine-tuned and scored on GLUE dev sets with the paper's metrics
    (:func:`hashlib_core.glue.glue_metric`).
``timing``
    Table 3: pre-training (forward + backward) and inference (forward) time per sample, all models measured side by
    side in one process, and the speed-up over BERT-MLM (Eq. 8).
``table6``
    Table 6: MD/LSH Emb and Proj with BPE subwords as the hashed units instead of words.

The corpus. The paper pre-trains on English Wikipedia + BookCorpus (§4.2). The staged data has WikiText-2's
validation and test splits only; ``smoke`` and ``small`` pre-train on the **validation** split (and train the local
BPE vocabularies on it). ``paper`` loads the paper's corpus with ``datasets`` from the Hugging Face hub, which needs
network access (it raises a clear error when ``HF_DATASETS_OFFLINE=1``).

Run every experiment of the chapter (also under ``accelerate launch``; training goes through
:func:`hashlib_core.training.train`)::

    python -m hashlib_core.papers.hashformers.experiments --profile small --device cuda
"""
from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property, partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch import nn

from hashlib_core.profiles import (
    Profile,
    ProfileSet,
    seed_everything,
    select_device,
)
from hashlib_core.profiles import load_or_run as _load_or_run
from hashlib_core.training import TrainConfig, config_digest, train
from hashlib_core.hashing.lsh import LSHBitHasher, LSHBucketHasher
from hashlib_core.hashing.md5 import KeyedMD5Hasher, md5_hex
from hashlib_core.glue import glue_metric, normalize_task
from hashlib_core.papers.hashformers.modeling import (
    HashFormerConfig,
    HashFormerForSequenceClassification,
    HashFormerForShuffleRandom,
    baseline_config,
    build_baseline,
)
from hashlib_core.papers.hashformers.objectives import ShuffleRandomCollator
from hashlib_core.params import count_parameters
from hashlib_core.results import ResultsStore, repo_root
from hashlib_core.papers.hashformers.tokenization import (
    BOS_ID,
    EOS_ID,
    HASHED_TOKEN_ID,
    NUM_SPECIAL_TOKENS,
    HashFormerTokenizer,
    bpe_to_hf_tokenizer,
    train_bpe,
    word_tokenize,
)

__all__ = [
    "CHAPTER",
    "GLUE_TEXT_COLUMNS",
    "PAPER_MD5_EXAMPLE",
    "PAPER_TASK_COLUMN",
    "PROFILES",
    "RESULT_NAMES",
    "TABLE6_VARIANTS",
    "TIMING_ROWS",
    "VARIANTS",
    "WORD_FAMILIES",
    "HashFormersProfile",
    "Resources",
    "SubwordHashFormerTokenizer",
    "Variant",
    "bucket_sharing",
    "expected_sharing_uniform",
    "glue_comparison",
    "load_or_run",
    "main",
    "md5_example",
    "morphology",
    "paper_points",
    "run",
    "run_glue",
    "run_hash_analysis",
    "run_table2",
    "run_timing",
    "run_timing_table",
    "table2_comparison",
    "table3_comparison",
    "table6_comparison",
]

CHAPTER = "hashformers"

#: Every result file of the chapter (what :func:`load_or_run` makes sure exists).
RESULT_NAMES = (
    "table2", "md5_example", "bucket_sharing", "morphology",
    "pretraining", "pretraining_curves", "glue", "timing", "table6",
)

#: The digests §3.2 prints ("MD5('play') = d077f2..."). Words -> printed hex digest. Quoted from the paper's text;
#: the test of :func:`md5_example` checks that neither plain MD5 nor the released HMAC-MD5 gives them.
PAPER_MD5_EXAMPLE = {
    "play": "d077f244def8a70e5ea758bd8352fcd8",
    "plays": "4a258d930b7d3409982d727ddbb4ba88",
}

#: The morphological families shown in the chapter (§3.3's 'play', 'plays', 'played' and a few more).
WORD_FAMILIES: tuple[tuple[str, ...], ...] = (
    ("play", "plays", "played", "playing", "player"),
    ("work", "works", "worked", "working", "worker"),
    ("nation", "nations", "national", "nationally", "nationality"),
    ("run", "runs", "running", "runner", "rerun"),
)

#: GLUE text columns (``hashlib_core.data.load_glue`` layout).
GLUE_TEXT_COLUMNS: dict[str, tuple[str, ...]] = {
    "cola": ("sentence",),
    "sst2": ("sentence",),
    "mrpc": ("sentence1", "sentence2"),
    "stsb": ("sentence1", "sentence2"),
    "rte": ("sentence1", "sentence2"),
    "qnli": ("question", "sentence"),
}
#: Table 1 column of each task we can score.
PAPER_TASK_COLUMN = {"mnli": "MNLI", "qnli": "QNLI", "qqp": "QQP", "rte": "RTE", "sst2": "SST", "mrpc": "MRPC",
                     "cola": "CoLA", "stsb": "STS"}


# ------------------------------------------------------------------------------------------------ variants
@dataclass(frozen=True)
class Variant:
    """One model of Table 1/2: a BPE baseline or a HashFormer (hash x embedding type x unit)."""

    group: str                    # Table 1/2 group key ("-", "HashFormers-MD (Ours)", ...)
    model: str                    # Table 1/2 model key ("BERT-MLM", "Emb (50K)", "Pool", ...)
    objective: str                # "mlm" or "sr"
    hash_type: str | None = None  # "md5" or "lsh" (None: BPE baseline)
    embedding_type: str | None = None
    unit: str = "word"            # "word" (Table 1) or "subword" (Table 6)

    @property
    def name(self) -> str:
        if self.hash_type is None:
            return self.model
        prefix = "MD" if self.hash_type == "md5" else "LSH"
        suffix = "" if self.unit == "word" else " [BPE]"
        return f"{prefix}-{self.model}{suffix}"

    @property
    def is_baseline(self) -> bool:
        return self.hash_type is None

    @property
    def slug(self) -> str:
        return "".join(c if c.isalnum() else "_" for c in self.name.lower()).strip("_")

    def num_buckets(self, profile: HashFormersProfile) -> int | None:
        if self.embedding_type != "emb":
            return None
        return profile.emb_buckets_small if self.model == "Emb (1K)" else profile.emb_buckets


MD_GROUP, LSH_GROUP = "HashFormers-MD (Ours)", "HashFormers-LSH (Ours)"
_HASHFORMER_MODELS = (("Emb (50K)", "emb"), ("Emb (1K)", "emb"), ("Pool", "pool"), ("Add", "add"), ("Proj", "proj"))

VARIANTS: tuple[Variant, ...] = (
    Variant("-", "BERT-MLM", "mlm"),
    Variant("-", "BERT-S+R", "sr"),
    *(Variant(group, model, "sr", hash_type, etype)
      for hash_type, group in (("md5", MD_GROUP), ("lsh", LSH_GROUP)) for model, etype in _HASHFORMER_MODELS),
)
#: Table 6: the Emb (50K) and Proj HashFormers with BPE subwords as units (Appendix C).
TABLE6_VARIANTS: tuple[Variant, ...] = tuple(
    Variant(group.replace(" (Ours)", ""), model, "sr", hash_type, etype, unit="subword")
    for hash_type, group in (("md5", MD_GROUP), ("lsh", LSH_GROUP)) for model, etype in (("Emb (50K)", "emb"),
                                                                                         ("Proj", "proj"))
)


# ------------------------------------------------------------------------------------------------ profiles
@dataclass(frozen=True)
class HashFormersProfile(Profile):
    """Knobs of the HashFormers chapter. Sizes follow §4.2 and Appendix A (Tables 4 and 5) in ``paper``."""

    #: pre-training corpus: "wikitext2-validation" (staged) or "wikipedia+bookcorpus" (hub, §4.2)
    corpus: str = "wikitext2-validation"
    #: hub datasets of the paper corpus, "repo[:config]" each (used when corpus == "wikipedia+bookcorpus")
    paper_corpus: tuple[str, ...] = ("wikimedia/wikipedia:20231101.en", "bookcorpus/bookcorpus")
    #: stop reading the corpus after this many words (0 = all of it)
    corpus_max_words: int = 0
    #: BPE vocabulary trained locally (LSH features, baselines, Table 6 units); the paper uses roberta-base's 50,265
    bpe_vocab: int = 2000
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
    #: pre-training (Table 4): sequence length in units (words or BPE pieces, specials included), steps, batch
    seq_len: int = 64
    pt_steps: int = 30
    pt_batch: int = 16
    pt_lr: float = 1e-3
    pt_lr_mlm: float = 1e-3
    pt_warmup: int = 3
    pt_beta2: float = 0.999
    pt_scheduler: str = "linear"
    #: fine-tuning (Table 5)
    tasks: tuple[str, ...] = ("sst2",)
    ft_train_examples: int = 256
    ft_eval_examples: int = 200
    ft_epochs: float = 2.0
    ft_batch: int = 32
    ft_lr: float = 1e-3
    ft_max_len: int = 64
    ft_seeds: tuple[int, ...] = (0,)
    #: which models (names of :data:`VARIANTS`); empty = all
    variants: tuple[str, ...] = ()
    #: Table 6 (BPE units for HashFormers)
    table6: bool = True
    #: Table 3: repetitions per measurement, batch size, dev examples for inference
    timing_repeats: int = 3
    timing_batch: int = 8
    timing_examples: int = 64
    mixed_precision: str = "no"
    checkpoint_every: int = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.corpus not in ("wikitext2-validation", "wikipedia+bookcorpus"):
            raise ValueError(f"corpus must be 'wikitext2-validation' or 'wikipedia+bookcorpus', got {self.corpus!r}")
        for task in self.tasks:
            key = normalize_task(task)
            if key not in GLUE_TEXT_COLUMNS:
                raise ValueError(f"task {task!r} is not staged; choose from {sorted(GLUE_TEXT_COLUMNS)}")
        if self.seq_len < 4 or self.ft_max_len < 4:
            raise ValueError("seq_len and ft_max_len must be >= 4 (room for the special tokens)")
        if self.hidden % self.heads:
            raise ValueError(f"hidden ({self.hidden}) must be a multiple of heads ({self.heads})")
        unknown = sorted(set(self.variants) - {v.name for v in VARIANTS})
        if unknown:
            raise ValueError(f"unknown variant(s) {unknown}; known: {[v.name for v in VARIANTS]}")


PROFILES: ProfileSet[HashFormersProfile] = ProfileSet(
    # CPU, whole notebook < 90 s: 2 x 64 encoder, 20 pre-training steps on 8 x 32 words, SST-2 only (128 train
    # examples, 128 dev), Emb (50K) at N = 4,096.
    smoke=HashFormersProfile(name="smoke", corpus_max_words=40_000, budget_minutes=1.0, seq_len=32, pt_batch=8,
                             pt_steps=20, ft_train_examples=128, ft_eval_examples=128, ft_max_len=48,
                             timing_repeats=2),
    # One GPU, about 10 minutes for the whole chapter (16 models): 4 x 256 encoder, N = 50,260 as the paper, the
    # whole WikiText-2 validation split (217K words) as corpus; per model 1,000 pre-training steps of 64 x 128 units
    # and at most 4,000 training examples per task for 2 epochs (about 1,100 fine-tuning steps over the five staged
    # tasks; scores on the whole dev splits). That is about 34K optimiser steps: 10 minutes at 18 ms per step, an
    # estimate for such small models in eager mode, not yet a measurement (each run records its wall time).
    # Larger runs: --pt_steps=... --ft_train_examples=0 (all) --ft_epochs=3, or --variants=... for a subset.
    small=HashFormersProfile(
        name="small", accelerator="gpu", budget_minutes=10.0, bpe_vocab=16000, emb_buckets=50260,
        sharing_buckets=(1000, 4096, 16384, 50260), sharing_words=0,
        layers=4, hidden=256, heads=4, intermediate=1024, seq_len=128, pt_steps=1000, pt_batch=64,
        pt_lr=5e-4, pt_lr_mlm=5e-4, pt_warmup=100, tasks=("cola", "sst2", "mrpc", "stsb", "rte"),
        ft_train_examples=4000, ft_eval_examples=0, ft_epochs=2.0, ft_batch=32, ft_lr=1e-4, ft_max_len=128,
        timing_repeats=10, timing_batch=32, timing_examples=872, mixed_precision="bf16",
    ),
    # Appendix A: 12 x 768, sequence 512, batch 128 (16 x 8 GPUs), 500K steps, peak lr 1e-4 (MLM) / 5e-5, linear,
    # 10K warm-up, Adam beta2 0.9999; fine-tuning 5 epochs, batch 32, lr 3e-5, 3 seeds, max length 128.
    paper=HashFormersProfile(
        name="paper", accelerator="gpu", budget_minutes=60.0 * 24 * 7, corpus="wikipedia+bookcorpus",
        bpe_vocab=50265, emb_buckets=50260, sharing_buckets=(1000, 4096, 16384, 50260), sharing_words=0,
        layers=12, hidden=768, heads=12, intermediate=3072, seq_len=512, pt_steps=500_000, pt_batch=128,
        pt_lr=5e-5, pt_lr_mlm=1e-4, pt_warmup=10_000, pt_beta2=0.9999,
        tasks=("cola", "sst2", "mrpc", "stsb", "rte"), ft_train_examples=0, ft_eval_examples=0, ft_epochs=5.0,
        ft_batch=32, ft_lr=3e-5, ft_max_len=128, ft_seeds=(0, 1, 2), timing_repeats=20, timing_batch=16,
        timing_examples=872, mixed_precision="bf16", checkpoint_every=10_000,
    ),
)


def _selected(profile: HashFormersProfile) -> list[Variant]:
    return [v for v in VARIANTS if not profile.variants or v.name in profile.variants]


# ------------------------------------------------------------------------------------------------ data
def _read_corpus(profile: HashFormersProfile) -> list[str]:
    """Non-empty text lines of the pre-training corpus (WikiText-2 headings ``= ... =`` dropped)."""
    if profile.corpus == "wikitext2-validation":
        from hashlib_core.data import load_wikitext2

        lines = (line.strip() for line in load_wikitext2()["validation"]["text"])
        lines = (line for line in lines if line and not line.startswith("="))
    else:
        lines = _hub_corpus(profile.paper_corpus)
    out, words = [], 0
    for line in lines:
        out.append(line)
        words += len(line.split())
        if profile.corpus_max_words and words >= profile.corpus_max_words:
            break
    if not out:
        raise ValueError(f"the corpus {profile.corpus!r} gave no text")
    return out


def _hub_corpus(specs: Sequence[str]) -> Iterable[str]:
    """Stream the paper's corpus (English Wikipedia + BookCorpus, §4.2) from the hub with ``datasets``."""
    if os.environ.get("HF_DATASETS_OFFLINE") == "1" or os.environ.get("HF_HUB_OFFLINE") == "1":
        raise RuntimeError(
            "the paper profile pre-trains on English Wikipedia + BookCorpus, loaded from the Hugging Face hub, but "
            "HF_DATASETS_OFFLINE/HF_HUB_OFFLINE is set: unset them on a host with network access, or pass "
            "--corpus=wikitext2-validation to use the staged corpus"
        )
    from datasets import load_dataset

    for spec in specs:
        repo, _, config = spec.partition(":")
        stream = load_dataset(repo, config or None, split="train", streaming=True)
        for record in stream:
            for line in str(record["text"]).splitlines():
                if line.strip():
                    yield line.strip()


def _bpe_units(bpe: Any, text: str) -> list[str]:
    """BPE subwords of ``text`` as strings (surrounding white space removed): Table 6's hashed units."""
    encoding = bpe.encode(text, add_special_tokens=False)
    units = [text[start:end].strip().lower() for start, end in encoding.offsets]
    return [u for u in units if u]


class SubwordHashFormerTokenizer(HashFormerTokenizer):
    """:class:`HashFormerTokenizer` whose units are BPE subwords instead of words (Table 6, Appendix C)."""

    def __init__(self, hasher: Any, bpe: Any, **kwargs: Any) -> None:
        super().__init__(hasher, **kwargs)
        self.bpe = bpe

    def _sequence(self, item: Any) -> list[str]:
        from hashlib_core.papers.hashformers.tokenization import build_word_sequence

        if isinstance(item, str):
            return build_word_sequence(_bpe_units(self.bpe, item), None, self.max_length)
        if isinstance(item, tuple) and len(item) == 2 and all(isinstance(t, str) for t in item):
            return build_word_sequence(_bpe_units(self.bpe, item[0]), _bpe_units(self.bpe, item[1]), self.max_length)
        raise TypeError(f"each input must be a str or a (str, str) pair, got {type(item).__name__}")


class Resources:
    """What every experiment of one profile shares: corpus, BPE vocabularies, unit streams and hashers."""

    def __init__(self, profile: HashFormersProfile) -> None:
        self.profile = profile

    @cached_property
    def corpus(self) -> list[str]:
        return _read_corpus(self.profile)

    @cached_property
    def feature_bpe(self) -> Any:
        """Lower-cased byte-level BPE: LSH features (§3.3) and Table 6's subword units."""
        return train_bpe(self.corpus, self.profile.bpe_vocab, lowercase=True)

    @cached_property
    def baseline_bpe(self) -> Any:
        """Cased byte-level BPE of the BERT baselines (the paper: roberta-base's vocabulary)."""
        return train_bpe(self.corpus, self.profile.bpe_vocab)

    @cached_property
    def baseline_tokenizer(self) -> Any:
        return bpe_to_hf_tokenizer(self.baseline_bpe, model_max_length=max(self.profile.seq_len, 512))

    @cached_property
    def word_stream(self) -> list[str]:
        return [w for line in self.corpus for w in word_tokenize(line)]

    @cached_property
    def subword_stream(self) -> list[str]:
        return [u for line in self.corpus for u in _bpe_units(self.feature_bpe, line)]

    @cached_property
    def bpe_id_stream(self) -> np.ndarray:
        ids = [i for line in self.corpus for i in self.baseline_bpe.encode(line, add_special_tokens=False).ids]
        return np.asarray(ids, dtype=np.int64)

    def glue(self, task: str, split: str, limit: int) -> tuple[list[Any], np.ndarray]:
        """Texts and labels of a GLUE split (a seeded sample of ``limit`` examples; 0 = all), loaded once."""
        key = (task, split, limit)
        cache = self.__dict__.setdefault("_glue", {})
        if key not in cache:
            cache[key] = _glue_split(task, split, limit, self.profile.seed)
        return cache[key]

    def hasher(self, hash_type: str, num_buckets: int | None) -> Any:
        """The token hasher of a variant: an index hasher for Emb (``num_buckets``), else a 128-bit one."""
        key = (hash_type, num_buckets)
        cache = self.__dict__.setdefault("_hashers", {})
        if key not in cache:
            if hash_type == "md5":
                cache[key] = KeyedMD5Hasher() if num_buckets is None else KeyedMD5Hasher(num_buckets=num_buckets)
            elif num_buckets is None:
                cache[key] = LSHBitHasher(self.feature_bpe)
            else:
                cache[key] = LSHBucketHasher(self.feature_bpe, num_buckets=num_buckets,
                                             feature_dim=self.feature_bpe.get_vocab_size())
        return cache[key]


class _Sequences(torch.utils.data.Dataset):
    """Fixed-length chunks of a unit stream, as rows of unit indices (``int64``)."""

    def __init__(self, unit_ids: np.ndarray, length: int) -> None:
        rows = len(unit_ids) // length
        if rows == 0:
            raise ValueError(f"the corpus has {len(unit_ids)} units, fewer than one sequence of {length}")
        self.rows = torch.from_numpy(np.ascontiguousarray(unit_ids[: rows * length].reshape(rows, length)))

    def __len__(self) -> int:
        return self.rows.shape[0]

    def __getitem__(self, i: int) -> torch.Tensor:
        return self.rows[i]


def _with_specials(body: torch.Tensor) -> torch.Tensor:
    rows = body.shape[0]
    return torch.cat([torch.full((rows, 1), BOS_ID, dtype=torch.long), body,
                      torch.full((rows, 1), EOS_ID, dtype=torch.long)], dim=1)


class _PretrainCollator:
    """Rows of unit indices -> model inputs (hashed ids or bits with ``<s>``/``</s>``) -> objective's corruption."""

    def __init__(self, variant: Variant, table: torch.Tensor, objective: Callable[[Any], dict[str, torch.Tensor]]):
        self.bits = variant.embedding_type not in (None, "emb")
        self.table = table  # (units,) ids or (units, T) bits
        self.objective = objective

    def __call__(self, rows: list[torch.Tensor]) -> dict[str, torch.Tensor]:
        units = torch.stack(rows)
        if self.bits:
            body = torch.full(units.shape, HASHED_TOKEN_ID, dtype=torch.long)
            codes = self.table[units]
            pad = torch.zeros((units.shape[0], 1, codes.shape[-1]), dtype=codes.dtype)
            batch = {"input_ids": _with_specials(body), "hash_bits": torch.cat([pad, codes, pad], dim=1)}
        else:
            batch = {"input_ids": _with_specials(self.table[units])}
        batch["attention_mask"] = torch.ones_like(batch["input_ids"])
        return self.objective(batch)


class _MLMObjective:
    """BERT-MLM's corruption (15% of tokens: 80% ``<mask>``, 10% random, 10% kept) with its own seeded generator."""

    def __init__(self, tokenizer: Any, seed: int) -> None:
        from transformers import DataCollatorForLanguageModeling

        self.collator = DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15)
        self.collator.generator = torch.Generator().manual_seed(seed)

    def __call__(self, batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        ids = batch["input_ids"]
        input_ids, labels = self.collator.torch_mask_tokens(ids.clone(), special_tokens_mask=ids.lt(NUM_SPECIAL_TOKENS))
        return {**batch, "input_ids": input_ids, "labels": labels}


def _unit_table(variant: Variant, res: Resources, stream: list[str]) -> tuple[np.ndarray, torch.Tensor]:
    """Unit indices of ``stream`` and the per-unit hashed id (Emb) or 128-bit code (the others)."""
    vocab: dict[str, int] = {}
    ids = np.fromiter((vocab.setdefault(u, len(vocab)) for u in stream), dtype=np.int64, count=len(stream))
    words = list(vocab)
    hasher = res.hasher(variant.hash_type, variant.num_buckets(res.profile))
    table = hasher.batch_index(words) if variant.embedding_type == "emb" else hasher.batch_bits(words)
    return ids, table


# ------------------------------------------------------------------------------------------------ models
def _encoder_fields(profile: HashFormersProfile) -> dict[str, Any]:
    return dict(hidden_size=profile.hidden, num_hidden_layers=profile.layers, num_attention_heads=profile.heads,
                intermediate_size=profile.intermediate)


def _hashformer_config(variant: Variant, profile: HashFormersProfile, num_buckets: int | None = None,
                       **extra: Any) -> HashFormerConfig:
    buckets = num_buckets or variant.num_buckets(profile)
    fields = dict(embedding_type=variant.embedding_type, hash_type=variant.hash_type, num_bits=128,
                  **_encoder_fields(profile), **extra)
    if buckets is not None:
        fields["num_buckets"] = buckets
    return HashFormerConfig(**fields)


def _pretraining_model(variant: Variant, profile: HashFormersProfile, vocab_size: int,
                       num_buckets: int | None = None) -> nn.Module:
    if variant.is_baseline:
        config = baseline_config(vocab_size, **_encoder_fields(profile))
        return build_baseline("mlm" if variant.objective == "mlm" else "shuffle_random", config)
    return HashFormerForShuffleRandom(_hashformer_config(variant, profile, num_buckets))


def _classifier(variant: Variant, profile: HashFormersProfile, vocab_size: int, num_labels: int,
                num_buckets: int | None = None) -> nn.Module:
    if variant.is_baseline:
        config = baseline_config(vocab_size, num_labels=num_labels, **_encoder_fields(profile))
        return build_baseline("sequence_classification", config)
    return HashFormerForSequenceClassification(
        _hashformer_config(variant, profile, num_buckets, num_labels=num_labels))


def _encoder(model: nn.Module) -> nn.Module:
    return model.hashformer if hasattr(model, "hashformer") else model.roberta


def _embedding_params(model: nn.Module) -> int:
    """Appendix B's #EmbParams of a model (HashFormer rule; a baseline's whole word-embedding matrix)."""
    encoder = _encoder(model)
    if hasattr(encoder.embeddings, "word_parameter_count"):
        return encoder.embeddings.word_parameter_count()
    return encoder.embeddings.word_embeddings.weight.numel()


def _config_digest(profile: HashFormersProfile, *parts: Any) -> str:
    return config_digest([profile.to_dict(), *parts])


def _default_checkpoints(profile: HashFormersProfile) -> Path:
    return repo_root() / "checkpoints" / CHAPTER / profile.name


def _is_main_process() -> bool:
    from accelerate import PartialState

    return PartialState().is_main_process


# ------------------------------------------------------------------------------------------------ pre-training
def _pretrain(variant: Variant, res: Resources, checkpoints: Path, progress: bool) -> tuple[nn.Module, dict, list]:
    """Pre-train one variant on the corpus; returns the model, a summary row and its loss curve."""
    profile = res.profile
    seed_everything(profile.seed)
    body = profile.seq_len - 2
    if variant.is_baseline:
        tokenizer = res.baseline_tokenizer
        vocab = len(tokenizer)
        table = torch.arange(vocab, dtype=torch.long)
        units = res.bpe_id_stream
        if variant.objective == "mlm":
            objective: Callable = _MLMObjective(tokenizer, profile.seed)
        else:
            objective = ShuffleRandomCollator(random_id_range=(NUM_SPECIAL_TOKENS, vocab), seed=profile.seed)
    else:
        vocab = 0
        stream = res.word_stream if variant.unit == "word" else res.subword_stream
        units, table = _unit_table(variant, res, stream)
        if variant.embedding_type == "emb":
            objective = ShuffleRandomCollator(
                random_id_range=(NUM_SPECIAL_TOKENS, NUM_SPECIAL_TOKENS + variant.num_buckets(profile)),
                seed=profile.seed)
        else:
            # released collators: per-token bit rate for Proj, uniform codewords for Pool (and Add)
            mode = "per_token_rate" if variant.embedding_type == "proj" else "uniform"
            objective = ShuffleRandomCollator(random_bits=mode, seed=profile.seed)
    dataset = _Sequences(units, body)
    loader = torch.utils.data.DataLoader(dataset, batch_size=profile.pt_batch, shuffle=True, drop_last=True,
                                         collate_fn=_PretrainCollator(variant, table, objective))
    model = _pretraining_model(variant, profile, vocab)
    lr = profile.pt_lr_mlm if variant.objective == "mlm" else profile.pt_lr
    config = TrainConfig(max_steps=profile.pt_steps, learning_rate=lr, warmup_steps=profile.pt_warmup,
                         scheduler=profile.pt_scheduler, adam_betas=(0.9, profile.pt_beta2), weight_decay=0.01,
                         log_every=max(1, profile.pt_steps // 30), checkpoint_every=profile.checkpoint_every,
                         mixed_precision=profile.mixed_precision, seed=profile.seed)
    out = checkpoints / f"{variant.slug}-{_config_digest(profile, variant.name)}" / "pretrain"
    result = train(model, loader, config, output_dir=out, progress=progress)
    row = {
        "name": variant.name, "group": variant.group, "model": variant.model, "unit": variant.unit,
        "objective": "MLM" if variant.objective == "mlm" else "S+R",
        "num_buckets": variant.num_buckets(profile) if not variant.is_baseline else vocab,
        "corpus_units": len(units), "distinct_units": len(table),
        "steps": result.steps, "resumed_from_step": result.resumed_from_step, "final_loss": result.final_loss,
        "wall_time_s": result.wall_time_s,
        "total_params": count_parameters(model), "emb_params": _embedding_params(model),
    }
    curve = [{"name": variant.name, "step": s, "loss": loss} for s, loss in result.losses]
    return model, row, curve


# ------------------------------------------------------------------------------------------------ fine-tuning
def _glue_split(task: str, split: str, limit: int, seed: int) -> tuple[list[Any], np.ndarray]:
    from hashlib_core.data import load_glue

    data = load_glue(task)[split]
    order = np.random.default_rng(seed).permutation(len(data))
    if limit:
        order = order[:limit]
    data = data.select(order.tolist())
    columns = GLUE_TEXT_COLUMNS[task]
    if len(columns) == 1:
        texts: list[Any] = list(data[columns[0]])
    else:
        texts = list(zip(data[columns[0]], data[columns[1]]))
    return texts, np.asarray(data["label"])


class _TextDataset(torch.utils.data.Dataset):
    def __init__(self, texts: list[Any], labels: np.ndarray) -> None:
        self.texts, self.labels = texts, labels

    def __len__(self) -> int:
        return len(self.texts)

    def __getitem__(self, i: int) -> tuple[Any, Any]:
        return self.texts[i], self.labels[i]


class _Encoder:
    """Texts (or pairs) -> model inputs with one variant's tokenisation, padded to the longest in the batch."""

    def __init__(self, variant: Variant, res: Resources, max_length: int, num_buckets: int | None = None) -> None:
        self.baseline = variant.is_baseline
        if self.baseline:
            self.tokenizer = res.baseline_tokenizer
            self.max_length = max_length
        else:
            hasher = res.hasher(variant.hash_type, num_buckets or variant.num_buckets(res.profile))
            mode = "index" if variant.embedding_type == "emb" else "bits"
            if variant.unit == "word":
                self.tokenizer = HashFormerTokenizer(hasher, mode=mode, max_length=max_length)
            else:
                self.tokenizer = SubwordHashFormerTokenizer(hasher, res.feature_bpe, mode=mode, max_length=max_length)

    def __call__(self, texts: list[Any]) -> dict[str, torch.Tensor]:
        if not self.baseline:
            return self.tokenizer(texts)
        pairs = isinstance(texts[0], tuple)
        first = [t[0] for t in texts] if pairs else list(texts)
        second = [t[1] for t in texts] if pairs else None
        enc = self.tokenizer(first, second, truncation=True, max_length=self.max_length, padding="longest",
                             return_tensors="pt", return_token_type_ids=False)
        return {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"]}


class _FinetuneCollator:
    def __init__(self, encoder: _Encoder, regression: bool) -> None:
        self.encoder, self.regression = encoder, regression

    def __call__(self, items: list[tuple[Any, Any]]) -> dict[str, torch.Tensor]:
        batch = self.encoder([t for t, _ in items])
        labels = [y for _, y in items]
        batch["labels"] = torch.tensor(labels, dtype=torch.float32 if self.regression else torch.long)
        return batch


@torch.no_grad()
def _predict(model: nn.Module, encoder: _Encoder, texts: list[Any], batch_size: int = 64) -> np.ndarray:
    model.eval()
    device = next(model.parameters()).device
    outputs = []
    for start in range(0, len(texts), batch_size):
        batch = {k: v.to(device) for k, v in encoder(texts[start : start + batch_size]).items()}
        outputs.append(model(**batch).logits.float().cpu())
    model.train()
    return torch.cat(outputs).numpy()


def _finetune(variant: Variant, pretrained: nn.Module, res: Resources, task: str, seed: int,
              checkpoints: Path, progress: bool) -> dict[str, Any]:
    profile = res.profile
    seed_everything(seed)
    regression = task == "stsb"
    num_labels = 1 if regression else (3 if task == "mnli" else 2)
    train_texts, train_labels = res.glue(task, "train", profile.ft_train_examples)
    dev_texts, dev_labels = res.glue(task, "validation", profile.ft_eval_examples)
    encoder = _Encoder(variant, res, profile.ft_max_len)
    vocab = len(res.baseline_tokenizer) if variant.is_baseline else 0
    model = _classifier(variant, profile, vocab, num_labels)
    _encoder(model).load_state_dict(_encoder(pretrained).state_dict())
    loader = torch.utils.data.DataLoader(_TextDataset(train_texts, train_labels), batch_size=profile.ft_batch,
                                         shuffle=True, collate_fn=_FinetuneCollator(encoder, regression))
    steps = max(1, math.ceil(len(loader) * profile.ft_epochs))
    # Table 5: AdamW eps 1e-6, no weight decay, cosine with hard restarts (5 cycles), 6% warm-up
    config = TrainConfig(max_steps=steps, learning_rate=profile.ft_lr, weight_decay=0.0, adam_eps=1e-6,
                         scheduler="cosine_with_restarts", scheduler_cycles=5, warmup_steps=int(0.06 * steps),
                         log_every=max(1, steps // 10), mixed_precision=profile.mixed_precision, seed=seed)
    out = checkpoints / f"{variant.slug}-{_config_digest(profile, variant.name)}" / f"{task}-seed{seed}"
    result = train(model, loader, config, output_dir=out, progress=progress)
    logits = _predict(model, encoder, dev_texts)
    scores = glue_metric(task, logits, dev_labels)
    return {"name": variant.name, "task": task, "seed": seed, "score": 100.0 * scores["score"],
            "train_examples": len(train_texts), "dev_examples": len(dev_texts), "steps": result.steps,
            "wall_time_s": result.wall_time_s}


def _glue_rows(variants: Sequence[Variant], res: Resources, checkpoints: Path, progress: bool
               ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Pre-train and fine-tune ``variants``; returns (pre-training summary, loss curves, GLUE scores per run)."""
    summary, curves, scores = [], [], []
    for variant in variants:
        if progress and _is_main_process():
            print(f"[{CHAPTER}] {variant.name}: pre-training, then {', '.join(res.profile.tasks)}", flush=True)
        model, row, curve = _pretrain(variant, res, checkpoints, progress)
        summary.append(row)
        curves += curve
        for task in (normalize_task(t) for t in res.profile.tasks):
            for seed in res.profile.ft_seeds:
                scores.append(_finetune(variant, model, res, task, seed, checkpoints, progress))
        del model
    return pd.DataFrame(summary), pd.DataFrame(curves), pd.DataFrame(scores)


def _glue_table(summary: pd.DataFrame, runs: pd.DataFrame, tasks: Sequence[str]) -> pd.DataFrame:
    """One row per variant: mean score per task (over seeds), their average, and PRR vs our BERT-MLM (Eq. 4)."""
    mean = runs.groupby(["name", "task"])["score"].mean().unstack("task")
    std = runs.groupby(["name", "task"])["score"].std(ddof=0).unstack("task")
    table = summary[["name", "group", "model", "unit", "objective", "num_buckets", "emb_params", "total_params"]]
    table = table.set_index("name")
    columns = [PAPER_TASK_COLUMN[t] for t in tasks]
    for task, column in zip(tasks, columns):
        table[column] = mean[task]
        table[f"{column}_std"] = std[task]
    table["Avg"] = table[columns].mean(axis=1, skipna=False)  # NaN if a task score is NaN (constant predictions)
    if "BERT-MLM" in table.index:
        base = table.loc["BERT-MLM"]
        for column in columns + ["Avg"]:
            table[f"PRR_{column}"] = 100.0 * table[column] / base[column]
    table["split"] = "GLUE dev (validation)"
    return table.reset_index()


# ------------------------------------------------------------------------------------------------ hashing pictures
def md5_example() -> pd.DataFrame:
    """§3.2's printed MD5 digests beside plain MD5 and the released HMAC-MD5 with key ``b"en"``."""
    rows = []
    for word, printed in PAPER_MD5_EXAMPLE.items():
        plain, keyed = md5_hex(word, key=None), md5_hex(word)
        rows.append({"word": word, "paper": printed, "plain_md5": plain, "hmac_md5_key_en": keyed,
                     "plain_matches": plain == printed, "hmac_matches": keyed == printed})
    return pd.DataFrame(rows)


def expected_sharing_uniform(num_words: int, num_buckets: int) -> float:
    """Expected number of words that share their bucket with another word when ``num_words`` distinct words are
    hashed uniformly at random into ``num_buckets`` buckets: ``V (1 - (1 - 1/N)^(V-1))``."""
    if num_words < 0 or num_buckets < 1:
        raise ValueError("num_words must be >= 0 and num_buckets >= 1")
    return num_words * (1.0 - (1.0 - 1.0 / num_buckets) ** max(num_words - 1, 0))


def bucket_sharing(words: Sequence[str], feature_bpe: Any, bucket_counts: Sequence[int]) -> pd.DataFrame:
    """For each N: how many of ``words`` share an Emb bucket with another word under MD5 and under LSH."""
    rows = []
    for n in bucket_counts:
        for name, hasher in (("MD5", KeyedMD5Hasher(num_buckets=n)),
                             ("LSH", LSHBucketHasher(feature_bpe, num_buckets=n,
                                                     feature_dim=feature_bpe.get_vocab_size()))):
            ids = hasher.batch_index(words).numpy()
            _, inverse, counts = np.unique(ids, return_inverse=True, return_counts=True)
            rows.append({"hash": name, "num_buckets": n, "words": len(words), "buckets_used": len(counts),
                         "words_sharing": int((counts[inverse] > 1).sum()), "largest_bucket": int(counts.max()),
                         "expected_sharing_uniform": expected_sharing_uniform(len(words), n)})
    return pd.DataFrame(rows)


def morphology(feature_bpe: Any, num_buckets: int, families: Sequence[Sequence[str]] = WORD_FAMILIES
               ) -> pd.DataFrame:
    """Each word of a family beside its first word: same Emb bucket? Hamming distance of the 128-bit codes?"""
    md5_index, md5_bits = KeyedMD5Hasher(num_buckets=num_buckets), KeyedMD5Hasher()
    lsh_index = LSHBucketHasher(feature_bpe, num_buckets=num_buckets, feature_dim=feature_bpe.get_vocab_size())
    lsh_bits = LSHBitHasher(feature_bpe)
    rows = []
    for family in families:
        base = family[0]
        for word in family[1:]:
            rows.append({
                "base": base, "word": word, "num_buckets": num_buckets,
                "md5_same_bucket": md5_index.index(base) == md5_index.index(word),
                "lsh_same_bucket": lsh_index.index(base) == lsh_index.index(word),
                "lsh_bucket_distance": abs(lsh_index.index(base) - lsh_index.index(word)),
                "md5_hamming": int((md5_bits.bits(base) != md5_bits.bits(word)).sum()),
                "lsh_hamming": int((lsh_bits.bits(base) != lsh_bits.bits(word)).sum()),
            })
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------------------------ timing
def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _pretraining_step(model: nn.Module, batch: dict[str, torch.Tensor]) -> None:
    model.zero_grad(set_to_none=True)
    model(**batch).loss.backward()


@torch.no_grad()
def _inference_pass(model: nn.Module, batches: list[dict[str, torch.Tensor]]) -> None:
    for batch in batches:
        model(**batch)


def _time_call(fn: Callable[[], Any], repeats: int, device: torch.device) -> float:
    fn()  # warm-up
    _sync(device)
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    _sync(device)
    return (time.perf_counter() - start) / repeats


#: Table 3 rows: (group, model) keys of data/paper_tables/hashformers_table3.csv -> the variant that is timed.
TIMING_ROWS = (("BERT", "-MLM", "BERT-MLM"), ("BERT", "-S+R", "BERT-S+R"),
               ("HASHFORMERS (Ours)", "-Emb", "MD-Emb (50K)"), ("HASHFORMERS (Ours)", "-Pool", "MD-Pool"),
               ("HASHFORMERS (Ours)", "-Add", "MD-Add"), ("HASHFORMERS (Ours)", "-Proj", "MD-Proj"))
#: The paper's vocabulary and bucket sizes, used for timing whatever the profile (weights are random: timing only).
TIMING_VOCAB, TIMING_BUCKETS = 50265, 50260


def run_timing_table(res: Resources, device: torch.device) -> pd.DataFrame:
    """Table 3: ms per sample of one pre-training step (forward + backward, objective head and loss included) at
    sequence length ``seq_len``, and of inference (forward of the GLUE classifier on SST-2 dev sentences, each model
    with its own tokenisation, padded to the longest in the batch); hashing/tokenisation is not timed."""
    profile = res.profile
    by_name = {v.name: v for v in VARIANTS}
    gen = torch.Generator().manual_seed(profile.seed)
    texts, _ = res.glue("sst2", "validation", profile.timing_examples)
    rows = []
    for group, model_key, name in TIMING_ROWS:
        variant = by_name[name]
        buckets = TIMING_BUCKETS if variant.embedding_type == "emb" else None
        pre = _pretraining_model(variant, profile, TIMING_VOCAB, buckets).to(device)
        shape = (profile.timing_batch, profile.seq_len)
        batch: dict[str, torch.Tensor] = {"attention_mask": torch.ones(shape, dtype=torch.long)}
        if variant.is_baseline:
            batch["input_ids"] = torch.randint(NUM_SPECIAL_TOKENS, TIMING_VOCAB, shape, generator=gen)
        elif variant.embedding_type == "emb":
            batch["input_ids"] = torch.randint(NUM_SPECIAL_TOKENS, NUM_SPECIAL_TOKENS + TIMING_BUCKETS, shape,
                                               generator=gen)
        else:
            batch["input_ids"] = torch.full(shape, HASHED_TOKEN_ID, dtype=torch.long)
            batch["hash_bits"] = torch.randint(0, 2, (*shape, 128), generator=gen, dtype=torch.uint8)
        batch["labels"] = (torch.randint(0, TIMING_VOCAB, shape, generator=gen) if variant.objective == "mlm"
                           else torch.randint(0, 3, shape, generator=gen))
        batch = {k: v.to(device) for k, v in batch.items()}

        pt = _time_call(partial(_pretraining_step, pre, batch), profile.timing_repeats, device)
        pt /= profile.timing_batch
        del pre
        clf = _classifier(variant, profile, TIMING_VOCAB, 2, buckets).to(device).eval()
        encoder = _Encoder(variant, res, profile.ft_max_len, buckets)
        batches = [{k: v.to(device) for k, v in encoder(texts[i : i + profile.timing_batch]).items()}
                   for i in range(0, len(texts), profile.timing_batch)]
        mean_len = float(np.mean([b["attention_mask"].sum(1).float().mean().item() for b in batches]))

        inf = _time_call(partial(_inference_pass, clf, batches), profile.timing_repeats, device) / len(texts)
        rows.append({"group": group, "model": model_key, "name": name, "device": device.type,
                     "pt_ms_per_sample": 1000.0 * pt, "infer_ms_per_sample": 1000.0 * inf,
                     "infer_mean_tokens": mean_len})
        del clf
    table = pd.DataFrame(rows)
    base = table.set_index("name").loc["BERT-MLM"]
    table["pt_speedup"] = base["pt_ms_per_sample"] / table["pt_ms_per_sample"]
    table["infer_speedup"] = base["infer_ms_per_sample"] / table["infer_ms_per_sample"]
    return table


# ------------------------------------------------------------------------------------------------ comparisons
def table2_comparison(table2: pd.DataFrame) -> pd.DataFrame:
    """Our Table 2 counts beside the printed cells (paper_vs_ours on group + model)."""
    from hashlib_core.papers.hashformers.table2 import PAPER_COLUMNS
    from hashlib_core.results import load_paper_table, paper_vs_ours

    columns = {PAPER_COLUMNS[c]: {"total": "total_params", "emb": "emb_params"}.get(c, c) for c in PAPER_COLUMNS}
    out = paper_vs_ours(load_paper_table("hashformers_table2"), table2, on=["group", "model"], columns=columns)
    source = out.attrs["source"]
    out = out[out["paper"] != "-"].reset_index(drop=True)  # BERT-MLM is the baseline, not a row of Table 2
    out.attrs["source"] = source
    return out


def glue_comparison(glue: pd.DataFrame, tasks: Sequence[str]) -> pd.DataFrame:
    """Our GLUE dev scores (Table 1 columns) and PRR vs our BERT-MLM (Table 2's PRR columns) beside the paper's."""
    from hashlib_core.results import load_paper_table, paper_vs_ours

    columns = [PAPER_TASK_COLUMN[normalize_task(t)] for t in tasks]
    scores = paper_vs_ours(load_paper_table("hashformers_table1"), glue, on=["group", "model"],
                           columns={c: c for c in columns})
    prr = paper_vs_ours(load_paper_table("hashformers_table2"), glue, on=["group", "model"],
                        columns={f"PRR_{c}": f"PRR_{c}" for c in columns if f"PRR_{c}" in glue.columns})
    out = pd.concat([scores, prr], ignore_index=True)
    out = out[out["ours"] != "-"].reset_index(drop=True)
    out.attrs["source"] = "data/paper_tables/hashformers_table1.csv and hashformers_table2.csv (PRR columns)"
    return out


def paper_points(tasks: Sequence[str], table2: pd.DataFrame) -> pd.DataFrame:
    """The paper's (embedding parameters, GLUE average over ``tasks``) per model, for the parameters picture.

    The average is recomputed from Table 1 over the tasks we ran (the paper's Avg covers eight tasks); embedding
    parameters are Table 2's printed cells, and for the two BERT baselines (not rows of Table 2) our count of the
    50,265 x 768 matrix (``table2``'s BERT-MLM row).
    """
    from hashlib_core.results import load_paper_table, parse_printed

    columns = [PAPER_TASK_COLUMN[normalize_task(t)] for t in tasks]
    t1 = load_paper_table("hashformers_table1")
    t2 = load_paper_table("hashformers_table2").set_index(["group", "model"])
    bert_emb = float(table2.set_index("model").loc["BERT-MLM", "emb_params"])
    rows = []
    for _, r in t1.iterrows():
        key = (r["group"], r["model"])
        if key in t2.index:
            emb = parse_printed(t2.loc[key, "#Emb_Params"]).value
        elif r["model"] in ("BERT-MLM", "BERT-S+R"):
            emb = bert_emb
        else:
            continue
        rows.append({"group": r["group"], "model": r["model"], "emb_params": emb,
                     "avg": float(np.mean([parse_printed(r[c]).value for c in columns]))})
    return pd.DataFrame(rows)


def _speedup(text: str) -> str:
    return str(text).replace("x", "").strip()


def table3_comparison(timing: pd.DataFrame) -> pd.DataFrame:
    """Table 3 as printed beside our ratios (speed-up over BERT-MLM, Eq. 8) and our times per sample."""
    from hashlib_core.results import load_paper_table

    paper = load_paper_table("hashformers_table3")
    merged = paper.merge(timing, on=["group", "model"], how="inner")
    return pd.DataFrame({
        "model": merged["group"].str.replace(" (Ours)", "", regex=False) + " " + merged["model"],
        "timed variant": merged["name"],
        "paper PT speed-up": merged["PT_Speed-up_Rate"].map(_speedup),
        "ours PT speed-up": merged["pt_speedup"].round(2),
        "paper infer speed-up": merged["Infer_Speed-up_Rate"].map(_speedup),
        "ours infer speed-up": merged["infer_speedup"].round(2),
        "paper PT ms/sample (V100)": merged["PT_Time_ms_per_sample"],
        f"ours PT ms/sample ({merged['device'].iloc[0]})": merged["pt_ms_per_sample"].round(2),
        "paper infer ms/sample (V100)": merged["Infer_Time_ms_per_sample"],
        f"ours infer ms/sample ({merged['device'].iloc[0]})": merged["infer_ms_per_sample"].round(3),
        "ours mean tokens (infer)": merged["infer_mean_tokens"].round(1),
    })


def table6_comparison(glue: pd.DataFrame, table6: pd.DataFrame, tasks: Sequence[str]) -> pd.DataFrame:
    """Table 6: subword (BPE units) vs word HashFormers, ours beside the paper's, per task."""
    from hashlib_core.results import load_paper_table, paper_vs_ours

    columns = [PAPER_TASK_COLUMN[normalize_task(t)] for t in tasks]
    word = glue[glue["name"].isin([v.name.replace(" [BPE]", "") for v in TABLE6_VARIANTS])].copy()
    word["group"] = word["group"].str.replace(" (Ours)", "", regex=False)
    ours = pd.concat([table6.assign(token="subword"), word.assign(token="word")], ignore_index=True)
    return paper_vs_ours(load_paper_table("hashformers_table6"), ours, on=["group", "model", "token"],
                         columns={c: c for c in columns})


# ------------------------------------------------------------------------------------------------ runners
def _store(profile: HashFormersProfile) -> ResultsStore:
    return ResultsStore(CHAPTER, profile.name)


def _write(store: ResultsStore, name: str, table: pd.DataFrame, profile: HashFormersProfile, device: Any,
           start: float) -> None:
    if _is_main_process():
        store.write_table(name, table, seed=profile.seed, device=device, wall_time_s=time.perf_counter() - start,
                          config=profile.to_dict())


def run_table2(profile: HashFormersProfile) -> ResultsStore:
    """Table 2's memory columns (BERT-base-sized modules on the meta device; the same in every profile)."""
    from hashlib_core.papers.hashformers.table2 import hashformers_table2

    start = time.perf_counter()
    store = _store(profile)
    with torch.no_grad():
        _write(store, "table2", hashformers_table2(), profile, "cpu", start)
    return store


def run_hash_analysis(profile: HashFormersProfile, res: Resources | None = None) -> ResultsStore:
    """MD5 example, bucket sharing over the corpus vocabulary and morphological families (no training)."""
    res = res or Resources(profile)
    store = _store(profile)
    start = time.perf_counter()
    _write(store, "md5_example", md5_example(), profile, "cpu", start)
    start = time.perf_counter()
    counts: dict[str, int] = {}
    for w in res.word_stream:
        counts[w] = counts.get(w, 0) + 1
    words = sorted(counts, key=lambda w: (-counts[w], w))
    if profile.sharing_words:
        words = words[: profile.sharing_words]
    _write(store, "bucket_sharing", bucket_sharing(words, res.feature_bpe, profile.sharing_buckets), profile, "cpu",
           start)
    start = time.perf_counter()
    _write(store, "morphology", morphology(res.feature_bpe, profile.emb_buckets), profile, "cpu", start)
    return store


def run_glue(profile: HashFormersProfile, res: Resources | None = None, *, checkpoint_dir: Path | None = None,
             progress: bool = True) -> ResultsStore:
    """Pre-train + fine-tune every selected variant (Table 1, Table 2's PRR) and, if enabled, Table 6."""
    res = res or Resources(profile)
    store = _store(profile)
    checkpoints = Path(checkpoint_dir) if checkpoint_dir is not None else _default_checkpoints(profile)
    device = select_device(profile.device)
    tasks = [normalize_task(t) for t in profile.tasks]
    start = time.perf_counter()
    summary, curves, runs = _glue_rows(_selected(profile), res, checkpoints, progress)
    _write(store, "pretraining", summary, profile, device, start)
    _write(store, "pretraining_curves", curves, profile, device, start)
    _write(store, "glue", _glue_table(summary, runs, tasks), profile, device, start)
    start = time.perf_counter()
    if profile.table6:
        summary6, _, runs6 = _glue_rows(TABLE6_VARIANTS, res, checkpoints, progress)
        table6 = _glue_table(summary6, runs6, tasks)
    else:
        table6 = pd.DataFrame(columns=["name", "group", "model", "unit"])
    _write(store, "table6", table6, profile, device, start)
    return store


def run_timing(profile: HashFormersProfile, res: Resources | None = None) -> ResultsStore:
    """Table 3, every model timed in this one process on ``profile.device``."""
    res = res or Resources(profile)
    device = select_device(profile.device)
    seed_everything(profile.seed)
    start = time.perf_counter()
    store = _store(profile)
    _write(store, "timing", run_timing_table(res, device), profile, device, start)
    return store


def run(profile: HashFormersProfile, *, checkpoint_dir: Path | None = None, progress: bool = True) -> ResultsStore:
    """Every experiment of the chapter for ``profile``."""
    res = Resources(profile)
    run_table2(profile)
    run_hash_analysis(profile, res)
    run_glue(profile, res, checkpoint_dir=checkpoint_dir, progress=progress)
    return run_timing(profile, res)


def load_or_run(profile: HashFormersProfile, *, progress: bool = False) -> ResultsStore:
    """What the chapter notebook calls (:func:`hashlib_core.profiles.load_or_run`): ``paper`` shows the
    files of ``python -m hashlib_core.papers.hashformers.experiments --profile paper``; ``smoke``/``small`` compute
    in-process unless the same configuration's results exist at the same clean commit."""
    return _load_or_run(_store(profile), RESULT_NAMES, profile, lambda: run(profile, progress=progress))


def main(argv: Sequence[str] | None = None) -> int:
    profile = PROFILES.from_cli(argv, description=__doc__.splitlines()[0])
    store = run(profile)
    if _is_main_process():
        with pd.option_context("display.width", 200, "display.max_columns", 30):
            for name in ("glue", "timing"):
                print(f"\n== {name}\n{store.read_table(name).to_string(index=False)}")
        print(f"\nwritten to {store.dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
