"""The import-time check: an unsupported torch gets a clear ImportError instead of "undefined symbol" or a failed
kernel launch later."""

import os
import subprocess
import sys

import pytest
import torch

from square_bias_wheel import _build_info
from square_bias_wheel._compat import check_torch

TARGET, MAJOR = _build_info.TORCH_TARGET, _build_info.CUDA_MAJOR


def test_the_supported_torches_pass():
    assert check_torch("2.11.0+cu130", "13.0", TARGET, MAJOR) is True
    assert check_torch("2.14.1+cu130", "13.0", TARGET, MAJOR) is True
    assert check_torch("2.13.0+cpu", None, TARGET, MAJOR) is False  # CPU-only torch: the CPU kernel only


def test_an_older_torch_is_refused():
    with pytest.raises(ImportError, match=r"needs torch >= 2\.11, but torch 2\.10\.0 is installed"):
        check_torch("2.10.0", None, TARGET, MAJOR)


def test_another_cuda_major_version_is_refused():
    with pytest.raises(ImportError, match=r"CUDA 13 build \(course-square-bias-cu13\), but torch .* uses CUDA 12\.8"):
        check_torch("2.13.0+cu128", "12.8", TARGET, MAJOR)


def test_a_new_major_torch_is_refused():
    with pytest.raises(ImportError, match="new major version"):
        check_torch("3.0.0", "13.0", TARGET, MAJOR)


def test_the_real_import_refuses_an_old_torch():
    """The check runs before any library of the wheel loads: with torch's version made to read 2.10, importing
    the package raises the ImportError (and not an "undefined symbol" from a library)."""
    code = "import torch; torch.__version__ = '2.10.0'; import square_bias_wheel"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ))
    assert result.returncode != 0
    assert "ImportError: square_bias_wheel needs torch >= 2.11, but torch 2.10.0 is installed" in result.stderr


def test_build_facts():
    assert torch.__version__ >= "2.11"
    assert _build_info.CUDA_MAJOR in (12, 13)
