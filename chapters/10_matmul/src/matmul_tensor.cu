/*
 * matmul_tensor.cu — C = A·B in bf16/fp16 on the tensor cores: rungs 9 and 10, and the dispatcher of rungs 9-11.
 *
 * Inputs bf16 or fp16, products accumulated in fp32, C written in the inputs' dtype (rounded once, at the end).
 * A tensor core multiplies small matrices in one instruction: a warp's mma.sync m16n8k16 computes a 16×8 tile of
 * C over k = 16 (4,096 FMAs) from operands spread over the warp's registers (README.md, part 2, draws who holds
 * what). The rungs feed it better and better:
 *
 *   rung 9  wmma_kernel — the documented C++ entry point, nvcuda::wmma: 16×16×16 fragments. A block of 4 warps
 *           computes a 64×64 tile of C; each warp 32×32 (2×2 fragments). Tiles of A and B (K-tiles of 32) are
 *           staged in shared memory by ordinary loads (any strides, guarded: zeros outside the matrices), rows padded
 *           by 8 elements; two barriers per K-tile. The fragments' layout in registers is hidden ("opaque"): the
 *           accumulators go back through shared memory to be converted and stored with guards.
 *   rung 10 mma_sync_kernel — what changed: the PTX instruction itself (mma.sync.m16n8k16), its operands loaded
 *           from shared memory by ldmatrix (one instruction loads four 8×8 matrices for the whole warp, already in
 *           the fragment layout; .trans transposes B on the way); shared memory SWIZZLED (16-byte chunks XORed with
 *           the row) so that ldmatrix's eight rows hit eight different bank groups without padding; a 4-stage ring
 *           of K-tiles filled by cp.async (global → shared, no registers; chunks cut by an edge element by element) so
 *           that the loads of the next three K-tiles are in flight during the arithmetic; one barrier per K-tile.
 *           Block tile 128×128×32, 8 warps of 64×32. An operand that cp.async cannot read 16 bytes at a time (not
 *           row-major, a row stride that is not a multiple of 8 elements, a misaligned address) is loaded by
 *           ordinary guarded loads into the same swizzled layout (the kScalar variant): correct, slower.
 *   rung 11 matmul_hopper.cu — Hopper's wgmma, fed by TMA, warp-specialised (built for sm_90a only).
 *
 * Which runs (matmul_tensor_rung): rung 11 on compute capability 9.0 when TMA can read the operands, else rung 10;
 * rungs 9 and 10 on 8.0 and later (bf16 tensor cores began with Ampere). The op reports the rung it ran (rung_used).
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>
#include <stdint.h>

#include <type_traits>

#include "course_check.h"
#include "matmul.h"
#include "matmul_store.cuh"
#include "matmul_view.cuh"

namespace {

__host__ __device__ inline int64_t ceil_div(int64_t x, int64_t y) {
    return (x + y - 1) / y;
}

/* Block number `block`'s tile of C, taken GROUP tile rows at a time (as rung 7: blocks running together share
 * tiles of A and B in L2). */
template <int GROUP>
__device__ __forceinline__ void grouped_tile(int64_t block, int64_t tiles_m, int64_t tiles_n, int64_t *tile_m,
                                             int64_t *tile_n) {
    const int64_t per_group = GROUP * tiles_n, group = block / per_group, first_m = group * GROUP;
    const int64_t rows = tiles_m - first_m < GROUP ? tiles_m - first_m : GROUP;
    *tile_m = first_m + (block % per_group) % rows;
    *tile_n = (block % per_group) / rows;
}

template <typename T>
__device__ __forceinline__ T zero_of() {
    return from_float<T>(0.0f);
}

/* Element (i, j) of a view, or 0 outside it. */
template <typename T>
__device__ __forceinline__ T load_or_zero(const MatrixView<T> &m, int64_t i, int64_t j) {
    return (i < m.rows && j < m.cols) ? m.data[i * m.row_stride + j * m.col_stride] : zero_of<T>();
}

/* ---- rung 9: WMMA ------------------------------------------------------------------------------------------------ */
constexpr int kWmmaBM = 64, kWmmaBN = 64, kWmmaBK = 32, kWmmaThreads = 128;
constexpr int kWmmaPad = 8; /* wmma wants a leading dimension that is a multiple of 8 elements (16 bytes) */

