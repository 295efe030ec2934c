"""Exercise stubs must fail their chapter's tests until a student fills them in (the reference passing is the
chapter's own row in the score table). Runs `EXERCISE=1 make test` in each chapter, stopping at the first failure."""

import os
import subprocess
import xml.etree.ElementTree as ET

import pytest
from course_layout import CHAPTERS, ids

WITH_EXERCISES = [c for c in CHAPTERS if any(p.is_file() for p in (c / "exercises").glob("*"))]


@pytest.mark.parametrize("chapter", WITH_EXERCISES, ids=ids(WITH_EXERCISES))
def test_exercise_stubs_fail(chapter, tmp_path):
    junit = tmp_path / "exercise.xml"
    env = {**os.environ, "EXERCISE": "1"}
    env.pop("MAKEFLAGS", None)
    result = subprocess.run(
        ["make", "--no-print-directory", "-C", str(chapter), "test", f"JUNIT_XML={junit}", "PYTEST_ARGS=-x -q"],
        capture_output=True,
        text=True,
        env=env,
        timeout=1800,
    )
    assert result.returncode != 0, f"{chapter.name}: the unmodified exercise stubs pass their tests"
    assert junit.exists(), f"{chapter.name}: the exercise build failed before any test ran:\n{result.stdout[-3000:]}"
    suite = ET.parse(junit).getroot()
    suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
    failed = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
    assert failed >= 1, f"{chapter.name}: make failed but no test failed:\n{result.stdout[-3000:]}"
