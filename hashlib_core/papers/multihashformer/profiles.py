"""The MultiHashFormer chapter's four profiles: one comment on every knob.

Scaled bucket counts: the paper's B are for V = 32,768; a profile with a smaller vocabulary V keeps the paper's
bucket-to-vocabulary ratio, ``B = round(B_paper * V / 32768)`` (e.g. H4B16K has B = 1,024 at V = 2,048), so that
collisions of Single-ID signatures and the pressure on each bucket are those of the paper
(:meth:`~hashlib_core.papers.multihashformer.presets.ModelSpec.scaled`). The ``paper`` profile builds the printed B.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import ClassVar, Mapping

from hashlib_core.papers.multihashformer.presets import PAPER_VOCAB_SIZE, BackboneShape, ModelSpec, parse_variant
from hashlib_core.profiles import Profile, ProfileSet

__all__ = ["MultiHashFormerProfile", "PROFILES", "LM_TRAINING_SETTINGS", "CORPORA", "parse_size"]

#: The training texts a profile can name, and what each is called on the page.
CORPORA = {"wikitext2": "WikiText-2's validation split", "ptb": "Penn Treebank's train split"}

#: The settings that decide the weights of a language model trained from scratch (checkpoint digests of those
#: models use only these, so that changing, say, the expansion experiment never retrains the base models).
LM_TRAINING_SETTINGS = ("corpus", "hidden_size", "intermediate_size", "num_layers", "num_heads", "num_kv_heads",
                        "added_layers", "vocab_size", "seq_len", "max_train_tokens", "batch_size", "max_steps",
                        "learning_rate", "lr_sweep", "warmup_steps", "weight_decay", "mixed_precision", "seed")


def parse_size(size: str) -> tuple[int, int, int]:
    """``"64/192/2"`` -> ``(hidden_size, intermediate_size, num_layers)`` (a backbone size of the scaling curve)."""
    try:
        hidden, ffn, layers = (int(x) for x in size.split("/"))
    except ValueError:
        raise ValueError(f"a backbone size must look like 'd/ffn/layers', e.g. '64/192/2', got {size!r}") from None
    if min(hidden, ffn, layers) < 1:
        raise ValueError(f"backbone size {size!r} must have positive width, feed-forward width and layers")
    return hidden, ffn, layers


@dataclass(frozen=True)
class MultiHashFormerProfile(Profile):
    """Knobs of the chapter (a Qwen3 backbone as Table 7 names its shapes)."""

    #: backbone width d
    hidden_size: int = 32
    #: feed-forward width
    intermediate_size: int = 64
    #: decoder layers of Standard and MHF; Standard+kL has ``added_layers`` more
    num_layers: int = 2
    num_heads: int = 4
    num_kv_heads: int = 2
    added_layers: int = 1
    #: the language models' training text: "wikitext2" (WikiText-2's validation split, scored on its test split) or
    #: "ptb" (Penn Treebank's train split, about four times larger, scored on its test split, with WikiText-2's test
    #: split as a second test set)
    corpus: str = "wikitext2"
    #: byte-level BPE vocabulary trained on the training text (the paper: 32,768, Mistral)
    vocab_size: int = 2048
    #: training and evaluation window, in tokens
    seq_len: int = 64
    #: training tokens read from the training text (0: all of it)
    max_train_tokens: int = 0
    #: test-split tokens scored (0: all)
    max_eval_tokens: int = 4096
    #: validation-split tokens scored to choose a learning rate (0: all)
    max_valid_tokens: int = 0
    #: optimisation (Table 7: AdamW, cosine schedule with warm-up, clip 1.0, weight decay 0.1)
    batch_size: int = 8
    max_steps: int = 40
    learning_rate: float = 3e-3
    #: learning rates swept for each family (Standard models, MHF models), each trained once on its representative
    #: (Standard, H4B16K) at the profile's size and chosen by next-token accuracy on the corpus's validation split;
    #: every model of the family then trains at its family's rate (none: every model at ``learning_rate``)
    lr_sweep: tuple[float, ...] = ()
    warmup_steps: int = 4
    weight_decay: float = 0.1
    mixed_precision: str = "no"
    #: the Table 1 families trained for language-model quality, card660 and rank (Standard+kL: +added_layers)
    lm_variants: tuple[str, ...] = ("Standard", "Standard+kL", "H3B10K", "H4B16K")
    #: Table 3: bucket sizes at which H1 (Single-ID) and H4 are compared
    single_vs_multi_buckets: tuple[str, ...] = ("B4K", "B8K", "B16K")
    #: Figure 3: (H, B) sweep
    sweep_variants: tuple[str, ...] = ("H3B4K", "H3B8K", "H3B16K", "H4B4K", "H4B8K", "H4B16K", "H4B32K")
    #: Appendix A: held-out contexts stacked into the log-probability matrix
    rank_contexts: int = 256
    #: singular values below rtol * s_max count as zero; the float32 noise floor of a log-probability matrix is
    #: near 1e-8 relative (eps 6e-8 per entry), so 1e-7 separates structure from rounding
    rank_rtol: float = 1e-7
    #: section 4.4: models expanded with new Arabic, Chinese and Hindi tokens
    expansion_variants: tuple[str, ...] = ("Standard", "H4B16K")
    #: new tokens per language (0: 5,120 * V / 32,768, as section 4.4 adds 5K per language to 32K)
    expansion_tokens_per_language: int = 0
    #: continual pre-training after the expansion
    expansion_steps: int = 30
    expansion_learning_rate: float = 2e-3
    #: Table 4: LSH:MMH3 coordinate splits of MHF (H4B16K)
    lsh_mixes: tuple[str, ...] = ("0:4", "1:3", "2:2", "3:1", "4:0")
    #: the scaling curve: backbone sizes "d/ffn/layers" (none: the profile's own size only), the models trained at
    #: each (Standard models and MHF variants; every MHF is compared with every Standard) and the seeds of each.
    #: H3B8K: at V = 2,048 the H3 variant whose total equals Standard's (as H3B10K's does at the paper's V)
    scale_sizes: tuple[str, ...] = ()
    scale_variants: tuple[str, ...] = ("Standard", "Standard+kL", "H3B8K", "H4B16K")
    scale_seeds: tuple[int, ...] = (0,)

    ZERO_MEANS_ALL: ClassVar[frozenset[str]] = frozenset({"max_train_tokens", "max_eval_tokens", "max_valid_tokens"})
    ZERO_MEANS: ClassVar[Mapping[str, str]] = MappingProxyType({"scale_sizes": "the profile's own size",
                                                                "lr_sweep": "none: learning_rate",
                                                                "expansion_tokens_per_language": "5,120 x V / 32,768",
                                                                "warmup_steps": "no warm-up"})
    BOUNDS: ClassVar[Mapping[str, str]] = MappingProxyType({"weight_decay": "[0, inf)", "rank_rtol": "(0, 1)"})
    EVALUATION_ONLY: ClassVar[frozenset[str]] = frozenset({
        "lm_variants", "single_vs_multi_buckets", "sweep_variants", "rank_contexts", "rank_rtol",
        "expansion_variants", "lsh_mixes", "max_eval_tokens",
    })

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.corpus not in CORPORA:
            raise ValueError(f"corpus must be one of {', '.join(map(repr, CORPORA))}, got {self.corpus!r}")
        if self.lr_sweep and (self.corpus == "wikitext2" or min(self.lr_sweep) <= 0
                              or len(set(self.lr_sweep)) != len(self.lr_sweep)):
            raise ValueError(f"lr_sweep {self.lr_sweep} needs distinct positive rates and a corpus with a validation "
                             "split to choose on (corpus='ptb'; WikiText-2's validation split is the training text)")
        if self.seq_len < 2:
            raise ValueError(f"seq_len must be >= 2 (one context and one target), got {self.seq_len}")
        for label in (*self.lm_variants, *self.sweep_variants, *self.expansion_variants):
            self.spec(label)                                   # unknown labels fail here, not after training
        for mix in self.lsh_mixes:
            self.lsh_split(mix)
        self._check_scaling()

    def _check_scaling(self) -> None:
        for size in self.scale_sizes:
            hidden = parse_size(size)[0]
            if hidden % self.num_heads:
                raise ValueError(f"scale size {size!r}: width {hidden} must be a multiple of num_heads "
                                 f"({self.num_heads})")
        kinds = [self.spec(label).kind for label in self.scale_variants]
        if "standard" not in kinds or kinds.count("standard") == len(kinds):
            raise ValueError(f"scale_variants {self.scale_variants} must hold a Standard model and an MHF variant "
                             "(e.g. ('Standard', 'Standard+kL', 'H3B8K', 'H4B16K'))")
        if not self.scale_seeds or len(set(self.scale_seeds)) != len(self.scale_seeds):
            raise ValueError(f"scale_seeds must be distinct seeds, at least one, got {self.scale_seeds}")

    def shape(self) -> BackboneShape:
        """The profile's Qwen3 backbone as a :class:`~hashlib_core.papers.multihashformer.presets.BackboneShape`."""
        return BackboneShape(self.hidden_size, self.intermediate_size, self.num_layers, self.num_heads,
                             self.num_kv_heads, added_layers=self.added_layers, vocab_size=self.vocab_size)

    def own_size(self) -> str:
        """The profile's backbone as a size of the scaling curve, ``"d/ffn/layers"``."""
        return f"{self.hidden_size}/{self.intermediate_size}/{self.num_layers}"

    def spec(self, label: str) -> ModelSpec:
        """The model a label names in this profile (``+kL`` -> ``+added_layers``; B scaled to ``vocab_size``)."""
        spec = parse_variant(label.replace("+kL", f"+{self.added_layers}L"))
        return spec.scaled(self.vocab_size)

    @staticmethod
    def lsh_split(mix: str) -> tuple[int, int]:
        """``"1:3"`` -> ``(1, 3)``: coordinates from trigram LSH and from MMH3; they must add up to H = 4."""
        try:
            num_lsh, num_mmh3 = (int(x) for x in mix.split(":"))
        except ValueError:
            raise ValueError(f"LSH:MMH3 mix must look like '2:2', got {mix!r}") from None
        if num_lsh < 0 or num_mmh3 < 0 or num_lsh + num_mmh3 != 4:
            raise ValueError(f"LSH:MMH3 mix {mix!r} must split the 4 coordinates of H4B16K, e.g. '1:3'")
        return num_lsh, num_mmh3


