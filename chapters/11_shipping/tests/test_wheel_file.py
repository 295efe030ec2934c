"""The wheel file: one file for every CPython >= 3.10, only our code in it, the size the lesson states."""

import re
import shutil
import subprocess
import zipfile

import pytest

from conftest import CHAPTER

LIBRARIES = ["square_bias_wheel/_C.abi3.so", "square_bias_wheel/_C_cuda.abi3.so"]


def test_the_name_says_cuda_13_and_abi3(wheel):
    """name-version-python-abi-platform: cp310-abi3 is 'CPython >= 3.10, limited API'; cu13 is the CUDA variant."""
    assert re.fullmatch(r"course_square_bias_cu13-1\.0\.0-cp310-abi3-linux_x86_64\.whl", wheel.name), wheel.name


def test_only_our_files_are_inside(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    libraries = sorted(n for n in names if ".so" in n)
    assert libraries == LIBRARIES, "torch's and CUDA's libraries must not be bundled: torch brings them"


def needed(path):
    out = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True, check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", out)


@pytest.mark.skipif(shutil.which("readelf") is None, reason="readelf (binutils) not installed")
def test_what_each_library_needs_at_load(unpacked):
    """_C needs no CUDA library (it loads beside a CPU-only torch); _C_cuda needs the CUDA runtime of major 13 and
    libtorch_cuda, both of which a CUDA 13 build of torch has already loaded. Neither needs libtorch_python (the
    limited API) nor a Python library of one version."""
    cpu, gpu = (needed(unpacked / lib) for lib in LIBRARIES)
    assert not [n for n in cpu if "cuda" in n]
    assert "libcudart.so.13" in gpu and "libtorch_cuda.so" in gpu
    assert not [n for n in cpu + gpu if "python" in n]


@pytest.mark.skipif(shutil.which("nm") is None, reason="nm (binutils) not installed")
def test_no_cpp_symbol_of_torch_is_used(unpacked):
    """What makes the libraries survive a torch upgrade: they call only C functions of libtorch (aoti_torch_*,
    torch_*), never a C++ symbol (c10::, at::, torch::) whose name or layout changes between releases."""
    for lib in LIBRARIES:
        out = subprocess.run(["nm", "-D", "--undefined-only", str(unpacked / lib)], capture_output=True, text=True)
        cpp = [s for s in out.stdout.split() if re.match(r"_ZN?K?(3c10|2at|5torch)", s)]
        assert cpp == [], f"{lib} uses C++ symbols of torch: {cpp[:5]}"


def test_the_lesson_states_the_wheel_size(wheel):
    """The lesson keeps the size: a wheel that grows (an architecture more, debug info) shows in this test."""
    stated = re.search(r"The wheel weighs ([\d,]+) bytes", (CHAPTER / "README.md").read_text())
    assert stated, "README.md should say 'The wheel weighs N bytes'"
    size = wheel.stat().st_size
    assert abs(size - int(stated.group(1).replace(",", ""))) <= 0.1 * size, f"the wheel is now {size:,} bytes"
