"""Builds the pitfall, pitfalls/ordinary_binding.cpp, the ordinary (non-stable) way, against the torch of the Python
that runs this script:  python pitfalls/build.py OUT_DIR   ->  OUT_DIR/square_bias_ordinary.cpython-*.so

As chapters 03-10 build their ops: torch's CUDAExtension, which links every library of that torch (libc10_cuda.so and
libtorch_cuda.so among them). Chapter 01's C core and the wheel's kernel (for sm_90 only) go in, as in the wheel."""

import sys
from pathlib import Path

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

here = Path(__file__).resolve().parent
chapter01 = here.parents[1] / "01_c_extension"
out = Path(sys.argv[1]).resolve()
setup(
    name="square-bias-ordinary",
    ext_modules=[
        CUDAExtension(
            "square_bias_ordinary",
            [str(here / "ordinary_binding.cpp"), str(here.parent / "src" / "square_bias_kernels.cu")],
            include_dirs=[
                str(chapter01 / "src"),
                str(here.parent / "src"),
                str(here.parents[2] / "common" / "include"),
            ],
            extra_objects=[str(chapter01 / "build" / "libsquare_bias.a")],
            extra_compile_args={"cxx": ["-O1"], "nvcc": ["-O3", "-gencode=arch=compute_90,code=sm_90"]},
        )
    ],
    cmdclass={"build_ext": BuildExtension},
    script_args=["-q", "build_ext", "--build-lib", str(out), "--build-temp", str(out / "temp")],
)
