/*
 * course_launch.cuh — what the course's CUDA launchers share (CUDA C++; include after cuda_runtime.h).
 *
 *   course::Pack<T>                 16 bytes of T (4 floats, 2 doubles, 8 halves), aligned so that one copy is one
 *                                   128-bit load or store (ld.global.v4 / st.global.v4)
 *   course::is_pack_aligned(p)      whether a pointer may be read as Pack<T>s
 *   course::with_element_type(dtype, launch)
 *                                   calls launch(T{}) with the C++ type a course_dtype names, so a launcher is written
 *                                   once as a template; a value outside the enum returns cudaErrorInvalidValue
 *   course::grid_size(kernel, threads, shared_bytes, work_items, most_waves, &blocks)
 *                                   one block per `threads` work items, at most `most_waves` full waves of the GPU.
 *                                   A wave is every block the GPU keeps resident at once: SMs x the blocks of this
 *                                   kernel one SM holds, which the occupancy API computes from the kernel's
 *                                   registers and shared memory and the SM's limits (2048 threads on sm_80 and
 *                                   sm_90, 1536 on sm_86 and sm_89, 1024 on sm_75), never a number written here.
 * Every function returns the first CUDA error it meets; the binding turns it into a Python exception.
 */
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include <mutex>
#include <vector>

#include "course_check.h"
#include "course_dtype.h"

namespace course {

constexpr int kPackBytes = 16;

template <typename T>
struct alignas(kPackBytes) Pack {
    static constexpr int size = kPackBytes / sizeof(T);
    T v[size];
};

__host__ __device__ inline bool is_pack_aligned(const void *p) {
    return reinterpret_cast<uintptr_t>(p) % kPackBytes == 0;
}

template <typename Launch>
cudaError_t with_element_type(course_dtype dtype, Launch &&launch) {
    switch (dtype) {
        case COURSE_FLOAT32:
            return launch(float{});
        case COURSE_FLOAT64:
            return launch(double{});
        case COURSE_FLOAT16:
            return launch(__half{});
        case COURSE_BFLOAT16:
            return launch(__nv_bfloat16{});
    }
    return cudaErrorInvalidValue;
}

// The blocks of `kernel` that fill the current GPU once (its SM count x the blocks one SM holds at once). The answer
// depends only on the kernel, the block and the device, so it is asked once and remembered: the occupancy API works
// it out on the host each time, microseconds that a small launch would pay on every call.
template <typename Kernel>
cudaError_t blocks_per_wave(Kernel kernel, int threads, size_t shared_bytes, int64_t *blocks) {
    struct Known {
        const void *kernel;
        int device, threads;
        size_t shared_bytes;
        int64_t blocks;
    };
    static std::mutex lock;
    static std::vector<Known> known;
    int device = 0;
    CUDA_RETURN_IF_ERROR(cudaGetDevice(&device));
    const void *key = reinterpret_cast<const void *>(kernel);
    {
        const std::lock_guard<std::mutex> guard(lock);
        for (const Known &k : known) {
            if (k.kernel == key && k.device == device && k.threads == threads && k.shared_bytes == shared_bytes) {
                *blocks = k.blocks;
                return cudaSuccess;
            }
        }
    }
    int sms = 0, per_sm = 0;
    CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_RETURN_IF_ERROR(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, shared_bytes));
    if (per_sm < 1) return cudaErrorInvalidConfiguration;  // the block asks for more than one SM has
    *blocks = (int64_t)sms * per_sm;
    const std::lock_guard<std::mutex> guard(lock);
    known.push_back(Known{key, device, threads, shared_bytes, *blocks});
    return cudaSuccess;
}

template <typename Kernel>
cudaError_t grid_size(Kernel kernel, int threads, size_t shared_bytes, int64_t work_items, int64_t most_waves,
                      int64_t *blocks) {
    int64_t wave = 0;
    CUDA_RETURN_IF_ERROR(blocks_per_wave(kernel, threads, shared_bytes, &wave));
    const int64_t wanted = (work_items + threads - 1) / threads;
    const int64_t most = wave * most_waves;
    *blocks = wanted < 1 ? 1 : (wanted < most ? wanted : most);
    return cudaSuccess;
}

}  // namespace course
