/*
 * matmul_kernels.cu — C = A·B on CUDA cores: a ladder of nine kernels, from one thread per output to a kernel
 * at 90 % of cuBLAS on an H100, each rung one idea (README.md has every rung's measurements). A is M×K, B is K×N, C is
 * M×N; C(i, j) = Σ_k A(i, k)·B(k, j).
 *
 * The work: 2·M·N·K flops (one multiply and one add per product: an FMA). The data: 4·(M·K + K·N + M·N) bytes.
 * At 4096³ that is 137 GFLOP on 201 MB: 683 flops per byte, far right of the roofline's ridge (the H100 does ~60
 * TFLOP/s of fp32 FMAs on ~3 TB/s: a ridge near 20 flops per byte). A matrix product can be limited by arithmetic,
 * but only if each element loaded from memory is used many times: that reuse is what the rungs build.
 *
 *   rung 0  naive_rows_kernel — one thread per C element, each reads a row of A and a column of B from global
 *           memory. PITFALL: threadIdx.x walks ROWS of C, so the 32 threads of a warp read 32 different rows of A
 *           (32 memory sectors per load instead of 1) and write C 32 rows apart.
 *   rung 1  coalesced_kernel — what changed: threadIdx.x walks COLUMNS. A warp now reads one A element (a
 *           broadcast) and 32 consecutive B elements (one 128-byte line) per step, and writes one line of C.
 *   rung 2  shared_tiles_kernel — what changed: 32×32 tiles of A and B are staged in shared memory; each element
 *           loaded from global memory is used 32 times. Per-thread code in matmul_tile.cuh (the exercise).
 *   rung 3  blocktile_1d_kernel — what changed: each thread computes 8 outputs of a column (a 64×64 tile of C per
 *           block of 512 threads, K-tiles of 8). One B value from shared memory feeds 8 FMAs from registers.
 *   rung 4  blocktile_2d_kernel — what changed: each thread computes an 8×8 block (128×128 tile per block of 256
 *           threads). 8 + 8 values from shared memory feed 64 FMAs: the outer product in registers.
 *   rung 5  vectorized_kernel — what changed: global loads and shared-memory loads are 16 bytes (float4); A's tile is
 *           stored transposed in shared memory (As[k][m]) so a thread's 8 values of A are contiguous; rows padded by
 *           4 floats so that the transposing stores do not collide in one bank. fp32 only.
 *   rung 6  warptile_kernel — what changed: a warp owns a 64×32 piece of the block's tile and each thread's 8×8 is
 *           spread over it as 2×2 blocks of 4×4. The 32 lanes of a warp then read 128 contiguous bytes of A and 64 of
 *           B per shared-memory load: no bank conflicts left (rung 5's 8×8-contiguous layout had 2-way ones).
 *   rung 7  pipelined_kernel — what changed: the loads of the next tiles overlap the arithmetic on the current
 *           one. A ring of 3 shared-memory stages: an operand contiguous along mn (B row-major) is copied with
 *           cp.async (global → shared memory, no register in between), two K-tiles ahead; an operand that must be
 *           transposed on the way (A row-major) is fetched into registers before the arithmetic and stored after
 *           it. One barrier per K-tile instead of two; K-tiles of 16; a 64×256 block tile (8 warps side by side:
 *           less of A to transpose per product); blocks taken in groups of 8 tile rows so that blocks running
 *           together share tiles of A and B in the L2 cache.
 *   rung 8  the same kernel, and split K: when the output has fewer tiles than the GPU holds blocks, K is cut into
 *           splits that run as separate blocks, each writing partial sums to scratch memory, which a second
 *           kernel adds in a fixed order. It fills the GPU for small outputs and, with shorter sums, rounds less
 *           (as cuBLAS does for those shapes). For large outputs it is rung 7.
 *
 * Layouts. Every rung reads A and B through strides (matmul_view.cuh), so Aᵀ, Bᵀ and sliced views need no copy.
 * Rungs 0-4 load single elements and take any strides. Rungs 5-8 load 16 bytes along a dimension where the operand
 * is contiguous (Layout::kContigK or kContigMN below: A row-major is contiguous along K, B row-major along N, their
 * transposes the other way round); an operand that is contiguous along neither, or not 16-byte aligned, takes the
 * kScalar variant of the same kernel (single-element loads, the same tiles and arithmetic).
 * Tails. Tiles that hang over the edge of A or B are filled with zeros (guarded loads), and only elements inside C
 * are written (guarded stores), so M, N, K need not be multiples of anything. K = 0 writes zeros.
 * Grids are one-dimensional (up to 2^31 - 1 blocks): blockIdx.x is turned into a (tile row, tile column) pair.
 * Launch sizes come from the device: the naive rungs take the block size the occupancy API suggests, the tiled
 * rungs check their block against the device's limits (threads, shared memory, raised with cudaFuncSetAttribute
 * above the default 48 KB) and the occupancy API, and every launch is checked.
 *
 * float64 runs rungs 0-4 (templated on the element type). The dispatcher matmul_cuda switches on the dtype, then on
 * the rung, and returns cudaErrorInvalidValue for a pair it does not know. float16 and bfloat16 go to the tensor-core
 * rungs 9-11 (matmul_tensor.cu, matmul_hopper.cu: part 2 of the chapter).
 */
#include <cuda_runtime.h>
#include <limits.h>
#include <stdint.h>

#include <type_traits>

#include "course_check.h"
#include "course_launch.cuh"
#include "matmul.h"
#include "matmul_view.cuh"
#include <matmul_tile.cuh> /* <...>: EXERCISE=1 builds put exercises/ first on the include path */

