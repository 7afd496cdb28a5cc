"""The dynamic-embeddings chapter's dry run (:mod:`hashlib_core.dry_run`): every model the profile pre-trains, as the
run builds it over BERT's vocabulary, the staged corpus and GLUE (the data mirror) through the chapter's tokenizer
and masking, and two steps of a tiny EELBERT (a dynamic embedding under an MLM head).

The paper's body is not available (the chapter reads its abstract and the blog): it prints no parameter table, and
its "1.2 MB" is not tested against the chapter's own reading of UNO-EELBERT (see
:mod:`~hashlib_core.papers.dynamic_embeddings.sizes`), so no size is compared with a printed one.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
import torch

from hashlib_core.dry_run import DataSample, DryRun, ModelSize, glue_samples, text_rows
from hashlib_core.papers.dynamic_embeddings.modeling import DynamicBertForMaskedLM
from hashlib_core.papers.dynamic_embeddings.profiles import VOCABULARY, DynamicEmbeddingsProfile
from hashlib_core.papers.dynamic_embeddings.training import _Windows, model_config
from hashlib_core.pretraining import MLMObjective, Sequences, corpus_lines

__all__ = ["DRY_RUN"]


@lru_cache(maxsize=1)
def _tokenizer() -> Any:
    from hashlib_core.wordpiece import bert_tokenizer

    return bert_tokenizer(VOCABULARY)


def _tokens() -> list[str]:
    tok = _tokenizer()
    return tok.convert_ids_to_tokens(list(range(len(tok))))


def _sizes(profile: DynamicEmbeddingsProfile) -> list[ModelSize]:
    tokens, pad = _tokens(), _tokenizer().pad_token_id
    return [ModelSize(spec.name, lambda s=spec: DynamicBertForMaskedLM(model_config(s, profile, tokens, pad)),
                      measure="total (MLM head included)") for spec in profile.selected()]


def _batch(profile: DynamicEmbeddingsProfile, lines: list[str], seq_len: int) -> dict[str, torch.Tensor]:
    tok = _tokenizer()
    ids = [i for line in tok(lines, add_special_tokens=False)["input_ids"] for i in line]
    rows = Sequences(np.asarray(ids, dtype=np.int64), seq_len - 2)
    collate = _Windows(MLMObjective(tok, profile.seed), tok.cls_token_id, tok.sep_token_id)
    return collate([rows[i] for i in range(min(len(rows), 2))])


def _data(profile: DynamicEmbeddingsProfile, limit: int) -> list[DataSample]:
    lines = corpus_lines(profile.corpus, profile.corpus_max_words)[:limit]
    samples = [DataSample(f"{profile.corpus} (data mirror)", len(lines), ("text",), ("text",), lines[0])]
    batch = _batch(profile, lines, profile.seq_len)
    samples.append(DataSample("pre-training batch (WordPiece, MLM masking)", int(batch["input_ids"].shape[0]),
                              tuple(batch), ("input_ids", "attention_mask", "labels"),
                              f"input_ids {tuple(batch['input_ids'].shape)}"))
    return samples + glue_samples(profile.task_keys(), limit)


def _tiny(profile: DynamicEmbeddingsProfile) -> tuple[torch.nn.Module, torch.utils.data.DataLoader]:
    tiny = profile.override(seq_len=10)
    spec = next(s for s in profile.selected() if s.embedding == "dynamic")
    spec = type(spec)(spec.name, "dynamic", 1, 16, 2, 32, ngram_hash=spec.ngram_hash)
    tok = _tokenizer()
    model = DynamicBertForMaskedLM(model_config(spec, tiny, _tokens(), tok.pad_token_id))
    ids = [i for line in tok(text_rows(8), add_special_tokens=False)["input_ids"] for i in line]
    rows = Sequences(np.asarray(ids, dtype=np.int64), tiny.seq_len - 2)
    collate = _Windows(MLMObjective(tok, 0), tok.cls_token_id, tok.sep_token_id)
    return model, torch.utils.data.DataLoader(rows, batch_size=2, collate_fn=collate)


def _plan(profile: DynamicEmbeddingsProfile) -> list[dict[str, Any]]:
    names = [s.name for s in profile.selected()]
    return [
        {"item": "pre-training corpus (data mirror)", "value": profile.corpus},
        {"item": "models pre-trained", "value": f"{len(names)}: {', '.join(names)}"},
        {"item": "steps x batch x sequence length", "value": f"{profile.pt_steps} x {profile.pt_batch} x "
                                                             f"{profile.seq_len}"},
        {"item": "tokens per model", "value": profile.pt_steps * profile.pt_batch * profile.seq_len},
        {"item": "learning rate / warm-up", "value": f"{profile.pt_lr} / {profile.pt_warmup} steps"},
        {"item": "fine-tuning", "value": f"GLUE {', '.join(profile.task_keys())}; lrs {profile.ft_lrs}, seeds "
                                         f"{profile.ft_seeds}, {profile.ft_epochs} epochs, batch {profile.ft_batch}"},
        {"item": "checkpoints", "value": f"at the end of each pre-training (checkpoints/dynamic_embeddings/"
                                         f"{profile.name}/<model>-pretrain-<digest>); an interrupted one restarts"},
    ]


DRY_RUN = DryRun(models=_sizes, data=_data, tiny=_tiny, plan=_plan)
