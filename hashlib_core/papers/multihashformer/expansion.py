"""Vocabulary expansion (MultiHashFormer sections 4.4 and 5.3, Figure 2) at the chapter's scale.

New Arabic, Chinese and Hindi tokens (a BPE trained on Parallel UD) are appended to the tokenizer. MHF registers
new signatures (no new parameter: :meth:`~hashlib_core.papers.multihashformer.modeling.MultiHashFormerForCausalLM.expand_vocabulary`);
Standard gets new rows initialised with the mean of each new token's source-token embeddings
(:func:`expand_standard`). Continual pre-training then updates only the parts the paper updates
(:func:`freeze_for_cpt`). Quality is measured in bits per UTF-8 byte, comparable across the two tokenizers, on
held-out PUD sentences, with ``P_inf`` as the paper defines it and at temperatures fitted on training text
(:mod:`~hashlib_core.papers.multihashformer.calibration`).
"""
from __future__ import annotations

import json
from typing import Callable, Sequence

import numpy as np
import pandas as pd
import torch
from torch import nn

from hashlib_core.claims import paired_bootstrap
from hashlib_core.decoding.lm import next_token_scores
from hashlib_core.modeling import decoder_layers
from hashlib_core.papers.multihashformer.calibration import fit_temperature
from hashlib_core.papers.multihashformer.lm import (
    CALIBRATION_WINDOWS,
    LanguageModels,
    padded_batches,
    token_bytes,
    windows,
)
from hashlib_core.papers.multihashformer.presets import PAPER_VOCAB_SIZE, parameter_groups

__all__ = ["EXPANSION_LANGUAGES", "merged_tokenizer", "expand_standard", "freeze_for_cpt", "expansion",
           "bytelevel_text", "bpb_intervals", "loss_flatness"]

#: UD PUD languages of the expansion experiment (section 4.4 uses Arabic, Chinese and Hindi from FineWeb2).
EXPANSION_LANGUAGES = ("ar", "zh", "hi")
#: PUD has 1,000 sentences per language: the first ones train the new tokens and the CPT, the rest is held out.
TRAIN_SENTENCES = 900


def merged_tokenizer(base, extra_texts: dict[str, list[str]], per_language: int):
    """Append ``per_language`` new merges per language (from a BPE trained on that language) to ``base``.

    Returns the expanded tokenizer and, per language, its new tokens (in merge order). The base entries keep
    their ids and merges; new merges come after the base ones (lower priority), as when a tokenizer is extended.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    from hashlib_core.bpe import train_bpe

    state = json.loads(base.to_str())
    vocab: dict[str, int] = dict(state["model"]["vocab"])
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in state["model"]["merges"]]
    new_tokens: dict[str, list[str]] = {}
    for lang, texts in extra_texts.items():
        lang_tok = train_bpe(texts, len(vocab) + per_language * 4)
        lang_state = json.loads(lang_tok.to_str())
        added = []
        for m in lang_state["model"]["merges"]:
            a, b = tuple(m) if isinstance(m, list) else tuple(m.split(" "))
            if a + b in vocab or a not in vocab or b not in vocab:
                continue
            vocab[a + b] = len(vocab)
            merges.append((a, b))
            added.append(a + b)
            if len(added) == per_language:
                break
        new_tokens[lang] = added
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return tok, new_tokens


def expand_standard(model: nn.Module, source_ids: Sequence[Sequence[int]]) -> nn.Module:
    """New rows = mean of the embeddings of each new token's source tokens (section 4.4 "mean initialization")."""
    old = model.get_input_embeddings().weight.shape[0]
    model.resize_token_embeddings(old + len(source_ids), mean_resizing=False)
    weight = model.get_input_embeddings().weight
    with torch.no_grad():
        for i, src in enumerate(source_ids):
            weight[old + i] = weight[torch.tensor(src, device=weight.device)].mean(0)
    return model


