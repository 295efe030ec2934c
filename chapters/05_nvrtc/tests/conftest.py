import os
import subprocess
from pathlib import Path

import pytest

CHAPTER_DIR = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def demo() -> Path:
    """The C program `make build` made (the exercise build under EXERCISE=1)."""
    path = os.environ.get("NVRTC_DEMO")
    if path is None:
        exercise = os.environ.get("EXERCISE") == "1"
        path = CHAPTER_DIR / "build" / ("nvrtc_demo_exercise" if exercise else "nvrtc_demo")
    path = Path(path)
    if not path.exists():
        pytest.fail(f"{path} is missing: run `make build` in {CHAPTER_DIR}")
    return path


@pytest.fixture
def run_demo(demo, tmp_path):
    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(demo), *args, "--out", str(tmp_path)],
            cwd=CHAPTER_DIR,
            capture_output=True,
            text=True,
            timeout=120,
        )

    return run
