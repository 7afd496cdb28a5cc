"""The model shapes of MultiHashFormer's Table 7 and the model families of its Table 1.

* :data:`BACKBONE_PRESETS`: the 100M / 1B / 3B Qwen3 shapes of Table 7 (App. C.1) and a ``tiny`` shape for tests;
* :func:`parse_variant`: a Table 1 / 3 / 9 label (``"Standard+4L"``, ``"MHF (H4B16K)"``, ``"H1B4K"``) as a
  :class:`ModelSpec`, and :meth:`ModelSpec.scaled` for reduced vocabularies;
* :func:`build_model`: any Table 1 model -- Standard (``Qwen3ForCausalLM`` with tied embeddings), Standard+kL
  (``k`` extra layers) or MHF (H, B) -- on a preset or a custom :class:`BackboneShape`;
* :func:`parameter_groups`: exact parameter counts by role (Table 1's *Emb* and *Dec*).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

import torch
from torch import nn
from transformers import PreTrainedModel, Qwen3Config, Qwen3ForCausalLM

from hashlib_core.papers.multihashformer.modeling import MultiHashFormerConfig, MultiHashFormerForCausalLM
from hashlib_core.params import count_parameters

__all__ = [
    "BackboneShape", "BACKBONE_PRESETS", "PAPER_BOTTLENECK", "PAPER_VOCAB_SIZE", "ModelSpec", "scaled_buckets",
    "parse_variant", "standard_config",
    "multihashformer_config", "build_model", "single_id_table", "install_single_id_table", "parameter_groups",
]


@dataclass(frozen=True)
class BackboneShape:
    """A Qwen3 backbone shape; ``added_layers`` is the ``k`` of Standard+kL (Table 7, "Added layers")."""

    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    added_layers: int
    vocab_size: int


#: Table 7 (App. C.1) backbones with V = 32,768 (Mistral-7B-v0.3 tokenizer); head_dim = hidden / heads.
#: ``tiny`` is ours, for CPU smoke runs and tests.
BACKBONE_PRESETS: dict[str, BackboneShape] = {
    "tiny": BackboneShape(32, 64, 2, 4, 2, added_layers=1, vocab_size=512),
    "100M": BackboneShape(768, 2560, 12, 12, 2, added_layers=4, vocab_size=32768),
    "1B": BackboneShape(2048, 6144, 20, 16, 8, added_layers=2, vocab_size=32768),
    "3B": BackboneShape(2048, 11008, 36, 16, 2, added_layers=1, vocab_size=32768),
}

#: Bottleneck width of the gate and of the cascade mixers (section 4.1: d_z = 64).
PAPER_BOTTLENECK = 64


#: The vocabulary size every B of the paper refers to (Table 7: Mistral tokenizer, 32,768 entries).
PAPER_VOCAB_SIZE = 32768


def scaled_buckets(paper_buckets: int, vocab_size: int) -> int:
    """The paper's bucket count ``B`` (for V = 32,768) at vocabulary size ``vocab_size``, same ``B / V`` ratio."""
    if paper_buckets < 2 or vocab_size < 1:
        raise ValueError(f"need paper_buckets >= 2 and vocab_size >= 1, got {paper_buckets}, {vocab_size}")
    return max(2, round(paper_buckets * vocab_size / PAPER_VOCAB_SIZE))


@dataclass(frozen=True)
class ModelSpec:
    """One model of the paper's tables: its label as the paper writes it, and what is built for it.

    ``kind`` is ``"standard"`` (with ``extra_layers``), ``"mhf"`` (``num_hashes``, ``num_buckets``) or
    ``"single_id"``: Table 3's H1 models, which footnote 5 builds as the H4 model of the same B whose signatures
    repeat one MMH3 value over the 4 coordinates ("to strictly match the number of parameters"). ``paper_buckets``
    is B as printed (for V = 32,768), ``num_buckets`` the B built (:meth:`scaled` keeps the paper's B / V ratio at
    a smaller vocabulary). ``num_lsh`` coordinates come from trigram LSH (Table 4).
    """

    label: str
    kind: str
    extra_layers: int = 0
    num_hashes: int = 0
    num_buckets: int = 0
    paper_buckets: int = 0
    num_lsh: int = 0

    @property
    def built_variant(self) -> str:
        """The :func:`build_model` variant string of the built model."""
        if self.kind == "standard":
            return f"Standard+{self.extra_layers}L" if self.extra_layers else "Standard"
        return f"H{self.num_hashes}B{self.num_buckets}"

    @property
    def hashes_shown(self) -> int:
        """H as the paper labels the model (1 for Single-ID)."""
        return 1 if self.kind == "single_id" else self.num_hashes

    def scaled(self, vocab_size: int) -> "ModelSpec":
        """This model at vocabulary size ``vocab_size``: ``B = round(B_paper * V / 32768)``."""
        if self.kind == "standard":
            return self
        return replace(self, num_buckets=scaled_buckets(self.paper_buckets, vocab_size))

    def with_lsh(self, num_lsh: int) -> "ModelSpec":
        """The same MHF model with ``num_lsh`` of its coordinates from trigram LSH (Table 4), labelled ``L:M``."""
        if self.kind != "mhf" or not 0 <= num_lsh <= self.num_hashes:
            raise ValueError(f"an LSH mix needs an MHF model and 0 <= num_lsh <= H, got {self.kind}, {num_lsh}")
        if num_lsh == 0:
            return self
        return replace(self, label=f"{self.label} LSH {num_lsh}:{self.num_hashes - num_lsh}", num_lsh=num_lsh)


