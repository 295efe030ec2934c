/*
 * racecheck_demo.cu — the pitfall of a shared-memory tree without its barriers, for compute-sanitizer's racecheck.
 *
 * One block of 256 threads sums 256 numbers (thread t holds t + 1, so the sum is 32896) with the tree of rung 1.
 * pitfall_tree_no_sync leaves out the __syncthreads() calls: a thread may read buf[tid + stride] before the thread
 * that owns it has written it, so the sum can be wrong, or right by luck on one run and wrong on the next.
 * racecheck sees the unordered write and read of the same shared word and reports a hazard every time.
 *
 *   build/racecheck_demo broken    runs the broken tree        (make racecheck-demo runs both under racecheck)
 *   build/racecheck_demo fixed     runs the tree with barriers
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#include "course_check.h"

#define THREADS 256

__global__ void pitfall_tree_no_sync(float *out) {
    __shared__ float buf[THREADS];
    const int tid = threadIdx.x;
    buf[tid] = (float)(tid + 1);
    /* MISSING: __syncthreads();   everyone's value must be in buf before anyone reads it */
    for (int stride = THREADS / 2; stride > 0; stride /= 2) {
        if (tid < stride) buf[tid] += buf[tid + stride];
        /* MISSING: __syncthreads();   the next step reads what other threads wrote in this one */
    }
    if (tid == 0) *out = buf[0];
}

__global__ void tree_with_sync(float *out) {
    __shared__ float buf[THREADS];
    const int tid = threadIdx.x;
    buf[tid] = (float)(tid + 1);
    __syncthreads();
    for (int stride = THREADS / 2; stride > 0; stride /= 2) {
        if (tid < stride) buf[tid] += buf[tid + stride];
        __syncthreads();
    }
    if (tid == 0) *out = buf[0];
}

int main(int argc, char **argv) {
    const int broken = !(argc > 1 && strcmp(argv[1], "fixed") == 0);
    float *d_out = NULL, result = 0.0f;
    CUDA_CHECK(cudaMalloc((void **)&d_out, sizeof(float)));
    if (broken) {
        pitfall_tree_no_sync<<<1, THREADS>>>(d_out);
    } else {
        tree_with_sync<<<1, THREADS>>>(d_out);
    }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(&result, d_out, sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_out));
    printf("%s tree: sum = %.0f (expected %d)%s\n", broken ? "broken" : "fixed", result, THREADS * (THREADS + 1) / 2,
           broken ? " — a race: right or wrong by luck; racecheck reports it either way" : "");
    return 0;
}
