"""The built book as a reader sees it: every page of ``_toc.yml`` opened in Debian's headless chromium.

Run with ``make browser-test`` after ``make book`` (the default ``pytest`` run deselects the ``browser`` marker).
The pages are served from ``_build/html`` by a local ``http.server`` on 127.0.0.1, and chromium resolves no other
host, so everything a page shows must come from the built book itself (MathJax and its fonts included). For each
page, separately reported:

* figures: every ``img`` is loaded, and at least as many as the chapter's ``{glue:figure}`` directives;
* math: every math element is typeset by MathJax (no raw ``\\(``, ``\\[``, ``$$`` left in the text, no MathJax
  error), MathJax's web fonts loaded, and no resource requested from another host;
* outputs: no stderr box, no traceback, no ``Warning:`` or ``[RANK`` log line in a cell output;
* paths: no machine path in the text, image sources or links;
* tables: a table wider than the page column sits in a horizontally scrolling container.

A full-page screenshot of each page goes to ``_build/screenshots/<page>.png``. Without ``_build/html`` (or without
chromium) the tests skip, unless ``HASHLIB_REQUIRE_BOOK=1`` (CI), where they fail.
"""
from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from hashlib_core.results import repo_root
from hashlib_core.runner import _toc_files

ROOT = repo_root()
HTML = ROOT / "_build" / "html"
SCREENSHOTS = ROOT / "_build" / "screenshots"
CHROMIUM = "/usr/bin/chromium"            # Debian's chromium and chromium-driver; nothing is downloaded
CHROMEDRIVER = "/usr/bin/chromedriver"
REQUIRE_ENV = "HASHLIB_REQUIRE_BOOK"
WIDTH = 1280
#: machine paths that must never reach a reader (assembled so that this file does not contain them)
MACHINE_PATHS = tuple("/" + part + "/" for part in ("work", "root", "home", "tmp"))
GLUE_FIGURE = re.compile(r"^[ \t]*(?:`{3,}|:{3,})\{glue:figure\}", re.M)


def _missing(message: str) -> None:
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{message} ({REQUIRE_ENV}=1 turns this skip into a failure)")
    pytest.skip(message)


# ------------------------------------------------------------------------------------ the pages
def _toc_pages() -> list[tuple[str, str]]:
    """``(page name, toc entry)`` for every page of ``_toc.yml``, e.g. ``("hashformers", "book/hashformers")``."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    entries = [str(Path(e).with_suffix("")) if e.endswith((".md", ".ipynb")) else e for e in _toc_files(toc)]
    return [(Path(e).name, e) for e in dict.fromkeys(entries)]


PAGES = _toc_pages()


def _source_markdown(entry: str) -> str:
    """The markdown a page was written from: the markdown cells of ``<entry>.ipynb``, or ``<entry>.md``."""
    notebook = ROOT / f"{entry}.ipynb"
    if notebook.exists():
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    markdown = ROOT / f"{entry}.md"
    return markdown.read_text(encoding="utf-8") if markdown.exists() else ""


def expected_figures(entry: str) -> int:
    """How many ``{glue:figure}`` directives the page's source has: the figures the page must show."""
    return len(GLUE_FIGURE.findall(_source_markdown(entry)))


def test_expected_figures_counts_directives_only() -> None:
    text = "```{glue:figure} a\n:name: f\n```\n\n:::{glue:figure} b\n:::\nprose mentions {glue:figure} inline\n"
    assert len(GLUE_FIGURE.findall(text)) == 2


