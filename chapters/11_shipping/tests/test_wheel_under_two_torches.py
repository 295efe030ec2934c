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


def run_legs(legs: str) -> subprocess.CompletedProcess:
    result = subprocess.run(
        ["make", "--no-print-directory", "-C", str(CHAPTER), "test-wheel", f"TEST_WHEEL_LEGS={legs}"],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=1200,
    )
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
    result = subprocess.run(
        ["make", "--no-print-directory", "-n", "-C", str(CHAPTER), "test-wheel"],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "every leg passed (old course)" in result.stdout
