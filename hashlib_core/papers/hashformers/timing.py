"""Table 3: pre-training and inference time per sample, every model timed side by side in one process (Eq. 8).

Every model of Table 3 is timed at two encoder sizes ("shapes"): the profile's own (the models the chapter trains)
and, when asked for, BERT-base (12 layers, d = 768, 12 heads, FFN 3,072, pre-training sequence 512: the paper's
size, :data:`BERT_BASE`). The speed-ups (Eq. 8) are computed within each shape. Weights are random (a timing does
not depend on their values) and hashing/tokenisation happen before the clock starts. BERT-MLM is timed with its
full MLM head, scoring every position over RoBERTa's 50,265 tokens, as the paper (and Hugging Face's
``BertForMaskedLM``) compute it, even where pre-training uses the masked-only head
(:class:`~hashlib_core.papers.hashformers.baselines.RobertaForMaskedOnlyLM`).

CANINE-C, which the paper times at inference only, is timed beside them (:func:`canine_classifier`): Hugging Face's
``CanineForSequenceClassification`` with the released google/canine-c architecture (``CanineConfig()``) at
BERT-base's size, and the same architecture at the profile's layers and width, on the same SST-2 sentences as
Unicode code points (``CanineTokenizer``, truncated at :data:`CANINE_MAX_CHARS`). Its hashing of code points happens
inside the model and is timed, as it is part of CANINE's forward pass.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Literal

import numpy as np
import pandas as pd
import torch
from torch import nn
from transformers import CanineConfig, CanineForSequenceClassification, CanineTokenizer

from hashlib_core.bpe import NUM_SPECIAL_TOKENS
from hashlib_core.papers.hashformers.baselines import baseline_config, build_baseline
from hashlib_core.papers.hashformers.data import Resources
from hashlib_core.papers.hashformers.finetuning import Encoder
from hashlib_core.papers.hashformers.pretraining import classifier, encoder_fields, pretraining_model
from hashlib_core.papers.hashformers.profiles import MODELS, PROFILES, HashFormersProfile, ModelSpec
from hashlib_core.papers.hashformers.tokenization import HASHED_TOKEN_ID
from hashlib_core.profiles import synchronize

__all__ = ["TIMING_ROWS", "CANINE_ROW", "CANINE_MAX_CHARS", "HASHFORMERS_GROUP", "TIMING_VOCAB", "TIMING_BUCKETS",
           "SCALES", "EncoderShape", "BERT_BASE", "canine_classifier", "hashformer_rows", "other_inference_ms",
           "timing_pretraining_model", "timing_table", "timing_at"]


def _pretraining_step(model: nn.Module, batch: dict[str, torch.Tensor]) -> None:
    model.zero_grad(set_to_none=True)
    model(**batch).loss.backward()


@torch.no_grad()
def _inference_pass(model: nn.Module, batches: list[dict[str, torch.Tensor]]) -> None:
    for batch in batches:
        model(**batch)


def _time_in_turn(calls: list[Callable[[], Any]], repeats: int, device: torch.device,
                  warmups: list[Callable[[], Any]] | None = None,
                  after: list[Callable[[], Any]] | None = None) -> list[float]:
    """Mean seconds of each of ``calls``: one warm-up call each (``warmups``, default the calls themselves), then
    ``repeats`` rounds that call every one in turn, so that a change of the machine's load falls on all of them
    alike; ``after[i]`` runs after each call of ``calls[i]``, outside the clock."""
    for fn in warmups or calls:
        fn()
    totals = [0.0] * len(calls)
    for _ in range(repeats):
        for i, fn in enumerate(calls):
            synchronize(device)
            start = time.perf_counter()
            fn()
            synchronize(device)
            totals[i] += time.perf_counter() - start
            if after:
                after[i]()
    return [total / repeats for total in totals]


#: Table 3 rows: (group, model) keys of data/paper_tables/hashformers_table3.csv -> the variant that is timed.
TIMING_ROWS = (("BERT", "-MLM", "BERT-MLM"), ("BERT", "-S+R", "BERT-S+R"),
               ("HASHFORMERS (Ours)", "-Emb", "MD-Emb (50K)"), ("HASHFORMERS (Ours)", "-Pool", "MD-Pool"),
               ("HASHFORMERS (Ours)", "-Add", "MD-Add"), ("HASHFORMERS (Ours)", "-Proj", "MD-Proj"))
#: The group of Table 3's HashFormer rows.
HASHFORMERS_GROUP = "HASHFORMERS (Ours)"
#: Table 3's CANINE-C row (inference only: the paper prints no pre-training time for it).
CANINE_ROW = ("-", "CANINE-C", "CANINE-C")
#: CANINE's input length in characters (Clark et al., 2022: sequences of 2,048 code points).
CANINE_MAX_CHARS = 2048
#: The paper's vocabulary and bucket sizes, used for timing whatever the profile (weights are random: timing only).
TIMING_VOCAB, TIMING_BUCKETS = 50265, 50260
#: The ``scale`` column's values: the profile's encoder, and the paper's (BERT-base, or a stand-in in tests).
SCALES = ("profile", "paper")


def _positive_int(name: str, value: Any, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class EncoderShape:
    """An encoder size at which Table 3 is timed: layers x width, attention heads, FFN width and the pre-training
    sequence length (units per sample, specials included)."""

    label: str
    layers: int
    hidden: int
    heads: int
    intermediate: int
    seq_len: int

    #: positions of the baselines' and HashFormers' position tables (514, two kept for RoBERTa's padding offset)
    MAX_SEQ_LEN = 512

    def __post_init__(self) -> None:
        if not isinstance(self.label, str) or not self.label:
            raise ValueError(f"label must be a non-empty string, got {self.label!r}")
        for name in ("layers", "hidden", "heads", "intermediate"):
            _positive_int(name, getattr(self, name))
        if _positive_int("seq_len", self.seq_len, 4) > self.MAX_SEQ_LEN:
            raise ValueError(f"seq_len must be <= {self.MAX_SEQ_LEN} (the models' position table), got "
                             f"{self.seq_len}")
        if self.hidden % self.heads:
            raise ValueError(f"hidden ({self.hidden}) must be a multiple of heads ({self.heads})")

    @classmethod
    def of(cls, profile: HashFormersProfile, label: str = "profile") -> "EncoderShape":
        """The encoder size (and pre-training sequence length) of ``profile``."""
        return cls(label, profile.layers, profile.hidden, profile.heads, profile.intermediate, profile.seq_len)

    @property
    def description(self) -> str:
        """What the ``shape`` column says: ``"BERT-base (12 x 768)"``."""
        return f"{self.label} ({self.layers} x {self.hidden})"

    def apply(self, profile: HashFormersProfile) -> HashFormersProfile:
        """``profile`` with this encoder size and pre-training sequence length (every other setting kept)."""
        return profile.override(layers=self.layers, hidden=self.hidden, heads=self.heads,
                                intermediate=self.intermediate, seq_len=self.seq_len)


#: BERT-base, the paper's size (Appendix A; the ``paper`` profile): 12 x 768, 12 heads, FFN 3,072, sequence 512.
BERT_BASE = EncoderShape.of(PROFILES.get("paper"), "BERT-base")


def timing_pretraining_model(spec: ModelSpec, profile: HashFormersProfile, num_buckets: int | None = None
                             ) -> nn.Module:
    """The pre-training model Table 3 times for ``spec`` at ``profile``'s size: BERT-MLM with the full MLM head
    over every position (``RobertaForMaskedLM``, as the paper and HF compute it, never the masked-only head
    pre-training may use) and RoBERTa's vocabulary (:data:`TIMING_VOCAB`); the others as pre-trained."""
    if spec.is_baseline:
        config = baseline_config(TIMING_VOCAB, **encoder_fields(profile))
        kind = "mlm" if spec.objective == "mlm" else "shuffle_random"
        return build_baseline(kind, config, masked_only=False)
    return pretraining_model(spec, profile, TIMING_VOCAB, num_buckets)