_STANDARD = re.compile(r"^\s*standard\s*(?:\+\s*(\d+)\s*l)?\s*$", re.IGNORECASE)
_MHF = re.compile(r"^\s*(?:mhf\s*\(?\s*)?h(\d+)\s*b(\d+)(k?)\s*\)?\s*$", re.IGNORECASE)
#: Table 3's Single-ID models are built with this many coordinates (footnote 5: "H1B use single value for 4
#: coordinates to strictly match the number of parameters in H4B").
SINGLE_ID_COORDINATES = 4


def parse_variant(name: str) -> ModelSpec:
    """Read a Table 1 / 3 / 9 label: ``"Standard"``, ``"Standard+4L"``, ``"MHF (H4B16K)"``, ``"H3B10K"``, ``"H1B4K"``.

    ``K`` means 1,024 buckets, so ``H3B10K`` has B = 10,240 as in section 4.1 (Table 9 prints 10,624 for it; we
    follow the main text) and ``H4B16K`` has B = 16,384. ``H1`` labels are Single-ID models (built with 4
    coordinates, see :class:`ModelSpec`). The result is at the paper's scale; see :meth:`ModelSpec.scaled`.
    """
    if not isinstance(name, str):
        raise TypeError(f"variant must be a str like 'Standard+4L' or 'MHF (H4B16K)', got {type(name).__name__}")
    if m := _STANDARD.match(name):
        return ModelSpec(name.strip(), "standard", extra_layers=int(m.group(1) or 0))
    if m := _MHF.match(name):
        buckets = int(m.group(2)) * (1024 if m.group(3) else 1)
        hashes = int(m.group(1))
        if hashes < 1:
            raise ValueError(f"variant {name!r} has H = 0; a signature needs at least one hash")
        if hashes == 1:
            return ModelSpec(name.strip(), "single_id", num_hashes=SINGLE_ID_COORDINATES, num_buckets=buckets,
                             paper_buckets=buckets)
        return ModelSpec(name.strip(), "mhf", num_hashes=hashes, num_buckets=buckets, paper_buckets=buckets)
    raise ValueError(f"unknown variant {name!r}; use 'Standard', 'Standard+<k>L', 'MHF (H<h>B<b>K)' or 'H<h>B<b>K'")


def _shape(size: str | BackboneShape) -> BackboneShape:
    """A preset name (:data:`BACKBONE_PRESETS`) or a custom :class:`BackboneShape`, returned as a shape."""
    if isinstance(size, BackboneShape):
        return size
    if size not in BACKBONE_PRESETS:
        raise ValueError(f"unknown size {size!r}; choose one of {', '.join(BACKBONE_PRESETS)}")
    return BACKBONE_PRESETS[size]


def standard_config(
    size: str | BackboneShape, *, extra_layers: int = 0, vocab_size: int | None = None
) -> Qwen3Config:
    """The Standard (+kL) baseline of section 4.1: a Qwen3 causal LM with tied input/output embeddings."""
    shape = _shape(size)
    if extra_layers < 0:
        raise ValueError(f"extra_layers must be >= 0, got {extra_layers}")
    layers = shape.num_hidden_layers + extra_layers
    return Qwen3Config(
        vocab_size=vocab_size or shape.vocab_size,
        hidden_size=shape.hidden_size,
        intermediate_size=shape.intermediate_size,
        num_hidden_layers=layers,
        num_attention_heads=shape.num_attention_heads,
        num_key_value_heads=shape.num_key_value_heads,
        head_dim=shape.hidden_size // shape.num_attention_heads,
        max_position_embeddings=2048,
        rope_parameters={"rope_type": "default", "rope_theta": 1_000_000.0},
        rms_norm_eps=1e-6,
        max_window_layers=layers,
        tie_word_embeddings=True,
    )


def multihashformer_config(
    size: str | BackboneShape, num_hashes: int, num_buckets: int, *, vocab_size: int | None = None
) -> MultiHashFormerConfig:
    """An MHF(H, B) config on the ``size`` backbone, with the paper's 64-wide gate and mixers."""
    shape = _shape(size)
    return MultiHashFormerConfig(
        vocab_size=vocab_size or shape.vocab_size,
        num_hashes=num_hashes,
        num_buckets=num_buckets,
        gate_bottleneck=PAPER_BOTTLENECK,
        mixer_bottleneck=PAPER_BOTTLENECK,
        hidden_size=shape.hidden_size,
        intermediate_size=shape.intermediate_size,
        num_hidden_layers=shape.num_hidden_layers,
        num_attention_heads=shape.num_attention_heads,
        num_key_value_heads=shape.num_key_value_heads,
    )


