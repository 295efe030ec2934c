/*
 * softmax_kernels.cu — softmax over the last dimension on the GPU, forward (a ladder of versions) and backward.
 *
 *   Version 1, softmax_naive_kernel: a block per row, three passes over the row in global memory — the max, then the
 *     sum of exp(x - max), then the output — with a block reduction (warp shuffles, then shared memory) after each of
 *     the first two. x is read three times (the second and third reads mostly from L2).
 *   Version 2, softmax_warp_online_kernel: a warp per row. Each lane keeps a running (max, sum) of its elements
 *     (online_softmax.h, the exercise), the lanes combine their pairs with shuffles, and a second pass writes
 *     exp(x - max) / sum. One pass fewer than version 1, no shared memory, no barrier; x is still read twice.
 *   Version 3, softmax_forward_kernel in kWhole mode: the row in registers (rowwise_kernels.cuh). Each thread loads
 *     its 16-byte packs, computes its own (max, sum) from them, the group merges the pairs, and every thread writes
 *     exp(x - max) / sum from the values it holds: x is read once and y written once, as a copy does. 16-bit rows
 *     that fill their group exactly take a build of it with the row length a constant (FixedForward, pick_fixed).
 *   Version 4, the same kernel in kCluster mode: a row over the blocks of a thread-block cluster, the blocks'
 *     (max, sum) pairs merged through distributed shared memory. For rows longer than a block holds.
 *   Version 5, the same kernel twice, kSplitStats then kSplitApply: the portable way for such rows (x read twice).
 *   Version 6, softmax_reread_kernel: a block per row walks it in steps of a few packs a thread, merging each step's
 *     (max, sum) into its own, reduces once, and walks the row again to write; the second read comes from L2.
 *     softmax_held_kernel is the same two walks over a copy of the row in shared memory (x read once), each exp
 *     one FFMA and one ex2.
 * The backward, dx = y (dy - sum(y dy)), is softmax_backward_kernel with the same row layouts (versions 3-5).
 */
#include <cuda_runtime.h>

#include <online_softmax.h> /* <...>: EXERCISE=1 builds find the student's copy first */

#include "course_check.h" /* CUDA_RETURN_IF_ERROR: every launch and API call is checked */
#include "rowwise_kernels.cuh"

namespace rowwise {

// ---- version 1 ---------------------------------------------------------------------------------------------------
// One value per thread -> every thread gets the block's max (is_max) or sum. blockDim.x is a multiple of 32.
template <typename A>
__device__ A block_all_reduce(A v, bool is_max, A *scratch) {
    for (int mask = kWarp / 2; mask > 0; mask /= 2) {
        const A other = __shfl_xor_sync(0xffffffffu, v, mask);
        v = is_max ? fmax(v, other) : v + other;
    }
    const int warps = (int)blockDim.x / kWarp;
    if (threadIdx.x % kWarp == 0) scratch[threadIdx.x / kWarp] = v;
    __syncthreads();
    v = scratch[0];
    for (int w = 1; w < warps; ++w) v = is_max ? fmax(v, scratch[w]) : v + scratch[w];
    __syncthreads();  // scratch is written again by the next reduction
    return v;
}

template <typename T>
__global__ void __launch_bounds__(kMaxThreads)
    softmax_naive_kernel(const T *__restrict__ x, T *__restrict__ y, int64_t rows, int64_t n) {
    using A = acc_t<T>;
    __shared__ A scratch[kMaxWarps];
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const T *xr = x + row * n;
        A m = A(-INFINITY);
        for (int64_t i = threadIdx.x; i < n; i += blockDim.x) m = fmax(m, to_acc(xr[i]));  // pass 1
        m = block_all_reduce(m, true, scratch);
        A s = A(0);
        for (int64_t i = threadIdx.x; i < n; i += blockDim.x) s += exp_acc(to_acc(xr[i]) - m);  // pass 2
        s = block_all_reduce(s, false, scratch);
        const A inverse = A(1) / s;
        for (int64_t i = threadIdx.x; i < n; i += blockDim.x)  // pass 3
            y[row * n + i] = from_acc<T>(exp_acc(to_acc(xr[i]) - m) * inverse);
    }
}

// ---- version 2 (float accumulation: online_softmax.h is written in float) ----------------------------------------
template <typename T>
__global__ void __launch_bounds__(256)
    softmax_warp_online_kernel(const T *__restrict__ x, T *__restrict__ y, int64_t rows, int64_t n) {
    const int lane = (int)threadIdx.x % kWarp;
    const int64_t warps = (int64_t)gridDim.x * (blockDim.x / kWarp);
    for (int64_t row = (int64_t)blockIdx.x * (blockDim.x / kWarp) + threadIdx.x / kWarp; row < rows; row += warps) {
        const T *xr = x + row * n;  // the same row for the whole warp: its shuffles stay in step
        rw_max_sum s = rw_max_sum_empty();
        for (int64_t i = lane; i < n; i += kWarp) s = rw_online_add(s, to_acc(xr[i]));
        s = rw_warp_combine(s, kWarp);
        const float inverse = 1.0f / s.sum;
        for (int64_t i = lane; i < n; i += kWarp) y[row * n + i] = from_acc<T>(rw_exp(to_acc(xr[i]) - s.max) * inverse);
    }
}

