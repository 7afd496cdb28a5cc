"""The MultiHashFormer chapter's experiments, registered on the chapter skeleton.

Each experiment writes ``results/multihashformer/<profile>/<name>.csv`` (see :data:`CHAPTER` and
:mod:`hashlib_core.chapter`); run them with ``python -m hashlib_core.papers.multihashformer --profile P``.

``table1``
    Table 1's ``#Param Emb`` / ``Dec`` columns (and the other readings the chapter weighs), Figure 3's embedding
    parameters and section 5.3's expansion arithmetic, all counted from models built on the ``meta`` device.
``lm``
    Section 5.1 at reduced scale: Standard, Standard+kL, MHF (H3B10K) and MHF (H4B16K) trained from scratch on
    the profile's corpus (Penn Treebank's train split, or WikiText-2's validation split) and scored on its test
    split: perplexity over the valid vocabulary (``P_inf``,
    section 3.4, for MHF; the softmax for Standard), next-token accuracy (ties split uniformly), and the uniform and
    unigram baselines every model must beat; ``lm_other_tests`` scores the same models on the other test sets
    (WikiText-2's test split for a Penn Treebank run).
``lr_sweep``
    Each family's learning rate (Standard models, MHF models) chosen on the validation split from the profile's
    sweep; every later model trains at its family's rate.
``calibration``
    Why ``P_inf`` perplexity is worse than unigram at small scale (the heads learn per-hash marginals, and ``P_inf``
    multiplies them: :mod:`hashlib_core.papers.multihashformer.calibration`), and the perplexity at a temperature
    fitted on training windows, which every table also shows beside ``P_inf``.
``single_vs_multi``
    Table 3: H1 (Single-ID) vs H4 at equal parameters and the same B.
``sweep``
    Figure 3: test accuracy and perplexity against embedding parameters for several (H, B).
``card660``
    Table 2 and Appendix B (:mod:`hashlib_core.papers.multihashformer.card660`).
``rank``
    Appendix A: numerical rank of the held-out log-probability matrix against ``d + 1`` and ``min(B, H d)``.
``expansion``
    Sections 4.4 / 5.3 (:mod:`hashlib_core.papers.multihashformer.expansion`).
``scaling``
    Table 1 at several backbone sizes (:mod:`hashlib_core.papers.multihashformer.scaling`): Standard, Standard+kL
    and one MHF variant, several seeds each; the gap of each Table 1 pairing with paired bootstrap intervals, and how
    it moves from the smallest size to the largest.
``scaling_rates``
    The learning-rate sweep repeated at the curve's other sizes (first seed, chosen on the validation split): the
    rate each family trains at in the curve at that size.
``lsh``
    Table 4: MHF (H4B16K) with ``L`` of its 4 coordinates from character-trigram LSH
    (:mod:`hashlib_core.hashing.lsh_trigram`) and ``4 - L`` from MMH3.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from hashlib_core.chapter import Chapter, RunContext
from hashlib_core.papers.multihashformer import card660 as _card660
from hashlib_core.papers.multihashformer import expansion as _expansion
from hashlib_core.papers.multihashformer import scaling as _scaling
from hashlib_core.papers.multihashformer.lm import LanguageModels
from hashlib_core.papers.multihashformer.params import (
    fig3_embedding_params,
    multihashformer_table1_params,
    paper_scale_expansion_params,
    table1_readings,
)
from hashlib_core.papers.multihashformer.profiles import PROFILES

__all__ = ["CHAPTER", "numerical_rank", "lm_quality", "lm_other_tests", "pinf_calibration", "single_vs_multi", "hb_sweep", "lsh_mix",
           "rank_analysis"]

CHAPTER = Chapter("multihashformer", "MultiHashFormer", PROFILES, resources=LanguageModels)

#: The scaling curve's settings: only the scaling experiment reads them.
_SCALING_SETTINGS = ("scale_sizes", "scale_variants", "scale_seeds")


def numerical_rank(matrix: torch.Tensor, rtol: float) -> tuple[int, np.ndarray]:
    """Rank of ``matrix`` as the number of singular values above ``rtol * s_max`` (float64 SVD); also returns the
    singular values. ``-inf`` entries (unregistered ids) must be removed by the caller."""
    if not torch.isfinite(matrix).all():
        raise ValueError("matrix has non-finite entries; drop unregistered vocabulary columns first")
    s = torch.linalg.svdvals(matrix.double()).numpy()
    return int((s > rtol * s[0]).sum()) if s.size else 0, s


def _scored(lms: LanguageModels, label: str) -> dict:
    """A trained model's row: its parameters, test perplexity (``P_inf`` for MHF) and accuracy, and the perplexity
    at the temperature fitted on training windows (:mod:`~hashlib_core.papers.multihashformer.calibration`)."""
    spec = lms.spec(label)
    s = lms.evaluate(spec)
    temperature = lms.temperature(spec)
    return {**lms.describe(spec), "test_perplexity": s.perplexity, "test_accuracy_%": s.accuracy,
            "test_tokens": s.tokens, "temperature": temperature,
            "test_perplexity_calibrated": lms.evaluate(spec, temperature=temperature).perplexity}


def lm_quality(lms: LanguageModels) -> pd.DataFrame:
    """Test-split perplexity (valid vocabulary) and next-token accuracy of the Table 1 families, and the uniform
    (``V``) and unigram (add-one training-token frequencies) baselines."""
    rows = [{**_scored(lms, label), "train_seconds": lms.train_seconds.get(lms.spec(label).label, 0.0)}
            for label in lms.profile.lm_variants]
    tokens = rows[0]["test_tokens"] if rows else 0
    unigram_ppl, unigram_acc = lms.unigram_baseline()
    for name, ppl, acc in (("uniform", float(lms.vocab_size), 100.0 / lms.vocab_size),
                           ("unigram", unigram_ppl, unigram_acc)):
        rows.append({"model": name, "built_as": "baseline", "test_perplexity": ppl, "test_accuracy_%": acc,
                     "test_tokens": tokens})
    return pd.DataFrame(rows)


def lm_other_tests(lms: LanguageModels) -> pd.DataFrame:
    """The language-model section's models on every test set but the main one: accuracy, perplexity (``P_inf`` for
    MHF) and the perplexity at the temperature fitted on training windows."""
    rows = []
    for name in list(lms.test_sets)[1:]:
        for label in lms.profile.lm_variants:
            spec = lms.spec(label)
            s = lms.evaluate(spec, test_set=name)
            cal = lms.evaluate(spec, temperature=lms.temperature(spec), test_set=name)
            rows.append({"test_set": name, "model": spec.label, "test_accuracy_%": s.accuracy,
                         "test_perplexity": s.perplexity, "test_perplexity_calibrated": cal.perplexity,
                         "test_tokens": s.tokens})
    return pd.DataFrame(rows, columns=["test_set", "model", "test_accuracy_%", "test_perplexity",
                                       "test_perplexity_calibrated", "test_tokens"])


def single_vs_multi(lms: LanguageModels) -> pd.DataFrame:
    """Table 3 analog: H1 (Single-ID, one value repeated on 4 coordinates) vs H4 at the same B and parameters."""
    rows = []
    for b in lms.profile.single_vs_multi_buckets:
        for h in (1, 4):
            row = _scored(lms, f"H{h}{b}")
            distinct = int(torch.unique(lms.model(lms.spec(f"H{h}{b}")).hash_map, dim=0).shape[0])
            rows.append({**row, "bucket_label": b, "distinct_signatures": distinct,
                         "colliding_tokens": lms.vocab_size - distinct})
    return pd.DataFrame(rows)


def hb_sweep(lms: LanguageModels) -> pd.DataFrame:
    """Figure 3 analog: accuracy and perplexity vs embedding parameters for several (H, B), plus Standard."""
    return pd.DataFrame([_scored(lms, label) for label in ("Standard", *lms.profile.sweep_variants)])


def lsh_mix(lms: LanguageModels) -> pd.DataFrame:
    """Table 4 analog: MHF (H4B16K) with ``L`` of its 4 coordinates from trigram LSH and ``4 - L`` from MMH3;
    ``0:4`` is the language-model section's H4B16K model."""
    rows = []
    base = lms.spec("H4B16K")
    for mix in lms.profile.lsh_mixes:
        num_lsh, num_mmh3 = lms.profile.lsh_split(mix)
        spec = base.with_lsh(num_lsh)
        s = lms.evaluate(spec)
        hash_map = lms.model(spec).hash_map
        used = [int(torch.unique(hash_map[:, k]).numel()) for k in range(spec.num_hashes)]
        temperature = lms.temperature(spec)
        rows.append({**lms.describe(spec), "mix": mix, "lsh": num_lsh, "mmh3": num_mmh3,
                     "buckets_used_min": min(used), "test_perplexity": s.perplexity, "test_accuracy_%": s.accuracy,
                     "temperature": temperature,
                     "test_perplexity_calibrated": lms.evaluate(spec, temperature=temperature).perplexity})
    return pd.DataFrame(rows)


