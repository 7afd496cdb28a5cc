"""The HashFormers chapter's dry run (:mod:`hashlib_core.dry_run`): its models at the profile's sizes against Table 2,
the hub corpus (English Wikipedia + BookCorpus) through :func:`~hashlib_core.papers.hashformers.data.read_corpus`
with the hub mocked, GLUE from the data mirror, and two steps of a tiny MD-Emb HashFormer.

Table 2 counts two-class classifiers (Appendix B), so the sizes are those of :func:`~hashlib_core.papers.
hashformers.pretraining.classifier` for every model the profile fine-tunes; the printed cells and the notes on the
rows whose print differs come from :func:`~hashlib_core.papers.hashformers.table2.hashformers_table2`.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd
import torch

from hashlib_core.bpe import NUM_SPECIAL_TOKENS
from hashlib_core.dry_run import DataSample, DryRun, ModelSize, glue_samples, mock_hub, text_rows
from hashlib_core.papers.hashformers.data import PretrainCollator, Resources, Sequences, hub_corpus, read_corpus
from hashlib_core.papers.hashformers.objectives import ShuffleRandomCollator
from hashlib_core.papers.hashformers.pretraining import classifier, pretraining_model
from hashlib_core.papers.hashformers.profiles import MODELS, PROFORMER, HashFormersProfile
from hashlib_core.papers.hashformers.table2 import ROBERTA_VOCAB_SIZE, embedding_parameter_count, hashformers_table2
from hashlib_core.papers.hashformers.tokenization import word_tokenize
from hashlib_core.pretraining import CORPUS_NAMES

__all__ = ["DRY_RUN", "HUB_COLUMNS", "hub_fixtures"]

#: the schema of each hub dataset of the paper corpus (the columns of its train split on the hub)
HUB_COLUMNS = {"wikimedia/wikipedia": ("id", "url", "title", "text"), "bookcorpus/bookcorpus": ("text",)}


@lru_cache(maxsize=1)
def _table2() -> pd.DataFrame:
    return hashformers_table2().set_index(["group", "model"])


def _sizes(profile: HashFormersProfile) -> list[ModelSize]:
    vocab = ROBERTA_VOCAB_SIZE if profile.bpe_vocab == 0 else profile.bpe_vocab
    table = _table2()
    out = []
    for spec in [*profile.selected(MODELS), *([PROFORMER] if profile.proformer else [])]:
        key = (spec.group, spec.model)
        row = table.loc[key] if key in table.index else None

        def build(s: Any = spec) -> torch.nn.Module:
            return classifier(s, profile, vocab, 2)

        for measure, counts, column in (("total", None, "total"), ("embedding", embedding_parameter_count, "emb")):
            paper = row[f"paper_{column}"] if row is not None and row[f"paper_{column}"] else None
            note = row["note"] if row is not None and column in str(row["mismatched"]).split(",") else ""
            extra = {"counts": counts} if counts is not None else {}
            out.append(ModelSize(spec.name, build, paper=paper, source="Table 2" if paper else "", measure=measure,
                                 explained=note, **extra))
    return out


def hub_fixtures(profile: HashFormersProfile, rows: int) -> dict[str, dict[str, list[Any]]]:
    """A local stand-in for each hub dataset of ``paper_corpus``: ``rows`` records with the hub's columns."""
    out = {}
    for k, spec in enumerate(profile.paper_corpus):
        repo = spec.partition(":")[0]
        columns = HUB_COLUMNS.get(repo, ("text",))
        texts = text_rows(rows, offset=k)
        out[spec] = {c: (texts if c == "text" else [f"{c}-{i}" for i in range(rows)]) for c in columns}
    return out


def _data(profile: HashFormersProfile, limit: int) -> list[DataSample]:
    samples = []
    if profile.corpus in CORPUS_NAMES:
        lines = read_corpus(profile)[:limit]
        samples.append(DataSample(profile.corpus, len(lines), ("text",), ("text",), lines[0]))
    else:
        with mock_hub(hub_fixtures(profile, limit)) as hub:
            for spec in profile.paper_corpus:
                lines = list(hub_corpus([spec]))       # the chapter's loader: it reads each record's "text"
                samples.append(DataSample(f"hub {spec} (local fixture)", len(lines), hub.served[spec], ("text",),
                                          lines[0]))
            lines = read_corpus(profile)
        samples.append(_pretraining_batch(profile, lines))
    return samples + glue_samples(profile.task_keys(), limit)


