"""The Superbloom chapter's models and four profiles: one comment on every knob.

The comparisons are the paper's, at **matched sizes** (parameters within a few percent, printed beside every row):

* **Table 3, "hashing needs depth"**: Superbloom (``m`` hashes, ``alpha`` ids per token) at width ``hidden`` and each
  of ``depths``; beside each, the unhashed **baseline** (``alpha = 1``, one token per id, a full softmax) at the
  same depth with the width that gives it Superbloom's parameter count (``match``). Depth is then the only
  difference between the rows of a family, and hashing the only one within a row.
* **Table 1 at the baseline's size**: an unhashed baseline at width ``baseline_hidden`` (its id table dominates its
  size), Superbloom at the width the saved table pays for (matched to it) and the **sampled-softmax** model (an
  unhashed model at that Superbloom's width, so "of a much larger size", its training loss over the targets and as
  many uniformly drawn ids as Superbloom scores hash tokens: the same Transformer and the same output computation
  per masked item, the paper's "same computational budget"), all at the deepest depth.

Every model trains until its loss on the validation pages' masked items stops improving (early stopping,
``steps`` the cap) at each of
``learning_rates`` (seed ``seed``); the best rate on validation is kept, and the models the claims read are
trained again with ``seeds - 1`` more seeds at that rate.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import ClassVar

from hashlib_core.profiles import Profile, ProfileSet

__all__ = ["ModelSpec", "SuperbloomProfile", "PROFILES", "SET_DATASETS"]

#: the id-set datasets a profile can name (:data:`hashlib_core.papers.superbloom.data.DATASET_NAMES`)
SET_DATASETS = ("gowalla", "diginetica", "wikispeedia", "fb15k237", "lastfm")


@dataclass(frozen=True)
class ModelSpec:
    """One trained model: its name, hashing (``alpha``, ``num_hashes``), depth and width.

    ``hidden`` 0 with ``match`` set: the width is chosen at run time (it depends on the data's number of ids) so that
    the model's parameter count is nearest that of the model named ``match``; ``width_of`` set: the width of the
    (resolved) model it names. ``num_sampled`` -1: sampled softmax over as many ids as the profile's Superbloom scores
    hash tokens (resolved against the data)."""

    name: str
    alpha: int
    num_hashes: int
    layers: int
    num_sampled: int = 0
    hidden: int = 0
    match: str = ""
    width_of: str = ""
    use_positions: bool = False

    @property
    def slug(self) -> str:
        return "".join(c if c.isalnum() or c == "-" else "-" for c in self.name.lower())

    @property
    def family(self) -> str:
        return "sampled softmax" if self.num_sampled else ("Superbloom" if self.alpha > 1 else "baseline")


@dataclass(frozen=True)
class SuperbloomProfile(Profile):
    """Knobs of the chapter."""

    #: the data standing in for Wikipedia's link sets (one of :data:`SET_DATASETS`)
    dataset: str = "gowalla"
    #: further id-set datasets on which the deepest matched pair is trained and scored too (``other_datasets``)
    other_datasets: tuple[str, ...] = ("diginetica", "wikispeedia", "fb15k237", "lastfm")
    #: shares of pages held out for testing and for validation (early stopping, the learning rate); validation
    #: segments scored at each evaluation (0: all); items per segment (§3.1: 32)
    test_share: float = 0.1
    validation_share: float = 0.05
    validation_pages: int = 0
    segment: int = 32
    #: hashing of the Superbloom models: ids per hash token (the paper: 50) and hash maps (the paper: 2)
    alpha: int = 50
    num_hashes: int = 2
    #: Superbloom's width in Table 3's rows, the unhashed baseline's width in Table 1's comparison (0: not run),
    #: attention heads (every width is a multiple of it) and feed-forward width (4 x the width when 0)
    hidden: int = 64
    baseline_hidden: int = 32
    heads: int = 2
    intermediate: int = 0
    #: Table 3's depths; Table 1's comparison is at the deepest
    depths: tuple[int, ...] = (1, 2)
    #: further depths of Table 3 only, each deeper than ``depths``: the matched pair trained through the
    #: learning-rate sweep at seed ``seed`` (no more seeds), extending the depth trend; Table 1, the other datasets,
    #: the diagnoses and the claims' seeded rows stay at the deepest of ``depths``
    further_depths: tuple[int, ...] = ()
    #: the sampled-softmax model of Table 1 (unhashed at the width of Superbloom matched to the baseline, scoring as
    #: many ids as Superbloom's tokens)
    sampled: bool = True
    #: training (§3.2: Adam, inverse-square-root decay; ours: AdamW, linear decay after warm-up): the cap on steps,
    #: segments per batch, warm-up steps, validation every ``eval_every`` steps, ``patience`` evaluations without
    #: improvement stop the run; the learning rates swept for every model (seed ``seed``)
    steps: int = 30
    batch: int = 16
    warmup: int = 3
    eval_every: int = 10
    patience: int = 2
    learning_rates: tuple[float, ...] = (1e-3,)
    #: seeds of the models the claims read (the shallowest and deepest rows, Table 1's models): ``seed`` and the
    #: next ``seeds - 1`` integers, at the learning rate chosen with ``seed``
    seeds: int = 1
    #: training steps on each of ``other_datasets`` (their cap; 0: ``steps``)
    other_steps: int = 0
    #: §4, natural language, on Penn Treebank (the vocabulary and the training windows from its train split, early
    #: stopping and the learning-rate choice on its validation split, recall on its test split): WordPiece pieces,
    #: frequent words and word pairs added, α of the Superbloom models, window (tokens per training and held-out
    #: sequence), widths of the unhashed baselines (Table 4: d = 256 and 64; beside each, Superbloom at the width that
    #: gives it the baseline's parameter count, as the paper's "of comparable size"), layers, the cap on steps, batch,
    #: validation every ``lm_eval_every`` steps (``patience`` evaluations without improvement stop a run), the
    #: learning rates swept for every model (seed ``seed``), seeds at the chosen rate, validation and test windows
    #: (0: all)
    lm_wordpiece: int = 500
    lm_unigrams: int = 1000
    lm_bigrams: int = 500
    lm_alpha: int = 40
    lm_window: int = 32
    lm_baseline_dims: tuple[int, ...] = (64, 16)
    lm_layers: int = 1
    lm_steps: int = 20
    lm_batch: int = 16
    lm_eval_every: int = 10
    lm_learning_rates: tuple[float, ...] = (1e-3,)
    lm_seeds: int = 1
    lm_validation_windows: int = 0
    lm_test_windows: int = 200
    #: the hash's coarseness (a diagnosis, one seed): on ``alpha_dataset`` (one of :data:`SET_DATASETS`; "": not run),
    #: Superbloom at the deepest depth and width ``hidden`` with each of ``alphas`` ids per hash token (the profile's
    #: ``alpha`` among them), and the unhashed baseline of the size of the one at ``alpha``, each at the learning rate
    #: chosen on the main data, at most ``alpha_steps`` steps (0: ``steps``)
    alpha_dataset: str = ""
    alphas: tuple[int, ...] = ()
    alpha_steps: int = 0
    #: evaluation: recall@k cut-offs (the validation score is recall at the largest), test pages scored (0: all)
    recall_at: tuple[int, ...] = (1, 10, 100)
    test_pages: int = 0
    #: Appendix E: test segments of each ``other_datasets`` shown with their predictions (0: none)
    examples: int = 5
    #: decoding at the paper's |S| with a trained model: the deepest Superbloom model trained on the main dataset's
    #: sets inside an id space of ``decode_ids`` ids (0: not run; the data's ids are the first ones, the others never
    #: occur) for ``decode_steps`` steps (0: ``steps``); ``decode_positions`` test positions timed,
    #: ``decode_repeats`` paired timings (exhaustive, beam) per k
    decode_ids: int = 0
    decode_steps: int = 0
    decode_positions: int = 64
    decode_repeats: int = 5
    #: the length diagnosis: the claims' deep pair trained again with at most ``longer_steps`` steps (more than
    #: ``steps``; 0: not run), at Table 3's chosen rates and seed ``seed``
    longer_steps: int = 0
    #: §2.4's training time (a benchmark inside the chapter): one training step of the unhashed model and of
    #: Superbloom at the claims' deep width and depth (the same Transformer; only the vocabulary differs), timed in
    #: alternation ``train_time_repeats`` times (``train_time_steps`` steps each) over the main data's own ids and over
    #: each of ``train_time_ids`` larger than it (0 repeats: not run)
    train_time_ids: tuple[int, ...] = ()
    train_time_repeats: int = 0
    train_time_steps: int = 2

    ZERO_MEANS_ALL: ClassVar[frozenset[str]] = frozenset({"test_pages", "lm_test_windows", "validation_pages",
                                                           "lm_validation_windows"})
    ZERO_MEANS: ClassVar[Mapping[str, str]] = MappingProxyType({
        "further_depths": "none", "intermediate": "4 x the width", "baseline_hidden": "not run",
        "other_steps": "as steps", "alpha_dataset": "not run", "alpha_steps": "as steps", "longer_steps": "not run",
        "train_time_repeats": "not run", "warmup": "no warm-up", "patience": "never stop early",
        "examples": "none", "decode_ids": "not run", "decode_steps": "as steps", "lm_unigrams": "none added",
        "lm_bigrams": "none added"})
    BOUNDS: ClassVar[Mapping[str, str]] = MappingProxyType({"test_share": "(0, 1)", "validation_share": "(0, 1)"})
    EVALUATION_ONLY: ClassVar[frozenset[str]] = frozenset({"recall_at", "test_pages", "lm_test_windows", "examples",
                                                           "decode_positions", "decode_repeats",
                                                           "train_time_ids", "train_time_repeats",
                                                           "train_time_steps"})

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in (self.dataset, *self.other_datasets):
            if name not in SET_DATASETS:
                raise ValueError(f"dataset and other_datasets must be among {list(SET_DATASETS)}, got {name!r}")
        if self.alpha_dataset and self.alpha_dataset not in SET_DATASETS:
            raise ValueError(f"alpha_dataset must be one of {list(SET_DATASETS)} or '' (not run), got "
                             f"{self.alpha_dataset!r}")
        if self.alpha_dataset and (self.alpha not in self.alphas or min(self.alphas) < 1
                                   or list(self.alphas) != sorted(set(self.alphas), reverse=True)):
            raise ValueError(f"alphas must list decreasing ids per token >= 1, the profile's alpha ({self.alpha}) "
                             f"among them (its baseline is matched to that model), got {self.alphas}")
        if self.dataset in self.other_datasets:
            raise ValueError(f"other_datasets repeats the main dataset {self.dataset!r}; list only further ones")
        ids = list(self.train_time_ids)
        if any(n < 1 for n in ids) or ids != sorted(set(ids)):
            raise ValueError(f"train_time_ids must list increasing id counts >= 1, got {self.train_time_ids}")
        if self.longer_steps and self.longer_steps <= self.steps:
            raise ValueError(f"longer_steps must exceed steps ({self.steps}) or be 0 (not run), got "
                             f"{self.longer_steps}")
        if not self.depths or min(self.depths) < 1 or list(self.depths) != sorted(set(self.depths)):
            raise ValueError(f"depths must list increasing layer counts >= 1, got {self.depths}")
        if self.further_depths and (min(self.further_depths) <= self.deep
                                    or list(self.further_depths) != sorted(set(self.further_depths))):
            raise ValueError(f"further_depths must list increasing layer counts deeper than depths' deepest "
                             f"({self.deep}), got {self.further_depths}")
        for name in ("learning_rates", "lm_learning_rates"):
            if not getattr(self, name) or min(getattr(self, name)) <= 0:
                raise ValueError(f"{name} must list positive rates, got {getattr(self, name)}")
        if not 0 < self.validation_share < 1:
            raise ValueError(f"validation_share must be in (0, 1): early stopping needs validation pages, got "
                             f"{self.validation_share}")
        for width in (self.hidden, self.baseline_hidden or self.heads, *self.lm_baseline_dims):
            if width < 1 or width % self.heads:
                raise ValueError(f"every width ({width}) must be a positive multiple of heads ({self.heads})")
        if self.sampled and not self.baseline_hidden:
            raise ValueError("the sampled-softmax model takes the width of Superbloom matched to the baseline: set "
                             "baseline_hidden, or sampled=False")
        if not self.recall_at or min(self.recall_at) < 1:
            raise ValueError(f"recall_at must list cut-offs >= 1, got {self.recall_at}")

    @property
    def deep(self) -> int:
        """The deepest of ``depths``: Table 1's comparisons and the ``other_datasets`` are run at it."""
        return self.depths[-1]

    def alpha_models(self) -> list[ModelSpec]:
        """The coarseness diagnosis's models: Superbloom at the deepest depth with each of ``alphas``, then the
        unhashed baseline of the size of the one at ``alpha`` (empty when ``alpha_dataset`` is unset)."""
        if not self.alpha_dataset:
            return []
        out = [ModelSpec(f"superbloom-a{a}-L{self.deep}", a, self.num_hashes, self.deep, hidden=self.hidden)
               for a in self.alphas]
        return out + [ModelSpec(f"baseline-L{self.deep}", 1, 1, self.deep,
                                match=f"superbloom-a{self.alpha}-L{self.deep}")]

    def superbloom_name(self, layers: int) -> str:
        return f"superbloom-L{layers}"

    def roles(self) -> dict[str, str]:
        """The models the claims compare, by role: Superbloom and the baseline of its size at the shallowest and the
        deepest depth; the one-layer Superbloom of the deep one's size; Table 1's wide baseline, Superbloom of its
        size and the sampled-softmax model (absent when ``baseline_hidden`` is 0)."""
        shallow, deep = self.depths[0], self.deep
        out = {"superbloom_shallow": self.superbloom_name(shallow), "baseline_shallow": f"baseline-L{shallow}",
               "superbloom_deep": self.superbloom_name(deep), "baseline_deep": f"baseline-L{deep}"}
        if deep > 1:
            out["superbloom_one_layer"] = "superbloom-wide-L1"
        if self.baseline_hidden:
            out.update(baseline_wide=f"baseline-d{self.baseline_hidden}-L{deep}",
                       superbloom_matched=f"superbloom-matched-L{deep}")
            if self.sampled:
                out["sampled"] = f"sampled-softmax-L{deep}"
        return out

    def models(self) -> list[ModelSpec]:
        """Table 3's rows (per depth of ``depths`` and ``further_depths``: Superbloom, then the baseline of its
        size), the one-layer Superbloom as large as the deepest of ``depths`` (Table 3's superbloom-d384l1), then
        Table 1's comparison at the baseline's size (the baseline, Superbloom of its size, the sampled-softmax
        model)."""
        roles, out = self.roles(), []
        for layers in (*self.depths, *self.further_depths):
            superbloom = ModelSpec(self.superbloom_name(layers), self.alpha, self.num_hashes, layers,
                                   hidden=self.hidden)
            out += [superbloom, ModelSpec(f"baseline-L{layers}", 1, 1, layers, match=superbloom.name)]
        if "superbloom_one_layer" in roles:
            out.append(ModelSpec(roles["superbloom_one_layer"], self.alpha, self.num_hashes, 1,
                                 match=roles["superbloom_deep"]))
        if "baseline_wide" in roles:
            out += [ModelSpec(roles["baseline_wide"], 1, 1, self.deep, hidden=self.baseline_hidden),
                    ModelSpec(roles["superbloom_matched"], self.alpha, self.num_hashes, self.deep,
                              match=roles["baseline_wide"])]
        if "sampled" in roles:
            out.append(ModelSpec(roles["sampled"], 1, 1, self.deep, num_sampled=-1,
                                 width_of=roles["superbloom_matched"]))
        return out

    def seeded(self) -> list[str]:
        """The models trained with ``seeds`` seeds: those the claims read (:meth:`roles`)."""
        return list(self.roles().values())

    def deep_models(self) -> list[ModelSpec]:
        """The deepest matched pair (Superbloom and the baseline of its size): what ``other_datasets`` trains."""
        return [m for m in self.models() if m.layers == self.deep and m.name in (
            self.superbloom_name(self.deep), f"baseline-L{self.deep}")]

    def language_models(self) -> list[ModelSpec]:
        """§4's Table 4: each unhashed baseline (with positions: text), then Superbloom matched to its size (its width
        resolved against the vocabulary by :func:`~hashlib_core.papers.superbloom.training.resolve`)."""
        out = []
        for d in self.lm_baseline_dims:
            out += [ModelSpec(f"baseline-d{d}", 1, 1, self.lm_layers, hidden=d, use_positions=True),
                    ModelSpec(f"superbloom-matched-d{d}", self.lm_alpha, self.num_hashes, self.lm_layers,
                              match=f"baseline-d{d}", use_positions=True)]
        return out


PROFILES: ProfileSet[SuperbloomProfile] = ProfileSet(
    # smoke: CPU, about a minute: Gowalla's sets, widths 32 (Superbloom) and 16 (the wide baseline), 1 and 2 layers
    # (and 8, one seed),
    # at most 15 steps of 16 segments scored every 5 on 50 validation pages, 100 test pages; Wikispeedia as the other
    # dataset; §4 on a 2,000-token vocabulary for 10 steps (50 validation windows); the coarseness diagnosis on
    # Wikispeedia at alpha 50 and 5 for 10 steps; the training step timed over Gowalla's ids and 100K; the deep pair
    # again for at most 30 steps. Proves the code paths; its scores are not to be read.
    smoke=SuperbloomProfile(name="smoke", budget_minutes=1.0, other_datasets=("wikispeedia",), hidden=32,
                            baseline_hidden=16, heads=2, depths=(1, 2), further_depths=(8,), steps=15,
                            batch=16, eval_every=5,
                            patience=2, validation_pages=50, test_pages=100, other_steps=10, lm_steps=10,
                            lm_eval_every=5, lm_validation_windows=50, lm_test_windows=100, decode_ids=100_000,
                            decode_steps=15, decode_positions=16, decode_repeats=2, alpha_dataset="wikispeedia",
                            alphas=(50, 5), alpha_steps=10, longer_steps=30, train_time_ids=(100_000,),
                            train_time_repeats=2, train_time_steps=1),
    # cpu: two CPU cores, at most three hours (each experiment at most one). The main data is FB15k-237 (14.5K ids:
    # an unhashed table of them is most of a small model, and models learn beyond the popularity ranking within the
    # budget; on the 41-43K-id sets Superbloom at alpha 50 stays near a uniform guess: see the coarseness diagnosis
    # and the other datasets), Superbloom at width 128 and 1, 2 and 4
    # layers, each beside the unhashed baseline of its size (narrow: its id table takes most of the parameters), and
    # the pair at 8 layers too (the sweep at one seed: 8 layers with three seeds, Table 1 and the other datasets at 8
    # do not fit the three hours);
    # Table 1's comparison at 4 layers beside a width-16 baseline; at most 2,000 steps of 32 segments, the
    # masked-item loss on 1,000 validation pages every 200 steps, stopping after 3 evaluations without improvement;
    # three learning rates and three seeds (sized with ``python -m hashlib_core.benchmarks.superbloom_steps --profile
    # cpu``). The other datasets (Gowalla's and Diginetica's 41-43K ids among them) train the 4-layer pair for at
    # most 1,000 steps; the decoding experiment trains it inside 1M ids (the paper's |S|: 20,000 tokens per map) for
    # 600 steps; §4 trains two 2-layer baselines (widths 64 and 16) and Superbloom of their sizes on Penn Treebank
    # (windows of 32 tokens, batches of 32), at most 2,500 steps with validation every 250, the same three learning
    # rates, three seeds. The coarseness diagnosis trains the 4-layer Superbloom on Gowalla at alpha 50, 10 and 2 and
    # the baseline of the alpha-50 model's size, at most 2,000 steps each (one seed). §2.4's training step is timed
    # over the data's ids, 100K and 1M (5 paired timings of 2 steps). The length diagnosis trains the claims' deep
    # pair again with a cap of 4,000 steps (twice Table 3's).
    cpu=SuperbloomProfile(name="cpu", budget_minutes=180.0, dataset="fb15k237",
                          other_datasets=("gowalla", "diginetica", "wikispeedia", "lastfm"), hidden=128,
                          baseline_hidden=16, heads=4, depths=(1, 2, 4), further_depths=(8,), steps=2000, batch=32,
                          warmup=100, eval_every=200, patience=3, validation_pages=1000,
                          learning_rates=(1e-3, 3e-3, 1e-2), seeds=3, other_steps=1000, decode_ids=1_000_000,
                          decode_steps=600, alpha_dataset="gowalla", alphas=(50, 10, 2), alpha_steps=2000,
                          lm_wordpiece=2000, lm_unigrams=8000, lm_bigrams=4000, lm_window=32,
                          lm_baseline_dims=(64, 16), lm_layers=2, lm_steps=2500,
                          lm_batch=32, lm_eval_every=250, lm_learning_rates=(1e-3, 3e-3, 1e-2), lm_seeds=3,
                          lm_test_windows=0, longer_steps=4000, train_time_ids=(100_000, 1_000_000),
                          train_time_repeats=5, train_time_steps=2),
    # small: one GPU: width 256 (Table 3's d = 256) at 1, 2, 4, 8 and 12 layers (Table 3's depths are 1 and 12),
    # the baseline of Table 1 at width 128, at most 20,000 steps of 128 segments; the coarseness diagnosis on Gowalla;
    # the training step timed over Gowalla's ids, 100K and 1M.
    small=SuperbloomProfile(name="small", accelerator="gpu", budget_minutes=10.0, hidden=256, baseline_hidden=128,
                            heads=4, depths=(1, 2, 4, 8, 12), steps=20_000, batch=128, warmup=500, eval_every=1000,
                            patience=3, validation_pages=2000, learning_rates=(2e-4, 5e-4, 1e-3), seeds=3,
                            decode_ids=1_000_000, decode_steps=10_000, alpha_dataset="gowalla", alphas=(50, 10, 2),
                            lm_wordpiece=4000, lm_unigrams=20000, lm_bigrams=20000, lm_window=128,
                            lm_baseline_dims=(256, 64), lm_layers=4, lm_steps=5000,
                            lm_batch=64, lm_eval_every=500, lm_learning_rates=(2e-4, 5e-4, 1e-3), lm_seeds=3,
                            lm_test_windows=0, train_time_ids=(100_000, 1_000_000), train_time_repeats=5,
                            train_time_steps=5),
    # paper: Table 3's Superbloom d = 256 at 1 and 12 layers; the paper trains more than 1M steps at batch 1,024 on
    # 16 TPUs with inverse-square-root decay from 1e-4 (here: linear decay, on Gowalla; the coarseness diagnosis too);
    # the training step timed up to the paper's 5,281,889 ids.
    paper=SuperbloomProfile(name="paper", accelerator="gpu", budget_minutes=60.0 * 24, hidden=256,
                            baseline_hidden=256, heads=4, depths=(1, 12), steps=1_000_000, batch=1024,
                            warmup=10_000, eval_every=10_000, patience=5, learning_rates=(5e-5, 1e-4, 2e-4),
                            seeds=3, decode_ids=1_000_000, decode_steps=1_000_000, alpha_dataset="gowalla",
                            alphas=(50, 10, 2), lm_wordpiece=30000, lm_unigrams=500_000, lm_bigrams=500_000, lm_window=128,
                            lm_baseline_dims=(256, 64), lm_layers=12,
                            lm_steps=1_000_000, lm_batch=256, lm_eval_every=10_000,
                            lm_learning_rates=(5e-5, 1e-4, 2e-4), lm_seeds=3, lm_test_windows=0,
                            train_time_ids=(1_000_000, 5_281_889), train_time_repeats=5, train_time_steps=5),
)
