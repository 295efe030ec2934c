"""NVRTC from Python: runs without a GPU, so all of this is tested everywhere."""

import nvrtc_relu
import pytest
from nvrtc_relu import compiler


def test_ptx_contains_the_kernels():
    ptx = nvrtc_relu.compile_ptx(arch="compute_90")
    assert ptx.startswith("//") and ".target sm_90" in ptx
    assert nvrtc_relu.ptx_entries(ptx) == ["vector_add", "relu_forward", "relu_backward"]


def test_cubin_for_a_real_architecture():
    ptx, cubin, _ = compiler.compile_source(compiler.kernels_source(), "sm_90")
    assert cubin is not None and cubin[:4] == b"\x7fELF"
    assert b".entry relu_forward" in ptx
    _, no_cubin, _ = compiler.compile_source(compiler.kernels_source(), "compute_90")
    assert no_cubin is None  # a virtual architecture has no machine code


def test_compile_error_carries_nvrtc_log():
    source = 'extern "C" __global__ void k(float *y) {\n    y[0] = 1.0f\n}\n'
    with pytest.raises(nvrtc_relu.CompileError) as info:
        nvrtc_relu.compile_ptx(source, name="bad.cu")
    assert 'bad.cu(3): error: expected a ";"' in str(info.value)
    assert "error" in info.value.log


def test_unknown_option_is_an_error():
    with pytest.raises((nvrtc_relu.CompileError, RuntimeError)):
        nvrtc_relu.compile_ptx(options=("--no-such-option",))


def test_compiles_are_cached():
    compiler.compile_source.cache_clear()
    compiler.compile_ptx(arch="compute_90")
    compiler.compile_ptx(arch="compute_90")
    info = compiler.compile_source.cache_info()
    assert info.misses == 1 and info.hits == 1
    compiler.compile_ptx(arch="compute_80")  # another option set is another entry
    assert compiler.compile_source.cache_info().misses == 2


def test_no_driver_is_a_clean_reason():
    import torch

    reason = nvrtc_relu.driver_skip_reason()
    if torch.cuda.is_available():
        assert reason == ""
    else:
        assert reason.startswith(("no NVIDIA driver", "the NVIDIA driver sees no GPU"))


MANGLED_SOURCE = "__global__ void vector_add(const float *a, const float *b, float *c, long long n) {}\n"


def test_missing_kernel_message_names_the_mangled_entry_and_the_fix():
    # No extern "C": the PTX entry is vector_add's C++ name, and cuModuleGetFunction("vector_add") finds nothing.
    ptx = nvrtc_relu.compile_ptx(MANGLED_SOURCE, name="mangled.cu")
    (entry,) = nvrtc_relu.ptx_entries(ptx)
    assert entry.startswith("_Z") and "vector_add" in entry
    message = compiler.missing_kernel_message("vector_add", ptx)
    assert "no kernel named 'vector_add'" in message
    assert entry in message
    assert 'extern "C"' in message and "nvrtcGetLoweredName" in message


def test_missing_kernel_message_for_a_misspelled_name():
    message = compiler.missing_kernel_message("relu_fwd", nvrtc_relu.compile_ptx())
    assert "relu_forward" in message and "relu_backward" in message
    assert "Check the spelling" in message


@pytest.mark.gpu
def test_driver_error_for_a_mangled_kernel_lists_the_entries():
    import torch
    from nvrtc_relu import ops

    with pytest.raises(nvrtc_relu.DriverError) as info:
        ops.kernels(torch.cuda.current_device(), source=MANGLED_SOURCE)
    text = str(info.value)
    assert "CUDA_ERROR_NOT_FOUND" in text and "no kernel named 'vector_add'" in text and "_Z" in text