def _md_emb() -> Any:
    return next(m for m in MODELS if m.hash_type == "md5" and m.embedding_type == "emb" and m.model == "Emb (50K)")


def _collate(profile: HashFormersProfile, words: list[str], length: int) -> tuple[Sequences, PretrainCollator]:
    """The pre-training pipeline of MD-Emb on ``words``: unit rows and the S+R collator over hashed ids."""
    spec = _md_emb()
    vocab: dict[str, int] = {}
    units = np.asarray([vocab.setdefault(w, len(vocab)) for w in words], dtype=np.int64)
    table = Resources(profile).hasher("md5", spec.num_buckets(profile)).batch_index(list(vocab))
    objective = ShuffleRandomCollator(random_id_range=(NUM_SPECIAL_TOKENS, NUM_SPECIAL_TOKENS +
                                                       spec.num_buckets(profile)), seed=profile.seed)
    return Sequences(units, length), PretrainCollator(spec, table, objective)


def _pretraining_batch(profile: HashFormersProfile, lines: list[str]) -> DataSample:
    words = [w for line in lines for w in word_tokenize(line)]
    rows, collate = _collate(profile, words, min(profile.seq_len - 2, len(words) // 2))
    batch = collate([rows[i] for i in range(min(len(rows), 2))])
    return DataSample("pre-training batch (MD-Emb, from the corpus above)", int(batch["input_ids"].shape[0]),
                      tuple(batch), ("input_ids", "attention_mask", "labels"),
                      f"input_ids {tuple(batch['input_ids'].shape)}")


def _tiny(profile: HashFormersProfile) -> tuple[torch.nn.Module, torch.utils.data.DataLoader]:
    tiny = profile.override(layers=2, hidden=32, heads=2, intermediate=64, emb_buckets=97, seq_len=18)
    words = [w for line in text_rows(16) for w in word_tokenize(line)]
    rows, collate = _collate(tiny, words, tiny.seq_len - 2)
    loader = torch.utils.data.DataLoader(rows, batch_size=2, collate_fn=collate)
    return pretraining_model(_md_emb(), tiny, 0), loader


def _plan(profile: HashFormersProfile) -> list[dict[str, Any]]:
    models = [m.name for m in profile.selected(MODELS)]
    sources = " + ".join(profile.paper_corpus) if profile.corpus not in CORPUS_NAMES else profile.corpus
    return [
        {"item": "pre-training corpus", "value": f"{profile.corpus}: {sources}"},
        {"item": "models pre-trained", "value": f"{len(models)}: {', '.join(models)}"},
        {"item": "pre-training steps per model", "value": profile.pt_steps},
        {"item": "batch x sequence length", "value": f"{profile.pt_batch} x {profile.seq_len}"},
        {"item": "tokens per model", "value": profile.pt_steps * profile.pt_batch * profile.seq_len},
        {"item": "learning rate (MLM) / warm-up", "value": f"{profile.pt_lr} ({profile.pt_lr_mlm}) / "
                                                           f"{profile.pt_warmup} steps"},
        {"item": "mixed precision", "value": profile.mixed_precision},
        {"item": "checkpoint every", "value": f"{profile.checkpoint_every or profile.pt_steps} steps "
                                              f"(checkpoints/hashformers/{profile.name}/<model>-pretrain-<digest>)"},
        {"item": "fine-tuning", "value": f"GLUE {', '.join(profile.task_keys())}; lrs {profile.ft_lrs}, seeds "
                                         f"{profile.ft_seeds}, {profile.ft_epochs} epochs, batch {profile.ft_batch}"},
        {"item": "ProFormer (fine-tuned from random weights)", "value": profile.proformer},
    ]


DRY_RUN = DryRun(models=_sizes, data=_data, tiny=_tiny, plan=_plan)