# ------------------------------------------------------------------------------ server, browser
@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    """``_build/html`` served on 127.0.0.1 (an ephemeral port) for the whole module."""
    if not (HTML / "index.html").is_file():
        _missing(f"no built book at {HTML.relative_to(ROOT)}/index.html: run `make book` first")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(HTML)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Debian chromium through the system chromedriver; selenium-manager is never run."""
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not os.access(path, os.X_OK):
            _missing(f"{path} not found: `apt-get install -y --no-install-recommends {package}`")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.selenium_manager import SeleniumManager

    def no_manager(*args: Any, **kwargs: Any) -> dict:
        raise AssertionError("selenium-manager must not run: it would download a driver or a browser")

    profile = tempfile.mkdtemp(prefix="hashbook-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     "--no-first-run", "--force-device-scale-factor=1", f"--user-data-dir={profile}",
                     f"--window-size={WIDTH},900",
                     # no host but the local server resolves: the book must not need the network
                     "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"):
        options.add_argument(argument)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(SeleniumManager, "binary_paths", no_manager)
        driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(120)
    driver.set_script_timeout(120)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


# ------------------------------------------------------------------------------ page inspection
_WAIT_FOR_MATH_AND_IMAGES = """
const done = arguments[arguments.length - 1];
(async () => {
  const sleep = ms => new Promise(r => setTimeout(r, ms));
  const script = document.querySelector('script[src*="mathjax"]');
  // wait for MathJax only when its script exists on the server (a missing one fails the math check, fast)
  if (script && (await fetch(script.src, {method: 'HEAD'}).then(r => r.ok, () => false))) {
    const deadline = Date.now() + 60000;
    while (!(window.MathJax && MathJax.startup && MathJax.startup.promise) && Date.now() < deadline) await sleep(50);
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  }
  await Promise.all([...document.images].map(img => img.complete ? null :
      new Promise(r => { img.addEventListener('load', r); img.addEventListener('error', r); })));
  if (document.fonts) await document.fonts.ready;
  done(true);
})().catch(err => done(String(err)));
"""

_INSPECT = r"""
const main = document.querySelector('article.bd-article') || document.querySelector('main') || document.body;
const column = main.clientWidth;
const skip = 'pre, code, script, style, textarea, mjx-container, .highlight';
const prose = [];
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
  const parent = node.parentElement;
  if (parent && !parent.closest(skip) && parent.offsetParent !== null) prose.push(node.data);
}
const describe = el => (el.id ? '#' + el.id : '') + (el.className && typeof el.className === 'string' ?
    '.' + el.className.trim().split(/\s+/).join('.') : '');