def build_model(
    size: str | BackboneShape,
    variant: str | ModelSpec,
    *,
    vocab_size: int | None = None,
    signature_table: torch.Tensor | None = None,
) -> PreTrainedModel:
    """Build any Table 1 model: ``build_model("100M", "Standard+4L")``, ``build_model("1B", "MHF (H4B16K)")``.

    ``size`` is a preset name or a custom :class:`BackboneShape` (reduced-scale chapter profiles). ``variant``
    is a label read by :func:`parse_variant` or a :class:`ModelSpec`. For MHF, ``signature_table`` (``V x H``) is
    installed and, if ``vocab_size`` is not given, sets it; a Single-ID model takes its colliding table
    (:func:`single_id_table`) the same way. Wrap the call in :func:`hashlib_core.params.instantiate_on_meta` to
    count parameters without allocating weights.
    """
    spec = variant if isinstance(variant, ModelSpec) else parse_variant(variant)
    if spec.kind == "standard":
        if signature_table is not None:
            raise ValueError("signature_table only applies to MHF variants; the Standard baseline has no signatures")
        return Qwen3ForCausalLM(standard_config(size, extra_layers=spec.extra_layers, vocab_size=vocab_size))
    if vocab_size is None and signature_table is not None:
        vocab_size = int(signature_table.shape[0])
    model = MultiHashFormerForCausalLM(
        multihashformer_config(size, spec.num_hashes, spec.num_buckets, vocab_size=vocab_size)
    )
    if signature_table is not None:
        if spec.kind == "single_id":
            install_single_id_table(model, signature_table)
        else:
            model.set_signature_table(signature_table)
    return model


def single_id_table(tokens: Sequence[str], num_buckets: int,
                    num_coordinates: int = SINGLE_ID_COORDINATES) -> torch.Tensor:
    """Single-ID signatures (Table 3 footnote 5): ``mmh3.hash128(token, seed=0) % (B-1) + 1`` repeated
    ``num_coordinates`` times. Unlike :class:`~hashlib_core.hashing.SignatureRegistry` signatures they collide:
    at most ``B - 1`` tokens can have distinct ones."""
    from hashlib_core.hashing import MMH3MultiHasher

    base = MMH3MultiHasher(1, num_buckets).batch(list(tokens))       # (V, 1)
    return torch.from_numpy(np.repeat(base, num_coordinates, axis=1)).long()


def install_single_id_table(model: MultiHashFormerForCausalLM, table: torch.Tensor) -> None:
    """Write Single-ID signatures into an MHF model's ``hash_map``.

    ``set_signature_table`` refuses duplicated signatures, which is right for every MultiHashFormer model; the
    Single-ID ablation of Table 3 exists to measure what collisions cost, so here the buffer is written directly
    (entries are still checked to lie in ``[1, B)`` and the shape to match).
    """
    hash_map = model.hash_map
    if not isinstance(table, torch.Tensor) or table.shape != hash_map.shape:
        got = tuple(table.shape) if isinstance(table, torch.Tensor) else type(table).__name__
        raise ValueError(f"Single-ID table has shape {got}, the model expects {tuple(hash_map.shape)}")
    if int(table.min()) < 1 or int(table.max()) >= model.config.num_buckets:
        raise ValueError("Single-ID signatures must lie in [1, B)")
    with torch.no_grad():
        hash_map.copy_(table.to(hash_map.device))


def parameter_groups(model: nn.Module) -> dict[str, int]:
    """Exact parameter counts by role, for an MHF model or a Standard ``Qwen3ForCausalLM``.

    Keys: ``total``, ``backbone`` (decoder layers + final norm), ``emb`` (everything else) and its parts:
    ``hash_tables``, ``gate``, ``adapter``, ``cascade_mixers`` for MHF, or ``embedding`` (the tied ``V x d``
    matrix; an untied LM head would be counted in ``lm_head``) for Standard.
    """
    if isinstance(model, MultiHashFormerForCausalLM):
        groups = {
            "hash_tables": count_parameters(model.embeddings.table),
            "gate": count_parameters(model.embeddings.gate),
            "adapter": count_parameters(model.embeddings.adapter),
            "cascade_mixers": count_parameters(model.hash_decoder),
            "backbone": count_parameters(model.base_model.backbone),
        }
    elif isinstance(model, Qwen3ForCausalLM):
        embedding = count_parameters(model.model.embed_tokens)
        tied = model.lm_head.weight is model.model.embed_tokens.weight
        groups = {
            "embedding": embedding,
            "lm_head": 0 if tied else count_parameters(model.lm_head),
            "backbone": count_parameters(model.model) - embedding,
        }
    else:
        raise TypeError(f"parameter_groups expects MultiHashFormerForCausalLM or Qwen3ForCausalLM, "
                        f"got {type(model).__name__}")
    groups["total"] = count_parameters(model)
    groups["emb"] = groups["total"] - groups["backbone"]
    return groups