template <typename T>
__global__ void __launch_bounds__(kWmmaThreads)
    wmma_kernel(MatrixView<T> a, MatrixView<T> b, T *c, int64_t ldc, int64_t tiles_m, int64_t tiles_n, bool paired) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    using namespace nvcuda;
    /* The K-loop's tiles, and after it the block's fp32 results (the same memory, reused). */
    constexpr int kTileElems = kWmmaBM * (kWmmaBK + kWmmaPad) + kWmmaBK * (kWmmaBN + kWmmaPad);
    constexpr int kOutBytes = kWmmaBM * (kWmmaBN + 4) * 4;
    constexpr int kBytes = kTileElems * 2 > kOutBytes ? kTileElems * 2 : kOutBytes;
    __shared__ __align__(32) unsigned char shared_raw[kBytes];
    T *As = reinterpret_cast<T *>(shared_raw);         /* [BM][BK + pad] */
    T *Bs = As + kWmmaBM * (kWmmaBK + kWmmaPad);       /* [BK][BN + pad] */
    float *Cs = reinterpret_cast<float *>(shared_raw); /* [BM][BN + 4], after the K-loop */

    int64_t tile_m, tile_n;
    grouped_tile<8>(blockIdx.x, tiles_m, tiles_n, &tile_m, &tile_n);
    const int64_t m0 = tile_m * kWmmaBM, n0 = tile_n * kWmmaBN;
    const int warp = threadIdx.x / 32, warp_m = warp / 2, warp_n = warp % 2; /* 2×2 warps of 32×32 */

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
#pragma unroll
        for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
    }
    const int64_t K = a.cols;
    for (int64_t k0 = 0; k0 < K; k0 += kWmmaBK) {
        /* Consecutive threads take consecutive columns: coalesced for row-major operands. */
        for (int e = threadIdx.x; e < kWmmaBM * kWmmaBK; e += kWmmaThreads) {
            const int r = e / kWmmaBK, k = e % kWmmaBK;
            As[r * (kWmmaBK + kWmmaPad) + k] = load_or_zero(a, m0 + r, k0 + k);
        }
        for (int e = threadIdx.x; e < kWmmaBK * kWmmaBN; e += kWmmaThreads) {
            const int k = e / kWmmaBN, n = e % kWmmaBN;
            Bs[k * (kWmmaBN + kWmmaPad) + n] = load_or_zero(b, k0 + k, n0 + n);
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < kWmmaBK; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa[2];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> fb[2];
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                wmma::load_matrix_sync(fa[i], As + (warp_m * 32 + i * 16) * (kWmmaBK + kWmmaPad) + kk,
                                       kWmmaBK + kWmmaPad);
                wmma::load_matrix_sync(fb[i], Bs + kk * (kWmmaBN + kWmmaPad) + warp_n * 32 + i * 16,
                                       kWmmaBN + kWmmaPad);
            }
#pragma unroll
            for (int i = 0; i < 2; ++i) {
#pragma unroll
                for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
            }
        }
        __syncthreads(); /* the tiles are read before the next ones overwrite them */
    }
    /* The fragments' layout is unspecified: store them to shared memory, then each thread converts and writes
     * elements of C with guards (every element of the tile inside C is written, zeros when K = 0). */
#pragma unroll
    for (int i = 0; i < 2; ++i) {
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            wmma::store_matrix_sync(Cs + (warp_m * 32 + i * 16) * (kWmmaBN + 4) + warp_n * 32 + j * 16, acc[i][j],
                                    kWmmaBN + 4, wmma::mem_row_major);
        }
    }
    __syncthreads();
    for (int e = threadIdx.x; e < kWmmaBM * kWmmaBN / 2; e += kWmmaThreads) {
        const int r = e / (kWmmaBN / 2), col = 2 * (e % (kWmmaBN / 2));
        store_pair<T>(c, ldc, a.rows, b.cols, m0 + r, n0 + col, Cs[r * (kWmmaBN + 4) + col],
                      Cs[r * (kWmmaBN + 4) + col + 1], paired);
    }
#endif
}

/* ---- rung 10: mma.sync, ldmatrix, swizzle, cp.async ring -------------------------------------------------------- */
/* A block tile of BM×BN outputs, K-tiles of BK, STAGES K-tiles in the ring, WARPS_M × WARPS_N warps: each warp owns a
 * (BM / WARPS_M) × (BN / WARPS_N) piece of C, i.e. MI × NJ mma tiles of 16×8. One struct, so that NOTES.md's tile
 * experiments are one line each (matmul_tensor_tiles.cu instantiates them); MmaTile below is the one the op runs. */
