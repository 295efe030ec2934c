"""Builds thread_index._C (or _C_exercise under EXERCISE=1): the recording kernels and their PyTorch ops.
`make build` runs it through pip; the CPU emulation is a separate plain-C library that the Makefile builds."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))

from course.build import setup_extension  # noqa: E402

setup_extension(
    "thread_index",
    sources=["src/record.cu", "src/binding.cpp"],
    cuda=True,
    # thread_index.h includes <grid3d_block3d.h>: setup_extension puts exercises/ before these under EXERCISE=1,
    # so the student's copy of that header replaces src/'s
    include_dirs=[str(Path(__file__).resolve().parent / "src")],
)
