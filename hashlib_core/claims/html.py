"""Claims tables as the book shows them: a chapter's (on its page) and every chapter's (the scorecard, grouped by
paper), and the sentences they quote.

The table is HTML written here (``<table class="hb-table hb-claims">``, styled by ``_static/hashbook.css``) rather
than a pandas ``Styler``: its four columns wrap at fixed shares of the page's width, and the scorecard groups its rows
under a full-width row per paper. One row per claim:

* **claim**: the statement (headline claims of the abstract in bold), where the paper makes it, and a link to the
  section holding the evidence;
* **paper / ours**: the paper's number(s) as printed, and ours;
* **effect [95% interval]**: our effect, its interval and how it was obtained, or why the claim is not testable here;
* **verdict**: a coloured badge (:data:`hashlib_core.claims.scorecard.VERDICT_COLOURS`) and the paper's side.
"""
from __future__ import annotations

import math
from html import escape
from typing import Any, Mapping

import pandas as pd

__all__ = ["claims_table", "claims_quotes", "effect_number"]

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


def _row(row: Mapping[str, Any], link: str) -> str:
    testable = row["verdict"] != "not testable here"
    statement = escape(_text(row["statement"]))
    section = _text(row.get("section"))
    evidence = f' · <a href="{escape(link)}#{escape(section)}">evidence</a>' if section else ""
    claim = (f"<b>{statement}</b>" if bool(row["headline"]) else statement) + "<br>" + _small(
        escape(_text(row["where"])) + evidence)
    numbers = (f"{_small('paper')} {escape(_text(row['paper_value']) or '-')}<br>"
               f"{_small('ours')} {escape(_text(row['ours']) or '-')}")
    if not testable:
        effect = _small(escape(_text(row["reason"])))
    else:
        effect = effect_number(row["estimate"])
        if pd.notna(row["low"]) and row["low"] != row["high"]:
            effect += f" [{effect_number(row['low'])}, {effect_number(row['high'])}]"
        level = row.get("level")
        other = pd.notna(level) and abs(float(level) - 0.95) > 1e-9
        effect += "<br>" + _small(escape(_text(row["method"])) + (f" ({float(level):.1%} interval)" if other else ""))
    verdict = row["verdict"]
    badge = f'<span class="hb-verdict hb-v-{verdict.replace(" ", "-")}">{escape(verdict)}</span>'
    if testable:
        badge += "<br>" + _small(f"paper's side: {escape(_text(row['region']))}")
    return "<tr>" + "".join(f"<td>{cell}</td>" for cell in (claim, numbers, effect, badge)) + "</tr>"


def claims_table(claims: pd.DataFrame, caption: str | None = None, *, link: str = "", by_paper: bool = False):
    """The claims table (an ``IPython.display.HTML``): a chapter's, or with ``by_paper`` every chapter's grouped
    under a row per paper (the rows then need the scorecard's ``chapter`` and ``profile`` columns). ``link`` is the
    page the evidence links point to (empty: this page; the scorecard links each row to its chapter's page)."""
    from IPython.display import HTML

    from hashlib_core.claims import CLAIM_COLUMNS

    needed = set(CLAIM_COLUMNS) | ({"chapter", "profile"} if by_paper else set())
    missing = sorted(needed - set(claims.columns))
    if missing:
        raise KeyError(f"not a claims table: columns {missing} are missing")
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
                f'<tbody>{"".join(body)}</tbody></table>')


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
