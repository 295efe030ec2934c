/*
 * norm_kernels.cu — LayerNorm and RMSNorm over the last dimension on the GPU, forward and backward, in the row
 * layouts of rowwise_kernels.cuh (versions 3-5: the row in registers; over a cluster; over two launches).
 *
 *   norm_forward_kernel<RMS=false>  LayerNorm. Each thread takes the mean of its own elements, then the sum of
 *       squares about that mean (two passes over registers: exact enough for any mean); the group merges the
 *       (count, mean, M2) triples with Chan's formula, the merge of Welford's method. y = (x - mean) rstd w + b.
 *   norm_forward_kernel<RMS=true>   RMSNorm: a plain sum of squares. y = x rstd w.
 *     Both write mean and rstd per row (float, or double for float64) for the backward.
 *   norm_backward_kernel<RMS>       with xhat = (x - mean) rstd and g = dy w, one reduction per row of sum(g) and
 *       sum(g xhat), then dx = rstd (g - mean(g) - xhat mean(g xhat)) (RMSNorm: no mean(g) term, mean = 0).
 *       dweight = sum over rows of dy xhat and dbias = sum of dy: each thread adds its columns over the rows its block
 *       walks, in registers; each block writes its sums as one row of a partial array [blocks][n] (float); a second
 *       kernel (sum_partials_kernel) adds the rows of that array in a fixed order. No float atomics: two runs give
 *       the same bits.
 * Weight and bias: kernels for rows split over blocks read them once, before the rows, into registers; whole-row
 * kernels read them pack by pack for each row while writing (L1 hits), so that a thread holds fewer registers.
 */
#include <cuda_runtime.h>

#include "course_check.h" /* CUDA_RETURN_IF_ERROR: every launch and API call is checked */
#include "rowwise_kernels.cuh"

