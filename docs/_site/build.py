"""Build the course's website into site/ from the files that already exist (`make site`).

1. Stage: build/site-src/ gets the pages at their repository paths (README.md becomes index.md, each chapter's
   README.md its folder's index.md, docs/*.md and notebooks/*.ipynb as they are), with relative links rewritten so
   they resolve on the site: a link to a folder goes to its page, a link to a source file to a page that shows the
   file. The few pages that only arrange others (the navigation, the notebooks' and the reference's lists, the
   exercises, chapter 07's results) are generated here; none repeats a lesson's text.
2. Assets: Mermaid and MathJax come from two pinned wheels (common/requirements-site-assets.txt), downloaded once
   with pip and unpacked into build/site-assets/: the site loads nothing from the network.
3. Sphinx (config in docs/_site/conf.py) renders build/site-src/ into site/; notebooks keep their stored outputs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STAGE = ROOT / "build" / "site-src"
ASSETS = ROOT / "build" / "site-assets"
DOCTREES = ROOT / "build" / "site-doctrees"
SITE = ROOT / "site"
CONF_DIR = Path(__file__).resolve().parent
ASSET_REQUIREMENTS = ROOT / "common" / "requirements-site-assets.txt"

IMAGE_SUFFIXES = {".png", ".svg", ".jpg", ".jpeg", ".gif", ".webp"}
LANGUAGES = {
    ".c": "c",
    ".h": "c",
    ".cu": "cuda",
    ".cuh": "cuda",
    ".cpp": "cpp",
    ".hpp": "cpp",
    ".py": "python",
    ".mk": "make",
    ".sh": "bash",
    ".toml": "toml",
    ".json": "json",
    ".ini": "ini",
    ".yml": "yaml",
    ".yaml": "yaml",
}
LINK = re.compile(r"(!?\[(?:[^\]\[]|\[[^\]]*\])*\]\()([^)\s]+)(\))")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def log(message: str) -> None:
    print(f"site: {message}", flush=True)


def title_of(markdown: Path) -> str:
    for line in markdown.read_text().splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return markdown.parent.name


def tracked_files(folder: Path) -> list[Path]:
    """The files git tracks under `folder` (every file, outside a git checkout)."""
    result = subprocess.run(
        ["git", "ls-files", "-z", "--", str(folder.relative_to(ROOT))], cwd=ROOT, capture_output=True, text=True
    )
    if result.returncode == 0 and result.stdout:
        return sorted(ROOT / name for name in result.stdout.split("\0") if name)
    return sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def slug(heading: str) -> str:
    """GitHub's and MyST's anchor for a heading: lower case, punctuation dropped, spaces as dashes."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