def pinf_calibration(lms: LanguageModels) -> pd.DataFrame:
    """Why ``P_inf`` perplexity is high: for each MHF model of the language-model section, its ``P_inf``
    perplexity and accuracy, the fitted temperature and calibrated perplexity, and the "oracle" ``P_inf`` built from
    the exact bucket marginals of the trained Standard model's own distribution through the same signatures."""
    from hashlib_core.papers.multihashformer.calibration import marginal_pinf_scores

    standard = lms.spec("Standard")
    base = lms.evaluate(standard)
    rows = [{"model": "Standard", "source": "trained model", "test_perplexity": base.perplexity,
             "test_accuracy_%": base.accuracy, "temperature": lms.temperature(standard)}]
    for label in lms.profile.lm_variants:
        spec = lms.spec(label)
        if spec.kind == "standard":
            continue
        s = lms.evaluate(spec)
        temperature = lms.temperature(spec)
        rows.append({"model": spec.label, "source": "trained model", "test_perplexity": s.perplexity,
                     "test_accuracy_%": s.accuracy, "temperature": temperature,
                     "test_perplexity_calibrated": lms.evaluate(spec, temperature=temperature).perplexity})
        ppl, acc = marginal_pinf_scores(lms.model(standard), lms.test_windows, lms.model(spec).hash_map,
                                        spec.num_buckets, lms.device, batch_size=lms.profile.batch_size)
        rows.append({"model": spec.label, "source": "Standard's q through these signatures",
                     "test_perplexity": ppl, "test_accuracy_%": acc})
    return pd.DataFrame(rows)


