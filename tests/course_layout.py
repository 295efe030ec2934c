"""Where things are, for the course-wide tests."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted(p.parent for p in ROOT.glob("chapters/*/Makefile"))
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def package_of(chapter: Path) -> str:
    match = re.search(r"^PACKAGE\s*:?=\s*(\S+)", (chapter / "Makefile").read_text(), re.M)
    assert match, f"{chapter.name}/Makefile does not set PACKAGE"
    return match.group(1)


def ids(paths):
    return [p.stem if p.suffix else p.name for p in paths]
