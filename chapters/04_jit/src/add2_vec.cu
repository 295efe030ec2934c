/*
 * add2_vec.cu — version 2 of c = a + b: 16-byte vector loads and stores, a scalar tail, a grid sized from the
 * number of SMs. Changed from version 1 (add2_seed.cu): each step moves 16 bytes per array (4 floats, 8 halves,
 * 2 doubles) instead of one element, so a warp issues a quarter (float) to an eighth (half) of the memory
 * instructions; blocks have 256 threads; the grid is computed from the SM count instead of from n alone.
 *
 * Work split: a 1D grid of 256-thread blocks. With all three pointers 16-byte aligned, thread t handles vectors
 * t, t + T, t + 2T, ... (T = threads in the grid), then the last n % K elements (K = elements per vector), one
 * per thread. A misaligned pointer (a view that starts one element in) cannot use 16-byte accesses: then every
 * thread takes the scalar path, one element per step, over the whole range.
 *
 * Launch size: by default enough blocks for one vector per thread — the fastest on an H100 — but at most 64 full
 * waves (SMs x resident blocks per SM x 64), past which threads loop. blocks_per_sm > 0 caps the grid at that many
 * blocks per SM: the "one wave and loop" recipe, which the benchmark shows is slower for a pure stream.
 */
#include "add2.h"
#include "add2_math.cuh"
#include "course_check.h"

/* 16 bytes of T, aligned so the compiler emits one 128-bit load or store (ld.global.v4 / st.global.v4). */
template <typename T>
struct alignas(16) Vec16 {
    T v[16 / sizeof(T)];
};

template <typename T>
__global__ void add2_vec_kernel(T *__restrict__ c, const T *__restrict__ a, const T *__restrict__ b, int64_t n) {
    constexpr int K = 16 / sizeof(T);
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    const int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t n_vec = n / K;
    const Vec16<T> *av = reinterpret_cast<const Vec16<T> *>(a);
    const Vec16<T> *bv = reinterpret_cast<const Vec16<T> *>(b);
    Vec16<T> *cv = reinterpret_cast<Vec16<T> *>(c);
    for (int64_t i = first; i < n_vec; i += stride) {
        const Vec16<T> x = av[i];
        const Vec16<T> y = bv[i];
        Vec16<T> z;
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

template <typename T>
static cudaError_t launch(void *c, const void *a, const void *b, int64_t n, int blocks_per_sm, int sms,
                          cudaStream_t stream) {
    const bool aligned = (((uintptr_t)a | (uintptr_t)b | (uintptr_t)c) & 15) == 0;
    const int64_t steps = aligned ? (n + (int64_t)(16 / sizeof(T)) - 1) / (int64_t)(16 / sizeof(T)) : n;
    const int64_t resident_per_sm = 2048 / kThreads;  // sm_70..sm_90 keep up to 2048 threads on an SM
    const int64_t cap = blocks_per_sm > 0 ? (int64_t)sms * blocks_per_sm : (int64_t)sms * resident_per_sm * kMaxWaves;
    int64_t blocks = (steps + kThreads - 1) / kThreads;
    if (blocks > cap) blocks = cap;
    if (blocks < 1) blocks = 1;
    if (aligned) {
        add2_vec_kernel<T><<<(unsigned)blocks, kThreads, 0, stream>>>((T *)c, (const T *)a, (const T *)b, n);
    } else {
        add2_scalar_kernel<T><<<(unsigned)blocks, kThreads, 0, stream>>>((T *)c, (const T *)a, (const T *)b, n);
    }
    return cudaGetLastError();
}

extern "C" cudaError_t add2_vec_launch(void *c, const void *a, const void *b, int64_t n, add2_dtype dtype,
                                       int blocks_per_sm, cudaStream_t stream) {
    if (n <= 0) return cudaSuccess;
    if (blocks_per_sm < 0) return cudaErrorInvalidValue;
    int device = 0, sms = 0;
    CUDA_RETURN_IF_ERROR(cudaGetDevice(&device));
    CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    switch (dtype) {
        case ADD2_FLOAT32:
            return launch<float>(c, a, b, n, blocks_per_sm, sms, stream);
        case ADD2_FLOAT16:
            return launch<__half>(c, a, b, n, blocks_per_sm, sms, stream);
        case ADD2_BFLOAT16:
            return launch<__nv_bfloat16>(c, a, b, n, blocks_per_sm, sms, stream);
        case ADD2_FLOAT64:
            return launch<double>(c, a, b, n, blocks_per_sm, sms, stream);
    }
    return cudaErrorInvalidValue;
}
