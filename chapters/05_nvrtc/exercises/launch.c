/*
 * launch.c — EXERCISE: the cuLaunchKernel call. `EXERCISE=1 make test` builds this file instead of src/launch.c.
 *
 * Read src/launch.h for what each function must do. The tests run `build/nvrtc_demo plan N BLOCK` (no GPU
 * needed) and compare your grid and argument array with the expected ones; on a GPU the demo then launches
 * vector add and ReLU with your code and checks the results.
 */
#include "launch.h"

#include <stddef.h>

#include "cuda_driver_loader.h"
/* The launch returns the driver's result; the caller checks it with CU_CHECK / CU_TRY from here. */
#include "course_check.h"

launch_shape plan_elementwise(int64_t n, int64_t items_per_thread, unsigned int block) {
    launch_shape shape = {0u, block};
    /* TODO (about 5 lines): threads = ceil(n / items_per_thread), grid_x = ceil(threads / block), capped at
     * LAUNCH_MAX_GRID_X. Leave grid_x at 0 when n <= 0 (or items_per_thread or block is 0). Use int64_t. */
    (void)n;
    (void)items_per_thread;
    return shape;
}

void relu_forward_args(void *args[3], CUdeviceptr *y, CUdeviceptr *x, int64_t *n) {
    /* TODO (3 lines): args[i] = the ADDRESS of the kernel's i-th argument, in the order relu_forward declares
     * them: (float *y, const float *x, long long n). */
    (void)args;
    (void)y;
    (void)x;
    (void)n;
}

CUresult launch_elementwise(CUfunction f, CUstream stream, launch_shape shape, void **args) {
    if (shape.grid_x == 0) return CUDA_SUCCESS; /* a 0-block grid is an error for the driver: skip it */
    char why[512];
    if (course_driver_load(why, sizeof why) != 0) return CUDA_ERROR_NO_DEVICE;
    /* TODO (about 4 lines): return driver.cuLaunchKernel(...) with the grid (shape.grid_x, 1, 1), the block
     * (shape.block_x, 1, 1), 0 bytes of dynamic shared memory, `stream`, `args` and NULL for `extra`. */
    (void)f;
    (void)stream;
    (void)args;
    return CUDA_ERROR_NOT_SUPPORTED;
}