def freeze_for_cpt(model: nn.Module) -> None:
    """Section 4.4: update the embedding (and tied head) / hash encoder and decoder, and the first two and last two
    Transformer layers; freeze the rest (the other layers and the final norm)."""
    layers = decoder_layers(model)
    trainable_layers = {0, 1, len(layers) - 2, len(layers) - 1}
    stack = {id(p) for p in model.base_model.parameters()} - {id(p) for p in model.get_input_embeddings().parameters()}
    for p in model.parameters():
        p.requires_grad_(id(p) not in stack)          # embeddings, tied head, hash decoder: trainable
    for i, layer in enumerate(layers):
        layer.requires_grad_(i in trainable_layers)


def bytelevel_text(token: str) -> str:
    """The text a byte-level BPE token stands for (its alphabet symbols mapped back to bytes)."""
    from tokenizers import decoders

    return decoders.ByteLevel().decode([token])


def _bpb(scores: np.ndarray) -> Callable[[np.ndarray], float]:
    """Bits per byte of the sentences at given indices, from per-sentence ``(nll, _, _, bytes)`` rows."""
    return lambda idx: float(scores[idx, 0].sum() / np.log(2) / scores[idx, 3].sum())


def bpb_intervals(sentences: dict[tuple[str, str, str], np.ndarray], mhf: str) -> pd.DataFrame:
    """Paired bootstraps over each language's held-out sentences (calibrated scores ``sentences[(model, language,
    "before" | "after")]``, per-sentence ``(nll, correct, tokens, bytes)``): ``mhf`` minus Standard after CPT
    (negative: MHF better), and Standard's change minus ``mhf``'s (positive: MHF forgets less)."""
    rows = []
    for lang in dict.fromkeys(k[1] for k in sentences):
        m_after, s_after = sentences[(mhf, lang, "after")], sentences[("Standard", lang, "after")]
        m_before, s_before = sentences[(mhf, lang, "before")], sentences[("Standard", lang, "before")]
        n = len(m_after)
        gap = paired_bootstrap(metric=_bpb(m_after), metric_b=_bpb(s_after), n_items=n,
                               items=f"held-out {lang} sentences")
        change = paired_bootstrap(metric=lambda i: _bpb(s_after)(i) - _bpb(s_before)(i),
                                  metric_b=lambda i: _bpb(m_after)(i) - _bpb(m_before)(i), n_items=n,
                                  items=f"held-out {lang} sentences")
        rows.append({"language": lang, "mhf": mhf, "sentences": n, "bpb_gap_after": gap.estimate,
                     "bpb_gap_after_low": gap.low, "bpb_gap_after_high": gap.high,
                     "change_difference": change.estimate, "change_difference_low": change.low,
                     "change_difference_high": change.high, "interval": gap.method})
    return pd.DataFrame(rows)


