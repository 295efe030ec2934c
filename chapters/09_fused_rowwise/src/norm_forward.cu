/*
 * norm_forward.cu — LayerNorm and RMSNorm forward, rungs 3, 4 and 5: one kernel template for both (RMS drops the
 * mean and the bias), the row held in registers as in softmax.cu.
 *
 * The variance the lesson's way: with the row in registers, the mean first (one block_reduce of the sum), then the
 * sum of (x - mean)^2 (a second one). E[x^2] - E[x]^2 would need a single reduction, and it loses the digits of a
 * row whose mean is large beside its spread (tests/test_numerics.py shows by how much). Over several blocks (rungs 4
 * and 5) each block takes the count, mean and squared deviations of its own part, and the blocks' triples merge by
 * Chan's formula (row_reduce.cuh), which has the same property.
 * The weight and bias are read at the columns a thread holds, every row: the same few kilobytes, kept in L1.
 */
#include <math.h>

#include "row_reduce.cuh"
#include "rowwise_kernels.h"

namespace {

using namespace rw;

template <typename T, bool RMS>
__global__ void __launch_bounds__(kForwardThreads)
    norm_forward_kernel(const T *x, const T *w, const T *b, T *y, acc_t<T> *mean_out, acc_t<T> *rstd_out, int64_t rows,
                        int n, double eps, const rowwise_plan p, void *partials) {
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
        const A edge = has_edge ? to_acc(xr[at.g]) : A(0);

        A mean = 0, variance;
        if (RMS) {  // mean(x^2): one reduction
            A squares = edge * edge;
            each_element<kForwardPacks, W>(at, head, packs, n, [&](int k, int e, int) {
                const A value = to_acc(v[k].v[e]);
                squares += value * value;
            });
            squares = block_reduce(squares, Add{}, p);
            variance = blocks_reduce(squares, Add{}, p, at, row, pass, static_cast<A *>(partials)) / A(n);
        } else {  // the block's sum and count, its mean, then its squared deviations from that mean
            Two<A> sum = {edge, A(has_edge)};
            each_element<kForwardPacks, W>(at, head, packs, n, [&](int k, int e, int) {
                sum.a += to_acc(v[k].v[e]);
                sum.b += A(1);
            });
            sum = block_reduce(sum, Add{}, p);
            const A block_mean = sum.b > 0 ? sum.a / sum.b : A(0);
            A m2 = has_edge ? (edge - block_mean) * (edge - block_mean) : A(0);
            each_element<kForwardPacks, W>(at, head, packs, n, [&](int k, int e, int) {
                const A d = to_acc(v[k].v[e]) - block_mean;
                m2 += d * d;
            });
            m2 = block_reduce(m2, Add{}, p);
            const Moments<A> m = blocks_reduce(Moments<A>{sum.b, block_mean, m2}, Chan{}, p, at, row, pass,
                                               static_cast<Moments<A> *>(partials));
            mean = m.mean;
            variance = m.m2 / A(n);
        }
        if (packs == 0 || p.split == 1) continue;  // rung 4's first launch only writes its statistics

        const A rstd = A(1) / sqrt(variance + A(eps));
        if (at.g == 0) {
            if (!RMS) mean_out[row] = mean;
            rstd_out[row] = rstd;
        }
#pragma unroll
        for (int k = 0; k < kForwardPacks; k++) {  // y = (x - mean) rstd w + b
            if (k >= packs) break;
            const int column = slot_column(at, head, k, W);
            Pack<T> wk, bk;
            if (w != nullptr) load_pack(wk, w, column, n);
            if (!RMS && b != nullptr) load_pack(bk, b, column, n);
#pragma unroll
            for (int e = 0; e < W; e++) {
                A value = (to_acc(v[k].v[e]) - mean) * rstd;
                if (w != nullptr) value *= to_acc(wk.v[e]);
                if (!RMS && b != nullptr) value += to_acc(bk.v[e]);
                v[k].v[e] = from_acc<T>(value);
            }
        }
        store_row(v, y + row * n, at, head, packs, n);
        if (has_edge) {
            A value = (edge - mean) * rstd;
            if (w != nullptr) value *= to_acc(w[at.g]);
            if (!RMS && b != nullptr) value += to_acc(b[at.g]);
            y[row * n + at.g] = from_acc<T>(value);
        }
    }
    blocks_done(p);
}

template <typename T>
const void *address(rowwise_op op) {
    return op == ROWWISE_RMS_NORM ? reinterpret_cast<const void *>(norm_forward_kernel<T, true>)
                                  : reinterpret_cast<const void *>(norm_forward_kernel<T, false>);
}

}  // namespace

namespace rw {

const void *norm_forward_address(rowwise_op op, course_dtype dtype) {
    const void *kernel = nullptr;
    course::with_element_type(dtype, [&](auto type) {
        kernel = address<decltype(type)>(op);
        return cudaSuccess;
    });
    return kernel;
}

cudaError_t norm_forward(rowwise_op op, course_dtype dtype, const rowwise_args *a, const rowwise_plan *p,
                         void *partials, cudaStream_t stream) {
    return course::with_element_type(dtype, [&](auto type) {
        using T = decltype(type);
        using A = acc_t<T>;
        const auto kernel = op == ROWWISE_RMS_NORM ? norm_forward_kernel<T, true> : norm_forward_kernel<T, false>;
        return launch(kernel, *p, stream, static_cast<const T *>(a->x), static_cast<const T *>(a->w),
                      static_cast<const T *>(a->b), static_cast<T *>(a->y), static_cast<A *>(a->mean),
                      static_cast<A *>(a->rstd), a->rows, a->n, a->eps, *p, partials);
    });
}

}  // namespace rw
