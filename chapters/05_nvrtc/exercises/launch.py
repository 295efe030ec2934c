"""EXERCISE: launching a compiled kernel from Python with cuLaunchKernel. Under `EXERCISE=1` the package imports
this file instead of nvrtc_relu/launch.py. Read that file's docstring for the idea; fill in the three TODOs.

cuLaunchKernel wants `kernelParams`: a C array of pointers, entry i holding the ADDRESS of the kernel's i-th
argument. Each thread gets one buffer per kernel, made once: a block of bytes holding the argument values, and
the pointer array pointing into it; a call only writes the new values and passes the array's address (an int).

    layout for relu_forward(float *y, const float *x, long long n), format "<QQq":
      values:   [ y (8 bytes) | x (8 bytes) | n (8 bytes) ]
      pointers: [ &values[0]  | &values[8]  | &values[16] ]  -> kernelParams

Tests without a GPU: tests/test_launch_plan.py (grid sizes, the packed buffer). With a GPU: every op test.
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
    ceil(ceil(n / items_per_thread) / block), at most MAX_GRID_X; 0 when n == 0."""
    # TODO (2 lines): integer arithmetic only (no floats: n may exceed 2**53 in principle).
    return 0


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
            # TODO (2 lines): `pointers`, a ctypes array of c_void_p (ctypes.c_void_p * count), entry i holding
            # the address of argument i inside `values` (ctypes.addressof(values) + offset i).
            pointers = (ctypes.c_void_p * len(self._offsets))()
            buffer = self._local.buffer = (values, pointers, ctypes.addressof(pointers))
        return buffer

    def pack(self, *values: int) -> int:
        """Write the arguments into this thread's buffer; returns the address of the pointer array (kernelParams)."""
        values_buffer, _, params = self._buffer()
        # TODO (1 line): write `values` into values_buffer with self._struct.pack_into.
        return params

    def _stream(self, handle: int):
        stream = self._streams.get(handle)
        if stream is None:
            stream = self._streams[handle] = driver.CUstream(handle)
        return stream

    def __call__(self, stream_handle: int, n: int, block: int, *values: int) -> None:
        """Launch on the stream whose CUstream handle is `stream_handle`; `values` are the kernel's arguments."""
        grid = grid_for(n, self.items_per_thread, block)
        if grid == 0:
            return
        params = self.pack(*values)
        # TODO (about 3 lines): result = driver.cuLaunchKernel(function, grid x/y/z, block x/y/z, shared memory
        # bytes, stream (self._stream(stream_handle)), kernelParams (params), extra (0)) — it returns a 1-tuple.
        result = driver.CUresult.CUDA_ERROR_NOT_SUPPORTED
        if result != driver.CUresult.CUDA_SUCCESS:
            from nvrtc_relu.driver import DriverError, error_name

            raise DriverError(f"cuLaunchKernel({self.name}, grid={grid}, block={block}) failed: {error_name(result)}")
