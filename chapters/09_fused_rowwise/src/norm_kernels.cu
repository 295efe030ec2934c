/*
 * norm_kernels.cu — LayerNorm and RMSNorm over the last dimension on the GPU, forward and backward, in the row
 * layouts of rowwise_kernels.cuh (versions 3-5: the row in registers; over a cluster; over two launches).
 *
 *   norm_forward_kernel<RMS=false>  LayerNorm, y = (x - mean) rstd w + b. Whole rows: the row's mean, then its sum of
 *       squares about that mean, two reductions of plain sums over values held in registers (the corrected two-pass
 *       algorithm: stable for any mean, no memory traffic more). Rows split over blocks: the same two passes over
 *       each block's segment, then the blocks' (count, mean, M2) triples merged with Chan's formula (Welford's merge).
 *   norm_forward_kernel<RMS=false, GROUP>  the same, built for rows that fill a group of GROUP threads exactly
 *       (FixedForward, pick_fixed): the row length a constant, as in torch.compile's kernels. bfloat16's is
 *       norm_forward_five_kernel, the same under a cap of 48 registers (five blocks of 256 an SM).
 *   norm_forward_kernel<RMS=true>   RMSNorm: a plain sum of squares. y = x rstd w.
 *     Both write mean and rstd per row (float, or double for float64) for the backward.
 *   norm_backward_kernel<RMS>       with xhat = (x - mean) rstd and g = dy w, one reduction per row of sum(g) and
 *       sum(g xhat), then dx = rstd (g - mean(g) - xhat mean(g xhat)) (RMSNorm: no mean(g) term, mean = 0).
 *       dweight = sum over rows of dy xhat and dbias = sum of dy: each thread adds its columns over the rows its block
 *       walks, in its own slots of shared memory (ColumnSums); each block writes its sums as one row of a partial
 *       array [blocks][n] (float); a second kernel (sum_partials_kernel) adds the rows of that array in a fixed
 *       order. No float atomics: two runs give the same bits.
 *   norm_backward_capped_kernel     the same backward under a register cap (CappedBackward): float32 rows over
 *       blocks of 256 threads at 80 registers, bfloat16 RMSNorm rows over blocks of 128 at 96; more blocks an SM.
 *   rms_norm_reread_kernel          version 6, RMSNorm's forward for rows too long for one block's registers: a block
 *       per row walks it twice, the sum of squares then the output; the second read comes from L2
 *       (rowwise_kernels.cuh, "version 6"). Also built for 8 packs a step (float32 rows of 16385-32768 where the
 *       memory is fast: fast_reread_choice), which loads the weight pack by pack: loaded first, as at 4, it spilled.
 *   layer_norm_reread_kernel        version 6, LayerNorm's forward the same way: the first walk's statistic is each
 *       thread's (count, mean, M2), each step's made by two passes over its values and merged with Chan's formula.
 *       Where a row, its weight and its bias overflow L1, x's loads skip L1 (SKIP_L1, reread_skips_l1). Blocks of
 *       512 or 1024 with the weight and bias take its build for that block size (B: constant pack addresses, the
 *       write walk's x, weight and bias loaded before its stores; layer_norm_built_for_block).
 *     Both (and the softmax's) also run a row over a cluster of blocks, each block walking its segment (reread_ctx):
 *     16-bit LayerNorm rows too long for a block per row to keep in L2 (kRereadSegmentBytes).
 * Weight and bias: the forward reads them pack by pack for each row where it uses them (L1 hits), so that a thread
 * holds fewer registers, except rows of 8 packs a thread over blocks, which keep them in shared memory (HOLD_PARAMS:
 * a block's segment of both is 128 KB in float32, more than L1 keeps beside the staged rows); the backward of rows
 * split over blocks holds the weight over the rows. A missing weight reads as ones and a missing bias as zeros: one
 * code path.
 */
#include <cuda_runtime.h>

#include "course_check.h" /* CUDA_RETURN_IF_ERROR: every launch and API call is checked */
#include "rowwise_kernels.cuh"