// ---- versions 3-5 ------------------------------------------------------------------------------------------------
// At most 64 registers (min_blocks) where ptxas reports no spill then: packed rows up to 4 packs; an aligned body
// (kBody, odd n) in 16- and 32-bit types for whole rows up to 4 packs and rows split over blocks up to 2 (4-pack
// cluster kernels and float64 spilled 16-100 bytes at 64: NOTES.md, "Odd N").
template <typename T, int PPT, int LAYOUT, bool WHOLE>
constexpr bool softmax_forward_fits_64() {
    if (LAYOUT == kPacks) return PPT * sizeof(Pack<T>) <= 64;
    return LAYOUT == kBody && sizeof(T) != 8 && PPT * sizeof(Pack<T>) <= (WHOLE ? 64 : 32);
}

// GROUP > 0: built for rows that fill a group of GROUP threads exactly (fixed_ctx, pick_fixed).
template <typename T, int PPT, int LAYOUT, bool WHOLE, bool EXP = false, int GROUP = 0>
__global__ void __launch_bounds__(forward_bound(softmax_forward_fits_64<T, PPT, LAYOUT, WHOLE>()))
    softmax_forward_kernel(const T *__restrict__ x, T *__restrict__ y, int64_t rows, int64_t n, Layout layout,
                           MaxSum<acc_t<T>> *stats) {
    using A = acc_t<T>;
    using St = MaxSum<A>;
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
    for_each_row(c, rows, [&](int64_t row, bool active, int parity) {
        Sl v;
        process_row<WHOLE, St>(
            c, row, active, parity, exchange, stats, [&] { load_row<St>(v, x, row, rows, c, count, parity); },
            [&] {  // this thread's own pair: its max, then its sum of exp(x - max)
                A m = A(-INFINITY);
                RW_EACH(Sl::K, Sl::S) {
                    if (Sl::valid(count, k, j)) m = fmax(m, v.get(k, j));
                }
                A s = A(0);
                if (m != A(-INFINITY)) {
                    RW_EACH(Sl::K, Sl::S) {
                        if (Sl::valid(count, k, j)) s += exp_acc(v.get(k, j) - m);
                    }
                }
                return St{m, s};
            },
            [&](const St &total) {  // widen again, write pack by pack
                const A inverse = A(1) / total.sum;
                v.refresh();
#pragma unroll
                for (int k = 0; k < Sl::K; ++k) {
                    if (!Sl::any(count, k)) continue;
                    A out[Sl::S];
#pragma unroll
                    for (int j = 0; j < Sl::S; ++j) out[j] = exp_acc(v.get(k, j) - total.max) * inverse;
                    Sl::store(y + row * n, c, count, k, out);
                }
            });
    });
    if (!WHOLE) finish(c);
}

template <typename T, int PPT, int LAYOUT, bool WHOLE, bool EXP = false>
__global__ void __launch_bounds__(kMaxBackwardThreads)
    softmax_backward_kernel(const T *__restrict__ y, const T *__restrict__ dy, T *__restrict__ dx, int64_t rows,
                            int64_t n, Layout layout, Sums<acc_t<T>, 1> *stats) {
    using A = acc_t<T>;
    using St = Sums<A, 1>;
    using Sl = Slice<T, PPT, LAYOUT>;
    __shared__ Exchange<St> exchange;
    // Only kBody goes through Slice::locate: for 16-byte rows it changes nothing, yet the call alone had the compiler
    // build main's float32 1-pack kernel with the switches differently (54 registers instead of 56).
    const Ctx c = LAYOUT == kBody ? Sl::locate(make_ctx<WHOLE, EXP>(layout, n), y) : make_ctx<WHOLE, EXP>(layout, n);
    const int count = Sl::count(c);
    if constexpr (EXP) open_mailbox<St>(c);  // experimental (rowwise_kernels.cuh)
    for_each_row(c, rows, [&](int64_t row, bool active, int parity) {
        Sl yv, gv;
        process_row<WHOLE, St>(
            c, row, active, parity, exchange, stats,
            [&] {
                yv.load(y + row * n, c, count);
                gv.load(dy + row * n, c, count);
                if constexpr (EXP) {  // ROWWISE_FLAG_PREFETCH_L2 (experimental)
                    prefetch_next<Sl>(y, row, rows, c);
                    prefetch_next<Sl>(dy, row, rows, c);
                }
            },
            [&] {
                PerPack<backward_chains<Sl, WHOLE>(), A> dots(A(0));  // side by side: the sum's chains of adds
                RW_EACH(Sl::K, Sl::S) {
                    if (Sl::valid(count, k, j)) dots.add(k, yv.get(k, j) * gv.get(k, j));
                }
                St s;
                s.v[0] = dots.sum();
                return s;
            },
            [&](const St &total) {
                yv.refresh();
                gv.refresh();
#pragma unroll
                for (int k = 0; k < Sl::K; ++k) {
                    if (!Sl::any(count, k)) continue;
                    A out[Sl::S];
#pragma unroll
                    for (int j = 0; j < Sl::S; ++j) out[j] = yv.get(k, j) * (gv.get(k, j) - total.v[0]);
                    Sl::store(dx + row * n, c, count, k, out);
                }
            });
    });
    if (!WHOLE) finish(c);
}