namespace {

/* ---- pieces every rung uses ----------------------------------------------------------------------------------- */

__host__ __device__ inline int64_t ceil_div(int64_t x, int64_t y) {
    return (x + y - 1) / y;
}

/* Block number `block`'s tile of C. With group_m = 1 the tiles go row by row. With
 * group_m = G they go down G tile rows before moving right (Triton's tutorial calls it "grouped ordering"): the
 * blocks running at the same time then read G rows of tiles of A and a few columns of tiles of B, which stay in
 * L2, instead of one row of A and every column of B. */
__device__ __forceinline__ void tile_of_block(int64_t block, int64_t tiles_m, int64_t tiles_n, int group_m,
                                              int64_t *tile_m, int64_t *tile_n) {
    const int64_t per_group = (int64_t)group_m * tiles_n;
    const int64_t first_m = block / per_group * group_m;
    const int64_t rows = tiles_m - first_m < group_m ? tiles_m - first_m : group_m;
    *tile_m = first_m + block % per_group % rows;
    *tile_n = block % per_group / rows;
}

template <typename T>
__device__ __forceinline__ T load_or_zero(const MatrixView<T> &m, int64_t i, int64_t j) {
    return (i < m.rows && j < m.cols) ? m.data[i * m.row_stride + j * m.col_stride] : T(0);
}

/* Rungs 3-4: the block's THREADS threads copy the BM×BK tile of A at (row0, k0) into As[m][k] and the BK×BN tile
 * of B at (k0, col0) into Bs[k][n], one element at a time, consecutive threads on consecutive k (of A) and n (of
 * B); zeros outside the matrices. */
template <int BM, int BN, int BK, int THREADS, typename T>
__device__ __forceinline__ void load_tiles(const MatrixView<T> &a, const MatrixView<T> &b, int64_t row0, int64_t col0,
                                           int64_t k0, T *As, T *Bs) {
    static_assert(BM * BK % THREADS == 0 && BK * BN % THREADS == 0, "every thread copies the same number");
#pragma unroll
    for (int step = 0; step < BM * BK / THREADS; ++step) {
        const int i = step * THREADS + threadIdx.x;
        As[i] = load_or_zero(a, row0 + i / BK, k0 + i % BK);
    }
#pragma unroll
    for (int step = 0; step < BK * BN / THREADS; ++step) {
        const int i = step * THREADS + threadIdx.x;
        Bs[i] = load_or_zero(b, k0 + i / BN, col0 + i % BN);
    }
}

/* ---- rung 0: one thread per output, threadIdx.x walks rows (the pitfall) --------------------------------------- */
/* Block (32, Y): 32 rows × Y columns of C. In a warp (32 consecutive threadIdx.x, same threadIdx.y) every thread has
 * its own row: A(row, k) is 32 loads from 32 rows, K·4 bytes apart; C is written 32 rows apart. */
template <typename T>
__global__ void naive_rows_kernel(MatrixView<T> a, MatrixView<T> b, T *c, int64_t ldc, int64_t tiles_n) {
    const int64_t row = (int64_t)(blockIdx.x / tiles_n) * blockDim.x + threadIdx.x; /* PITFALL: x walks rows */
    const int64_t col = (int64_t)(blockIdx.x % tiles_n) * blockDim.y + threadIdx.y;
    if (row >= a.rows || col >= b.cols) return;
    T acc = 0;
    for (int64_t k = 0; k < a.cols; ++k)
        acc += a.data[row * a.row_stride + k * a.col_stride] * b.data[k * b.row_stride + col * b.col_stride];
    c[row * ldc + col] = acc;
}

/* ---- rung 1: threadIdx.x walks columns --------------------------------------------------------------------------- */
/* Block (32, Y): Y rows × 32 columns of C. A warp shares its row: A(row, k) is one load broadcast to 32 threads,
 * B(k, col..col+31) is one 128-byte line (B row-major), and the warp writes one line of C. */
template <typename T>
__global__ void coalesced_kernel(MatrixView<T> a, MatrixView<T> b, T *c, int64_t ldc, int64_t tiles_n) {
    const int64_t row = (int64_t)(blockIdx.x / tiles_n) * blockDim.y + threadIdx.y;
    const int64_t col = (int64_t)(blockIdx.x % tiles_n) * blockDim.x + threadIdx.x; /* x walks columns */
    if (row >= a.rows || col >= b.cols) return;
    T acc = 0;
    for (int64_t k = 0; k < a.cols; ++k)
        acc += a.data[row * a.row_stride + k * a.col_stride] * b.data[k * b.row_stride + col * b.col_stride];
    c[row * ldc + col] = acc;
}

/* ---- rung 2: tiles in shared memory ------------------------------------------------------------------------------ */
/* A block of TILE×TILE threads (1-D, thread t is (ty, tx) = (t / TILE, t % TILE)) owns a TILE×TILE tile of C. The
 * per-thread phases are tile_load and tile_dot (matmul_tile.cuh), between barriers. */
template <typename T, int TILE>
__global__ void __launch_bounds__(TILE *TILE)
    shared_tiles_kernel(MatrixView<T> a, MatrixView<T> b, T *c, int64_t ldc, int64_t tiles_n) {
    __shared__ T As[TILE * TILE];
    __shared__ T Bs[TILE * TILE];
    const int tx = threadIdx.x % TILE, ty = threadIdx.x / TILE;
    const int64_t row0 = (int64_t)(blockIdx.x / tiles_n) * TILE, col0 = (int64_t)(blockIdx.x % tiles_n) * TILE;
    T acc = 0;
    for (int64_t k0 = 0; k0 < a.cols; k0 += TILE) {
        tile_load<TILE>(a, b, row0, col0, k0, ty, tx, As, Bs); /* phase 1: one element of each tile */
        __syncthreads();                                       /* the tiles are complete */
        acc = tile_dot<TILE>(As, Bs, ty, tx, acc);             /* phase 2: TILE products */
        __syncthreads();                                       /* nobody reads them any more */
    }
    if (row0 + ty < a.rows && col0 + tx < b.cols) c[(row0 + ty) * ldc + col0 + tx] = acc;
}

/* ---- rung 3: 1-D register blocking --------------------------------------------------------------------------------
 */
/* Block tile BM×BN, K-tiles of BK, BM·BN/TM threads. Thread t computes rows trow·TM .. trow·TM+TM-1 of column tcol:
 * per k it reads one value of Bs into a register and TM values of As (the same for the whole warp: a broadcast),
 * and does TM FMAs. As is [BM][BK] (row-major), Bs is [BK][BN]. */
template <typename T, int BM, int BN, int BK, int TM>
__global__ void __launch_bounds__(BM *BN / TM)
    blocktile_1d_kernel(MatrixView<T> a, MatrixView<T> b, T *c, int64_t ldc, int64_t tiles_n) {
    constexpr int kThreads = BM * BN / TM;
    __shared__ T As[BM * BK];
    __shared__ T Bs[BK * BN];
    const int tcol = threadIdx.x % BN, trow = threadIdx.x / BN;
    const int64_t row0 = (int64_t)(blockIdx.x / tiles_n) * BM, col0 = (int64_t)(blockIdx.x % tiles_n) * BN;
    T acc[TM] = {};
    for (int64_t k0 = 0; k0 < a.cols; k0 += BK) {
        load_tiles<BM, BN, BK, kThreads>(a, b, row0, col0, k0, As, Bs);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const T b_value = Bs[k * BN + tcol];
#pragma unroll
            for (int i = 0; i < TM; ++i) acc[i] += As[(trow * TM + i) * BK + k] * b_value;
        }
        __syncthreads();
    }
    const int64_t col = col0 + tcol;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int64_t row = row0 + trow * TM + i;
        if (row < a.rows && col < b.cols) c[row * ldc + col] = acc[i];
    }
}

/* ---- rung 4: 2-D register blocking --------------------------------------------------------------------------------
 */
/* Block tile BM×BN, BM·BN/(TM·TN) threads; thread (trow, tcol) computes the TM×TN block at (trow·TM, tcol·TN).
 * Per k: TM values of As and TN of Bs into registers, then TM·TN FMAs (their outer product). As is [BM][BK]: a
 * thread's TM values of As are BK floats apart, and the 16 threads of a half-warp read Bs 8 floats apart: both
 * give bank conflicts, which rung 5 removes. */
template <typename T, int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__(BM *BN / (TM * TN))
    blocktile_2d_kernel(MatrixView<T> a, MatrixView<T> b, T *c, int64_t ldc, int64_t tiles_n) {
    constexpr int kThreads = BM * BN / (TM * TN);
    __shared__ T As[BM * BK];
    __shared__ T Bs[BK * BN];
    const int tcol = threadIdx.x % (BN / TN), trow = threadIdx.x / (BN / TN);
    const int64_t row0 = (int64_t)(blockIdx.x / tiles_n) * BM, col0 = (int64_t)(blockIdx.x % tiles_n) * BN;
    T acc[TM][TN] = {};
    T a_reg[TM], b_reg[TN];
    for (int64_t k0 = 0; k0 < a.cols; k0 += BK) {
        load_tiles<BM, BN, BK, kThreads>(a, b, row0, col0, k0, As, Bs);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int i = 0; i < TM; ++i) a_reg[i] = As[(trow * TM + i) * BK + k];
#pragma unroll
            for (int j = 0; j < TN; ++j) b_reg[j] = Bs[k * BN + tcol * TN + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += a_reg[i] * b_reg[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int64_t row = row0 + trow * TM + i;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int64_t col = col0 + tcol * TN + j;
            if (row < a.rows && col < b.cols) c[row * ldc + col] = acc[i][j];
        }
    }
}

/* ---- rungs 5-7: 16-byte loads (fp32) ---------------------------------------------------------------------------- */

