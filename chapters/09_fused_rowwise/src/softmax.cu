/*
 * softmax.cu — rungs 3, 4 and 5 of the softmax, forward and backward: the row held in registers.
 *
 * Rung 3, what changed from rung 2: each thread loads its part of the row once, in 16-byte packs (8 bfloat16 or 4
 * float32 values in one instruction), and keeps it in registers (row_reduce.cuh says which columns are whose). The
 * max, the sum and the output all come from there: x is read once and y written once, 2 MN elements, the floor. A
 * row takes as many threads as its packs need (rowwise_plan.cu: about 4 packs a thread), so several short rows share
 * a block and a long row fills one. The statistics: each thread's (max, sum) of its own values, then the threads'
 * pairs merged (block_reduce), as rung 2 merges its lanes'.
 * Rungs 4 and 5 run this same kernel for rows longer than a block holds: blocks_reduce merges the blocks' pairs,
 * through global memory over two launches (rung 4, p.split) or through a cluster's shared memory in one (rung 5).
 *
 * The backward, dx = y (dy - sum(y dy)), has the same shape: y and dy held, one sum, one write.
 */
#include <math.h>

#include "row_reduce.cuh"
#include "rowwise_kernels.h"

namespace {

using namespace rw;

template <typename T>
__global__ void __launch_bounds__(kForwardThreads)
    softmax_forward_kernel(const T *x, T *y, int64_t rows, int n, const rowwise_plan p, MaxSum<acc_t<T>> *partials) {
    using A = acc_t<T>;
    constexpr int W = Pack<T>::size;
    const RowPlace at = row_place(p);
    unsigned pass = 0;  // rows done: their parity picks rung 5's slot (row_reduce.cuh)
    for (int64_t first = at.first; first < rows; first += at.stride, pass++) {
        const int64_t row = first + at.row_offset;
        const int packs = row < rows ? p.packs : 0;  // past the last row: no data, but every barrier still reached
        const T *xr = x + (row < rows ? row : 0) * n;
        const int head = row_head(xr, n);
        const bool has_edge = packs > 0 && at.g < head;
        Pack<T> v[kForwardPacks];
        load_row(v, xr, at, head, packs, n);
        const T edge = has_edge ? xr[at.g] : T{};

        // This thread's (max, sum). The max keeps a NaN (v != v), so that the row's sum, and so every y, is NaN, as
        // torch gives; a thread whose max is -inf (all -inf, or nothing held) adds nothing.
        A max = has_edge ? to_acc(edge) : -INFINITY;
        each_element<kForwardPacks, W>(at, head, packs, n, [&](int k, int e, int) {
            const A value = to_acc(v[k].v[e]);
            max = value > max || value != value ? value : max;
        });
        A sum = has_edge && max != -INFINITY ? exp(to_acc(edge) - max) : A(0);
        if (max != -INFINITY)
            each_element<kForwardPacks, W>(at, head, packs, n,
                                           [&](int k, int e, int) { sum += exp(to_acc(v[k].v[e]) - max); });
        MaxSum<A> s = block_reduce(MaxSum<A>{max, sum}, MergeMaxSum{}, p);
        s = blocks_reduce(s, MergeMaxSum{}, p, at, row, pass, partials);
        if (packs == 0 || p.split == 1) continue;  // rung 4's first launch only writes its statistics

        const A inverse = A(1) / s.sum;
        each_element<kForwardPacks, W>(at, head, packs, n, [&](int k, int e, int) {
            v[k].v[e] = from_acc<T>(exp(to_acc(v[k].v[e]) - s.max) * inverse);
        });
        store_row(v, y + row * n, at, head, packs, n);
        if (has_edge) y[row * n + at.g] = from_acc<T>(exp(to_acc(edge) - s.max) * inverse);
    }
    blocks_done(p);
}

template <typename T>
__global__ void __launch_bounds__(kForwardThreads)
    softmax_backward_kernel(const T *y, const T *dy, T *dx, int64_t rows, int n, const rowwise_plan p,
                            acc_t<T> *partials) {
    using A = acc_t<T>;
    constexpr int W = Pack<T>::size, P = backward_packs(sizeof(T));
    const RowPlace at = row_place(p);
    unsigned pass = 0;  // rows done: their parity picks rung 5's slot (row_reduce.cuh)
    for (int64_t first = at.first; first < rows; first += at.stride, pass++) {
        const int64_t row = first + at.row_offset;
        const int packs = row < rows ? p.packs : 0;
        const int64_t offset = (row < rows ? row : 0) * n;
        Pack<T> vy[P], vdy[P];
        load_row(vy, y + offset, at, 0, packs, n);
        load_row(vdy, dy + offset, at, 0, packs, n);
        A dot = 0;
        each_element<P, W>(at, 0, packs, n,
                           [&](int k, int e, int) { dot += to_acc(vy[k].v[e]) * to_acc(vdy[k].v[e]); });
        dot = block_reduce(dot, Add{}, p);
        dot = blocks_reduce(dot, Add{}, p, at, row, pass, partials);
        if (packs == 0 || p.split == 1) continue;
        each_element<P, W>(at, 0, packs, n, [&](int k, int e, int) {
            vy[k].v[e] = from_acc<T>(to_acc(vy[k].v[e]) * (to_acc(vdy[k].v[e]) - dot));
        });
        store_row(vy, dx + offset, at, 0, packs, n);
    }
    blocks_done(p);
}

}  // namespace

namespace rw {

const void *softmax_forward_address(course_dtype dtype) {
    const void *kernel = nullptr;
    course::with_element_type(dtype, [&](auto type) {
        kernel = reinterpret_cast<const void *>(softmax_forward_kernel<decltype(type)>);
        return cudaSuccess;
    });
    return kernel;
}

const void *softmax_backward_address(course_dtype dtype) {
    const void *kernel = nullptr;
    course::with_element_type(dtype, [&](auto type) {
        kernel = reinterpret_cast<const void *>(softmax_backward_kernel<decltype(type)>);
        return cudaSuccess;
    });
    return kernel;
}

cudaError_t softmax_forward(course_dtype dtype, const rowwise_args *a, const rowwise_plan *p, void *partials,
                            cudaStream_t stream) {
    return course::with_element_type(dtype, [&](auto type) {
        using T = decltype(type);
        return launch(softmax_forward_kernel<T>, *p, stream, static_cast<const T *>(a->x), static_cast<T *>(a->y),
                      a->rows, a->n, *p, static_cast<MaxSum<acc_t<T>> *>(partials));
    });
}

cudaError_t softmax_backward(course_dtype dtype, const rowwise_args *a, const rowwise_plan *p, void *partials,
                             cudaStream_t stream) {
    return course::with_element_type(dtype, [&](auto type) {
        using T = decltype(type);
        return launch(softmax_backward_kernel<T>, *p, stream, static_cast<const T *>(a->x),
                      static_cast<const T *>(a->dy), static_cast<T *>(a->y), a->rows, a->n, *p,
                      static_cast<acc_t<T> *>(partials));
    });
}

}  // namespace rw
