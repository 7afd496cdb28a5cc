"""Claims tables as the book shows them: a chapter's (on its page), every chapter's (the scorecard, grouped by
paper), the scorecard's headline table, and the legend of the flags.

The tables are HTML written here (``<table class="hb-table hb-claims">``, styled by ``_static/hashbook.css``) rather
than a pandas ``Styler``: their columns wrap at fixed shares of the page's width, and the scorecard groups its rows
under a full-width row per paper. One row per claim:

* **claim**: the statement (headline claims of the abstract in bold), where the paper makes it, and a link to the
  section holding the evidence;
* **paper / ours**: the paper's number(s) as printed, and ours;
* **effect [95% interval]**: our effect, its interval and how it was obtained, its power (the half-width beside the
  paper's effect), or why the claim has no reading here;
* **verdict**: a coloured badge (:data:`hashlib_core.claims.scorecard.VERDICT_COLOURS`; *inconclusive* in a neutral
  colour with the side it leans to as small text), the paper's side, and the flags (:data:`FLAGS`), whose legend
  follows the table.
"""
from __future__ import annotations

import math
from html import escape
from typing import Any, Mapping

import pandas as pd

from hashlib_core.claims.core import FLAGS

__all__ = ["claims_table", "claims_quotes", "effect_number", "verdict_badge", "flag_marks", "flags_legend",
           "headline_table"]

_COLUMNS = ("claim", "paper / ours", "effect [95% interval]", "verdict")


