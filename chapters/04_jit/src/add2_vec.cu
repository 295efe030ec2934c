/*
 * add2_vec.cu — version 2 of c = a + b: 16-byte vector loads and stores, a scalar tail, a grid sized from what the
 * GPU holds at once. Changed from version 1 (add2_seed.cu): each step moves 16 bytes per array (4 floats, 8 halves,
 * 2 doubles) instead of one element, so a warp issues a quarter (float) to an eighth (half) of the memory
 * instructions; blocks have 256 threads; the grid is capped by the GPU's occupancy instead of following n alone.
 *
 * Work split: a 1D grid of 256-thread blocks. With all three pointers 16-byte aligned, thread t handles vectors
 * t, t + T, t + 2T, ... (T = threads in the grid), then the last n % K elements (K = elements per vector), one
 * per thread. A misaligned pointer (a view that starts one element in) cannot use 16-byte accesses: then every
 * thread takes the scalar path, one element per step, over the whole range.
 *
 * Launch size: by default enough blocks for one vector per thread — the fastest on an H100 — but at most 64 full
 * waves, past which threads loop. A wave is every block the GPU keeps resident at once: SMs x the blocks of this
 * kernel one SM holds, which course::grid_size asks the occupancy API for (an SM holds 2048 threads on sm_80 and
 * sm_90, 1536 on sm_86 and sm_89, 1024 on sm_75: no number is written here). blocks_per_sm > 0 caps the grid at that
 * many blocks per SM: the "one wave and loop" recipe, which the benchmark shows is slower for a pure stream.
 */
#include "add2.h"
#include "add2_math.cuh"
#include "course_check.h"
#include "course_launch.cuh"

/* course::Pack<T> is 16 bytes of T, aligned so that the compiler emits one 128-bit load or store (ld.global.v4 /
 * st.global.v4) for it (course_launch.cuh). */
template <typename T>
__global__ void add2_vec_kernel(T *__restrict__ c, const T *__restrict__ a, const T *__restrict__ b, int64_t n) {
    using Pack = course::Pack<T>;
    constexpr int K = Pack::size;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    const int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t n_vec = n / K;
    const Pack *av = reinterpret_cast<const Pack *>(a);
    const Pack *bv = reinterpret_cast<const Pack *>(b);
    Pack *cv = reinterpret_cast<Pack *>(c);
    for (int64_t i = first; i < n_vec; i += stride) {
        const Pack x = av[i];
        const Pack y = bv[i];
        Pack z;
#pragma unroll
        for (int k = 0; k < K; ++k) z.v[k] = add2_sum(x.v[k], y.v[k]);
        cv[i] = z;
    }
    for (int64_t i = n_vec * K + first; i < n; i += stride) {  // the scalar tail: fewer than K elements
        c[i] = add2_sum(a[i], b[i]);
    }
}

/* The fallback for misaligned pointers: one element per step, grid-stride. */
template <typename T>
__global__ void add2_scalar_kernel(T *__restrict__ c, const T *__restrict__ a, const T *__restrict__ b, int64_t n) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        c[i] = add2_sum(a[i], b[i]);
    }
}

static const int kThreads = 256;
static const int kMaxWaves = 64;

/* The grid for `steps` work items of `kernel` (one per thread): at most kMaxWaves waves by default, or at most
 * blocks_per_sm blocks per SM. */
template <typename Kernel>
static cudaError_t blocks_for(Kernel kernel, int64_t steps, int blocks_per_sm, int64_t *blocks) {
    if (blocks_per_sm == 0) return course::grid_size(kernel, kThreads, 0, steps, kMaxWaves, blocks);
    int device = 0, sms = 0;
    CUDA_RETURN_IF_ERROR(cudaGetDevice(&device));
    CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    const int64_t wanted = (steps + kThreads - 1) / kThreads, cap = (int64_t)sms * blocks_per_sm;
    *blocks = wanted < 1 ? 1 : (wanted < cap ? wanted : cap);
    return cudaSuccess;
}

template <typename T>
static cudaError_t launch(void *c, const void *a, const void *b, int64_t n, int blocks_per_sm, cudaStream_t stream) {
    int64_t blocks = 0;
    if (course::is_pack_aligned(a) && course::is_pack_aligned(b) && course::is_pack_aligned(c)) {
        const int64_t steps = (n + course::Pack<T>::size - 1) / course::Pack<T>::size;  // one vector per step
        CUDA_RETURN_IF_ERROR(blocks_for(add2_vec_kernel<T>, steps, blocks_per_sm, &blocks));
        add2_vec_kernel<T><<<(unsigned)blocks, kThreads, 0, stream>>>((T *)c, (const T *)a, (const T *)b, n);
    } else {
        CUDA_RETURN_IF_ERROR(blocks_for(add2_scalar_kernel<T>, n, blocks_per_sm, &blocks));
        add2_scalar_kernel<T><<<(unsigned)blocks, kThreads, 0, stream>>>((T *)c, (const T *)a, (const T *)b, n);
    }
    return cudaGetLastError();
}

extern "C" cudaError_t add2_vec_launch(void *c, const void *a, const void *b, int64_t n, course_dtype dtype,
                                       int blocks_per_sm, cudaStream_t stream) {
    if (n <= 0) return cudaSuccess;
    if (blocks_per_sm < 0) return cudaErrorInvalidValue;
    return course::with_element_type(
        dtype, [&](auto zero) { return launch<decltype(zero)>(c, a, b, n, blocks_per_sm, stream); });
}