template <int BM_, int BN_, int BK_, int STAGES_, int WARPS_M_, int WARPS_N_, int MIN_BLOCKS_>
struct MmaTileShape {
    static constexpr int BM = BM_, BN = BN_, BK = BK_, STAGES = STAGES_, WARPS_M = WARPS_M_, WARPS_N = WARPS_N_;
    static constexpr int MIN_BLOCKS = MIN_BLOCKS_; /* __launch_bounds__' minimum blocks per SM: caps registers */
    static constexpr int THREADS = 32 * WARPS_M * WARPS_N;
    static constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N; /* a warp's piece of C */
    static constexpr int MI = WM / 16, NJ = WN / 8;            /* its mma tiles: MI rows of NJ */
    static constexpr int KSTEPS = BK / 16;                     /* mma k-steps per K-tile */
    static constexpr int STAGE_ELEMS = BM * BK + BK * BN;
    static constexpr size_t SHARED_BYTES = (size_t)STAGES * STAGE_ELEMS * 2;
    static_assert(BK == 32 || BK == 64, "A's swizzle below is written for rows of 64 or 128 bytes");
    static_assert(BN >= 64 && WM % 16 == 0 && WN % 16 == 0, "B's swizzle needs 8 chunks a row; ldmatrix.x4 16×16");
    static_assert(KSTEPS % 2 == 0, "the fragment double buffer hands the next K-tile's first k-step buffer 0");
    static_assert((BM * BK / 8) % THREADS == 0 && (BK * BN / 8) % THREADS == 0, "whole chunks per thread");
};
using MmaTile = MmaTileShape<128, 256, 32, 3, 2, 4, 1>;

/* Where element (r, k) of A's BM×BK tile lives. Rows of BK / 8 chunks of 8 elements (16 bytes); chunk c of row r is
 * stored at chunk c ^ f(r). ldmatrix reads one chunk from each of 8 consecutive rows, and a bank group is 16 bytes of
 * each 128: with BK = 32 (64-byte rows) rows r and r + 2 share bank groups unless f(r) = (r / 2) % 4; with BK = 64
 * (128-byte rows) all 8 rows do unless f(r) = r % 8. Swizzled, the 8 chunks cover all 32 banks. */
template <class S>
__device__ __forceinline__ int a_index(int r, int k) {
    constexpr int rows_per_128 = 128 / (S::BK * 2), chunks = S::BK / 8;
    return r * S::BK + (((k / 8) ^ ((r / rows_per_128) & (chunks - 1))) * 8) + (k % 8);
}
/* Element (k, n) of B's BK×BN tile: rows of BN / 8 chunks, chunk c at c ^ (k % 8). Unswizzled, ldmatrix's 8 rows
 * (a multiple of 128 bytes apart) would all hit the same 4 banks: an 8-way conflict. */
template <class S>
__device__ __forceinline__ int b_index(int k, int n) {
    return k * S::BN + (((n / 8) ^ (k & 7)) * 8) + (n % 8);
}

