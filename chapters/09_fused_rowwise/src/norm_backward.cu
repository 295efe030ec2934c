/*
 * norm_backward.cu — LayerNorm and RMSNorm backward, rungs 3, 4 and 5, and the sums of dweight and dbias.
 *
 * dx in the same pass as the statistics: with xhat = (x - mean) rstd (RMSNorm: x rstd) and g = dy w,
 *     dx = rstd (g - mean(g) - xhat mean(g xhat))          (RMSNorm: without the mean(g) term)
 * so a row needs two sums, one block_reduce of a pair, then its write: x and dy read once, dx written once.
 *
 * dweight = sum over rows of dy xhat and dbias = sum of dy, in two stages and without atomics:
 *   stage 1 (norm_backward_kernel): the grid is one wave of blocks that walk the rows. Each row group keeps in
 *     registers the sums of the columns its threads own (the same columns in every row, so head = 0 here), over its
 *     rows in the order it takes them, and writes them at the end as its row of `sums`;
 *   stage 2 (column_sums_kernel): each column's partial sums are added in a fixed order, 16 strided runs then those
 *     16 in order (exercises/two_stage.h is the same two stages on the CPU).
 * Which block finishes first never changes the order, so two runs give the same bits; float atomics would not.
 */
#include <math.h>

#include "course_check.h"
#include "row_reduce.cuh"
#include "rowwise_kernels.h"

namespace {

using namespace rw;

template <typename T, bool RMS>
__global__ void __launch_bounds__(kNormBackwardThreads, 2)
    norm_backward_kernel(const T *dy, const T *x, const T *w, const acc_t<T> *mean, const acc_t<T> *rstd, T *dx,
                         acc_t<T> *dw_sums, acc_t<T> *db_sums, int64_t rows, int n, const rowwise_plan p,
                         Two<acc_t<T>> *partials) {
    using A = acc_t<T>;
    constexpr int W = Pack<T>::size, P = backward_packs(sizeof(T));
    const RowPlace at = row_place(p);
    A dw[P][W] = {}, db[P][W] = {};  // this thread's columns' sums over its rows
    unsigned pass = 0;               // rows done: their parity picks rung 5's slot (row_reduce.cuh)
    for (int64_t first = at.first; first < rows; first += at.stride, pass++) {
        const int64_t row = first + at.row_offset;
        const int packs = row < rows ? p.packs : 0;
        const int64_t offset = (row < rows ? row : 0) * n;
        Pack<T> vx[P], vdy[P], vw[P];
        load_row(vx, x + offset, at, 0, packs, n);
        load_row(vdy, dy + offset, at, 0, packs, n);
        if (w != nullptr) load_row(vw, w, at, 0, packs, n);
        const A mu = RMS || packs == 0 ? A(0) : mean[row], r = packs == 0 ? A(0) : rstd[row];
        auto xhat = [&](int k, int e) { return (to_acc(vx[k].v[e]) - mu) * r; };
        auto g = [&](int k, int e) {
            return w != nullptr ? to_acc(vdy[k].v[e]) * to_acc(vw[k].v[e]) : to_acc(vdy[k].v[e]);
        };

        Two<A> sums = {0, 0};  // sum(g), sum(g xhat)
        each_element<P, W>(at, 0, packs, n, [&](int k, int e, int) {
            sums.a += g(k, e);
            sums.b += g(k, e) * xhat(k, e);
        });
        sums = block_reduce(sums, Add{}, p);
        sums = blocks_reduce(sums, Add{}, p, at, row, pass, partials);
        if (packs == 0 || p.split == 1) continue;  // rung 4's first launch only writes its statistics

        const A mean_g = RMS ? A(0) : sums.a / A(n), mean_gx = sums.b / A(n);
        each_element<P, W>(at, 0, packs, n, [&](int k, int e, int) {
            dw[k][e] += to_acc(vdy[k].v[e]) * xhat(k, e);
            db[k][e] += to_acc(vdy[k].v[e]);
            vx[k].v[e] = from_acc<T>(r * (g(k, e) - mean_g - xhat(k, e) * mean_gx));
        });
        store_row(vx, dx + offset, at, 0, packs, n);
    }
    if (p.split != 1 && (dw_sums != nullptr || db_sums != nullptr)) {  // stage 1's result: this group's row of sums
        const int in_block = p.row_threads < p.threads ? p.row_threads : p.threads;
        const int64_t group = (int64_t)(blockIdx.x / p.blocks_per_row) * (p.threads / in_block) + at.row_offset;
        each_element<P, W>(at, 0, p.packs, n, [&](int k, int e, int column) {
            if (dw_sums != nullptr) dw_sums[group * n + column] = dw[k][e];
            if (db_sums != nullptr) db_sums[group * n + column] = db[k][e];
        });
    }
    blocks_done(p);
}

// Stage 2: out[c] = the sum of sums[0..groups)[c]. Thread (c, j) of a 32 x 16 block adds the rows j, j + 16, ...;
// thread (c, 0) then adds the 16 results in order.
constexpr int kRuns = 16;

template <typename T>
__global__ void __launch_bounds__(32 * kRuns)
    column_sums_kernel(const acc_t<T> *sums, int64_t groups, int64_t n, T *out) {
    using A = acc_t<T>;
    __shared__ A runs[kRuns][33];
    const int64_t column = (int64_t)blockIdx.x * 32 + threadIdx.x;
    A run = 0;
    if (column < n) {
#pragma unroll 4
        for (int64_t group = threadIdx.y; group < groups; group += kRuns) run += sums[group * n + column];
    }
    runs[threadIdx.y][threadIdx.x] = run;
    __syncthreads();
    if (threadIdx.y == 0 && column < n) {
        A total = 0;
        for (int j = 0; j < kRuns; j++) total += runs[j][threadIdx.x];
        out[column] = from_acc<T>(total);
    }
}

}  // namespace

