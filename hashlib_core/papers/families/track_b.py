"""Track B, *add to the table*: a small causal LM on Penn Treebank whose input is its token table plus one hashed
n-gram memory, scored in bits per byte on PTB's test split.

:class:`TrackB` (built once per run) trains a byte-level BPE of ``lm_vocab`` pieces on PTB's train split and cuts
the splits into windows of ``lm_seq_len`` tokens (each line ends with ``</s>``, counted as its newline's byte).
:func:`sweep_memories` trains, under the Track B protocol (``lm_protocol``), each memory (in two parts,
:func:`memory_parts`) at every learning rate at an
added budget of ``memory_multiples[0]`` times the token table (first seed); :func:`fit_memories` the other seeds
there and the other multiples at the chosen rate; the control (no memory) is swept and seeded the same way. Bits per
byte on PTB's validation windows choose the rate and stop training; every test window's bits are kept (the paired
bootstraps read them). A window's first token has no
context inside the window and is not scored: bits per byte are over positions 1 .. n-1 and their bytes.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from transformers import GPT2Config

from hashlib_core.chapter import RunContext
from hashlib_core.papers.families.modeling import MemoryCausalLM, build_memory, memory_version
from hashlib_core.papers.families.profiles import FamiliesProfile
from hashlib_core.papers.families.track_a import run_settings
from hashlib_core.profiles import seed_everything
from hashlib_core.protocol import ProtocolRun, Trained, converge_checkpointed, run_seeds, run_sweep, trained

__all__ = ["TrackB", "memory_parts", "sweep_memories", "fit_memories", "window_bits", "pack_floats", "unpack_floats",
           "RUN_SETTINGS"]

#: the settings that change one Track B run's weights (its checkpoint's digest), its protocol's cap, patience and
#: scoring interval among them: which runs a profile makes (the memories, multiples, rates and seeds) and Track A's
#: settings do not
RUN_SETTINGS = ("lm_vocab", "lm_layers", "lm_hidden", "lm_heads", "lm_seq_len", "lm_batch", "lm_train_tokens",
                "lm_validation_windows", "seed", *run_settings("lm"))


class TrackB:
    """PTB through a BPE trained on its train split: train, validation and test windows, and each piece's bytes."""

    def __init__(self, profile: FamiliesProfile) -> None:
        from hashlib_core.bpe import EOS_ID, train_bpe
        from hashlib_core.papers.multihashformer.lm import token_bytes, windows
        from hashlib_core.pretraining import ptb_lines

        self.profile = profile
        train_lines = ptb_lines("train")
        self.tokenizer = train_bpe(train_lines, profile.lm_vocab)
        self.strings = [self.tokenizer.id_to_token(i) for i in range(self.tokenizer.get_vocab_size())]
        #: each piece's text as the byte-level decoder gives it (" the" for "Ġthe"), what Engram canonicalises
        self.texts = [self.tokenizer.decode([i], skip_special_tokens=False) for i in range(len(self.strings))]
        self.eos = EOS_ID

        def stream(lines):
            out: list[int] = []
            for enc in self.tokenizer.encode_batch(list(lines), add_special_tokens=False):
                out += enc.ids + [EOS_ID]
            return out

        n = profile.lm_seq_len
        self.train = windows(stream(train_lines), n, profile.lm_train_tokens)
        valid = windows(stream(ptb_lines("validation")), n, 0)
        self.valid = valid[:profile.lm_validation_windows or None]
        self.test = windows(stream(ptb_lines("test")), n, 0)
        self.bytes = token_bytes(self.tokenizer)
        self.bytes[EOS_ID] = 1
        #: the bytes each window's scored positions (1 .. n-1) stand for
        self.valid_bytes = self.bytes[self.valid[:, 1:]].sum(dim=1)
        self.test_bytes = self.bytes[self.test[:, 1:]].sum(dim=1)
        self.table_params = len(self.strings) * profile.lm_hidden


def window_bits(model: MemoryCausalLM, rows: torch.Tensor, batch: int = 64) -> np.ndarray:
    """Bits of every window's next-token predictions (positions 1 .. n-1), summed per window."""
    model.eval()
    device = next(model.parameters()).device
    out = []
    with torch.no_grad():
        for i in range(0, len(rows), batch):
            x = rows[i:i + batch].to(device)
            logits = model(input_ids=x).logits[:, :-1]
            nats = F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), x[:, 1:].reshape(-1),
                                   reduction="none").view(len(x), -1).sum(1)
            out.append((nats / math.log(2)).cpu())
    return torch.cat(out).numpy()


def pack_floats(values: np.ndarray) -> str:
    return np.asarray(values, dtype=np.float32).tobytes().hex()


def unpack_floats(text: str) -> np.ndarray:
    return np.frombuffer(bytes.fromhex(text), dtype=np.float32).astype(np.float64)