PROFILES: ProfileSet[MultiHashFormerProfile] = ProfileSet(
    # smoke: CPU, about a minute for every experiment: d 32, 2 layers, V 1,024, 40 steps of 8 x 64 tokens; fewer
    # (H, B) variants and LSH splits; two rates, chosen on 4,096 validation tokens. Proves the code paths; the numbers
    # are not meant to match the paper.
    smoke=MultiHashFormerProfile(
        name="smoke", budget_minutes=2.0, corpus="ptb", vocab_size=1024, max_train_tokens=60_000, max_steps=40,
        learning_rate=1e-2, warmup_steps=4, max_valid_tokens=4096, single_vs_multi_buckets=("B4K", "B16K"),
        sweep_variants=("H3B4K", "H4B32K"), expansion_tokens_per_language=64, expansion_steps=20,
        expansion_learning_rate=5e-3, lsh_mixes=("0:4", "4:0"), scale_sizes=("16/32/1", "32/64/2"),
        scale_seeds=(0, 1), lr_sweep=(1e-2, 3e-2),
    ),
    # cpu: two CPU cores, about an hour: d 64, 2 layers (+1L), V 2,048, 500 steps of 16 x 128 tokens on Penn
    # Treebank's train split (the 500 x 16 windows are fewer than its BPE stream holds, so no model sees a window
    # twice), every variant of Tables 1, 3 and 4 and of the Figure 3 sweep, the whole test
    # split; each family's learning rate chosen from 3e-3, 1e-2 and 3e-2 on the validation split; the scaling curve
    # at d 32, 64 and 128 (2, 2 and 4 layers) with three seeds each; 400 CPT steps after the
    # expansion (100 left its loss falling). Sized from measured step times on two cores (Standard about 0.04 s and
    # H4B16K about 0.17 s per step at d 64; H4B16K about 0.26 s at d 128, 4 layers); the results record each
    # experiment's wall time.
    cpu=MultiHashFormerProfile(
        name="cpu", budget_minutes=90.0, corpus="ptb", hidden_size=64, intermediate_size=192, num_layers=2,
        num_heads=4, num_kv_heads=2, added_layers=1, vocab_size=2048, seq_len=128, max_eval_tokens=0,
        batch_size=16, max_steps=500, learning_rate=1e-2, warmup_steps=50, rank_contexts=512, expansion_steps=400,
        expansion_learning_rate=3e-3, scale_sizes=("32/96/2", "64/192/2", "128/384/4"), scale_seeds=(0, 1, 2),
        lr_sweep=(3e-3, 1e-2, 3e-2),
    ),
    # small: one GPU, the whole chapter in about ten minutes: d 256, 4 layers (+2L), V 8,192, 150 steps of 32 x 256
    # tokens in bf16 on Penn Treebank's train split (about one pass), every variant of Tables 1, 3 and 4 and of the
    # Figure 3 sweep, the whole test split; the scaling curve at d 128, 256 and 384 (4 layers) with three seeds.
    # Measured on one H100 with WikiText-2's validation split: 150 steps, 4.3 minutes for the chapter without the
    # curve (600 steps over-fitted that split). The curve adds 33 models: FIRST ESTIMATE, NOT YET TIMED on PTB.
    small=MultiHashFormerProfile(
        name="small", accelerator="gpu", budget_minutes=10.0, corpus="ptb", hidden_size=256,
        intermediate_size=768, num_layers=4, num_heads=4, num_kv_heads=2, added_layers=2, vocab_size=8192,
        seq_len=256, max_eval_tokens=0, batch_size=32, max_steps=150, learning_rate=1e-3, warmup_steps=15,
        mixed_precision="bf16", rank_contexts=1024, expansion_steps=50, expansion_learning_rate=5e-4,
        scale_sizes=("128/384/4", "256/768/4", "384/1152/4"), scale_seeds=(0, 1, 2),
    ),
    # paper: Table 7 (100M): d 768, FFN 2560, 12 layers, 12/2 heads, +4L; V 32,768; lr 5e-4, cosine, AdamW wd 0.1,
    # bf16, clip 1.0. The paper trains 20K steps of 256 x 2,048 tokens on FineWeb-Edu; the staged Penn Treebank
    # train split (887K words) allows far fewer distinct tokens, so this profile keeps the
    # shapes and the optimiser, not the data volume.
    paper=MultiHashFormerProfile(
        name="paper", accelerator="gpu", budget_minutes=600.0, corpus="ptb", hidden_size=768, intermediate_size=2560,
        num_layers=12, num_heads=12, num_kv_heads=2, added_layers=4, vocab_size=PAPER_VOCAB_SIZE, seq_len=2048,
        max_eval_tokens=0, batch_size=16, max_steps=2000, learning_rate=5e-4, warmup_steps=200,
        mixed_precision="bf16", rank_contexts=4096, expansion_steps=1000, expansion_learning_rate=3e-4,
    ),
)
