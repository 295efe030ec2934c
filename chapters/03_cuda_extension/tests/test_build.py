"""The build: a CUDAExtension with device code, loadable without a GPU, with both implementations registered."""

import shutil
import subprocess

import pytest
import torch
from course.build import import_extension


def test_extension_imports_without_a_gpu():
    module = import_extension("square_bias_cuda")
    assert module.__name__.startswith("square_bias_cuda._C")
    for op in ("square_bias", "square_bias_backward", "square_bias_grad_x"):
        assert hasattr(torch.ops.square_bias_cuda, op)


@pytest.mark.skipif(shutil.which("readelf") is None, reason="readelf (binutils) not installed")
def test_library_holds_gpu_code():
    """nvcc compiled the .cu file: the shared library carries a fat binary (the GPU code) section."""
    path = import_extension("square_bias_cuda").__file__
    sections = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True, check=True).stdout
    assert ".nv_fatbin" in sections


def test_cpp_extension_lacks_what_cuda_needs():
    """The seed's pitfall: CppExtension for a .cu file. It adds neither CUDA's include directory nor the CUDA
    libraries (cudart, c10_cuda, torch_cuda), so the binding cannot find cuda_runtime.h, or the module fails to
    load with an undefined symbol. CUDAExtension adds them."""
    from torch.utils.cpp_extension import CppExtension, CUDAExtension

    cpp = CppExtension("m", ["k.cu"])
    cuda = CUDAExtension("m", ["k.cu"])
    for library in ("cudart", "c10_cuda", "torch_cuda"):
        assert library in cuda.libraries and library not in cpp.libraries
    assert set(cuda.include_dirs) > set(cpp.include_dirs)  # + the toolkit's include directory
