"""The book's scorecard: every chapter's claims with their verdicts, the headline empirical claims first, the counts
per verdict (exact counts and arithmetic apart from empirical measurements), and one figure.

:func:`gather` reads each chapter's ``claims`` result from the same results its page shows
(:meth:`hashlib_core.chapter.Chapter.show`), so the scorecard and the chapter pages never disagree.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import pandas as pd

from hashlib_core.claims.core import EVIDENCE, VERDICTS

__all__ = ["gather", "counts", "counts_figure", "VERDICT_COLOURS", "EVIDENCE_LABELS", "quoted"]

#: One colour per verdict, shared by the claims tables (``_static/hashbook.css``) and the scorecard figure:
#: *inconclusive* is neutral, never the colour of holds or does not hold.
VERDICT_COLOURS = {
    "holds": "#2e7d32",
    "does not hold": "#e65100",
    "inconclusive": "#90a4ae",
    "no signal": "#d7ccc8",
    "not testable here": "#e0e0e0",
}

#: How the scorecard names the two kinds of evidence.
EVIDENCE_LABELS = {"empirical": "empirical (measured, with chance in it)", "exact": "exact counts and arithmetic"}


def gather(profile: str = "smoke", device: str = "auto", source: str = "live",
           chapters: Sequence[str] | None = None, *, results_root: str | Path | None = None) -> pd.DataFrame:
    """Every chapter's claims table, in book order, with the chapter's slug, title and the profile shown.

    ``source="committed"``: what each chapter page shows (:meth:`~hashlib_core.chapter.Chapter.show`). ``"live"``:
    each chapter's ``profile`` results written at this commit (the batch runner executes this page after the
    chapters, so it reads what they computed in the same build, uncommitted changes included), computed now where
    there are none."""
    from hashlib_core.chapter import Shown
    from hashlib_core.papers import CHAPTERS, chapter

    parts = []
    for slug in chapters or CHAPTERS:
        ch = chapter(slug)
        if source == "live":
            live = ch.profiles.get(profile, device=device)
            shown = Shown(live, ch.load_or_run(live, allow_dirty=True, results_root=results_root), "live", "")
        else:
            shown = ch.show(profile, device, source, results_root=results_root)
        if not shown.has("claims"):
            raise RuntimeError(f"chapter {slug!r} shows {shown.profile.name} results without a claims table: rerun "
                               f"`python -m hashlib_core.papers.{slug} --profile {shown.profile.name} --only claims`")
        table = shown.table("claims").assign(chapter=slug, chapter_title=ch.title, profile=shown.profile.name,
                                             shown_from=shown.source)
        parts.append(table)
    return pd.concat(parts, ignore_index=True)


def _check(claims: pd.DataFrame) -> None:
    unknown = sorted(set(claims["verdict"]) - set(VERDICTS))
    if unknown:
        raise ValueError(f"unknown verdict(s) {unknown}; verdicts: {VERDICTS} (a claims table written before the "
                         f"verdicts were renamed: recompute it with the chapter's `--only claims`)")
    kinds = sorted(set(claims["evidence"]) - set(EVIDENCE)) if "evidence" in claims else ["(column missing)"]
    if kinds:
        raise ValueError(f"unknown evidence kind(s) {kinds}; kinds: {EVIDENCE}")


def counts(claims: pd.DataFrame, evidence: str | None = None) -> pd.DataFrame:
    """Claims per paper (rows, book order) and verdict (columns, :data:`VERDICTS` order), with totals; ``evidence``
    (``"empirical"`` or ``"exact"``) keeps that kind of claim only (every paper keeps its row, with zeros; an exact
    claim is its own interval, so the exact table has no *inconclusive* and no *no signal* column)."""
    _check(claims)
    if evidence is not None and evidence not in EVIDENCE:
        raise ValueError(f"evidence must be one of {EVIDENCE} or None, got {evidence!r}")
    papers = list(dict.fromkeys(claims["paper"]))
    kept = claims if evidence is None else claims[claims["evidence"] == evidence]
    columns = [v for v in VERDICTS if evidence != "exact" or v not in ("inconclusive", "no signal")]
    table = (kept.groupby(["paper", "verdict"]).size().unstack(fill_value=0)
             .reindex(index=papers, columns=columns, fill_value=0))
    table["claims"] = table.sum(axis=1)
    total = table.sum(axis=0).to_frame().T
    total.index = ["all papers"]
    out = pd.concat([table, total]).reset_index().rename(columns={"index": "paper"})
    return out.astype({c: int for c in [*columns, "claims"]})


def counts_figure(claims: pd.DataFrame):
    """Horizontal stacked bars, one panel per kind of evidence (empirical, then exact): per paper, its claims by
    verdict (colours of :data:`VERDICT_COLOURS`)."""
    import matplotlib.pyplot as plt

    _check(claims)
    papers = list(dict.fromkeys(claims["paper"]))[::-1]
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 0.42 * len(papers) + 1.7), sharey=True)
    for ax, kind in zip(axes, ("empirical", "exact")):
        table = counts(claims, kind)
        table = (table[table["paper"] != "all papers"].set_index("paper").reindex(papers)
                 .reindex(columns=list(VERDICTS), fill_value=0))
        left = pd.Series(0, index=table.index)
        for verdict_name in VERDICTS:
            widths = table[verdict_name]
            ax.barh(table.index, widths, left=left, color=VERDICT_COLOURS[verdict_name], label=verdict_name,
                    edgecolor="white", linewidth=0.8)
            for y, (w, x0) in enumerate(zip(widths, left)):
                if w:
                    ax.text(x0 + w / 2, y, str(int(w)), ha="center", va="center", fontsize=8,
                            color="white" if verdict_name in ("holds", "does not hold") else "black")
            left = left + widths
        ax.set_title(EVIDENCE_LABELS[kind], fontsize=9)
        ax.set_xlabel("claims")
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.spines[["top", "right"]].set_visible(False)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, ncol=len(VERDICTS), fontsize=8, loc="lower center", frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


def quoted(claims: pd.DataFrame) -> dict[str, str]:
    """The scorecard's numbers for the prose (and the introduction): counts per verdict over every paper, for the
    empirical claims and the exact ones apart, and for the headline empirical claims."""
    _check(claims)
    out = {"n_claims": f"{len(claims)}", "n_papers": f"{claims['paper'].nunique()}",
           "profiles_shown": ", ".join(f"{t} ({p})" for t, p in dict(zip(claims["chapter_title"],
                                                                          claims["profile"])).items())}
    headline = claims[claims["headline"].astype(bool) & (claims["evidence"] == "empirical")]
    for prefix, rows in (("empirical", claims[claims["evidence"] == "empirical"]),
                         ("exact", claims[claims["evidence"] == "exact"]), ("headline", headline)):
        out[f"n_{prefix}"] = f"{len(rows)}"
        for verdict_name in VERDICTS:
            out[f"n_{prefix}_{verdict_name.replace(' ', '_')}"] = f"{int((rows['verdict'] == verdict_name).sum())}"
    return out
