"""Claims, tested: every paper's statements with a computed verdict (``hashlib_core.claims``).

A chapter lists its paper's claims in ``hashlib_core/papers/<slug>/claims.py`` as a :class:`ClaimSet` and registers
it as the chapter's last experiment, ``claims``::

    CLAIMS = ClaimSet("hashformers", "HashFormers", [better(...), within(...), ...], scale=describe_scale)
    CLAIMS.register(CHAPTER)                  # in experiments.py, after every experiment whose results it reads

The ``claims`` experiment reads the chapter's other results of the same profile, evaluates every claim and writes
``results/<slug>/<profile>/claims.csv`` with the usual provenance, plus the digests of the results it read: a
verdict goes stale when its evidence is rewritten, and a run that rewrites evidence (``--only glue``) recomputes
the verdicts with it. The page opens with :func:`hashlib_core.book.claims_table`; the book's scorecard gathers
every chapter's (:mod:`hashlib_core.claims.scorecard`).

Modules: :mod:`~hashlib_core.claims.core` (claims, regions, the five verdicts, power and flags),
:mod:`~hashlib_core.claims.statistics` (the interval, closed-form intervals across seeds, Kendall's tau),
:mod:`~hashlib_core.claims.bootstrap` (the vectorised two-level paired bootstrap),
:mod:`~hashlib_core.claims.glue` (GLUE comparisons and the rule for tasks that learn), :mod:`~hashlib_core.claims.html`
(the claims tables), :mod:`~hashlib_core.claims.scorecard` (the book's scorecard), :mod:`~hashlib_core.claims.cost`
(the H100-hours each headline claim needs at the paper's scale: at an assumed share of the H100's peak, and at the
committed runs' measured rates, an upper bound).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import pandas as pd

from hashlib_core.claims.core import (
    CLAIM_COLUMNS,
    EVIDENCE,
    FLAGS,
    KINDS,
    VERDICTS,
    Claim,
    Effect,
    Evidence,
    NoSignal,
    NotTestable,
    Region,
    better,
    evaluate_claims,
    lean,
    ordering,
    power,
    printed_region,
    ratio,
    value,
    verdict,
    within,
)
from hashlib_core.claims.bootstrap import bootstrap_means, paired_bootstrap, stratified_bootstrap
from hashlib_core.claims.statistics import (
    Interval,
    auc_interval,
    combined,
    correlation_difference,
    correlation_interval,
    kendall_tau,
    proportion_interval,
    ratio_of_means,
    resolving_factor,
    seed_contrast,
    seed_difference,
    seed_interval,
)

__all__ = ["ClaimSet", "Claim", "Effect", "Evidence", "Interval", "NotTestable", "NoSignal", "Region", "VERDICTS",
           "KINDS", "FLAGS", "EVIDENCE", "CLAIM_COLUMNS", "better", "within", "ordering", "ratio", "value",
           "printed_region", "verdict", "lean", "power", "evaluate_claims", "seed_interval", "seed_difference",
           "paired_bootstrap", "bootstrap_means", "kendall_tau", "correlation_interval", "correlation_difference",
           "auc_interval", "proportion_interval", "ratio_of_means", "resolving_factor", "stratified_bootstrap",
           "seed_contrast", "combined", "RESULT"]

#: The result name every chapter's verdicts are written under.
RESULT = "claims"


@dataclass(frozen=True)
class ClaimSet:
    """A paper's claims, in the order the page lists them (the abstract's headline claims first).

    ``scale(profile)`` says what the verdicts were tested at (profile, model size, data, steps): one sentence
    recorded with every verdict; ``brief(profile)`` the same in a few words (the scorecard's headline table).
    """

    slug: str
    paper: str
    claims: tuple[Claim, ...]
    scale: Callable[[Any], str]
    brief: Callable[[Any], str]

    def __init__(self, slug: str, paper: str, claims: Sequence[Claim], *, scale: Callable[[Any], str],
                 brief: Callable[[Any], str] | None = None) -> None:
        claims = tuple(claims)
        if not claims:
            raise ValueError(f"{slug}: a claim set needs at least one claim")
        ids = [c.id for c in claims]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"{slug}: claim ids must be unique, repeated: {dupes}")
        headlines = [c.headline for c in claims]
        if any(headlines) and headlines != sorted(headlines, reverse=True):
            raise ValueError(f"{slug}: the headline claims come first")
        object.__setattr__(self, "slug", slug)
        object.__setattr__(self, "paper", paper)
        object.__setattr__(self, "claims", claims)
        object.__setattr__(self, "scale", scale)
        object.__setattr__(self, "brief", brief or (lambda profile: f"{getattr(profile, 'name', '?')} profile"))

    @property
    def reads(self) -> tuple[str, ...]:
        """Every result some claim reads, in first-read order."""
        return tuple(dict.fromkeys(r for c in self.claims for r in c.reads))

    def evaluate(self, evidence: Evidence) -> pd.DataFrame:
        """The claims table of ``evidence`` (one row per claim, columns :data:`CLAIM_COLUMNS`)."""
        return evaluate_claims(self.paper, self.claims, evidence, self.scale(evidence.profile),
                               self.brief(evidence.profile))

    def register(self, chapter: Any) -> None:
        """Add the ``claims`` experiment to ``chapter`` (after the experiments whose results it reads)."""
        if chapter.slug != self.slug:
            raise ValueError(f"claims of {self.slug!r} registered on chapter {chapter.slug!r}")

        def claims(ctx: Any) -> dict[str, pd.DataFrame]:
            return {RESULT: self.evaluate(ctx.evidence())}

        claims.__doc__ = (f"Every claim of {self.paper} with its computed verdict, from this profile's other "
                          f"results.")
        chapter.experiment("claims", outputs=(RESULT,), reads=self.reads)(claims)
