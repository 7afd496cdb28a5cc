"""Chapter "MultiHashFormer": multi-hash signatures instead of a vocabulary matrix (Xue, Yamaguchi & Aletras).

Experiments (each writes ``results/multihashformer/<profile>/<name>.csv``):

``table1_params``
    Table 1's ``#Param Emb`` / ``Dec`` columns counted on the ``meta`` device
    (:func:`hashlib_core.papers.multihashformer.modeling.multihashformer_table1_params`), for every printed row.
``lm_quality`` (+ ``training_curves``)
    Section 5.1 at reduced scale: Standard, Standard+kL, MHF (H3B10K) and MHF (H4B16K) trained from scratch with
    the shared loop on WikiText-2. Only WikiText-2's validation and test splits are staged, so the models are
    **trained on the validation split and evaluated on the test split**. The tokenizer is a byte-level BPE trained
    on the same validation text (32,768 entries in ``paper``, the Mistral size of Table 7). Metrics on the test
    split: perplexity over the valid vocabulary (``P_inf``, section 3.4, for MHF; the softmax for Standard) and
    next-token accuracy (ties broken uniformly, which matters only for colliding Single-ID signatures).
``single_vs_multi``
    Table 3: H1 vs H4 at equal parameters. As footnote 5 says, "H1B" repeats one hash value over the 4
    coordinates, so the model (tables, gate, cascade) is the H4B model and only the signatures differ; Single-ID
    signatures collide whenever the vocabulary exceeds ``B - 1``.
``hb_sweep``
    Figure 3: test accuracy and perplexity against embedding parameters for H in {3, 4} and several B.
``card660`` (+ ``card660_examples``)
    Table 2 and Appendix B: cosine similarity of each Card-660 pair from the last and second-to-last hidden
    state of each word's last token, correlated (Pearson, Spearman) with the human scores; ablation: mean of the
    word's tokens instead of the last one. Each word is fed alone, as ``<eos>`` + ``" " + word`` (multi-word
    entries have their ``_`` replaced by spaces), so it is read the way a word inside running text is.
``rank`` (+ ``rank_spectrum``)
    Appendix A: numerical rank of the log-probability matrix (held-out test contexts x vocabulary) of each model,
    against the bounds ``d`` (Standard) and ``min(B, H*d)`` (MHF) the appendix derives.
``expansion`` (+ ``expansion_params``)
    Sections 4.4 / 5.3: new Arabic, Chinese and Hindi tokens (a BPE trained on Parallel UD) are appended to the
    tokenizer; MHF registers new signatures (no new parameter), Standard gets new rows initialised with the mean
    of their source-token embeddings; continual pre-training updates only the parts the paper updates. Quality is
    measured in bits per UTF-8 byte (comparable across the two tokenizers) on held-out PUD sentences.
``lsh_mix``
    Table 4: MHF (H4B16K) with ``L`` of its 4 signature coordinates from character-trigram LSH
    (:mod:`hashlib_core.hashing.lsh_trigram`, the released code's LSH as implementation notes A3 document it) and
    ``4 - L`` from MMH3.

Scaled bucket counts: the paper's B are for V = 32,768; a profile with a smaller vocabulary V keeps the paper's
bucket-to-vocabulary ratio, ``B = round(B_paper * V / 32768)`` (e.g. H4B16K has B = 1,024 at V = 2,048), so that
collisions of Single-ID signatures and the pressure on each bucket are those of the paper. The ``paper`` profile
uses the printed B (with ``K`` = 1,024, as section 4.1).

Run every experiment of a profile (also under ``accelerate launch``)::

    python -m hashlib_core.papers.multihashformer.experiments --profile small --device cuda
"""
from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np
import pandas as pd
import torch
from torch import nn

from hashlib_core.profiles import Profile, ProfileSet, seed_everything, select_device
from hashlib_core.profiles import load_or_run as _load_or_run
from hashlib_core.training import TrainConfig, config_digest, train
from hashlib_core.results import ResultsStore, repo_root

if TYPE_CHECKING:
    from hashlib_core.papers.multihashformer.modeling import BackboneShape

__all__ = [
    "CHAPTER", "PAPER_VOCAB_SIZE", "EXPERIMENTS", "MultiHashFormerProfile", "PROFILES", "ModelKey",
    "scaled_buckets", "single_id_table", "checkpoint_dir", "Chapter", "run", "load_or_run", "main",
]

CHAPTER = "multihashformer"
#: The vocabulary size every B of the paper refers to (Table 7: Mistral tokenizer, 32,768 entries).
PAPER_VOCAB_SIZE = 32768
EXPERIMENTS = ("table1", "lm", "single_vs_multi", "sweep", "card660", "rank", "expansion", "lsh")
#: UD PUD languages of the expansion experiment (section 4.4 uses Arabic, Chinese and Hindi from FineWeb2).
EXPANSION_LANGUAGES = ("ar", "zh", "hi")