/* An operand as the fast rungs see it: an MN×K matrix whose element (mn, k) is data[mn*s_mn + k*s_k]. For A, mn is
 * the row (MN = M); for B, mn is the column (MN = N). Both tiles are stored in shared memory the same way, k-major:
 * S[k*LD + mn], so that a thread's consecutive values along m (of A) or n (of B) are one 16-byte load. */
struct TileSource {
    const float *data;
    int64_t mn_extent, k_extent;
    int64_t s_mn, s_k;
    bool k_fastest; /* kScalar only: threads walk k first (the smaller stride), else mn first */
};

/* How a fast rung copies an operand's tiles.
 *   kContigK   contiguous along k (A row-major, Bᵀ): loads along k, stored transposed
 *   kContigMN  contiguous along mn (B row-major, Aᵀ): 16-byte loads along mn, stored as they are
 *   kScalar    anything else (a sliced view, an offset that breaks 16-byte alignment, stride 0): 4-byte loads */
enum class Layout { kContigK, kContigMN, kScalar };

/* Which Layout an operand allows: 16-byte loads need unit stride along that dimension, a 16-byte aligned base and a
 * multiple of 4 as the other stride (so every group of 4 starting at a multiple of 4 is aligned). A dimension of
 * extent 1 never needs its stride. */
Layout choose_layout(const TileSource &s) {
    const bool aligned = course::is_pack_aligned(s.data);
    if (aligned && (s.s_k == 1 || s.k_extent == 1) && (s.s_mn % 4 == 0 || s.mn_extent == 1)) return Layout::kContigK;
    if (aligned && (s.s_mn == 1 || s.mn_extent == 1) && (s.s_k % 4 == 0 || s.k_extent == 1)) return Layout::kContigMN;
    return Layout::kScalar;
}

__device__ __forceinline__ int64_t clamp_below(int64_t x, int64_t extent) {
    return x < extent ? x : extent - 1; /* a row or column inside the matrix, for pointers that are never read */
}

/* Copies a thread's share of every BMN×BK tile into S[k*LD + mn] through registers: fetch() loads it (16-byte
 * loads where the layout allows), store() writes it to shared memory. Rungs 5 and 6 call the two back to back;
 * rung 7 fetches the next tile before computing the current one and stores it after, so the loads are in flight
 * during the arithmetic. A thread holds kValues = BMN·BK/THREADS values of a tile, in groups of 4:
 *   along k (kContigK, kScalar walking k): groups (mn, 4 consecutive k). The BK/4 groups of a row go to
 *     consecutive threads, the next row to the next ones: a warp reads whole rows of the tile (BK·4 bytes each:
 *     32 or 64), and stores them transposed, one scalar store per k. Thread t's groups are rows t/(BK/4) + i·kRows.
 *   along mn (kContigMN, kScalar walking mn): groups (4 consecutive mn, k): a warp reads 512 contiguous bytes of a
 *     row of B and stores them as they are. Thread t's groups are in k rows t/(BMN/4) + i·kRows.
 * Built once per thread: a pointer to its first group, the stride to its next one and which of its groups lie
 * inside the matrix, so a K-tile costs a few loads, a compare and an add. Values outside the matrix are zeros. */
template <int BMN, int BK, int LD, int THREADS, Layout L>
struct RegisterTileCopy {
    static constexpr int kValues = BMN * BK / THREADS, kGroups = kValues / 4;
    static constexpr int kRowsAlongK = THREADS / (BK / 4);   /* along k: rows between a thread's groups */
    static constexpr int kRowsAlongMN = THREADS / (BMN / 4); /* along mn: k rows between a thread's groups */
    static_assert(kValues % 4 == 0 && THREADS % (BK / 4) == 0 && THREADS % (BMN / 4) == 0, "even shares of a tile");
    float v[kValues];  /* the fetched values, until store() */
    const float *src;  /* this thread's first group in the next K-tile to fetch */
    int64_t k_first;   /* its first k */
    int64_t step;      /* from one of the thread's groups to the next, in elements */
    int shared_offset; /* its first group's place in the tile: k·LD + mn */
    int inside;        /* along k: bit i set if group i's row is inside; along mn: group elements inside (0-4) */
    bool along_k;

    __device__ RegisterTileCopy(const TileSource &s, int64_t mn0, int64_t k_begin) {
        along_k = L == Layout::kContigK || (L == Layout::kScalar && s.k_fastest);
        const int t = threadIdx.x;
        int mn, k;
        if (along_k) {
            mn = t / (BK / 4);
            k = t % (BK / 4) * 4;
            inside = 0;
#pragma unroll
            for (int i = 0; i < kGroups; ++i) inside |= (mn0 + mn + i * kRowsAlongK < s.mn_extent) << i;
            step = kRowsAlongK * s.s_mn;
        } else {
            mn = t % (BMN / 4) * 4;
            k = t / (BMN / 4);
            const int64_t left = s.mn_extent - (mn0 + mn);
            inside = left <= 0 ? 0 : left >= 4 ? 4 : (int)left;
            step = kRowsAlongMN * s.s_k;
        }
        src = s.data + clamp_below(mn0 + mn, s.mn_extent) * s.s_mn + (k_begin + k) * s.s_k;
        k_first = k_begin + k;
        shared_offset = k * LD + mn;
    }

    __device__ void fetch(const TileSource &s) {
        const int64_t k_left = s.k_extent - k_first; /* this thread's k inside the matrix, from its first */
#pragma unroll
        for (int i = 0; i < kGroups; ++i) {
            const float *p = src + i * step; /* never read when its group lies outside */
            float *x = v + 4 * i;
            if (along_k) {
                const bool row_inside = (inside >> i) & 1;
                if (L == Layout::kContigK && row_inside && k_left >= 4) {
                    const float4 q = *reinterpret_cast<const float4 *>(p);
                    x[0] = q.x, x[1] = q.y, x[2] = q.z, x[3] = q.w;
                } else {
#pragma unroll
                    for (int j = 0; j < 4; ++j) x[j] = (row_inside && j < k_left) ? p[j * s.s_k] : 0.0f;
                }
            } else {
                const bool k_inside = i * kRowsAlongMN < k_left;
                if (L == Layout::kContigMN && k_inside && inside == 4) {
                    const float4 q = *reinterpret_cast<const float4 *>(p);
                    x[0] = q.x, x[1] = q.y, x[2] = q.z, x[3] = q.w;
                } else {
#pragma unroll
                    for (int j = 0; j < 4; ++j) x[j] = (k_inside && j < inside) ? p[j * s.s_mn] : 0.0f;
                }
            }
        }
        src += BK * s.s_k;
        k_first += BK;
    }

    __device__ void store(float *S) const {
        float *d = S + shared_offset;
#pragma unroll
        for (int i = 0; i < kGroups; ++i) {
            const float *x = v + 4 * i;
            if (along_k) { /* the transpose: one scalar store per k */
#pragma unroll
                for (int j = 0; j < 4; ++j) d[j * LD + i * kRowsAlongK] = x[j];
            } else {
                *reinterpret_cast<float4 *>(d + i * kRowsAlongMN * LD) = make_float4(x[0], x[1], x[2], x[3]);
            }
        }
    }
};

/* Writes 4 consecutive elements of a row of C, (row, col..col+3), col a multiple of 4; only those inside C. One
 * 16-byte store where C allows it (vector_ok: 16-byte aligned base and a row stride that is a multiple of 4). */
__device__ __forceinline__ void store4(float *c, int64_t ldc, int64_t M, int64_t N, int64_t row, int64_t col, float4 v,
                                       bool vector_ok) {
    if (row >= M || col >= N) return;
    float *p = c + row * ldc + col;
    if (vector_ok && col + 4 <= N) {
        *reinterpret_cast<float4 *>(p) = v;
        return;
    }
    p[0] = v.x;
    if (col + 1 < N) p[1] = v.y;
    if (col + 2 < N) p[2] = v.z;
    if (col + 3 < N) p[3] = v.w;
}

