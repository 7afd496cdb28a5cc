"""Table 3: pre-training and inference time per sample, every model timed side by side in one process (Eq. 8)."""
from __future__ import annotations

import time
from functools import partial
from typing import Any, Callable

import numpy as np
import pandas as pd
import torch
from torch import nn

from hashlib_core.bpe import NUM_SPECIAL_TOKENS
from hashlib_core.papers.hashformers.data import Resources
from hashlib_core.papers.hashformers.finetuning import Encoder
from hashlib_core.papers.hashformers.pretraining import classifier, pretraining_model
from hashlib_core.papers.hashformers.profiles import MODELS
from hashlib_core.papers.hashformers.tokenization import HASHED_TOKEN_ID
from hashlib_core.profiles import synchronize

__all__ = ["TIMING_ROWS", "TIMING_VOCAB", "TIMING_BUCKETS", "timing_table"]


def _pretraining_step(model: nn.Module, batch: dict[str, torch.Tensor]) -> None:
    model.zero_grad(set_to_none=True)
    model(**batch).loss.backward()


@torch.no_grad()
def _inference_pass(model: nn.Module, batches: list[dict[str, torch.Tensor]]) -> None:
    for batch in batches:
        model(**batch)


def _time_call(fn: Callable[[], Any], repeats: int, device: torch.device) -> float:
    fn()  # warm-up
    synchronize(device)
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    synchronize(device)
    return (time.perf_counter() - start) / repeats


#: Table 3 rows: (group, model) keys of data/paper_tables/hashformers_table3.csv -> the variant that is timed.
TIMING_ROWS = (("BERT", "-MLM", "BERT-MLM"), ("BERT", "-S+R", "BERT-S+R"),
               ("HASHFORMERS (Ours)", "-Emb", "MD-Emb (50K)"), ("HASHFORMERS (Ours)", "-Pool", "MD-Pool"),
               ("HASHFORMERS (Ours)", "-Add", "MD-Add"), ("HASHFORMERS (Ours)", "-Proj", "MD-Proj"))
#: The paper's vocabulary and bucket sizes, used for timing whatever the profile (weights are random: timing only).
TIMING_VOCAB, TIMING_BUCKETS = 50265, 50260


def timing_table(res: Resources, device: torch.device) -> pd.DataFrame:
    """Table 3: ms per sample of one pre-training step (forward + backward, objective head and loss included) at
    sequence length ``seq_len``, and of inference (forward of the GLUE classifier on SST-2 dev sentences, each model
    with its own tokenisation, padded to the longest in the batch); hashing/tokenisation is not timed."""
    profile = res.profile
    by_name = {m.name: m for m in MODELS}
    gen = torch.Generator().manual_seed(profile.seed)
    texts, _ = res.glue("sst2", "validation", profile.timing_examples)
    rows = []
    for group, model_key, name in TIMING_ROWS:
        spec = by_name[name]
        buckets = TIMING_BUCKETS if spec.embedding_type == "emb" else None
        pre = pretraining_model(spec, profile, TIMING_VOCAB, buckets).to(device)
        shape = (profile.timing_batch, profile.seq_len)
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
        batch = {k: v.to(device) for k, v in batch.items()}

        pt = _time_call(partial(_pretraining_step, pre, batch), profile.timing_repeats, device)
        pt /= profile.timing_batch
        del pre
        clf = classifier(spec, profile, TIMING_VOCAB, 2, buckets).to(device).eval()
        encoder = Encoder(spec, res, profile.ft_max_len, buckets)
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