/* 16 bytes global → shared without registers (`bytes` = 16 here: whole chunks only, see copy_chunk). */
__device__ __forceinline__ void cp_async_16(void *dst, const void *src, int bytes) {
    const uint32_t d = (uint32_t)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(d), "l"(src), "r"(bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
    asm volatile("cp.async.commit_group;" ::: "memory");
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

/* One chunk of 8 elements (16 bytes) of a row into shared memory: a whole chunk by cp.async; a chunk cut by the
 * matrix's edge (valid < 8) element by element with ordinary loads, zeros past the edge. cp.async could zero-fill
 * with a src-size below 16, but the instruction still names 16 bytes, and compute-sanitizer's memcheck reports the
 * bytes past the end of an allocation (rung 7's experience, NOTES.md); and cp.async has no 2-byte size. */
template <typename T>
__device__ __forceinline__ void copy_chunk(T *dst, const T *src, int valid) {
    if (valid == 8) {
        cp_async_16(dst, src, 16);
        return;
    }
#pragma unroll
    for (int e = 0; e < 8; ++e) dst[e] = e < valid ? src[e] : zero_of<T>();
}

/* One operand's K-tile into stage memory: `rows` × `cols` of the tile (A: BM × BK from (m0, k0); B: BK × BN from (k0,
 * n0)), chunks of 8 along the tile's rows. kAsync: 16-byte cp.async per chunk (row-major operand, row stride a
 * multiple of 8, aligned); else single guarded loads. kInside: the whole tile lies inside the matrix (most tiles of a
 * large product), so no chunk needs the edge checks. */
template <typename T, class S, bool kIsA, bool kAsync, bool kInside>
__device__ __forceinline__ void load_tile(T *dst, const MatrixView<T> &m, int64_t row0, int64_t col0) {
    constexpr int rows = kIsA ? S::BM : S::BK, cols = kIsA ? S::BK : S::BN;
#pragma unroll
    for (int t = 0; t < rows * cols / 8 / S::THREADS; ++t) {
        const int q = threadIdx.x + t * S::THREADS;
        const int r = q / (cols / 8), c = (q % (cols / 8)) * 8;
        T *to = dst + (kIsA ? a_index<S>(r, c) : b_index<S>(r, c));
        const int64_t gr = row0 + r, gc = col0 + c;
        if constexpr (kAsync && kInside) {
            cp_async_16(to, m.data + gr * m.row_stride + gc, 16);
        } else if constexpr (kAsync) {
            const int64_t left = m.cols - gc;
            const int valid = gr < m.rows && left > 0 ? (left < 8 ? (int)left : 8) : 0;
            copy_chunk(to, m.data + (valid > 0 ? gr * m.row_stride + gc : 0), valid);
        } else { /* not unrolled: 8 loads in flight, beside the accumulators and fragments (no spills) */
#pragma unroll 1
            for (int e = 0; e < 8; ++e) to[e] = load_or_zero(m, gr, gc + e);
        }
    }
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void *p) {
    const uint32_t s = (uint32_t)__cvta_generic_to_shared(p);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(s));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const void *p) {
    const uint32_t s = (uint32_t)__cvta_generic_to_shared(p);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(s));
}

/* d += a·b for one 16×8 tile over k = 16 (fp32 accumulators). */
template <typename T>
__device__ __forceinline__ void mma_m16n8k16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    if constexpr (std::is_same<T, __nv_bfloat16>::value) {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
            "{%0, %1, %2, %3};"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    } else {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
            "{%0, %1, %2, %3};"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
}

/* One k-step's operands for a warp: A's MI 16×16 fragments (rows warp_m·WM + 16i) and B's NJ 16×8 fragments, two per
 * ldmatrix (columns warp_n·WN + 16j), k = kk..kk + 15 of the stage at As, Bs. */
template <typename T, class S>
__device__ __forceinline__ void load_fragments(uint32_t (&fa)[S::MI][4], uint32_t (&fb)[S::NJ / 2][4], const T *As,
                                               const T *Bs, int kk, int warp_m, int warp_n, int lane) {
    /* A: four 8×8 matrices per 16×16 fragment. Lane l gives the address of row l % 16, 8-chunk l / 16: matrices 0-3
     * = (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15), the order of the mma's
     * a0..a3. */
#pragma unroll
    for (int i = 0; i < S::MI; ++i) {
        const int r = warp_m * S::WM + i * 16 + lane % 16;
        ldmatrix_x4(fa[i], As + a_index<S>(r, kk + (lane / 16) * 8));
    }
    /* B, transposed on the way: lane l gives k-row kk + l % 16 of the 8 columns 8(l / 16) further: matrices = (k 0-7,
     * n 0-7), (k 8-15, n 0-7), (k 0-7, n 8-15), (k 8-15, n 8-15): b0, b1 of two 8-column tiles. */
#pragma unroll
    for (int j = 0; j < S::NJ / 2; ++j) {
        const int n = warp_n * S::WN + j * 16 + (lane / 16) * 8;
        ldmatrix_x4_trans(fb[j], Bs + b_index<S>(kk + lane % 16, n));
    }
}

