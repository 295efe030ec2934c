"""The appendix's stable-ABI build: square_bias_cuda_stable._C, one .abi3.so for CPython >= 3.9 and torch >= 2.10.

Built by the chapter's Makefile (`make build`) with `pip install --no-build-isolation --no-deps --editable .` here.
It compiles the chapter's kernels (../src/square_bias_kernels.cu) again and links chapter 01's C core."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "common"))

from course.build import setup_extension  # noqa: E402

here = Path(__file__).resolve().parent
chapter = here.parent
chapter01 = chapter.parent / "01_c_extension"
setup_extension(
    "square_bias_cuda_stable",
    sources=["src/stable_binding.cpp", "../src/square_bias_kernels.cu"],
    cuda=True,
    include_dirs=[str(chapter / "src"), str(chapter01 / "src")],
    extra_objects=[str(chapter01 / "build" / "libsquare_bias.a")],
    # The newest stable API this code may use: 2.10 (the wheel then loads into torch 2.10 and every later one).
    # USE_CUDA declares the CUDA parts of the C shim (aoti_torch_get_current_cuda_stream).
    define_macros=[("TORCH_TARGET_VERSION", "0x020a000000000000"), ("USE_CUDA", None)],
    py_limited_api=True,
)
