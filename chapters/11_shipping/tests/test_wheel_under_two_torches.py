"""make test-wheel: the same wheel file, installed with no compiler in reach, passes its own tests under torch 2.13.0
(leg `old`: a venv with only torch, pytest and the wheel) and under the course's torch (leg `course`: the course's
Python, the wheel on PYTHONPATH). One test a leg, so that a machine that cannot get the second torch (the course's
GPU machine, no package index) still tests the wheel under its own torch, and reports the other leg as skipped."""

import os
import re
import subprocess

from conftest import CHAPTER, second_torch_python

# The calling make's flags and jobserver stay out of these runs of make.
ENV = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}


def make(*args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    """make ARGS in the chapter's folder, its output captured."""
    command = ["make", "--no-print-directory", "-C", str(CHAPTER), *args]
    return subprocess.run(command, capture_output=True, text=True, env=ENV, timeout=timeout)


def run_legs(legs: str) -> subprocess.CompletedProcess:
    result = make("test-wheel", f"TEST_WHEEL_LEGS={legs}", timeout=1200)
    print(result.stdout[-6000:])
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert re.findall(r"test-wheel, leg (\w+)", result.stdout) == [legs]
    assert len(re.findall(r"\d+ passed", result.stdout)) == 1
    return result


def test_the_wheel_under_the_course_torch():
    run_legs("course")


def test_the_wheel_under_a_second_torch():
    python = second_torch_python()
    result = run_legs("old")
    assert str(python) in result.stdout


def test_make_test_wheel_runs_every_leg_by_default():
    """Without TEST_WHEEL_LEGS, make test-wheel runs both legs: a student's `make test-wheel` misses neither."""
    result = make("-n", "test-wheel")
    assert result.returncode == 0, result.stderr
    assert "every leg passed (old course)" in result.stdout


def test_make_test_asks_for_the_second_torch_only_when_told():
    """The second torch is about 910 MB: `make test` installs it only with SECOND_TORCH=1 (CI sets it) and otherwise
    says, in build/second-torch.txt and on its output, that the two tests under it are skipped and how to run them.
    Run with a torch version no earlier run made a venv for, and build/second-torch.txt put back afterwards."""
    state = CHAPTER / "build/second-torch.txt"
    before = state.read_text() if state.exists() else None
    try:
        result = make("second-torch", "SECOND_TORCH=0", "OLD_TORCH=9.9.9")
        assert result.returncode == 0, result.stderr
        assert "skipped, not asked for: make test SECOND_TORCH=1 installs torch==9.9.9" in result.stdout
        assert state.read_text().startswith("unavailable: not asked for: make test SECOND_TORCH=1")
    finally:
        if before is None:
            state.unlink(missing_ok=True)
        else:
            state.write_text(before)
