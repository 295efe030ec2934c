"""The course website (`make site`), checked in a real browser: Debian's Chromium, driven by Playwright.

A session fixture builds site/ (docs/_site/build.py; unchanged pages are not rendered again), serves it on
127.0.0.1 at a free port, and visits every page once, recording console errors, failed or off-host requests,
links and images; the tests below read that record and look at a few pages closely. Screenshots go into
build/site-test/. Without Chromium or the site's packages the tests skip, saying what to install; in CI (CI=true)
they fail instead, so CI never passes without running them.
"""

import functools
import http.server
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from course_layout import ROOT

SITE = ROOT / "site"
SHOTS = ROOT / "build" / "site-test"
CHAPTERS = sorted(p.parent for p in ROOT.glob("chapters/*/README.md"))
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
DRAWN = "pre.mermaid[data-processed] > svg"  # Mermaid's final drawing (it first draws into a scratch element)
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def need(ok, reason: str) -> None:
    """Skip on a student's machine when something is missing; fail in CI, where it must be there."""
    if not ok:
        if IN_CI:
            pytest.fail(f"{reason} (CI installs it: .ci/run)")
        pytest.skip(reason)


def chromium() -> str | None:
    for candidate in (os.environ.get("COURSE_CHROMIUM"), "chromium", "chromium-browser"):
        path = candidate and shutil.which(candidate)
        if path:
            return path
    return None


@pytest.fixture(scope="session")
def site() -> Path:
    missing = [m for m in ("sphinx", "myst_nb", "furo", "playwright") if importlib.util.find_spec(m) is None]
    need(not missing, f"the site's packages are not installed ({', '.join(missing)}): run `make site` once")
    start = time.monotonic()
    build = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "_site" / "build.py")], cwd=ROOT, capture_output=True, text=True
    )
    assert build.returncode == 0, f"make site failed:\n{build.stdout}\n{build.stderr}"
    print(f"site built in {time.monotonic() - start:.1f} s")
    return SITE


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def base_url(site):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture(scope="session")
def browser():
    path = chromium()
    need(path, "Chromium is not installed (Debian: apt-get install chromium)")
    need(importlib.util.find_spec("playwright"), "Playwright is not installed: run `make site` once")
    from playwright.sync_api import sync_playwright

    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path)
        try:
            yield browser
        finally:
            browser.close()


def open_page(browser, width=1280, height=900):
    """A fresh page that records what a reader would not see: console errors, failures, requests off this host."""
    page = browser.new_page(viewport={"width": width, "height": height})
    page.problems = []
    page.on("console", lambda m: m.type == "error" and page.problems.append(f"console: {m.text}"))
    page.on("pageerror", lambda e: page.problems.append(f"script error: {e}"))
    page.on("requestfailed", lambda r: page.problems.append(f"request failed: {r.url} ({r.failure})"))
    page.on("response", lambda r: r.status >= 400 and page.problems.append(f"HTTP {r.status}: {r.url}"))
    page.on(
        "request",
        lambda r: (
            urlsplit(r.url).hostname not in {"127.0.0.1", None}
            and not r.url.startswith("data:")
            and page.problems.append(f"loads from another host: {r.url}")
        ),
    )
    return page


@pytest.fixture(scope="session")
def crawl(browser, base_url):
    """Every page of the site, visited once: {path: {"problems", "links", "images", "title"}}."""
    pages = sorted(str(p.relative_to(SITE)) for p in SITE.rglob("*.html"))
    page = open_page(browser)
    record = {}
    for path in pages:
        page.problems.clear()
        page.goto(base_url + path, wait_until="load")
        # MathJax fetches its fonts after the load event; leaving the page before they arrive aborts those requests,
        # and the abort would show up as a failure of this page. What a reader sees is the page once its network is
        # quiet.
        page.wait_for_load_state("networkidle")
        if page.locator("pre.mermaid").count():
            page.wait_for_selector(DRAWN, timeout=15_000)
        record[path] = {
            "problems": list(page.problems),
            "title": page.title(),
            "links": page.eval_on_selector_all("a[href]", "els => els.map(a => a.href)"),
            "images": page.eval_on_selector_all(
                "img", "els => els.map(i => [i.currentSrc || i.src, i.complete && i.naturalWidth > 0])"
            ),
        }
    page.close()
    return record


def chapter_page(chapter: Path) -> str:
    return f"chapters/{chapter.name}/index.html"


# ---- the whole site ------------------------------------------------------------------------------------------------


def test_every_source_page_is_built(crawl):
    expected = {"index.html", "search.html", "exercises.html", "notebooks/index.html", "docs/index.html"}
    expected |= {chapter_page(c) for c in CHAPTERS}
    expected |= {f"notebooks/{n.stem}.html" for n in NOTEBOOKS}
    expected |= {f"docs/{d.stem}.html" for d in sorted((ROOT / "docs").glob("*.md"))}
    expected |= {f"{d.relative_to(ROOT)}/index.html" for c in CHAPTERS for d in (c / "results").glob("*") if d.is_dir()}
    assert sorted(expected - set(crawl)) == []