def canine_classifier(shape: EncoderShape, num_labels: int = 2) -> CanineForSequenceClassification:
    """CANINE-C at ``shape`` with random weights (a timing does not depend on them): ``CanineConfig()``, the released
    google/canine-c architecture (8 hash functions into 16,384 buckets, downsampling by 4, one local character layer
    before and one after the deep stack), with the shape's layers, width, heads and FFN width. At
    :data:`BERT_BASE` this is ``CanineConfig()`` itself (12 x 768, 12 heads, FFN 3,072)."""
    hashes = CanineConfig().num_hash_functions
    if shape.hidden % hashes:
        raise ValueError(f"CANINE-C splits its width among {hashes} hash embeddings, so the shape's hidden "
                         f"({shape.hidden}) must be a multiple of {hashes}")
    config = CanineConfig(num_hidden_layers=shape.layers, hidden_size=shape.hidden, num_attention_heads=shape.heads,
                          intermediate_size=shape.intermediate, num_labels=num_labels)
    return CanineForSequenceClassification(config)


def _canine_inputs(texts: list[str], batch: int, device: torch.device) -> list[dict[str, torch.Tensor]]:
    """The sentences as CANINE reads them (code points between its [CLS] and [SEP], truncated at
    :data:`CANINE_MAX_CHARS`), in batches of ``batch`` padded to the longest, rounded up to a multiple of the
    downsampling rate (CANINE pools every 4 characters into one position and needs at least one such block)."""
    if not all(isinstance(text, str) for text in texts):
        raise TypeError("CANINE-C is timed on single sentences (SST-2): every text must be a str")
    tokenizer = CanineTokenizer(model_max_length=CANINE_MAX_CHARS)
    rate = CanineConfig().downsampling_rate
    return [{k: v.to(device) for k, v in tokenizer(texts[i : i + batch], padding="longest", truncation=True,
                                                   max_length=CANINE_MAX_CHARS, pad_to_multiple_of=rate,
                                                   return_tensors="pt").items()}
            for i in range(0, len(texts), batch)]


