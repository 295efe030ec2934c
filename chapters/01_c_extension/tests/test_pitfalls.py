"""The seed's pitfalls, each shown failing beside its fix (sources in pitfalls/)."""

import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch

CHAPTER = Path(__file__).resolve().parents[1]
PITFALLS = CHAPTER / "pitfalls"
CXX = shutil.which("g++") or shutil.which("c++")
needs_cxx = pytest.mark.skipif(CXX is None, reason="no C++ compiler (g++) on PATH")


@needs_cxx
def test_comma_operator_loses_grad_x(tmp_path):
    """`return grad_x, grad_b;` returns grad_b only; -Wall says so."""
    program = tmp_path / "comma_return"
    build = subprocess.run(
        [CXX, "-std=c++17", "-Wall", "-Wextra", str(PITFALLS / "comma_return.cpp"), "-o", str(program)],
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr
    assert "left operand of comma operator has no effect" in build.stderr  # the warning points at the bug
    assert build.stderr.count("warning:") == 1  # ... and only at the bug: the fix compiles clean

    lines = dict(
        line.split(" ", 1)
        for line in subprocess.run([str(program)], capture_output=True, text=True, check=True).stdout.splitlines()
    )
    values = {name: torch.tensor([float(v) for v in text.split()], dtype=torch.float64) for name, text in lines.items()}
    x = values["x"].requires_grad_()
    grad_y = values["grad_y"]
    (x * x).backward(grad_y)  # PyTorch's grad_x, the one the seed meant to return
    returned = values["pitfall_backward"]
    assert not torch.allclose(returned, x.grad)  # grad_x is lost ...
    torch.testing.assert_close(returned, grad_y)  # ... what came back is grad_b (= grad_y here)
    torch.testing.assert_close(values["fixed_grad_x"], x.grad)  # the fix returns both
    torch.testing.assert_close(values["fixed_grad_b"], grad_y)


@needs_cxx
def test_deprecated_tensor_accessors_warn():
    """x.type() and x.data<T>() draw deprecation warnings; x.scalar_type() and const_data_ptr<T>() do not."""
    from torch.utils.cpp_extension import include_paths

    source = PITFALLS / "deprecated_accessors.cpp"
    flags = ["-std=c++20", "-fsyntax-only", "-Wall", "-Wextra", *[f"-I{p}" for p in include_paths()]]
    result = subprocess.run([CXX, *flags, str(source)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Tensor.type() is deprecated" in result.stderr
    assert "Tensor.data<T>() is deprecated" in result.stderr
    lines = source.read_text().splitlines()
    pitfall = next(i for i, line in enumerate(lines, 1) if "pitfall_first_value" in line)
    fixed = next(i for i, line in enumerate(lines, 1) if "fixed_first_value" in line)
    warned = {int(m) for m in re.findall(rf"{re.escape(source.name)}:(\d+):\d+: warning", result.stderr)}
    assert warned and all(pitfall < line < fixed for line in warned), f"warnings on lines {sorted(warned)}"


def test_binding_uses_the_current_accessors():
    binding = (CHAPTER / "src" / "binding.cpp").read_text()
    assert ".type()" not in binding and ".data<" not in binding
    assert "scalar_type()" in binding and "const_data_ptr<" in binding


def test_setup_py_install_is_deprecated():
    """`python setup.py install` (the seed's build) is deprecated by setuptools; the chapter builds with pip."""
    from setuptools import Distribution
    from setuptools.command.install import install

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            install(Distribution())
        except Exception as error:  # newer setuptools may raise once the deprecation's due date has passed
            caught.append(warnings.WarningMessage(str(error), DeprecationWarning, __file__, 0))
    assert any("setup.py install is deprecated" in str(w.message) for w in caught)

    makefile_rules = (CHAPTER.parents[1] / "common" / "chapter.mk").read_text()
    assert "-m pip install --no-build-isolation --no-deps --editable ." in makefile_rules
    assert "setup.py install" not in makefile_rules
    assert sys.executable  # the build runs with the same interpreter as the tests (PYTHON in python.mk)
