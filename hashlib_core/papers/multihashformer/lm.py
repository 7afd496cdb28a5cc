"""The language models of the MultiHashFormer chapter: data, tokenizer, and the models trained once per run.

The profile's ``corpus`` names the training text: Penn Treebank's train split (about 929K words; scored on its test
split, with WikiText-2's test split as a second test set), or WikiText-2's validation split (its train split is not
staged; scored on its test split). The tokenizer is a byte-level BPE trained on the training text
(:func:`hashlib_core.bpe.train_bpe`); MHF signatures come from a :class:`~hashlib_core.hashing.SignatureRegistry`
over its entries in id order. :class:`LanguageModels` is the chapter's shared resource: each model is built from
its :class:`~hashlib_core.papers.multihashformer.presets.ModelSpec`, trained with the shared loop on first use
(checkpoints and exact resume under ``checkpoints/``), and kept for the other experiments of the run.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import torch
from torch import nn

from hashlib_core.chapter import RunContext
from hashlib_core.decoding.lm import NextTokenScores, next_token_scores
from hashlib_core.papers.multihashformer.presets import ModelSpec, build_model, parameter_groups, single_id_table
from hashlib_core.papers.multihashformer.profiles import LM_TRAINING_SETTINGS, MultiHashFormerProfile, parse_size
from hashlib_core.training import TrainConfig, train

__all__ = ["LanguageModels", "windows", "padded_batches", "full_batches", "token_bytes", "LMDataset",
           "CALIBRATION_WINDOWS", "corpus_lines", "parse_size"]

#: Training windows on which a model's temperature is fitted (in-sample: the models are trained on every window;
#: at these sizes a temperature fitted on held-out text differs by a few percent).
CALIBRATION_WINDOWS = 64


def windows(stream: Sequence[int], seq_len: int, limit: int) -> torch.Tensor:
    """Non-overlapping ``seq_len`` windows of a token stream (the last partial one dropped), ``limit`` tokens max
    (0: all; a negative limit is refused, never read as "all but the last")."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise ValueError(f"limit must be an int >= 0 (0: every token), got {limit!r}")
    arr = torch.tensor(stream[: limit or None], dtype=torch.long)
    n = arr.numel() // seq_len
    if n == 0:
        raise ValueError(f"the token stream ({arr.numel()} tokens) is shorter than one window of {seq_len}")
    return arr[: n * seq_len].view(n, seq_len)


