"""The MultiHashFormer chapter's dry run (:mod:`hashlib_core.dry_run`): every language model of the profile against
Table 1's ``#Param`` (embedding and decoder) where the profile's backbone is one of Table 7's, the training text
through :func:`~hashlib_core.papers.multihashformer.lm.corpus_lines` (the data mirror) into a BPE and training
windows, and two steps of a tiny MHF (H4) model.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

import pandas as pd
import torch

from hashlib_core.dry_run import DataSample, DryRun, ModelSize, text_rows
from hashlib_core.papers.multihashformer.lm import LMDataset, corpus_lines, windows
from hashlib_core.papers.multihashformer.params import multihashformer_table1_params
from hashlib_core.papers.multihashformer.presets import (BACKBONE_PRESETS, BackboneShape, build_model,
                                                         parameter_groups, parse_variant)
from hashlib_core.papers.multihashformer.profiles import CORPORA, MultiHashFormerProfile

__all__ = ["DRY_RUN", "profile_labels"]


def profile_labels(profile: MultiHashFormerProfile) -> list[str]:
    """Every model label the profile trains at its own backbone (quality, Table 3, Figure 3, expansion)."""
    labels = [*profile.lm_variants, *(f"H{h}{b}" for b in profile.single_vs_multi_buckets for h in (1, 4)),
              "Standard", *profile.sweep_variants, *profile.expansion_variants]
    return list(dict.fromkeys(labels))


@lru_cache(maxsize=1)
def _table1() -> pd.DataFrame:
    return multihashformer_table1_params()


def _printed(shape: BackboneShape, label: str, profile: MultiHashFormerProfile) -> tuple[str, pd.Series | None]:
    """Table 1's row of this model, when the profile's backbone is a Table 7 preset: ``(size, row)``."""
    size = next((name for name, preset in BACKBONE_PRESETS.items() if preset == shape), "")
    table = _table1()
    want = profile.spec(label)
    for _, row in table[table["size"] == size].iterrows():
        printed = profile.spec(row["model"])
        if (printed.kind, printed.built_variant) == (want.kind, want.built_variant):
            return size, row
    return size, None


def _sizes(profile: MultiHashFormerProfile) -> list[ModelSize]:
    shape = profile.shape()
    out = []
    for label in profile_labels(profile):
        spec = profile.spec(label)
        size, row = _printed(shape, label, profile)

        def build(s=spec) -> torch.nn.Module:
            return build_model(shape, s, vocab_size=profile.vocab_size)

        for measure, group, column in (("embedding", "emb", "emb"), ("decoder", "backbone", "dec")):
            known = row is not None and not row[f"{column}_agrees"]
            out.append(ModelSize(spec.label, build, paper=row[f"{column}_paper"] if row is not None else None,
                                 source=f"Table 1 ({size}) #Param" if row is not None else "",
                                 counts=lambda m, g=group: parameter_groups(m)[g], measure=measure,
                                 explained=("the chapter's Table 1 comparison shows this difference and its claims "
                                            "weigh it (table1_params, table1_readings)") if known else ""))
    return out


def _data(profile: MultiHashFormerProfile, limit: int) -> list[DataSample]:
    from hashlib_core.bpe import EOS_ID, train_bpe

    train_lines, valid_lines, tests = corpus_lines(profile.corpus)
    samples = [DataSample(f"{CORPORA[profile.corpus]} (data mirror)", len(train_lines[:limit]), ("text",),
                          ("text",), train_lines[0])]
    if valid_lines:
        samples.append(DataSample(f"{profile.corpus} validation", len(valid_lines[:limit]), ("text",), ("text",),
                                  valid_lines[0]))
    samples += [DataSample(f"test set {name}", len(lines[:limit]), ("text",), ("text",), lines[0])
                for name, lines in tests.items()]
    head = train_lines[:limit]
    tokenizer = train_bpe(head, profile.vocab_size)
    stream = [i for enc in tokenizer.encode_batch(head, add_special_tokens=False) for i in [*enc.ids, EOS_ID]]
    seq = min(profile.seq_len, len(stream))
    rows = windows(stream, seq, 0)
    example = LMDataset(rows)[0]
    samples.append(DataSample(f"training windows (BPE of the first {len(head)} lines, window {seq})", len(rows),
                              tuple(example), ("input_ids", "labels"),
                              f"input_ids {tuple(example['input_ids'].shape)}"))
    return samples


def _tiny(profile: MultiHashFormerProfile) -> tuple[torch.nn.Module, torch.utils.data.DataLoader]:
    from hashlib_core.hashing import SignatureRegistry

    vocab = 64
    shape = BackboneShape(16, 32, 1, 2, 1, added_layers=1, vocab_size=vocab)
    spec = parse_variant("H4B16K").scaled(vocab)
    registry = SignatureRegistry(spec.num_hashes, spec.num_buckets)
    registry.register([f"token{i}" for i in range(vocab)])
    model = build_model(shape, spec, signature_table=registry.table())
    words = " ".join(text_rows(8)).split()
    stream = [sum(map(ord, w)) % vocab for w in words]          # stable across processes (no hash seed)
    loader = torch.utils.data.DataLoader(LMDataset(windows(stream, 8, 0)), batch_size=2)
    return model, loader


def _plan(profile: MultiHashFormerProfile) -> list[dict[str, Any]]:
    labels = profile_labels(profile)
    tokens = profile.max_steps * profile.batch_size * profile.seq_len
    return [
        {"item": "training text (data mirror)", "value": CORPORA[profile.corpus]},
        {"item": "backbone (d / ffn / layers / heads / kv heads)",
         "value": f"{profile.hidden_size} / {profile.intermediate_size} / {profile.num_layers} / "
                  f"{profile.num_heads} / {profile.num_kv_heads}"},
        {"item": "vocabulary (BPE trained on the text)", "value": profile.vocab_size},
        {"item": "models trained", "value": f"{len(labels)}: {', '.join(labels)}"},
        {"item": "steps x batch x window per model", "value": f"{profile.max_steps} x {profile.batch_size} x "
                                                              f"{profile.seq_len}"},
        {"item": "tokens per model", "value": tokens},
        {"item": "learning rate / warm-up", "value": f"{profile.learning_rate} / {profile.warmup_steps} steps"},
        {"item": "mixed precision", "value": profile.mixed_precision},
        {"item": "checkpoints", "value": f"at the end of each model's run (checkpoints/multihashformer/"
                                         f"{profile.name}/<model>-<digest>); an interrupted model restarts"},
        {"item": "vocabulary expansion", "value": f"{', '.join(profile.expansion_variants)}: "
                                                  f"{profile.expansion_steps} steps"},
    ]


DRY_RUN = DryRun(models=_sizes, data=_data, tiny=_tiny, plan=_plan)