namespace rw {

const void *norm_backward_address(rowwise_op op, course_dtype dtype) {
    const void *kernel = nullptr;
    course::with_element_type(dtype, [&](auto type) {
        using T = decltype(type);
        kernel = op == ROWWISE_RMS_NORM ? reinterpret_cast<const void *>(norm_backward_kernel<T, true>)
                                        : reinterpret_cast<const void *>(norm_backward_kernel<T, false>);
        return cudaSuccess;
    });
    return kernel;
}

cudaError_t norm_backward(rowwise_op op, course_dtype dtype, const rowwise_args *a, const rowwise_plan *p,
                          void *partials, void *sums, cudaStream_t stream) {
    return course::with_element_type(dtype, [&](auto type) {
        using T = decltype(type);
        using A = acc_t<T>;
        const int64_t groups = plan_groups(*p);
        A *const base = static_cast<A *>(sums);  // NULL where there are no rows (groups 0: nothing to read or write)
        A *dw_sums = a->dw != nullptr ? base : nullptr;
        A *db_sums = a->db != nullptr ? base + (a->dw != nullptr ? groups * a->n : 0) : nullptr;
        if (p->grid > 0) {
            const auto kernel = op == ROWWISE_RMS_NORM ? norm_backward_kernel<T, true> : norm_backward_kernel<T, false>;
            CUDA_RETURN_IF_ERROR(launch(kernel, *p, stream, static_cast<const T *>(a->dy), static_cast<const T *>(a->x),
                                        static_cast<const T *>(a->w), static_cast<const A *>(a->mean),
                                        static_cast<const A *>(a->rstd), static_cast<T *>(a->y), dw_sums, db_sums,
                                        a->rows, a->n, *p, static_cast<Two<A> *>(partials)));
        }
        if (p->split == 1) return cudaSuccess;  // the sums come after rung 4's second launch
        // With no rows the sums are of nothing: the kernel writes zeros (and reads no partial row).
        const dim3 block(32, kRuns), grid((unsigned)((a->n + 31) / 32));
        if (a->dw != nullptr)
            column_sums_kernel<T><<<grid, block, 0, stream>>>(dw_sums, groups, a->n, static_cast<T *>(a->dw));
        if (a->db != nullptr)
            column_sums_kernel<T><<<grid, block, 0, stream>>>(db_sums, groups, a->n, static_cast<T *>(a->db));
        return cudaGetLastError();
    });
}

}  // namespace rw
