"""The pNLP-Mixer chapter's dry run (:mod:`hashlib_core.dry_run`): every encoder of the profile with the paper's
18-intent head against Table 2's ``#Param.``, every task the profile trains on through
:func:`~hashlib_core.papers.pnlp_mixer.data.load_task` (the data mirror) and one batch through the real projector and
collator, and two steps of a tiny intent model whose slot head the loss never reaches (the paper's intent setting:
under several processes, DDP must be told of unused parameters).
"""
from __future__ import annotations

from typing import Any

import torch

from hashlib_core.dry_run import DataSample, DryRun, ModelSize, text_rows
from hashlib_core.papers.pnlp_mixer.data import load_task
from hashlib_core.papers.pnlp_mixer.experiments import PAPER_INTENTS
from hashlib_core.papers.pnlp_mixer.fit import Collator
from hashlib_core.papers.pnlp_mixer.heads import PNLPMixerForSequenceClassification
from hashlib_core.papers.pnlp_mixer.joint import PNLPMixerForIntentAndSlots
from hashlib_core.papers.pnlp_mixer.profiles import PNLPMixerProfile
from hashlib_core.papers.pnlp_mixer.projection import SentenceProjector
from hashlib_core.papers.pnlp_mixer.tables import paper_rows

__all__ = ["DRY_RUN", "profile_tasks"]

#: the WordPiece vocabulary the chapter's projector reads (:class:`~hashlib_core.papers.pnlp_mixer.runs.Resources`)
VOCAB = "bert-base-multilingual-cased"


def profile_tasks(profile: PNLPMixerProfile) -> list[str]:
    """Every task the profile trains a model on: Tables 1-2's, then Table 4's MTOP and the MASSIVE locales."""
    tasks = [*profile.comparison_tasks, *(f"mtop-{lang}" for lang in profile.mtop_languages),
             *(f"massive-{lang}" for lang in profile.massive_languages)]
    return list(dict.fromkeys(tasks))


def _sizes(profile: PNLPMixerProfile) -> list[ModelSize]:
    labels, table2 = paper_rows("encoder")
    out = []
    for encoder in profile.encoders:
        label = labels[encoder]
        config = profile.model_config(num_labels=PAPER_INTENTS, encoder=encoder)
        out.append(ModelSize(f"{label} ({PAPER_INTENTS} intents)",
                             lambda c=config: PNLPMixerForSequenceClassification(c),
                             paper=table2.loc[label, "#Param."] if label in table2.index else None,
                             source="Table 2 #Param." if label in table2.index else ""))
    return out


def _data(profile: PNLPMixerProfile, limit: int) -> list[DataSample]:
    from hashlib_core.data import load_wordpiece_vocab

    samples, first = [], None
    for name in profile_tasks(profile):
        task = load_task(name)
        head = task.train.head(limit)
        first = first or (task, head)
        samples.append(DataSample(f"{name} train (data mirror)", len(head), ("words", "intent", "slots"),
                                  ("words", "intent", "slots"),
                                  f"{' '.join(head.words[0])} -> {task.intent_names[head.intents[0]]}"))
    task, head = first
    projector = SentenceProjector.with_projection("minhash", load_wordpiece_vocab(VOCAB), profile.max_seq_len,
                                                  width=profile.bloom_size, num_hashes=profile.num_hashes)
    batch = Collator(projector, profile.max_seq_len)(list(zip(head.words, head.intents, head.slots)))
    samples.append(DataSample(f"{task.name} batch (MinHash projector, collator)", int(batch["labels"].shape[0]),
                              tuple(batch), ("input_features", "attention_mask", "labels", "slot_labels"),
                              f"input_features {tuple(batch['input_features'].shape)}"))
    return samples


def _tiny(profile: PNLPMixerProfile) -> tuple[torch.nn.Module, torch.utils.data.DataLoader]:
    sentences = [line.lower().replace(".", "").replace(",", "").split() for line in text_rows(8)]
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *sorted({w for s in sentences for w in s})]
    seq = 8
    projector = SentenceProjector.with_projection("minhash", vocab, seq, width=16, num_hashes=4)
    config = profile.model_config(num_hashes=4, bloom_size=16, max_seq_len=seq, hidden_size=8, num_mixer_layers=1,
                                  token_mixing_dim=8, channel_mixing_dim=8, classifier_hidden=8, num_labels=3,
                                  num_slot_labels=2, dropout=0.0)
    config.slot_loss_weight = 0.0              # an intent model: the slot head never reaches the loss
    items = [(s, i % 3, [0] * len(s)) for i, s in enumerate(sentences)]
    loader = torch.utils.data.DataLoader(items, batch_size=2, collate_fn=Collator(projector, seq))
    return PNLPMixerForIntentAndSlots(config), loader


def _plan(profile: PNLPMixerProfile) -> list[dict[str, Any]]:
    tasks = profile_tasks(profile)
    return [
        {"item": "tasks (data mirror, pinned sources)", "value": f"{len(tasks)}: {', '.join(tasks)}"},
        {"item": "projections x encoders (Tables 1, 2)", "value": f"{', '.join(profile.projections)} x "
                                                                  f"{', '.join(profile.encoders)}"},
        {"item": "tuning points x seeds (headline rows)", "value": f"{len(profile.tuning_points())} x "
                                                                   f"{profile.seeds}"},
        {"item": "batch / max epochs (ATIS, SNIPS) / max epochs (MTOP, MASSIVE) / patience",
         "value": f"{profile.batch_size} / {profile.max_epochs} / {profile.mtop_max_epochs} / {profile.patience}"},
        {"item": "model", "value": f"{profile.num_hashes} hashes into {profile.bloom_size}, {profile.max_seq_len} "
                                   f"positions, {profile.num_mixer_layers} mixer blocks of {profile.hidden_size}"},
        {"item": "checkpoints", "value": "none: each model trains in minutes; the best epoch is kept in memory "
                                         "(early stopping) and a rerun retrains it"},
    ]


DRY_RUN = DryRun(models=_sizes, data=_data, tiny=_tiny, plan=_plan)
