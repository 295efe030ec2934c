"""The Python exercise, checked without a GPU: the grid size and the kernelParams buffer given to cuLaunchKernel."""

import ctypes
import math
import struct

import pytest
from nvrtc_relu import ops

launch = ops.launch  # nvrtc_relu/launch.py, or exercises/launch.py under EXERCISE=1


@pytest.mark.parametrize("n", [0, 1, 3, 4, 5, 1023, 1024, 1025, 1000003, 2**33 + 3, 2**45])
@pytest.mark.parametrize("items", [1, 4])
@pytest.mark.parametrize("block", [128, 256, 1024])
def test_grid(n, items, block):
    assert launch.grid_for(n, items, block) == min(math.ceil(math.ceil(n / items) / block), 2**31 - 1)


@pytest.mark.parametrize("name", ["vector_add", "relu_forward", "relu_backward"])
def test_kernel_params_point_at_packed_values(name):
    launcher = launch.Launcher(function=None, name=name)  # no GPU needed: nothing is launched
    count = len(launch.ARGUMENT_FORMATS[name])
    values = [0x7F00_0000_0000 + 0x100 * i for i in range(count - 1)] + [2**33 + 5]  # pointers..., n
    params = launcher.pack(*values)
    pointers = (ctypes.c_void_p * count).from_address(params)
    for i, value in enumerate(values):
        assert pointers[i] is not None, f"kernelParams[{i}] is NULL"
        assert ctypes.c_int64.from_address(pointers[i]).value == value, f"kernelParams[{i}] points at a wrong value"
    assert launch.pack_args(launch.ARGUMENT_FORMATS[name], *values) == struct.pack(f"<{count - 1}Qq", *values)


def test_buffers_are_reused():
    launcher = launch.Launcher(function=None, name="relu_forward")
    assert launcher.pack(1, 2, 3) == launcher.pack(4, 5, 6)  # the same array each call: nothing allocated
