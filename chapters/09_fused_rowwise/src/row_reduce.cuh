/*
 * row_reduce.cuh — what rungs 3, 4 and 5 share: where a row's elements sit in its threads' registers, and the
 * reductions that give every thread of a row the row's statistics.
 *
 * A row is held by G threads, "the row's threads": several rows to a block when a row needs fewer threads than a
 * block has, or one row over C blocks (rung 4: two launches; rung 5: a thread-block cluster). Thread g of a row
 * (0 <= g < G) holds `packs` slots of 16 bytes (W elements each): slot k covers the columns
 *
 *     head + (k * G + g) * W  ...  + W - 1
 *
 * so the G threads' loads of one slot are consecutive 16-byte packs: every load is coalesced and 128 bits wide.
 * A forward starts each row at its first 16-byte boundary (row_head): the elements before it (fewer than W) are held
 * one each by threads 0, 1, ... (the kernels' `edge`). A backward keeps head = 0, since each thread must own the same
 * columns in every row (it sums its columns' dweight over its rows), and loads an unaligned pack element by element.
 *
 *   RowPlace, row_place()      this thread's row: its index g among the row's threads, its block's rank, the rows
 *   load_pack / store_pack     one slot, 16 bytes at once where the address allows
 *   load_row / store_row       a thread's slots of a row; each_element(f) visits the elements it holds
 *   block_reduce(v, op)        the value of the row's threads in this block, in every one of them: the warp
 *                              (shuffles), then the row's warps (shared memory)
 *   blocks_reduce(v, op, ...)  the value of the row's blocks: rung 5 reads the others' shared memory (DSMEM), rung
 *                              4 writes to global memory in one launch and reads it in the next
 * Every combination runs in a fixed order, so a result has the same bits in every run and in every thread.
 */
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "course_accumulate.cuh"
#include "course_launch.cuh"
#define ROWWISE_WITH_CUDA_API
#include "rowwise.h"