def full_batches(rows: torch.Tensor, size: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """``(input_ids, attention_mask)`` batches of unpadded windows."""
    return [(w, torch.ones_like(w)) for w in rows.split(size)]


def padded_batches(sequences: Sequence[Sequence[int]], size: int, pad_id: int
                   ) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Right-padded ``(input_ids, attention_mask)`` batches of ``size`` sequences of different lengths."""
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


class LMDataset(torch.utils.data.Dataset):
    """Windows as causal-LM examples (``labels`` = ``input_ids``; the models shift inside)."""

    def __init__(self, rows: torch.Tensor) -> None:
        self.rows = rows

    def __len__(self) -> int:
        return self.rows.shape[0]

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        return {"input_ids": self.rows[i], "labels": self.rows[i]}


def corpus_lines(corpus: str) -> tuple[list[str], list[str], dict[str, list[str]]]:
    """The non-blank training lines of ``corpus``, its validation lines (none for WikiText-2, whose validation split
    is the training text) and its test sets ({name: lines}, the main one first)."""
    from hashlib_core.data import load_ptb, load_wikitext2

    def lines(split) -> list[str]:
        return [t for t in split["text"] if t.strip()]

    wiki = load_wikitext2()
    if corpus == "wikitext2":
        return lines(wiki["validation"]), [], {"wikitext2": lines(wiki["test"])}
    if corpus == "ptb":
        ptb = load_ptb()
        return lines(ptb["train"]), lines(ptb["validation"]), {"ptb": lines(ptb["test"]),
                                                               "wikitext2": lines(wiki["test"])}
    raise ValueError(f"unknown corpus {corpus!r}: use 'ptb' or 'wikitext2'")


def token_bytes(tokenizer: Any) -> torch.Tensor:
    """UTF-8 bytes of every id of a byte-level BPE (one alphabet symbol per byte; special tokens count 0)."""
    from hashlib_core.bpe import SPECIAL_TOKENS

    out = torch.zeros(tokenizer.get_vocab_size(), dtype=torch.long)
    for token, i in tokenizer.get_vocab().items():
        out[i] = 0 if token in SPECIAL_TOKENS else len(token)
    return out


class LanguageModels:
    """Tokenizer, train/test windows and the trained models of one profile run (each model trained once)."""

    def __init__(self, ctx: RunContext) -> None:
        from hashlib_core.bpe import EOS_ID, train_bpe

        self.ctx = ctx
        self.profile: MultiHashFormerProfile = ctx.profile
        self.device = ctx.device
        train_lines, valid_lines, tests = corpus_lines(self.profile.corpus)
        self.tokenizer = train_bpe(train_lines, self.profile.vocab_size)
        self.eos_id = EOS_ID
        self.tokens = [self.tokenizer.id_to_token(i) for i in range(self.tokenizer.get_vocab_size())]
        self.vocab_size = len(self.tokens)
        self.train_stream = self.stream(train_lines)
        self.train_windows = windows(self.train_stream, self.profile.seq_len, self.profile.max_train_tokens)
        #: every test set's windows, the main one (the corpus's own test split) first
        self.test_sets = {name: windows(self.stream(t), self.profile.seq_len, self.profile.max_eval_tokens)
                          for name, t in tests.items()}
        self.test_windows = next(iter(self.test_sets.values()))
        self.valid_windows = (windows(self.stream(valid_lines), self.profile.seq_len, self.profile.max_valid_tokens)
                              if valid_lines else None)
        self.sweep_rows: list[dict[str, Any]] = []
        self._rates: dict[str, float] = {}
        self.size_sweep_rows: list[dict[str, Any]] = []
        self._size_rates: dict[tuple[str, str], float] = {}
        self.models: dict[ModelSpec, nn.Module] = {}
        self._scaled: dict[tuple[ModelSpec, str, int, float], nn.Module] = {}
        self.curves: list[dict[str, Any]] = []
        self.train_seconds: dict[str, float] = {}
        self._tables: dict[tuple[int, int], torch.Tensor] = {}

    def stream(self, lines: Sequence[str]) -> list[int]:
        """The token ids of ``lines``, each line followed by ``<eos>``."""
        out: list[int] = []
        for enc in self.tokenizer.encode_batch(list(lines), add_special_tokens=False):
            out.extend(enc.ids)
            out.append(self.eos_id)
        return out

    # ---------------------------------------------------------------------------------------------- models
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

    def spec(self, label: str) -> ModelSpec:
        return self.profile.spec(label)

    def build(self, spec: ModelSpec, profile: MultiHashFormerProfile | None = None) -> nn.Module:
        """A freshly initialised model for ``spec`` (seeded: the same spec gives the same initial weights) with the
        backbone and seed of ``profile`` (default: the run's)."""
        profile = profile or self.profile
        torch.manual_seed(profile.seed)
        shape = profile.shape()
        if spec.kind == "standard":
            return build_model(shape, spec, vocab_size=self.vocab_size)
        if spec.kind == "single_id":
            table = single_id_table(self.tokens, spec.num_buckets, spec.num_hashes)
        elif spec.num_lsh:
            from hashlib_core.hashing.lsh_trigram import mixed_signature_table

            table = mixed_signature_table(self.tokens, spec.num_lsh, spec.num_hashes, spec.num_buckets)
        else:
            table = self.signature_table(spec.num_hashes, spec.num_buckets)
        return build_model(shape, spec, signature_table=table)

    def train_config(self, max_steps: int | None = None, learning_rate: float | None = None,
                     seed: int | None = None) -> TrainConfig:
        p = self.profile
        steps = max_steps or p.max_steps
        return TrainConfig(max_steps=steps, learning_rate=learning_rate or p.learning_rate,
                           weight_decay=p.weight_decay, warmup_steps=min(p.warmup_steps, steps // 2),
                           scheduler="cosine", grad_clip=1.0, log_every=max(1, steps // 10),
                           mixed_precision=p.mixed_precision, seed=p.seed if seed is None else seed)

    def fit(self, name: str, model: nn.Module, rows: torch.Tensor, config: TrainConfig, *,
            settings: Sequence[str] | None = None, extra: Any = None) -> nn.Module:
        """Train ``model`` with the shared loop (checkpoints and exact resume under ``checkpoints/``)."""
        loader = torch.utils.data.DataLoader(LMDataset(rows), batch_size=self.profile.batch_size, shuffle=True,
                                             drop_last=rows.shape[0] >= self.profile.batch_size)
        output_dir = self.ctx.checkpoint_dir(name, config, extra, settings=settings)
        self.ctx.log(f"training {name} ({config.max_steps} steps)")
        result = train(model, loader, config, output_dir=output_dir, device=self.device, progress=self.ctx.progress)
        self.curves.extend({"model": name, "step": s, "loss": l} for s, l in result.losses)
        self.train_seconds[name] = result.wall_time_s
        return model.to(self.device)

    def _family(self, spec: ModelSpec) -> tuple[str, ModelSpec]:
        """``spec``'s family for the learning-rate sweeps and the model the family is swept on."""
        if spec.kind == "standard":
            return "Standard", self.spec("Standard")
        return "MHF", self.spec("H4B16K")

    @staticmethod
    def _best_rate(accuracy: dict[float, float]) -> float:
        """The rate of the highest validation accuracy (ties: the smaller rate)."""
        return max(accuracy, key=lambda r: (accuracy[r], -r))

    def learning_rate(self, spec: ModelSpec) -> float:
        """The learning rate of ``spec``'s family (Standard or MHF): the profile's, or the best of ``lr_sweep`` by
        next-token accuracy on the validation windows, swept once on the family's representative (Standard,
        H4B16K) at the profile's size and seed; every rate tried is kept in :attr:`sweep_rows`."""
        p = self.profile
        if not p.lr_sweep:
            return p.learning_rate
        family, representative = self._family(spec)
        if family not in self._rates:
            tried, curves = {}, {}
            for rate in p.lr_sweep:
                start = len(self.curves)
                model = self.fit(representative.label, self.build(representative).to(self.device),
                                 self.train_windows, self.train_config(learning_rate=rate),
                                 settings=LM_TRAINING_SETTINGS)
                curves[rate] = (self.curves[start:], self.train_seconds[representative.label])
                del self.curves[start:]                   # the curve figure shows the chosen run only
                scores = next_token_scores(model, full_batches(self.valid_windows, p.batch_size), self.device)
                tried[rate] = (scores.accuracy, model)
                self.sweep_rows.append({"family": family, "model": representative.label, "learning_rate": rate,
                                        "valid_accuracy_%": scores.accuracy, "valid_perplexity": scores.perplexity,
                                        "valid_tokens": scores.tokens})
            best = self._best_rate({rate: accuracy for rate, (accuracy, _) in tried.items()})
            self._rates[family] = best
            self.models[representative] = tried[best][1]
            self.curves.extend(curves[best][0])
            self.train_seconds[representative.label] = curves[best][1]
            for row in self.sweep_rows[-len(p.lr_sweep):]:
                row["chosen"] = row["learning_rate"] == best
                row["at_edge"] = best in (min(p.lr_sweep), max(p.lr_sweep))
        return self._rates[family]

    def model(self, spec: ModelSpec | str) -> nn.Module:
        """The trained model of ``spec`` (trained on first use, at its family's learning rate)."""
        spec = self.spec(spec) if isinstance(spec, str) else spec
        rate = self.learning_rate(spec)
        if spec not in self.models:
            model = self.build(spec).to(self.device)
            self.models[spec] = self.fit(spec.label, model, self.train_windows,
                                         self.train_config(learning_rate=rate), settings=LM_TRAINING_SETTINGS)
        return self.models[spec]

    def size_rate(self, spec: ModelSpec, size: str) -> float:
        """The learning rate of ``spec``'s family at backbone ``size``: :meth:`learning_rate` at the profile's own
        size (or without a sweep); elsewhere the best of ``lr_sweep`` by validation accuracy of the family's
        representative at that size, first seed of the curve (every rate tried is kept in :attr:`size_sweep_rows`)."""
        p = self.profile
        if not p.lr_sweep or size == p.own_size():
            return self.learning_rate(spec)
        family, representative = self._family(spec)
        if (family, size) not in self._size_rates:
            seed, rows = p.scale_seeds[0], []
            for rate in p.lr_sweep:
                model = self.scaled_model(representative, size, seed, learning_rate=rate)
                valid = next_token_scores(model, full_batches(self.valid_windows, p.batch_size), self.device)
                rows.append({"size": size, "model": representative.label, "seed": seed, "learning_rate": rate,
                             "valid_accuracy_%": valid.accuracy,
                             "test_accuracy_%": self.evaluate(representative, model=model).accuracy,
                             "profile_size_rate": rate == self.learning_rate(representative)})
            best = self._best_rate({r["learning_rate"]: r["valid_accuracy_%"] for r in rows})
            for row in rows:
                row["chosen"] = row["learning_rate"] == best
            self.size_sweep_rows.extend(rows)
            self._size_rates[(family, size)] = best
        return self._size_rates[(family, size)]

    def scaled_model(self, spec: ModelSpec, size: str, seed: int, learning_rate: float | None = None) -> nn.Module:
        """The trained model of ``spec`` with backbone ``size`` (``"d/ffn/layers"``) and ``seed``, on the run's data
        and schedule (the scaling curve), at its family's learning rate unless ``learning_rate`` is given; the run's
        own size and seed at the family's rate give :meth:`model`'s model."""
        hidden, ffn, layers = parse_size(size)
        p = self.profile
        rate = self.size_rate(spec, size) if learning_rate is None else learning_rate
        own = parse_size(p.own_size())
        if ((hidden, ffn, layers), seed) == (own, p.seed) and rate == self.learning_rate(spec):   # the run's own
            return self.model(spec)
        key = (spec, size, seed, rate)
        if key not in self._scaled:
            at = p.override(hidden_size=hidden, intermediate_size=ffn, num_layers=layers, seed=seed)
            model = self.build(spec, at).to(self.device)
            self._scaled[key] = self.fit(f"{spec.label} {size} seed {seed}", model, self.train_windows,
                                         self.train_config(learning_rate=rate, seed=seed),
                                         settings=LM_TRAINING_SETTINGS, extra={"size": size, "seed": seed})
        return self._scaled[key]

    def evaluate(self, spec: ModelSpec, keep_rows: int = 0, temperature: float = 1.0, *,
                 model: nn.Module | None = None, test_set: str | None = None,
                 per_sequence: bool = False) -> NextTokenScores:
        """Next-token perplexity and accuracy on a test set's windows (default: the main one) with ``P_inf`` for MHF
        and the softmax for Standard; ``model`` scores another trained model of ``spec`` (the scaling curve's)."""
        rows = self.test_windows if test_set is None else self.test_sets[test_set]
        return next_token_scores(model if model is not None else self.model(spec),
                                 full_batches(rows, self.profile.batch_size), self.device, keep_rows=keep_rows,
                                 temperature=temperature, per_sequence=per_sequence)

    @property
    def calibration_windows(self) -> torch.Tensor:
        """The training windows a temperature is fitted on (the first :data:`CALIBRATION_WINDOWS`)."""
        return self.train_windows[:CALIBRATION_WINDOWS]

    def temperature(self, spec: ModelSpec, model: nn.Module | None = None) -> float:
        """The temperature that calibrates ``spec``'s model (or ``model``, another trained model of ``spec``) on
        :attr:`calibration_windows` (fitted once per model)."""
        from hashlib_core.papers.multihashformer.calibration import fit_temperature

        cache = self.__dict__.setdefault("_temperatures", {})
        key = spec if model is None else id(model)
        if key not in cache:
            cache[key] = fit_temperature(model if model is not None else self.model(spec), self.calibration_windows,
                                         self.device, batch_size=self.profile.batch_size)
        return cache[key]

    def describe(self, spec: ModelSpec) -> dict[str, Any]:
        """The columns every table of trained models starts with (label, what was built, parameter counts)."""
        groups = parameter_groups(self.model(spec))
        return {"model": spec.label, "built_as": spec.built_variant, "H": spec.hashes_shown,
                "B_paper": spec.paper_buckets, "B": spec.num_buckets, "emb_params": groups["emb"],
                "dec_params": groups["backbone"], "total_params": groups["total"]}

    def unigram_baseline(self) -> tuple[float, float]:
        """Test perplexity and top-1 accuracy (%) of the add-one unigram distribution of the training tokens: the
        floor every language model must beat."""
        counts = np.bincount(np.asarray(self.train_windows.flatten()), minlength=self.vocab_size) + 1.0
        log_p = np.log(counts / counts.sum())
        targets = np.asarray(self.test_windows[:, 1:].flatten())
        return float(np.exp(-log_p[targets].mean())), 100.0 * float((targets == counts.argmax()).mean())
