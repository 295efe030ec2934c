/*
 * race_demo.cu — shared memory and __syncthreads(), and what compute-sanitizer's racecheck says without it.
 *
 * Each block reverses its own 256-element slice of the input: every thread stores one element into a __shared__
 * tile, then reads the element a thread at the other end of the block stored. The reading thread is in another
 * warp, so it must wait until that warp has written: __syncthreads() makes every thread of the block wait there.
 *
 *   reverse_in_block         the correct kernel: store, barrier, load
 *   pitfall_reverse_no_sync  the same without the barrier: a read-after-write race on the tile
 *
 * Usage: race_demo correct|broken     (exit status 0 when the output is right; `broken` always exits 0: it is a
 * demo for `compute-sanitizer --tool racecheck`, whose report is the point, see `make racecheck-demo`.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>

#include "course_check.h"

#define BLOCK 256

static __global__ void reverse_in_block(const float *in, float *out, int n) {
    __shared__ float tile[BLOCK];
    int i = blockIdx.x * BLOCK + threadIdx.x; /* n is small here: 32-bit is enough */
    tile[threadIdx.x] = (i < n) ? in[i] : 0.0f;
    __syncthreads();                                   /* every store to the tile is done before anyone loads */
    if (i < n) out[i] = tile[BLOCK - 1 - threadIdx.x]; /* stored by a thread of another warp */
}

static __global__ void pitfall_reverse_no_sync(const float *in, float *out, int n) {
    __shared__ float tile[BLOCK];
    int i = blockIdx.x * BLOCK + threadIdx.x;
    tile[threadIdx.x] = (i < n) ? in[i] : 0.0f;
    /* missing __syncthreads(): this load may run before the other warp's store */
    if (i < n) out[i] = tile[BLOCK - 1 - threadIdx.x];
}

int main(int argc, char **argv) {
    int broken = argc > 1 && strcmp(argv[1], "broken") == 0;
    if (argc < 2 || (!broken && strcmp(argv[1], "correct") != 0)) {
        fprintf(stderr, "usage: %s correct|broken\n", argv[0]);
        return 2;
    }
    const int n = 4 * BLOCK;
    float host_in[4 * BLOCK], host_out[4 * BLOCK];
    for (int k = 0; k < n; ++k) host_in[k] = (float)k;

    float *in = NULL, *out = NULL;
    CUDA_CHECK(cudaMalloc((void **)&in, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&out, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(in, host_in, n * sizeof(float), cudaMemcpyHostToDevice));
    if (broken) {
        pitfall_reverse_no_sync<<<n / BLOCK, BLOCK>>>(in, out, n);
    } else {
        reverse_in_block<<<n / BLOCK, BLOCK>>>(in, out, n);
    }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(host_out, out, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(in));
    CUDA_CHECK(cudaFree(out));

    int wrong = 0;
    for (int k = 0; k < n; ++k) {
        int block = k / BLOCK, t = k % BLOCK;
        float expected = host_in[block * BLOCK + (BLOCK - 1 - t)];
        if (host_out[k] != expected) ++wrong;
    }
    printf("%s: %d of %d elements wrong\n", broken ? "pitfall_reverse_no_sync" : "reverse_in_block", wrong, n);
    if (broken) {
        printf("(a race may still give the right answer on a given run; racecheck finds it either way)\n");
        return 0;
    }
    return wrong == 0 ? 0 : 1;
}
