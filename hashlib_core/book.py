"""What a chapter page uses to show results: one table style, figures as captioned images, quoted numbers.

* :func:`table` -- a pandas ``Styler`` with the book's look (``class="hb-table"``; numbers right-aligned with
  thousands separators, ``hb-num``; readable headers; the book's CSS pads cells and scrolls wide tables);
* :func:`comparison` -- the same for a :func:`hashlib_core.results.paper_vs_ours` table, agreement in green and
  disagreement in orange;
* :func:`figure` -- a matplotlib figure as a PNG glued under a name, placed in the page by a MyST
  ``{glue:figure}`` directive with a caption and a label the prose can reference;
* :func:`quote` -- computed numbers glued under names, so the prose reads them (``{glue:text}`name```) and never
  types them;
* :func:`provenance` -- the line that says where the numbers on the page come from;
* :func:`claims_table` -- a chapter's claims (or the scorecard's) with their verdicts, and :func:`claims_quotes`,
  the sentences they quote (both from :mod:`hashlib_core.claims.html`); :func:`show_claims` displays them where a
  chapter page opens.
"""
from __future__ import annotations

import io
import math
import numbers
from typing import Any, Callable, Mapping

import pandas as pd

from hashlib_core.claims.html import claims_quotes, claims_table

__all__ = ["table", "comparison", "agreement_table", "profiles_table", "figure", "loss_curves", "quote", "provenance",
           "claims_table", "claims_quotes", "show_claims", "fmt_count", "fmt_num"]

Formatter = str | Callable[[Any], str]


def fmt_count(value: Any) -> str:
    """An integer count with thousands separators (``-`` for missing)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{int(round(float(value))):,}"


def fmt_num(value: Any, decimals: int = 2) -> str:
    """A number with ``decimals`` decimals and thousands separators (integers without decimals)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, bool) or not isinstance(value, numbers.Number):
        return str(value)
    if isinstance(value, numbers.Integral) or (float(value).is_integer() and abs(value) >= 1000):
        return f"{int(value):,}"
    return f"{float(value):,.{decimals}f}"


