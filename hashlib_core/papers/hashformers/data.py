"""The HashFormers chapter's data: the pre-training corpus, the local BPE vocabularies, unit streams and hashers.

The paper pre-trains on English Wikipedia + BookCorpus (§4.2). The staged corpora are WikiText-2's validation split
and Penn Treebank's train split (``corpus``: one of them or both, :data:`hashlib_core.pretraining.CORPUS_NAMES`). ``paper`` loads the paper's corpus with ``datasets`` from the Hugging Face hub, which needs
network access (it raises a clear error when ``HF_DATASETS_OFFLINE=1``).

:class:`Resources` is what every experiment of one run shares (built lazily, once); :class:`PretrainCollator`
turns fixed-length windows of a unit stream into the inputs of each model type (hashed ids for Emb, ``hash_bits``
for the others) and applies the pre-training objective's corruption.
"""
from __future__ import annotations

import os
from functools import cached_property
from typing import Any, Callable, Iterable, Sequence

import numpy as np
import torch

from hashlib_core.bpe import bpe_to_hf_tokenizer, roberta_bpe, train_bpe
from hashlib_core.glue import GlueSplits
from hashlib_core.hashing.lsh import LSHBitHasher, LSHBucketHasher
from hashlib_core.hashing.md5 import KeyedMD5Hasher
from hashlib_core.pretraining import CORPUS_NAMES, Sequences, corpus_lines, with_specials
from hashlib_core.papers.hashformers.profiles import HashFormersProfile, ModelSpec
from hashlib_core.papers.hashformers.tokenization import HASHED_TOKEN_ID, bpe_units, word_tokenize

__all__ = ["read_corpus", "Resources", "Sequences", "PretrainCollator", "unit_table"]


def read_corpus(profile: HashFormersProfile) -> list[str]:
    """Non-empty text lines of the pre-training corpus: a staged one (:func:`hashlib_core.pretraining.corpus_lines`:
    WikiText-2's validation split, Penn Treebank's train split, or both; headings dropped) or the paper's."""
    if profile.corpus in CORPUS_NAMES:
        return _nonempty(corpus_lines(profile.corpus, profile.corpus_max_words), profile.corpus)
    out, words = [], 0
    for line in hub_corpus(profile.paper_corpus):
        out.append(line)
        words += len(line.split())
        if profile.corpus_max_words and words >= profile.corpus_max_words:
            break
    return _nonempty(out, profile.corpus)


def _nonempty(out: list[str], corpus: str) -> list[str]:
    if not out:
        raise ValueError(f"the corpus {corpus!r} gave no text")
    return out


def hub_corpus(specs: Sequence[str]) -> Iterable[str]:
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


class Resources(GlueSplits):
    """What every experiment of one profile shares: corpus, BPE vocabularies, unit streams, hashers and GLUE splits."""

    def __init__(self, profile: HashFormersProfile) -> None:
        self.profile = profile

    @cached_property
    def corpus(self) -> list[str]:
        return read_corpus(self.profile)

    @property
    def released_bpe(self) -> bool:
        """Whether the profile uses roberta-base's BPE (``bpe_vocab = 0``), as the released code does."""
        return self.profile.bpe_vocab == 0

    @cached_property
    def feature_bpe(self) -> Any:
        """The byte-level BPE of the LSH features (§3.3) and Table 6's subword units: roberta-base's, which the
        released code uses (the words it reads are already lower-cased), or one trained on the corpus, lower-cased."""
        if self.released_bpe:
            return roberta_bpe()
        return train_bpe(self.corpus, self.profile.bpe_vocab, lowercase=True)

    @cached_property
    def baseline_bpe(self) -> Any:
        """The cased byte-level BPE of the BERT baselines: roberta-base's 50,265 pieces, as the paper, or one trained
        on the corpus."""
        if self.released_bpe:
            return roberta_bpe()
        return train_bpe(self.corpus, self.profile.bpe_vocab)

    @cached_property
    def baseline_tokenizer(self) -> Any:
        return bpe_to_hf_tokenizer(self.baseline_bpe, model_max_length=max(self.profile.seq_len, 512))

    @cached_property
    def word_stream(self) -> list[str]:
        return [w for line in self.corpus for w in word_tokenize(line)]

    @cached_property
    def subword_stream(self) -> list[str]:
        return [u for line in self.corpus for u in bpe_units(self.feature_bpe, line)]

    @cached_property
    def bpe_id_stream(self) -> np.ndarray:
        ids = [i for line in self.corpus for i in self.baseline_bpe.encode(line, add_special_tokens=False).ids]
        return np.asarray(ids, dtype=np.int64)

    def hasher(self, hash_type: str, num_buckets: int | None, num_bits: int = 128) -> Any:
        """The token hasher of a variant: an index hasher for Emb (``num_buckets``), else a ``num_bits``-bit one
        (128; ProFormer's LSH: 420)."""
        key = (hash_type, num_buckets, num_bits)
        cache = self.__dict__.setdefault("_hashers", {})
        if key not in cache:
            if hash_type == "md5":
                if num_bits != 128:
                    raise ValueError(f"MD5 codes have 128 bits, got num_bits={num_bits}")
                cache[key] = KeyedMD5Hasher() if num_buckets is None else KeyedMD5Hasher(num_buckets=num_buckets)
            elif num_buckets is None:
                cache[key] = LSHBitHasher(self.feature_bpe, num_bits=num_bits)
            elif self.released_bpe:       # the released eta: 50,260 numbers, whatever N (the released N is 50,260)
                cache[key] = LSHBucketHasher(self.feature_bpe, num_buckets=num_buckets)
            else:
                cache[key] = LSHBucketHasher(self.feature_bpe, num_buckets=num_buckets,
                                             feature_dim=self.feature_bpe.get_vocab_size())
        return cache[key]


class PretrainCollator:
    """Rows of unit indices -> model inputs (hashed ids or bits with ``<s>``/``</s>``) -> objective's corruption."""

    def __init__(self, spec: ModelSpec, table: torch.Tensor, objective: Callable[[Any], dict[str, torch.Tensor]]):
        self.bits = spec.embedding_type not in (None, "emb")
        self.table = table  # (units,) ids or (units, T) bits
        self.objective = objective

    def __call__(self, rows: list[torch.Tensor]) -> dict[str, torch.Tensor]:
        units = torch.stack(rows)
        if self.bits:
            body = torch.full(units.shape, HASHED_TOKEN_ID, dtype=torch.long)
            codes = self.table[units]
            pad = torch.zeros((units.shape[0], 1, codes.shape[-1]), dtype=codes.dtype)
            batch = {"input_ids": with_specials(body), "hash_bits": torch.cat([pad, codes, pad], dim=1)}
        else:
            batch = {"input_ids": with_specials(self.table[units])}
        batch["attention_mask"] = torch.ones_like(batch["input_ids"])
        return self.objective(batch)


def unit_table(spec: ModelSpec, res: Resources, stream: list[str]) -> tuple[np.ndarray, torch.Tensor]:
    """Unit indices of ``stream`` and the per-unit hashed id (Emb) or 128-bit code (the others)."""
    vocab: dict[str, int] = {}
    ids = np.fromiter((vocab.setdefault(u, len(vocab)) for u in stream), dtype=np.int64, count=len(stream))
    words = list(vocab)
    hasher = res.hasher(spec.hash_type, spec.num_buckets(res.profile))
    table = hasher.batch_index(words) if spec.embedding_type == "emb" else hasher.batch_bits(words)
    return ids, table