/* ---- rung 5: 16-byte loads, A transposed in shared memory -------------------------------------------------------- */
/* As rung 4 (128×128 tile, K-tiles of 8, 256 threads, 8×8 per thread), but the tiles are [BK][BM+4] and [BK][BN+4]:
 * a thread's 8 values of A for one k are contiguous (2 float4 loads, not 8 scalar ones), its 8 values of B too. The
 * rows are padded by 4 floats: the transposing stores of A then spread over all 32 banks. */
template <Layout LA, Layout LB>
__global__ void __launch_bounds__(256, 2)
    vectorized_kernel(TileSource a, TileSource b, float *c, int64_t ldc, bool c_vector_ok, int64_t tiles_n) {
    constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8, kThreads = 256;
    constexpr int LDA = BM + 4, LDB = BN + 4;
    __shared__ __align__(16) float As[BK * LDA];
    __shared__ __align__(16) float Bs[BK * LDB];
    const int tcol = threadIdx.x % (BN / TN), trow = threadIdx.x / (BN / TN);
    const int64_t row0 = (int64_t)(blockIdx.x / tiles_n) * BM, col0 = (int64_t)(blockIdx.x % tiles_n) * BN;
    RegisterTileCopy<BM, BK, LDA, kThreads, LA> copy_a(a, row0, 0);
    RegisterTileCopy<BN, BK, LDB, kThreads, LB> copy_b(b, col0, 0);
    float acc[TM][TN] = {};
    for (int64_t k0 = 0; k0 < a.k_extent; k0 += BK) {
        copy_a.fetch(a);
        copy_b.fetch(b);
        copy_a.store(As);
        copy_b.store(Bs);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a_reg[TM], b_reg[TN];
#pragma unroll
            for (int i = 0; i < TM; i += 4) {
                const float4 v = *reinterpret_cast<const float4 *>(&As[k * LDA + trow * TM + i]);
                a_reg[i] = v.x, a_reg[i + 1] = v.y, a_reg[i + 2] = v.z, a_reg[i + 3] = v.w;
            }
#pragma unroll
            for (int j = 0; j < TN; j += 4) {
                const float4 v = *reinterpret_cast<const float4 *>(&Bs[k * LDB + tcol * TN + j]);
                b_reg[j] = v.x, b_reg[j + 1] = v.y, b_reg[j + 2] = v.z, b_reg[j + 3] = v.w;
            }
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a_reg[i], b_reg[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; j += 4)
            store4(c, ldc, a.mn_extent, b.mn_extent, row0 + trow * TM + i, col0 + tcol * TN + j,
                   make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]), c_vector_ok);
}

/* ---- rungs 6-7: warp tiles -------------------------------------------------------------------------------------- */
/* The 32 lanes of a warp are 8 (along m) × 4 (along n): lane = tm·4 + tn. A thread's TM×TN outputs are TM/4 × TN/4
 * blocks of 4×4, spaced by the warp's width in lanes: rows wm0 + s·32 + tm·4 + 0..3, columns wn0 + s·16 + tn·4 + 0..3.
 * A warp tile is then (8·TM) × (4·TN): 64×32 for 8×8 per thread. For one k, a warp's float4 loads of As cover 8
 * lanes × 16 bytes = 128 contiguous bytes (4 lanes share each), its loads of Bs 64 contiguous bytes: each is one
 * shared-memory wavefront, no bank conflict. */
constexpr int kLanesM = 8, kLanesN = 4;

/* The BK steps of one K-tile: for each k, TM values of As and TN of Bs into registers, then their outer product. */
template <int BK, int LDA, int LDB, int TM, int TN>
__device__ __forceinline__ void warp_tile_products(const float *As, const float *Bs, float (&acc)[TM][TN]) {
#pragma unroll
    for (int k = 0; k < BK; ++k) {
        float a_reg[TM], b_reg[TN];
#pragma unroll
        for (int s = 0; s < TM / 4; ++s) {
            const float4 v = *reinterpret_cast<const float4 *>(&As[k * LDA + s * kLanesM * 4]);
            a_reg[4 * s] = v.x, a_reg[4 * s + 1] = v.y, a_reg[4 * s + 2] = v.z, a_reg[4 * s + 3] = v.w;
        }
#pragma unroll
        for (int s = 0; s < TN / 4; ++s) {
            const float4 v = *reinterpret_cast<const float4 *>(&Bs[k * LDB + s * kLanesN * 4]);
            b_reg[4 * s] = v.x, b_reg[4 * s + 1] = v.y, b_reg[4 * s + 2] = v.z, b_reg[4 * s + 3] = v.w;
        }
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a_reg[i], b_reg[j], acc[i][j]);
    }
}

/* Writes a thread's warp-tiled TM×TN outputs, 4 consecutive columns at a time. */
template <int TM, int TN>
__device__ __forceinline__ void store_warp_tile(const float (&acc)[TM][TN], float *c, int64_t ldc, int64_t M, int64_t N,
                                                int64_t row, int64_t col, bool vector_ok) {
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; j += 4)
            store4(c, ldc, M, N, row + (i / 4) * kLanesM * 4 + i % 4, col + (j / 4) * kLanesN * 4,
                   make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]), vector_ok);
}

/* The tile shapes of rungs 6 and 7: WARPS_M × WARPS_N warps, TM×TN outputs per thread, K-tiles of BK. */
template <int WARPS_M_, int WARPS_N_, int TM_, int TN_, int BK_, int STAGES_, int GROUP_M_>
struct WarpTiles {
    static constexpr int WARPS_M = WARPS_M_, WARPS_N = WARPS_N_, TM = TM_, TN = TN_, BK = BK_;
    static constexpr int STAGES = STAGES_, GROUP_M = GROUP_M_;
    static constexpr int kThreads = WARPS_M * WARPS_N * 32;
    static constexpr int WM = kLanesM * TM, WN = kLanesN * TN; /* a warp's tile */
    static constexpr int BM = WARPS_M * WM, BN = WARPS_N * WN; /* the block's tile */
    static constexpr int LDA = BM + 4, LDB = BN + 4;           /* shared-memory rows, padded by 16 bytes */
    static constexpr size_t kSharedBytes = (size_t)STAGES * BK * (LDA + LDB) * sizeof(float);
    /* 2 blocks per SM (at most 128 registers a thread) while a thread's outputs fit in 64 registers and two
     * blocks' threads fit in an SM's 65,536 registers at 128 each */
    static constexpr int kMinBlocks = TM * TN <= 64 && 2 * kThreads * 128 <= 65536 ? 2 : 1;
    static_assert(TM % 4 == 0 && TN % 4 == 0, "a thread's outputs are blocks of 4×4");
};

using Rung6Tiles = WarpTiles<2, 4, 8, 8, 8, 1, 1>; /* 128×128 block tile, 64×32 warp tiles, 256 threads */
/* Rung 7: 8 warps side by side along n: a 64×256 block tile (less of A to transpose per product than 128×128:
 * README.md, rung 7, has the measurements), K-tiles of 16, 3 stages (61.5 KB of shared memory: above the default
 * 48 KB), blocks in groups of 8 tile rows. */
using Rung7Tiles = WarpTiles<1, 8, 8, 8, 16, 3, 8>;

/* ---- rung 6: warp tiling ----------------------------------------------------------------------------------------- */
/* Rung 5's loads; the arithmetic arranged in warp tiles. Two barriers per K-tile: after the copy (the tiles are
 * complete) and after the products (nobody reads them when the next copy starts). */
