"""Builds rowwise._C (or _C_exercise under EXERCISE=1): `make build` runs this through pip."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "common"))

from course.build import setup_extension  # noqa: E402

# online_softmax.h (the exercise file) is included as <online_softmax.h>: under EXERCISE=1 setup_extension puts
# exercises/ first on the include path. One file per rung family, so that ninja compiles them side by side.
setup_extension(
    "rowwise",
    sources=[
        "src/rowwise_binding.cpp",
        "src/rowwise_plan.cu",
        "src/softmax_1_naive.cu",
        "src/softmax_2_warp.cu",
        "src/softmax.cu",
        "src/norm_forward.cu",
        "src/norm_backward.cu",
    ],
    cuda=True,
    include_dirs=[str(HERE / "src")],
    extra_objects=[str(HERE / "build" / "librowwise_cpu.a")],  # the C code, built by the Makefile
    nvcc_flags=["-std=c++17"],
)
