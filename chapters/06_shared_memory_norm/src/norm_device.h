/*
 * norm_device.h — lets the block-sum helpers of norm_blocks.h compile twice from one source:
 *
 *   - by nvcc, as device functions inside the kernels (NORM_SYNC is __syncthreads, NORM_SHFL_DOWN is
 *     __shfl_down_sync over the full warp);
 *   - by the C compiler, as plain C that norm_emulate.c runs with one POSIX thread per CUDA thread, so the same
 *     code can be checked on a machine without a GPU (NORM_SYNC waits at a barrier of the whole "block",
 *     NORM_SHFL_DOWN swaps values through memory between the 32 threads of one "warp").
 */
#ifndef NORM_DEVICE_H
#define NORM_DEVICE_H

#define NORM_WARP_SIZE 32

#ifdef __CUDACC__
#define NORM_FN static __device__ __forceinline__
#define NORM_SYNC() __syncthreads()
#define NORM_SHFL_DOWN(value, offset) __shfl_down_sync(0xffffffffu, (value), (offset))
#else
#define NORM_FN static inline
#define NORM_SYNC() norm_emu_syncthreads()
#define NORM_SHFL_DOWN(value, offset) norm_emu_shfl_down((value), (offset))
/* Implemented in norm_emulate.c; only valid inside a thread that the emulator started. */
void norm_emu_syncthreads(void);
double norm_emu_shfl_down(double value, int offset);
#endif

#endif /* NORM_DEVICE_H */
