/*
 * add2_seed.cu (EXERCISE) — version 1 of c = a + b: the seed's kernel (NN-CUDA-Example's add2), made 64-bit safe.
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
    // EXERCISE (about 4 lines): the grid-stride loop.
    // This GPU thread is thread `thread_idx` of block `block_idx`; the grid has `grid_dim` blocks of `block_dim`
    // threads. Start at this thread's global index, set c[i] = add2_sum(a[i], b[i]) (a + b for every dtype),
    // then step forward by the number of threads in the whole grid, until i reaches n. Use int64_t for i: n may
    // exceed 2^31. Check it on the CPU with `EXERCISE=1 make test` (tests/test_exercise_cpu.py runs this function
    // for every (block, thread) of a launch); on a GPU the kernel tests run it too. Delete the (void) line.
    (void)c, (void)a, (void)b, (void)n, (void)block_idx, (void)block_dim, (void)grid_dim, (void)thread_idx;
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