def loss_flatness(losses: Sequence[float]) -> tuple[float, float]:
    """Mean training loss over the last tenth of the logged steps and over the tenth before it: a loss that has
    flattened changes little between them."""
    values = np.asarray(losses, dtype=float)
    tenth = max(1, len(values) // 10)
    if len(values) < 2 * tenth:
        raise ValueError(f"need at least two logged losses to compare, got {len(values)}")
    return float(values[-tenth:].mean()), float(values[-2 * tenth:-tenth].mean())


def expansion(lms: LanguageModels, labels: Sequence[str]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Vocabulary expansion on Parallel UD (ar, zh, hi) with English replay; bits per byte before and after, the
    parameter counts and CPT loss flatness, and paired bootstrap intervals (:func:`bpb_intervals`)."""
    from hashlib_core.data import load_ud_pud
    from hashlib_core.hashing import SignatureRegistry

    p = lms.profile
    per_language = p.expansion_tokens_per_language or max(1, round(5120 * p.vocab_size / PAPER_VOCAB_SIZE))
    texts = {lang: list(load_ud_pud(lang)["text"]) for lang in (*EXPANSION_LANGUAGES, "en")}
    split = {lang: (t[:TRAIN_SENTENCES], t[TRAIN_SENTENCES:]) for lang, t in texts.items()}
    tokenizer, new_tokens = merged_tokenizer(lms.tokenizer, {l: split[l][0] for l in EXPANSION_LANGUAGES},
                                             per_language)
    added = [t for lang in EXPANSION_LANGUAGES for t in new_tokens[lang]]
    old_v = lms.vocab_size
    bytes_old, bytes_new = token_bytes(lms.tokenizer), token_bytes(tokenizer)

    def eval_batches(tok, lang: str):
        encs = tok.encode_batch(split[lang][1], add_special_tokens=False)
        return padded_batches([[lms.eos_id] + e.ids[: p.seq_len - 1] for e in encs], p.batch_size, lms.eos_id)

    cpt_stream: list[int] = []
    for lang in (*EXPANSION_LANGUAGES, "en"):
        for e in tokenizer.encode_batch(split[lang][0], add_special_tokens=False):
            cpt_stream.extend([*e.ids, lms.eos_id])
    cpt_windows = windows(cpt_stream, p.seq_len, 0)
    source_ids = [lms.tokenizer.encode(bytelevel_text(t), add_special_tokens=False).ids for t in added]

    rows, params, sentences = [], [], {}
    for label in labels:
        spec = lms.spec(label)
        base = lms.model(spec)
        t_before = lms.temperature(spec)
        before = {lang: [next_token_scores(base, eval_batches(lms.tokenizer, lang), lms.device, token_bytes=bytes_old,
                                           temperature=t, per_sequence=True) for t in (1.0, t_before)]
                  for lang in (*EXPANSION_LANGUAGES, "en")}
        groups_before = parameter_groups(base)
        model = lms.build(spec).to(lms.device)
        model.load_state_dict(base.state_dict())
        if spec.kind == "standard":
            model = expand_standard(model, source_ids)
        else:
            registry = SignatureRegistry(spec.num_hashes, spec.num_buckets)
            registry.register(lms.tokens)
            registry.register(added)
            model.expand_vocabulary(registry.table())
        groups_after = parameter_groups(model)
        freeze_for_cpt(model)
        trainable = sum(x.numel() for x in model.parameters() if x.requires_grad)
        config = lms.train_config(p.expansion_steps, p.expansion_learning_rate)
        name = f"{spec.label} CPT"
        model = lms.fit(name, model, cpt_windows, config, extra={"expansion": per_language})
        last_tenth, previous_tenth = loss_flatness([c["loss"] for c in lms.curves if c["model"] == name])
        t_after = fit_temperature(model, cpt_windows[:CALIBRATION_WINDOWS], lms.device, batch_size=p.batch_size)
        for lang in (*EXPANSION_LANGUAGES, "en"):
            after, after_cal = (next_token_scores(model, eval_batches(tokenizer, lang), lms.device,
                                                  token_bytes=bytes_new, temperature=t, per_sequence=True)
                                for t in (1.0, t_after))
            b, b_cal = before[lang]
            sentences[(spec.label, lang, "before")] = np.asarray(b_cal.per_sequence, dtype=float)
            sentences[(spec.label, lang, "after")] = np.asarray(after_cal.per_sequence, dtype=float)
            rows.append({"model": spec.label, "language": lang, "bpb_before": b.bits_per_byte,
                         "bpb_after": after.bits_per_byte, "bpb_before_calibrated": b_cal.bits_per_byte,
                         "bpb_after_calibrated": after_cal.bits_per_byte, "temperature_before": t_before,
                         "temperature_after": t_after, "tokens_before": b.tokens, "tokens_after": after.tokens,
                         "bytes": after.bytes})
        params.append({"model": spec.label, "vocab_before": old_v, "vocab_after": old_v + len(added),
                       "new_tokens": len(added), "params_before": groups_before["total"],
                       "params_after": groups_after["total"],
                       "new_params": groups_after["total"] - groups_before["total"],
                       "cpt_trainable_params": trainable, "cpt_steps": config.max_steps,
                       "cpt_loss_last_tenth": last_tenth, "cpt_loss_previous_tenth": previous_tenth,
                       **{f"new_tokens_{lang}": len(new_tokens[lang]) for lang in EXPANSION_LANGUAGES}})
    mhf = next((spec.label for spec in map(lms.spec, labels) if spec.kind != "standard"), None)
    intervals = (bpb_intervals(sentences, mhf) if mhf and any(k[0] == "Standard" for k in sentences)
                 else pd.DataFrame())
    return pd.DataFrame(rows), pd.DataFrame(params), intervals
