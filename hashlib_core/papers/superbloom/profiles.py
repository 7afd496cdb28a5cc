"""The Superbloom chapter's models and four profiles: one comment on every knob.

Each model is a row of the paper's comparisons: the **baseline** (no hashing: ``alpha = 1``, one token per id, a full
softmax) and **Superbloom** (``m`` hashes, ``alpha`` ids per token), each at ``layers_shallow`` and
``layers_deep`` Transformer layers (Table 3: "hashing needs depth"), and the **sampled-softmax** model of Table 1
(unhashed, deep, its training loss over the targets and ``sampled_share`` of the ids drawn uniformly per batch: the
paper samples 128K of 5.3M, 2.5%).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from hashlib_core.profiles import Profile, ProfileSet

__all__ = ["ModelSpec", "SuperbloomProfile", "PROFILES"]


@dataclass(frozen=True)
class ModelSpec:
    """One trained model: its name, hashing (``alpha``, ``num_hashes``) and depth."""

    name: str
    alpha: int
    num_hashes: int
    layers: int
    #: sampled softmax: tokens sampled per batch (0: full softmax)
    num_sampled: int = 0
    #: width (0: the profile's ``hidden``) and position embeddings (text: True)
    hidden: int = 0
    use_positions: bool = False

    @property
    def slug(self) -> str:
        return "".join(c if c.isalnum() else "-" for c in self.name.lower())


@dataclass(frozen=True)
class SuperbloomProfile(Profile):
    """Knobs of the chapter."""

    #: the data standing in for Wikipedia's link sets: "fb15k237" or "lastfm"
    dataset: str = "fb15k237"
    #: further id-set datasets on which the deep baseline and the deep Superbloom model are trained and scored too
    #: (the ``other_datasets`` experiment; empty: none)
    other_datasets: tuple[str, ...] = ("lastfm",)
    #: training steps on each of them (0: ``steps``)
    other_steps: int = 0
    #: share of pages held out for testing, items per segment (§3.1: 32)
    test_share: float = 0.1
    segment: int = 32
    #: hashing of the Superbloom models: ids per hash token (the paper: 50) and hash maps (the paper: 2)
    alpha: int = 50
    num_hashes: int = 2
    #: model width, heads and feed-forward width (Table 1 / Table 4's d, n_A, d_F); depths of Table 3's two rows
    hidden: int = 64
    heads: int = 2
    intermediate: int = 256
    layers_shallow: int = 1
    layers_deep: int = 2
    #: training (§3.2: Adam, inverse-square-root decay; ours: AdamW with linear decay after warm-up)
    steps: int = 30
    batch: int = 16
    learning_rate: float = 1e-3
    warmup: int = 3
    #: the sampled-softmax model: share of the ids sampled per batch (the paper: 128K of 5.3M)
    sampled_share: float = 0.025
    #: §4, natural language: WordPiece pieces, frequent words and word pairs added, α of the Superbloom models,
    #: window (tokens per training and test sequence), widths of the two baselines and the two Superbloom models
    #: (Table 4: baselines d = 256 and 64, Superbloom of similar sizes), layers, steps, batch, test windows (0: all)
    lm_wordpiece: int = 500
    lm_unigrams: int = 1000
    lm_bigrams: int = 500
    lm_alpha: int = 40
    lm_window: int = 32
    lm_baseline_dims: tuple[int, ...] = (64, 16)
    lm_superbloom_dims: tuple[int, ...] = (128, 64)
    lm_layers: int = 1
    lm_steps: int = 20
    lm_batch: int = 16
    lm_test_windows: int = 200
    #: evaluation: recall@k cut-offs, beam width (None: k, Appendix B), test pages scored (0: all)
    recall_at: tuple[int, ...] = (1, 10, 100)
    test_pages: int = 0
    #: Appendix E: test segments of each ``other_datasets`` shown with their predictions (0: none)
    examples: int = 5
    #: decoding at the paper's |S| with a trained model: the deep Superbloom model trained on the main dataset's
    #: sets inside an id space of ``decode_ids`` ids (0: not run; the data's ids are the first ones, the others never
    #: occur) for ``decode_steps`` steps (0: ``steps``); ``decode_positions`` test positions timed,
    #: ``decode_repeats`` paired timings (exhaustive, beam) per k
    decode_ids: int = 0
    decode_steps: int = 0
    decode_positions: int = 64
    decode_repeats: int = 5

    ZERO_MEANS_ALL: ClassVar[frozenset[str]] = frozenset({"test_pages", "lm_test_windows"})
    EVALUATION_ONLY: ClassVar[frozenset[str]] = frozenset({"recall_at", "test_pages", "lm_test_windows", "examples",
                                                           "decode_positions", "decode_repeats"})

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in (self.dataset, *self.other_datasets):
            if name not in ("fb15k237", "lastfm"):
                raise ValueError(f"dataset and other_datasets must be 'fb15k237' or 'lastfm', got {name!r}")
        for name in ("examples", "decode_ids", "decode_steps"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0 (0: see its comment), got {getattr(self, name)}")
        self.require_positive("decode_positions", "decode_repeats")
        if self.other_steps < 0:
            raise ValueError(f"other_steps must be >= 0 (0: the profile's steps), got {self.other_steps}")
        if self.dataset in self.other_datasets:
            raise ValueError(f"other_datasets repeats the main dataset {self.dataset!r}; list only further ones")
        self.require_positive("segment", "alpha", "num_hashes", "hidden", "heads", "intermediate", "layers_shallow",
                              "layers_deep", "steps", "batch", "lm_wordpiece", "lm_alpha", "lm_window", "lm_layers",
                              "lm_steps", "lm_batch")
        for width in (self.hidden, *self.lm_baseline_dims, *self.lm_superbloom_dims):
            if width < 1 or width % self.heads:
                raise ValueError(f"every width ({width}) must be a positive multiple of heads ({self.heads})")
        if not 0 <= self.sampled_share < 1:
            raise ValueError(f"sampled_share must be in [0, 1) (0: no sampled-softmax model), got {self.sampled_share}")
        if not self.recall_at or min(self.recall_at) < 1:
            raise ValueError(f"recall_at must list cut-offs >= 1, got {self.recall_at}")

    def deep_models(self) -> list[ModelSpec]:
        """The deep baseline and the deep Superbloom model (what ``other_datasets`` trains)."""
        return [m for m in self.models() if m.layers == self.layers_deep and m.num_sampled == 0]

    def models(self) -> list[ModelSpec]:
        """Table 3's four rows (baseline and Superbloom, shallow and deep), then Table 1's sampled softmax."""
        out = []
        for layers in (self.layers_shallow, self.layers_deep):
            out.append(ModelSpec(f"baseline-L{layers}", 1, 1, layers))
            out.append(ModelSpec(f"superbloom-a{self.alpha}m{self.num_hashes}-L{layers}", self.alpha,
                                 self.num_hashes, layers))
        if self.sampled_share:
            out.append(ModelSpec(f"sampled-softmax-L{self.layers_deep}", 1, 1, self.layers_deep,
                                 num_sampled=-1))   # resolved against the number of ids by model_config
        return out

    def language_models(self) -> list[ModelSpec]:
        """§4's Table 4: the unhashed baselines and the Superbloom models, with positions (text)."""
        return ([ModelSpec(f"baseline-d{d}", 1, 1, self.lm_layers, hidden=d, use_positions=True)
                 for d in self.lm_baseline_dims]
                + [ModelSpec(f"superbloom-d{d}", self.lm_alpha, self.num_hashes, self.lm_layers, hidden=d,
                             use_positions=True) for d in self.lm_superbloom_dims])