class Stage:
    """What goes into build/site-src/: a map from staged path (relative to STAGE) to its text or its source file."""

    def __init__(self) -> None:
        self.chapters = sorted(p.parent for p in ROOT.glob("chapters/*/README.md"))
        self.notebooks = sorted(ROOT.glob("notebooks/*.ipynb"))
        self.docs = sorted(ROOT.glob("docs/*.md"))
        self.results = sorted(p for c in self.chapters for p in (c / "results").glob("*") if p.is_dir())
        # repository path -> staged page (relative to ROOT and STAGE): the pages a link may point at
        self.pages: dict[Path, Path] = {Path("README.md"): Path("index.md")}
        for chapter in self.chapters:
            self.pages[(chapter / "README.md").relative_to(ROOT)] = chapter.relative_to(ROOT) / "index.md"
        for page in self.docs + self.notebooks:
            self.pages[page.relative_to(ROOT)] = page.relative_to(ROOT)
        for folder in self.results:
            self.pages[folder.relative_to(ROOT)] = folder.relative_to(ROOT) / "index.md"
        self.folder_pages = {Path("notebooks"): Path("notebooks/index.md"), Path("docs"): Path("docs/index.md")}
        self.texts: dict[Path, str] = {}
        self.copies: dict[Path, Path] = {}
        self.problems: list[str] = []

    # ---- links ------------------------------------------------------------------------------------------------
    def target_page(self, repo_path: Path) -> Path | None:
        """The staged file a link to `repo_path` (relative to ROOT) should point at, creating it if needed."""
        absolute = ROOT / repo_path
        if repo_path in self.pages:
            return self.pages[repo_path]
        if absolute.is_dir():
            if repo_path / "README.md" in self.pages:
                return self.pages[repo_path / "README.md"]
            if repo_path in self.folder_pages:
                return self.folder_pages[repo_path]
            return self.folder_page(repo_path)
        if absolute.is_file():
            if absolute.suffix.lower() in IMAGE_SUFFIXES:
                self.copies[repo_path] = absolute
                return repo_path
            return self.source_page(repo_path)
        return None

    def rewrite(self, text: str, repo_doc: Path, staged_doc: Path) -> str:
        """Rewrite the relative links of Markdown `text` (from repo_doc) to resolve from staged_doc."""
        out, fence = [], None
        link = lambda m: m.group(1) + self.rewrite_target(m.group(2), repo_doc, staged_doc) + m.group(3)
        for line in text.splitlines(keepends=True):
            match = FENCE.match(line)
            if fence is None and match:
                fence = match.group(1)
            elif fence is not None and match and match.group(1).startswith(fence) and not line.strip()[len(fence) :]:
                fence = None
            elif fence is None:
                line = LINK.sub(link, line)
            out.append(line)
        return "".join(out)

    def rewrite_target(self, target: str, repo_doc: Path, staged_doc: Path) -> str:
        if SCHEME.match(target) or target.startswith(("#", "/")):
            return target
        path, _, fragment = target.partition("#")
        absolute = (ROOT / repo_doc.parent / path).resolve()
        try:
            repo_path = absolute.relative_to(ROOT)
        except ValueError:
            self.problems.append(f"{repo_doc}: {target} leaves the repository")
            return target
        staged = self.target_page(repo_path)
        if staged is None:
            self.problems.append(f"{repo_doc}: {target} does not exist")
            return target
        new = os.path.relpath(staged, staged_doc.parent)
        return new + (f"#{fragment}" if fragment else "")

    # ---- generated pages --------------------------------------------------------------------------------------
    def lesson_of(self, repo_path: Path) -> str:
        """A line linking a file's page back to the lesson of the chapter it belongs to."""
        for chapter in self.chapters:
            folder = chapter.relative_to(ROOT)
            if folder in repo_path.parents:
                lesson = os.path.relpath(folder / "index.md", repo_path.parent)
                return f"From the lesson [{title_of(chapter / 'README.md')}]({lesson}).\n"
        return ""

    def source_page(self, repo_path: Path) -> Path:
        staged = repo_path.with_name(repo_path.name + ".md")
        if staged not in self.texts:
            self.copies[repo_path] = ROOT / repo_path
            language = LANGUAGES.get(repo_path.suffix, "make" if repo_path.name == "Makefile" else "text")
            self.texts[staged] = (
                f"---\norphan: true\n---\n# `{repo_path}`\n\n{self.lesson_of(repo_path)}\n"
                f"```{{literalinclude}} {repo_path.name}\n:language: {language}\n:linenos:\n```\n"
            )
        return staged

    def folder_page(self, repo_path: Path) -> Path:
        staged = repo_path / "index.md"
        if staged not in self.texts:
            self.texts[staged] = ""  # placeholder: the files below may link back here
            lines = [f"---\norphan: true\n---\n# `{repo_path}/`\n\n{self.lesson_of(repo_path / 'x')}\n"]
            for file in tracked_files(ROOT / repo_path):
                page = self.target_page(file.relative_to(ROOT))
                lines.append(f"- [`{file.relative_to(ROOT / repo_path)}`]({os.path.relpath(page, repo_path)})\n")
            self.texts[staged] = "".join(lines)
        return staged

    def results_page(self, folder: Path) -> None:
        repo_path = folder.relative_to(ROOT)
        staged = repo_path / "index.md"
        chapter = folder.parent.parent
        lines = [
            f"# Results: `{folder.name}`\n\n",
            f"The files in `{repo_path}/`, as committed: the run that "
            f"[{title_of(chapter / 'README.md')}]({os.path.relpath(chapter.relative_to(ROOT) / 'index.md', repo_path)})"
            " reads.\n\n",
        ]
        files = tracked_files(folder)
        for file in files:
            name = file.name
            self.copies[repo_path / name] = file
            if file.suffix == ".png":
                lines.append(f"## {name}\n\n![{file.stem.replace('_', ' ')}]({name})\n\n")
        for file in files:
            if file.suffix == ".md":
                lines.append(f"## {file.name}\n\n```{{include}} {file.name}\n```\n\n")
        for file in files:
            if file.suffix == ".txt":
                lines.append(f"## {file.name}\n\n```{{literalinclude}} {file.name}\n:language: text\n```\n\n")
        others = [f for f in files if f.suffix not in {".png", ".md", ".txt"}]
        if others:
            lines.append("## Data\n\n" + "".join(f"- {{download}}`{f.name}`\n" for f in others) + "\n")
        self.texts[staged] = "".join(lines)

    def exercises_page(self) -> None:
        lines = ["# Exercises\n\n"]
        for chapter in self.chapters:
            folder = chapter.relative_to(ROOT)
            readme = (chapter / "README.md").read_text()
            lines.append(f"## {title_of(chapter / 'README.md')}\n\n")
            heading = re.search(r"^## (Exercises?\b.*)$", readme, re.M)
            if heading:
                lines.append(f"The task: [{heading.group(1)}]({folder}/index.md#{slug(heading.group(1))}).\n\n")
            for file in tracked_files(chapter / "exercises"):
                repo_path = file.relative_to(ROOT)
                self.copies[repo_path] = file
                language = LANGUAGES.get(file.suffix, "text")
                lines.append(
                    f"```{{literalinclude}} {repo_path}\n:language: {language}\n:caption: {repo_path}\n```\n\n"
                )
        grading = "docs/instructors-guide.md"
        if (ROOT / grading).exists():
            lines.append(f"## Grading\n\nSee [the instructors' guide]({self.pages[Path(grading)]}#grading).\n")
        self.texts[Path("exercises.md")] = "".join(lines)

    def build(self) -> None:
        for repo_path, staged in list(self.pages.items()):
            if repo_path.suffix == ".md":
                self.texts[staged] = self.rewrite((ROOT / repo_path).read_text(), repo_path, staged)
            elif repo_path.suffix == ".ipynb":
                notebook = json.loads((ROOT / repo_path).read_text())
                for cell in notebook["cells"]:
                    if cell["cell_type"] == "markdown":
                        source = "".join(cell["source"])
                        rewritten = self.rewrite(source, repo_path, staged)
                        if rewritten != source:
                            cell["source"] = rewritten
                self.texts[staged] = json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"
        for folder in self.results:
            self.results_page(folder)
        self.exercises_page()

        def toctree(entries, caption=None, hidden=True):
            options = (":hidden:\n" if hidden else "") + (f":caption: {caption}\n" if caption else "")
            return "\n```{toctree}\n" + options + ":maxdepth: 1\n\n" + "".join(f"{e}\n" for e in entries) + "```\n"

        chapter_pages = [str(self.pages[(c / "README.md").relative_to(ROOT)].with_suffix("")) for c in self.chapters]
        self.texts[Path("index.md")] += toctree(chapter_pages, "Chapters") + toctree(
            ["notebooks/index", "exercises", "docs/index"], "Notebooks, exercises, reference"
        )
        self.texts[Path("notebooks/index.md")] = (
            "# Notebooks\n\nOne walkthrough per chapter, shown with the outputs stored in it (the site does not run"
            " them).\n" + toctree([p.stem for p in self.notebooks], hidden=False)
        )
        self.texts[Path("docs/index.md")] = "# Reference\n" + toctree([p.stem for p in self.docs], hidden=False)
        for chapter in self.chapters:
            results = [f for f in self.results if f.parent.parent == chapter]
            if results:
                staged = self.pages[(chapter / "README.md").relative_to(ROOT)]
                entries = [str(f.relative_to(chapter) / "index") for f in results]
                self.texts[staged] += toctree(entries, "Results on this site", hidden=False)

    def write(self) -> bool:
        """Write the stage, touching only changed files; True if the set of pages changed."""
        wanted = {STAGE / p for p in list(self.texts) + list(self.copies)}
        for path in sorted(STAGE.rglob("*")) if STAGE.exists() else []:
            if path.is_file() and path not in wanted and path.name != ".pages":
                path.unlink()
        for staged, text in self.texts.items():
            target = STAGE / staged
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.exists() or target.read_text() != text:
                target.write_text(text)
        for staged, source in self.copies.items():
            target = STAGE / staged
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.exists() or target.read_bytes() != source.read_bytes():
                shutil.copyfile(source, target)
        # the pages and the site's own settings: when either changes, the site is rebuilt from scratch
        settings = [f"{p.name} {p.stat().st_mtime_ns}" for p in sorted(CONF_DIR.rglob("*")) if p.is_file()]
        pages = "\n".join(sorted(str(p) for p in self.texts) + settings) + "\n"
        stamp = STAGE / ".pages"
        changed = not stamp.exists() or stamp.read_text() != pages
        stamp.write_text(pages)
        return changed


