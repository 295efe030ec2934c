"""The launch: cuLaunchKernel from Python through cuda.bindings (exercises/launch.py is the student's copy).

    CUresult cuLaunchKernel(CUfunction f,
                            unsigned gridDimX, unsigned gridDimY, unsigned gridDimZ,     // blocks
                            unsigned blockDimX, unsigned blockDimY, unsigned blockDimZ,  // threads per block
                            unsigned sharedMemBytes, CUstream hStream,
                            void **kernelParams, void **extra);

In C, kernelParams is an array of pointers: entry i holds the ADDRESS of the kernel's i-th argument, in the order
the kernel declares them (src/launch.c builds one). From Python, cuda.bindings builds that array for us from two
tuples, the argument values and their C types:

    relu_forward(float *y, const float *x, long long n)  ->  ((y_ptr, x_ptr, n), (c_void_p, c_void_p, c_longlong))

A device pointer is a c_void_p holding tensor.data_ptr(); `long long n` is a c_longlong. The driver cannot check
the arguments against the kernel: give it the wrong types or too few and the kernel reads garbage.
"""

from __future__ import annotations

import ctypes

from cuda.bindings import driver

from .driver import check

BLOCK = 256  # threads per block: any multiple of 32 up to the kernel's limit (1024 here) works
MAX_GRID_X = 2**31 - 1  # the largest grid in x; the kernels' grid-stride loops cover any n with fewer blocks

# Each kernel's parameters as C types, in the order src/kernels.cu declares them.
PARAMETER_TYPES = {
    # vector_add(float *c, const float *a, const float *b, long long n)
    "vector_add": (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_longlong),
    # relu_forward(float *y, const float *x, long long n)
    "relu_forward": (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_longlong),
    # relu_backward(float *gx, const float *gy, const float *x, long long n)
    "relu_backward": (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_longlong),
}
# Elements each thread handles per grid-stride step (the ReLU kernels load 4 floats at once).
ITEMS_PER_THREAD = {"vector_add": 1, "relu_forward": 4, "relu_backward": 4}


def grid_for(n: int, items_per_thread: int, block: int) -> int:
    """Blocks of `block` threads so that each group of `items_per_thread` elements gets a thread:
    ceil(ceil(n / items_per_thread) / block), at most MAX_GRID_X; 0 when n == 0 (then nothing is launched)."""
    threads = -(-n // items_per_thread)  # integer ceil division: n may be larger than a float holds exactly
    return min(-(-threads // block), MAX_GRID_X)


def kernel_arguments(name: str, *values: int) -> tuple[tuple[int, ...], tuple[type, ...]]:
    """The kernelParams that cuda.bindings' cuLaunchKernel takes: (the argument values, their C types)."""
    types = PARAMETER_TYPES[name]
    if len(values) != len(types):
        raise TypeError(f"kernel {name} takes {len(types)} arguments, got {len(values)}")
    return values, types


def launch(function, name: str, n: int, stream: int, *values: int, block: int = BLOCK) -> None:
    """Launch the kernel `name` (its CUfunction `function`) over n elements on `stream` (a CUstream handle as an
    int, e.g. torch.cuda.current_stream().cuda_stream). `values` are the kernel's arguments: data pointers and n.
    Raises DriverError when the driver refuses the launch."""
    grid = grid_for(n, ITEMS_PER_THREAD[name], block)
    if grid == 0:
        return  # nothing to do, and a grid of 0 blocks is an error for the driver
    (result,) = driver.cuLaunchKernel(
        function,
        grid, 1, 1,                        # grid: blocks in x, y, z
        block, 1, 1,                       # block: threads in x, y, z
        0,                                 # dynamic shared memory, bytes
        stream,                            # the stream: PyTorch's current one
        kernel_arguments(name, *values),   # kernelParams: (values, C types)
        0,                                 # extra: another way to pass the arguments, unused
    )  # fmt: skip
    check(result, f"cuLaunchKernel({name}, grid={grid}, block={block})")