template <typename Tiles, Layout LA, Layout LB>
__global__ void __launch_bounds__(Tiles::kThreads, Tiles::kMinBlocks)
    warptile_kernel(TileSource a, TileSource b, float *c, int64_t ldc, bool c_vector_ok, int64_t tiles_n) {
    constexpr int BM = Tiles::BM, BN = Tiles::BN, BK = Tiles::BK, TM = Tiles::TM, TN = Tiles::TN;
    constexpr int LDA = Tiles::LDA, LDB = Tiles::LDB;
    __shared__ __align__(16) float As[BK * LDA];
    __shared__ __align__(16) float Bs[BK * LDB];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int a_offset = warp / Tiles::WARPS_N * Tiles::WM + lane / kLanesN * 4; /* wm0 + tm·4 */
    const int b_offset = warp % Tiles::WARPS_N * Tiles::WN + lane % kLanesN * 4; /* wn0 + tn·4 */
    const int64_t row0 = (int64_t)(blockIdx.x / tiles_n) * BM, col0 = (int64_t)(blockIdx.x % tiles_n) * BN;
    RegisterTileCopy<BM, BK, LDA, Tiles::kThreads, LA> copy_a(a, row0, 0);
    RegisterTileCopy<BN, BK, LDB, Tiles::kThreads, LB> copy_b(b, col0, 0);
    float acc[TM][TN] = {};
    for (int64_t k0 = 0; k0 < a.k_extent; k0 += BK) {
        copy_a.fetch(a);
        copy_b.fetch(b);
        copy_a.store(As);
        copy_b.store(Bs);
        __syncthreads();
        warp_tile_products<BK, LDA, LDB>(As + a_offset, Bs + b_offset, acc);
        __syncthreads();
    }
    store_warp_tile(acc, c, ldc, a.mn_extent, b.mn_extent, row0 + a_offset, col0 + b_offset, c_vector_ok);
}

/* ---- rung 7: cp.async into a ring of shared-memory stages ------------------------------------------------------- */
/* cp.async (sm_80 and later) copies from global to shared memory without a register in between, and the thread
 * goes on while the copy is in flight. PTX: "cp.async.ca/.cg.shared.global [dst], [src], cp-size, src-size":
 * src-size bytes are read and the rest of the cp-size bytes are filled with zeros, so src-size 0 zero-fills a
 * piece that lies outside the matrix and reads nothing. .cg (16 bytes) goes around L1, .ca (4 bytes) through it.
 * Copies issued since the last commit_group form a group; wait_group N waits until at most N groups of this thread
 * are still in flight. (cuda_pipeline.h wraps the same instructions as __pipeline_memcpy_async; the PTX is written
 * out here so that src-size can be a run-time value.) */
__device__ __forceinline__ void cp_async_16(float *dst, const float *src, int src_bytes) {
    const unsigned int address = (unsigned int)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(address), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_4(float *dst, const float *src, int src_bytes) {
    const unsigned int address = (unsigned int)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(address), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/* Starts the copies of a thread's share of every BMN×BK tile into S[k*LD + mn] without registers (rung 7), for an
 * operand contiguous along mn (kContigMN): pieces of 4 consecutive mn, 16-byte copies, the same pieces as
 * RegisterTileCopy's along mn. A piece that hangs over the edge of the matrix is copied element by element (4-byte
 * copies, zero-filled outside): a 16-byte copy with a smaller src-size reads only its first bytes, but it still
 * names 16, and compute-sanitizer's memcheck reports those past the end of the allocation. (An
 * operand contiguous along k must be transposed on its way into shared memory, which cp.async cannot do with 16-byte
 * pieces: one 4-byte copy per element was measured slower than fetching 16 bytes into registers and storing them
 * transposed, so rung 7 keeps RegisterTileCopy for those: README.md, rung 7.) */
template <int BMN, int BK, int LD, int THREADS>
struct AsyncTileCopy {
    static constexpr int kPieces = BMN * BK / 4 / THREADS; /* per thread and tile */
    static constexpr int kPieceRows = THREADS * 4 / BMN;
    static_assert(THREADS % (BMN / 4) == 0 && BMN * BK / 4 % THREADS == 0, "even shares of a tile");
    const float *src;
    int64_t k_first, row_step;
    int shared_offset, inside; /* inside: the piece's elements inside the matrix along mn (0-4) */
    bool block_inside_mn;      /* the whole block tile lies inside the matrix along mn (the same for every thread) */

    __device__ AsyncTileCopy(const TileSource &s, int64_t mn0, int64_t k_begin) {
        const int mn = threadIdx.x % (BMN / 4) * 4, k = threadIdx.x / (BMN / 4);
        const int64_t left = s.mn_extent - (mn0 + mn);
        inside = left <= 0 ? 0 : left >= 4 ? 4 : (int)left;
        block_inside_mn = s.mn_extent - mn0 >= BMN;
        src = s.data + clamp_below(mn0 + mn, s.mn_extent) * s.s_mn + (k_begin + k) * s.s_k;
        k_first = k_begin + k;
        row_step = kPieceRows * s.s_k;
        shared_offset = k * LD + mn;
    }

    __device__ void start(const TileSource &s, float *S) {
        const int64_t k_left = s.k_extent - k_first;
        if (block_inside_mn && s.k_extent - (k_first - threadIdx.x / (BMN / 4)) >= BK) {
            /* Most tiles lie wholly inside the matrix: no test per piece (the same branch for the whole block). */
#pragma unroll
            for (int p = 0; p < kPieces; ++p)
                cp_async_16(S + shared_offset + p * kPieceRows * LD, src + p * row_step, 16);
            src += BK * s.s_k;
            k_first += BK;
            return;
        }
#pragma unroll
        for (int p = 0; p < kPieces; ++p) {
            const bool k_inside = p * kPieceRows < k_left;
            float *d = S + shared_offset + p * kPieceRows * LD;
            const float *q = src + p * row_step;
            if (k_inside && inside == 4) {
                cp_async_16(d, q, 16);
            } else { /* the edge: a 16-byte copy would name bytes past the matrix, so one 4-byte copy per element */
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    const bool in = k_inside && j < inside;
                    cp_async_4(d + j, in ? q + j : s.data, in ? 4 : 0);
                }
            }
        }
        src += BK * s.s_k;
        k_first += BK;
    }
};

/* Rung 7's copier for a layout: cp.async for kContigMN, registers otherwise. */
template <int BMN, int BK, int LD, int THREADS, Layout L>
using PipelinedCopy = typename std::conditional<L == Layout::kContigMN, AsyncTileCopy<BMN, BK, LD, THREADS>,
                                                RegisterTileCopy<BMN, BK, LD, THREADS, L>>::type;

/* The ring: STAGES buffers of (A tile, B tile). Before the loop, tiles 0..STAGES-2 are requested. At step kt:
 *   wait until tile kt has landed (this thread's copies: wait_group STAGES-2; everyone's: the barrier);
 *   request tile kt+STAGES-1 into the buffer that tile kt-1 used (the barrier also says nobody still reads it):
 *     cp.async copies start now; register copies fetch now, during the arithmetic, and store after it;
 *   compute on tile kt.
 * One group is committed per step even when there is no tile left to request, so that "STAGES-2 groups in flight"
 * always means "tile kt is done".
 * Split K (rung 8): block b computes tile b mod tiles over K-tiles [split·k_tiles_per_split, ...) with
 * split = b / tiles, and writes its partial sums to c + split·split_stride. With one split that is C itself. */
template <typename Tiles, Layout LA, Layout LB>
__global__ void __launch_bounds__(Tiles::kThreads, Tiles::kMinBlocks)
    pipelined_kernel(TileSource a, TileSource b, float *c, int64_t ldc, bool c_vector_ok, int64_t tiles_m,
                     int64_t tiles_n, int k_tiles_per_split, int64_t split_stride) {
    constexpr int BM = Tiles::BM, BN = Tiles::BN, BK = Tiles::BK, TM = Tiles::TM, TN = Tiles::TN;
    constexpr int LDA = Tiles::LDA, LDB = Tiles::LDB, STAGES = Tiles::STAGES;
    extern __shared__ float4 shared_raw[]; /* float4: 16-byte aligned */
    float *As = reinterpret_cast<float *>(shared_raw);
    float *Bs = As + STAGES * BK * LDA;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int a_offset = warp / Tiles::WARPS_N * Tiles::WM + lane / kLanesN * 4; /* wm0 + tm·4 */
    const int b_offset = warp % Tiles::WARPS_N * Tiles::WN + lane % kLanesN * 4; /* wn0 + tn·4 */
    const int64_t tiles = tiles_m * tiles_n, split = blockIdx.x / tiles;
    int64_t tile_m, tile_n;
    tile_of_block(blockIdx.x % tiles, tiles_m, tiles_n, Tiles::GROUP_M, &tile_m, &tile_n);
    const int64_t row0 = tile_m * BM, col0 = tile_n * BN, k_begin = split * k_tiles_per_split * BK;
    const int64_t k_tiles_left = ceil_div(a.k_extent - k_begin, BK);
    const int k_tiles = (int)(k_tiles_left < k_tiles_per_split ? k_tiles_left : k_tiles_per_split);
    PipelinedCopy<BM, BK, LDA, Tiles::kThreads, LA> copy_a(a, row0, k_begin);
    PipelinedCopy<BN, BK, LDB, Tiles::kThreads, LB> copy_b(b, col0, k_begin);
    constexpr bool kAsyncA = LA == Layout::kContigMN, kAsyncB = LB == Layout::kContigMN;
    float acc[TM][TN] = {};

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < k_tiles) {
            if constexpr (kAsyncA)
                copy_a.start(a, As + s * BK * LDA);
            else
                copy_a.fetch(a), copy_a.store(As + s * BK * LDA);
            if constexpr (kAsyncB)
                copy_b.start(b, Bs + s * BK * LDB);
            else
                copy_b.fetch(b), copy_b.store(Bs + s * BK * LDB);
        }
        cp_async_commit();
    }
    for (int kt = 0; kt < k_tiles; ++kt) {
        cp_async_wait<STAGES - 2>();
        __syncthreads();
        const bool more = kt + STAGES - 1 < k_tiles;
        const int next_stage = (kt + STAGES - 1) % STAGES;
        if (more) {
            if constexpr (kAsyncA)
                copy_a.start(a, As + next_stage * BK * LDA);
            else
                copy_a.fetch(a);
            if constexpr (kAsyncB)
                copy_b.start(b, Bs + next_stage * BK * LDB);
            else
                copy_b.fetch(b);
        }
        cp_async_commit();
        const int stage = kt % STAGES;
        warp_tile_products<BK, LDA, LDB>(As + stage * BK * LDA + a_offset, Bs + stage * BK * LDB + b_offset, acc);
        if (more) { /* the fetched registers go to the free buffer, now that the arithmetic used them as cover */
            if constexpr (!kAsyncA) copy_a.store(As + next_stage * BK * LDA);
            if constexpr (!kAsyncB) copy_b.store(Bs + next_stage * BK * LDB);
        }
    }
    cp_async_wait<0>(); /* no copy may still be writing shared memory when the block exits */
    store_warp_tile(acc, c + split * split_stride, ldc, a.mn_extent, b.mn_extent, row0 + a_offset, col0 + b_offset,
                    c_vector_ok);
}

