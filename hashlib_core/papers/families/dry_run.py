"""The every-family chapter's dry run (:mod:`hashlib_core.dry_run`): every Track A model (each family at each budget,
per task) and every Track B model (each memory at each multiple) as the run builds them, the tasks through
:func:`~hashlib_core.papers.families.data.load_task` and Penn Treebank through
:class:`~hashlib_core.papers.families.track_b.TrackB` (the data mirror), and two steps of a tiny Track A classifier.

The chapter reproduces no paper table (it surveys the families side by side), so no size is compared with a printed
one: the table lists the sizes a run of the profile trains, with the embedding parameters each budget buys.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

import torch
from transformers import GPT2Config

from hashlib_core.dry_run import DataSample, DryRun, ModelSize, text_rows
from hashlib_core.papers.families.data import collate, load_task
from hashlib_core.papers.families.modeling import (FamilyBertConfig, FamilyBertForSequenceClassification,
                                                   MemoryCausalLM, build_memory)
from hashlib_core.papers.families.profiles import FamiliesProfile
from hashlib_core.papers.families.track_a import TrackA, plan, settings
from hashlib_core.papers.families.track_b import TrackB

__all__ = ["DRY_RUN"]

@lru_cache(maxsize=4)
def _task(profile: FamiliesProfile, task: str, limit: int) -> Any:
    """Track A's ``task`` as the run loads it, its training and scored parts cut to ``limit`` examples."""
    return load_task(task, TrackA(profile).tokenizer, profile.max_len, limit, min(profile.sst2_heldout, limit),
                     profile.seed, eval_limit=limit, report=min(profile.sst2_report, limit))


@lru_cache(maxsize=2)
def _track_b(profile: FamiliesProfile) -> TrackB:
    return TrackB(profile)


def _classifier(profile: FamiliesProfile, vocab: list[str], family: str, budget: int, labels: int,
                seed: int = 0) -> FamilyBertForSequenceClassification:
    return FamilyBertForSequenceClassification(FamilyBertConfig(
        family=family, budget=budget, family_seed=seed, vocab_tokens=vocab, hidden_size=profile.hidden,
        num_hidden_layers=profile.layers, num_attention_heads=profile.heads, intermediate_size=profile.intermediate,
        max_position_embeddings=profile.max_len, num_labels=labels))


def _sizes(profile: FamiliesProfile) -> list[ModelSize]:
    res = TrackA(profile)
    out = []
    for task in profile.tasks:
        labels = _task(profile, task, 8).num_labels
        for s in settings(profile, len(res.vocab), task):
            budget = res.budget(s.family, s.fraction)
            name = f"A {task}: {s.family} at {s.fraction:g}"

            def build(f: str = s.family, b: int = budget, n: int = labels) -> torch.nn.Module:
                return _classifier(profile, res.vocab, f, b, n)

            out += [ModelSize(name, build),
                    ModelSize(name, build, counts=lambda m: m.embedding_parameter_count(), measure="embedding")]
    lm = _track_b(profile)
    for memory in profile.memories:
        for multiple in (profile.memory_multiples if memory != "none" else (0.0,)):
            budget = int(lm.table_params * multiple)
            config = GPT2Config(vocab_size=len(lm.strings), n_positions=profile.lm_seq_len, n_embd=profile.lm_hidden,
                                n_layer=profile.lm_layers, n_head=profile.lm_heads, tie_word_embeddings=True,
                                bos_token_id=lm.eos, eos_token_id=lm.eos)
            out.append(ModelSize(f"B PTB: memory {memory} at {multiple:g}x the table", lambda c=config, m=memory,
                                 b=budget: MemoryCausalLM(c, build_memory(m, lm.strings, profile.lm_hidden, b,
                                                                          lm.texts, layers=profile.lm_layers))))
    return out


def _data(profile: FamiliesProfile, limit: int) -> list[DataSample]:
    samples = []
    for task in profile.tasks:
        data = _task(profile, task, limit)
        ids, labels = data.parts["train"]
        batch = collate(list(zip(ids[:4], labels[:4].tolist())))
        samples.append(DataSample(f"{task} train (data mirror), WordPiece ids", len(ids), tuple(data.parts),
                                  ("train", profile.protocol(task).select_on), f"{data.num_labels} labels"))
        samples.append(DataSample(f"{task} batch (collate)", int(batch["labels"].shape[0]), tuple(batch),
                                  ("input_ids", "attention_mask", "labels"),
                                  f"input_ids {tuple(batch['input_ids'].shape)}"))
    lm = _track_b(profile)
    samples.append(DataSample("Penn Treebank windows (BPE trained on its train split)", min(limit, len(lm.train)),
                              ("input_ids",), ("input_ids",), f"{len(lm.train)} training windows of "
                                                              f"{profile.lm_seq_len}, vocabulary {len(lm.strings)}"))
    return samples


def _tiny(profile: FamiliesProfile) -> tuple[torch.nn.Module, torch.utils.data.DataLoader]:
    words = sorted({w for line in text_rows(8) for w in line.lower().replace(".", "").split()})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]
    tiny = profile.override(hidden=16, layers=1, heads=2, intermediate=32, max_len=12)
    model = _classifier(tiny, vocab, "hashing-trick", len(vocab) * tiny.hidden // 4, 2)
    rows = [([2, *[5 + (i * 7 + k) % len(words) for k in range(2 + i % 5)], 3], i % 2) for i in range(8)]
    return model, torch.utils.data.DataLoader(rows, batch_size=2, collate_fn=collate)


def _plan(profile: FamiliesProfile) -> list[dict[str, Any]]:
    res = TrackA(profile)
    rows = []
    for task in profile.tasks:
        runs = plan(profile, len(res.vocab), task)
        protocol = profile.protocol(task)
        swept = sum(len(protocol.learning_rates) for _, swept, _ in runs if swept)
        seeds = sum(len(seeds) - (1 if swept else 0) for _, swept, seeds in runs)
        rows.append({"item": f"Track A {task}: settings / runs", "value": f"{len(runs)} (family, budget) settings; "
                     f"{swept + seeds} runs (rate sweeps and seeds), at most {protocol.max_steps} steps x batch "
                     f"{profile.batch}, early stopping every {protocol.eval_every} steps"})
    lm = profile.lm_protocol
    rows += [
        {"item": "Track B (Penn Treebank)", "value": f"memories {', '.join(profile.memories)} at "
                                                     f"{profile.memory_multiples} x the table; at most {lm.max_steps} "
                                                     f"steps x {profile.lm_batch} windows of {profile.lm_seq_len}"},
        {"item": "learning rates x seeds", "value": f"{profile.sst2_protocol.learning_rates} x "
                                                    f"{profile.sst2_protocol.seeds} (SST-2)"},
        {"item": "checkpoints", "value": f"each converged run is kept (checkpoints/families/{profile.name}/"
                                         "<run>-<digest>); none while a run trains: an interrupted run restarts"},
    ]
    return rows


DRY_RUN = DryRun(models=_sizes, data=_data, tiny=_tiny, plan=_plan)
