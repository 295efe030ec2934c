/*
 * launch.h — planning and making a cuLaunchKernel call (the C exercise lives in launch.c).
 *
 * cuLaunchKernel takes the grid and block sizes, the stream, and the kernel's arguments as an array of
 * pointers: args[i] holds the ADDRESS of the i-th argument, in the order the kernel declares them.
 */
#ifndef NVRTC_DEMO_LAUNCH_H
#define NVRTC_DEMO_LAUNCH_H

#include <cuda.h>
#include <stdint.h>

typedef struct {
    unsigned int grid_x;  /* blocks in the grid (0: nothing to do, do not launch) */
    unsigned int block_x; /* threads per block */
} launch_shape;

/* Largest grid_x a launch may use. The kernels loop with a grid stride, so a capped grid still covers all n. */
#define LAUNCH_MAX_GRID_X 2147483647u

/* Blocks of `block` threads that give every group of `items_per_thread` elements of n its own thread:
 * ceil(ceil(n / items_per_thread) / block), capped at LAUNCH_MAX_GRID_X; 0 when n == 0. */
launch_shape plan_elementwise(int64_t n, int64_t items_per_thread, unsigned int block);

/* Fill args with the addresses of relu_forward(float *y, const float *x, long long n)'s arguments. */
void relu_forward_args(void *args[3], CUdeviceptr *y, CUdeviceptr *x, int64_t *n);

/* Launch f with `shape` on `stream`: no dynamic shared memory, `args` as kernel parameters. A shape with
 * grid_x == 0 launches nothing and returns CUDA_SUCCESS. Returns the driver's result unchanged. */
CUresult launch_elementwise(CUfunction f, CUstream stream, launch_shape shape, void **args);

#endif /* NVRTC_DEMO_LAUNCH_H */