// ---- version 6 ---------------------------------------------------------------------------------------------------
// exp(x - m) as exp2(x log2e - m log2e) (SCALED, below): one FFMA and one ex2 where exp_acc(x - m) takes an FADD, an
// FMUL and the ex2. The argument's error grows with |m| (m log2e is rounded once). Against exp_acc's rows (sweep 40d,
// randn * 4): 16-bit outputs the same but for about one value in ten thousand, by one unit; float32 ones differ in
// their last bits, and are no further from float64 (largest relative error 2.5e-6, exp_acc's 3.9e-6).
__device__ inline float exp_scaled(float x, float m_log2e) {
    return exp2f(fmaf(x, RW_LOG2E, -m_log2e));
}
// max.bf16x2 / max.f16x2: the max of two pairs of 16-bit values, each half on its own (exact, as fmax).
template <typename T>
__device__ inline uint32_t max_x2(uint32_t a, uint32_t b) {
    uint32_t d;
    if constexpr (std::is_same<T, __nv_bfloat16>::value)
        asm("max.bf16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
    else
        asm("max.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
    return d;
}
// rowwise_kernels.cuh, "version 6": a block per row, two walks. Each step's (max, sum) is made as a whole row's is in
// version 3 (the max of the step's values, then one exponential each) and merged into the thread's running pair.
// SCALED (the held kernel): the same pair in fewer instructions (NOTES.md, "Fortieth pass": a quarter fewer in its
// loops), each exponential exp_scaled and the max of 16-bit packs two halves an instruction (max_x2). `valid` >= 1.
template <typename T, int U, bool SCALED = false>
__device__ inline MaxSum<acc_t<T>> step_max_sum(const uint32_t (&w)[U][4], int valid) {
    using A = acc_t<T>;
    constexpr int S = Pack<T>::size;
    A m = A(-INFINITY);
    if constexpr (SCALED && sizeof(T) == 2) {
        uint32_t p = w[0][0];
#pragma unroll
        for (int k = 0; k < U; ++k) {
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                if (k < valid && (k > 0 || i > 0)) p = max_x2<T>(p, w[k][i]);
            }
        }
        m = fmax(Bits<T>::get(&p, 0), Bits<T>::get(&p, 1));
    } else {
        RW_EACH(U, S) {
            if (k < valid) m = fmax(m, Bits<T>::get(w[k], j));
        }
    }
    A s = A(0);
    if (m != A(-INFINITY)) {
        if constexpr (SCALED) {
            const A m_log2e = m * RW_LOG2E;
            RW_EACH(U, S) {
                if (k < valid) s += exp_scaled(Bits<T>::get(w[k], j), m_log2e);
            }
        } else {
            RW_EACH(U, S) {
                if (k < valid) s += exp_acc(Bits<T>::get(w[k], j) - m);
            }
        }
    }
    return MaxSum<A>{m, s};
}

template <typename T, int U, bool CLUSTER>
__global__ void __launch_bounds__(1024)
    softmax_reread_kernel(const T *__restrict__ x, T *__restrict__ y, int64_t rows, int64_t n) {
    using A = acc_t<T>;
    using St = MaxSum<A>;
    constexpr int S = Pack<T>::size;
    __shared__ Exchange<St> exchange;
    const Ctx c = reread_ctx<CLUSTER>(n, S);  // this block's rows and its segment of each
    if constexpr (CLUSTER) open_mailbox<St, kReread>(c);
    const int64_t packs = (c.seg_end - c.seg_begin) / S;
    const uint64_t keep = l2_keep_policy(), drop = l2_drop_policy();
    int parity = 0;
    for (int64_t row = c.slot; row < rows; row += c.slots, parity ^= 1) {
        const T *in = x + row * n + c.seg_begin;
        St mine = St::empty();
        reread_walk<U>(in, packs, keep, [&](const uint32_t (&w)[U][4], int valid, int64_t) {
            mine = merge(mine, step_max_sum<T>(w, valid));
        });
        const St total = reread_combine<CLUSTER>(reduce_group(mine, c, exchange, parity), c, parity);
        const A inverse = A(1) / total.sum;
        reread_write<U>(in, y + row * n + c.seg_begin, packs, drop, [&](const uint32_t (&w)[4], int64_t, A(&v)[S]) {
#pragma unroll
            for (int j = 0; j < S; ++j) v[j] = exp_acc(Bits<T>::get(w, j) - total.max) * inverse;
        });
    }
    reread_finish<CLUSTER>(c);
}

// Version 6 with the row (or the block's segment of it) held in shared memory: ROWWISE_FLAG_HELD, and NEXT, the next
// row copied in during the write walk (rowwise_kernels.cuh, held_slots). softmax_reread_kernel's walks, with its
// arithmetic in fewer instructions (step_max_sum's SCALED, exp_scaled; float32 and 16-bit types, not float64).
// Its stores are plain (st.global), not streamed past the caches as the other version 6 kernels' are. H200, % of the
// copy, streamed -> plain: bf16 4096 x 32768 88.9 -> 90.3, fp16 89.4 -> 90.3, bf16 5461 x 24576 89.6 -> 90.9, bf16
// 512 x 2^18 83.2 -> 84.9, 2048 x 65536 85.2 -> 85.3, float32 512 x 2^18 86.9 -> 89.7. Filling the slots through L1
// (cp.async.ca) gained as much in a block and less over a cluster; both together, less than either (NOTES.md,
// "Forty-first pass"). Plain stores measured up to 3 points slower for the reread kernels on the H100 ("Fourteenth
// pass"), where this kernel runs only if tune asks for it.
template <typename T, int U, bool CLUSTER, bool NEXT>
__global__ void __launch_bounds__(1024)
    softmax_held_kernel(const T *__restrict__ x, T *__restrict__ y, int64_t rows, int64_t n) {
    using A = acc_t<T>;
    using St = MaxSum<A>;
    constexpr int S = Pack<T>::size;
    __shared__ Exchange<St> exchange;
    const Ctx c = reread_ctx<CLUSTER>(n, S);
    if constexpr (CLUSTER) open_mailbox<St, kReread>(c);
    uint4 *held = held_slots<St, CLUSTER>();
    const int64_t packs = (c.seg_end - c.seg_begin) / S;
    int parity = 0;
    int64_t row = c.slot;
    if (NEXT && row < rows) held_fill(held, x + row * n + c.seg_begin, packs);
    for (; row < rows; row += c.slots, parity ^= 1) {
        if (!NEXT) held_fill(held, x + row * n + c.seg_begin, packs);
        wait_async_copies();
        St mine = St::empty();
        held_walk<U>(held, packs, [&](const uint32_t (&w)[U][4], int valid, int64_t) {
            mine = merge(mine, step_max_sum<T, U, true>(w, valid));
        });
        const St total = reread_combine<CLUSTER>(reduce_group(mine, c, exchange, parity), c, parity);
        const A inverse = A(1) / total.sum, max_log2e = total.max * RW_LOG2E;
        const int64_t next = row + c.slots;
        const uint4 *from = reinterpret_cast<const uint4 *>(x + next * n + c.seg_begin);
        uint4 *dst = reinterpret_cast<uint4 *>(y + row * n + c.seg_begin);
        held_walk<U>(held, packs, [&](const uint32_t (&w)[U][4], int valid, int64_t first) {
#pragma unroll
            for (int k = 0; k < U; ++k) {
                if (k >= valid) continue;
                const int64_t at = first + k * (int64_t)blockDim.x;
                if (NEXT && next < rows)  // after this slot's read: the words' xor is an operand of the copy
                    copy16_async<true>(held + at, from + at, w[k][0] ^ w[k][1] ^ w[k][2] ^ w[k][3]);
                A v[S];
#pragma unroll
                for (int j = 0; j < S; ++j) v[j] = exp_scaled(Bits<T>::get(w[k], j), max_log2e) * inverse;
                store_pack<T, false>(dst + at, v);  // plain stores (the kernel's comment)
            }
        });
    }
    reread_finish<CLUSTER>(c);
}

// ---- launchers ---------------------------------------------------------------------------------------------------
template <typename T>
using ForwardKernel = void (*)(const T *, T *, int64_t, int64_t, Layout, MaxSum<acc_t<T>> *);
template <typename T>
using BackwardKernel = void (*)(const T *, const T *, T *, int64_t, int64_t, Layout, Sums<acc_t<T>, 1> *);

template <typename T>
using ForwardRereadKernel = void (*)(const T *, T *, int64_t, int64_t);

template <typename T>
struct ForwardMake {
    template <int PPT, int LAYOUT, bool WHOLE, bool EXP = false>
    static ForwardKernel<T> get() {
        return softmax_forward_kernel<T, PPT, LAYOUT, WHOLE, EXP>;
    }
};
template <typename T>
struct BackwardMake {
    template <int PPT, int LAYOUT, bool WHOLE, bool EXP = false>
    static BackwardKernel<T> get() {
        return softmax_backward_kernel<T, PPT, LAYOUT, WHOLE, EXP>;
    }
};

// The forwards built for a row length (pick_fixed, fixed_ctx): 16-bit whole rows of 4 packs a thread that fill a group
// of 32 to 256 threads exactly (1024 to 8192 elements).
template <typename T>
struct FixedForward {
    template <int GROUP>
    static ForwardKernel<T> get() {
        return softmax_forward_kernel<T, 4, kPacks, true, false, GROUP>;
    }
};

// Version 0's choice for float32 forward rows that fill a block of 480 or 512 threads at 16 packs a thread (rows of
// 28673-32768 in 16-byte packs), where the memory is fast: the whole row in the registers of one block, as Triton's
// tutorial softmax holds it (rowwise/triton_kernels.py: 97 % of the copy at 4096 x 32768 on the H200), rather than
// version 6's two walks. At 128 registers a thread an SM holds one such block, with 128 KB of its row's loads in
// flight. H200, forward, % of the copy, version 6 -> 16 packs (NOTES.md, "Thirty-third pass"): 4096 x 32768 90.6 ->
// 97.3, 4369 x 30720 88.6 -> 95.6. Smaller blocks lost (rows of 24576, 384 threads: 92.6 -> 91.6; 20480: 95.4 ->
// 86.6; 16384: 98.6 -> 97.3), and so did the norms, which read their weight in the write pass (4096 x 32768:
// LayerNorm 83 -> 61, RMSNorm 91 -> 67). Sets *use to `chosen` when it takes the rule.
constexpr int kWideRowPacks = 16;
constexpr int kWideRowMinThreads = 480;
template <typename T>
cudaError_t wide_row_choice(int backward, int version, int64_t n, int packed, const rowwise_tuning *tuning,
                            rowwise_tuning *chosen, const rowwise_tuning **use) {
    if constexpr (std::is_same<T, float>::value) {
        const int64_t threads = warp_threads(n, (int64_t)kWideRowPacks * Pack<T>::size);
        if (backward || version != ROWWISE_AUTO || tuning_names_a_plan(tuning) || packed != kPacks ||
            threads < kWideRowMinThreads || threads > kMaxThreads)
            return cudaSuccess;
        bool fast = false;
        CUDA_RETURN_IF_ERROR(device_fast_memory(&fast));
        if (!fast) return cudaSuccess;
        *chosen = tuning ? *tuning : rowwise_tuning{};  // the caller's waves, if any
        chosen->packs_per_thread = kWideRowPacks;
        *use = chosen;
    }
    (void)backward, (void)version, (void)n, (void)packed, (void)tuning, (void)chosen, (void)use;
    return cudaSuccess;
}

// softmax_held_kernel for a plan's packs a step, cluster and NEXT; nullptr for float64 (not built: version 6 by name
// with HELD is then a ValueError) and for 8 packs a step.
template <typename T, bool CLUSTER, bool NEXT>
ForwardRereadKernel<T> held_kernel(int ppt) {
    if constexpr (sizeof(T) == 8) {
        (void)ppt;
        return nullptr;
    } else {
        return reread_pick(ppt, softmax_held_kernel<T, 1, CLUSTER, NEXT>, softmax_held_kernel<T, 2, CLUSTER, NEXT>,
                           softmax_held_kernel<T, 4, CLUSTER, NEXT>);
    }
}
template <typename T>
ForwardRereadKernel<T> held_kernel(const Plan &p) {
    const bool cluster = p.segments > 1;
    if (p.flags & ROWWISE_FLAG_NEXT)
        return cluster ? held_kernel<T, true, true>(p.ppt) : held_kernel<T, false, true>(p.ppt);
    return cluster ? held_kernel<T, true, false>(p.ppt) : held_kernel<T, false, false>(p.ppt);
}

// Version 0's choice, where the memory is fast (device_fast_memory: the H200), of version 6 with the row held in
// shared memory (softmax_held_kernel), before the other version 6 rules: x is read once, and shared memory holds
// what registers would otherwise limit. Forwards of rows of 16-byte packs:
//   - 16-bit rows of 48-80 KB (24576-40960 elements): a block of 512 a row, 2 packs a step (three blocks an SM);
//   - 16-bit rows of 128-512 KB (65536-262144) and float32 rows of 512 KB-1 MB (131072-262144): over a cluster of a
//     block of 256 for each 64 KB of the row (2 to 16 blocks; more than 8 is a cluster size the H100 and H200 allow
//     but do not promise: active_clusters), a wave of clusters walking the rows, NEXT.
// H200, % of the copy, the plan before -> this (NOTES.md, "Thirty-ninth pass"): bf16 rows of 24576 79.6 -> 91.7,
// 28672 85.4 -> 90.6, 32768 88.8 -> 91.6 (fp16 88.7 -> 91.3), 40960 85.9 -> 87.4; 65536 80.2 -> 86.2, 2^17 74.5 ->
// 83.4, 2^18 75.8 -> 82.6 (fp16 75.4 -> 83.8); float32 2^17 87.0 -> 88.9, 163840 81.3 -> 84.6, 196608 81.4 -> 85.5,
// 2^18 78.7 -> 87.9. Not taken: 16-bit rows of 16384 (91.2 -> 91.4) and float32 rows of 16384 (95.9 -> 91.0) in a
// block; the rows between (16-bit 80-128 KB, float32 128-512 KB) were not measured. Sets *version to version 6 and
// *use to `chosen` when it takes the rule.
constexpr int64_t kHeldSegmentBytes = 64 * 1024;
template <typename T>
cudaError_t held_choice(int backward, int *version, int64_t n, int packed, const rowwise_tuning *tuning,
                        rowwise_tuning *chosen, const rowwise_tuning **use) {
    if (backward || *version != ROWWISE_AUTO || tuning_names_a_plan(tuning) || packed != kPacks || sizeof(T) == 8)
        return cudaSuccess;
    const int64_t row = n * (int64_t)sizeof(T), k = 1024;
    const bool block = sizeof(T) == 2 && 48 * k <= row && row <= 80 * k;
    const bool cluster = sizeof(T) == 2 ? 128 * k <= row && row <= 512 * k : 512 * k <= row && row <= 1024 * k;
    if (!block && !cluster) return cudaSuccess;
    bool fast = false;
    CUDA_RETURN_IF_ERROR(device_fast_memory(&fast));
    if (!fast || (cluster && !device_has_clusters())) return cudaSuccess;
    const int waves = tuning && tuning->waves ? tuning->waves : block ? 0 : 1;  // the caller's, if any
    *chosen = block ? rowwise_tuning{512, 2, 0, waves, ROWWISE_FLAG_HELD}
                    : rowwise_tuning{256, 2, (int)ceil_div(row, kHeldSegmentBytes), waves,
                                     ROWWISE_FLAG_HELD | ROWWISE_FLAG_NEXT};
    *version = ROWWISE_REREAD;
    *use = chosen;
    return cudaSuccess;
}

// Plans (and, unless plan_only, launches) one softmax. Returns the plan through `out`.
template <typename T>
cudaError_t softmax_run(int backward, int version, const rowwise_args *a, const rowwise_tuning *tuning, void *workspace,
                        size_t workspace_bytes, cudaStream_t stream, bool plan_only, Plan *out) {
    Plan p;
    p.packed = row_layout(a, sizeof(T));
    const int64_t rows = a->rows, n = a->n;
    if (version == ROWWISE_NAIVE || version == ROWWISE_WARP_ONLINE) {  // forward only (rowwise_unsupported)
        p.mode = kWhole;
        p.group = version == ROWWISE_NAIVE ? 256 : kWarp;
        p.block = 256;
        p.ppt = 0;
        p.packed = 0;
        int64_t wave = 0;
        if (version == ROWWISE_NAIVE) {
            CUDA_RETURN_IF_ERROR(course::blocks_per_wave(softmax_naive_kernel<T>, p.block, 0, &wave));
            p.grid = rows < wave * kForwardWaves ? rows : wave * kForwardWaves;
        } else if constexpr (sizeof(T) == 8) {
            return cudaErrorInvalidValue;  // version 2 computes in float (online_softmax.h)
        } else {
            CUDA_RETURN_IF_ERROR(course::blocks_per_wave(softmax_warp_online_kernel<T>, p.block, 0, &wave));
            const int64_t need = ceil_div(rows, p.block / kWarp);
            p.grid = need < wave * kForwardWaves ? need : wave * kForwardWaves;
        }
        if (p.grid < 1) p.grid = 1;
        *out = p;
        if (plan_only || rows == 0 || n == 0) return cudaSuccess;
        const T *x = static_cast<const T *>(a->x);
        T *y = static_cast<T *>(a->y);
        if (version == ROWWISE_NAIVE) {
            softmax_naive_kernel<T><<<(unsigned)p.grid, p.block, 0, stream>>>(x, y, rows, n);
        } else if constexpr (sizeof(T) != 8) {
            softmax_warp_online_kernel<T><<<(unsigned)p.grid, p.block, 0, stream>>>(x, y, rows, n);
        }
        return cudaGetLastError();
    }
    // Rows over several blocks: the next row staged in shared memory (forward) and the mailbox in a cluster, measured
    // best on the H100 (NOTES.md, "Long rows: the switches measured").
    const int defaults = backward ? ROWWISE_FLAG_MAILBOX : ROWWISE_FLAG_MAILBOX | ROWWISE_FLAG_STAGE_NEXT;
    // Version 6, and its block, for rows too long for a block whose rows in flight fit L2 (and, where the memory is
    // fast, shorter ones: fast_reread_choice): reread_choice sizes the block by the occupancy of the plain build for
    // the packs a step asked; the launch takes the build for clusters where the plan has several blocks a row (tune;
    // reread_ctx).
    const auto reread_kernel = [](int step, bool cluster) {
        return cluster ? reread_pick(step, softmax_reread_kernel<T, 1, true>, softmax_reread_kernel<T, 2, true>,
                                     softmax_reread_kernel<T, 4, true>)
                       : reread_pick(step, softmax_reread_kernel<T, 1, false>, softmax_reread_kernel<T, 2, false>,
                                     softmax_reread_kernel<T, 4, false>);
    };
    rowwise_tuning wide, held, chosen;
    CUDA_RETURN_IF_ERROR(wide_row_choice<T>(backward, version, n, p.packed, tuning, &wide, &tuning));
    CUDA_RETURN_IF_ERROR(held_choice<T>(backward, &version, n, p.packed, tuning, &held, &tuning));
    CUDA_RETURN_IF_ERROR(
        fast_reread_choice<T>(ROWWISE_SOFTMAX, &version, backward, n, p.packed, tuning, kMaxThreads, &chosen, &tuning));
    const auto reread = reread_kernel(reread_step(tuning), false);
    // Rows too long for a block a row to keep its rows in L2 go over a cluster where the memory is fast: 16-bit rows
    // of up to 512 KB (at most 4 segments: kRereadClusterMaxFast16), float32 rows of 512 KB-1 MB (8 segments of up to
    // 128 KB); on the H100 version 4 was faster (reread_choice's comment). H200, % of the copy, version 4 -> version 6
    // over a cluster (NOTES.md, "Twenty-eighth pass"): bf16 512 x 2^18 65.4 -> 69.7, 1024 x 2^17 68.1 -> 74.1, fp16 512
    // x 2^18 43.2 -> 71.0, 1024 x 2^17 55.4 -> 74.7, float32 512 x 2^18 71.7 -> 77.9; shorter float32 rows lost (1024 x
    // 2^17 88.0 -> 84.5, 2048 x 2^16 89.2 -> 88.0). On the H200 held_choice takes all these rows first (the row in
    // shared memory, read once); the rule stays for rows it leaves where the L2 is smaller.
    bool fast = false;
    CUDA_RETURN_IF_ERROR(device_fast_memory(&fast));
    int64_t cluster_row_bytes = 0;
    if (fast && device_has_clusters()) {
        if (sizeof(T) == 2) cluster_row_bytes = kRereadClusterRowBytes;
        if (sizeof(T) == 4 && n * (int64_t)sizeof(T) > kRereadClusterRowBytes)
            cluster_row_bytes = 2 * kRereadClusterRowBytes;
    }
    CUDA_RETURN_IF_ERROR(reread_choice<T>(&version, backward, n, p.packed, tuning, kMaxThreads, cluster_row_bytes,
                                          reread, &chosen, &tuning));
    if (!shape_plan<T>(backward, version, n, tuning, device_has_clusters(), &p, defaults)) return cudaErrorInvalidValue;
    // Backward rows over a cluster (2 packs a thread, the switches): blocks of 256 while a row takes at most
    // kClusterMin of them, then blocks of 512 (cluster_backward_blocks). Its kernels take 64 registers or fewer, so
    // blocks of 512 hold two an SM and need no cap, unlike the norms'; past 8 blocks of 256, half as many blocks of
    // 512 measured as fast or faster. H200, backward, % of the copy, shape_plan's 8 blocks -> these:
    // float32 rows of 6144 86.5 -> 97.6, 24576 78.8 -> 87.9, 32768 (16 of 256) 88.2 -> 90.0; bf16 rows of 12288 82.3
    // -> 93.1, 49152 75.0 -> 82.9; rows of 10240-20480 and 28672 within a point (NOTES.md, "Thirty-second pass").
    if (backward && !(tuning && tuning->blocks_per_row)) {
        int64_t blocks = cluster_backward_blocks<T>(p, n, 256);
        if (blocks > kClusterMin) blocks = cluster_backward_blocks<T>(p, n, kMaxBackwardThreads);
        if (blocks >= 2 && blocks <= kMaxCluster && blocks != p.segments) {
            rowwise_tuning own = tuning ? *tuning : rowwise_tuning{};
            own.blocks_per_row = (int)blocks;
            if (!shape_plan<T>(backward, version, n, &own, device_has_clusters(), &p, defaults))
                return cudaErrorInvalidValue;
        }
    }
    using A = acc_t<T>;
    if (p.mode == kReread) {  // version 6 (forward): 16-byte rows at 16-byte addresses (the binding checks them)
        if (row_layout(a, sizeof(T)) != kPacks) return cudaErrorInvalidValue;
        // HELD: the row in shared memory (held_choice); a row (segment) too large for it fails in size_plan
        const auto kernel = p.flags & ROWWISE_FLAG_HELD ? held_kernel<T>(p) : reread_kernel(p.ppt, p.segments > 1);
        if (kernel == nullptr)
            return cudaErrorInvalidValue;  // 8 packs a step (RMSNorm's plain build only), float64 HELD
        CUDA_RETURN_IF_ERROR(size_plan(kernel, version, 0, rows, n, sizeof(A), sizeof(MaxSum<A>), 0, &p));
        *out = p;
        if (plan_only || rows == 0 || n == 0) return cudaSuccess;
        return launch(kernel, p, stream, static_cast<const T *>(a->x), static_cast<T *>(a->y), rows, n);
    }
    if (!backward) {
        auto kernel = p.flags ? pick_experimental_forward<T, ForwardKernel<T>, ForwardMake<T>>(p.ppt)
                              : pick_forward<T, ForwardKernel<T>, ForwardMake<T>>(p.ppt, p.packed, p.mode == kWhole);
        // 16-bit rows that fill their group exactly take the forward built for their length. H100, % of the copy,
        // run-time -> fixed: bf16 16384 x 4096 99.2 -> 99.5, 65536 x 1024 98.9 -> 99.3, 32768 x 2048 99.0 -> 99.3;
        // float32 measured the same (99.5), and the backward built so 0.7-0.9 points slower (NOTES.md, "Twenty-fourth
        // pass").
        if constexpr (sizeof(T) == 2) {
            if (const auto fixed = pick_fixed<T, 4, FixedForward<T>>(p, n, tuning)) kernel = fixed, p.fixed = true;
        }
        if (kernel == nullptr) return cudaErrorInvalidValue;
        CUDA_RETURN_IF_ERROR(size_plan(kernel, version, 0, rows, n, sizeof(A), sizeof(MaxSum<A>), 0, &p));
        *out = p;
        if (plan_only || rows == 0 || n == 0) return cudaSuccess;
        if (workspace_bytes < workspace_of(p)) return cudaErrorInvalidValue;
        auto *stats = static_cast<MaxSum<A> *>(carve(p, workspace).stats);
        const T *x = static_cast<const T *>(a->x);
        T *y = static_cast<T *>(a->y);
        if (p.mode == kSplitStats) {
            CUDA_RETURN_IF_ERROR(launch(kernel, p, stream, x, y, rows, n, layout_of(p, kSplitStats), stats));
            return launch(kernel, p, stream, x, y, rows, n, layout_of(p, kSplitApply), stats);
        }
        return launch(kernel, p, stream, x, y, rows, n, layout_of(p, p.mode), stats);
    }
    auto kernel = p.flags ? pick_experimental_backward<T, BackwardKernel<T>, BackwardMake<T>>(p.ppt)
                          : pick_backward<T, BackwardKernel<T>, BackwardMake<T>>(p.ppt, p.packed, p.mode == kWhole);
    if (kernel == nullptr) return cudaErrorInvalidValue;
    CUDA_RETURN_IF_ERROR(size_plan(kernel, version, 1, rows, n, sizeof(A), sizeof(Sums<A, 1>), 0, &p));
    *out = p;
    if (plan_only || rows == 0 || n == 0) return cudaSuccess;
    if (workspace_bytes < workspace_of(p)) return cudaErrorInvalidValue;
    auto *stats = static_cast<Sums<A, 1> *>(carve(p, workspace).stats);
    const T *y = static_cast<const T *>(a->x), *dy = static_cast<const T *>(a->dy);
    T *dx = static_cast<T *>(a->y);
    if (p.mode == kSplitStats) {
        CUDA_RETURN_IF_ERROR(launch(kernel, p, stream, y, dy, dx, rows, n, layout_of(p, kSplitStats), stats));
        return launch(kernel, p, stream, y, dy, dx, rows, n, layout_of(p, kSplitApply), stats);
    }
    return launch(kernel, p, stream, y, dy, dx, rows, n, layout_of(p, p.mode), stats);
}

cudaError_t softmax_dispatch(int backward, int version, course_dtype dtype, const rowwise_args *a,
                             const rowwise_tuning *tuning, void *workspace, size_t workspace_bytes, cudaStream_t stream,
                             bool plan_only, Plan *out) {
    return course::with_element_type(dtype, [&](auto zero) {
        using T = decltype(zero);
        return softmax_run<T>(backward, version, a, tuning, workspace, workspace_bytes, stream, plan_only, out);
    });
}

}  // namespace rowwise
