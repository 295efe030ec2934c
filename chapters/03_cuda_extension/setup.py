"""Builds square_bias_cuda._C (or _C_exercise under EXERCISE=1), a CUDAExtension: `make build` runs
`pip install --no-build-isolation --no-deps --editable .` here, which calls this file through setuptools.

The .cu file is compiled by nvcc, binding.cpp by the C++ compiler, and the CPU path links chapter 01's C core
(build/libsquare_bias.a there, made first by this chapter's Makefile)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))

from course.build import setup_extension  # noqa: E402

here = Path(__file__).resolve().parent
chapter01 = here.parent / "01_c_extension"
setup_extension(
    "square_bias_cuda",
    sources=["src/binding.cpp", "src/square_bias_kernels.cu"],
    cuda=True,
    include_dirs=[str(here / "src"), str(chapter01 / "src")],
    extra_objects=[str(chapter01 / "build" / "libsquare_bias.a")],
)
