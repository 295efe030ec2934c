"""Builds matmul._C (or _C_exercise under EXERCISE=1): `make build` runs this through pip."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "common"))

from course.build import setup_extension  # noqa: E402

# matmul_tile.cuh (the exercise file) is included as <matmul_tile.cuh>: under EXERCISE=1 setup_extension puts
# exercises/ first on the include path, so the kernels and the CPU emulation both compile the student's copy.
# matmul_tensor.cu (rungs 9-10) is built for TORCH_CUDA_ARCH_LIST like the rest; matmul_hopper.cu (rung 11) only
# for sm_90a, by the Makefile (torch's build gives every .cu file the same targets).
setup_extension(
    "matmul",
    sources=["src/matmul_binding.cpp", "src/matmul_kernels.cu", "src/matmul_tensor.cu", "src/matmul_emulate.cu"],
    cuda=True,
    include_dirs=[str(HERE / "src")],
    # The C code and rung 11 (sm_90a only), both built by the Makefile.
    extra_objects=[str(HERE / "build" / "libmatmul_cpu.a"), str(HERE / "build" / "libmatmul_hopper.a")],
)
