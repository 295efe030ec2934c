/*
 * launch.c — the cuLaunchKernel call, spelled out (reference solution of the C exercise).
 *
 * The driver table `driver` of cuda_driver_loader.h is per file (static), so this file loads it for itself; after
 * the first call course_driver_load returns at once.
 */
#include "launch.h"

#include <stddef.h>

#include "cuda_driver_loader.h"
/* The launch returns the driver's result; the caller checks it with CU_CHECK / CU_TRY from here. */
#include "course_check.h"

launch_shape plan_elementwise(int64_t n, int64_t items_per_thread, unsigned int block) {
    launch_shape shape = {0u, block};
    if (n <= 0 || items_per_thread <= 0 || block == 0) return shape;
    const int64_t threads = (n + items_per_thread - 1) / items_per_thread;
    const int64_t blocks = (threads + (int64_t)block - 1) / (int64_t)block;
    shape.grid_x = blocks > (int64_t)LAUNCH_MAX_GRID_X ? LAUNCH_MAX_GRID_X : (unsigned int)blocks;
    return shape;
}

void relu_forward_args(void *args[3], CUdeviceptr *y, CUdeviceptr *x, int64_t *n) {
    args[0] = y; /* the kernel's first parameter, float *y: args[0] points at the variable holding the pointer */
    args[1] = x;
    args[2] = n;
}

CUresult launch_elementwise(CUfunction f, CUstream stream, launch_shape shape, void **args) {
    if (shape.grid_x == 0) return CUDA_SUCCESS; /* a 0-block grid is an error for the driver: skip it */
    char why[512];
    if (course_driver_load(why, sizeof why) != 0) return CUDA_ERROR_NO_DEVICE;
    return driver.cuLaunchKernel(f, shape.grid_x, 1, 1, /* grid: blocks in x, y, z */
                                 shape.block_x, 1, 1,   /* block: threads in x, y, z */
                                 0,                     /* dynamic shared memory in bytes */
                                 stream, args, NULL);   /* stream, kernel parameters, `extra` (unused) */
}