/* Rung 8's second step: C = the sum of the splits' partial results, added in split order (the same bits on every
 * run). One thread per element of C, consecutive threads on consecutive columns. */
__global__ void sum_splits_kernel(const float *partial, int splits, int64_t M, int64_t N, float *c, int64_t ldc) {
    const int64_t count = M * N;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += (int64_t)gridDim.x * blockDim.x) {
        float sum = 0.0f;
        for (int s = 0; s < splits; ++s) sum += partial[s * count + i];
        c[i / N * ldc + i % N] = sum;
    }
}

/* ---- the FMA rate ------------------------------------------------------------------------------------------------ */
/* 8 independent chains of FMAs per thread (a chain waits ~4 cycles for its previous FMA; 8 chains and many warps
 * keep the FMA units busy). v ← v·0.9999 + 0.0001 converges to 1: no overflow, and the compiler cannot skip it. */
constexpr int kFmaChains = 8;

__global__ void fma_chains_kernel(const float *x, float *y, int64_t n, int iterations) {
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v[kFmaChains];
#pragma unroll
    for (int j = 0; j < kFmaChains; ++j) v[j] = x[i] + (float)j;
#pragma unroll 4
    for (int it = 0; it < iterations; ++it)
#pragma unroll
        for (int j = 0; j < kFmaChains; ++j) v[j] = __fmaf_rn(v[j], 0.9999f, 0.0001f);
    float sum = 0.0f;
#pragma unroll
    for (int j = 0; j < kFmaChains; ++j) sum += v[j];
    y[i] = sum;
}

/* ---- launchers ------------------------------------------------------------------------------------------------- */

/* The problem as the launchers receive it. */
struct Problem {
    int64_t M, N, K;
    matmul_operand a, b;
    void *c;
    int64_t ldc;
};

template <typename T>
MatrixView<T> view_a(const Problem &p) {
    return {static_cast<const T *>(p.a.data), p.M, p.K, p.a.row_stride, p.a.col_stride};
}
template <typename T>
MatrixView<T> view_b(const Problem &p) {
    return {static_cast<const T *>(p.b.data), p.K, p.N, p.b.row_stride, p.b.col_stride};
}

int64_t magnitude(int64_t x) {
    return x < 0 ? -x : x;
}

/* A is M×K with mn = row; B is K×N seen as N×K with mn = column. */
TileSource source_a(const Problem &p) {
    TileSource s{static_cast<const float *>(p.a.data), p.M, p.K, p.a.row_stride, p.a.col_stride, false};
    s.k_fastest = magnitude(s.s_k) <= magnitude(s.s_mn);
    return s;
}
TileSource source_b(const Problem &p) {
    TileSource s{static_cast<const float *>(p.b.data), p.N, p.K, p.b.col_stride, p.b.row_stride, false};
    s.k_fastest = magnitude(s.s_k) <= magnitude(s.s_mn);
    return s;
}

bool c_allows_vectors(const Problem &p) {
    return course::is_pack_aligned(p.c) && p.ldc % 4 == 0;
}

/* The number of blocks for `tiles` tiles, if the device's grid allows that many in x. */
cudaError_t grid_blocks(int64_t tiles, unsigned int *blocks) {
    int device = 0, most = 0;
    CUDA_RETURN_IF_ERROR(cudaGetDevice(&device));
    CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&most, cudaDevAttrMaxGridDimX, device));
    if (tiles < 1 || tiles > most) return cudaErrorInvalidConfiguration;
    *blocks = (unsigned int)tiles;
    return cudaSuccess;
}

/* Checks a tiled kernel's block against the current device: its threads, its dynamic shared memory (above the
 * default per-block limit, 48 KB, a kernel must ask for more with cudaFuncSetAttribute, up to the opt-in limit:
 * 227 KB on an H100), and that the occupancy API finds room for at least one block on an SM. */
