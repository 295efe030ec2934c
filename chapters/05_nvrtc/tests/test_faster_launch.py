"""Faster launching (nvrtc_relu/faster_launch.py): the argument array built once, and the launch from C. Both must
give what the plain launch gives; packing and the C module's argument checks are tested without a GPU."""

import ctypes
import struct

import nvrtc_relu
import pytest
import torch
from nvrtc_relu import faster_launch


def _input(n, seed=0):
    g = torch.Generator(device="cpu").manual_seed(seed)
    x = torch.randn(n, generator=g)
    if n > 8:
        x[:4] = torch.tensor([0.0, -0.0, float("inf"), float("-inf")])
        x[5] = float("nan")
    return x.to("cuda")


# ---- the argument array built once ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["vector_add", "relu_forward", "relu_backward"])
def test_kernel_params_point_at_packed_values(name):
    launcher = faster_launch.PackedLauncher(function=None, name=name)  # no GPU needed: nothing is launched
    count = len(faster_launch.ARGUMENT_FORMATS[name])
    values = [0x7F00_0000_0000 + 0x100 * i for i in range(count - 1)] + [2**33 + 5]  # pointers..., n
    params = launcher.pack(*values)
    pointers = (ctypes.c_void_p * count).from_address(params)
    for i, value in enumerate(values):
        assert pointers[i] is not None, f"kernelParams[{i}] is NULL"
        assert ctypes.c_int64.from_address(pointers[i]).value == value, f"kernelParams[{i}] points at a wrong value"
    assert bytes((ctypes.c_char * (8 * count)).from_address(pointers[0])) == struct.pack(f"<{count - 1}Qq", *values)


def test_buffers_are_reused():
    launcher = faster_launch.PackedLauncher(function=None, name="relu_forward")
    assert launcher.pack(1, 2, 3) == launcher.pack(4, 5, 6)  # the same array each call: nothing allocated


# ---- the launch from C --------------------------------------------------------------------------------------------
def test_the_c_launcher_is_built():
    """`make build` compiles nvrtc_relu._c_launch (in both variants: it is not the exercise)."""
    assert callable(faster_launch.import_c_launch())


def test_the_c_launcher_checks_its_arguments():
    c_launch = faster_launch.import_c_launch()
    with pytest.raises(TypeError, match="takes 5 to 13 arguments"):
        c_launch(1, 0, 8)
    with pytest.raises(TypeError):
        c_launch(1, 0, 8, 4, 256, "not a pointer")
    with pytest.raises(ValueError, match="null CUfunction"):
        c_launch(0, 0, 8, 4, 256, 1, 2, 8)
    with pytest.raises(ValueError, match="1 <= block <= 1024"):
        c_launch(1, 0, 8, 4, 2048, 1, 2, 8)
    c_launch(1, 0, 0, 4, 256, 1, 2, 0)  # n == 0: nothing to launch, nothing reaches the driver


def test_c_launcher_without_a_driver_says_so():
    from course.gpu import gpu_available

    if gpu_available():
        pytest.skip("a driver is loaded here: the launcher's driver errors are the GPU tests' business")
    with pytest.raises(nvrtc_relu.NoDriverError, match="no NVIDIA driver"):
        faster_launch.import_c_launch()(1, 0, 8, 4, 256, 1, 2, 8)


@pytest.mark.gpu
def test_c_launcher_refuses_the_wrong_number_of_arguments():
    """cuLaunchKernel reads as many argument pointers as the kernel declares, whatever it is given: too few would
    make it read past the array. The C launcher asks the driver for the count first."""
    c_launch = faster_launch.import_c_launch()
    x = _input(8)
    y = torch.empty_like(x)
    function = faster_launch.function_handle(0, "relu_forward")
    with pytest.raises(ValueError, match="the kernel declares 3 parameters, but 2 arguments were given"):
        c_launch(function, 0, 8, 4, 256, y.data_ptr(), x.data_ptr())
    with pytest.raises(ValueError, match="declares 3 parameters, but 4"):
        c_launch(function, 0, 8, 4, 256, y.data_ptr(), x.data_ptr(), 8, 8)


# ---- all launches agree ---------------------------------------------------------------------------------------------
@pytest.mark.gpu
@pytest.mark.parametrize("n", [0, 1, 5, 4097, 1_000_003])
def test_faster_launches_match_the_plain_one(n):
    x = _input(n) if n else torch.empty(0, device="cuda")
    want = nvrtc_relu.relu_forward(x)
    for launched in (faster_launch.relu_forward_packed(x), faster_launch.relu_forward_c(x)):
        torch.testing.assert_close(launched, want, equal_nan=True, rtol=0, atol=0)
    torch.testing.assert_close(want, torch.relu(x), equal_nan=True, rtol=0, atol=0)
