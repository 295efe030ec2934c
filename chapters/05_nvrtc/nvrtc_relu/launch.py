"""Launching a compiled kernel from Python with cuLaunchKernel, arguments packed once per call into a buffer that
is reused (the Python side of the exercise: exercises/launch.py is the student's copy).

cuLaunchKernel wants `kernelParams`: a C array of pointers, entry i holding the ADDRESS of the kernel's i-th
argument. Building that array from Python objects on every call (as `cuda.bindings` does for a tuple of
(values, ctypes types), or NumPy-based packing) costs tens of microseconds. Here each thread gets one buffer per
kernel, made once: a block of bytes holding the argument values, and the pointer array pointing into it. A call
then only writes the new values with `struct.pack_into` and passes the array's address (an int).

    layout for relu_forward(float *y, const float *x, long long n), format "<QQq":
      values:   [ y (8 bytes) | x (8 bytes) | n (8 bytes) ]
      pointers: [ &values[0]  | &values[8]  | &values[16] ]  -> kernelParams
"""

from __future__ import annotations

import ctypes
import struct
import threading

from cuda.bindings import driver  # imported once here: an import inside __call__ costs about 0.4 µs a launch

ITEMS_PER_THREAD = {"vector_add": 1, "relu_forward": 4, "relu_backward": 4}
# One struct format character per kernel argument: Q = a device pointer (unsigned 64-bit), q = long long.
ARGUMENT_FORMATS = {"vector_add": "QQQq", "relu_forward": "QQq", "relu_backward": "QQQq"}
MAX_GRID_X = 2**31 - 1


def grid_for(n: int, items_per_thread: int, block: int) -> int:
    """Blocks of `block` threads so that each group of `items_per_thread` elements gets a thread:
    ceil(ceil(n / items_per_thread) / block), at most MAX_GRID_X (the kernels' grid-stride loops cover the rest);
    0 when n == 0 (then nothing is launched)."""
    threads = -(-n // items_per_thread)
    return min(-(-threads // block), MAX_GRID_X)


def pack_args(argument_format: str, *values: int) -> bytes:
    """The kernel arguments' bytes as the kernel expects them: little-endian, no padding (all are 8 bytes)."""
    return struct.pack("<" + argument_format, *values)


def argument_offsets(argument_format: str) -> list[int]:
    """Where each argument starts in pack_args' bytes."""
    return [struct.calcsize("<" + argument_format[:i]) for i in range(len(argument_format))]


class Launcher:
    """One compiled kernel, ready to launch: `launcher(stream_handle, n, block, *values)`."""

    def __init__(self, function, name: str):
        self.function = function  # a cuda.bindings.driver.CUfunction
        # the same handle as a plain integer, for the launch from C (ops.c_launch); 0 for a plan without a kernel
        self.handle = 0 if function is None else int(function)
        self.name = name
        self.items_per_thread = ITEMS_PER_THREAD[name]
        self.format = ARGUMENT_FORMATS[name]
        self._struct = struct.Struct("<" + self.format)
        self._offsets = argument_offsets(self.format)
        self._local = threading.local()  # each thread packs into its own buffer
        self._streams: dict[int, object] = {}

    def _buffer(self):
        buffer = getattr(self._local, "buffer", None)
        if buffer is None:
            values = ctypes.create_string_buffer(self._struct.size)
            base = ctypes.addressof(values)
            pointers = (ctypes.c_void_p * len(self._offsets))(*(base + o for o in self._offsets))
            buffer = self._local.buffer = (values, pointers, ctypes.addressof(pointers))
        return buffer

    def _stream(self, handle: int):
        stream = self._streams.get(handle)
        if stream is None:
            stream = self._streams[handle] = driver.CUstream(handle)
        return stream

    def pack(self, *values: int) -> int:
        """Write the arguments into this thread's buffer; returns the address of the pointer array (kernelParams)."""
        values_buffer, _, params = self._buffer()
        self._struct.pack_into(values_buffer, 0, *values)
        return params

    def __call__(self, stream_handle: int, n: int, block: int, *values: int) -> None:
        """Launch on the stream whose CUstream handle is `stream_handle`; `values` are the kernel's arguments."""
        grid = grid_for(n, self.items_per_thread, block)
        if grid == 0:
            return
        params = self.pack(*values)
        (result,) = driver.cuLaunchKernel(
            self.function, grid, 1, 1, block, 1, 1, 0, self._stream(stream_handle), params, 0
        )
        if result != driver.CUresult.CUDA_SUCCESS:
            from .driver import DriverError, error_name

            raise DriverError(f"cuLaunchKernel({self.name}, grid={grid}, block={block}) failed: {error_name(result)}")
