"""Chapter "The vocabulary bottleneck": how much of a model is its vocabulary?

For each model shape the papers and the blog talk about, build the model **from its configuration** with
``transformers`` (on the ``meta`` device, so no weights are allocated) and count:

* the input token-embedding matrix ``V x d`` (``get_input_embeddings()``),
* an untied output head over the vocabulary (``get_output_embeddings()``; zero when tied to the input matrix),
* every parameter (tied tensors counted once).

The claims this reproduces (transcribed in ``data/paper_tables/vocabulary_bottleneck.csv``):
HashFormers §1 (BERT-base 23.4M of 110M; RoBERTa-base 38M of 125M), the dynamic-hash-embeddings blog (GPT-2
about 30%, Mistral-7B about 2.5%), and the model sizes of MultiHashFormer's Table 7 (Qwen3 backbones at 100M,
1B and 3B with a 32,768-token vocabulary).

Run it as a command (any profile; ``--materialize_up_to=N`` allocates real weights for models with at most N
parameters and checks that their count equals the meta-device count)::

    python -m hashlib_core.papers.vocab_bottleneck.experiments --profile paper
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Sequence

import pandas as pd
import torch
from torch import nn

from hashlib_core.profiles import Profile, ProfileSet, seed_everything
from hashlib_core.profiles import load_or_run as _load_or_run
from hashlib_core.params import count_parameters, embedding_breakdown, instantiate_on_meta
from hashlib_core.results import ResultsStore

__all__ = [
    "ModelSpec", "MODEL_SPECS", "VocabBottleneckProfile", "PROFILES", "embedding_shares", "compare_with_claims",
    "run", "load_or_run", "main",
]

CHAPTER = "vocab_bottleneck"


@dataclass(frozen=True)
class VocabBottleneckProfile(Profile):
    """No training in this chapter: profiles differ only in how far the meta-device counts are cross-checked
    against models with real weights (allocated in bfloat16 on the CPU)."""

    #: build models with at most this many parameters for real and compare counts (0 = meta only)
    materialize_up_to: int = 0


PROFILES: ProfileSet[VocabBottleneckProfile] = ProfileSet(
    smoke=VocabBottleneckProfile(name="smoke", materialize_up_to=0, budget_minutes=0.5),
    small=VocabBottleneckProfile(name="small", materialize_up_to=200_000_000, budget_minutes=1.0),
    paper=VocabBottleneckProfile(name="paper", materialize_up_to=8_000_000_000, budget_minutes=5.0),
)


@dataclass(frozen=True)
class ModelSpec:
    """A model shape, built from a ``transformers`` configuration (library defaults unless stated)."""

    name: str
    family: str
    architecture: str            # "encoder" or "decoder"
    build: Callable[[], nn.Module]
    config_note: str


def _bert(large: bool = False) -> nn.Module:
    from transformers import BertConfig, BertModel

    cfg = BertConfig() if not large else BertConfig(
        hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)
    return BertModel(cfg)


def _roberta(large: bool = False) -> nn.Module:
    from transformers import RobertaConfig, RobertaModel

    common = dict(vocab_size=50265, max_position_embeddings=514, type_vocab_size=1, layer_norm_eps=1e-5,
                  pad_token_id=1, bos_token_id=0, eos_token_id=2)
    if large:
        common.update(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)
    return RobertaModel(RobertaConfig(**common))


def _gpt2(n_embd: int, n_layer: int, n_head: int) -> nn.Module:
    from transformers import GPT2Config, GPT2LMHeadModel

    return GPT2LMHeadModel(GPT2Config(n_embd=n_embd, n_layer=n_layer, n_head=n_head))


def _mistral_7b() -> nn.Module:
    from transformers import MistralConfig, MistralForCausalLM

    # MistralConfig's defaults are Mistral-7B-v0.1: V=32,000, d=4,096, 32 layers, FFN 14,336, 8 KV heads,
    # untied output head.
    return MistralForCausalLM(MistralConfig())


def _qwen3(hidden: int, intermediate: int, layers: int, heads: int, kv_heads: int) -> nn.Module:
    from transformers import Qwen3Config, Qwen3ForCausalLM

    # MultiHashFormer Table 7 (App. C.1): V=32,768 (Mistral tokenizer), tied embeddings, RoPE theta 1M.
    # head_dim = hidden / heads (64 at 100M, 128 at 1B and 3B).
    return Qwen3ForCausalLM(Qwen3Config(
        vocab_size=32768, hidden_size=hidden, intermediate_size=intermediate, num_hidden_layers=layers,
        num_attention_heads=heads, num_key_value_heads=kv_heads, head_dim=hidden // heads,
        tie_word_embeddings=True, rope_theta=1_000_000.0, rms_norm_eps=1e-6))


MODEL_SPECS: tuple[ModelSpec, ...] = (
    ModelSpec("BERT-base", "BERT", "encoder", _bert, "BertConfig() defaults; BertModel with pooler"),
    ModelSpec("BERT-large", "BERT", "encoder", lambda: _bert(large=True), "d=1024, 24 layers"),
    ModelSpec("RoBERTa-base", "RoBERTa", "encoder", _roberta, "V=50,265, 514 positions; RobertaModel with pooler"),
    ModelSpec("RoBERTa-large", "RoBERTa", "encoder", lambda: _roberta(large=True), "d=1024, 24 layers"),
    ModelSpec("GPT-2", "GPT-2", "decoder", lambda: _gpt2(768, 12, 12), "GPT2Config() defaults, tied LM head"),
    ModelSpec("GPT-2 medium", "GPT-2", "decoder", lambda: _gpt2(1024, 24, 16), "d=1024, 24 layers"),
    ModelSpec("GPT-2 large", "GPT-2", "decoder", lambda: _gpt2(1280, 36, 20), "d=1280, 36 layers"),
    ModelSpec("GPT-2 XL", "GPT-2", "decoder", lambda: _gpt2(1600, 48, 25), "d=1600, 48 layers"),
    ModelSpec("Qwen3-100M (MHF Table 7)", "Qwen3", "decoder", lambda: _qwen3(768, 2560, 12, 12, 2),
              "d=768, FFN 2560, 12 layers, 12/2 heads"),
    ModelSpec("Qwen3-1B (MHF Table 7)", "Qwen3", "decoder", lambda: _qwen3(2048, 6144, 20, 16, 8),
              "d=2048, FFN 6144, 20 layers, 16/8 heads"),
    ModelSpec("Qwen3-3B (MHF Table 7)", "Qwen3", "decoder", lambda: _qwen3(2048, 11008, 36, 16, 2),
              "d=2048, FFN 11008, 36 layers, 16/2 heads"),
    ModelSpec("Mistral-7B", "Mistral", "decoder", _mistral_7b, "MistralConfig() defaults, untied LM head"),
)


def embedding_shares(
    specs: Sequence[ModelSpec] = MODEL_SPECS, *, materialize_up_to: int = 0, progress: bool = False
) -> pd.DataFrame:
    """One row per model: total parameters, vocabulary parameters and their share (in %).

    ``counted_on`` says whether the row was cross-checked on a model with real (bfloat16) weights; a cross-check
    that disagrees with the meta-device count raises ``RuntimeError``.
    """
    rows = []
    iterator = specs
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(specs, desc="models", unit="model")
    for spec in iterator:
        model = instantiate_on_meta(spec.build)
        b = embedding_breakdown(model)
        counted_on = "meta"
        if b.total <= materialize_up_to:
            previous = torch.get_default_dtype()
            torch.set_default_dtype(torch.bfloat16)
            try:
                real = spec.build()
            finally:
                torch.set_default_dtype(previous)
            real_total = count_parameters(real)
            del real
            if real_total != b.total:
                raise RuntimeError(f"{spec.name}: meta count {b.total} != materialised count {real_total}")
            counted_on = "meta + cpu (bf16)"
        rows.append({
            "model": spec.name,
            "family": spec.family,
            "architecture": spec.architecture,
            "vocab_size": b.vocab_size,
            "hidden_size": b.hidden_size,
            "tied_head": b.tied,
            "total_params": b.total,
            "input_embedding_params": b.input_embedding,
            "output_head_params": b.output_embedding,
            "vocabulary_params": b.vocabulary_parameters,
            "input_embedding_share_%": 100.0 * b.input_share,
            "vocabulary_share_%": 100.0 * b.vocabulary_share,
            "counted_on": counted_on,
            "config": spec.config_note,
        })
        del model
    return pd.DataFrame(rows)


#: printed model names in ``data/paper_tables/vocabulary_bottleneck.csv`` -> our :data:`MODEL_SPECS` names
CLAIM_MODELS = {
    "BERT-BASE": "BERT-base",
    "BERT-base": "BERT-base",
    "ROBERTA-BASE": "RoBERTa-base",
    "GPT2": "GPT-2",
    "Mistral 7B": "Mistral-7B",
}
_MIB_PER_UNIT = {"Mb": 1.0, "MB": 1.0, "GB": 1024.0}   # the blog divides bytes by 1024*1024 and calls it Mb/GB


def compare_with_claims(ours: pd.DataFrame) -> pd.DataFrame:
    """Each printed claim of ``vocabulary_bottleneck.csv`` beside our count, with the gap.

    Shares are compared with our *input-embedding* share (the claims count the ``V x d`` input matrix only);
    the blog's sizes are bytes at 2 bytes per parameter (fp16), in the blog's own unit (``bytes / 1024**2`` for
    "Mb", ``/ 1024**3`` for "GB").
    """
    from hashlib_core.results import load_paper_table, paper_vs_ours

    claims = load_paper_table("vocabulary_bottleneck")
    unknown = sorted(set(claims["model"]) - set(CLAIM_MODELS))
    if unknown:
        raise KeyError(f"no model spec for printed model name(s) {unknown}; extend CLAIM_MODELS")
    claims = claims.assign(printed_model=claims["model"], model=claims["model"].map(CLAIM_MODELS))
    parts = []
    for unit, group in claims.groupby("size_unit", sort=False):
        mine = ours.assign(
            embedding_size=ours["input_embedding_params"] * 2 / 1024**2 / _MIB_PER_UNIT.get(unit, float("nan")),
            model_size=ours["total_params"] * 2 / 1024**2 / _MIB_PER_UNIT.get(unit, float("nan")),
        )
        group.attrs = claims.attrs
        table = paper_vs_ours(
            group, mine, on="model", keep=["printed_model", "source"],
            columns={"vocab_size": "vocab_size", "embedding_dim": "hidden_size",
                     "embedding_params": "input_embedding_params", "total_params": "total_params",
                     "embedding_share": "input_embedding_share_%", "embedding_size": "embedding_size",
                     "model_size": "model_size"},
        )
        parts.append(table[table["paper"] != "-"].assign(unit=unit if unit != "-" else ""))
    out = pd.concat(parts, ignore_index=True)
    out = out[out["printed_model"].notna()].reset_index(drop=True)
    out.attrs["source"] = "data/paper_tables/vocabulary_bottleneck.csv (HashFormers §1; dynamic-hash-embeddings blog)"
    return out


def run(profile: VocabBottleneckProfile, *, progress: bool = True) -> ResultsStore:
    """Compute the table for ``profile`` and write ``results/vocab_bottleneck/<profile>/embedding_shares.csv``."""
    seed_everything(profile.seed)
    start = time.perf_counter()
    table = embedding_shares(materialize_up_to=profile.materialize_up_to, progress=progress)
    store = ResultsStore(CHAPTER, profile.name)
    store.write_table("embedding_shares", table, seed=profile.seed, device="cpu",
                      wall_time_s=time.perf_counter() - start, config=profile.to_dict())
    return store


def load_or_run(profile: VocabBottleneckProfile, *, progress: bool = False) -> ResultsStore:
    """What the chapter notebook calls (see :func:`hashlib_core.profiles.load_or_run`): ``paper`` shows
    the results file of ``python -m hashlib_core.papers.vocab_bottleneck.experiments --profile paper`` (the cross-check
    with real weights takes minutes and about 15 GB of memory); ``smoke`` and ``small`` compute in-process."""
    store = ResultsStore(CHAPTER, profile.name)
    return _load_or_run(store, ["embedding_shares"], profile, lambda: run(profile, progress=progress))


def main(argv: Sequence[str] | None = None) -> int:
    profile = PROFILES.from_cli(argv, description=__doc__.splitlines()[0])
    store = run(profile)
    print(store.read_table("embedding_shares").to_string(index=False))
    print(f"\nwritten to {store.dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