/* K-tile kt (A's and B's pieces) into its stage of the ring. */
template <typename T, class S, bool kAsyncA, bool kAsyncB, bool kInside>
__device__ __forceinline__ void load_stage(T *stages, const MatrixView<T> &a, const MatrixView<T> &b, int64_t m0,
                                           int64_t n0, int64_t kt) {
    T *stage = stages + (kt % S::STAGES) * S::STAGE_ELEMS;
    load_tile<T, S, true, kAsyncA, kInside>(stage, a, m0, kt * S::BK);
    load_tile<T, S, false, kAsyncB, kInside>(stage + S::BM * S::BK, b, kt * S::BK, n0);
}
template <typename T, class S, bool kAsyncA, bool kAsyncB>
__device__ __forceinline__ void load_stage(T *stages, const MatrixView<T> &a, const MatrixView<T> &b, int64_t m0,
                                           int64_t n0, int64_t kt, bool inside) {
    if (inside) {
        load_stage<T, S, kAsyncA, kAsyncB, true>(stages, a, b, m0, n0, kt);
    } else {
        load_stage<T, S, kAsyncA, kAsyncB, false>(stages, a, b, m0, n0, kt);
    }
}

template <typename T, class S, bool kAsyncA, bool kAsyncB>
__global__ void __launch_bounds__(S::THREADS, S::MIN_BLOCKS)
    mma_sync_kernel(MatrixView<T> a, MatrixView<T> b, T *c, int64_t ldc, int64_t tiles_m, int64_t tiles_n,
                    bool paired) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    extern __shared__ float4 shared_raw[]; /* float4: 16-byte aligned, as cp.async and ldmatrix need */
    T *stages = reinterpret_cast<T *>(shared_raw);

    int64_t tile_m, tile_n;
    grouped_tile<8>(blockIdx.x, tiles_m, tiles_n, &tile_m, &tile_n);
    const int64_t m0 = tile_m * S::BM, n0 = tile_n * S::BN;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int warp_m = warp / S::WARPS_N, warp_n = warp % S::WARPS_N;

    float acc[S::MI][S::NJ][4]; /* [16-row tile][8-column tile][the mma's 4 outputs per thread] */
#pragma unroll
    for (int i = 0; i < S::MI; ++i) {
#pragma unroll
        for (int j = 0; j < S::NJ; ++j) {
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;
        }
    }

    const int64_t k_tiles = ceil_div(a.cols, S::BK);
    /* Every K-tile but a ragged last one lies inside both matrices when the block's rows and columns do. */
    const bool rows_inside = m0 + S::BM <= a.rows && n0 + S::BN <= b.cols;
    const int64_t full_k_tiles = a.cols / S::BK;
    /* Prologue: the first STAGES - 1 K-tiles start loading. A group is committed even when empty, so that "wait until
     * at most STAGES - 2 groups are pending" always means "the next K-tile has landed". */
#pragma unroll
    for (int s = 0; s < S::STAGES - 1; ++s) {
        if (s < k_tiles) load_stage<T, S, kAsyncA, kAsyncB>(stages, a, b, m0, n0, s, rows_inside && s < full_k_tiles);
        cp_async_commit();
    }
    cp_async_wait<S::STAGES - 2>(); /* this thread's copies of K-tile 0 are done */
    __syncthreads();                /* everyone's are */

    /* The fragments are double-buffered in registers: the ldmatrix of the next k-step is issued before the mmas of
     * this one, so that its latency hides behind them. fa[s % 2], fb[s % 2] hold k-step s; K-tile 0's first k-step
     * is loaded here. */
    uint32_t fa[2][S::MI][4], fb[2][S::NJ / 2][4];
    load_fragments<T, S>(fa[0], fb[0], stages, stages + S::BM * S::BK, 0, warp_m, warp_n, lane);

    for (int64_t kt = 0; kt < k_tiles; ++kt) {
        /* K-tile kt + STAGES - 1 goes into the stage of K-tile kt - 1, which every warp finished reading before the
         * barrier in the previous iteration's last k-step. */
        const int64_t next = kt + S::STAGES - 1;
        if (next < k_tiles)
            load_stage<T, S, kAsyncA, kAsyncB>(stages, a, b, m0, n0, next, rows_inside && next < full_k_tiles);
        cp_async_commit();

        const T *As = stages + (kt % S::STAGES) * S::STAGE_ELEMS;
#pragma unroll
        for (int s = 0; s < S::KSTEPS; ++s) {
            if (s + 1 < S::KSTEPS) {
                load_fragments<T, S>(fa[(s + 1) % 2], fb[(s + 1) % 2], As, As + S::BM * S::BK, (s + 1) * 16, warp_m,
                                     warp_n, lane);
            } else {
                /* The last k-step: K-tile kt + 1 must have landed (this thread's copies: the wait; everyone's: the
                 * barrier, after which every warp is also done reading K-tile kt's stage), then its first k-step is
                 * loaded into buffer 0 (KSTEPS is even) while the mmas below use buffer 1. */
                cp_async_wait<S::STAGES - 2>();
                __syncthreads();
                if (kt + 1 < k_tiles) {
                    const T *An = stages + ((kt + 1) % S::STAGES) * S::STAGE_ELEMS;
                    load_fragments<T, S>(fa[0], fb[0], An, An + S::BM * S::BK, 0, warp_m, warp_n, lane);
                }
            }
#pragma unroll
            for (int i = 0; i < S::MI; ++i) {
#pragma unroll
                for (int j = 0; j < S::NJ; ++j)
                    mma_m16n8k16<T>(acc[i][j], fa[s % 2][i], fb[s % 2][j / 2][2 * (j % 2)],
                                    fb[s % 2][j / 2][2 * (j % 2) + 1]);
            }
        }
    }
    cp_async_wait<0>(); /* no copy is left in flight when the block exits (the last groups are empty) */

    /* The accumulators: thread l holds (row l/4, columns 2(l%4), +1) and (row l/4 + 8, same columns) of each 16×8. */