def _is_numeric(series: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


def table(df: pd.DataFrame, caption: str | None = None, *, formats: Mapping[str, Formatter] | None = None,
          decimals: int = 2, columns: Mapping[str, str] | None = None, wrap: tuple[str, ...] = ()):
    """``df`` as the book shows tables.

    ``formats`` maps a column to a format string (``"{:.1f}"``) or a function; other numeric columns get
    :func:`fmt_num` with ``decimals``. ``columns`` renames headers for the reader (``{"test_accuracy_%":
    "accuracy (%)"}``). ``wrap`` lists text columns that may wrap (long notes).
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"table() expects a pandas DataFrame, got {type(df).__name__}")
    shown = df.reset_index(drop=True)
    if columns:
        unknown = sorted(set(columns) - set(shown.columns))
        if unknown:
            raise KeyError(f"cannot rename missing column(s) {unknown}; columns: {list(shown.columns)}")
        shown = shown.rename(columns=dict(columns))
        formats = {columns.get(k, k): v for k, v in (formats or {}).items()}
        wrap = tuple(columns.get(c, c) for c in wrap)
    formats = dict(formats or {})
    numeric = [c for c in shown.columns if _is_numeric(shown[c])]
    for col in numeric:
        formats.setdefault(col, lambda v, d=decimals: fmt_num(v, d))
    styler = shown.style.format(formats, na_rep="-").hide(axis="index")
    classes = pd.DataFrame("", index=shown.index, columns=shown.columns)
    for col in numeric:
        classes[col] = "hb-num"
    for col in wrap:
        classes[col] = "hb-wrap"
    styler = styler.set_td_classes(classes).set_table_attributes('class="hb-table"')
    positions = [i for i, c in enumerate(shown.columns) if c in numeric]
    if positions:   # headers of numeric columns are right-aligned like their numbers
        styler = styler.set_table_styles([{"selector": f"th.col{i}", "props": "text-align: right;"}
                                          for i in positions], overwrite=False)
    return styler.set_caption(caption) if caption else styler


def comparison(df: pd.DataFrame, caption: str | None = None, *, columns: Mapping[str, str] | None = None):
    """A :func:`~hashlib_core.results.paper_vs_ours` table: agreement in green, disagreement in orange."""
    def colour(v: Any) -> str:
        if v is True:
            return "background-color: #d9f2d9"
        if v is False:
            return "background-color: #ffe0b3"
        return ""

    shown = df.drop(columns=["ours_exact"], errors="ignore")
    cap = caption or ""
    if df.attrs.get("source"):
        cap = f"{cap} (paper: {df.attrs['source']})".strip()
    renamed = {"gap_rel_%": "gap (%)", **(columns or {})}
    styler = table(shown, cap or None, columns={k: v for k, v in renamed.items() if k in shown.columns},
                   formats={"gap_rel_%": lambda v: "-" if v is None or pd.isna(v) else f"{v:+.2f}"})
    return styler.map(colour, subset=["agrees"]) if "agrees" in shown.columns else styler


def figure(name: str, fig: Any, *, dpi: int = 150) -> None:
    """Glue ``fig`` (a matplotlib figure) as a PNG under ``name`` and close it.

    Place it in the page with a captioned MyST figure in a Markdown cell::

        ```{glue:figure} name
        :name: fig-name

        Caption, referenced from the prose as {numref}`fig-name`.
        ```
    """
    from IPython.display import Image
    from myst_nb import glue
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    glue(name, Image(data=buffer.getvalue(), format="png"), display=False)


def loss_curves(curves: pd.DataFrame, ylabel: str, xlabel: str = "training step", by: str = "name"):
    """A line per ``by`` group of ``curves`` (columns ``step`` and ``loss``): the training curves of a chapter."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    for name, g in curves.groupby(by, sort=False):
        ax.plot(g["step"], g["loss"], label=name)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def quote(values: Mapping[str, Any]) -> None:
    """Glue every computed value under its name (as text), for ``{glue:text}`name``` in the prose."""
    from myst_nb import glue

    for name, value in values.items():
        glue(name, value if isinstance(value, str) else str(value), display=False)


def provenance(shown: Any) -> None:
    """Display where the page's numbers come from (a :class:`hashlib_core.chapter.Shown`), and any note on
    committed results that were skipped."""
    from IPython.display import Markdown, display

    lines = [shown.banner, *[f"*Note:* {n}" for n in shown.notes]]
    display(Markdown("\n\n".join(lines)))


def profiles_table(profiles: Any, settings: list[str] | None = None) -> pd.DataFrame:
    """The settings of a chapter's four profiles side by side: one row per setting, one column per profile (list
    settings comma-joined; 0, or a list's 0, shown as "all" for the profile's ``ZERO_MEANS_ALL`` settings, and 0
    or an empty list as its ``ZERO_MEANS`` text for those). ``settings`` picks and orders the rows (default: every
    setting but the run ones)."""
    from hashlib_core.profiles import PROFILE_NAMES, RUN_SETTINGS

    names = settings or [k for k in profiles.smoke.to_dict() if k not in RUN_SETTINGS]
    known = set(profiles.smoke.to_dict())
    unknown = sorted(set(names) - known)
    if unknown:
        raise KeyError(f"no profile setting(s) {unknown}; settings: {sorted(known)}")

    def show(value: Any, name: str, profile: Any) -> str:
        if value == 0 and name in getattr(profile, "ZERO_MEANS_ALL", ()):
            return "all"
        if (value == 0 or value == () or value == "") and name in getattr(profile, "ZERO_MEANS", {}):
            return profile.ZERO_MEANS[name]
        if isinstance(value, (tuple, list)):
            every = name in getattr(profile, "ZERO_MEANS_ALL", ())       # a list's 0s each mean "all"
            return ", ".join("all" if every and v == 0 else str(v) for v in value) if value else "(all)"
        if isinstance(value, float):
            return f"{value:g}"
        if isinstance(value, int) and not isinstance(value, bool):
            return f"{value:,}"
        return str(value)

    rows = [{"setting": name, **{p: show(getattr(profiles, p).setting(name), name, getattr(profiles, p))
                                 for p in PROFILE_NAMES}}
            for name in ["budget_minutes", *[n for n in names if n != "budget_minutes"]]]
    return pd.DataFrame(rows)


def agreement_table(text: pd.DataFrame, agrees: pd.DataFrame, caption: str | None = None):
    """A matrix of ``"printed → ours (gap)"`` cells, green where ours rounds to the print and orange elsewhere."""
    if text.shape != agrees.shape:
        raise ValueError(f"text {text.shape} and agrees {agrees.shape} must have the same shape")
    colours = agrees.astype(object).map(lambda v: "background-color: #d9f2d9" if v is True
                                        else ("background-color: #ffe0b3" if v is False else ""))
    styler = text.style.apply(lambda _: colours.values, axis=None).set_table_attributes('class="hb-table"')
    return styler.set_caption(caption) if caption else styler


def show_claims(shown: Any) -> None:
    """Display a chapter's claims table (from its ``claims`` result), each headline claim with the H100-hours it
    needs at the paper's scale (:mod:`hashlib_core.claims.cost`: at an assumed share of the H100's peak, and at the
    rate the committed runs measured, an upper bound), and, folded under it, the sentences quoted."""
    from IPython.display import display

    from hashlib_core.claims import cost

    slug = shown.store.chapter
    claims = shown.table("claims")
    if cost.chapter_cost(slug) is not None:
        claims = cost.with_costs(claims, cost.estimates([slug]), slug)
    display(claims_table(claims, f"The paper's claims, tested on the {shown.profile.name} profile's results"),
            claims_quotes(claims))