template <typename Kernel>
cudaError_t prepare_kernel(Kernel kernel, int threads, size_t dynamic_shared, int64_t *blocks_per_wave = nullptr) {
    int device = 0, most_threads = 0, default_shared = 0, optin_shared = 0;
    CUDA_RETURN_IF_ERROR(cudaGetDevice(&device));
    CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&most_threads, cudaDevAttrMaxThreadsPerBlock, device));
    CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&default_shared, cudaDevAttrMaxSharedMemoryPerBlock, device));
    CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&optin_shared, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    if (threads > most_threads || dynamic_shared > (size_t)optin_shared) return cudaErrorInvalidConfiguration;
    if (dynamic_shared > (size_t)default_shared) {
        CUDA_RETURN_IF_ERROR(
            cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dynamic_shared));
    }
    int64_t per_wave = 0; /* blocks of this kernel the GPU holds at once: SMs × blocks per SM */
    CUDA_RETURN_IF_ERROR(course::blocks_per_wave(kernel, threads, dynamic_shared, &per_wave)); /* none fits: error */
    if (blocks_per_wave != nullptr) *blocks_per_wave = per_wave;
    return cudaSuccess;
}

/* Rungs 0-1: the block size that the occupancy API suggests for the kernel, as (32, that / 32) threads. */
template <typename T>
cudaError_t launch_naive(const Problem &p, bool coalesced, cudaStream_t stream) {
    const auto kernel = coalesced ? coalesced_kernel<T> : naive_rows_kernel<T>;
    int min_grid = 0, block = 0;
    CUDA_RETURN_IF_ERROR(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, kernel, 0, 0));
    if (block < 32) return cudaErrorInvalidConfiguration;
    const dim3 threads(32, block / 32);
    const int64_t tile_rows = coalesced ? threads.y : 32, tile_cols = coalesced ? 32 : threads.y;
    const int64_t tiles_n = ceil_div(p.N, tile_cols);
    unsigned int blocks = 0;
    CUDA_RETURN_IF_ERROR(grid_blocks(ceil_div(p.M, tile_rows) * tiles_n, &blocks));
    kernel<<<blocks, threads, 0, stream>>>(view_a<T>(p), view_b<T>(p), static_cast<T *>(p.c), p.ldc, tiles_n);
    return cudaGetLastError();
}

/* Rungs 2-4: a kernel whose block tile is BM×BN and whose block has `threads` threads. */
template <typename T, typename Kernel>
cudaError_t launch_tiled(Kernel kernel, const Problem &p, int BM, int BN, int threads, cudaStream_t stream) {
    CUDA_RETURN_IF_ERROR(prepare_kernel(kernel, threads, 0));
    const int64_t tiles_n = ceil_div(p.N, BN);
    unsigned int blocks = 0;
    CUDA_RETURN_IF_ERROR(grid_blocks(ceil_div(p.M, BM) * tiles_n, &blocks));
    kernel<<<blocks, threads, 0, stream>>>(view_a<T>(p), view_b<T>(p), static_cast<T *>(p.c), p.ldc, tiles_n);
    return cudaGetLastError();
}

constexpr int kSharedTile = MATMUL_SHARED_TILE;

template <typename T>
cudaError_t launch_generic_rung(int rung, const Problem &p, cudaStream_t stream) {
    switch (rung) {
        case MATMUL_RUNG_NAIVE:
            return launch_naive<T>(p, false, stream);
        case MATMUL_RUNG_COALESCED:
            return launch_naive<T>(p, true, stream);
        case MATMUL_RUNG_SHARED_TILES:
            return launch_tiled<T>(shared_tiles_kernel<T, kSharedTile>, p, kSharedTile, kSharedTile,
                                   kSharedTile * kSharedTile, stream);
        case MATMUL_RUNG_BLOCKTILE_1D:
            return launch_tiled<T>(blocktile_1d_kernel<T, 64, 64, 8, 8>, p, 64, 64, 64 * 64 / 8, stream);
        case MATMUL_RUNG_BLOCKTILE_2D:
            return launch_tiled<T>(blocktile_2d_kernel<T, 128, 128, 8, 8, 8>, p, 128, 128, 256, stream);
        default:
            return cudaErrorInvalidValue;
    }
}

/* Rungs 5-8, one struct each (7 and 8 share one): launch<LA, LB> starts the kernel for the two operands' layouts. */
struct VectorizedRung {
    template <Layout LA, Layout LB>
    static cudaError_t launch(const Problem &p, const TileSource &a, const TileSource &b, void *, size_t,
                              cudaStream_t stream) {
        const auto kernel = vectorized_kernel<LA, LB>;
        CUDA_RETURN_IF_ERROR(prepare_kernel(kernel, 256, 0));
        const int64_t tiles_n = ceil_div(p.N, 128);
        unsigned int blocks = 0;
        CUDA_RETURN_IF_ERROR(grid_blocks(ceil_div(p.M, 128) * tiles_n, &blocks));
        kernel<<<blocks, 256, 0, stream>>>(a, b, static_cast<float *>(p.c), p.ldc, c_allows_vectors(p), tiles_n);
        return cudaGetLastError();
    }
};

template <typename Tiles>
struct WarptileRung {
    template <Layout LA, Layout LB>
    static cudaError_t launch(const Problem &p, const TileSource &a, const TileSource &b, void *, size_t,
                              cudaStream_t stream) {
        const auto kernel = warptile_kernel<Tiles, LA, LB>;
        CUDA_RETURN_IF_ERROR(prepare_kernel(kernel, Tiles::kThreads, 0));
        const int64_t tiles_n = ceil_div(p.N, Tiles::BN);
        unsigned int blocks = 0;
        CUDA_RETURN_IF_ERROR(grid_blocks(ceil_div(p.M, Tiles::BM) * tiles_n, &blocks));
        kernel<<<blocks, Tiles::kThreads, 0, stream>>>(a, b, static_cast<float *>(p.c), p.ldc, c_allows_vectors(p),
                                                       tiles_n);
        return cudaGetLastError();
    }
};

/* Rung 8 splits K when the output has fewer tiles than the GPU holds blocks at once: each split needs at least
 * this many K-tiles, so that it still amortises its start and its share of the final sum. */
constexpr int kMinKTilesPerSplit = 4;

/* How many splits of K rung 8 uses for p (1: none), and how many K-tiles each split covers. Planned with one layout
 * variant of the kernel: they all have the same tiles, registers and shared memory, so the same occupancy. */
template <typename Tiles>
cudaError_t plan_splits(const Problem &p, bool split_k, int *splits, int *k_tiles_per_split) {
    const int64_t tiles = ceil_div(p.M, Tiles::BM) * ceil_div(p.N, Tiles::BN);
    const int64_t k_tiles = ceil_div(p.K, Tiles::BK);
    int64_t count = 1;
    if (split_k && k_tiles >= 2 * kMinKTilesPerSplit) {
        /* prepare_kernel first: the occupancy question is about a block with kSharedBytes (61.5 KB) of dynamic
         * shared memory, which this kernel may only have once cudaFuncSetAttribute raised its 48 KB default. */
        int64_t wave = 0;
        CUDA_RETURN_IF_ERROR(prepare_kernel(pipelined_kernel<Tiles, Layout::kContigK, Layout::kContigMN>,
                                            Tiles::kThreads, Tiles::kSharedBytes, &wave));
        if (tiles < wave) {
            count = ceil_div(wave, tiles);
            if (count > k_tiles / kMinKTilesPerSplit) count = k_tiles / kMinKTilesPerSplit;
        }
    }
    const int64_t per_split = ceil_div(k_tiles, count);
    if (per_split > INT_MAX) return cudaErrorInvalidValue;
    *k_tiles_per_split = (int)per_split;
    *splits = per_split > 0 ? (int)ceil_div(k_tiles, per_split) : 1; /* no split left empty */
    return cudaSuccess;
}

template <typename Tiles>
cudaError_t split_workspace_bytes(const Problem &p, bool split_k, size_t *bytes) {
    int splits = 1, per_split = 0;
    CUDA_RETURN_IF_ERROR(plan_splits<Tiles>(p, split_k, &splits, &per_split));
    *bytes = splits > 1 ? (size_t)splits * (size_t)p.M * (size_t)p.N * sizeof(float) : 0;
    return cudaSuccess;
}

