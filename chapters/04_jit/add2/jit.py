"""add2 loaded just in time, two ways, plus a tiny CPU extension that shows the JIT's cache without a GPU.

    load_from_files()    torch.utils.cpp_extension.load: src/add2_pybind.cpp + the two .cu files (through
                         course.build.jit_load, which adds the course's include directory and flags)
    load_from_strings()  torch.utils.cpp_extension.load_inline: the seed's kernel and a binding held in strings
    load_cpu_demo()      load_inline of a 3-line C++ function: builds in seconds on a machine without a GPU

What the JIT does (torch/utils/cpp_extension.py):
  1. picks a build directory: $TORCH_EXTENSIONS_DIR/<name> (default ~/.cache/torch_extensions/py311_cu130/<name>;
     this chapter points TORCH_EXTENSIONS_DIR at build/torch_extensions unless you set it);
  2. hashes the sources and the flags: if they changed since the last build of <name> in this process's view, the
     version goes up and the module is named <name>_v1, <name>_v2, ...;
  3. writes build.ninja there and runs ninja, which recompiles only what changed (nothing, when cached);
  4. imports the .so as a Python module (or, with is_python_module=False, loads it as a plain library).
A file lock in the build directory keeps two processes from building the same module at once.
"""

from __future__ import annotations

import ctypes
import inspect
import os
from pathlib import Path

import torch
from course.build import (
    CXX_FLAGS,
    INCLUDE_DIR,
    NVCC_FLAGS,
    chapter_source,
    exercise_mode,
    jit_load,
    prepare_build_environment,
)

prepare_build_environment()

CHAPTER_DIR = Path(__file__).resolve().parents[1]
SRC_DIR = CHAPTER_DIR / "src"
DEFAULT_EXTENSIONS_DIR = CHAPTER_DIR / "build" / "torch_extensions"


def extensions_dir() -> Path:
    """Where the JIT builds: $TORCH_EXTENSIONS_DIR, set to the chapter's build/torch_extensions if unset."""
    os.environ.setdefault("TORCH_EXTENSIONS_DIR", str(DEFAULT_EXTENSIONS_DIR))
    path = Path(os.environ["TORCH_EXTENSIONS_DIR"])
    path.mkdir(parents=True, exist_ok=True)
    return path


def _name(base: str) -> str:
    """The reference and the exercise builds get different names, so switching between them rebuilds nothing."""
    return f"{base}_exercise" if exercise_mode() else base


def _seed_source() -> Path:
    return Path(chapter_source("src/add2_seed.cu", CHAPTER_DIR))


def _no_implicit_headers() -> dict:
    """load_inline prepends #include <torch/extension.h> (about 90 s of compiling on 2 cores) unless told not to;
    no_implicit_headers=True (newer torch) skips it. Our sources include what they need themselves."""
    from torch.utils.cpp_extension import load_inline

    return {"no_implicit_headers": True} if "no_implicit_headers" in inspect.signature(load_inline).parameters else {}


def load_from_files(verbose: bool = False):
    """The pybind11 module add2_jit_files: .add2(a, b) (vectorized) and .add2_seed(a, b), built from files."""
    extensions_dir()
    sources = [SRC_DIR / "add2_pybind.cpp", _seed_source(), SRC_DIR / "add2_vec.cu"]
    return jit_load(_name("add2_jit_files"), sources, extra_include_paths=[str(SRC_DIR)], verbose=verbose)


INLINE_BINDING = r"""
// The binding, held in a Python string: pybind11 + the at::Tensor converter, and add2_torch.h's glue.
#include <torch/csrc/utils/pybind.h>
#include "add2_torch.h"

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("add2_seed", &add2_torch::add2_seed, "c = a + b, the seed's kernel (load_inline)");
}
"""


def load_from_strings(verbose: bool = False):
    """The module add2_jit_inline: .add2_seed(a, b), built by load_inline from two strings — the seed's kernel
    (the text of src/add2_seed.cu) and INLINE_BINDING. load_inline writes them to main.cpp and cuda.cu in the build
    directory; from there on it is load()."""
    from torch.utils.cpp_extension import load_inline

    extensions_dir()
    return load_inline(
        name=_name("add2_jit_inline"),
        cpp_sources=[INLINE_BINDING],
        cuda_sources=[_seed_source().read_text()],
        extra_include_paths=[str(SRC_DIR), str(INCLUDE_DIR)],
        extra_cflags=list(CXX_FLAGS),
        extra_cuda_cflags=list(NVCC_FLAGS),
        with_cuda=True,
        verbose=verbose,
        **_no_implicit_headers(),
    )


CPU_DEMO_SOURCE = r"""
// add2 on the CPU: the smallest extension torch's JIT can build (no PyTorch headers, one C function).
#include <stdint.h>
extern "C" void add2_cpu(float *c, const float *a, const float *b, int64_t n) {
    for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
"""


class CpuDemo:
    """The CPU demo library, called through ctypes: .add2(a, b) on float32 CPU tensors; .path is the .so."""

    def __init__(self, path: str):
        self.path = path
        self._lib = ctypes.CDLL(path)
        self._lib.add2_cpu.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int64]
        self._lib.add2_cpu.restype = None

    def add2(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        from course import check_same, check_tensor

        check_tensor("a", a, dtypes=(torch.float32,), device="cpu")
        check_tensor("b", b, dtypes=(torch.float32,), device="cpu")
        check_same(a=a, b=b, attributes=("shape",))
        a, b = a.contiguous(), b.contiguous()
        c = torch.empty_like(a)
        self._lib.add2_cpu(c.data_ptr(), a.data_ptr(), b.data_ptr(), a.numel())
        return c


def load_cpu_demo(verbose: bool = False, source: str = CPU_DEMO_SOURCE, name: str = "add2_cpu_demo") -> CpuDemo:
    """Build (or reuse) the CPU demo with load_inline. is_python_module=False: the result is a plain shared
    library, which load_inline loads into the process and whose path it returns."""
    from torch.utils.cpp_extension import load_inline

    extensions_dir()
    path = load_inline(
        name=name,
        cpp_sources=[source],
        extra_cflags=list(CXX_FLAGS),
        with_cuda=False,
        is_python_module=False,
        verbose=verbose,
        **_no_implicit_headers(),
    )
    return CpuDemo(path)