def hashformer_rows(timing: pd.DataFrame) -> pd.DataFrame:
    """The HashFormers' rows of a timing table (group :data:`HASHFORMERS_GROUP`; a table written before the
    ``group`` column held them under names not starting with "BERT")."""
    if "group" in timing.columns:
        return timing[timing["group"] == HASHFORMERS_GROUP]
    names = timing["name"] if "name" in timing.columns else timing.index.to_series()
    return timing[~names.astype(str).str.startswith("BERT").to_numpy()]


def other_inference_ms(timing: pd.DataFrame) -> pd.Series:
    """Inference ms per sample of the models CANINE-C is compared with (the BERT baselines and the HashFormers),
    from a timing table indexed by name."""
    return pd.concat([timing.loc[["BERT-MLM", "BERT-S+R"], "infer_ms_per_sample"],
                      hashformer_rows(timing)["infer_ms_per_sample"]])


def _pretraining_batch(spec: ModelSpec, shape: tuple[int, int], gen: torch.Generator) -> dict[str, torch.Tensor]:
    batch: dict[str, torch.Tensor] = {"attention_mask": torch.ones(shape, dtype=torch.long)}
    if spec.is_baseline:
        batch["input_ids"] = torch.randint(NUM_SPECIAL_TOKENS, TIMING_VOCAB, shape, generator=gen)
    elif spec.embedding_type == "emb":
        batch["input_ids"] = torch.randint(NUM_SPECIAL_TOKENS, NUM_SPECIAL_TOKENS + TIMING_BUCKETS, shape,
                                           generator=gen)
    else:
        batch["input_ids"] = torch.full(shape, HASHED_TOKEN_ID, dtype=torch.long)
        batch["hash_bits"] = torch.randint(0, 2, (*shape, 128), generator=gen, dtype=torch.uint8)
    batch["labels"] = (torch.randint(0, TIMING_VOCAB, shape, generator=gen) if spec.objective == "mlm"
                       else torch.randint(0, 3, shape, generator=gen))
    return batch


def _time_shape(res: Resources, shape: EncoderShape, scale: str, repeats: int, pt_batch: int, texts: list[Any],
                gen: torch.Generator, device: torch.device) -> pd.DataFrame:
    """Table 3's rows at one encoder size, speed-ups over that size's BERT-MLM: the pre-training models timed in
    turn, then the classifiers and CANINE-C."""
    profile = shape.apply(res.profile)
    by_name = {m.name: m for m in MODELS}
    specs = [by_name[name] for _, _, name in TIMING_ROWS]
    buckets = [TIMING_BUCKETS if spec.embedding_type == "emb" else None for spec in specs]

    models = [timing_pretraining_model(spec, profile, n).to(device) for spec, n in zip(specs, buckets)]
    batches = [{k: v.to(device) for k, v in _pretraining_batch(spec, (pt_batch, shape.seq_len), gen).items()}
               for spec in specs]
    pt = _time_in_turn([partial(_pretraining_step, m, b) for m, b in zip(models, batches)], repeats, device,
                       after=[partial(m.zero_grad, set_to_none=True) for m in models])
    del models, batches

    clfs = [classifier(spec, profile, TIMING_VOCAB, 2, n).to(device).eval() for spec, n in zip(specs, buckets)]
    clfs.append(canine_classifier(shape).to(device).eval())
    inputs = []
    for spec, n in zip(specs, buckets):
        encoder = Encoder(spec, res, profile.ft_max_len, n)
        inputs.append([{k: v.to(device) for k, v in encoder(texts[i : i + profile.timing_batch]).items()}
                       for i in range(0, len(texts), profile.timing_batch)])
    inputs.append(_canine_inputs(texts, profile.timing_batch, device))
    inf = _time_in_turn([partial(_inference_pass, c, b) for c, b in zip(clfs, inputs)], repeats, device,
                        warmups=[partial(_inference_pass, c, b[:1]) for c, b in zip(clfs, inputs)])
    del clfs

    rows = []
    for (group, model_key, name), pt_s, inf_s, batches_in in zip((*TIMING_ROWS, CANINE_ROW), (*pt, float("nan")),
                                                                 inf, inputs):
        mean_len = float(np.mean([b["attention_mask"].sum(1).float().mean().item() for b in batches_in]))
        rows.append({"group": group, "model": model_key, "name": name, "shape": shape.description, "scale": scale,
                     "layers": shape.layers, "hidden": shape.hidden, "pt_seq_len": shape.seq_len,
                     "pt_batch": pt_batch, "infer_batch": profile.timing_batch, "repeats": repeats,
                     "device": device.type, "pt_ms_per_sample": 1000.0 * pt_s / pt_batch,
                     "infer_ms_per_sample": 1000.0 * inf_s / len(texts), "infer_mean_tokens": mean_len})
    table = pd.DataFrame(rows)
    base = table.set_index("name").loc["BERT-MLM"]
    table["pt_speedup"] = base["pt_ms_per_sample"] / table["pt_ms_per_sample"]
    table["infer_speedup"] = base["infer_ms_per_sample"] / table["infer_ms_per_sample"]
    return table


