"""add2 loaded just in time on a GPU machine: from files (load) and from strings (load_inline). Each module is
built once per session into build/torch_extensions (a cold build takes tens of seconds; later runs reuse it)."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from add2 import jit

pytestmark = pytest.mark.gpu
CHAPTER_DIR = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def from_files():
    return jit.load_from_files()


@pytest.fixture(scope="module")
def from_strings():
    return jit.load_from_strings()


def _inputs(n, dtype=torch.float32):
    return torch.randn(n, device="cuda").to(dtype), torch.randn(n, device="cuda").to(dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
def test_files_module(from_files, dtype):
    for n in (0, 1, 9, 1025, 100_003):
        a, b = _inputs(n, dtype)
        torch.testing.assert_close(from_files.add2(a, b), a + b)
        torch.testing.assert_close(from_files.add2_seed(a, b), a + b)
        torch.testing.assert_close(from_files.add2(a[1:], b[1:]), a[1:] + b[1:])  # misaligned


def test_strings_module(from_strings):
    for n in (0, 1, 9, 1025, 100_003):
        a, b = _inputs(n)
        torch.testing.assert_close(from_strings.add2_seed(a, b), a + b)


def test_pybind_module_checks_inputs(from_files):
    """The same C++ checks as the op (add2_torch.h); torch's pybind11 translation keeps their exception types."""
    a = torch.ones(4, device="cuda")
    with pytest.raises(ValueError, match="^a must be on cuda, but it is on cpu$"):
        from_files.add2(torch.ones(4), torch.ones(4))
    with pytest.raises(ValueError, match="a and b must have the same shape"):
        from_files.add2(a, torch.ones(5, device="cuda"))
    with pytest.raises(TypeError, match="a has dtype int32"):
        from_files.add2_seed(a.int(), a.int())


def test_pybind_module_takes_any_layout(from_files):
    a, b = torch.randn(65, 33, device="cuda").t(), torch.randn(33, 65, device="cuda")
    torch.testing.assert_close(from_files.add2(a, b), a + b)
    torch.testing.assert_close(from_files.add2_seed(a, b), a + b)


def test_cached_reload_in_fresh_process_does_not_rebuild(from_files):
    """A second load in a new process finds the build in TORCH_EXTENSIONS_DIR and compiles nothing. How long that
    takes is a speed goal (cached re-load <= 2 s), so `make bench` measures it, not this test."""
    code = """
        from add2.jit import load_from_files
        module = load_from_files(verbose=True)
        print("LOADED", module.__name__)
        """
    env = dict(os.environ, TORCH_EXTENSIONS_DIR=str(jit.extensions_dir()))
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=CHAPTER_DIR, env=env, capture_output=True, text=True
    )
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "ninja: no work to do" in out, out
    assert "LOADED add2_jit_files" in out, out
