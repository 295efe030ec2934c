"""Where these tests run: the package comes from an installed wheel, with no compiler in reach (make test-wheel sets
SQUARE_BIAS_WHEEL_NO_COMPILER=1), and on the GPU machine the CUDA path must really run (..._EXPECT_CUDA=1)."""

import os
import shutil
import sys
from pathlib import Path

import pytest
import torch

import square_bias_wheel

NO_COMPILER = os.environ.get("SQUARE_BIAS_WHEEL_NO_COMPILER") == "1"


def test_the_package_comes_from_an_installed_wheel():
    package = Path(square_bias_wheel.__file__).resolve().parent
    record = list(package.parent.glob("course_square_bias_cu*.dist-info/RECORD"))
    assert record, f"{package} is not an installed wheel (no dist-info beside it)"
    assert (package / "_C.abi3.so").exists()


@pytest.mark.skipif(not NO_COMPILER, reason="only under make test-wheel")
def test_no_compiler_is_in_reach():
    for tool in ("nvcc", "gcc", "g++", "c++", "cc"):
        assert shutil.which(tool) is None, f"{tool} is on PATH: {shutil.which(tool)}"
    assert "CUDA_HOME" not in os.environ and "CUDA_PATH" not in os.environ
    assert "torch.utils.cpp_extension" not in sys.modules, "importing the package must not reach the build tools"


def test_cuda_where_expected():
    """On the GPU machine the leg runs with SQUARE_BIAS_WHEEL_EXPECT_CUDA=1: a missing GPU is then a failure, not a
    skip, and the CUDA library must have loaded."""
    if os.environ.get("SQUARE_BIAS_WHEEL_EXPECT_CUDA") != "1":
        pytest.skip("no CUDA expected here")
    assert torch.cuda.is_available()
    assert square_bias_wheel._HAS_CUDA_LIBRARY
    print(f"torch {torch.__version__} (CUDA {torch.version.cuda}) on {torch.cuda.get_device_name()}")