#pragma unroll
    for (int i = 0; i < S::MI; ++i) {
        const int64_t row = m0 + warp_m * S::WM + i * 16 + lane / 4;
#pragma unroll
        for (int j = 0; j < S::NJ; ++j) {
            const int64_t col = n0 + warp_n * S::WN + j * 8 + 2 * (lane % 4);
            store_pair<T>(c, ldc, a.rows, b.cols, row, col, acc[i][j][0], acc[i][j][1], paired);
            store_pair<T>(c, ldc, a.rows, b.cols, row + 8, col, acc[i][j][2], acc[i][j][3], paired);
        }
    }
#endif
}

/* ---- launchers ------------------------------------------------------------------------------------------------- */
template <typename T>
MatrixView<T> view(const matmul_operand &o, int64_t rows, int64_t cols) {
    return {static_cast<const T *>(o.data), rows, cols, o.row_stride, o.col_stride};
}

/* cp.async can read an operand 16 bytes at a time along its rows. */
bool rows_allow_cp_async(const matmul_operand &o, int64_t rows, int64_t cols) {
    return (cols <= 1 || o.col_stride == 1) && (rows <= 1 || o.row_stride % 8 == 0) &&
           reinterpret_cast<uintptr_t>(o.data) % 16 == 0;
}

cudaError_t grid_for(int64_t tiles, unsigned int *blocks) {
    int device = 0, most = 0;
    CUDA_RETURN_IF_ERROR(cudaGetDevice(&device));
    CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&most, cudaDevAttrMaxGridDimX, device));
    if (tiles < 1 || tiles > most) return cudaErrorInvalidConfiguration;
    *blocks = (unsigned int)tiles;
    return cudaSuccess;
}

template <typename T>
cudaError_t launch_wmma(int64_t M, int64_t N, int64_t K, matmul_operand a, matmul_operand b, T *c, int64_t ldc,
                        bool paired, cudaStream_t stream) {
    const int64_t tiles_m = ceil_div(M, kWmmaBM), tiles_n = ceil_div(N, kWmmaBN);
    unsigned int blocks = 0;
    CUDA_RETURN_IF_ERROR(grid_for(tiles_m * tiles_n, &blocks));
    wmma_kernel<T>
        <<<blocks, kWmmaThreads, 0, stream>>>(view<T>(a, M, K), view<T>(b, K, N), c, ldc, tiles_m, tiles_n, paired);
    return cudaGetLastError();
}

template <typename T, class S, bool kAsyncA, bool kAsyncB>
cudaError_t launch_mma_sync_variant(int64_t M, int64_t N, int64_t K, matmul_operand a, matmul_operand b, T *c,
                                    int64_t ldc, bool paired, cudaStream_t stream) {
    const auto kernel = mma_sync_kernel<T, S, kAsyncA, kAsyncB>;
    int device = 0, optin = 0;
    CUDA_RETURN_IF_ERROR(cudaGetDevice(&device));
    CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    if (S::SHARED_BYTES > (size_t)optin) return cudaErrorInvalidConfiguration;
    CUDA_RETURN_IF_ERROR(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)S::SHARED_BYTES));
    const int64_t tiles_m = ceil_div(M, S::BM), tiles_n = ceil_div(N, S::BN);
    unsigned int blocks = 0;
    CUDA_RETURN_IF_ERROR(grid_for(tiles_m * tiles_n, &blocks));
    kernel<<<blocks, S::THREADS, S::SHARED_BYTES, stream>>>(view<T>(a, M, K), view<T>(b, K, N), c, ldc, tiles_m,
                                                            tiles_n, paired);
    return cudaGetLastError();
}

