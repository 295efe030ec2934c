/*
 * add2_seed.cu — version 1 of c = a + b: the seed's kernel (NN-CUDA-Example's add2), made 64-bit safe.
 *
 * Work split: a 1D grid of 1024-thread blocks. Thread t of block b starts at element b * 1024 + t and steps by
 * the number of threads in the whole grid (gridDim.x * blockDim.x) until it passes n: a grid-stride loop, so any
 * grid size covers any n. The launcher asks for ceil(n / 1024) blocks, i.e. one element per thread.
 *
 * The loop lives in add2_seed_thread(), a __host__ __device__ function: the kernel calls it on the GPU and
 * add2_seed_emulate_f32() calls it on the CPU for every (block, thread) of a launch, which lets the tests check
 * the loop on a machine without a GPU.
 */
#include "add2.h"
#include "add2_math.cuh"
#include "course_check.h"
#include "course_launch.cuh"

/* What one GPU thread does: every element it owns in a grid of grid_dim blocks of block_dim threads. */
template <typename T>
__host__ __device__ inline void add2_seed_thread(T *c, const T *a, const T *b, int64_t n, int64_t block_idx,
                                                 int64_t block_dim, int64_t grid_dim, int64_t thread_idx) {
    const int64_t stride = grid_dim * block_dim;  // threads in the whole grid
    for (int64_t i = block_idx * block_dim + thread_idx; i < n; i += stride) {
        c[i] = add2_sum(a[i], b[i]);
    }
}

template <typename T>
__global__ void add2_seed_kernel(T *c, const T *a, const T *b, int64_t n) {
    add2_seed_thread(c, a, b, n, blockIdx.x, blockDim.x, gridDim.x, threadIdx.x);
}

static const int kSeedThreads = 1024;        // the seed's block size
static const int64_t kMaxGrid = 2147483647;  // gridDim.x limit (2^31 - 1)

template <typename T>
static cudaError_t launch(void *c, const void *a, const void *b, int64_t n, cudaStream_t stream) {
    int64_t blocks = (n + kSeedThreads - 1) / kSeedThreads;  // the seed used int here: wrong past 2^31 elements
    if (blocks > kMaxGrid) blocks = kMaxGrid;
    add2_seed_kernel<T><<<(unsigned)blocks, kSeedThreads, 0, stream>>>((T *)c, (const T *)a, (const T *)b, n);
    return cudaGetLastError();
}

extern "C" cudaError_t add2_seed_launch(void *c, const void *a, const void *b, int64_t n, course_dtype dtype,
                                        cudaStream_t stream) {
    if (n <= 0) return cudaSuccess;  // a launch of 0 blocks is an error; nothing to do anyway
    // launch<T> for the C++ type that dtype names (cudaErrorInvalidValue for a value outside the enum)
    return course::with_element_type(dtype, [&](auto zero) { return launch<decltype(zero)>(c, a, b, n, stream); });
}

extern "C" void add2_seed_emulate_f32(float *c, const float *a, const float *b, int64_t n, int64_t grid,
                                      int64_t block) {
    for (int64_t block_idx = 0; block_idx < grid; ++block_idx) {
        for (int64_t thread_idx = 0; thread_idx < block; ++thread_idx) {
            add2_seed_thread(c, a, b, n, block_idx, block, grid, thread_idx);
        }
    }
}