PROFILES: ProfileSet[SuperbloomProfile] = ProfileSet(
    # smoke: CPU, about a minute: 15 steps of 16 segments, width 64, 1 and 2 layers, 100 test pages; §4 on a
    # 2,000-token vocabulary for 10 steps. Proves the code paths; its scores are not to be read.
    smoke=SuperbloomProfile(name="smoke", budget_minutes=1.0, steps=15, batch=16, test_pages=100, lm_steps=10,
                            lm_test_windows=100, decode_ids=20_000, decode_steps=15, decode_positions=16,
                            decode_repeats=2),
    # cpu: two CPU cores, under an hour: 1,500 steps of 64 segments, width 128, 1 and 4 layers, α = 50 (the
    # paper's) on FB15k-237's ids (291 tokens per map). Measured on one busy core: 0.2 s per step (1 layer)
    # to 0.8 s (Superbloom, 4 layers: its sequences are m = 2 times longer). The committed run's wall time is in
    # its results. Last.fm (the other dataset) trains the two deep models for 600 steps (about 20 passes over its
    # training users' segments), to keep the chapter within the hour. The decoding experiment trains the deep
    # Superbloom model again inside an id space of 1M ids (the paper's |S|: 20,000 tokens per map) for 600 steps.
    cpu=SuperbloomProfile(name="cpu", budget_minutes=60.0, hidden=128, heads=4, intermediate=512,
                          layers_shallow=1, layers_deep=4, steps=1500, batch=64, learning_rate=1e-3, warmup=100,
                          other_steps=600, decode_ids=1_000_000, decode_steps=600,
                          lm_wordpiece=2000, lm_unigrams=8000, lm_bigrams=4000, lm_window=64,
                          lm_baseline_dims=(128, 32), lm_superbloom_dims=(256, 128), lm_layers=2, lm_steps=800,
                          lm_batch=32, lm_test_windows=0),
    # small: one GPU: width 256 (Table 3's d = 256), 1 and 12 layers (Table 3's depths), 10,000 steps of 128.
    small=SuperbloomProfile(name="small", accelerator="gpu", budget_minutes=10.0, hidden=256, heads=4,
                            intermediate=1024, layers_shallow=1, layers_deep=12, steps=10_000, batch=128,
                            learning_rate=5e-4, warmup=500, decode_ids=1_000_000, decode_steps=10_000,
                            lm_wordpiece=4000, lm_unigrams=20000, lm_bigrams=20000, lm_window=128,
                            lm_baseline_dims=(256, 64), lm_superbloom_dims=(512, 256), lm_layers=4, lm_steps=5000,
                            lm_batch=64, lm_test_windows=0),
    # paper: Table 3's Superbloom d = 256 at 1 and 12 layers; the paper trains more than 1M steps at batch 1,024 on
    # 16 TPUs with inverse-square-root decay from 1e-4 (here: linear decay, on FB15k-237).
    paper=SuperbloomProfile(name="paper", accelerator="gpu", budget_minutes=60.0 * 24, hidden=256, heads=4,
                            intermediate=1024, layers_shallow=1, layers_deep=12, steps=1_000_000, batch=1024,
                            learning_rate=1e-4, warmup=10_000, decode_ids=1_000_000, decode_steps=1_000_000,
                            lm_wordpiece=30000, lm_unigrams=500_000, lm_bigrams=500_000, lm_window=128,
                            lm_baseline_dims=(256, 64), lm_superbloom_dims=(512, 256), lm_layers=12,
                            lm_steps=1_000_000, lm_batch=256, lm_test_windows=0),
)
