"""The book's scorecard: every chapter's claims with their verdicts, the counts per verdict, and one figure.

:func:`gather` reads each chapter's ``claims`` result from the same results its page shows
(:meth:`hashlib_core.chapter.Chapter.show`), so the scorecard and the chapter pages never disagree.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import pandas as pd

from hashlib_core.claims.core import VERDICTS

__all__ = ["gather", "counts", "counts_figure", "VERDICT_COLOURS", "quoted"]

#: One colour per verdict, shared by the claims tables (``_static/hashbook.css``) and the scorecard figure.
VERDICT_COLOURS = {
    "holds": "#2e7d32",
    "holds in direction": "#9ccc65",
    "does not hold in direction": "#ffb74d",
    "does not hold": "#e65100",
    "not testable here": "#9e9e9e",
}


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


def counts(claims: pd.DataFrame) -> pd.DataFrame:
    """Claims per paper (rows, book order) and verdict (columns, :data:`VERDICTS` order), with totals."""
    unknown = sorted(set(claims["verdict"]) - set(VERDICTS))
    if unknown:
        raise ValueError(f"unknown verdict(s) {unknown}; verdicts: {VERDICTS}")
    papers = list(dict.fromkeys(claims["paper"]))
    table = (claims.groupby(["paper", "verdict"]).size().unstack(fill_value=0)
             .reindex(index=papers, columns=list(VERDICTS), fill_value=0))
    table["claims"] = table.sum(axis=1)
    total = table.sum(axis=0).to_frame().T
    total.index = ["all papers"]
    out = pd.concat([table, total]).reset_index().rename(columns={"index": "paper"})
    return out.astype({c: int for c in [*VERDICTS, "claims"]})


def counts_figure(claims: pd.DataFrame):
    """Horizontal stacked bars: per paper, its claims by verdict (colours of :data:`VERDICT_COLOURS`)."""
    import matplotlib.pyplot as plt

    table = counts(claims)
    table = table[table["paper"] != "all papers"].iloc[::-1]
    fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(table) + 1.4))
    left = pd.Series(0, index=table.index)
    for verdict_name in VERDICTS:
        widths = table[verdict_name]
        ax.barh(table["paper"], widths, left=left, color=VERDICT_COLOURS[verdict_name], label=verdict_name,
                edgecolor="white", linewidth=0.8)
        for y, (w, x0) in enumerate(zip(widths, left)):
            if w:
                ax.text(x0 + w / 2, y, str(int(w)), ha="center", va="center", fontsize=8,
                        color="white" if verdict_name in ("holds", "does not hold") else "black")
        left = left + widths
    ax.set_xlabel("claims")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.spines[["top", "right"]].set_visible(False)
    ax.legend(ncol=3, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.18 - 0.6 / max(len(table), 1)),
              frameon=False)
    fig.tight_layout()
    return fig


def quoted(claims: pd.DataFrame) -> dict[str, str]:
    """The scorecard's numbers for the prose (and the introduction): counts per verdict over every paper."""
    table = counts(claims).set_index("paper")
    total = table.loc["all papers"]
    headline = claims[claims["headline"].astype(bool)]
    held = headline["verdict"].isin(["holds", "holds in direction"])
    out = {
        "n_claims": f"{int(total['claims'])}",
        "n_papers": f"{len(table) - 1}",
        "n_headline": f"{len(headline)}",
        "n_headline_held": f"{int(held.sum())} of {len(headline)}",
        "profiles_shown": ", ".join(f"{t} ({p})" for t, p in dict(zip(claims["chapter_title"],
                                                                       claims["profile"])).items()),
    }
    for verdict_name in VERDICTS:
        out["n_" + verdict_name.replace(" ", "_")] = f"{int(total[verdict_name])}"
    return out

