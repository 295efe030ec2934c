"""The course's pytest plugin: tests marked big_memory in different pytest processes never run at the same time
(make gpu-check runs several chapters' tests side by side on one GPU)."""

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

BIG_TEST = """
import time
import pytest

@pytest.mark.big_memory
def test_big():
    start = time.time()
    time.sleep(1.0)
    with open({record!r}, "a") as f:
        f.write(f"{{start}} {{time.time()}}\\n")
"""


def test_big_memory_tests_of_two_processes_take_turns(tmp_path):
    record = tmp_path / "intervals.txt"
    test_file = tmp_path / "test_big.py"
    test_file.write_text(BIG_TEST.format(record=str(record)))
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "course.pytest_plugin"]
    env = {"PYTHONPATH": str(ROOT / "common"), "PATH": "/usr/bin:/bin"}
    started = time.time()
    runs = [subprocess.Popen([*command, str(test_file)], cwd=tmp_path, env=env) for _ in range(2)]
    assert [run.wait(timeout=120) for run in runs] == [0, 0]
    (first_start, first_end), (second_start, second_end) = sorted(
        tuple(map(float, line.split())) for line in record.read_text().splitlines()
    )
    assert second_start >= first_end, "the two big_memory tests overlapped"
    assert time.time() - started >= 2.0