namespace rw {

using course::acc_t;
using course::from_acc;
using course::Pack;
using course::to_acc;

// ---- where a thread sits ------------------------------------------------------------------------------------------
struct RowPlace {
    int g, G;        // this thread among the row's threads, and how many they are
    int rank;        // this block among the row's blocks (0 when a block holds whole rows)
    int row_offset;  // which of the block's rows is this thread's (0 when a row spans the block or more)
    int64_t first;   // the block's first row
    int64_t stride;  // rows between one pass of the grid and the next
};

__device__ inline RowPlace row_place(const rowwise_plan &p) {
    const int in_block = p.row_threads < (int)blockDim.x ? p.row_threads : (int)blockDim.x;
    const int rows_per_block = blockDim.x / in_block;
    RowPlace at;
    at.rank = blockIdx.x % p.blocks_per_row;
    at.g = at.rank * blockDim.x + threadIdx.x % in_block;
    at.G = p.row_threads;
    at.row_offset = threadIdx.x / in_block;
    at.first = (int64_t)(blockIdx.x / p.blocks_per_row) * rows_per_block;
    at.stride = (int64_t)(gridDim.x / p.blocks_per_row) * rows_per_block;
    return at;
}

// The first column of slot k (its element e is column + e). Columns are 32-bit: rows have fewer than 2^31 elements
// (rowwise_unsupported), and 64-bit columns cost a register pair for each slot.
__device__ inline int slot_column(const RowPlace &at, int head, int k, int W) {
    return head + (k * at.G + at.g) * W;
}

// The number of elements before the row's first 16-byte boundary (0 for an aligned row; the binding passes tensors
// whose addresses are multiples of the element size, as PyTorch allocates them).
template <typename T>
__device__ inline int row_head(const T *row, int n) {
    const int misaligned = (int)(reinterpret_cast<uintptr_t>(row) % course::kPackBytes) / (int)sizeof(T);
    const int head = misaligned == 0 ? 0 : Pack<T>::size - misaligned;
    return head < n ? head : n;
}

// ---- one slot ---------------------------------------------------------------------------------------------------
template <typename T>
__device__ inline void load_pack(Pack<T> &p, const T *row, int c, int n) {
    if (c + Pack<T>::size <= n && course::is_pack_aligned(row + c)) {
        p = *reinterpret_cast<const Pack<T> *>(row + c);
    } else {
#pragma unroll
        for (int e = 0; e < Pack<T>::size; e++) p.v[e] = c + e < n ? row[c + e] : T{};
    }
}

template <typename T>
__device__ inline void store_pack(const Pack<T> &p, T *row, int c, int n) {
    if (c + Pack<T>::size <= n && course::is_pack_aligned(row + c)) {
        *reinterpret_cast<Pack<T> *>(row + c) = p;
    } else {
#pragma unroll
        for (int e = 0; e < Pack<T>::size; e++)
            if (c + e < n) row[c + e] = p.v[e];
    }
}

// A thread's slots of one row: load them, store them, and visit each element it holds (f(k, e, column): element e
// of slot k). `packs` is the plan's (0 for a row past the end); elements past the row's end are never visited.
template <typename T, int P>
__device__ inline void load_row(Pack<T> (&v)[P], const T *row, const RowPlace &at, int head, int packs, int n) {
#pragma unroll
    for (int k = 0; k < P; k++)
        if (k < packs) load_pack(v[k], row, slot_column(at, head, k, Pack<T>::size), n);
}

template <typename T, int P>
__device__ inline void store_row(const Pack<T> (&v)[P], T *row, const RowPlace &at, int head, int packs, int n) {
#pragma unroll
    for (int k = 0; k < P; k++)
        if (k < packs) store_pack(v[k], row, slot_column(at, head, k, Pack<T>::size), n);
}

template <int P, int W, typename F>
__device__ inline void each_element(const RowPlace &at, int head, int packs, int n, F f) {
#pragma unroll
    for (int k = 0; k < P; k++) {
        const int column = slot_column(at, head, k, W);
#pragma unroll
        for (int e = 0; e < W; e++)
            if (k < packs && column + e < n) f(k, e, column + e);
    }
}

// ---- the values the rows reduce, and how two of them combine ------------------------------------------------------
template <typename A>
struct Two {  // two sums at once (the norms' backward, LayerNorm's sum and count)
    A a, b;
};

struct Add {
    template <typename A>
    __device__ A operator()(A x, A y) const {
        return x + y;
    }
    template <typename A>
    __device__ Two<A> operator()(Two<A> x, Two<A> y) const {
        return {x.a + y.a, x.b + y.b};
    }
};

template <typename A>
struct MaxSum {  // the softmax's statistics of part of a row: its max, and the sum of exp(x - max) over it
    A max, sum;
};

// The pair of two parts of a row: each sum rescaled to the larger max (rung 2's rw_merge, the chapter's exercise, in
// the accumulation type). A part with nothing to add (sum 0: empty, or all -inf) counts 0, not 0 * exp(NaN); a NaN
// sum stays NaN, so that a NaN anywhere in the row makes every output NaN, as in torch.
struct MergeMaxSum {
    template <typename A>
    __device__ MaxSum<A> operator()(MaxSum<A> x, MaxSum<A> y) const {
        const A max = fmax(x.max, y.max);
        const A sx = x.sum == A(0) ? A(0) : x.sum * exp(x.max - max);
        const A sy = y.sum == A(0) ? A(0) : y.sum * exp(y.max - max);
        return {max, sx + sy};
    }
};

template <typename A>
struct Moments {  // LayerNorm over several blocks: each block's element count, mean and sum of squared deviations
    A count, mean, m2;
};

struct Chan {  // the moments of two parts of a row (Chan et al.): no E[x^2] - E[x]^2, so a large mean costs nothing
    template <typename A>
    __device__ Moments<A> operator()(Moments<A> x, Moments<A> y) const {
        const A count = x.count + y.count;
        if (count == 0) return x;
        const A delta = y.mean - x.mean;
        return {count, x.mean + delta * (y.count / count), x.m2 + y.m2 + delta * delta * (x.count * y.count / count)};
    }
};

__device__ inline float shfl(float v, int mask) {
    return __shfl_xor_sync(0xffffffffu, v, mask);
}
__device__ inline double shfl(double v, int mask) {
    return __shfl_xor_sync(0xffffffffu, v, mask);
}
template <typename A>
__device__ inline MaxSum<A> shfl(MaxSum<A> v, int mask) {
    return {shfl(v.max, mask), shfl(v.sum, mask)};
}
template <typename A>
__device__ inline Two<A> shfl(Two<A> v, int mask) {
    return {shfl(v.a, mask), shfl(v.b, mask)};
}

// ---- the reductions -----------------------------------------------------------------------------------------------
// The value of the row's threads in this block, in each of them. Every thread of the block calls it (it holds
// barriers); a block's rows run side by side, each over its own warps.
template <typename V, typename Op>
__device__ V block_reduce(V v, Op op, const rowwise_plan &p) {
#pragma unroll
    for (int mask = 16; mask > 0; mask /= 2) v = op(v, shfl(v, mask));  // the butterfly: every lane gets the sum
    const int warps = (p.row_threads < (int)blockDim.x ? p.row_threads : (int)blockDim.x) / 32;
    if (warps == 1) return v;
    __shared__ V partial[32];
    const int warp = threadIdx.x / 32, first = warp - warp % warps;
    __syncthreads();  // the previous call's reads are done before its slots are written again
    if (threadIdx.x % 32 == 0) partial[warp] = v;
    __syncthreads();
    v = partial[first];
    for (int i = 1; i < warps; i++) v = op(v, partial[first + i]);  // in order: the same bits in every thread
    return v;
}

// The value of the row's blocks (rungs 4 and 5), from each block's block_reduce. `pass` counts the rows this block
// has done, `partials` is rung 4's workspace (blocks_per_row values a row).
template <typename V, typename Op>
__device__ V blocks_reduce(V v, Op op, const rowwise_plan &p, const RowPlace &at, int64_t row, unsigned pass,
                           V *partials) {
    if (p.blocks_per_row == 1) return v;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (p.cluster) {  // rung 5: each block reads the others' values from their shared memory
        // Two slots, one for even rows and one for odd: a block writes row i + 2's value only after every block has
        // reached row i + 1's barrier, so nobody still reads row i's.
        __shared__ V mine[2];
        cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
        if (threadIdx.x == 0) mine[pass & 1] = v;
        cluster.sync();
        V total = *cluster.map_shared_rank(&mine[pass & 1], 0);
        for (int r = 1; r < p.blocks_per_row; r++) total = op(total, *cluster.map_shared_rank(&mine[pass & 1], r));
        return total;
    }
#endif
    // rung 4: the first launch writes each block's value; the second reads them all, in order.
    V *row_partials = partials + row * p.blocks_per_row;
    if (p.split == 1) {
        if (threadIdx.x == 0) row_partials[at.rank] = v;
        return v;
    }
    V total = row_partials[0];
    for (int r = 1; r < p.blocks_per_row; r++) total = op(total, row_partials[r]);
    return total;
}

// A block of a cluster must not exit while the others may still read its shared memory.
__device__ inline void blocks_done(const rowwise_plan &p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (p.cluster) cooperative_groups::this_cluster().sync();
#else
    (void)p;
#endif
}

}  // namespace rw