def timing_table(res: Resources, device: torch.device, base_repeats: int = 0, base_batch: int = 1,
                 base_shape: EncoderShape = BERT_BASE) -> pd.DataFrame:
    """Table 3: ms per sample of one pre-training step (forward + backward, objective head and loss included) and
    of inference (forward of the GLUE classifier on the profile's ``timing_examples`` SST-2 dev sentences in batches
    of ``timing_batch``, each model with its own tokenisation truncated to ``ft_max_len`` and padded to the longest
    in the batch), every model of :data:`TIMING_ROWS` timed in turn in this process (all pre-training models
    built, one warm-up step each, then rounds of one step of each; the same for the classifiers, warmed up on their
    first batch); each time is the mean over the rounds. Hashing/tokenisation is not timed. CANINE-C
    (:data:`CANINE_ROW`, :func:`canine_classifier`) is timed at inference only, in the same rounds as the classifiers,
    on the same sentences as code points (its hashing of them is inside the model, so timed); its pre-training
    columns are NaN.

    Rows at the profile's encoder size come first (``scale`` "profile"; pre-training batch ``timing_batch`` x
    ``seq_len``, ``timing_repeats`` repetitions). With ``base_repeats`` > 0 the same models follow at
    ``base_shape`` (``scale`` "paper"; BERT-base unless a test passes a smaller stand-in): pre-training batch
    ``base_batch`` x ``base_shape.seq_len``, inference as above, ``base_repeats`` repetitions of each. The ``shape``
    column names the size (``"profile (2 x 64)"``, ``"BERT-base (12 x 768)"``); ``pt_speedup`` and
    ``infer_speedup`` (Eq. 8) are over BERT-MLM at the same size. ``base_repeats=0`` (the default) times the
    profile's size only."""
    base_repeats = _positive_int("base_repeats", base_repeats, 0)
    base_batch = _positive_int("base_batch", base_batch)
    if not isinstance(base_shape, EncoderShape):
        raise TypeError(f"base_shape must be an EncoderShape (e.g. BERT_BASE), got {type(base_shape).__name__}")
    profile = res.profile
    gen = torch.Generator().manual_seed(profile.seed)
    texts, _ = res.glue("sst2", "validation", profile.timing_examples)
    tables = [_time_shape(res, EncoderShape.of(profile), "profile", profile.timing_repeats, profile.timing_batch,
                          texts, gen, device)]
    if base_repeats:
        tables.append(_time_shape(res, base_shape, "paper", base_repeats, base_batch, texts, gen, device))
    return pd.concat(tables, ignore_index=True)


def timing_at(timing: pd.DataFrame, scale: Literal["profile", "paper"] = "profile") -> pd.DataFrame:
    """The rows of a :func:`timing_table` result at one ``scale`` ("profile" or "paper"), index reset. A table
    written before the ``scale`` column existed holds the profile's rows only."""
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    if "scale" not in timing.columns:
        if scale == "profile":
            return timing.reset_index(drop=True)
        raise ValueError("this timing table has no 'scale' column, so no rows at the paper's size: recompute it with "
                         "timing_table(..., base_repeats >= 1)")
    rows = timing[timing["scale"] == scale].reset_index(drop=True)
    if rows.empty:
        raise ValueError(f"this timing table has no rows at scale {scale!r}"
                         + (": it was computed with base_repeats=0" if scale == "paper" else ""))
    return rows