const tables = [...main.querySelectorAll('table')].map((table, i) => {
  let scroller = null;
  for (let el = table.parentElement; el && el !== document.body; el = el.parentElement) {
    const overflow = getComputedStyle(el).overflowX;
    if ((overflow === 'auto' || overflow === 'scroll') && el.clientWidth <= column + 1) { scroller = el; break; }
  }
  return {index: i, cls: table.className, width: table.scrollWidth, scroller: scroller ? describe(scroller) : null,
          caption: (table.caption ? table.caption.innerText : '').slice(0, 60)};
});
return {
  column: column,
  text: document.body.innerText,
  prose: prose.join(' '),
  images: [...document.images].map(img => ({src: img.getAttribute('src') || '', width: img.naturalWidth,
                                            inMain: main.contains(img)})),
  links: [...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href')),
  math: document.querySelectorAll('.math').length,
  untypeset: [...document.querySelectorAll('.math')].filter(el => !el.querySelector('mjx-container'))
      .map(el => el.textContent.trim().slice(0, 80)),
  containers: document.querySelectorAll('mjx-container').length,
  mathErrors: [...document.querySelectorAll('mjx-merror')].map(el => (el.getAttribute('data-mjx-error') ||
      el.textContent).slice(0, 80)),
  mathFonts: document.fonts ? [...document.fonts].filter(f => /MJX/.test(f.family))
      .map(f => f.family + ':' + f.status) : [],
  resources: performance.getEntriesByType('resource').map(e => e.name),
  stderrBoxes: [...document.querySelectorAll('.stderr, .output_stderr')].map(el => el.innerText.slice(0, 120)),
  outputs: [...document.querySelectorAll('div.cell_output')].map(el => el.innerText),
  tables: tables,
  height: Math.max(document.body.scrollHeight, document.documentElement.scrollHeight),
};
"""


@functools.lru_cache(maxsize=None)
def _visit(driver: Any, base: str, name: str, entry: str) -> dict:
    """Open one page at full height, wait for MathJax, images and fonts, inspect it and save a screenshot."""
    page = HTML / f"{entry}.html"
    if not page.is_file():
        pytest.fail(f"_toc.yml lists {entry} but the built book has no {page.relative_to(ROOT)}")
    driver.set_window_size(WIDTH, 900)
    driver.get(base + f"{entry}.html")
    status = driver.execute_async_script(_WAIT_FOR_MATH_AND_IMAGES)
    assert status is True, f"{name}: waiting for MathJax and images failed: {status}"
    height = driver.execute_script(_INSPECT)["height"]
    driver.set_window_size(WIDTH, min(height + 100, 32000))     # every image in view: lazy ones load too
    status = driver.execute_async_script(_WAIT_FOR_MATH_AND_IMAGES)
    assert status is True, f"{name}: waiting for images after resizing failed: {status}"
    facts = driver.execute_script(_INSPECT)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(SCREENSHOTS / f"{name}.png"))
    facts["source_has_math"] = bool(re.search(r"\$[^$\n]+\$|\\\(|\\\[|\{math\}|\\begin\{", _source_markdown(entry)))
    return facts


@pytest.fixture
def visit(browser: Any, site: str):
    return lambda name, entry: _visit(browser, site, name, entry)


PAGE_IDS = [name for name, _ in PAGES]


# ------------------------------------------------------------------------------------- the checks
@pytest.mark.browser
@pytest.mark.parametrize(("name", "entry"), PAGES, ids=PAGE_IDS)
def test_figures_are_loaded(visit, name: str, entry: str) -> None:
    facts = visit(name, entry)
    broken = [image["src"] for image in facts["images"] if image["width"] == 0]
    assert not broken, f"{name}: images that did not load: {broken}"
    loaded = sum(image["width"] > 0 and image["inMain"] for image in facts["images"])
    expected = expected_figures(entry)
    assert loaded >= expected, (f"{name}: the source has {expected} {{glue:figure}} directives but the page shows "
                                f"{loaded} loaded images")


@pytest.mark.browser
@pytest.mark.parametrize(("name", "entry"), PAGES, ids=PAGE_IDS)
def test_math_is_typeset_offline(visit, name: str, entry: str) -> None:
    facts = visit(name, entry)
    raw = [m.group(0) for m in re.finditer(r"\\\(.{0,40}|\\\[.{0,40}|\$\$.{0,40}|\$[^$\n]{0,60}\\[A-Za-z]+[^$\n]{0,60}\$",
                                           facts["prose"])]
    assert not raw, f"{name}: raw TeX left in the page text: {raw[:5]}"
    assert not facts["untypeset"], f"{name}: math elements MathJax did not typeset: {facts['untypeset'][:5]}"
    assert not facts["mathErrors"], f"{name}: MathJax errors: {facts['mathErrors'][:5]}"
    if facts["source_has_math"] or facts["math"]:
        assert facts["containers"] > 0, f"{name}: the source has math but the page has no mjx-container"
        assert facts["containers"] >= facts["math"], (name, facts["containers"], facts["math"])
        assert any(f.endswith(":loaded") for f in facts["mathFonts"]), f"{name}: no MathJax font loaded"
        assert not [f for f in facts["mathFonts"] if f.endswith(":error")], f"{name}: {facts['mathFonts']}"
    foreign = [url for url in facts["resources"] if not url.startswith(("http://127.0.0.1:", "data:", "blob:"))]
    assert not foreign, f"{name}: resources requested from other hosts (the book must work offline): {foreign}"


@pytest.mark.browser
@pytest.mark.parametrize(("name", "entry"), PAGES, ids=PAGE_IDS)
def test_outputs_have_no_stderr_tracebacks_or_log_lines(visit, name: str, entry: str) -> None:
    facts = visit(name, entry)
    problems = [f"stderr box: {text!r}" for text in facts["stderrBoxes"]]
    if "Traceback (most recent call last)" in facts["text"]:
        problems.append("a traceback is shown")
    for output in facts["outputs"]:
        problems += [f"log line in an output: {line.strip()[:120]!r}" for line in output.splitlines()
                     if "Warning:" in line or "[RANK" in line]
    assert not problems, f"{name}: {len(problems)} problem(s):\n" + "\n".join(problems[:20])


@pytest.mark.browser
@pytest.mark.parametrize(("name", "entry"), PAGES, ids=PAGE_IDS)
def test_no_machine_paths(visit, name: str, entry: str) -> None:
    facts = visit(name, entry)
    found = [line.strip()[:160] for line in facts["text"].splitlines() if any(p in line for p in MACHINE_PATHS)]
    found += [url for url in [i["src"] for i in facts["images"]] + facts["links"]
              if url.startswith("file:") or any(p in url for p in MACHINE_PATHS)]
    assert not found, f"{name}: machine paths shown to the reader: {found[:10]}"


@pytest.mark.browser
@pytest.mark.parametrize(("name", "entry"), PAGES, ids=PAGE_IDS)
def test_wide_tables_scroll_inside_the_column(visit, name: str, entry: str) -> None:
    facts = visit(name, entry)
    cut = [t for t in facts["tables"] if t["width"] > facts["column"] + 1 and t["scroller"] is None]
    assert not cut, (f"{name}: tables wider than the {facts['column']}px column without a scrolling container: "
                     f"{cut[:5]}")


# ------------------------------------------------------------------------------------- claims tables
def _claims_pages() -> list[tuple[str, str]]:
    from hashlib_core.papers import CHAPTERS

    return [(name, entry) for name, entry in PAGES if name in CHAPTERS or name == "scorecard"]


@pytest.mark.browser
@pytest.mark.parametrize(("name", "entry"), _claims_pages(), ids=[n for n, _ in _claims_pages()])
def test_claims_tables_open_the_page_and_link_to_their_evidence(name: str, entry: str) -> None:
    """Every chapter page (and the scorecard) has a claims table before its first section; every claim has one
    verdict; every 'evidence' link points to an element that exists on its page."""
    from bs4 import BeautifulSoup

    page = HTML / f"{entry}.html"
    if not page.is_file():
        _missing(f"no built page {page.relative_to(ROOT)}: run `make book` first")
    soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    tables = soup.select("table.hb-claims")
    assert tables, f"{name}: no claims table"
    first_section = soup.select_one("article h2")
    if name != "scorecard":
        assert first_section is not None and first_section.find_previous("table", class_="hb-claims") is not None, \
            f"{name}: the claims table must come before the page's first section"
    ids: dict[Path, set[str]] = {}
    for table in tables:
        rows = [r for r in table.select("tbody tr") if "hb-group" not in (r.get("class") or [])]   # not paper rows
        assert rows, f"{name}: an empty claims table"
        for row in rows:
            badges = row.select("span.hb-verdict")
            assert len(badges) == 1, f"{name}: a claim without exactly one verdict: {row.get_text(' ')[:120]}"
            for link in row.select("a[href]"):
                target, _, fragment = link["href"].partition("#")
                path = (page.parent / target).resolve() if target else page.resolve()
                assert path.is_file(), f"{name}: evidence link to a missing page {link['href']}"
                if path not in ids:
                    ids[path] = {e["id"] for e in BeautifulSoup(path.read_text(encoding="utf-8"),
                                                                "html.parser").select("[id]")}
                assert fragment in ids[path], f"{name}: evidence link {link['href']} has no target on its page"


@pytest.mark.browser
def test_the_scorecard_opens_with_the_headline_empirical_claims(browser: Any, site: str) -> None:
    """The scorecard's first table lists the abstracts' claims about measured effects, one row each with the scale,
    our interval and its half-width, one verdict badge and its flags, the flags' legend under it; in the reader's
    browser an inconclusive badge is neither the colour of holds nor of does not hold."""
    from bs4 import BeautifulSoup

    from hashlib_core.claims import FLAGS, VERDICTS

    entry = next(e for n, e in PAGES if n == "scorecard")
    page = HTML / f"{entry}.html"
    if not page.is_file():
        _missing(f"no built page {page.relative_to(ROOT)}: run `make book` first")
    soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    headline = soup.select_one("table.hb-headline")
    assert headline is not None, "the scorecard has no headline table"
    first_claims = soup.select_one("table.hb-claims")
    assert first_claims is headline, "the headline table must be the scorecard's first claims table"
    heads = [th.get_text(strip=True) for th in headline.select("thead th")]
    # the scorecard's claims carry cost estimates: the last column says what settling each would cost
    assert heads == ["paper", "claim", "scale", "ours [95% interval]", "the paper's", "verdict",
                     "to settle at paper scale"]
    rows = headline.select("tbody tr")
    assert rows, "an empty headline table"
    for row in rows:
        badges = row.select("span.hb-verdict")
        assert len(badges) == 1 and badges[0].get_text() in VERDICTS, row.get_text(" ")[:120]
        cells = row.select("td")
        assert cells[2].get_text(strip=True), "a headline row without its scale"
        assert "H100-hours" in cells[-1].get_text(" ") or cells[-1].get_text(strip=True) == "-", \
            row.get_text(" ")[:160]
    marks = {m.get_text() for m in headline.select("span.hb-flag")}
    legend = headline.find_next_sibling("div", class_="hb-legend")
    if marks:
        assert legend is not None, "flags shown without their legend"
        assert marks <= {FLAGS[c][0] for c in FLAGS}
    browser.get(site + f"{entry}.html")
    colours = browser.execute_script(
        "const c = {}; for (const v of ['holds', 'does-not-hold', 'inconclusive']) {"
        "  const s = document.createElement('span'); s.className = 'hb-verdict hb-v-' + v;"
        "  document.body.appendChild(s); c[v] = getComputedStyle(s).backgroundColor; s.remove(); } return c;")
    assert colours["inconclusive"] not in (colours["holds"], colours["does-not-hold"]), colours