namespace rowwise {

template <typename A, bool RMS>
using NormStats = typename std::conditional<RMS, Sums<A, 1>, Moments<A>>::type;

// At most 64 registers (min_blocks) for RMSNorm on whole rows, packed or an aligned body (kBody, odd n): ptxas
// reports no spill there.
template <typename T, int PPT, int LAYOUT, bool WHOLE, bool RMS>
__global__ void __launch_bounds__(kMaxThreads,
                                  min_blocks(RMS &&LAYOUT != kSingles && WHOLE && PPT * sizeof(Pack<T>) <= 64))
    norm_forward_kernel(const T *__restrict__ x, const T *__restrict__ w, const T *__restrict__ b, T *__restrict__ y,
                        acc_t<T> *__restrict__ mean_out, acc_t<T> *__restrict__ rstd_out, int64_t rows, int64_t n,
                        acc_t<T> eps, Layout layout, NormStats<acc_t<T>, RMS> *stats) {
    using A = acc_t<T>;
    using St = NormStats<A, RMS>;
    using Sl = Slice<T, PPT, LAYOUT>;
    __shared__ Exchange<St> exchange;
    const Ctx c = Sl::locate(make_ctx<WHOLE>(layout, n), x);
    const int count = Sl::count(c);
    // This thread's columns of the weight and bias. Rows split over blocks (!WHOLE) hold them in registers over the
    // rows, loaded once; whole-row kernels read them pack by pack for each row instead (L1 hits; below).
    Sl wheld, bheld;
    if constexpr (!WHOLE) {
        if (w != nullptr) wheld.load_vector(w, c, count);
        if (!RMS && b != nullptr) bheld.load_vector(b, c, count);
    }
    for_each_row(c, rows, [&](int64_t row, bool active, int parity) {
        Sl v;
        process_row<WHOLE, St>(
            c, row, active, parity, exchange, stats, [&] { v.load(x + row * n, c, count); },
            [&] {
                if constexpr (RMS) {
                    St s = St::empty();
                    RW_EACH(Sl::K, Sl::S) {
                        if (Sl::valid(count, k, j)) s.v[0] += v.get(k, j) * v.get(k, j);
                    }
                    return s;
                } else {  // this thread's (count, mean, M2), two passes over its registers
                    A held = A(0), sum = A(0);
                    RW_EACH(Sl::K, Sl::S) {
                        if (Sl::valid(count, k, j)) {
                            held += A(1);
                            sum += v.get(k, j);
                        }
                    }
                    if (held == A(0)) return St::empty();
                    const A mean = sum / held;
                    A m2 = A(0);
                    RW_EACH(Sl::K, Sl::S) {
                        if (Sl::valid(count, k, j)) m2 += (v.get(k, j) - mean) * (v.get(k, j) - mean);
                    }
                    return St{held, mean, m2};
                }
            },
            [&](const St &total) {  // widen again, write pack by pack
                A mean = A(0), rstd;
                if constexpr (RMS) {
                    rstd = rsqrt_acc(total.v[0] / A(n) + eps);
                } else {
                    mean = total.mean;
                    rstd = rsqrt_acc(total.m2 / A(n) + eps);
                }
                if (c.rank == 0 && c.t == 0) {
                    if (!RMS) mean_out[row] = mean;
                    rstd_out[row] = rstd;
                }
                v.refresh();
                // WHOLE: the weight and bias pack by pack for each row, not held over the rows (32 registers more
                // for 4 bf16 packs of each).
                Sl wv = wheld, bv = bheld;
                const T *wl = in_loop(w), *bl = in_loop(b);
#pragma unroll
                for (int k = 0; k < Sl::K; ++k) {
                    if (!Sl::any(count, k)) continue;
                    if (WHOLE && w != nullptr) wv.template load_vector_pack<true>(wl, c, count, k);
                    if (WHOLE && !RMS && b != nullptr) bv.template load_vector_pack<true>(bl, c, count, k);
                    A out[Sl::S];
#pragma unroll
                    for (int j = 0; j < Sl::S; ++j) {
                        out[j] = (v.get(k, j) - mean) * rstd;
                        if (w != nullptr) out[j] *= wv.get(k, j);
                        if (!RMS && b != nullptr) out[j] += bv.get(k, j);
                    }
                    Sl::store(y + row * n, c, count, k, out);
                }
            });
    });
    if (!WHOLE) finish(c);
}

template <typename T, int PPT, int LAYOUT, bool WHOLE, bool RMS>
__global__ void __launch_bounds__(kMaxBackwardThreads)
    norm_backward_kernel(const T *__restrict__ dy, const T *__restrict__ x, const T *__restrict__ w,
                         const acc_t<T> *__restrict__ mean_in, const acc_t<T> *__restrict__ rstd_in, T *__restrict__ dx,
                         acc_t<T> *__restrict__ partial_w, acc_t<T> *__restrict__ partial_b, int64_t rows, int64_t n,
                         Layout layout, Sums<acc_t<T>, RMS ? 1 : 2> *stats) {
    using A = acc_t<T>;
    using St = Sums<A, RMS ? 1 : 2>;
    using Sl = Slice<T, PPT, LAYOUT>;
    __shared__ Exchange<St> exchange;
    extern __shared__ unsigned char scratch_bytes[];  // blocks of several rows: n entries to combine dw, then db
    const Ctx c = Sl::locate(make_ctx<WHOLE>(layout, n), x);
    const int count = Sl::count(c);
    Sl wv;
    if (w != nullptr) wv.load_vector(w, c, count);
    A sum_w[Sl::K][Sl::S], sum_b[Sl::K][Sl::S];  // this thread's columns of dweight and dbias, over its rows
    RW_EACH(Sl::K, Sl::S) {
        sum_w[k][j] = A(0);
        sum_b[k][j] = A(0);
    }
    for_each_row(c, rows, [&](int64_t row, bool active, int parity) {
        Sl xv, gv;
        A mean = A(0), rstd = A(0);
        process_row<WHOLE, St>(
            c, row, active, parity, exchange, stats,
            [&] {
                xv.load(x + row * n, c, count);
                gv.load(dy + row * n, c, count);
                if (!RMS) mean = mean_in[row];
                rstd = rstd_in[row];
            },
            [&] {
                St s = St::empty();
                RW_EACH(Sl::K, Sl::S) {
                    if (Sl::valid(count, k, j)) {
                        const A xhat = (xv.get(k, j) - mean) * rstd;
                        const A g = w != nullptr ? gv.get(k, j) * wv.get(k, j) : gv.get(k, j);
                        s.v[0] += g * xhat;
                        if constexpr (!RMS) s.v[1] += g;
                    }
                }
                return s;
            },
            [&](const St &total) {
                const A mean_gx = total.v[0] / A(n);
                A mean_g = A(0);
                if constexpr (!RMS) mean_g = total.v[1] / A(n);
                xv.refresh();
                gv.refresh();
#pragma unroll
                for (int k = 0; k < Sl::K; ++k) {
                    if (!Sl::any(count, k)) continue;
                    A out[Sl::S];
#pragma unroll
                    for (int j = 0; j < Sl::S; ++j) {
                        const A xhat = (xv.get(k, j) - mean) * rstd, d = gv.get(k, j);
                        const A g = w != nullptr ? d * wv.get(k, j) : d;
                        if (Sl::valid(count, k, j)) {
                            sum_w[k][j] += d * xhat;
                            sum_b[k][j] += d;
                        }
                        out[j] = rstd * (g - mean_g - xhat * mean_gx);
                    }
                    Sl::store(dx + row * n, c, count, k, out);
                }
            });
    });
    if (c.mode != kSplitStats) {
        A *scratch = reinterpret_cast<A *>(scratch_bytes);
        if (partial_w != nullptr) write_partials<Sl>(c, count, sum_w, partial_w, scratch);
        if (partial_b != nullptr) write_partials<Sl>(c, count, sum_b, partial_b, scratch);
    }
    if (!WHOLE) finish(c);
}

// ---- launchers ---------------------------------------------------------------------------------------------------
template <typename T, bool RMS>
using ForwardKernel = void (*)(const T *, const T *, const T *, T *, acc_t<T> *, acc_t<T> *, int64_t, int64_t, acc_t<T>,
                               Layout, NormStats<acc_t<T>, RMS> *);
template <typename T, bool RMS>
using BackwardKernel = void (*)(const T *, const T *, const T *, const acc_t<T> *, const acc_t<T> *, T *, acc_t<T> *,
                                acc_t<T> *, int64_t, int64_t, Layout, Sums<acc_t<T>, RMS ? 1 : 2> *);

template <typename T, bool RMS>
struct ForwardMake {
    template <int PPT, int LAYOUT, bool WHOLE>
    static ForwardKernel<T, RMS> get() {
        return norm_forward_kernel<T, PPT, LAYOUT, WHOLE, RMS>;
    }
};
template <typename T, bool RMS>
struct BackwardMake {
    template <int PPT, int LAYOUT, bool WHOLE>
    static BackwardKernel<T, RMS> get() {
        return norm_backward_kernel<T, PPT, LAYOUT, WHOLE, RMS>;
    }
};

template <typename T, bool RMS>
cudaError_t norm_run(int backward, int version, const rowwise_args *a, const rowwise_tuning *tuning, void *workspace,
                     size_t workspace_bytes, cudaStream_t stream, bool plan_only, Plan *out) {
    using A = acc_t<T>;
    Plan p;
    p.packed = row_layout(a, sizeof(T));
    const int64_t rows = a->rows, n = a->n;
    if (!shape_plan<T>(backward, version, n, tuning, device_has_clusters(), &p)) return cudaErrorInvalidValue;
    const T *x = static_cast<const T *>(a->x), *w = static_cast<const T *>(a->w);
    A *mean = static_cast<A *>(a->mean), *rstd = static_cast<A *>(a->rstd);
    if (!backward) {
        auto kernel = pick_forward<T, ForwardKernel<T, RMS>, ForwardMake<T, RMS>>(p.ppt, p.packed, p.mode == kWhole);
        if (kernel == nullptr) return cudaErrorInvalidValue;
        CUDA_RETURN_IF_ERROR(size_plan(kernel, version, 0, rows, n, sizeof(A), sizeof(NormStats<A, RMS>), 0, &p));
        *out = p;
        if (plan_only || rows == 0 || n == 0) return cudaSuccess;
        if (workspace_bytes < workspace_of(p)) return cudaErrorInvalidValue;
        auto *stats = static_cast<NormStats<A, RMS> *>(carve(p, workspace).stats);
        const T *b = static_cast<const T *>(a->b);
        T *y = static_cast<T *>(a->y);
        const A eps = (A)a->eps;
        if (p.mode == kSplitStats) {
            CUDA_RETURN_IF_ERROR(
                launch(kernel, p, stream, x, w, b, y, mean, rstd, rows, n, eps, layout_of(p, kSplitStats), stats));
            return launch(kernel, p, stream, x, w, b, y, mean, rstd, rows, n, eps, layout_of(p, kSplitApply), stats);
        }
        return launch(kernel, p, stream, x, w, b, y, mean, rstd, rows, n, eps, layout_of(p, p.mode), stats);
    }
    auto kernel = pick_backward<T, BackwardKernel<T, RMS>, BackwardMake<T, RMS>>(p.ppt, p.packed, p.mode == kWhole);
    if (kernel == nullptr) return cudaErrorInvalidValue;
    const int partials = (a->dw != nullptr) + (!RMS && a->db != nullptr);
    CUDA_RETURN_IF_ERROR(
        size_plan(kernel, version, 1, rows, n, sizeof(A), sizeof(Sums < A, RMS ? 1 : 2 >), partials, &p));
    *out = p;
    if (plan_only || n == 0) return cudaSuccess;
    if (workspace_bytes < workspace_of(p)) return cudaErrorInvalidValue;
    const Workspace ws = carve(p, workspace);
    A *partial_w = a->dw != nullptr ? static_cast<A *>(ws.partial[0]) : nullptr;
    A *partial_b = !RMS && a->db != nullptr ? static_cast<A *>(ws.partial[a->dw != nullptr ? 1 : 0]) : nullptr;
    auto *stats = static_cast<Sums<A, RMS ? 1 : 2> *>(ws.stats);
    const T *dy = static_cast<const T *>(a->dy);
    T *dx = static_cast<T *>(a->y);
    if (rows > 0) {
        if (p.mode == kSplitStats) {
            CUDA_RETURN_IF_ERROR(launch(kernel, p, stream, dy, x, w, mean, rstd, dx, partial_w, partial_b, rows, n,
                                        layout_of(p, kSplitStats), stats));
            CUDA_RETURN_IF_ERROR(launch(kernel, p, stream, dy, x, w, mean, rstd, dx, partial_w, partial_b, rows, n,
                                        layout_of(p, kSplitApply), stats));
        } else {
            CUDA_RETURN_IF_ERROR(launch(kernel, p, stream, dy, x, w, mean, rstd, dx, partial_w, partial_b, rows, n,
                                        layout_of(p, p.mode), stats));
        }
    } else {  // no rows: the sums are zero
        if (partial_w != nullptr) CUDA_RETURN_IF_ERROR(cudaMemsetAsync(partial_w, 0, p.partial_bytes, stream));
        if (partial_b != nullptr) CUDA_RETURN_IF_ERROR(cudaMemsetAsync(partial_b, 0, p.partial_bytes, stream));
    }
    if (partial_w != nullptr) CUDA_RETURN_IF_ERROR(sum_partials<T>(p, partial_w, n, a->dw, stream));
    if (partial_b != nullptr) CUDA_RETURN_IF_ERROR(sum_partials<T>(p, partial_b, n, a->db, stream));
    return cudaSuccess;
}

cudaError_t norm_dispatch(bool rms, int backward, int version, course_dtype dtype, const rowwise_args *a,
                          const rowwise_tuning *tuning, void *workspace, size_t workspace_bytes, cudaStream_t stream,
                          bool plan_only, Plan *out) {
    return course::with_element_type(dtype, [&](auto zero) {
        using T = decltype(zero);
        return rms ? norm_run<T, true>(backward, version, a, tuning, workspace, workspace_bytes, stream, plan_only, out)
                   : norm_run<T, false>(backward, version, a, tuning, workspace, workspace_bytes, stream, plan_only,
                                        out);
    });
}

}  // namespace rowwise