template <typename T, class S = MmaTile>
cudaError_t launch_mma_sync(int64_t M, int64_t N, int64_t K, matmul_operand a, matmul_operand b, T *c, int64_t ldc,
                            bool paired, cudaStream_t stream) {
    const bool async_a = rows_allow_cp_async(a, M, K), async_b = rows_allow_cp_async(b, K, N);
    if (async_a && async_b) return launch_mma_sync_variant<T, S, true, true>(M, N, K, a, b, c, ldc, paired, stream);
    if (async_a) return launch_mma_sync_variant<T, S, true, false>(M, N, K, a, b, c, ldc, paired, stream);
    if (async_b) return launch_mma_sync_variant<T, S, false, true>(M, N, K, a, b, c, ldc, paired, stream);
    return launch_mma_sync_variant<T, S, false, false>(M, N, K, a, b, c, ldc, paired, stream);
}

template <typename T>
cudaError_t launch_tensor(int rung, int64_t M, int64_t N, int64_t K, matmul_operand a, matmul_operand b, void *c,
                          int64_t ldc, cudaStream_t stream) {
    const bool paired = ldc % 2 == 0 && reinterpret_cast<uintptr_t>(c) % 4 == 0;
    switch (rung) {
        case MATMUL_RUNG_WMMA:
            return launch_wmma<T>(M, N, K, a, b, static_cast<T *>(c), ldc, paired, stream);
        case MATMUL_RUNG_MMA_SYNC:
            return launch_mma_sync<T>(M, N, K, a, b, static_cast<T *>(c), ldc, paired, stream);
        default:
            return cudaErrorInvalidValue;
    }
}

}  // namespace

extern "C" int matmul_tensor_rung(int rung, int major, int minor, int64_t M, int64_t N, int64_t K, matmul_operand a,
                                  matmul_operand b) {
    (void)minor;
    if (major < 8) return -1;
    if (rung == MATMUL_RUNG_BEST) rung = MATMUL_RUNG_WGMMA;
    if (rung == MATMUL_RUNG_WGMMA) {
        /* sm_90a code runs on compute capability 9.0 alone; TMA needs its layouts. */
        return major == 9 && matmul_tma_compatible(M, N, K, a, b) ? MATMUL_RUNG_WGMMA : MATMUL_RUNG_MMA_SYNC;
    }
    return rung == MATMUL_RUNG_WMMA || rung == MATMUL_RUNG_MMA_SYNC ? rung : -1;
}

extern "C" cudaError_t matmul_tensor_cuda(int rung, course_dtype dtype, int64_t M, int64_t N, int64_t K,
                                          matmul_operand a, matmul_operand b, void *c, int64_t ldc,
                                          cudaStream_t stream) {
    if (dtype != COURSE_FLOAT16 && dtype != COURSE_BFLOAT16) return cudaErrorInvalidValue;
    if (M < 0 || N < 0 || K < 0 || (M > 1 && ldc < N)) return cudaErrorInvalidValue;
    int device = 0, major = 0, minor = 0;
    CUDA_RETURN_IF_ERROR(cudaGetDevice(&device));
    CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    rung = matmul_tensor_rung(rung, major, minor, M, N, K, a, b);
    if (rung < 0) return cudaErrorNotSupported; /* no bf16 tensor cores before compute capability 8.0 */
    if (M == 0 || N == 0) return cudaSuccess;
    if (K == 0) { /* C = 0: the all-zero bit pattern is +0 in fp16 and bf16 */
        return cudaMemset2DAsync(c, (size_t)(M > 1 ? ldc : N) * 2, 0, (size_t)N * 2, (size_t)M, stream);
    }
    if (rung == MATMUL_RUNG_WGMMA) return matmul_wgmma_cuda(dtype, M, N, K, a, b, c, ldc, stream);
    return dtype == COURSE_BFLOAT16 ? launch_tensor<__nv_bfloat16>(rung, M, N, K, a, b, c, ldc, stream)
                                    : launch_tensor<__half>(rung, M, N, K, a, b, c, ldc, stream);
}
