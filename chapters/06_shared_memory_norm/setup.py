"""Builds norm_diff._C (or _C_exercise under EXERCISE=1): `make build` runs this through pip."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "common"))

from course.build import setup_extension  # noqa: E402

# norm_blocks.h (the exercise file) is included as <norm_blocks.h>: under EXERCISE=1 setup_extension puts
# exercises/ first on the include path.
setup_extension(
    "norm_diff",
    sources=["src/norm_diff_binding.cpp", "src/norm_diff_kernels.cu"],
    cuda=True,
    include_dirs=[str(HERE / "src")],
    extra_objects=[str(HERE / "build" / "libnorm_diff_cpu.a")],  # the C code, built by the Makefile
)