def _train_one(ctx: RunContext, res: TrackB, memory: str, multiple: float):
    """``train_one(lr, seed)`` of :func:`~hashlib_core.protocol.run_sweep` for one memory at one added budget; its
    :class:`~hashlib_core.protocol.Trained` carries the table row and the curves (``extra``)."""
    p = ctx.profile
    protocol = p.lm_protocol
    budget = int(res.table_params * multiple) if memory != "none" else 0

    def one(lr: float, seed: int) -> Trained:
        seed_everything(seed)
        config = GPT2Config(vocab_size=len(res.strings), n_positions=p.lm_seq_len, n_embd=p.lm_hidden,
                            n_layer=p.lm_layers, n_head=p.lm_heads, tie_word_embeddings=True,
                            bos_token_id=res.eos, eos_token_id=res.eos)
        model = MemoryCausalLM(config, build_memory(memory, res.strings, p.lm_hidden, budget, res.texts,
                                                    layers=p.lm_layers))
        loader = torch.utils.data.DataLoader(res.train, batch_size=p.lm_batch, shuffle=True, drop_last=True,
                                             collate_fn=lambda rows: {"input_ids": torch.stack(rows),
                                                                      "labels": torch.stack(rows)})

        def score(m) -> float:
            return -float(window_bits(m, res.valid).sum()) / float(res.valid_bytes.sum())

        ctx.log(f"PTB: memory {memory} at {multiple:g}x the table, lr {lr:g}, seed {seed}")
        run = converge_checkpointed(ctx, model, loader, score, protocol, lr, seed,
                                    f"b-{memory}-{multiple:g}-lr{lr:g}-s{seed}",
                                    (memory, multiple, *memory_version(memory)), settings=RUN_SETTINGS)
        bits = window_bits(model, res.test)
        test_bytes = float(res.test_bytes.sum())
        row = {"memory": memory, "multiple": multiple if memory != "none" else 0.0, "budget": budget,
               "memory_params": model.memory_parameter_count(), "table_params": res.table_params,
               "total_params": sum(q.numel() for q in model.parameters()), "learning_rate": lr, "seed": seed,
               "test_bpb": float(bits.sum()) / test_bytes, "validation_bpb": -run.best_score, **run.summary(),
               "at_cap": not run.converged and run.steps >= run.max_steps, "restored": run.restored,
               "window_bits": pack_floats(bits)}
        key = {"memory": memory, "multiple": row["multiple"], "learning_rate": lr, "seed": seed}
        curve = [{**key, "step": st, "value": v, "kind": "train loss"} for st, v in run.losses] + \
                [{**key, "step": st, "value": -v, "kind": "validation bits per byte"} for st, v in run.history]
        # per-window bits per byte of the test split: what the protocol records per report item
        return trained(run, {"test": bits / res.test_bytes.numpy()}, row=row, curve=curve)
    return one


def _rows(runs: list[ProtocolRun]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return ([{**r.trained.extra["row"], "chosen": r.chosen, "swept": r.swept, "extended": r.extended}
             for r in runs],
            [c for r in runs for c in r.trained.extra["curve"]])


def _tables(ctx: RunContext, res: TrackB, rows: list, curves: list) -> dict[str, pd.DataFrame]:
    window_bytes = res.test_bytes.numpy()
    runs = pd.DataFrame(rows)
    runs["test_bytes"] = float(window_bytes.sum())
    return {"lm_runs": runs, "lm_curves": pd.DataFrame(curves),
            "lm_windows": pd.DataFrame({"window": np.arange(len(window_bytes)), "bytes": window_bytes})}


def memory_parts(profile: FamiliesProfile, part: str) -> list[str]:
    """The memories one part of Track B's sweep runs: ``"first"`` the first half of ``memories`` (longer by one when
    they are odd), ``"rest"`` the others, so that each part of a cpu run stays under an hour (a two-rate grid always
    extends at least once, so each memory trains at three rates or more)."""
    half = (len(profile.memories) + 1) // 2
    if part == "first":
        return list(profile.memories[:half])
    if part == "rest":
        return list(profile.memories[half:])
    raise ValueError(f"part must be 'first' or 'rest', got {part!r}")


def sweep_memories(ctx: RunContext, part: str = "first") -> dict[str, pd.DataFrame]:
    """Track B's first stage for one part of the memories (:func:`memory_parts`; the control is a memory here):
    each at every rate of ``lm_protocol`` with its first seed, at the first multiple; ``chosen`` marks each memory's
    best rate on the validation windows. Returns ``lm_sweep`` (the runs) and ``lm_sweep_curves``."""
    p = ctx.profile
    res = TrackB(p)
    rows, curves = [], []
    for memory in memory_parts(p, part):
        r, c = _rows(run_sweep(p.lm_protocol, _train_one(ctx, res, memory, p.memory_multiples[0])).runs)
        rows += r
        curves += c
    out = _tables(ctx, res, rows, curves)
    return {"lm_sweep": out["lm_runs"], "lm_sweep_curves": out["lm_curves"]}


def fit_memories(ctx: RunContext, swept: pd.DataFrame, swept_curves: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Track B's second stage, at each memory's chosen rate (read from ``swept``, the first stage's runs): the other
    seeds at the first multiple and the other multiples with the first seed. Returns every run (``lm_runs``:
    ``chosen`` marks the runs at the chosen rate), ``lm_curves`` and ``lm_windows`` (the bytes each test window's
    scored positions stand for)."""
    p = ctx.profile
    res = TrackB(p)
    chosen = swept[swept["chosen"]].set_index("memory")["learning_rate"].to_dict()
    missing = sorted(set(p.memories) - set(chosen))
    if missing:
        raise RuntimeError(f"Track B: no chosen learning rate for {missing}: run the sweep first (--only "
                           f"add_sweep,add_sweep_rest)")
    rows, curves = swept.to_dict("records"), swept_curves.to_dict("records")
    first, *others = p.memory_multiples
    for memory in p.memories:
        rate = float(chosen[memory])
        todo = [(first, None)] + ([(m, [p.lm_protocol.seeds[0]]) for m in others] if memory != "none" else [])
        for multiple, seeds in todo:
            r, c = _rows(run_seeds(p.lm_protocol, rate, _train_one(ctx, res, memory, multiple), seeds))
            rows += r
            curves += c
    return _tables(ctx, res, rows, curves)
