"""Helpers for the walkthrough notebooks in notebooks/: make a chapter importable (building it if needed) and
skip GPU cells with a clear message where there is no GPU.

    from course.notebook import use_chapter, gpu_cell
    use_chapter("01_c_extension")
    if gpu_cell():
        ...  # GPU work
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from course.gpu import gpu_skip_reason

COURSE_ROOT = Path(__file__).resolve().parents[2]


def use_chapter(chapter: str, *, build: bool = True) -> Path:
    """Put chapters/<chapter> on sys.path; with build=True run its `make build` first (quick when up to date)."""
    chapter_dir = COURSE_ROOT / "chapters" / chapter
    if not chapter_dir.is_dir():
        known = ", ".join(sorted(p.name for p in (COURSE_ROOT / "chapters").iterdir() if p.is_dir()))
        raise ValueError(f"no chapter {chapter!r}; the chapters are: {known}")
    if build:
        env = dict(os.environ, PYTHON=sys.executable)
        result = subprocess.run(
            ["make", "--no-print-directory", "-C", str(chapter_dir), "build"], env=env, capture_output=True, text=True
        )
        if result.returncode != 0:
            raise RuntimeError(f"`make build` in {chapter_dir} failed:\n{result.stdout}\n{result.stderr}")
    if str(chapter_dir) not in sys.path:
        sys.path.insert(0, str(chapter_dir))
    return chapter_dir


def gpu_cell() -> bool:
    """True where a GPU is visible; otherwise prints why the cell is skipped and returns False."""
    reason = gpu_skip_reason()
    if reason:
        print(f"[skipped: {reason} — this cell runs on a machine with an NVIDIA GPU]")
        return False
    return True
