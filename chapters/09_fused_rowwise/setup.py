"""Builds rowwise._C (or _C_exercise under EXERCISE=1): `make build` runs this through pip."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "common"))

from course.build import setup_extension  # noqa: E402

# online_softmax.h (the exercise file) is included as <online_softmax.h>: under EXERCISE=1 setup_extension puts
# exercises/ first on the include path. The kernels are three .cu files so that ninja compiles them side by side.
setup_extension(
    "rowwise",
    sources=[
        "src/rowwise_binding.cpp",
        "src/softmax_kernels.cu",
        "src/norm_kernels.cu",
        "src/rowwise_launch.cu",
    ],
    cuda=True,
    include_dirs=[str(HERE / "src")],
    extra_objects=[str(HERE / "build" / "librowwise_cpu.a")],  # the C code, built by the Makefile
    nvcc_flags=["-std=c++17"],
)
