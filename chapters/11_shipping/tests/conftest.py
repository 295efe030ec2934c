"""What the chapter's tests share: where the wheel is, how to look inside it, the GPU architectures promised."""

import os
import shutil
import zipfile
from pathlib import Path

import pytest

CHAPTER = Path(__file__).resolve().parents[1]
EXERCISE = os.environ.get("EXERCISE", "0") == "1"
DIST = CHAPTER / ("build/exercise-dist" if EXERCISE else "dist")

# The promise of this chapter (the course's issue 26): SASS for each of these, and PTX for the newest.
PROMISED_SASS = ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"]
PROMISED_PTX = ["sm_120"]


def find_cuobjdump() -> str | None:
    """cuobjdump from PATH, from the CUDA toolkit, or the copy Triton ships (the course's CPU machine has only that)."""
    candidates = [
        shutil.which("cuobjdump"),
        os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin/cuobjdump"),
    ]
    try:
        import triton

        candidates.append(str(Path(triton.__file__).parent / "backends/nvidia/bin/cuobjdump"))
    except ImportError:
        pass
    return next((c for c in candidates if c and os.access(c, os.X_OK)), None)


def second_torch_python() -> Path:
    """The python of the venv with the second torch, which `make test` makes first; a skip where this machine cannot
    get that torch at all (`make test` wrote why into build/second-torch.txt: the course's GPU machine reaches no
    package index). Without that file (pytest run by hand, before any `make test`) it is a failure, not a skip."""
    state = CHAPTER / "build/second-torch.txt"
    assert state.exists(), "no second torch: run make test (it makes build/venv-torch-2.13.0 first)"
    answer = state.read_text().strip()
    if answer.startswith("unavailable: "):
        pytest.skip(answer.removeprefix("unavailable: "))
    python = Path(answer.removeprefix("ready: "))
    assert python.exists(), f"{state} names {python}, which does not exist: run make test"
    return python


@pytest.fixture(scope="session")
def wheel() -> Path:
    wheels = sorted(DIST.glob("*.whl"))
    assert len(wheels) == 1, f"expected one wheel in {DIST}, found {wheels}: run make wheel"
    return wheels[0]


@pytest.fixture(scope="session")
def unpacked(wheel, tmp_path_factory) -> Path:
    """The wheel's files, unpacked (a wheel is a zip file)."""
    out = tmp_path_factory.mktemp("wheel")
    zipfile.ZipFile(wheel).extractall(out)
    return out
