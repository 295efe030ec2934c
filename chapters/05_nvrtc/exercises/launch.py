"""EXERCISE: the launch, cuLaunchKernel from Python through cuda.bindings. Under `EXERCISE=1` the package imports
this file as nvrtc_relu.launch instead of nvrtc_relu/launch.py (the op calls its `launch`); fill in the TODOs.

    CUresult cuLaunchKernel(CUfunction f,
                            unsigned gridDimX, unsigned gridDimY, unsigned gridDimZ,     // blocks
                            unsigned blockDimX, unsigned blockDimY, unsigned blockDimZ,  // threads per block
                            unsigned sharedMemBytes, CUstream hStream,
                            void **kernelParams, void **extra);

In C, kernelParams is an array of pointers: entry i holds the ADDRESS of the kernel's i-th argument, in the order
the kernel declares them. From Python, cuda.bindings builds that array for us from two tuples, the argument values
and their C types (ctypes):

    vector_add(float *c, const float *a, const float *b, long long n)
        ->  ((c_ptr, a_ptr, b_ptr, n), (c_void_p, c_void_p, c_void_p, c_longlong))

Tests without a GPU: tests/test_launch_plan.py (grid sizes, the C types against src/kernels.cu). With a GPU:
every op test, since the op launches through this file.
"""

from __future__ import annotations

import ctypes

from cuda.bindings import driver

from .driver import check  # this file is imported as nvrtc_relu.launch

BLOCK = 256  # threads per block: any multiple of 32 up to the kernel's limit (1024 here) works
MAX_GRID_X = 2**31 - 1  # the largest grid in x; the kernels' grid-stride loops cover any n with fewer blocks

# Each kernel's parameters as C types, in the order src/kernels.cu declares them.
PARAMETER_TYPES = {
    # vector_add(float *c, const float *a, const float *b, long long n)
    "vector_add": (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_longlong),
    # TODO (2 lines): the C types of relu_forward's and relu_backward's parameters. Read their declarations in
    # src/kernels.cu: a pointer (float *, const float *) is passed as ctypes.c_void_p, a long long as
    # ctypes.c_longlong.
    "relu_forward": (),
    "relu_backward": (),
}
# Elements each thread handles per grid-stride step (the ReLU kernels load 4 floats at once).
ITEMS_PER_THREAD = {"vector_add": 1, "relu_forward": 4, "relu_backward": 4}


def grid_for(n: int, items_per_thread: int, block: int) -> int:
    """Blocks of `block` threads so that each group of `items_per_thread` elements gets a thread:
    ceil(ceil(n / items_per_thread) / block), at most MAX_GRID_X; 0 when n == 0 (then nothing is launched)."""
    # TODO (2 lines): integer arithmetic only (no floats: n may be larger than a float holds exactly).
    # Hint: ceil(a / b) == -(-a // b) for integers.
    return 0


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
    # TODO (about 8 lines): (result,) = driver.cuLaunchKernel(...) with, in order: the function; the grid in x, y,
    # z (grid, 1, 1); the block in x, y, z (block, 1, 1); 0 bytes of dynamic shared memory; the stream;
    # kernelParams, which kernel_arguments(name, *values) builds; and 0 for `extra`. It returns a 1-tuple.
    result = driver.CUresult.CUDA_ERROR_NOT_SUPPORTED
    check(result, f"cuLaunchKernel({name}, grid={grid}, block={block})")