def effect_number(value: Any) -> str:
    """An effect or interval end, to about three significant digits (no exponent)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    v = float(value)
    for limit, decimals in ((100, 0), (10, 1), (1, 2)):
        if abs(v) >= limit:
            return f"{v:,.{decimals}f}"
    return "0" if v == 0 else f"{v:.3f}"


def _text(value: Any) -> str:
    """A cell as text: "" for a missing value (a CSV's empty cell reads back as NaN)."""
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def _small(text: str) -> str:
    return f'<span class="hb-src">{text}</span>'


def _flag_codes(row: Mapping[str, Any]) -> list[str]:
    return [f for f in _text(row.get("flags")).split(",") if f]


def verdict_badge(row: Mapping[str, Any]) -> str:
    """The verdict as a coloured badge, and for an inconclusive one the side it leans to, in small neutral text."""
    verdict = str(row["verdict"])
    badge = f'<span class="hb-verdict hb-v-{verdict.replace(" ", "-")}">{escape(verdict)}</span>'
    lean = _text(row.get("lean"))
    return badge + (f'<br><span class="hb-lean">{escape(lean)}</span>' if lean else "")


def flag_marks(row: Mapping[str, Any]) -> str:
    """The row's flags as small marks (their legend sentence on hover)."""
    codes = _flag_codes(row)
    return " ".join(f'<span class="hb-flag" title="{escape(FLAGS[c][1])}">{escape(FLAGS[c][0])}</span>'
                    for c in codes if c in FLAGS)


def flags_legend(claims: pd.DataFrame):
    """The legend of the flags that ``claims`` carries (an ``IPython.display.HTML``; empty when none does)."""
    from IPython.display import HTML

    seen = list(dict.fromkeys(c for _, r in claims.iterrows() for c in _flag_codes(r)))
    if not seen:
        return HTML("")
    items = "".join(f'<li><span class="hb-flag">{escape(FLAGS[c][0])}</span> {escape(FLAGS[c][1])}</li>'
                    for c in FLAGS if c in seen)
    return HTML(f'<div class="hb-legend"><b>Flags</b><ul>{items}</ul></div>')


def _half_width(row: Mapping[str, Any]) -> str:
    """``± h against the paper's e``: the interval's half-width h beside the paper's effect e (empty for an exact
    claim)."""
    if pd.isna(row.get("half_width")):
        return ""
    against = f" against the paper's {effect_number(row['resolve'])}" if pd.notna(row.get("resolve")) else ""
    return f"± {effect_number(row['half_width'])}{against}"


def _effect_cell(row: Mapping[str, Any]) -> str:
    """The effect and its interval, the half-width beside the paper's effect, and (folded) how the interval was
    obtained and the test's power in words; or why the claim has no reading here."""
    verdict = row["verdict"]
    if verdict == "not testable here" or (verdict == "no signal" and pd.isna(row.get("estimate"))):
        return _small(escape(_text(row["reason"])))
    effect = effect_number(row["estimate"])
    if pd.notna(row["low"]) and row["low"] != row["high"]:
        effect += f" [{effect_number(row['low'])}, {effect_number(row['high'])}]"
    level = row.get("level")
    other = pd.notna(level) and abs(float(level) - 0.95) > 1e-9
    if _half_width(row):
        effect += "<br>" + _small(escape(_half_width(row)))
    how = escape(_text(row["method"])) + (f" ({float(level):.1%} interval)" if other else "")
    if _text(row.get("power")):
        how += "<br><i>power:</i> " + escape(_text(row["power"]))
    if verdict == "no signal":
        effect += "<br>" + _small("<i>no signal:</i> " + escape(_text(row["reason"])))
    return effect + f'<details class="hb-how"><summary>how</summary>{_small(how)}</details>'


def _row(row: Mapping[str, Any], link: str) -> str:
    testable = row["verdict"] != "not testable here"
    statement = escape(_text(row["statement"]))
    section = _text(row.get("section"))
    evidence = f' · <a href="{escape(link)}#{escape(section)}">evidence</a>' if section else ""
    claim = (f"<b>{statement}</b>" if bool(row["headline"]) else statement) + "<br>" + _small(
        escape(_text(row["where"])) + evidence)
    numbers = (f"{_small('paper')} {escape(_text(row['paper_value']) or '-')}<br>"
               f"{_small('ours')} {escape(_text(row['ours']) or '-')}")
    badge = verdict_badge(row)
    if testable:
        badge += "<br>" + _small(f"paper's side: {escape(_text(row['region']))}")
    marks = flag_marks(row)
    if marks:
        badge += f"<br>{marks}"
    settle = _settle(row)
    if settle:
        claim += "<br>" + _small(escape(settle))
    return "<tr>" + "".join(f"<td>{cell}</td>" for cell in (claim, numbers, _effect_cell(row), badge)) + "</tr>"


def _settle(row: Mapping[str, Any]) -> str:
    """The claim's cost line (:func:`hashlib_core.claims.cost.settle_text`), where the table carries estimates."""
    from hashlib_core.claims.cost import settle_text

    return settle_text(row) if "cost_paper_hours_mfu" in row else ""


def _check_columns(claims: pd.DataFrame, extra: set[str] = frozenset()) -> None:
    from hashlib_core.claims import CLAIM_COLUMNS

    missing = sorted((set(CLAIM_COLUMNS) | set(extra)) - set(claims.columns))
    if missing:
        raise KeyError(f"not a claims table: columns {missing} are missing (recompute it with the chapter's "
                       f"`--only claims`)")


def claims_table(claims: pd.DataFrame, caption: str | None = None, *, link: str = "", by_paper: bool = False):
    """The claims table (an ``IPython.display.HTML``), followed by the legend of the flags it shows: a chapter's, or
    with ``by_paper`` every chapter's grouped under a row per paper (the rows then need the scorecard's ``chapter``
    and ``profile`` columns). ``link`` is the page the evidence links point to (empty: this page; the scorecard links
    each row to its chapter's page)."""
    from IPython.display import HTML

    _check_columns(claims, {"chapter", "profile"} if by_paper else set())
    head = "".join(f'<th class="hb-c{i}">{escape(c)}</th>' for i, c in enumerate(_COLUMNS))
    body = []
    groups = claims.groupby("paper", sort=False) if by_paper else [(None, claims)]
    for paper, rows in groups:
        if paper is not None:
            note = _small(f"{len(rows)} claims, {escape(str(rows.iloc[0]['profile']))} results")
            body.append(f'<tr class="hb-group"><th colspan="{len(_COLUMNS)}">{escape(str(paper))} {note}</th></tr>')
        page = link or (f"{rows.iloc[0]['chapter']}.html" if paper is not None else "")
        body += [_row(row, page) for _, row in rows.iterrows()]
    cap = f"<caption>{escape(caption)}</caption>" if caption else ""
    return HTML(f'<table class="hb-table hb-claims">{cap}<thead><tr>{head}</tr></thead>'
                f'<tbody>{"".join(body)}</tbody></table>{flags_legend(claims).data}')


_HEADLINE_COLUMNS = ("paper", "claim", "scale", "ours [95% interval]", "the paper's", "verdict")
_COST_COLUMN = "to settle at paper scale"


def headline_table(claims: pd.DataFrame, caption: str | None = None):
    """The scorecard's first table: one row per headline claim about a measured effect (``evidence`` empirical),
    with the paper, the claim, the scale it was tested at in a few words, our effect with its interval and
    half-width, the paper's number, and the verdict with its flags; where ``claims`` carries cost estimates
    (:func:`hashlib_core.claims.cost.with_costs`), the H100-hours each claim needs at the paper's scale: at the
    assumed share of the H100's peak, and below it at the rate our small runs measured (an upper bound)."""
    from IPython.display import HTML

    from hashlib_core.claims.cost import ASSUMED_MFU, about

    _check_columns(claims, {"chapter", "profile"})
    rows = claims[claims["headline"].astype(bool) & (claims["evidence"] == "empirical")]
    costed = "cost_paper_hours_mfu" in rows
    columns = (*_HEADLINE_COLUMNS, _COST_COLUMN) if costed else _HEADLINE_COLUMNS
    head = "".join(f'<th class="hb-h{i}">{escape(c)}</th>' for i, c in enumerate(columns))
    body = []
    for _, r in rows.iterrows():
        link = f"{r['chapter']}.html#{escape(_text(r['section']))}" if _text(r.get("section")) else \
            f"{r['chapter']}.html"
        claim = f'{escape(_text(r["statement"]))} <a href="{escape(link)}">evidence</a>'
        scale = escape(_text(r.get("brief")) or str(r["profile"])) + "<br>" + _small(f"{escape(str(r['profile']))} "
                                                                                     "profile")
        if pd.isna(r["estimate"]):
            ours = _small(escape(_text(r["reason"])))
        else:
            ours = effect_number(r["estimate"])
            if pd.notna(r["low"]) and r["low"] != r["high"]:
                ours += f" [{effect_number(r['low'])}, {effect_number(r['high'])}]"
            if _half_width(r):
                ours += "<br>" + _small(escape(_half_width(r)))
        paper = escape(_text(r["paper_value"]) or "-") + "<br>" + _small(f"side: {escape(_text(r['region']))}")
        verdict = verdict_badge(r)
        marks = flag_marks(r)
        if marks:
            verdict += f"<br>{marks}"
        cells = (escape(str(r["paper"])), claim, scale, ours, paper, verdict)
        if costed:
            hours = r["cost_paper_hours_mfu"]
            if pd.isna(hours):
                cost = "-"
            else:
                cost = (f"{about(float(hours))} H100-hours at {ASSUMED_MFU:.0%} of peak<br>"
                        + _small(f"{about(float(r['cost_paper_hours_measured']))} at the rate our small runs "
                                 "measured (an upper bound)"))
                if pd.notna(r.get("cost_smallest_hours_mfu")):
                    cost += "<br>" + _small(f"smallest reported scale: {about(float(r['cost_smallest_hours_mfu']))} "
                                            f"({about(float(r['cost_smallest_hours_measured']))})")
            cells += (cost,)
        body.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    cap = f"<caption>{escape(caption)}</caption>" if caption else ""
    return HTML(f'<table class="hb-table hb-claims hb-headline">{cap}<thead><tr>{head}</tr></thead>'
                f'<tbody>{"".join(body)}</tbody></table>{flags_legend(rows).data}')


def claims_quotes(claims: pd.DataFrame, summary: str = "The sentences quoted, and how each claim is tested"):
    """A folded list (HTML ``<details>``) of every claim's source and quoted sentence, its kind of statement and the
    scale it was tested at: the table stays short, the quotes are one click away."""
    from IPython.display import HTML

    from hashlib_core.claims import KINDS

    items = [f"<li><b>{escape(_text(r['id']))}</b> ({escape(_text(r['where']))}): <q>{escape(_text(r['quote']))}</q>"
             f"<br>{_small(escape(KINDS[str(r['kind'])]) + '; tested at: ' + escape(_text(r['scale'])))}</li>"
             for _, r in claims.iterrows()]
    return HTML(f'<details class="hb-quotes"><summary>{escape(summary)}</summary><ol>{"".join(items)}</ol>'
                f"</details>")
