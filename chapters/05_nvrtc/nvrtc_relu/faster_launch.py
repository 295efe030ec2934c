"""Faster launching, measured: two ways to make a launch from Python cost less than launch.launch does.

launch.launch hands cuda.bindings the kernel's arguments as (values, C types). On every call the binding turns
those Python objects into C values, builds the array of pointers that cuLaunchKernel wants, and converts the
stream handle: microseconds of Python work around the driver's own. That is the path the op takes, because it
is the plain, documented one. At small sizes that time is most of a call, and two things cut it (`make bench`
prints what each buys, the lesson's "Faster launching, measured" shows a table):

1. PackedLauncher: the argument array built once per kernel and thread, a block of bytes for the values and
   an array of pointers into it. A call writes the new values with struct.pack_into and passes the array's
   address, an int, as kernelParams (cuda.bindings takes it as it is).

       layout for relu_forward(float *y, const float *x, long long n), format "<QQq":
         values:   [ y (8 bytes) | x (8 bytes) | n (8 bytes) ]
         pointers: [ &values[0]  | &values[8]  | &values[16] ]  -> kernelParams

2. The launch from C: nvrtc_relu._c_launch (src/launch_module.c with src/launch.c, the C demo's launch), a small
   module for Python's C API that takes plain integers, plans the grid and calls cuLaunchKernel. Python builds
   nothing for the launch. `make build` compiles it; import_c_launch() says so where it is not built.

relu_forward_packed and relu_forward_c are ops.relu_forward with each launch, for the benchmark and the tests. They
are not registered ops: the registered op, nvrtc_relu.relu, launches with launch.launch.
"""

from __future__ import annotations

import ctypes
import functools
import struct
import threading

import torch
from cuda.bindings import driver as cu

from . import driver, launch, ops

# One struct format character per kernel argument: Q = a device pointer (unsigned 64-bit), q = long long.
ARGUMENT_FORMATS = {"vector_add": "QQQq", "relu_forward": "QQq", "relu_backward": "QQQq"}


def argument_offsets(argument_format: str) -> list[int]:
    """Where each argument starts in the values buffer (all of the chapter's arguments are 8 bytes)."""
    return [struct.calcsize("<" + argument_format[:i]) for i in range(len(argument_format))]


class PackedLauncher:
    """One compiled kernel with its argument array built once per thread: `launcher(stream, n, *values)`."""

    def __init__(self, function, name: str, block: int = launch.BLOCK):
        self.function = function  # a cuda.bindings CUfunction (None for a launcher that only packs, in tests)
        self.name = name
        self.block = block
        self.items_per_thread = launch.ITEMS_PER_THREAD[name]
        self._struct = struct.Struct("<" + ARGUMENT_FORMATS[name])
        self._offsets = argument_offsets(ARGUMENT_FORMATS[name])
        self._local = threading.local()  # each thread writes into its own buffer
        self._streams: dict[int, object] = {}  # stream handle -> CUstream, built once

    def _buffer(self):
        buffer = getattr(self._local, "buffer", None)
        if buffer is None:
            values = ctypes.create_string_buffer(self._struct.size)
            base = ctypes.addressof(values)
            pointers = (ctypes.c_void_p * len(self._offsets))(*(base + o for o in self._offsets))
            buffer = self._local.buffer = (values, pointers, ctypes.addressof(pointers))
        return buffer

    def pack(self, *values: int) -> int:
        """Write the arguments into this thread's buffer; returns the address of the pointer array (kernelParams)."""
        values_buffer, _, params = self._buffer()
        self._struct.pack_into(values_buffer, 0, *values)
        return params

    def __call__(self, stream: int, n: int, *values: int) -> None:
        grid = launch.grid_for(n, self.items_per_thread, self.block)
        if grid == 0:
            return
        cu_stream = self._streams.get(stream)
        if cu_stream is None:
            cu_stream = self._streams[stream] = cu.CUstream(stream)
        params = self.pack(*values)
        (result,) = cu.cuLaunchKernel(self.function, grid, 1, 1, self.block, 1, 1, 0, cu_stream, params, 0)
        driver.check(result, f"cuLaunchKernel({self.name}, grid={grid}, block={self.block})")


_packed: dict[tuple[int, str], PackedLauncher] = {}


def packed_launcher(device: int, name: str) -> PackedLauncher:
    """The PackedLauncher of kernel `name` on `device` (the op's compiled module), made once."""
    launcher = _packed.get((device, name))
    if launcher is None:
        launcher = _packed[(device, name)] = PackedLauncher(ops.kernels(device)[name], name)
    return launcher


def relu_forward_packed(x: torch.Tensor) -> torch.Tensor:
    """ops.relu_forward, launched with a PackedLauncher."""
    ops.check_input("x", x)
    y = torch.empty_like(x)
    n = x.numel()
    if n:
        device = x.get_device()
        launcher = packed_launcher(device, "relu_forward")
        stream = torch.cuda.current_stream(device).cuda_stream
        with driver.in_primary_context(device):
            launcher(stream, n, y.data_ptr(), x.data_ptr(), n)
    return y


@functools.cache
def import_c_launch():
    """nvrtc_relu._c_launch.launch(function, stream, n, items_per_thread, block, *arguments): cuLaunchKernel from C,
    imported once. Raises ImportError, saying how to build it, where `make build` has not compiled it."""
    try:
        from ._c_launch import launch as c_launch
    except ImportError as error:
        raise ImportError(
            f"nvrtc_relu._c_launch is not built: run `make build` in chapters/05_nvrtc ({error})"
        ) from error
    return c_launch


_function_handles: dict[tuple[int, str], int] = {}  # (device, kernel) -> the CUfunction as a plain int, for C


def function_handle(device: int, name: str) -> int:
    handle = _function_handles.get((device, name))
    if handle is None:
        handle = _function_handles[(device, name)] = int(ops.kernels(device)[name])
    return handle


def relu_forward_c(x: torch.Tensor) -> torch.Tensor:
    """ops.relu_forward, launched from C (nvrtc_relu._c_launch). The C module raises DriverError as check() does."""
    c_launch = import_c_launch()
    ops.check_input("x", x)
    y = torch.empty_like(x)
    n = x.numel()
    if n:
        device = x.get_device()
        function = function_handle(device, "relu_forward")
        stream = torch.cuda.current_stream(device).cuda_stream
        items = launch.ITEMS_PER_THREAD["relu_forward"]
        with driver.in_primary_context(device):
            c_launch(function, stream, n, items, launch.BLOCK, y.data_ptr(), x.data_ptr(), n)
    return y