/* Rungs 7 and 8 (split_k). With splits, the kernel writes each split's partial sums to the workspace, then
 * sum_splits_kernel adds them into C. */
template <typename Tiles, bool kSplitK>
struct PipelinedRung {
    template <Layout LA, Layout LB>
    static cudaError_t launch(const Problem &p, const TileSource &a, const TileSource &b, void *workspace,
                              size_t workspace_bytes, cudaStream_t stream) {
        const auto kernel = pipelined_kernel<Tiles, LA, LB>;
        CUDA_RETURN_IF_ERROR(prepare_kernel(kernel, Tiles::kThreads, Tiles::kSharedBytes));
        int splits = 1, per_split = 0;
        CUDA_RETURN_IF_ERROR(plan_splits<Tiles>(p, kSplitK, &splits, &per_split));
        const int64_t tiles_m = ceil_div(p.M, Tiles::BM), tiles_n = ceil_div(p.N, Tiles::BN);
        unsigned int blocks = 0;
        CUDA_RETURN_IF_ERROR(grid_blocks(tiles_m * tiles_n * splits, &blocks));
        if (splits == 1) {
            kernel<<<blocks, Tiles::kThreads, Tiles::kSharedBytes, stream>>>(
                a, b, static_cast<float *>(p.c), p.ldc, c_allows_vectors(p), tiles_m, tiles_n, per_split, 0);
            return cudaGetLastError();
        }
        const size_t needed = (size_t)splits * (size_t)p.M * (size_t)p.N * sizeof(float);
        if (workspace == nullptr || workspace_bytes < needed || !course::is_pack_aligned(workspace))
            return cudaErrorInvalidValue;
        float *partial = static_cast<float *>(workspace);
        kernel<<<blocks, Tiles::kThreads, Tiles::kSharedBytes, stream>>>(a, b, partial, p.N, p.N % 4 == 0, tiles_m,
                                                                         tiles_n, per_split, p.M * p.N);
        CUDA_RETURN_IF_ERROR(cudaGetLastError());
        constexpr int kSumThreads = 256;
        int64_t sum_blocks = 0;
        CUDA_RETURN_IF_ERROR(course::grid_size(sum_splits_kernel, kSumThreads, 0, p.M * p.N, 4, &sum_blocks));
        sum_splits_kernel<<<(unsigned int)sum_blocks, kSumThreads, 0, stream>>>(partial, splits, p.M, p.N,
                                                                                static_cast<float *>(p.c), p.ldc);
        return cudaGetLastError();
    }
};

/* Picks the kernel variant for the two operands' layouts: 16-byte loads along K or MN for each, or, when either
 * operand allows neither, single-element loads for both (one variant instead of five more). */
template <typename Rung>
cudaError_t launch_by_layout(const Problem &p, void *workspace, size_t workspace_bytes, cudaStream_t stream) {
    const TileSource a = source_a(p), b = source_b(p);
    const Layout la = choose_layout(a), lb = choose_layout(b);
    constexpr Layout K = Layout::kContigK, MN = Layout::kContigMN, S = Layout::kScalar;
    if (la == S || lb == S) return Rung::template launch<S, S>(p, a, b, workspace, workspace_bytes, stream);
    if (la == K)
        return lb == MN ? Rung::template launch<K, MN>(p, a, b, workspace, workspace_bytes, stream)
                        : Rung::template launch<K, K>(p, a, b, workspace, workspace_bytes, stream);
    return lb == MN ? Rung::template launch<MN, MN>(p, a, b, workspace, workspace_bytes, stream)
                    : Rung::template launch<MN, K>(p, a, b, workspace, workspace_bytes, stream);
}

/* The fp32 ladder. */
cudaError_t launch_fp32(int rung, const Problem &p, void *workspace, size_t workspace_bytes, cudaStream_t stream) {
    switch (rung) {
        case MATMUL_RUNG_NAIVE:
        case MATMUL_RUNG_COALESCED:
        case MATMUL_RUNG_SHARED_TILES:
        case MATMUL_RUNG_BLOCKTILE_1D:
        case MATMUL_RUNG_BLOCKTILE_2D:
            return launch_generic_rung<float>(rung, p, stream);
        case MATMUL_RUNG_VECTORIZED:
            return launch_by_layout<VectorizedRung>(p, workspace, workspace_bytes, stream);
        case MATMUL_RUNG_WARPTILE:
            return launch_by_layout<WarptileRung<Rung6Tiles>>(p, workspace, workspace_bytes, stream);
        case MATMUL_RUNG_PIPELINED:
            return launch_by_layout<PipelinedRung<Rung7Tiles, false>>(p, workspace, workspace_bytes, stream);
        case MATMUL_RUNG_SPLIT_K:
            return launch_by_layout<PipelinedRung<Rung7Tiles, true>>(p, workspace, workspace_bytes, stream);
        default:
            return cudaErrorInvalidValue;
    }
}

bool valid_problem(int rung, course_dtype dtype, int64_t M, int64_t N, int64_t K, int64_t ldc) {
    return matmul_rung_supported(rung, dtype) && M >= 0 && N >= 0 && K >= 0 && !(M > 1 && ldc < N);
}

}  // namespace

extern "C" cudaError_t matmul_workspace_bytes(int rung, course_dtype dtype, int64_t M, int64_t N, int64_t K,
                                              size_t *bytes) {
    *bytes = 0;
    if (!valid_problem(rung, dtype, M, N, K, N)) return cudaErrorInvalidValue;
    if (rung == MATMUL_RUNG_BEST) rung = matmul_best_rung(dtype);
    if (dtype != COURSE_FLOAT32 || rung != MATMUL_RUNG_SPLIT_K || M == 0 || N == 0) return cudaSuccess;
    const Problem p{M, N, K, {nullptr, 0, 0}, {nullptr, 0, 0}, nullptr, N};
    return split_workspace_bytes<Rung7Tiles>(p, true, bytes);
}

extern "C" cudaError_t matmul_cuda(int rung, course_dtype dtype, int64_t M, int64_t N, int64_t K, matmul_operand a,
                                   matmul_operand b, void *c, int64_t ldc, void *workspace, size_t workspace_bytes,
                                   cudaStream_t stream) {
    if (!valid_problem(rung, dtype, M, N, K, ldc)) return cudaErrorInvalidValue; /* rows of C must not overlap */
    if (rung == MATMUL_RUNG_BEST) rung = matmul_best_rung(dtype);
    if (M == 0 || N == 0) return cudaSuccess; /* nothing to write */
    const Problem p{M, N, K, a, b, c, ldc};
    switch (dtype) {
        case COURSE_FLOAT32:
            return launch_fp32(rung, p, workspace, workspace_bytes, stream);
        case COURSE_FLOAT64:
            return launch_generic_rung<double>(rung, p, stream);
        default: /* float16, bfloat16: part 2, the tensor-core rungs 9-11 (matmul_tensor.cu) */
            return matmul_tensor_cuda(rung, dtype, M, N, K, a, b, c, ldc, stream);
    }
}

extern "C" cudaError_t matmul_fma_chains_cuda(const float *x, float *y, int64_t n, int iterations,
                                              cudaStream_t stream) {
    if (n < 0 || iterations < 0) return cudaErrorInvalidValue;
    if (n == 0) return cudaSuccess;
    int min_grid = 0, block = 0;
    CUDA_RETURN_IF_ERROR(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, fma_chains_kernel, 0, 0));
    unsigned int blocks = 0;
    CUDA_RETURN_IF_ERROR(grid_blocks(ceil_div(n, block), &blocks));
    fma_chains_kernel<<<blocks, block, 0, stream>>>(x, y, n, iterations);
    return cudaGetLastError();
}
