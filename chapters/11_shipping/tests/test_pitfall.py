"""THE PITFALL: the ordinary (non-stable) build of the same op, built against the course's torch (2.14.1, a CUDA
build) and imported under another torch (2.13.0, a CPU build), next to the stable wheel under the same two."""

import os
import re
import subprocess
from pathlib import Path

import pytest
import torch

from conftest import CHAPTER, second_torch_python

BUILD = CHAPTER / "build"
COURSE_TORCH = torch.__version__.split("+")[0]


def import_in(python, folder, module):
    code = f"import torch, {module}; print(torch.ops.square_bias_ordinary.square_bias(torch.ones(2), torch.ones(2)))"
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(folder), "HOME": os.environ.get("HOME", "/")}
    return subprocess.run([str(python), "-c", code], capture_output=True, text=True, env=env, cwd=folder)


@pytest.fixture(scope="module")
def ordinary():
    folder = BUILD / f"pitfall-torch-{COURSE_TORCH}"
    assert list(folder.glob("square_bias_ordinary.cpython-*.so")), f"{folder}: run make build"
    return folder


def test_the_ordinary_build_works_with_its_own_torch(ordinary):
    result = import_in(Path(os.environ.get("PYTHON", "python3")), ordinary, "square_bias_ordinary")
    assert result.returncode == 0, result.stderr
    assert "tensor([2., 2.])" in result.stdout


def test_the_ordinary_build_fails_under_the_other_torch(ordinary):
    """The exact message a user sees. The ordinary build links every library of the torch it was built against,
    libc10_cuda.so and libtorch_cuda.so among them (a CUDA build of torch), by name; a CPU build of torch has
    neither. Even where the libraries exist, nothing checks that the C++ symbols and class layouts match: see
    test_nothing_checks_the_cpp_symbols."""
    result = import_in(second_torch_python(), ordinary, "square_bias_ordinary")
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert re.fullmatch(
        r"ImportError: lib(c10|torch)_cuda\.so: cannot open shared object file: No such file or directory", last
    ), last


def test_nothing_checks_the_cpp_symbols(ordinary):
    """The ordinary build calls dozens of C++ functions of libtorch by their mangled names. Between 2.13 and 2.14.1
    the ones this op calls happen to exist in both (the library loads wherever the CUDA libraries exist); 522
    symbols of libtorch_cpu.so did not survive that upgrade (e.g. at::_ops::cholesky::call), and an op that called
    one fails with 'undefined symbol: ...'. Nothing promises which: the stable wheel calls none of them."""
    lib = next(ordinary.glob("square_bias_ordinary.cpython-*.so"))
    out = subprocess.run(["nm", "-D", "--undefined-only", str(lib)], capture_output=True, text=True, check=True)
    cpp = [s for s in out.stdout.split() if re.match(r"_ZN?K?(3c10|2at|5torch)", s)]
    assert len(cpp) > 10
