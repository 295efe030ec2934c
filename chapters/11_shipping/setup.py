"""The wheel: course-square-bias-cu13-1.0.0-cp310-abi3-linux_x86_64.whl (`make wheel`).

One wheel for every CPython >= 3.10 (Python's limited API: the abi3 tag), every torch >= 2.11 (PyTorch's stable ABI,
TORCH_TARGET_VERSION below) and every GPU architecture in src/cuda_architectures.txt. Two libraries go in it:
  square_bias_wheel._C       the schema and the CPU implementation (needs no CUDA: loads beside a CPU-only torch)
  square_bias_wheel._C_cuda  the CUDA implementation (loaded by the package only where torch is a CUDA build)
The name carries the CUDA major version of the nvcc that builds it (cu13 here), as CuPy names cupy-cuda12x and
cupy-cuda13x: both variants install the same import package, square_bias_wheel.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

from setuptools import setup

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here.parents[1] / "common"))
from course.build import INCLUDE_DIR, chapter_source, exercise_mode  # noqa: E402
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension  # noqa: E402

VERSION = "1.0.0"
# The oldest torch whose stable ABI the code may use: the stable headers refuse, at compile time, any API newer than
# this, so the libraries load into torch 2.11 and every later release (for at least two years after 2.11: the C
# shim's promise). __init__.py refuses an older torch with a clear ImportError.
TORCH_TARGET = (2, 11)
PYTHON_TARGET = (3, 10)  # Py_LIMITED_API: the oldest CPython the abi3 libraries load into
chapter01 = here.parent / "01_c_extension"


def gpu_architectures(path: str) -> list[str]:
    """["7.5", ..., "12.0+PTX"] from src/cuda_architectures.txt (or the student's exercises/ copy)."""
    lines = (line.split("#")[0].strip() for line in Path(path).read_text().splitlines())
    archs = [line for line in lines if line]
    for arch in archs:
        if not re.fullmatch(r"\d+\.\d+(\+PTX)?", arch):
            raise SystemExit(f"{path}: {arch!r} is not an architecture like 9.0 or 12.0+PTX")
    return archs


def gencode_flags(archs: list[str]) -> list[str]:
    """-gencode=arch=compute_XY,code=sm_XY for each (SASS), and code=compute_XY for the +PTX ones (PTX)."""
    flags = []
    for arch in archs:
        number = arch.removesuffix("+PTX").replace(".", "")
        flags.append(f"-gencode=arch=compute_{number},code=sm_{number}")
        if arch.endswith("+PTX"):
            flags.append(f"-gencode=arch=compute_{number},code=compute_{number}")
    return flags


def nvcc_version() -> str:
    """ "13.0" for the nvcc that builds the CUDA library."""
    if CUDA_HOME is None:
        raise SystemExit("no CUDA toolkit found: set CUDA_HOME (e.g. CUDA_HOME=/usr/local/cuda)")
    out = subprocess.run([os.path.join(CUDA_HOME, "bin", "nvcc"), "--version"], capture_output=True, text=True).stdout
    return re.search(r"release (\d+\.\d+)", out).group(1)


archs = gpu_architectures(chapter_source("src/cuda_architectures.txt"))
cuda = nvcc_version()
cuda_major = int(cuda.split(".")[0])
# What the package checks at import (square_bias_wheel/_compat.py), written into the package before it is copied.
(here / "square_bias_wheel" / "_build_info.py").write_text(
    '"""Written by setup.py when the wheel was built."""\n\n'
    f"VERSION = {VERSION!r}\n"
    f"TORCH_TARGET = {TORCH_TARGET!r}  # the oldest torch whose stable ABI the libraries use\n"
    f"CUDA_VERSION = {cuda!r}  # the nvcc that compiled the kernels\n"
    f"CUDA_MAJOR = {cuda_major}  # torch's CUDA must have this major version\n"
    f"GPU_ARCHITECTURES = {tuple(archs)!r}\n"
)

# Py_LIMITED_API is defined by torch's BuildExtension for every extension with py_limited_api=True, as 0x030A0000
# (CPython 3.10's limited API, the floor torch itself supports); defining it here too made the compiler warn of a
# redefinition (an error under CI's -Werror). bdist_wheel's py_limited_api below names the wheel cp310-abi3 to match.
stable = [("TORCH_TARGET_VERSION", f"0x{TORCH_TARGET[0]:02x}{TORCH_TARGET[1]:02x}000000000000")]
include_dirs = [str(INCLUDE_DIR), str(here / "src"), str(chapter01 / "src")]
# Warnings on; CI (CI=true) turns them into errors only where the code is all ours (the kernels' .cu): torch's own
# stable headers, which the .cpp files include, have unused parameters (torch 2.14.1), as common/course/build.py says.
warnings = ["-Wall", "-Wextra"]
werror = ["-Werror"] if os.environ.get("CI") else []
# --as-needed: each library records only the shared libraries it really calls (libtorch_cpu.so for the C shim; for
# _C_cuda also libtorch_cuda.so and libcudart.so.13), not every library torch's build helpers put on the link line.
as_needed = ["-Wl,--as-needed", "-Wl,--strip-debug"]

setup(
    name=f"course-square-bias-cu{cuda_major}",
    version=VERSION,
    description="y = x*x + b as a PyTorch op: the course's chapter 11, an op shipped as one wheel",
    packages=["square_bias_wheel", "square_bias_wheel.tests"],
    python_requires=f">={PYTHON_TARGET[0]}.{PYTHON_TARGET[1]}",
    install_requires=[f"torch>={TORCH_TARGET[0]}.{TORCH_TARGET[1]}"],
    ext_modules=[
        CppExtension(
            "square_bias_wheel._C",
            ["src/square_bias_cpu.cpp"],
            include_dirs=include_dirs,
            extra_objects=[str(chapter01 / "build" / "libsquare_bias.a")],
            define_macros=stable,
            extra_compile_args={"cxx": ["-O2", *warnings]},
            extra_link_args=as_needed,
            py_limited_api=True,
        ),
        CUDAExtension(
            "square_bias_wheel._C_cuda",
            ["src/square_bias_cuda.cpp", "src/square_bias_kernels.cu"],
            include_dirs=include_dirs,
            # USE_CUDA declares the CUDA part of the C shim (aoti_torch_get_current_cuda_stream).
            define_macros=[*stable, ("USE_CUDA", None)],
            extra_compile_args={
                "cxx": ["-O2", *warnings],
                # Our -gencode flags replace torch's TORCH_CUDA_ARCH_LIST; --threads compiles the architectures
                # side by side.
                "nvcc": ["-O3", "--threads=0", f"-Xcompiler={','.join(warnings + werror)}", *gencode_flags(archs)],
            },
            extra_link_args=as_needed,
            py_limited_api=True,
        ),
    ],
    cmdclass={"build_ext": BuildExtension},
    options={
        "bdist_wheel": {"py_limited_api": f"cp{PYTHON_TARGET[0]}{PYTHON_TARGET[1]}"},
        # The reference and the student's build (EXERCISE=1) keep their objects apart.
        "build": {"build_base": f"build/setuptools-{'exercise' if exercise_mode() else 'reference'}"},
    },
)
