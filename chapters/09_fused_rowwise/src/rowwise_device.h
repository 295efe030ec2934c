/*
 * rowwise_device.h — lets online_softmax.h compile twice from one source:
 *
 *   - by nvcc, as device functions of the warp-per-row softmax (RW_SHFL_XOR is __shfl_xor_sync over the full warp,
 *     RW_EXP2 the hardware's exp2);
 *   - by the C compiler, as plain C that online_softmax_emulate.c runs with one POSIX thread per lane, so the same
 *     code is checked on a machine without a GPU (RW_SHFL_XOR trades values through memory between the 32 lanes).
 */
#ifndef ROWWISE_DEVICE_H
#define ROWWISE_DEVICE_H

#include <math.h>

#define RW_WARP_SIZE 32
#define RW_LOG2E 1.4426950408889634f /* exp(x) = 2^(x log2 e): the GPU has a fast exp2 */

#ifdef __CUDACC__
#define RW_FN static __device__ __forceinline__
#define RW_SHFL_XOR(value, mask) __shfl_xor_sync(0xffffffffu, (value), (mask))
#else
#define RW_FN static inline
#define RW_SHFL_XOR(value, mask) rw_emu_shfl_xor((value), (mask))
/* Implemented in online_softmax_emulate.c; only valid inside a lane that the emulator started. */
float rw_emu_shfl_xor(float value, int mask);
#endif

#endif /* ROWWISE_DEVICE_H */