def rank_analysis(lms: LanguageModels) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Appendix A: numerical rank of the (contexts x valid vocabulary) log-probability matrix of each LM model."""
    rows, spectra = [], []
    d = lms.profile.hidden_size
    for label in lms.profile.lm_variants:
        spec = lms.spec(label)
        matrix = torch.cat(lms.evaluate(spec, keep_rows=lms.profile.rank_contexts).rows)
        matrix = matrix[:, torch.isfinite(matrix).all(0)]
        rank, sv = numerical_rank(matrix, lms.profile.rank_rtol)
        n, v = matrix.shape
        bound = d if spec.kind == "standard" else min(spec.num_buckets, spec.num_hashes * d)
        rows.append({"model": spec.label, "contexts": n, "valid_vocab": v, "d": d, "H": spec.hashes_shown,
                     "B": spec.num_buckets, "paper_bound": bound, "bound_with_normaliser": min(bound + 1, n, v),
                     "numerical_rank": rank, "rtol": lms.profile.rank_rtol})
        spectra.append(pd.DataFrame({"model": spec.label, "index": np.arange(1, len(sv) + 1),
                                     "singular_value_rel": sv / sv[0]}))
    return pd.DataFrame(rows), pd.concat(spectra, ignore_index=True)


# ---------------------------------------------------------------------------------------------- registration
@CHAPTER.experiment("table1", outputs=("table1_params", "table1_readings", "fig3_params", "expansion_paper_scale"))
def _table1(ctx: RunContext) -> dict:
    """Parameter counts at the paper's scale (meta device): Table 1, Figure 3, section 5.3."""
    return {"table1_params": multihashformer_table1_params(), "table1_readings": table1_readings(),
            "fig3_params": fig3_embedding_params(), "expansion_paper_scale": paper_scale_expansion_params()}