def test_every_page_loads_without_errors(crawl):
    problems = {path: seen["problems"] for path, seen in crawl.items() if seen["problems"]}
    assert problems == {}


def test_every_image_loads(crawl):
    broken = {path: [src for src, ok in seen["images"] if not ok] for path, seen in crawl.items()}
    assert {path: srcs for path, srcs in broken.items() if srcs} == {}


@functools.cache
def fetch(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            body = response.read()
            kind = response.headers.get_content_type()
            return response.status, body.decode(errors="replace") if kind == "text/html" else ""
    except urllib.error.HTTPError as error:
        return error.code, ""


def test_every_internal_link_resolves(crawl, base_url):
    """Every link to this site answers 200, and a #fragment names an element of the page it points at."""
    broken = []
    for path, seen in crawl.items():
        for link in seen["links"]:
            if not link.startswith(base_url):
                continue
            target, _, fragment = link.partition("#")
            status, html = fetch(target)
            if status != 200:
                broken.append(f"{path} -> {link}: HTTP {status}")
            elif fragment and html and not re.search(rf"""\bid=["']{re.escape(unquote(fragment))}["']""", html):
                broken.append(f"{path} -> {link}: no element with that id")
    assert broken == []


def test_no_page_loads_anything_from_another_host():
    remote = re.compile(r"<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)=\"(?:https?:)?//", re.I)
    offenders = [str(p.relative_to(SITE)) for p in SITE.rglob("*.html") if remote.search(p.read_text())]
    assert offenders == []


# ---- navigation, search --------------------------------------------------------------------------------------------


def test_navigation_lists_the_chapters_in_order(browser, base_url):
    page = open_page(browser)
    page.goto(base_url + "index.html")
    sidebar = page.eval_on_selector_all(".sidebar-tree a.reference", "els => els.map(a => a.href)")
    page.close()
    chapters = [base_url + chapter_page(c) for c in CHAPTERS]
    assert [link for link in sidebar if link in chapters] == chapters


def test_search_for_nvrtc_finds_chapter_05(browser, base_url):
    page = open_page(browser)
    page.goto(base_url + "search.html?q=NVRTC")
    page.wait_for_selector("ul.search li a", timeout=15_000)
    results = page.eval_on_selector_all("ul.search li a", "els => els.map(a => a.href.split('#')[0])")
    page.screenshot(path=SHOTS / "search-nvrtc.png")
    page.close()
    nvrtc = [chapter_page(c) for c in CHAPTERS if "nvrtc" in c.name]
    assert nvrtc, "no chapter about NVRTC in chapters/"
    assert base_url + nvrtc[0] in results


# ---- pages looked at closely ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.name for c in CHAPTERS])
def test_chapter_page_shows_its_code_and_plots(browser, base_url, chapter):
    readme = (chapter / "README.md").read_text()
    languages = re.findall(r"^```[ \t]*([\w+-]*)[ \t]*\n.*?^```[ \t]*$", readme, re.M | re.S)
    fenced = sum(1 for lang in languages if lang != "mermaid")  # a mermaid block is drawn, not shown as code
    diagrams = languages.count("mermaid")
    pictures = re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", readme)
    page = open_page(browser)
    page.goto(base_url + chapter_page(chapter))
    page.wait_for_selector("button.copybtn", state="attached", timeout=10_000)
    code_blocks = page.locator("article div.highlight pre").count()
    copy_buttons = page.locator("article button.copybtn").count()
    shown = page.eval_on_selector_all("article img", "els => els.filter(i => i.naturalWidth > 0).length")
    if diagrams:
        page.wait_for_selector(DRAWN, timeout=15_000)
    drawn = page.locator(DRAWN).count()
    title = page.inner_text("article h1")
    if chapter == CHAPTERS[-1] or pictures:
        page.screenshot(path=SHOTS / f"chapter-{chapter.name}.png")
        if pictures:
            page.locator("article img").first.scroll_into_view_if_needed()
            page.screenshot(path=SHOTS / f"chapter-{chapter.name}-plot.png")
    assert not page.problems
    page.close()
    assert title.strip() == readme.splitlines()[0].lstrip("# ").strip()
    assert code_blocks >= fenced > 0, f"{fenced} code blocks in the README, {code_blocks} on the page"
    assert copy_buttons >= code_blocks
    assert shown >= len(pictures)
    assert drawn == diagrams, f"{diagrams} Mermaid diagrams in the README, {drawn} drawn as SVG"


def results_folders():
    return [d for c in CHAPTERS for d in sorted((c / "results").glob("*")) if d.is_dir()]


@pytest.mark.parametrize("folder", results_folders(), ids=lambda d: f"{d.parent.parent.name}-{d.name}")
def test_results_page_shows_plots_and_tables(browser, base_url, folder):
    page = open_page(browser)
    page.goto(base_url + f"{folder.relative_to(ROOT)}/index.html")
    plots = page.eval_on_selector_all("article img", "els => els.filter(i => i.naturalWidth > 0).length")
    tables = page.locator("article table").count()
    page.close()
    assert plots == len(list(folder.glob("*.png")))
    assert tables >= len(list(folder.glob("*.md")))


def stored_outputs(notebook: Path) -> list[str]:
    """Each code cell's stored output text, its streams joined as Jupyter shows them."""
    outputs = []
    for cell in json.loads(notebook.read_text())["cells"]:
        texts = [
            output.get("text") or output.get("data", {}).get("text/plain", "") for output in cell.get("outputs", [])
        ]
        outputs.append("".join("".join(text) for text in texts))
    return outputs


def test_notebook_page_shows_the_h100_table(browser, base_url):
    """A stored output that ran on the H100 and holds a table appears on its notebook's page, as stored."""
    found = [
        (notebook, output)
        for notebook in NOTEBOOKS
        for output in stored_outputs(notebook)
        if "H100" in output and sum(line.lstrip().startswith("|") for line in output.splitlines()) >= 3
    ]
    assert found, "no notebook holds an H100 table in its stored outputs"
    notebook, output = found[0]
    page = open_page(browser)
    page.goto(base_url + f"notebooks/{notebook.stem}.html")
    shown = "\n".join(page.locator(".cell_output").all_inner_texts())
    table = page.locator(".cell_output", has_text="H100").filter(has_text="|").first
    table.scroll_into_view_if_needed()
    page.screenshot(path=SHOTS / f"notebook-{notebook.stem}.png")
    page.close()
    lines = [line.strip() for line in output.splitlines() if "H100" in line or line.lstrip().startswith("|")]
    assert [line for line in lines if line not in shown] == []


def stored_pictures(notebook: Path) -> int:
    """How many images the committed notebook's cells hold in their outputs."""
    cells = json.loads(notebook.read_text())["cells"]
    return sum(key.startswith("image/") for c in cells for o in c.get("outputs", []) for key in o.get("data", {}))


@pytest.mark.parametrize("notebook", [n for n in NOTEBOOKS if stored_pictures(n)], ids=lambda n: n.stem)
def test_notebook_page_shows_its_pictures(browser, base_url, notebook):
    """Every picture a notebook's cells drew (course.notebooks check: a drawing cell stores one) is on its page."""
    page = open_page(browser)
    page.goto(base_url + f"notebooks/{notebook.stem}.html", wait_until="load")
    shown = page.eval_on_selector_all(".cell_output img", "els => els.filter(i => i.naturalWidth > 0).length")
    page.locator(".cell_output img").first.scroll_into_view_if_needed()
    page.screenshot(path=SHOTS / f"notebook-{notebook.stem}-picture.png")
    page.close()
    assert shown == stored_pictures(notebook), f"{stored_pictures(notebook)} pictures stored, {shown} shown"


def test_call_relations_diagram_is_an_svg(browser, base_url):
    source = (ROOT / "docs" / "call-relations.md").read_text()
    nodes = set(re.findall(r"^\s*(\w+)\[", source.split("```mermaid", 1)[1].split("```", 1)[0], re.M))
    page = open_page(browser)
    page.goto(base_url + "docs/call-relations.html")
    svg = page.wait_for_selector(DRAWN, timeout=15_000)
    drawn = page.locator("pre.mermaid svg g.node").count()
    box = svg.bounding_box()
    svg.screenshot(path=SHOTS / "call-relations.png")
    assert not page.problems
    page.close()
    assert drawn == len(nodes) > 0
    assert box["width"] > 300 and box["height"] > 300


def test_home_page_is_readable_on_a_phone(browser, base_url):
    desktop = open_page(browser)
    desktop.goto(base_url + "index.html")
    desktop.screenshot(path=SHOTS / "home.png")
    desktop.close()
    page = open_page(browser, width=390, height=844)
    page.goto(base_url + "index.html")
    page.screenshot(path=SHOTS / "home-390px.png")
    layout = page.evaluate(
        """() => ({
            pageWidth: document.documentElement.scrollWidth,
            fontSize: parseFloat(getComputedStyle(document.querySelector('article p')).fontSize),
            title: document.querySelector('article h1').getBoundingClientRect().toJSON(),
        })"""
    )
    menu = page.locator("label.nav-overlay-icon").is_visible()
    page.close()
    assert layout["pageWidth"] <= 390, "the page scrolls sideways at 390 px"
    assert layout["fontSize"] >= 14
    assert 0 <= layout["title"]["left"] and layout["title"]["right"] <= 390
    assert menu, "no navigation button at 390 px"


def test_math_is_typeset(browser, base_url):
    """Pages with $...$ math show it typeset by MathJax, served from site/_static."""
    with_math = sorted(str(p.relative_to(SITE)) for p in SITE.rglob("*.html") if '<span class="math' in p.read_text())
    assert with_math, "no page has math (docs/website.md shows an example)"
    page = open_page(browser)
    for path in with_math:
        page.goto(base_url + path)
        page.wait_for_selector("span.math .MathJax", timeout=20_000)
        errors = page.locator(".MathJax .merror, .MathJax_Error").count()
        if path == with_math[0]:
            page.locator("span.math").first.scroll_into_view_if_needed()
            page.screenshot(path=SHOTS / "math.png")
        assert errors == 0 and not page.problems, path
    page.close()
