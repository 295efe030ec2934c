"""Builds thread_index._C (or _C_exercise under EXERCISE=1): the recording kernels and their PyTorch ops.
`make build` runs it through pip; the CPU emulation is a separate plain-C library that the Makefile builds."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))

from course.build import exercise_mode, setup_extension  # noqa: E402

setup_extension(
    "thread_index",
    sources=["src/record.cu", "src/binding.cpp"],
    cuda=True,
    include_dirs=[str(Path(__file__).resolve().parent / "src")],
    # the exercise's 3D-grid, 3D-block formula replaces the reference one (see src/thread_index.h)
    define_macros=[("THREAD_INDEX_EXERCISE", "1")] if exercise_mode() else [],
)