@CHAPTER.experiment("lr_sweep", outputs=("lr_sweep",), when=lambda p: bool(p.lr_sweep))
def _lr_sweep(ctx: RunContext) -> dict:
    """Each family's learning rate, chosen on the validation split from the profile's sweep."""
    lms = ctx.resources
    for label in ("Standard", "H4B16K"):
        lms.learning_rate(lms.spec(label))
    return {"lr_sweep": pd.DataFrame(lms.sweep_rows)}


@CHAPTER.experiment("lm", outputs=("lm_quality", "lm_other_tests", "training_curves"))
def _lm(ctx: RunContext) -> dict:
    """Language-model quality of the Table 1 families, and their training curves."""
    table = lm_quality(ctx.resources)
    curves = pd.DataFrame(ctx.resources.curves, columns=["model", "step", "loss"])
    return {"lm_quality": table, "lm_other_tests": lm_other_tests(ctx.resources), "training_curves": curves}


@CHAPTER.experiment("calibration", outputs=("pinf_calibration",))
def _calibration(ctx: RunContext) -> dict:
    """Why P_inf perplexity is high (marginal heads), and the calibrated perplexity."""
    return {"pinf_calibration": pinf_calibration(ctx.resources)}


@CHAPTER.experiment("single_vs_multi", outputs=("single_vs_multi",))
def _single_vs_multi(ctx: RunContext) -> dict:
    """Table 3: Single-ID vs Multi-ID signatures."""
    return {"single_vs_multi": single_vs_multi(ctx.resources)}


@CHAPTER.experiment("sweep", outputs=("hb_sweep",))
def _sweep(ctx: RunContext) -> dict:
    """Figure 3: the H x B sweep."""
    return {"hb_sweep": hb_sweep(ctx.resources)}


@CHAPTER.experiment("card660", outputs=("card660", "card660_examples"))
def _card(ctx: RunContext) -> dict:
    """Table 2 and Appendix B: rare-word similarity."""
    table, examples = _card660.card660(ctx.resources, ctx.profile.lm_variants)
    return {"card660": table, "card660_examples": examples}


@CHAPTER.experiment("rank", outputs=("rank", "rank_spectrum"))
def _rank(ctx: RunContext) -> dict:
    """Appendix A: the softmax bottleneck."""
    table, spectrum = rank_analysis(ctx.resources)
    return {"rank": table, "rank_spectrum": spectrum}


@CHAPTER.experiment("expansion", outputs=("expansion", "expansion_params", "expansion_intervals"))
def _expand(ctx: RunContext) -> dict:
    """Sections 4.4 / 5.3: vocabulary expansion and continual pre-training."""
    table, params, intervals = _expansion.expansion(ctx.resources, ctx.profile.expansion_variants)
    return {"expansion": table, "expansion_params": params, "expansion_intervals": intervals}


@CHAPTER.experiment("scaling_rates", outputs=("scaling_rates",), owns=_SCALING_SETTINGS,
                    when=lambda p: bool(p.scale_sizes) and bool(p.lr_sweep))
def _scale_rates(ctx: RunContext) -> dict:
    """The learning-rate sweep at the curve's other sizes: the rate each family trains at there."""
    return {"scaling_rates": _scaling.rates_by_size(ctx.resources)}


@CHAPTER.experiment("scaling", outputs=("scaling_runs", "scaling_gaps", "scaling_trend"), owns=_SCALING_SETTINGS)
def _scale(ctx: RunContext) -> dict:
    """Table 1's pairings at several backbone sizes and seeds: the gap against scale."""
    runs, per_window = _scaling.scaling(ctx.resources)
    return {"scaling_runs": runs, "scaling_gaps": _scaling.scaling_gaps(runs, per_window),
            "scaling_trend": _scaling.scaling_trend(per_window, runs)}


@CHAPTER.experiment("lsh", outputs=("lsh_mix",))
def _lsh(ctx: RunContext) -> dict:
    """Table 4: LSH coordinates in the signature."""
    return {"lsh_mix": lsh_mix(ctx.resources)}


from hashlib_core.papers.multihashformer.claims import CLAIMS  # noqa: E402  (registered last: it reads the rest)

CLAIMS.register(CHAPTER)