def fetch_assets() -> None:
    """Mermaid and MathJax, from pinned wheels (pip checks their hashes), unpacked under build/site-assets/."""
    stamp = ASSETS / ".ready"
    if stamp.exists() and stamp.stat().st_mtime >= ASSET_REQUIREMENTS.stat().st_mtime:
        return
    log("fetching Mermaid and MathJax (two pinned wheels, once)")
    shutil.rmtree(ASSETS, ignore_errors=True)
    wheels = ASSETS / "wheels"
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--require-hashes", "--only-binary=:all:"]
    subprocess.run([*command, "--progress-bar", "on", "-d", str(wheels), "-r", str(ASSET_REQUIREMENTS)], check=True)
    unpack = {  # wheel name prefix: (folder inside the wheel, folder under _static/)
        "nicegui-": ("nicegui/elements/mermaid/dist/", "mermaid/dist/"),
        "jupyter_server_mathjax-": ("jupyter_server_mathjax/static/", "mathjax/"),
    }
    for wheel in sorted(wheels.glob("*.whl")):
        prefix = next(p for p in unpack if wheel.name.startswith(p))
        inside, outside = unpack[prefix]
        with zipfile.ZipFile(wheel) as archive:
            for name in archive.namelist():
                if name.startswith(inside) and not name.endswith((".map", "/")):
                    target = ASSETS / "static" / outside / name[len(inside) :]
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(archive.read(name))
                if name.endswith("LICENSE") and "dist-info" in name:
                    target = ASSETS / "static" / outside.split("/")[0] / "LICENSE.package"
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(archive.read(name))
    for needed in ("mermaid/dist/index.js", "mathjax/MathJax.js"):
        if not (ASSETS / "static" / needed).exists():
            sys.exit(f"site: {needed} is missing from the wheels in {wheels}")
    stamp.touch()


