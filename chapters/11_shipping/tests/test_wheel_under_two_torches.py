"""make test-wheel: the same wheel file, installed with no compiler in reach, passes its own tests under torch 2.13.0
(a venv with only torch, pytest and the wheel) and torch 2.14.1 (the course's Python, the wheel on PYTHONPATH)."""

import os
import re
import subprocess

from conftest import CHAPTER


def test_make_test_wheel():
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    result = subprocess.run(
        ["make", "--no-print-directory", "-C", str(CHAPTER), "test-wheel"],
        capture_output=True,
        text=True,
        env=env,
        timeout=1200,
    )
    print(result.stdout[-6000:])
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    legs = re.findall(r"test-wheel, leg (\w+)", result.stdout)
    assert legs == ["old", "course"]
    assert len(re.findall(r"\d+ passed", result.stdout)) == 2
