"""The docs point at things that exist: every relative link resolves, and every `make` target a README shows is a
real target of the Makefile it belongs to."""

import functools
import json
import re
import subprocess
from pathlib import Path

import pytest
from course_layout import ROOT

MARKDOWN = sorted(
    p
    for p in ROOT.rglob("*.md")
    if not any(part == "build" or part.startswith(".") for part in p.relative_to(ROOT).parts)  # caches, venvs, .git
)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
MAKE_COMMAND = re.compile(r"(?:^|[\s`$(])(?:[A-Z_]+=\S+\s+)*make\s+((?:[A-Z_]+=\S+\s+)*)([a-z][\w-]*)", re.M)


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("doc", MARKDOWN, ids=[rel(p) for p in MARKDOWN])
def test_relative_links_resolve(doc):
    broken = []
    for target in LINK.findall(doc.read_text()):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path = (doc.parent / target.split("#")[0]).resolve()
        if not path.exists():
            broken.append(target)
    assert broken == [], f"{rel(doc)} links to missing files: {broken}"


@functools.cache
def make_targets(directory: Path) -> frozenset[str]:
    database = subprocess.run(
        ["make", "-qp", "-C", str(directory)], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}
    ).stdout
    return frozenset(re.findall(r"^([a-zA-Z][\w.-]*):", database, re.M))


def makefile_dir_for(doc: Path) -> Path:
    directory = doc.parent
    while not (directory / "Makefile").exists() and directory != ROOT:
        directory = directory.parent
    return ROOT if directory in (ROOT / "docs", ROOT / "notebooks") else directory


@pytest.mark.parametrize("doc", MARKDOWN, ids=[rel(p) for p in MARKDOWN])
def test_make_commands_exist(doc):
    directory = makefile_dir_for(doc)
    targets = make_targets(directory)
    if directory == ROOT:  # the top-level docs also describe what to type inside a chapter
        targets |= make_targets(ROOT / "chapters" / "00_environment")
    text = doc.read_text()
    shown = {m.group(2) for m in MAKE_COMMAND.finditer(text)}
    # "make -C chapters/NN ..." is checked against that chapter.
    for chapter, target in re.findall(r"make -C (chapters/[\w]+)(?:\s+[A-Z_]+=\S+)*\s+([a-z][\w-]*)", text):
        assert target in make_targets(ROOT / chapter), f"{rel(doc)} shows `make -C {chapter} {target}`"
    missing = sorted(t for t in shown - targets if t not in {"sure", "it", "the", "a", "targets"})
    assert missing == [], f"{rel(doc)} shows make targets that {rel(directory / 'Makefile')} lacks: {missing}"


@pytest.mark.parametrize("chapter", sorted(ROOT.glob("chapters/*/README.md")), ids=lambda p: p.parent.name)
def test_lesson_and_notebook_titles_share_one_form(chapter):
    """The site's navigation lists these titles side by side: each reads "NN — Title", as the folder is numbered."""
    number = chapter.parent.name[:2]
    form = re.compile(rf"# {number} — [A-Z‖]")
    title = chapter.read_text().splitlines()[0]
    assert form.match(title), f"{chapter}: the title {title!r} should read '# {number} — ...'"
    notebook = ROOT / "notebooks" / f"{chapter.parent.name}.ipynb"
    if notebook.exists():
        cells = json.loads(notebook.read_text())["cells"]
        heading = next("".join(c["source"]) for c in cells if "".join(c["source"]).startswith("# "))
        first_line = heading.splitlines()[0]
        assert form.match(heading), f"{notebook.name}: the title {first_line!r} should read '# {number} — ...'"