def _split(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


@dataclass(frozen=True)
class MultiHashFormerProfile(Profile):
    """Knobs of the chapter. Lists are comma-separated strings (so a profile round-trips through JSON)."""

    # backbone (Qwen3, Table 7 shape names); Standard+kL adds ``added_layers``
    hidden_size: int = 32
    intermediate_size: int = 64
    num_layers: int = 2
    num_heads: int = 4
    num_kv_heads: int = 2
    added_layers: int = 1
    # data and tokenizer
    vocab_size: int = 2048
    seq_len: int = 64
    max_train_tokens: int = 0           # 0: the whole validation split
    max_eval_tokens: int = 4096         # test-split tokens scored (0: all)
    # optimisation (Table 7: AdamW, cosine, warm-up, clip 1.0, weight decay 0.1)
    batch_size: int = 8
    max_steps: int = 40
    learning_rate: float = 3e-3
    warmup_steps: int = 4
    weight_decay: float = 0.1
    mixed_precision: str = "no"
    # experiments
    experiments: str = ",".join(EXPERIMENTS)
    lm_variants: str = "Standard,Standard+kL,H3B10K,H4B16K"
    single_vs_multi_buckets: str = "B4K,B8K,B16K"
    sweep_variants: str = "H3B4K,H3B8K,H3B16K,H4B4K,H4B8K,H4B16K,H4B32K"
    rank_contexts: int = 256
    #: singular values below rtol * s_max count as zero; the float32 noise floor of a log-probability matrix is
    #: near 1e-8 relative (eps 6e-8 per entry), so 1e-7 separates structure from rounding
    rank_rtol: float = 1e-7
    expansion_variants: str = "Standard,H4B16K"
    expansion_tokens_per_language: int = 0    # 0: 5,120 * V / 32,768 (section 4.4 adds 5K per language to 32K)
    expansion_steps: int = 30
    expansion_learning_rate: float = 2e-3
    #: Table 4: LSH:MMH3 coordinate splits of MHF (H4B16K)
    lsh_mixes: str = "0:4,1:3,2:2,3:1,4:0"

    def __post_init__(self) -> None:
        super().__post_init__()
        unknown = set(_split(self.experiments)) - set(EXPERIMENTS)
        if unknown:
            raise ValueError(f"unknown experiment(s) {sorted(unknown)}; choose from {', '.join(EXPERIMENTS)}")
        for name in ("hidden_size", "intermediate_size", "num_layers", "num_heads", "num_kv_heads", "seq_len",
                     "batch_size", "max_steps", "vocab_size", "rank_contexts", "expansion_steps"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.seq_len < 2:
            raise ValueError(f"seq_len must be >= 2 (one context and one target), got {self.seq_len}")

    def wants(self, experiment: str) -> bool:
        return experiment in _split(self.experiments)

    def shape(self) -> "BackboneShape":
        """The profile's Qwen3 backbone as a :class:`~hashlib_core.papers.multihashformer.modeling.BackboneShape`."""
        from hashlib_core.papers.multihashformer.modeling import BackboneShape

        return BackboneShape(self.hidden_size, self.intermediate_size, self.num_layers, self.num_heads,
                             self.num_kv_heads, added_layers=self.added_layers, vocab_size=self.vocab_size)


PROFILES: ProfileSet[MultiHashFormerProfile] = ProfileSet(
    # smoke: CPU, about a minute for every experiment: d 32, 2 layers, V 1,024, 100 steps of 8 x 64 tokens; fewer
    # (H, B) variants and LSH splits. Proves the code paths; the numbers are not meant to match the paper.
    smoke=MultiHashFormerProfile(
        name="smoke", budget_minutes=1.5, vocab_size=1024, max_train_tokens=60_000, max_steps=100,
        learning_rate=1e-2, warmup_steps=10, single_vs_multi_buckets="B4K,B16K", sweep_variants="H3B4K,H4B32K",
        expansion_tokens_per_language=64, expansion_steps=20, expansion_learning_rate=5e-3, lsh_mixes="0:4,4:0",
    ),
    # small: one GPU, at most 10 minutes per experiment: d 256, 4 layers (+2L), V 8,192, 600 steps of 32 x 256
    # tokens in bf16, every variant of Tables 1, 3 and 4 and of the Figure 3 sweep, the whole test split.
    small=MultiHashFormerProfile(
        name="small", accelerator="gpu", budget_minutes=10.0, hidden_size=256, intermediate_size=768,
        num_layers=4, num_heads=4, num_kv_heads=2, added_layers=2, vocab_size=8192, seq_len=256,
        max_eval_tokens=0, batch_size=32, max_steps=600, learning_rate=1e-3, warmup_steps=60,
        mixed_precision="bf16", rank_contexts=1024, expansion_steps=200, expansion_learning_rate=5e-4,
    ),
    paper=MultiHashFormerProfile(
        # Table 7 (100M): d 768, FFN 2560, 12 layers, 12/2 heads, +4L; V 32,768; lr 5e-4, warm-up 2,000, cosine,
        # AdamW wd 0.1, bf16, clip 1.0. The paper trains 20K steps of 256 x 2,048 tokens on FineWeb-Edu; the staged
        # WikiText-2 validation split (about 0.25M tokens) allows far fewer distinct tokens, so this profile keeps
        # the shapes and the optimiser, not the data volume.
        name="paper", accelerator="gpu", budget_minutes=600.0, hidden_size=768, intermediate_size=2560,
        num_layers=12, num_heads=12, num_kv_heads=2, added_layers=4, vocab_size=PAPER_VOCAB_SIZE, seq_len=2048,
        max_eval_tokens=0, batch_size=16, max_steps=2000, learning_rate=5e-4, warmup_steps=200,
        mixed_precision="bf16", rank_contexts=4096, expansion_steps=1000, expansion_learning_rate=3e-4,
    ),
)


# ----------------------------------------------------------------------------------------------------------------
# Variants and signatures
# ----------------------------------------------------------------------------------------------------------------

def scaled_buckets(paper_buckets: int, vocab_size: int) -> int:
    """The paper's bucket count ``B`` (for V = 32,768) at vocabulary size ``vocab_size``, same ``B / V`` ratio."""
    if paper_buckets < 2 or vocab_size < 1:
        raise ValueError(f"need paper_buckets >= 2 and vocab_size >= 1, got {paper_buckets}, {vocab_size}")
    return max(2, round(paper_buckets * vocab_size / PAPER_VOCAB_SIZE))


@dataclass(frozen=True)
class ModelKey:
    """One trained model: ``label`` as the paper writes it, and what is actually built.

    ``kind`` is ``"standard"`` (``extra_layers``), ``"mhf"`` (``num_hashes``, ``num_buckets``) or ``"single_id"``
    (an H4 model whose signatures repeat one MMH3 value over the 4 coordinates, Table 3 footnote 5).
    """

    label: str
    kind: str
    extra_layers: int = 0
    num_hashes: int = 0
    paper_buckets: int = 0
    num_buckets: int = 0
    num_lsh: int = 0

    @classmethod
    def parse(cls, label: str, profile: MultiHashFormerProfile) -> "ModelKey":
        from hashlib_core.papers.multihashformer.modeling import parse_variant

        label = label.replace("+kL", f"+{profile.added_layers}L")
        spec = parse_variant(label)
        if spec.kind == "standard":
            return cls(label, "standard", extra_layers=spec.extra_layers)
        buckets = scaled_buckets(spec.num_buckets, profile.vocab_size)
        if spec.num_hashes == 1:
            return cls(label, "single_id", num_hashes=4, paper_buckets=spec.num_buckets, num_buckets=buckets)
        return cls(label, "mhf", num_hashes=spec.num_hashes, paper_buckets=spec.num_buckets, num_buckets=buckets)

    @property
    def built_variant(self) -> str:
        """The :func:`~hashlib_core.papers.multihashformer.modeling.build_model` variant string of the built model."""
        if self.kind == "standard":
            return f"Standard+{self.extra_layers}L" if self.extra_layers else "Standard"
        return f"H{self.num_hashes}B{self.num_buckets}"

    @property
    def hashes_shown(self) -> int:
        """H as the paper labels the model (1 for Single-ID)."""
        return 1 if self.kind == "single_id" else self.num_hashes


def single_id_table(tokens: Sequence[str], num_buckets: int, num_coordinates: int = 4) -> torch.Tensor:
    """Single-ID signatures (Table 3 footnote 5): ``mmh3.hash128(token, seed=0) % (B-1) + 1`` repeated
    ``num_coordinates`` times. Unlike :class:`~hashlib_core.hashing.SignatureRegistry` signatures they collide:
    at most ``B - 1`` tokens can have distinct ones."""
    from hashlib_core.hashing import MMH3MultiHasher

    base = MMH3MultiHasher(1, num_buckets).batch(list(tokens))       # (V, 1)
    return torch.from_numpy(np.repeat(base, num_coordinates, axis=1)).long()


def _install_colliding_table(model: nn.Module, table: torch.Tensor) -> None:
    """Write Single-ID signatures into an MHF model's ``hash_map``.

    ``set_signature_table`` refuses duplicated signatures, which is right for every MultiHashFormer model; the
    Single-ID ablation of Table 3 exists to measure what collisions cost, so here the buffer is written directly
    (entries are still checked to lie in ``[1, B)``).
    """
    hash_map = model.embeddings.hash_map
    if table.shape != hash_map.shape:
        raise ValueError(f"Single-ID table has shape {tuple(table.shape)}, the model expects {tuple(hash_map.shape)}")
    if int(table.min()) < 1 or int(table.max()) >= model.config.num_buckets:
        raise ValueError("Single-ID signatures must lie in [1, B)")
    with torch.no_grad():
        hash_map.copy_(table.to(hash_map.device))


# ----------------------------------------------------------------------------------------------------------------
# Scoring: full log-distributions over the vocabulary, hidden states
# ----------------------------------------------------------------------------------------------------------------

def _is_mhf(model: nn.Module) -> bool:
    from hashlib_core.papers.multihashformer.modeling import MultiHashFormerForCausalLM

    return isinstance(model, MultiHashFormerForCausalLM)


def _hidden_states(model: nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor | None):
    """The backbone's hidden states (embedding output, every layer; the last one after the final norm)."""
    if _is_mhf(model):
        return model.backbone(inputs_embeds=model.embeddings(input_ids), attention_mask=attention_mask,
                              output_hidden_states=True).hidden_states
    return model.model(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True).hidden_states


def _vocab_log_probs(model: nn.Module, hidden: torch.Tensor) -> torch.Tensor:
    """``(n, V)`` log-probabilities of the next token: ``P_inf`` (section 3.4) for MHF, the softmax for Standard."""
    if _is_mhf(model):
        from hashlib_core.decoding.multihash import hash_log_probs, vocab_log_probs

        return vocab_log_probs(hash_log_probs(model.hash_logits(hidden).float()), model.hash_map)
    return torch.log_softmax(model.lm_head(hidden).float(), dim=-1)


@dataclass
class _Scores:
    nll: float = 0.0          # nats, summed
    correct: float = 0.0      # tie-aware (1/k when the target is one of k tied maxima)
    tokens: int = 0
    bytes: int = 0
    rows: list[torch.Tensor] | None = None

    @property
    def perplexity(self) -> float:
        return math.exp(self.nll / self.tokens) if self.tokens else math.nan

    @property
    def accuracy(self) -> float:
        return 100.0 * self.correct / self.tokens if self.tokens else math.nan

    @property
    def bits_per_byte(self) -> float:
        return self.nll / math.log(2) / self.bytes if self.bytes else math.nan


@torch.no_grad()
def _score(
    model: nn.Module, batches: Sequence[tuple[torch.Tensor, torch.Tensor]], device: torch.device, *,
    token_bytes: torch.Tensor | None = None, keep_rows: int = 0, chunk: int = 256,
) -> _Scores:
    """Score next-token predictions of right-padded ``(input_ids, attention_mask)`` batches.

    Position ``t`` predicts ``t + 1`` when both are real tokens. ``token_bytes[id]`` (optional) is the UTF-8 length
    of each id, for bits per byte; ``keep_rows`` keeps that many log-probability rows (for the rank analysis).
    """
    model.eval()
    out = _Scores(rows=[] if keep_rows else None)
    kept = 0
    for ids, mask in batches:
        ids, mask = ids.to(device), mask.to(device)
        hidden = _hidden_states(model, ids, mask)[-1][:, :-1]
        keep = (mask[:, :-1].bool() & mask[:, 1:].bool())
        hidden, targets = hidden[keep], ids[:, 1:][keep]
        for s in range(0, targets.shape[0], chunk):
            lp = _vocab_log_probs(model, hidden[s:s + chunk])
            tgt = targets[s:s + chunk]
            tlp = lp.gather(1, tgt[:, None]).squeeze(1)
            best = lp.max(dim=1).values
            ties = lp.eq(best[:, None]).sum(1)
            out.nll -= float(tlp.double().sum())
            out.correct += float((tlp.eq(best).double() / ties.double()).sum())
            out.tokens += int(tgt.numel())
            if token_bytes is not None:
                out.bytes += int(token_bytes.to(tgt.device)[tgt].sum())
            if kept < keep_rows:
                take = lp[: keep_rows - kept].double().cpu()
                out.rows.append(take)
                kept += take.shape[0]
    return out


def numerical_rank(matrix: torch.Tensor, rtol: float) -> tuple[int, np.ndarray]:
    """Rank of ``matrix`` as the number of singular values above ``rtol * s_max`` (float64 SVD); also returns the
    singular values. ``-inf`` entries (unregistered ids) must be removed by the caller."""
    if not torch.isfinite(matrix).all():
        raise ValueError("matrix has non-finite entries; drop unregistered vocabulary columns first")
    s = torch.linalg.svdvals(matrix.double()).numpy()
    return int((s > rtol * s[0]).sum()) if s.size else 0, s


# ----------------------------------------------------------------------------------------------------------------
# The chapter: data, tokenizer, models, experiments
# ----------------------------------------------------------------------------------------------------------------

def _windows(stream: Sequence[int], seq_len: int, limit: int) -> torch.Tensor:
    """Non-overlapping ``seq_len`` windows of a token stream (the last partial one dropped), ``limit`` tokens max."""
    arr = torch.tensor(stream[: limit or None], dtype=torch.long)
    n = arr.numel() // seq_len
    if n == 0:
        raise ValueError(f"the token stream ({arr.numel()} tokens) is shorter than one window of {seq_len}")
    return arr[: n * seq_len].view(n, seq_len)


def _batches(windows: torch.Tensor, size: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    return [(w, torch.ones_like(w)) for w in windows.split(size)]


def _padded(sequences: Sequence[Sequence[int]], size: int, pad_id: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    out = []
    for s in range(0, len(sequences), size):
        group = sequences[s:s + size]
        width = max(len(x) for x in group)
        ids = torch.full((len(group), width), pad_id, dtype=torch.long)
        mask = torch.zeros((len(group), width), dtype=torch.long)
        for i, x in enumerate(group):
            ids[i, :len(x)] = torch.tensor(x)
            mask[i, :len(x)] = 1
        out.append((ids, mask))
    return out


class _LMDataset(torch.utils.data.Dataset):
    def __init__(self, windows: torch.Tensor) -> None:
        self.windows = windows

    def __len__(self) -> int:
        return self.windows.shape[0]

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        return {"input_ids": self.windows[i], "labels": self.windows[i]}


def _token_bytes(tokenizer) -> torch.Tensor:
    """UTF-8 bytes of every id of a byte-level BPE (one alphabet symbol per byte; special tokens count 0)."""
    from hashlib_core.bpe import SPECIAL_TOKENS

    vocab = tokenizer.get_vocab()
    out = torch.zeros(tokenizer.get_vocab_size(), dtype=torch.long)
    for token, i in vocab.items():
        out[i] = 0 if token in SPECIAL_TOKENS else len(token)
    return out


#: profile settings that do not change any trained weight (left out of checkpoint digests)
_EVALUATION_ONLY = frozenset({
    "experiments", "lm_variants", "single_vs_multi_buckets", "sweep_variants", "rank_contexts", "rank_rtol",
    "expansion_variants", "lsh_mixes", "max_eval_tokens", "budget_minutes", "device", "accelerator",
})


def checkpoint_dir(root: Path, profile: MultiHashFormerProfile, name: str, config: TrainConfig,
                   extra: Any = None) -> Path:
    """``<root>/multihashformer/<profile>/<model>-<digest>``; the digest covers every setting that changes the
    trained weights (not the choice of experiments or evaluation sizes), so runs of different experiment subsets
    share their models."""
    training = {k: v for k, v in profile.to_dict().items() if k not in _EVALUATION_ONLY}
    digest = config_digest({"profile": training, "train": config.__dict__, "extra": extra})
    safe = "".join(c if c.isalnum() or c in "+-_" else "_" for c in name)
    return Path(root) / CHAPTER / profile.name / f"{safe}-{digest}"


class Chapter:
    """State shared by the experiments of one profile run: tokenizer, data, trained models (trained once each)."""

    def __init__(self, profile: MultiHashFormerProfile, *, checkpoint_root: str | Path | None = None,
                 progress: bool = False) -> None:
        from hashlib_core.data import load_wikitext2
        from hashlib_core.bpe import EOS_ID, train_bpe

        self.profile = profile
        self.progress = progress
        self.device = select_device(profile.device)
        seed_everything(profile.seed)
        self.checkpoint_root = Path(checkpoint_root) if checkpoint_root else repo_root() / "checkpoints"
        wiki = load_wikitext2()
        train_lines = [t for t in wiki["validation"]["text"] if t.strip()]
        test_lines = [t for t in wiki["test"]["text"] if t.strip()]
        self.tokenizer = train_bpe(train_lines, profile.vocab_size)
        self.eos_id = EOS_ID
        self.tokens = [self.tokenizer.id_to_token(i) for i in range(self.tokenizer.get_vocab_size())]
        self.vocab_size = len(self.tokens)
        self.train_windows = _windows(self._stream(train_lines), profile.seq_len, profile.max_train_tokens)
        self.test_windows = _windows(self._stream(test_lines), profile.seq_len, profile.max_eval_tokens)
        self.models: dict[ModelKey, nn.Module] = {}
        self.curves: list[dict[str, Any]] = []
        self.train_seconds: dict[str, float] = {}
        self._tables: dict[tuple[int, int], torch.Tensor] = {}

    def _stream(self, lines: Sequence[str]) -> list[int]:
        stream: list[int] = []
        for enc in self.tokenizer.encode_batch(list(lines), add_special_tokens=False):
            stream.extend(enc.ids)
            stream.append(self.eos_id)
        return stream

    # -------------------------------------------------------------------------------------------- models
    def signature_table(self, num_hashes: int, num_buckets: int) -> torch.Tensor:
        """Collision-free signatures of the tokenizer's entries, ids in tokenizer order (SignatureRegistry)."""
        from hashlib_core.hashing import SignatureRegistry

        if (num_hashes, num_buckets) not in self._tables:
            registry = SignatureRegistry(num_hashes, num_buckets)
            ids = registry.register(self.tokens)
            if not np.array_equal(ids, np.arange(len(self.tokens))):
                raise RuntimeError("registry ids differ from tokenizer ids; the tokenizer has duplicate entries")
            self._tables[(num_hashes, num_buckets)] = registry.table()
        return self._tables[(num_hashes, num_buckets)]

    def build(self, key: ModelKey, vocab_size: int | None = None) -> nn.Module:
        """A freshly initialised model for ``key`` (seeded: the same key gives the same initial weights)."""
        from hashlib_core.papers.multihashformer.modeling import build_model

        torch.manual_seed(self.profile.seed)
        shape = self.profile.shape()
        if key.kind == "standard":
            return build_model(shape, key.built_variant, vocab_size=vocab_size or self.vocab_size)
        if key.kind == "mhf" and key.num_lsh:
            from hashlib_core.hashing.lsh_trigram import mixed_signature_table

            table = mixed_signature_table(self.tokens, key.num_lsh, key.num_hashes, key.num_buckets)
            return build_model(shape, key.built_variant, signature_table=table)
        if key.kind == "mhf":
            return build_model(shape, key.built_variant,
                               signature_table=self.signature_table(key.num_hashes, key.num_buckets))
        model = build_model(shape, key.built_variant, vocab_size=self.vocab_size)
        _install_colliding_table(model, single_id_table(self.tokens, key.num_buckets, key.num_hashes))
        return model

    def train_config(self, max_steps: int | None = None, learning_rate: float | None = None) -> TrainConfig:
        p = self.profile
        steps = max_steps or p.max_steps
        return TrainConfig(max_steps=steps, learning_rate=learning_rate or p.learning_rate,
                           weight_decay=p.weight_decay, warmup_steps=min(p.warmup_steps, steps // 2),
                           scheduler="cosine", grad_clip=1.0, log_every=max(1, steps // 10),
                           mixed_precision=p.mixed_precision, seed=p.seed)

    def _checkpoint_dir(self, name: str, config: TrainConfig, extra: Any = None) -> Path:
        return checkpoint_dir(self.checkpoint_root, self.profile, name, config, extra)

    def fit(self, name: str, model: nn.Module, windows: torch.Tensor, config: TrainConfig, extra: Any = None):
        """Train ``model`` with the shared loop (checkpoints and exact resume under ``checkpoints/``)."""
        loader = torch.utils.data.DataLoader(_LMDataset(windows), batch_size=self.profile.batch_size,
                                             shuffle=True, drop_last=windows.shape[0] >= self.profile.batch_size)
        output_dir = self._checkpoint_dir(name, config, extra)
        result = train(model, loader, config, output_dir=output_dir, progress=self.progress)
        self.curves.extend({"model": name, "step": s, "loss": l} for s, l in result.losses)
        self.train_seconds[name] = result.wall_time_s
        return model.to(self.device)

    def model(self, key: ModelKey) -> nn.Module:
        """The trained model of ``key`` (trained on first use)."""
        if key not in self.models:
            model = self.build(key).to(self.device)
            self.models[key] = self.fit(key.label, model, self.train_windows, self.train_config())
        return self.models[key]

    def key(self, label: str) -> ModelKey:
        return ModelKey.parse(label, self.profile)

    def evaluate(self, key: ModelKey, keep_rows: int = 0) -> _Scores:
        return _score(self.model(key), _batches(self.test_windows, self.profile.batch_size), self.device,
                      keep_rows=keep_rows)

    def describe(self, key: ModelKey) -> dict[str, Any]:
        from hashlib_core.papers.multihashformer.modeling import parameter_groups

        groups = parameter_groups(self.model(key))
        return {"model": key.label, "built_as": key.built_variant, "H": key.hashes_shown,
                "B_paper": key.paper_buckets, "B": key.num_buckets, "emb_params": groups["emb"],
                "dec_params": groups["backbone"], "total_params": groups["total"]}


# ----------------------------------------------------------------------------------------------------------------
# Experiments
# ----------------------------------------------------------------------------------------------------------------

def table1_params() -> pd.DataFrame:
    """Table 1 ``#Param`` columns from models built on the meta device (see the library function's docstring)."""
    from hashlib_core.papers.multihashformer.modeling import multihashformer_table1_params

    return multihashformer_table1_params()


def fig3_embedding_params() -> pd.DataFrame:
    """Embedding parameters (``emb`` of :func:`~hashlib_core.papers.multihashformer.modeling.parameter_groups`) of the
    Table 9 variants at the 100M and 1B scales, on the meta device; section 6 quotes "10M to 102M" for Figure 3."""
    from hashlib_core.papers.multihashformer.modeling import build_model, parameter_groups
    from hashlib_core.params import instantiate_on_meta
    from hashlib_core.results import load_paper_table

    rows = []
    for variant in load_paper_table("multihashformer_table9")["MHF abbr."]:
        for size in ("100M", "1B"):
            model = instantiate_on_meta(lambda: build_model(size, variant))
            rows.append({"variant": variant, "size": size, "H": model.config.num_hashes,
                         "B": model.config.num_buckets, "emb_params": parameter_groups(model)["emb"]})
    return pd.DataFrame(rows)


def lm_quality(ch: Chapter) -> pd.DataFrame:
    """Test-split perplexity (valid vocabulary) and next-token accuracy of the Table 1 families."""
    rows = []
    for label in _split(ch.profile.lm_variants):
        key = ch.key(label)
        s = ch.evaluate(key)
        rows.append({**ch.describe(key), "test_perplexity": s.perplexity, "test_accuracy_%": s.accuracy,
                     "test_tokens": s.tokens, "train_seconds": ch.train_seconds.get(key.label, 0.0)})
    return pd.DataFrame(rows)


def single_vs_multi(ch: Chapter) -> pd.DataFrame:
    """Table 3 analog: H1 (Single-ID, one value repeated on 4 coordinates) vs H4 at the same B and parameters."""
    rows = []
    for b in _split(ch.profile.single_vs_multi_buckets):
        for h in (1, 4):
            key = ch.key(f"H{h}{b}")
            model = ch.model(key)
            sigs = model.hash_map
            distinct = int(torch.unique(sigs, dim=0).shape[0])
            s = ch.evaluate(key)
            rows.append({**ch.describe(key), "bucket_label": b, "distinct_signatures": distinct,
                         "colliding_tokens": ch.vocab_size - distinct, "test_perplexity": s.perplexity,
                         "test_accuracy_%": s.accuracy})
    return pd.DataFrame(rows)


def hb_sweep(ch: Chapter) -> pd.DataFrame:
    """Figure 3 analog: accuracy and perplexity vs embedding parameters for several (H, B), plus Standard."""
    rows = []
    for label in ["Standard"] + _split(ch.profile.sweep_variants):
        key = ch.key(label)
        s = ch.evaluate(key)
        rows.append({**ch.describe(key), "test_perplexity": s.perplexity, "test_accuracy_%": s.accuracy})
    return pd.DataFrame(rows)


def lsh_mix(ch: Chapter) -> pd.DataFrame:
    """Table 4 analog: MHF (H4B16K) with ``L`` of its 4 coordinates from trigram LSH
    (:mod:`hashlib_core.hashing.lsh_trigram`) and ``4 - L`` from MMH3; ``0:4`` is the LM-quality H4B16K model."""
    rows = []
    base = ch.key("H4B16K")
    for mix in _split(ch.profile.lsh_mixes):
        try:
            num_lsh, num_mmh3 = (int(x) for x in mix.split(":"))
        except ValueError:
            raise ValueError(f"LSH:MMH3 mix must look like '2:2', got {mix!r}") from None
        if num_lsh + num_mmh3 != base.num_hashes:
            raise ValueError(f"LSH:MMH3 mix {mix!r} must add up to H = {base.num_hashes}")
        key = base if num_lsh == 0 else ModelKey(f"H4B16K LSH {mix}", "mhf", num_hashes=base.num_hashes,
                                                 paper_buckets=base.paper_buckets, num_buckets=base.num_buckets,
                                                 num_lsh=num_lsh)
        s = ch.evaluate(key)
        distinct = {k: int(torch.unique(ch.model(key).hash_map[:, k]).numel()) for k in range(key.num_hashes)}
        rows.append({**ch.describe(key), "mix": mix, "lsh": num_lsh, "mmh3": num_mmh3,
                     "buckets_used_min": min(distinct.values()), "test_perplexity": s.perplexity,
                     "test_accuracy_%": s.accuracy})
    return pd.DataFrame(rows)


def _word_sequences(ch: Chapter, words: Sequence[str]) -> list[list[int]]:
    """``<eos>`` followed by the tokens of ``" " + word`` (``_`` of multi-word entries read as spaces)."""
    texts = [" " + w.replace("_", " ").strip() for w in words]
    return [[ch.eos_id] + e.ids for e in ch.tokenizer.encode_batch(texts, add_special_tokens=False)]


@torch.no_grad()
def word_vectors(ch: Chapter, model: nn.Module, words: Sequence[str]) -> dict[tuple[str, str], torch.Tensor]:
    """Vectors of ``words`` keyed by (layer, pooling): layer ``last`` (final hidden state, after the norm) or
    ``second_to_last`` (output of layer L-1); pooling ``last_token`` (the paper) or ``mean`` (of the word's tokens,
    the ``<eos>`` context excluded)."""
    model.eval()
    seqs = _word_sequences(ch, words)
    out: dict[tuple[str, str], list[torch.Tensor]] = {}
    for ids, mask in _padded(seqs, 64, ch.eos_id):
        ids, mask = ids.to(ch.device), mask.to(ch.device)
        states = _hidden_states(model, ids, mask)
        lengths = mask.sum(1)
        word_mask = mask.clone().float()
        word_mask[:, 0] = 0.0                                  # the <eos> context is not part of the word
        for layer, h in (("last", states[-1]), ("second_to_last", states[-2])):
            h = h.float()
            last = h[torch.arange(h.shape[0], device=h.device), lengths - 1]
            mean = (h * word_mask[..., None]).sum(1) / word_mask.sum(1, keepdim=True)
            out.setdefault((layer, "last_token"), []).append(last.cpu())
            out.setdefault((layer, "mean"), []).append(mean.cpu())
    return {k: torch.cat(v) for k, v in out.items()}


def _pair_similarities(ch: Chapter, model: nn.Module, w1: Sequence[str], w2: Sequence[str]):
    vec1, vec2 = word_vectors(ch, model, w1), word_vectors(ch, model, w2)
    return {k: torch.nn.functional.cosine_similarity(vec1[k], vec2[k], dim=1).numpy() for k in vec1}


def card660(ch: Chapter) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 2 (correlations on all 660 pairs) and Appendix B (the printed example pairs, our similarities)."""
    from scipy.stats import pearsonr, spearmanr

    from hashlib_core.data import load_card660
    from hashlib_core.results import load_paper_table

    pairs = load_card660()
    human = np.asarray(pairs["score"], dtype=float)
    examples = pd.concat([load_paper_table("multihashformer_table5").assign(table="Table 5"),
                          load_paper_table("multihashformer_table6").assign(table="Table 6")], ignore_index=True)
    examples = examples.drop_duplicates(subset=["word_1", "word_2"]).reset_index(drop=True)
    rows, example_cols = [], {}
    for label in _split(ch.profile.lm_variants):
        key = ch.key(label)
        model = ch.model(key)
        sims = _pair_similarities(ch, model, pairs["word1"], pairs["word2"])
        for (layer, pooling), sim in sims.items():
            rows.append({"model": key.label, "layer": layer, "pooling": pooling,
                         "pearson_r": float(pearsonr(sim, human)[0]), "spearman_rho": float(spearmanr(sim, human)[0]),
                         "pairs": len(sim)})
        ex = _pair_similarities(ch, model, list(examples["word_1"]), list(examples["word_2"]))
        example_cols[key.label] = ex[("second_to_last", "last_token")]
    ex_table = examples[["table", "category", "word_1", "word_2", "Human"]].copy()
    for label, values in example_cols.items():
        ex_table[f"ours {label}"] = np.round(values, 4)
    return pd.DataFrame(rows), ex_table


def rank_analysis(ch: Chapter) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Appendix A: numerical rank of the (contexts x valid vocabulary) log-probability matrix of each LM model."""
    rows, spectra = [], []
    d = ch.profile.hidden_size
    for label in _split(ch.profile.lm_variants):
        key = ch.key(label)
        s = ch.evaluate(key, keep_rows=ch.profile.rank_contexts)
        matrix = torch.cat(s.rows)
        valid = torch.isfinite(matrix).all(0)
        matrix = matrix[:, valid]
        rank, sv = numerical_rank(matrix, ch.profile.rank_rtol)
        n, v = matrix.shape
        bound = d if key.kind == "standard" else min(key.num_buckets, key.num_hashes * d)
        rows.append({"model": key.label, "contexts": n, "valid_vocab": v, "d": d, "H": key.hashes_shown,
                     "B": key.num_buckets, "paper_bound": bound, "bound_with_normaliser": min(bound + 1, n, v),
                     "numerical_rank": rank, "rtol": ch.profile.rank_rtol})
        spectra.append(pd.DataFrame({"model": key.label, "index": np.arange(1, len(sv) + 1),
                                     "singular_value_rel": sv / sv[0]}))
    return pd.DataFrame(rows), pd.concat(spectra, ignore_index=True)


def _merged_tokenizer(base, extra_texts: dict[str, list[str]], per_language: int):
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


def _expand_standard(model: nn.Module, source_ids: list[list[int]]) -> nn.Module:
    """New rows = mean of the embeddings of each new token's source tokens (section 4.4 "mean initialization")."""
    old = model.get_input_embeddings().weight.shape[0]
    model.resize_token_embeddings(old + len(source_ids), mean_resizing=False)
    weight = model.get_input_embeddings().weight
    with torch.no_grad():
        for i, src in enumerate(source_ids):
            weight[old + i] = weight[torch.tensor(src, device=weight.device)].mean(0)
    return model


def _expand_mhf(model: nn.Module, table: torch.Tensor) -> nn.Module:
    """The same weights in a model whose ``hash_map`` has the expanded table (no new parameter)."""
    from hashlib_core.papers.multihashformer.modeling import MultiHashFormerForCausalLM

    config = model.config.to_dict()
    config["vocab_size"] = int(table.shape[0])
    for key in ("model_type", "transformers_version", "architectures"):
        config.pop(key, None)
    bigger = MultiHashFormerForCausalLM(type(model.config)(**config)).to(model.device)
    state = {k: v for k, v in model.state_dict().items() if not k.endswith("hash_map")}
    missing, unexpected = bigger.load_state_dict(state, strict=False)
    if unexpected or [m for m in missing if not m.endswith("hash_map")]:
        raise RuntimeError(f"expansion lost weights: missing {missing}, unexpected {unexpected}")
    bigger.set_signature_table(table)
    return bigger


def _freeze_for_cpt(model: nn.Module) -> None:
    """Section 4.4: update the embedding (and tied head) / hash encoder and decoder, and the first two and last two
    Transformer layers; freeze the rest."""
    layers = model.backbone.layers if _is_mhf(model) else model.model.layers
    trainable_layers = {0, 1, len(layers) - 2, len(layers) - 1}
    for p in model.parameters():
        p.requires_grad_(False)
    for i, layer in enumerate(layers):
        if i in trainable_layers:
            layer.requires_grad_(True)
    if _is_mhf(model):
        model.embeddings.requires_grad_(True)
        model.hash_decoder.requires_grad_(True)
    else:
        model.get_input_embeddings().requires_grad_(True)
        model.get_output_embeddings().requires_grad_(True)


def expansion(ch: Chapter) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Vocabulary expansion on Parallel UD (ar, zh, hi) with English replay; bits per byte before and after."""
    from hashlib_core.data import load_ud_pud
    from hashlib_core.hashing import SignatureRegistry
    from hashlib_core.papers.multihashformer.modeling import parameter_groups

    p = ch.profile
    per_language = p.expansion_tokens_per_language or max(1, round(5120 * p.vocab_size / PAPER_VOCAB_SIZE))
    texts = {lang: list(load_ud_pud(lang)["text"]) for lang in (*EXPANSION_LANGUAGES, "en")}
    split = {lang: (t[:900], t[900:]) for lang, t in texts.items()}
    tokenizer, new_tokens = _merged_tokenizer(ch.tokenizer, {l: split[l][0] for l in EXPANSION_LANGUAGES},
                                              per_language)
    added = [t for lang in EXPANSION_LANGUAGES for t in new_tokens[lang]]
    old_v = ch.vocab_size
    bytes_old, bytes_new = _token_bytes(ch.tokenizer), _token_bytes(tokenizer)

    def eval_batches(tok, lang: str):
        encs = tok.encode_batch(split[lang][1], add_special_tokens=False)
        return _padded([[ch.eos_id] + e.ids[: p.seq_len - 1] for e in encs], p.batch_size, ch.eos_id)

    cpt_stream: list[int] = []
    for lang in (*EXPANSION_LANGUAGES, "en"):
        for e in tokenizer.encode_batch(split[lang][0], add_special_tokens=False):
            cpt_stream.extend([*e.ids, ch.eos_id])
    cpt_windows = _windows(cpt_stream, p.seq_len, 0)
    source_ids = [ch.tokenizer.encode(_bytelevel_text(t), add_special_tokens=False).ids for t in added]

    rows, params = [], []
    for label in _split(p.expansion_variants):
        key = ch.key(label)
        base = ch.model(key)
        before = {lang: _score(base, eval_batches(ch.tokenizer, lang), ch.device, token_bytes=bytes_old)
                  for lang in (*EXPANSION_LANGUAGES, "en")}
        groups_before = parameter_groups(base)
        model = ch.build(key).to(ch.device)
        model.load_state_dict(base.state_dict())
        if key.kind == "standard":
            model = _expand_standard(model, source_ids)
        else:
            registry = SignatureRegistry(key.num_hashes, key.num_buckets)
            registry.register(ch.tokens)
            if not torch.equal(registry.table(), ch.signature_table(key.num_hashes, key.num_buckets)):
                raise RuntimeError("re-registering the base vocabulary changed a signature")
            registry.register(added)
            model = _expand_mhf(model, registry.table())
        groups_after = parameter_groups(model)
        _freeze_for_cpt(model)
        trainable = sum(x.numel() for x in model.parameters() if x.requires_grad)
        config = ch.train_config(p.expansion_steps, p.expansion_learning_rate)
        model = ch.fit(f"{key.label} CPT", model, cpt_windows, config, extra={"expansion": per_language})
        for lang in (*EXPANSION_LANGUAGES, "en"):
            after = _score(model, eval_batches(tokenizer, lang), ch.device, token_bytes=bytes_new)
            b = before[lang]
            rows.append({"model": key.label, "language": lang, "bpb_before": b.bits_per_byte,
                         "bpb_after": after.bits_per_byte, "tokens_before": b.tokens, "tokens_after": after.tokens,
                         "bytes": after.bytes})
        params.append({"model": key.label, "vocab_before": old_v, "vocab_after": old_v + len(added),
                       "new_tokens": len(added), "params_before": groups_before["total"],
                       "params_after": groups_after["total"],
                       "new_params": groups_after["total"] - groups_before["total"],
                       "cpt_trainable_params": trainable,
                       **{f"new_tokens_{lang}": len(new_tokens[lang]) for lang in EXPANSION_LANGUAGES}})
    return pd.DataFrame(rows), pd.DataFrame(params)


def _bytelevel_text(token: str) -> str:
    """The text a byte-level BPE token stands for (its alphabet symbols mapped back to bytes)."""
    from tokenizers import decoders

    return decoders.ByteLevel().decode([token])


def paper_scale_expansion_params() -> pd.DataFrame:
    """Section 5.3's "31M parameters for 15K new tokens" and "46.9% larger vocabulary", counted on the meta device
    from Table 7 (1B: d = 2,048, V = 32,768) and Table 8 (expanded V = 48,122)."""
    from hashlib_core.papers.multihashformer.modeling import build_model, parameter_groups
    from hashlib_core.params import instantiate_on_meta

    rows = []
    for variant in ("Standard", "MHF (H4B16K)"):
        counts = {}
        for vocab in (PAPER_VOCAB_SIZE, 48122):
            model = instantiate_on_meta(lambda: build_model("1B", variant, vocab_size=vocab))
            counts[vocab] = parameter_groups(model)["total"]
        rows.append({"model": variant, "params_32768": counts[PAPER_VOCAB_SIZE], "params_48122": counts[48122],
                     "new_params": counts[48122] - counts[PAPER_VOCAB_SIZE], "new_tokens": 48122 - PAPER_VOCAB_SIZE,
                     "growth_%": 100 * (48122 - PAPER_VOCAB_SIZE) / PAPER_VOCAB_SIZE})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------------------------------------------
# Run, load_or_run, CLI
# ----------------------------------------------------------------------------------------------------------------

#: result names written by each experiment
RESULT_NAMES = {
    "table1": ["table1_params", "fig3_params"],
    "lm": ["lm_quality", "training_curves"],
    "single_vs_multi": ["single_vs_multi"],
    "sweep": ["hb_sweep"],
    "card660": ["card660", "card660_examples"],
    "rank": ["rank", "rank_spectrum"],
    "expansion": ["expansion", "expansion_params", "expansion_paper_scale"],
    "lsh": ["lsh_mix"],
}


def result_names(profile: MultiHashFormerProfile) -> list[str]:
    return [n for e in EXPERIMENTS if profile.wants(e) for n in RESULT_NAMES[e]]


def run(profile: MultiHashFormerProfile, *, progress: bool = True, checkpoint_root: str | Path | None = None,
        results_root: str | Path | None = None) -> ResultsStore:
    """Run the profile's experiments and write their tables to ``results/multihashformer/<profile>/``."""
    store = ResultsStore(CHAPTER, profile.name, root=results_root)
    config = profile.to_dict()
    device = select_device(profile.device)

    def write(name: str, table: pd.DataFrame, start: float) -> None:
        store.write_table(name, table, seed=profile.seed, device=device, wall_time_s=time.perf_counter() - start,
                          config=config)

    if profile.wants("table1"):
        start = time.perf_counter()
        write("table1_params", table1_params(), start)
        start = time.perf_counter()
        write("fig3_params", fig3_embedding_params(), start)
    needs_models = [e for e in EXPERIMENTS[1:] if profile.wants(e)]
    if not needs_models:
        return store
    ch = Chapter(profile, checkpoint_root=checkpoint_root, progress=progress)
    steps: list[tuple[str, Callable[[Chapter], Any]]] = [
        ("lm", lm_quality), ("single_vs_multi", single_vs_multi), ("sweep", hb_sweep), ("card660", card660),
        ("rank", rank_analysis), ("expansion", expansion), ("lsh", lsh_mix),
    ]
    for experiment, fn in steps:
        if not profile.wants(experiment):
            continue
        start = time.perf_counter()
        produced = fn(ch)
        produced = produced if isinstance(produced, tuple) else (produced,)
        names = [n for n in RESULT_NAMES[experiment] if n not in {"training_curves", "expansion_paper_scale"}]
        for name, table in zip(names, produced):
            write(name, table, start)
        if experiment == "expansion":
            write("expansion_paper_scale", paper_scale_expansion_params(), start)
    if profile.wants("lm"):
        write("training_curves", pd.DataFrame(ch.curves, columns=["model", "step", "loss"]), time.perf_counter())
    return store


def load_or_run(profile: MultiHashFormerProfile, *, progress: bool = False) -> ResultsStore:
    """What the notebook calls: ``paper`` shows the files of the command's run; ``smoke``/``small`` compute
    in-process unless the same configuration at the same clean commit already wrote them."""
    store = ResultsStore(CHAPTER, profile.name)
    return _load_or_run(store, result_names(profile), profile, lambda: run(profile, progress=progress))


def main(argv: Sequence[str] | None = None) -> int:
    profile = PROFILES.from_cli(argv, description=__doc__.splitlines()[0])
    store = run(profile)
    for name in result_names(profile):
        if name in {"training_curves", "rank_spectrum"}:
            continue
        print(f"\n== {name}\n{store.read_table(name).to_string(index=False)}")
    print(f"\nwritten to {store.dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