namespace rowwise {

template <typename A, bool RMS>
using NormStats = typename std::conditional<RMS, Sums<A, 1>, Moments<A>>::type;

// Packed rows of at most 64 bytes a thread (4 packs) ask for two blocks of 512 an SM (64 registers): whole rows fit
// with no spill (ptxas -v, NOTES.md), and so do rows over blocks in the kernels without the switches, with a little
// spill (bf16 LayerNorm 92 bytes) but faster than at 128 registers (the kernels with the switches: below). An aligned
// body (kBody, odd n) takes the cap for whole rows only (the same packs and an edge pack more, no spill); its rows
// over blocks are left free (no spill).
template <typename T, int PPT, int LAYOUT, bool WHOLE>
constexpr bool forward_fits_64() {
    if (LAYOUT == kPacks) return PPT * sizeof(Pack<T>) <= 64;
    return LAYOUT == kBody && WHOLE && PPT * sizeof(Pack<T>) <= 64;
}

template <typename T, int PPT, int LAYOUT, bool WHOLE, bool RMS, bool EXP, int GROUP = 0>
__device__ __forceinline__ void norm_forward(const T *__restrict__ x, const T *__restrict__ w, const T *__restrict__ b,
                                             T *__restrict__ y, acc_t<T> *__restrict__ mean_out,
                                             acc_t<T> *__restrict__ rstd_out, int64_t rows, int64_t n, acc_t<T> eps,
                                             Layout layout, NormStats<acc_t<T>, RMS> *stats) {
    using A = acc_t<T>;
    using St = NormStats<A, RMS>;
    using Sl = Slice<T, PPT, LAYOUT>;
    __shared__ Exchange<St> exchange;
    static_assert(GROUP == 0 || (WHOLE && LAYOUT == kPacks && !EXP), "a fixed row length: whole rows of packs only");
    if constexpr (GROUP > 0) n = (int64_t)GROUP * PPT * Sl::S;  // the host checked that the row is this long
    const Ctx c = Sl::locate(fixed_ctx<GROUP>(make_ctx<WHOLE, EXP>(layout, n)), x);
    const int count = GROUP > 0 ? PPT : Sl::count(c);  // every pack of every thread inside the row
    if constexpr (EXP) {                               // experimental (rowwise_kernels.cuh)
        open_mailbox<St>(c);
        stage_first<St, Sl>(x, rows, c, count);
    }
    // HOLD_PARAMS (the kernels of 8 packs a thread only: no register cap to move): each thread copies its packs of
    // the weight (and of the bias, where the host found room: kHoldBias) into its own slots of shared memory once,
    // and write_row reads them from there. Its own slots: no barrier, as for the staged rows.
    constexpr bool kCanHold = EXP && LAYOUT == kPacks && PPT * sizeof(Pack<T>) > 64;
    // This thread's columns of the weight and bias, read pack by pack for each row where they are used (L1 hits;
    // write_row below), not held over the rows (32 registers more for 4 bf16 packs of each). A missing
    // weight reads as ones and a missing bias as zeros, so that every row takes the same instructions,
    // y = (x - mean) rstd w + b, and the compiler keeps one code path (not four, each with its own registers).
    auto param_pack = [&](Sl &p, const T *v, A absent, int k) {
        if (v != nullptr) {
            p.template load_vector_pack<true>(v, c, count, k);
        } else {
            A fill[Sl::S];
#pragma unroll
            for (int j = 0; j < Sl::S; ++j) fill[j] = absent;
            Bits<T>::put(p.w[k], fill);
        }
    };
    // Pack k of held vector `which` (0: the weight, 1: the bias) into and out of this thread's slot.
    auto hold = [&](const Sl &p, int which, int k) {
        *held_slot<St, PPT>(c, which, k) = make_uint4(p.w[k][0], p.w[k][1], p.w[k][2], p.w[k][3]);
    };
    auto unhold = [&](Sl &p, int which, int k) {
        const uint4 q = *held_slot<St, PPT>(c, which, k);
        p.w[k][0] = q.x, p.w[k][1] = q.y, p.w[k][2] = q.z, p.w[k][3] = q.w;
    };
    if constexpr (kCanHold) {
        if (c.flags & ROWWISE_FLAG_HOLD_PARAMS) {
            Sl wv, bv;
#pragma unroll
            for (int k = 0; k < Sl::K; ++k) {
                if (!Sl::any(count, k)) continue;
                param_pack(wv, w, A(1), k);
                hold(wv, 0, k);
                if (!RMS && (c.flags & kHoldBias)) {
                    param_pack(bv, b, A(0), k);
                    hold(bv, 1, k);
                }
            }
        }
    }
    // y = ((x - mean) rstd + offset) w + b, widened again from the words and written pack by pack; mean and rstd
    // saved for the backward (offset: below, the correction of LayerNorm's two-pass mean; elsewhere zero).
    auto write_row = [&](Sl &v, int64_t row, A mean, A rstd, A offset, A saved_mean) {
        if (c.rank == 0 && c.t == 0) {
            if (!RMS) mean_out[row] = saved_mean;
            rstd_out[row] = rstd;
        }
        v.refresh();
        Sl wv, bv;
        const T *wl = in_loop(w), *bl = in_loop(b);
#pragma unroll
        for (int k = 0; k < Sl::K; ++k) {
            if (!Sl::any(count, k)) continue;
            if constexpr (kCanHold) {
                if (c.flags & ROWWISE_FLAG_HOLD_PARAMS)
                    unhold(wv, 0, k);
                else
                    param_pack(wv, wl, A(1), k);
                if (!RMS && (c.flags & kHoldBias))
                    unhold(bv, 1, k);
                else if (!RMS)
                    param_pack(bv, bl, A(0), k);
            } else {
                param_pack(wv, wl, A(1), k);
                if (!RMS) param_pack(bv, bl, A(0), k);
            }
            A out[Sl::S];
#pragma unroll
            for (int j = 0; j < Sl::S; ++j) {
                out[j] = ((v.get(k, j) - mean) * rstd + offset) * wv.get(k, j);
                if (!RMS) out[j] += bv.get(k, j);
            }
            Sl::store(y + row * n, c, count, k, out);
        }
    };
    // LayerNorm: two passes over the registers, each with its own reduction over the group: the sum of the row's
    // elements (so their mean), then their sum of (x - mean)^2. Plain float sums, no (count, mean, M2) triples to
    // merge at every step of a reduction: two reductions (two barriers when a row spans warps) instead of one, no
    // memory traffic more (both passes read registers), as stable (the second pass subtracts the elements' own mean),
    // and fewer registers live (ptxas: 128 -> 62 for bf16 4 packs, NOTES.md "Third pass").
    // The second pass also sums the deviations x - mean: zero in exact arithmetic; what is left, r, is the rounding of
    // the first pass's mean, and mean + r / n and M2 - r^2 / n correct it (the corrected two-pass algorithm of Chan,
    // Golub and LeVeque). It matters for rows with a large mean (tests/test_numerics.py).
    // A row over several blocks: each block does the same over its segment, and only then do the blocks' (count,
    // mean, M2) triples meet, merged with Chan's formula: one exchange a row in a cluster, or one triple a block in
    // the split modes' array. (Each thread's own triple, merged at every step of the reductions, as before: the same
    // speed at 4096 x 32768 on the H100, 13 registers more, slower at 2^18: NOTES.md, "LayerNorm over blocks".)
    // Each reduction has its own double-buffered exchange (see Exchange): one exchange used twice a row would let a
    // fast thread overwrite a buffer that a slow thread has not read yet.
    if constexpr (!RMS) {
        using Sum1 = Sums<A, 1>;
        using Sum2 = Sums<A, 2>;
        __shared__ Exchange<Sum1> exchange_sum;
        __shared__ Exchange<Sum2> exchange_m2;
        const A held = A(c.seg_end - c.seg_begin);  // the elements of a row this group holds (all, for whole rows)
        for_each_row(c, rows, [&](int64_t row, bool active, int parity) {
            Sl v;
            if (!WHOLE && c.mode == kSplitApply) {  // no reduction here: the first launch left every segment's part
                if (!active) return;
                load_row<St, Sl, T, kCanHold>(v, x, row, rows, c, count, parity);
                if constexpr (kCanHold) {  // one set of staged rows: the next row's copy once this one is read
                    if (c.flags & kStageOneSet) {
                        A used = A(0);
                        RW_EACH(Sl::K, Sl::S) {
                            if (Sl::valid(count, k, j)) used += v.get(k, j);
                        }
                        stage_next_after<St, Sl>(x, row, rows, c, count, used);
                    }
                }
                St total = stats[row * c.C];
                for (int r = 1; r < c.C; ++r) total = merge(total, stats[row * c.C + r]);
                write_row(v, row, total.mean, rsqrt_acc(total.m2 / A(n) + eps), A(0), total.mean);
                return;
            }
            Sum1 s = Sum1::empty();
            if (active) {
                load_row<St, Sl, T, kCanHold>(v, x, row, rows, c, count, parity);
                RW_EACH(Sl::K, Sl::S) {
                    if (Sl::valid(count, k, j)) s.v[0] += v.get(k, j);
                }
                if constexpr (kCanHold) stage_next_after<St, Sl>(x, row, rows, c, count, s.v[0]);
            }
            const A mean = reduce_group(s, c, exchange_sum, parity).v[0] / held;
            Sum2 q = Sum2::empty();  // v[0]: sum of (x - mean)^2, v[1]: sum of (x - mean)
            if (active) {
                RW_EACH(Sl::K, Sl::S) {
                    if (Sl::valid(count, k, j)) {
                        const A d = v.get(k, j) - mean;
                        q.v[0] += d * d;
                        q.v[1] += d;
                    }
                }
            }
            q = reduce_group(q, c, exchange_m2, parity);
            const A r = q.v[1] / held;
            if constexpr (WHOLE) {
                const A rstd = rsqrt_acc(fmax(q.v[0] / A(n) - r * r, A(0)) + eps);
                // y from (x - mean) - r, not from x - (mean + r): the rounded sum would lose r again.
                if (active) write_row(v, row, mean, rstd, -r * rstd, mean + r);
            } else {
                St total{held, mean + r, fmax(q.v[0] - r * q.v[1], A(0))};  // this segment's part
                if (c.mode == kSplitStats) {
                    if (active && threadIdx.x == 0) stats[row * c.C + c.rank] = total;
                    return;
                }
                total = cluster_combine(total, c, exchange, parity);
                if (active) write_row(v, row, total.mean, rsqrt_acc(total.m2 / A(n) + eps), A(0), total.mean);
            }
        });
    } else {  // RMSNorm: one sum a row, of x^2
        for_each_row(c, rows, [&](int64_t row, bool active, int parity) {
            Sl v;
            process_row<WHOLE, St>(
                c, row, active, parity, exchange, stats,
                [&] { load_row<St, Sl, T, kCanHold>(v, x, row, rows, c, count, parity); },
                [&] {
                    St s = St::empty();
                    RW_EACH(Sl::K, Sl::S) {
                        if (Sl::valid(count, k, j)) s.v[0] += v.get(k, j) * v.get(k, j);
                    }
                    return s;
                },
                [&](const St &total) { write_row(v, row, A(0), rsqrt_acc(total.v[0] / A(n) + eps), A(0), A(0)); });
        });
    }
    if (!WHOLE) finish(c);
}

template <typename T, int PPT, int LAYOUT, bool WHOLE, bool RMS, int GROUP = 0>
__global__ void __launch_bounds__(forward_bound(forward_fits_64<T, PPT, LAYOUT, WHOLE>()))
    norm_forward_kernel(const T *__restrict__ x, const T *__restrict__ w, const T *__restrict__ b, T *__restrict__ y,
                        acc_t<T> *__restrict__ mean_out, acc_t<T> *__restrict__ rstd_out, int64_t rows, int64_t n,
                        acc_t<T> eps, Layout layout, NormStats<acc_t<T>, RMS> *stats) {
    norm_forward<T, PPT, LAYOUT, WHOLE, RMS, false, GROUP>(x, w, b, y, mean_out, rstd_out, rows, n, eps, layout, stats);
}

// The kernels with the switches (rows over blocks in 16-byte packs) are a kernel of their own, so that they can take
// a register cap that __launch_bounds__ cannot say for blocks of up to 512 threads: 80 registers for up to 4 packs a
// thread, the fewest with no spill (ptxas -v: 72 spilled 28-48 bytes), six blocks of 128 threads an SM at 4096 x
// 32768 instead of four at 113-123 registers (NOTES.md, "Six blocks an SM"). 8 float32 packs are left free (128).
template <typename T, int PPT>
constexpr int switched_registers() {
    return PPT * sizeof(Pack<T>) <= 64 ? 80 : 128;
}
template <typename T, int PPT, int LAYOUT, bool WHOLE, bool RMS>
__global__ void __maxnreg__((switched_registers<T, PPT>()))
    norm_forward_switched_kernel(const T *__restrict__ x, const T *__restrict__ w, const T *__restrict__ b,
                                 T *__restrict__ y, acc_t<T> *__restrict__ mean_out, acc_t<T> *__restrict__ rstd_out,
                                 int64_t rows, int64_t n, acc_t<T> eps, Layout layout,
                                 NormStats<acc_t<T>, RMS> *stats) {
    norm_forward<T, PPT, LAYOUT, WHOLE, RMS, true>(x, w, b, y, mean_out, rstd_out, rows, n, eps, layout, stats);
}

// Packed whole rows: 2 packs of x and dy a thread fit 64 registers once the dweight/dbias sums live in shared memory.
template <typename T, int PPT, int LAYOUT, bool WHOLE>
constexpr bool backward_fits_64() {
    return LAYOUT != kSingles && WHOLE && PPT * sizeof(Pack<T>) <= 32;
}

// SKIP_L1: x and dy are read past L1 (Slice::load). WORDS: a held 16-bit weight stays in words between rows (below).
template <typename T, int PPT, int LAYOUT, bool WHOLE, bool RMS, bool EXP, bool SKIP_L1 = false, bool WORDS = false>
__device__ __forceinline__ void norm_backward(const T *__restrict__ dy, const T *__restrict__ x,
                                              const T *__restrict__ w, const acc_t<T> *__restrict__ mean_in,
                                              const acc_t<T> *__restrict__ rstd_in, T *__restrict__ dx,
                                              acc_t<T> *__restrict__ partial_w, acc_t<T> *__restrict__ partial_b,
                                              int64_t rows, int64_t n, Layout layout,
                                              Sums<acc_t<T>, RMS ? 1 : 2> *stats) {
    using A = acc_t<T>;
    using St = Sums<A, RMS ? 1 : 2>;
    using Sl = Slice<T, PPT, LAYOUT>;
    using Cs = ColumnSums<T, PPT, LAYOUT>;
    __shared__ Exchange<St> exchange;
    extern __shared__ uint4 column_sums[];  // this block's dweight sums, then its dbias sums (ColumnSums)
    const Ctx c = Sl::locate(make_ctx<WHOLE, EXP>(layout, n), x);
    const int count = Sl::count(c);
    if constexpr (EXP) open_mailbox<St>(c);  // experimental (rowwise_kernels.cuh)
    // The weight: a missing one reads as ones (one code path: g = dy w). Rows split over blocks hold it over the
    // rows; whole-row kernels read it pack by pack where they use it, twice a row (L1 hits), as the forward does:
    // 8 registers fewer for 2 bf16 packs, what it takes to fit 64 with no spill. WORDS: the held weight is widened to
    // float in each walk (refresh). Left to itself, ptxas widens it once before the row loop and keeps the 16 floats
    // of 2 bf16 packs live across every row instead of their 8 words; bf16 LayerNorm then spilled under a cap of 96
    // (CappedBackward). RMSNorm's capped kernel fits 96 without it, and measured 1.6 % slower with it at 4096 x 32768
    // (forward+backward, H200; NOTES.md, "Forty-first pass").
    Sl wheld;
    auto weight_pack = [&](Sl &p, const T *wp, int k) {
        if (wp != nullptr) {
            p.template load_vector_pack<true, true>(wp, c, count, k);
        } else {
            A ones[Sl::S];
#pragma unroll
            for (int j = 0; j < Sl::S; ++j) ones[j] = A(1);
            Bits<T>::put(p.w[k], ones);
        }
    };
    if constexpr (!WHOLE) {
#pragma unroll
        for (int k = 0; k < Sl::K; ++k) weight_pack(wheld, w, k);
    }
    Cs sum_w{reinterpret_cast<typename Cs::Vec *>(column_sums)};
    if constexpr (EXP) sum_w.base = reinterpret_cast<typename Cs::Vec *>(after_mailbox<St>());  // experimental
    Cs sum_b{sum_w.base + (partial_w != nullptr ? Cs::kVectors * blockDim.x : 0)};
    if (partial_w != nullptr) sum_w.zero();
    if (!RMS && partial_b != nullptr) sum_b.zero();
    for_each_row(c, rows, [&](int64_t row, bool active, int parity) {
        Sl xv, gv;
        A mean = A(0), rstd = A(0);
        process_row<WHOLE, St>(
            c, row, active, parity, exchange, stats,
            [&] {
                xv.template load<SKIP_L1>(x + row * n, c, count);
                gv.template load<SKIP_L1>(dy + row * n, c, count);
                if constexpr (EXP) {  // ROWWISE_FLAG_PREFETCH_L2 (experimental)
                    prefetch_next<Sl>(x, row, rows, c);
                    prefetch_next<Sl>(dy, row, rows, c);
                }
                if (!RMS) mean = mean_in[row];
                rstd = rstd_in[row];
            },
            [&] {
                St s = St::empty();
                Sl wv = wheld;
                if constexpr (WORDS) wv.refresh();  // widened here, not before the row loop
                const T *wl = in_loop(w);
#pragma unroll
                for (int k = 0; k < Sl::K; ++k)
                    if (WHOLE) weight_pack(wv, wl, k);
                PerPack<backward_chains<Sl, WHOLE>(), A> gx(A(0)), gs(A(0));  // side by side: the sums' chains of adds
                RW_EACH(Sl::K, Sl::S) {
                    if (Sl::valid(count, k, j)) {
                        const A xhat = (xv.get(k, j) - mean) * rstd;
                        const A g = gv.get(k, j) * wv.get(k, j);
                        gx.add(k, g * xhat);
                        if constexpr (!RMS) gs.add(k, g);
                    }
                }
                s.v[0] = gx.sum();
                if constexpr (!RMS) s.v[1] = gs.sum();
                return s;
            },
            [&](const St &total) {
                const A mean_gx = total.v[0] / A(n);
                A mean_g = A(0);
                if constexpr (!RMS) mean_g = total.v[1] / A(n);
                xv.refresh();
                gv.refresh();
                Sl wv = wheld;
                if constexpr (WORDS) wv.refresh();
                const T *wl = in_loop(w);
#pragma unroll
                for (int k = 0; k < Sl::K; ++k) {
                    if (!Sl::any(count, k)) continue;
                    if (WHOLE) weight_pack(wv, wl, k);
                    A out[Sl::S], dw[Sl::S], db[Sl::S];
#pragma unroll
                    for (int j = 0; j < Sl::S; ++j) {
                        const A xhat = (xv.get(k, j) - mean) * rstd, d = gv.get(k, j);
                        dw[j] = d * xhat;  // zero outside the segment (d = 0 there)
                        db[j] = d;
                        out[j] = rstd * (d * wv.get(k, j) - mean_g - xhat * mean_gx);
                    }
                    Sl::store(dx + row * n, c, count, k, out);
                    if (partial_w != nullptr) sum_w.add(k, dw);
                    if (!RMS && partial_b != nullptr) sum_b.add(k, db);
                }
            });
    });
    if (c.mode != kSplitStats) {
        if (c.R > 1) __syncthreads();  // every group's sums are in shared memory
        if (partial_w != nullptr) sum_w.write(c, count, partial_w, x);
        if (!RMS && partial_b != nullptr) sum_b.write(c, count, partial_b, x);
    }
    if (!WHOLE) finish(c);
}

template <typename T, int PPT, int LAYOUT, bool WHOLE, bool RMS, bool EXP = false>
__global__ void __launch_bounds__(kMaxBackwardThreads, min_blocks(backward_fits_64<T, PPT, LAYOUT, WHOLE>()))
    norm_backward_kernel(const T *__restrict__ dy, const T *__restrict__ x, const T *__restrict__ w,
                         const acc_t<T> *__restrict__ mean_in, const acc_t<T> *__restrict__ rstd_in, T *__restrict__ dx,
                         acc_t<T> *__restrict__ partial_w, acc_t<T> *__restrict__ partial_b, int64_t rows, int64_t n,
                         Layout layout, Sums<acc_t<T>, RMS ? 1 : 2> *stats) {
    norm_backward<T, PPT, LAYOUT, WHOLE, RMS, EXP>(dy, x, w, mean_in, rstd_in, dx, partial_w, partial_b, rows, n,
                                                   layout, stats);
}

// Backward rows over a cluster, 2 packs a thread, with the switches: the same kernel under a register cap, where
// that measured faster on the H100 (NOTES.md, "Fifteenth pass", "Sixteenth pass"). Under __launch_bounds__(512)
// ptxas takes 119-128 registers: two blocks of 256 threads an SM.
//   float32, blocks of 256 (rows of 32768: 16 blocks a row): 80 registers, no spill, three blocks an SM. Backward at
//     4096 x 32768, % of the copy: RMSNorm 81 -> 93, LayerNorm 78 -> 90.
//   bfloat16 RMSNorm, blocks of 128: 96 registers, no spill, five blocks an SM. Its rows of 32768 take 16 blocks
//     of 128 for it (norm_run): backward at 4096 x 32768 85 -> 88-89 %; rows of 16384, over 8 blocks of 128,
//     measured the same capped or not.
// norm_run gives every backward row over a cluster ceil(n / 2048) blocks of these sizes, up to 16.
//   bfloat16 LayerNorm, where the memory is fast (device_fast_memory: the H200), blocks of 128 as for RMSNorm: 96
//     registers, no spill, once its held weight stays in words (words: norm_backward's WORDS); it spilled before, and
//     measured slower on the H100 at 96 and at 80, so the H100 keeps its plan. H200, backward, % of the copy, 8 blocks
//     a row of n / 128 threads (n / 64 at 32768) -> these: rows of 12288 57.3 -> 62.4, 16384 59.3 -> 61.6, 20480
//     54.2 -> 57.6, 24576 47.7 -> 53.5, 30720 51.0 -> 53.7, 32768 54.5 -> 54.5 (the bench's forward+backward there:
//     65.5 -> 64.7); blocks of 256 at 80 registers spilled 40 bytes and ran 9-18 % slower than blocks of 128
//     (NOTES.md, "Forty-first pass").
// Not capped: blocks of 512 (rows of 2^18) hold one block an SM either way and measured slower capped (float32
// RMSNorm at 80: 44 -> 40 %).
// skip_l1: x and dy read past L1, for float32 RMSNorm only. H200, backward, % of the copy: RMSNorm 4096 x 32768 78.3
// -> 86.2, 4369 x 30720 76.2 -> 83.6, 8192 x 16384 91.0 -> 92.8; with the same loads LayerNorm 4096 x 32768 73.1
// -> 63.2 and bf16 RMSNorm 67.4 -> 67.1 (NOTES.md, "Thirtieth pass").
// words: norm_backward's WORDS. fast_only: the plan is taken only where the memory is fast.
template <typename T, bool RMS>
struct CappedBackward {
    static constexpr int threads = 0, registers = 0;  // none
    static constexpr bool skip_l1 = false, words = false, fast_only = false;
};
template <bool RMS>
struct CappedBackward<float, RMS> {
    static constexpr int threads = 256, registers = 80;
    static constexpr bool skip_l1 = RMS, words = false, fast_only = false;
};
template <bool RMS>
struct CappedBackward<__nv_bfloat16, RMS> {
    static constexpr int threads = 128, registers = 96;
    static constexpr bool skip_l1 = false, words = !RMS, fast_only = !RMS;
};
template <typename T, int PPT, bool RMS>
__global__ void __maxnreg__((CappedBackward<T, RMS>::registers))
    norm_backward_capped_kernel(const T *__restrict__ dy, const T *__restrict__ x, const T *__restrict__ w,
                                const acc_t<T> *__restrict__ mean_in, const acc_t<T> *__restrict__ rstd_in,
                                T *__restrict__ dx, acc_t<T> *__restrict__ partial_w, acc_t<T> *__restrict__ partial_b,
                                int64_t rows, int64_t n, Layout layout, Sums<acc_t<T>, RMS ? 1 : 2> *stats) {
    norm_backward<T, PPT, kPacks, false, RMS, true, CappedBackward<T, RMS>::skip_l1, CappedBackward<T, RMS>::words>(
        dy, x, w, mean_in, rstd_in, dx, partial_w, partial_b, rows, n, layout, stats);
}
// Whether this device takes the type's cap at all (`fast`: device_fast_memory's answer; fast_only).
template <typename T, bool RMS>
bool cap_here(bool fast) {
    return fast || !CappedBackward<T, RMS>::fast_only;
}
// Whether a backward plan takes it (the launcher's `if constexpr` checks that the type and op have a cap): blocks of
// more than half its threads and at most all of them, since a row's segments need not fill a block (float32 rows of
// 8500 over 5 blocks: segments of 1700, blocks of 224), on a device that takes it.
template <typename T, bool RMS>
bool capped_backward(const Plan &p, bool fast) {
    constexpr int threads = CappedBackward<T, RMS>::threads;
    return cap_here<T, RMS>(fast) && p.flags && p.ppt == 2 && p.block <= threads && 2 * p.block > threads;
}

// ---- version 6 (RMSNorm forward) ---------------------------------------------------------------------------------
// SKIP_L1: x's loads skip L1, which keeps the weight (reread_skips_l1).
template <typename T, int U, bool CLUSTER, bool SKIP_L1 = false>
__global__ void __launch_bounds__(1024)
    rms_norm_reread_kernel(const T *__restrict__ x, const T *__restrict__ w, T *__restrict__ y,
                           acc_t<T> *__restrict__ rstd_out, int64_t rows, int64_t n, acc_t<T> eps) {
    using A = acc_t<T>;
    using St = Sums<A, 1>;
    constexpr int S = Pack<T>::size;
    __shared__ Exchange<St> exchange;
    const Ctx c = reread_ctx<CLUSTER>(n, S);  // this block's rows and its segment of each
    if constexpr (CLUSTER) open_mailbox<St, kReread>(c);
    const int64_t packs = (c.seg_end - c.seg_begin) / S;
    const uint64_t keep = l2_keep_policy(), drop = l2_drop_policy();
    const uint4 *weight = w ? reinterpret_cast<const uint4 *>(w + c.seg_begin) : nullptr;
    int parity = 0;
    for (int64_t row = c.slot; row < rows; row += c.slots, parity ^= 1) {
        const T *in = x + row * n + c.seg_begin;
        PerPack<U, A> squares(A(0));  // a sum a pack, side by side (short chains of adds)
        reread_walk<U, SKIP_L1>(in, packs, keep, [&](const uint32_t (&v)[U][4], int valid, int64_t) {
            RW_EACH(U, S) {
                if (k < valid) {
                    const A e = Bits<T>::get(v[k], j);
                    squares.add(k, e * e);
                }
            }
        });
        St mine;
        mine.v[0] = squares.sum();
        const St total = reread_combine<CLUSTER>(reduce_group(mine, c, exchange, parity), c, parity);
        const A rstd = rsqrt_acc(total.v[0] / A(n) + eps);
        if (threadIdx.x == 0 && c.rank == 0) rstd_out[row] = rstd;
        const auto scale = [&](const uint32_t (&v)[4], const uint32_t (&wv)[4], A(&r)[S]) {
#pragma unroll
            for (int j = 0; j < S; ++j) r[j] = Bits<T>::get(v, j) * rstd * (weight ? Bits<T>::get(wv, j) : A(1));
        };
        // Steps of 4 packs: the step's weight loaded first (rowwise_kernels.cuh). At 8, the 64 words of x and weight a
        // thread would hold spill under the 64 registers of a block of 1024 (100 bytes in float32): pack by pack.
        if constexpr (U == 4 && !CLUSTER) {
            const uint4 *const vectors[1] = {weight};
            reread_write_vectors_first<U, SKIP_L1, 0, 1, false>(
                in, y + row * n + c.seg_begin, packs, drop, vectors,
                [&](const uint32_t (&v)[4], const uint32_t (&vv)[1][4], A(&r)[S]) { scale(v, vv[0], r); });
        } else {
            reread_write<U, SKIP_L1>(in, y + row * n + c.seg_begin, packs, drop,
                                     [&](const uint32_t (&v)[4], int64_t at, A(&r)[S]) {
                                         uint32_t wv[4];
                                         param16(wv, weight, at);
                                         scale(v, wv, r);
                                     });
        }
    }
    reread_finish<CLUSTER>(c);
}

// ---- version 6 (LayerNorm forward) -------------------------------------------------------------------------------
// The first walk keeps Welford's statistics, not the whole-row kernel's two passes (those would need a third walk):
// each step's (count, mean, M2) is made from the step's values in registers, two passes over them, and merged into
// the thread's running triple with Chan's formula; the block merges the threads' triples once (reduce_group).
// SKIP_L1: x's loads skip L1, which keeps the weight and bias (reread_skips_l1).
// B: 0, or the block size the kernel is built for (512 or 1024; the launcher's choice, layer_norm_built_for_block),
// where the weight and bias are both there. Then every pack's address is a register plus a constant (walk_steps),
// and the write walk loads its step's packs of x, the weight and the bias before its first store
// (reread_write_vectors_first), as torch.compile's kernel does. float32, 4 packs a step, x past L1: 832 instructions
// of machine code where the run-time build has 1192; in ncu at 4096 x 32768 the run-time build issued 124 M
// instructions to torch.compile's 66 M, and waited on each pack's weight and bias before its store. H200, % of the
// copy: bf16 4-6 points faster, float32 1-2 (NOTES.md, "Forty-third pass"). Its 16-bit write walk takes 2 packs a
// step: at 4, 12 bytes of spill.
template <typename T, int U, bool CLUSTER, bool SKIP_L1 = false, int B = 0>
__global__ void __launch_bounds__(1024)
    layer_norm_reread_kernel(const T *__restrict__ x, const T *__restrict__ w, const T *__restrict__ b,
                             T *__restrict__ y, acc_t<T> *__restrict__ mean_out, acc_t<T> *__restrict__ rstd_out,
                             int64_t rows, int64_t n, acc_t<T> eps) {
    using A = acc_t<T>;
    using St = Moments<A>;
    constexpr int S = Pack<T>::size;
    static_assert(B == 0 || !CLUSTER, "a build for a block size is a block a row");
    __shared__ Exchange<St> exchange;
    const Ctx c = reread_ctx<CLUSTER>(n, S);  // this block's rows and its segment of each
    if constexpr (CLUSTER) open_mailbox<St, kReread>(c);
    const int64_t packs = (c.seg_end - c.seg_begin) / S;
    const uint64_t keep = l2_keep_policy(), drop = l2_drop_policy();
    const uint4 *weight = w ? reinterpret_cast<const uint4 *>(w + c.seg_begin) : nullptr;
    const uint4 *bias = b ? reinterpret_cast<const uint4 *>(b + c.seg_begin) : nullptr;
    int parity = 0;
    for (int64_t row = c.slot; row < rows; row += c.slots, parity ^= 1) {
        const T *in = x + row * n + c.seg_begin;
        St mine = St::empty();
        reread_walk<U, SKIP_L1, B>(in, packs, keep, [&](const uint32_t (&v)[U][4], int valid, int64_t) {
            PerPack<U, A> sums(A(0));
            RW_EACH(U, S) {
                if (k < valid) sums.add(k, Bits<T>::get(v[k], j));
            }
            const A count = A(valid * S), mean = sums.sum() / count;
            PerPack<U, A> m2(A(0));
            RW_EACH(U, S) {
                if (k < valid) {
                    const A d = Bits<T>::get(v[k], j) - mean;
                    m2.add(k, d * d);
                }
            }
            mine = merge(mine, St{count, mean, m2.sum()});
        });
        const St total = reread_combine<CLUSTER>(reduce_group(mine, c, exchange, parity), c, parity);
        const A mean = total.mean, rstd = rsqrt_acc(total.m2 / A(n) + eps);
        if (threadIdx.x == 0 && c.rank == 0) mean_out[row] = mean, rstd_out[row] = rstd;
        if constexpr (B > 0) {
            const uint4 *const vectors[2] = {weight, bias};
            reread_write_vectors_first<sizeof(T) >= 4 ? U : (U + 1) / 2, SKIP_L1, B, 2, true>(
                in, y + row * n + c.seg_begin, packs, drop, vectors,
                [&](const uint32_t (&v)[4], const uint32_t (&vv)[2][4], A(&r)[S]) {
#pragma unroll
                    for (int j = 0; j < S; ++j)
                        r[j] = (Bits<T>::get(v, j) - mean) * rstd * Bits<T>::get(vv[0], j) + Bits<T>::get(vv[1], j);
                });
        } else {
            reread_write<U, SKIP_L1>(
                in, y + row * n + c.seg_begin, packs, drop, [&](const uint32_t (&v)[4], int64_t at, A(&r)[S]) {
                    uint32_t wv[4], bv[4];
                    param16(wv, weight, at);
                    param16(bv, bias, at);
#pragma unroll
                    for (int j = 0; j < S; ++j) {
                        r[j] = (Bits<T>::get(v, j) - mean) * rstd * (weight ? Bits<T>::get(wv, j) : A(1));
                        if (bias != nullptr) r[j] += Bits<T>::get(bv, j);
                    }
                });
        }
    }
    reread_finish<CLUSTER>(c);
}

// LayerNorm's version 6 built for blocks of 512 or 1024 threads (B), 4 packs a step, with the weight and bias; nullptr
// for other blocks (the run-time build takes them). float64 has none: its rows are not in the bench, and the build
// for each block would double its kernels.
template <typename T>
auto layer_norm_built_for_block(int block, bool skip_l1)
    -> decltype(&layer_norm_reread_kernel<T, kRereadPacks, false>) {
    if constexpr (sizeof(T) <= 4) {
        if (block == 512)
            return skip_l1 ? layer_norm_reread_kernel<T, kRereadPacks, false, true, 512>
                           : layer_norm_reread_kernel<T, kRereadPacks, false, false, 512>;
        if (block == 1024)
            return skip_l1 ? layer_norm_reread_kernel<T, kRereadPacks, false, true, 1024>
                           : layer_norm_reread_kernel<T, kRereadPacks, false, false, 1024>;
    }
    (void)block, (void)skip_l1;
    return nullptr;
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
    template <int PPT, int LAYOUT, bool WHOLE, bool EXP = false>
    static ForwardKernel<T, RMS> get() {
        if constexpr (EXP)
            return norm_forward_switched_kernel<T, PPT, LAYOUT, WHOLE, RMS>;
        else
            return norm_forward_kernel<T, PPT, LAYOUT, WHOLE, RMS>;
    }
};
// LayerNorm's forwards built for a row length (pick_fixed, fixed_ctx): whole rows of 16-byte packs, 4 packs a thread,
// that fill a group of 32 to 256 threads exactly, so the usual hidden sizes: 1024 to 8192 elements in 16-bit types,
// 512 to 4096 in float32. They run in blocks of 256, or a block a row where the memory is fast (norm_run; pick_fixed).
// bfloat16's asks for five blocks of 256 an SM: 48 registers instead of 52, no spill, 40 warps an SM instead of 32.
// H100, % of the copy, 52 -> 48 registers: 65536 x 1024 97.0 -> 97.8, 16384 x 4096 96.8 -> 97.4, 32768 x 2048 97.0 ->
// 97.3; six blocks (40 registers) spilled and ran at 74-82 %, and the softmax's kernel spilled at five (NOTES.md,
// "Twenty-fourth pass"). On the H200 more blocks an SM did not pay: float32 whole rows built with 5, 6 or 8 blocks of
// 256 an SM (48, 40, 32 registers) ran 0.5, 2 and 25-33 points below the build with 4 (NOTES.md, "Thirty-sixth pass").
template <typename T, bool RMS, int GROUP>
__global__ void __launch_bounds__(kFixedBlock, 5)
    norm_forward_five_kernel(const T *__restrict__ x, const T *__restrict__ w, const T *__restrict__ b,
                             T *__restrict__ y, acc_t<T> *__restrict__ mean_out, acc_t<T> *__restrict__ rstd_out,
                             int64_t rows, int64_t n, acc_t<T> eps, Layout layout, NormStats<acc_t<T>, RMS> *stats) {
    norm_forward<T, 4, kPacks, true, RMS, false, GROUP>(x, w, b, y, mean_out, rstd_out, rows, n, eps, layout, stats);
}
template <typename T, bool RMS>
struct FixedForward {
    template <int GROUP>
    static ForwardKernel<T, RMS> get() {
        if constexpr (std::is_same<T, __nv_bfloat16>::value)
            return norm_forward_five_kernel<T, RMS, GROUP>;
        else
            return norm_forward_kernel<T, 4, kPacks, true, RMS, GROUP>;
    }
};

template <typename T, bool RMS>
struct BackwardMake {
    template <int PPT, int LAYOUT, bool WHOLE, bool EXP = false>
    static BackwardKernel<T, RMS> get() {
        return norm_backward_kernel<T, PPT, LAYOUT, WHOLE, RMS, EXP>;
    }
};

template <typename T, bool RMS>
cudaError_t norm_run(int backward, int version, const rowwise_args *a, const rowwise_tuning *tuning, void *workspace,
                     size_t workspace_bytes, cudaStream_t stream, bool plan_only, Plan *out) {
    using A = acc_t<T>;
    Plan p;
    p.packed = row_layout(a, sizeof(T));
    const int64_t rows = a->rows, n = a->n;
    // Rows over several blocks: the next row's L2 prefetch and the mailbox in a cluster, forward and backward,
    // measured best on the H100 (NOTES.md, "Long rows: the switches measured", "The prefetch's loop").
    const int defaults = ROWWISE_FLAG_MAILBOX | ROWWISE_FLAG_PREFETCH_L2;
    // A forward of rows too long for a block, whose rows in flight fit L2: version 6, and its block (reread_choice);
    // 16-bit LayerNorm rows too long for that: version 6 over a cluster. Where the memory is fast, shorter rows too
    // (fast_reread_choice). reread_choice sizes the block by the occupancy of the plain build for the packs a step
    // asked; the launch takes the build for clusters where the plan has several blocks a row (reread_ctx).
    const auto reread_kernel = [](int step, bool cluster) {
        if constexpr (RMS)
            return cluster ? reread_pick(step, rms_norm_reread_kernel<T, 1, true>, rms_norm_reread_kernel<T, 2, true>,
                                         rms_norm_reread_kernel<T, 4, true>)
                           : reread_pick(step, rms_norm_reread_kernel<T, 1, false>, rms_norm_reread_kernel<T, 2, false>,
                                         rms_norm_reread_kernel<T, 4, false>, rms_norm_reread_kernel<T, 8, false>);
        else
            return cluster ? reread_pick(step, layer_norm_reread_kernel<T, 1, true>,
                                         layer_norm_reread_kernel<T, 2, true>, layer_norm_reread_kernel<T, 4, true>)
                           : reread_pick(step, layer_norm_reread_kernel<T, 1, false>,
                                         layer_norm_reread_kernel<T, 2, false>, layer_norm_reread_kernel<T, 4, false>);
    };
    rowwise_tuning chosen;
    CUDA_RETURN_IF_ERROR(fast_reread_choice<T>(RMS ? ROWWISE_RMS_NORM : ROWWISE_LAYER_NORM, &version, backward, n,
                                               p.packed, tuning, whole_threads(RMS), &chosen, &tuning));
    const auto reread = reread_kernel(reread_step(tuning), false);
    CUDA_RETURN_IF_ERROR(reread_choice<T>(&version, backward, n, p.packed, tuning, whole_threads(RMS),
                                          !RMS && sizeof(T) == 2 && device_has_clusters() ? kRereadClusterRowBytes : 0,
                                          reread, &chosen, &tuning));
    if (!shape_plan<T>(backward, version, n, tuning, device_has_clusters(), &p, defaults, whole_threads(RMS)))
        return cudaErrorInvalidValue;
    // The norms' own plans, where tune leaves the choice to the kernels: each rule below sets a backward's fields or a
    // forward's, never both, then shape_plan runs once more. Some were measured on the H100 and others where the
    // memory is fast (device_fast_memory: the H200).
    rowwise_tuning own = tuning ? *tuning : rowwise_tuning{};
    bool replan = false, fast = false;
    CUDA_RETURN_IF_ERROR(device_fast_memory(&fast));
    // The capped backward (CappedBackward: float32 in blocks of 256, bfloat16 in blocks of 128) takes every
    // row over a cluster that fits kMaxCluster of its blocks: ceil(n / 2048) blocks a row at 2 packs a thread, not
    // shape_plan's kClusterMin blocks of n / 64 (float32) or n / 128 (bf16) threads, which run uncapped wherever that
    // is not the cap's block size (float32 rows of 20000: 320 threads at 119-128 registers, one block an SM). H200,
    // backward, % of the copy, kClusterMin blocks -> these: float32 RMSNorm rows of 5120 66.2 -> 85.6, 8192 77.4 ->
    // 94.2, 10240 62.9 -> 91.0, 20000 41.9 -> 76.4, 28672 49.6 -> 81.1; LayerNorm 61.4 -> 82.4, 74.3 -> 89.3, 65.2 ->
    // 81.2, 39.5 -> 68.0, 47.0 -> 65.6; bf16 RMSNorm rows of 9000 57.4 -> 73.3, 10240 63.2 -> 79.9, 20000 62.5 ->
    // 72.1, 28672 58.1 -> 64.0 (NOTES.md, "Thirty-first pass"). Rows of 30720-32768 already took 15-16 such blocks
    // (float32: a rule of shape_plan's, since removed; bf16 RMSNorm: this rule's first form, the H100's 85 -> 88-89 %
    // at 32768). The count: cluster_backward_blocks, which the softmax's rule asks too (softmax_run).
    if constexpr (CappedBackward<T, RMS>::threads > 0) {
        const int64_t blocks = backward && !own.blocks_per_row && cap_here<T, RMS>(fast)
                                   ? cluster_backward_blocks<T>(p, n, CappedBackward<T, RMS>::threads)
                                   : 0;
        if (blocks >= 2 && blocks <= kMaxCluster && blocks != p.segments) {
            own.blocks_per_row = (int)blocks;
            replan = true;
        }
        // float32 backward rows past kMaxCluster capped blocks (over 32768 elements) take version 5, the split: its
        // two launches read x and dy twice and still measured faster than the cluster's blocks of 512 (119-128
        // registers, one block an SM, each waiting on its row's other blocks for the sums). H200, backward, % of the
        // copy, version 4 -> 5: RMSNorm rows of 36864 46.5 -> 54.1, 49152 42.7 -> 54.0, 65536 49.0 -> 55.0; LayerNorm
        // 41.6 -> 50.8, 40.9 -> 51.9, 45.4 -> 48.8. bf16 gained at some lengths and lost at others (RMSNorm rows of
        // 65536: 60.5 -> 52.4), so it keeps the cluster (NOTES.md, "Thirty-second pass").
        if (sizeof(T) == 4 && blocks > kMaxCluster && version == ROWWISE_AUTO) {
            version = ROWWISE_SPLIT;
            replan = true;
        }
    }
    // RMSNorm forward whole rows of 16-byte packs (bfloat16, float32) that take at most 256 threads at 2 packs a thread
    // take 2 packs, not 4: one reduction a row, and half the registers let more rows be in flight. H100, % of the copy,
    // 4 -> 2 packs: bf16 rows of 1024-4096 97.1-97.7 -> 98.3-99.0, float32 rows of 1000-2048 98.6-99.8 -> 99.4-101.3;
    // float32 rows of 4096 (512 threads at 2 packs) 98.3 -> 92.9; LayerNorm and the softmax slower at 2 (NOTES.md,
    // "Sixteenth pass").
    // Where the memory is faster (device_fast_memory: the H200), 2 packs only where that makes at most 64 threads a
    // row, in blocks of 64, and 4 elsewhere. H200, % of the copy, the H100's rule -> this one: bf16 rows of 512 95.8
    // -> 96.8, 1024 93.9 -> 98.2, 2048 93.4 -> 96.4, 4096 91.4-93.6 -> 93.9-96.3; float32 rows of 512 91.1 -> 97.2,
    // 1024 89.8 -> 95.0-96.2, 2048 89.2 -> 95.6 (NOTES.md, "Twenty-sixth pass"). (There, rows of 1024 elements or
    // more now take version 6: fast_reread_choice; this rule keeps float32 rows of up to 512 and bf16 of up to 1023.)
    if (RMS && !backward && (std::is_same<T, float>::value || std::is_same<T, __nv_bfloat16>::value) &&
        p.mode == kWhole && p.packed == kPacks && p.ppt == 4 && !own.packs_per_thread &&
        ceil_div(n, 2 * (int64_t)Pack<T>::size) <= (fast ? 64 : 256)) {
        own.packs_per_thread = 2;
        if (fast && !own.block_threads) own.block_threads = 64;
        replan = true;
    }
    // bfloat16 backward whole rows of 16-byte packs where the memory is fast: blocks of 128 threads (or the row's
    // group where that is larger: a row a block), not 512. H200, % of the copy, blocks of 512 -> 128, RMSNorm and
    // LayerNorm: rows of 512 87.2 -> 90.3 and 79.9 -> 83.3, 1024 87.6 -> 91.0 and 74.3 -> 76.2, 2048 86.8 -> 88.9 and
    // 75.8 -> 76.8, 4096 (256 threads a row) 85.5 -> 88.5 and 69.6 -> 72.3 (NOTES.md, "Twenty-sixth pass"). float32
    // measured the same or slower (RMSNorm rows of 512: 95.3 -> 94.1); float16 was not measured.
    if (backward && fast && std::is_same<T, __nv_bfloat16>::value && p.mode == kWhole && p.packed == kPacks &&
        p.block > p.group && p.block > 128 && !own.block_threads) {
        own.block_threads = 128;
        replan = true;
    }
    // LayerNorm forward whole rows in the aligned-body layout (odd n) whose row spans warps: a block per row, not
    // blocks of 256 holding two or more. LayerNorm's two reductions a row each wait at a block barrier, which holds a
    // block's rows to one another's pace. H100, bf16 16384 x 4097 (128 threads a row): 108.9 -> 105.0 us; the same
    // change measured nothing at 16384 x 4096 (NOTES.md, "Twenty-second pass").
    if (!RMS && !backward && p.mode == kWhole && p.packed == kBody && p.group > kWarp && p.block > p.group &&
        !own.block_threads) {
        own.block_threads = p.group;
        replan = true;
    }
    // Where the memory is fast, whole rows of 16-byte packs of a warp or more take a block per row too: LayerNorm's in
    // bfloat16 and float32, RMSNorm's in float32 where a row takes at most 64 threads (the kernels built for a row
    // length as well: pick_fixed). H200, % of the copy, blocks of 256 -> a block a row: float32 65536 x 1024 (64
    // threads a row) RMSNorm 96.0 -> 98.2, LayerNorm 97.2 -> 98.6; bf16 LayerNorm 16384 x 4096 (128) 94.3 -> 95.3,
    // 65536 x 1024 (32) 94.8 -> 95.7. RMSNorm lost at 128 threads a row (float32 32768 x 2048: 96.8 -> 95.8; bf16
    // 16384 x 4096: 97.7 -> 96.0); float16 was not measured (NOTES.md, "Thirty-sixth pass"). RMSNorm's rows of 1024
    // or more have since gone to version 6 (fast_reread_choice), so its part of this rule holds float32 rows of
    // 513-1023 elements.
    if (fast && !backward && p.mode == kWhole && p.packed == kPacks && p.group >= kWarp && p.block > p.group &&
        !own.block_threads &&
        (RMS ? std::is_same<T, float>::value && p.group <= 64
             : std::is_same<T, float>::value || std::is_same<T, __nv_bfloat16>::value)) {
        own.block_threads = p.group;
        replan = true;
    }
    if (replan && !shape_plan<T>(backward, version, n, &own, device_has_clusters(), &p, defaults, whole_threads(RMS)))
        return cudaErrorInvalidValue;
    if (p.mode == kReread) {  // version 6 (forward): 16-byte rows at 16-byte addresses (the binding checks them)
        if (row_layout(a, sizeof(T)) != kPacks) return cudaErrorInvalidValue;
        auto kernel = reread_kernel(p.ppt, p.segments > 1);
        if (kernel == nullptr || p.flags) return cudaErrorInvalidValue;  // 8 packs a step: RMSNorm's plain build only
        // A block a row of 4 packs a step whose row and vectors overflow L1: x's loads skip it. 16-bit RMSNorm keeps
        // L1 (its rows of 61440 and 65536 measured 0.4-1.8 points slower past L1 on the H200).
        if constexpr (!RMS || sizeof(T) == 4) {
            if (p.segments == 1 && p.ppt == kRereadPacks) {
                const int vectors = (a->w != nullptr) + (!RMS && a->b != nullptr);
                CUDA_RETURN_IF_ERROR(reread_skips_l1(n * (int64_t)sizeof(T), vectors, &p.skip_l1));
                if constexpr (RMS) {
                    if (p.skip_l1) kernel = rms_norm_reread_kernel<T, kRereadPacks, false, true>;
                } else {
                    if (p.skip_l1) kernel = layer_norm_reread_kernel<T, kRereadPacks, false, true>;
                    // Blocks of 512 or 1024 with the weight and bias: the build for that block size (its walk
                    // counts packs in 32 bits).
                    if (a->w != nullptr && a->b != nullptr && n <= (int64_t(1) << 30)) {
                        const auto built = layer_norm_built_for_block<T>(p.block, p.skip_l1);
                        if (built != nullptr) kernel = built, p.built = true;
                    }
                }
            }
        }
        CUDA_RETURN_IF_ERROR(size_plan(kernel, version, 0, rows, n, sizeof(A), sizeof(NormStats<A, RMS>), 0, &p));
        *out = p;
        if (plan_only || rows == 0 || n == 0) return cudaSuccess;
        const T *x = static_cast<const T *>(a->x), *w = static_cast<const T *>(a->w);
        T *y = static_cast<T *>(a->y);
        A *rstd = static_cast<A *>(a->rstd);
        if constexpr (RMS)
            return launch(kernel, p, stream, x, w, y, rstd, rows, n, (A)a->eps);
        else
            return launch(kernel, p, stream, x, w, static_cast<const T *>(a->b), y, static_cast<A *>(a->mean), rstd,
                          rows, n, (A)a->eps);
    }
    // The forward also stages the next row where that measured faster on the H100 (NOTES.md, "Sixth pass"): RMSNorm
    // unless its two staged segments take more than 64 KB of shared memory a block (float32 at 2^18: 128 KB, slower),
    // LayerNorm in blocks of 512 threads only (2^18; in blocks of 128 at 4096 x 32768 it was 2-3 % slower).
    // Rows of 8 packs a thread also hold the weight (and LayerNorm's bias) in shared memory (HOLD_PARAMS), and
    // RMSNorm then stages its rows at every size; LayerNorm's staged rows take one set of slots where two and both
    // vectors do not fit (size_plan). H100, % of the copy (NOTES.md, "Twentieth pass"): RMSNorm float32 rows of 2^18
    // 81 -> 93, 2^17 87 -> 94, 2^16 90 -> 93, bfloat16 2^18 83 -> 89; LayerNorm float32 2^18 69 -> 85, 2^17 76 -> 90,
    // 2^16 81 -> 83. (bfloat16 LayerNorm rows this long take version 6.)
    if (!backward && p.flags && !(tuning && tuning->flags)) {
        if (RMS ? staged_bytes(p) <= 64 * 1024 : p.block >= kMaxThreads) p.flags |= ROWWISE_FLAG_STAGE_NEXT;
        if (p.ppt == 8 && (RMS || sizeof(T) == 4)) {
            p.flags |= ROWWISE_FLAG_HOLD_PARAMS;
            if (RMS) p.flags |= ROWWISE_FLAG_STAGE_NEXT;
        }
    }
    if (p.flags & ROWWISE_FLAG_HOLD_PARAMS) p.held = RMS ? 1 : 2;  // size_plan keeps those that fit
    const T *x = static_cast<const T *>(a->x), *w = static_cast<const T *>(a->w);
    A *mean = static_cast<A *>(a->mean), *rstd = static_cast<A *>(a->rstd);
    if (!backward) {
        using Make = ForwardMake<T, RMS>;
        auto kernel = p.flags ? pick_experimental_forward<T, ForwardKernel<T, RMS>, Make>(p.ppt)
                              : pick_forward<T, ForwardKernel<T, RMS>, Make>(p.ppt, p.packed, p.mode == kWhole);
        // LayerNorm's rows that fill their group exactly take the kernel built for their length (pick_fixed). H100, %
        // of the copy, run-time -> fixed: bf16 16384 x 4096 96.1 -> 97.4, 65536 x 1024 95.7 -> 97.0, 32768 x 2048
        // 95.8 -> 97.5; float16 8192 x 8192 96.1 -> 97.4; float32 16384 x 4096 98.1 -> 98.4, 65536 x 1024 98.3 -> 98.8.
        // RMSNorm has none: one reduction a row, fewer instructions to save; built for its 2 packs a thread it measured
        // -0.3 to +0.4 points in bf16 and 0.6 slower in float32 at 1024. Nor do the backwards: built so, bf16 RMSNorm
        // measured up to 3.1 points slower, bf16 LayerNorm -0.4 to +0.3, the float32 norms 0.5-0.8 faster (NOTES.md,
        // "Twenty-third pass", "Twenty-fourth pass").
        if constexpr (!RMS && sizeof(T) != 8) {
            if (const auto fixed = pick_fixed<T, 4, FixedForward<T, RMS>>(p, n, tuning)) kernel = fixed, p.fixed = true;
        }
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
    using Make = BackwardMake<T, RMS>;
    auto kernel = p.flags ? pick_experimental_backward<T, BackwardKernel<T, RMS>, Make>(p.ppt)
                          : pick_backward<T, BackwardKernel<T, RMS>, Make>(p.ppt, p.packed, p.mode == kWhole);
    if constexpr (CappedBackward<T, RMS>::registers > 0) {
        if (capped_backward<T, RMS>(p, fast)) {
            kernel = norm_backward_capped_kernel<T, 2, RMS>;
            p.registers = CappedBackward<T, RMS>::registers;
        }
    }
    if (kernel == nullptr) return cudaErrorInvalidValue;
    const int partials = (a->dw != nullptr) + (!RMS && a->db != nullptr);
    // Each thread's dweight/dbias sums live in shared memory (ColumnSums): up to 64 KB a block of 512 (2 bf16 packs;
    // 80 KB for kBody, whose edge sums take 16 bytes more a thread), over the 48 KB a launch gets unless the kernel
    // asks for more (allow_shared).
    const size_t smem_per_thread =
        (size_t)partials * (p.ppt * Pack<T>::size * sizeof(A) + (p.packed == kBody ? 16 : 0));
    CUDA_RETURN_IF_ERROR(allow_shared(kernel, smem_per_thread * p.block));
    CUDA_RETURN_IF_ERROR(size_plan(kernel, version, 1, rows, n, sizeof(A), sizeof(Sums < A, RMS ? 1 : 2 >), partials,
                                   &p, smem_per_thread));
    plan_table<T>(&p, rows, n, w != nullptr);
    *out = p;
    if (plan_only || n == 0) return cudaSuccess;
    if (workspace_bytes < workspace_of(p)) return cudaErrorInvalidValue;
    const Workspace ws = carve(p, workspace);
    if (rows > 0) CUDA_RETURN_IF_ERROR(make_table<T>(p, ws, n, &w, stream));  // kBody: the weight's table, if planned
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
