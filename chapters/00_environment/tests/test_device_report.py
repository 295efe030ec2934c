"""The C program: it says clearly when there is no driver, and on a GPU it agrees with what torch sees."""

import os
import subprocess
from pathlib import Path

import pytest
import torch

PROGRAM = Path(__file__).resolve().parents[1] / "build" / "device_report"


def run(**env) -> subprocess.CompletedProcess:
    assert PROGRAM.exists(), "build/device_report is missing: `make build` compiles it"
    return subprocess.run([str(PROGRAM)], capture_output=True, text=True, env={**os.environ, **env}, timeout=60)


def test_no_driver_message_and_exit_status():
    result = run(COURSE_LIBCUDA="/nonexistent/libcuda.so.1")
    assert result.returncode == 0
    assert "CUDA runtime (this program's):" in result.stdout
    assert "no NVIDIA driver" in result.stdout and "could not be loaded" in result.stdout


def test_runtime_version_matches_the_toolkit_it_was_built_with():
    result = run(COURSE_LIBCUDA="/nonexistent/libcuda.so.1")
    assert result.stdout.split("\n")[0].split()[-2].startswith("13.")


@pytest.mark.gpu
def test_report_on_the_gpu():
    result = run()
    assert result.returncode == 0, result.stderr
    properties = torch.cuda.get_device_properties(0)
    assert properties.name in result.stdout
    assert f"compute capability   {properties.major}.{properties.minor}" in result.stdout
    assert f"multiprocessors      {properties.multi_processor_count}" in result.stdout
    assert "CUDA driver API (installed driver):" in result.stdout


@pytest.mark.gpu
def test_python_diagnosis_on_the_gpu():
    from envcheck import diagnose, gather_facts

    facts = gather_facts()
    assert facts.driver_cuda is not None and facts.gpus
    assert not [f for f in diagnose(facts) if f.level == "error"]