def check_offline() -> list[str]:
    """Pages that would load a script, a style sheet or an image from another host."""
    remote = re.compile(r"<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)=\"(?:https?:)?//", re.I)
    return [str(p.relative_to(SITE)) for p in SITE.rglob("*.html") if remote.search(p.read_text(errors="replace"))]


def main() -> int:
    start = time.monotonic()
    stage = Stage()
    stage.build()
    for problem in stage.problems:
        log(f"warning: {problem}")
    full = stage.write()
    fetch_assets()
    if full:  # a page came or went: start from scratch so no stale page or search entry stays
        shutil.rmtree(SITE, ignore_errors=True)
        shutil.rmtree(DOCTREES, ignore_errors=True)
    log(f"rendering {len(stage.texts)} pages with Sphinx into site/ ({'all' if full else 'the changed ones'})")
    warnings = ROOT / "build" / "site-warnings.log"
    command = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-c", str(CONF_DIR), "-d", str(DOCTREES)]
    command += ["-w", str(warnings), "--keep-going", str(STAGE), str(SITE)]
    result = subprocess.run(command, cwd=ROOT)
    if result.returncode != 0:
        log(f"Sphinx failed (exit {result.returncode}); its warnings are in {warnings.relative_to(ROOT)}")
        return result.returncode
    count = len([line for line in warnings.read_text().splitlines() if "WARNING" in line])
    if count:
        log(f"{count} Sphinx warnings, in {warnings.relative_to(ROOT)}")
    remote = check_offline()
    if remote:
        log(f"error: these pages load files from other hosts: {remote}")
        return 1
    built = sum(1 for _ in SITE.rglob("*.html"))
    log(f"site/ is ready: {built} pages in {time.monotonic() - start:.0f} s (make serve shows it on localhost)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
