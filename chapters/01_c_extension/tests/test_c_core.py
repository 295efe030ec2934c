"""The C core on its own: the C test program (built by `make build`) must pass. Under EXERCISE=1 it is linked
against the student's exercises/square_bias.c."""

import subprocess
from pathlib import Path

from course.build import exercise_mode

CHAPTER = Path(__file__).resolve().parents[1]


def test_c_program_passes():
    program = CHAPTER / "build" / ("square_bias_test_exercise" if exercise_mode() else "square_bias_test")
    assert program.exists(), f"{program} is missing: run `make build` in {CHAPTER}"
    result = subprocess.run([str(program)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, f"the C test failed:\n{result.stdout}\n{result.stderr[-3000:]}"
    assert "passed" in result.stdout
