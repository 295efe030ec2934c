/*
 * rowwise_kernels.cuh — what every kernel of this chapter shares: how rows map to threads, the statistics each op
 * reduces and their merges, the reductions over a warp, a block, a cluster or the grid, and the host's plan of a
 * launch. softmax_kernels.cu and norm_kernels.cu build their kernels from these pieces; rowwise_launch.cu holds the
 * C launchers.
 *
 * How the work is split (README, "Rows, warps and blocks"):
 *   - A row, or a segment of a row, belongs to a GROUP of G threads. G is a power of two up to 32 for short rows
 *     (a warp holds 32 / G rows) or a multiple of 32 up to a whole block (a block holds blockDim / G rows).
 *   - Each thread of a group holds PPT 16-byte packs of the row in registers (PPT * 8 bf16 values): the row is read
 *     once, reduced, and written from the registers. When the rows are 16-byte aligned (n * sizeof(T) a multiple of
 *     16) thread t holds packs t, t + G, t + 2G, ... (kPacks). Otherwise (odd n) each row is cut where its first
 *     16-byte boundary lies: a head of fewer than 8 bf16 before it, an aligned body of whole packs held as above, and
 *     a tail of fewer than 8 after it; threads 0, 1, ... hold one head and one tail element each (kBody). Single
 *     elements t, t + G, ... (scalar loads, each still coalesced across the group: kSingles) remain only for what
 *     kBody cannot take (the tensors' addresses do not line up, or groups of fewer than S threads: 8 for bf16).
 *   - A row too long for one block is split into C segments, one block each. Their partial statistics meet through
 *     distributed shared memory in a thread-block cluster (Hopper), or through global memory in a second kernel.
 *   - Blocks walk the rows (a grid-stride loop), so a grid of a few waves covers any number of rows, and each
 *     block's partial sums of dweight and dbias cover all the rows it saw.
 *   - Version 6 (kReread, the forwards): a block per row (a grid of one block a row unless tuned), its threads
 *     walking the row in steps of U packs each (kRereadPacks unless tuned), twice: the statistics, then the output.
 *     The second walk reads the row from L2, which the first asked to keep it (reread_walk below). Or a row over a
 *     cluster of blocks, each walking its segment twice, their statistics meeting in each block's mailbox.
 */
#pragma once

#include <cooperative_groups.h>
#include <mutex>
#include <type_traits>
#include <vector>
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

#include "course_accumulate.cuh"
#include "course_check.h"
#include "course_launch.cuh"
#define ROWWISE_WITH_CUDA_API
#include "rowwise.h"
#include "rowwise_device.h" /* RW_LOG2E */

namespace rowwise {

namespace cg = cooperative_groups;
using course::acc_t;
using course::from_acc;
using course::Pack;
using course::to_acc;

constexpr int kWarp = 32;
constexpr int kMaxThreads = 512;          // a block: up to 128 registers per thread
constexpr int kMaxBackwardThreads = 512;  // a backward block: its threads hold two rows and the dweight sums
constexpr int kMaxWarps = 1024 / kWarp;
constexpr int kFixedBlock = 256;  // the block of the forwards built for a row length (pick_fixed)
// Blocks of kMaxThreads an SM must hold at once: the register cap ptxas gets (__launch_bounds__). 2 caps a thread
// at 64 registers (1024 threads an SM), 1 at 128 (512). Left free, ptxas takes up to 128 even where 64 suffice, so
// the kernels that fit 64 with no spill (ptxas -v, NOTES.md) ask for 2: `fits` says which.
constexpr int min_blocks(bool fits) {
    return fits ? 2 : 1;
}
// The forward kernels that fit 64 registers are built for blocks of up to 1024 threads (__launch_bounds__(1024) caps
// them at 64 registers, as (512, 2) did), so that a whole row of up to 1024 threads x 4 packs (bf16 rows of 32768)
// can stay in one block's registers and be read once, instead of going over a cluster. The others: blocks of up to
// kMaxThreads. Whether a row takes such a block is the op's call (shape_plan's whole_limit): on the H100 at 4096 x
// 32768 bf16 it won for RMSNorm (91 -> 96 % of the copy) and lost for the softmax (93 -> 76) and LayerNorm (81 -> 74),
// whose longer work between the load and the store a lone block an SM cannot hide (NOTES.md, "Eleventh pass").
constexpr int kMaxWholeThreads = 1024;
constexpr int whole_threads(bool rms_norm) {
    return rms_norm ? kMaxWholeThreads : kMaxThreads;
}
constexpr int forward_bound(bool fits) {
    return fits ? kMaxWholeThreads : kMaxThreads;
}
constexpr int kClusterMin = 8;     // blocks a row in a cluster, at least (shape_plan)
constexpr int kMaxCluster = 16;    // the largest cluster an H100 launches (8 is the portable limit)
constexpr int kForwardWaves = 4;   // forward grids over several blocks a row: at most this many waves, walking rows
constexpr int kBackwardWaves = 1;  // backward grids: one wave, so few partial sums of dweight

enum Mode : int {
    kWhole = 0,       // a group holds a whole row
    kCluster = 1,     // C blocks of a cluster hold a row; statistics meet in distributed shared memory
    kSplitStats = 2,  // C blocks hold a row; each writes its segment's statistics to global memory
    kSplitApply = 3,  // ... and a second launch reads them all, merges, and writes its segment
    kReread = 4,      // a block walks a row twice, a few packs a thread at a time (version 6, forward)
};

// Where a thread's elements lie in a row (Slice below).
enum RowLayout : int {
    kSingles = 0,  // single elements t, t + G, ...: any row (the fallback)
    kPacks = 1,    // 16-byte packs t, t + G, ...: rows 16-byte aligned (n * sizeof(T) a multiple of 16)
    kBody = 2,     // a scalar head, aligned packs t, t + G, ... from the row's first 16-byte boundary, a scalar tail
};

// Whether shape_plan may give a whole-row forward a block over kMaxThreads: the plans whose kernels (softmax's and
// the norms' forwards, WHOLE) fit 64 registers, in both: 16-byte packs or an aligned body of 16- or 32-bit elements,
// at most 64 bytes a thread.
constexpr bool whole_forward_fits_64(size_t element, int ppt, int layout) {
    return ppt * 16 <= 64 && (layout == kPacks || (layout == kBody && element != 8));
}

// How rows map to threads, as planned on the host (plan() below) and read by every block.
struct Layout {
    int group;        // G: threads per row (segment)
    int segments;     // C: blocks per row
    int64_t seg_len;  // elements per segment, a multiple of the pack size (the last segment may be shorter)
    int mode;         // Mode
    int packed;       // RowLayout
    int flags;        // experimental switches, ROWWISE_FLAG_* (rowwise.h), for the kernels built for them (EXP)
    int64_t table;    // kBody: the weight comes as a table of S shifted copies, `table` elements apart (0: not)
};

// One thread's place: which row group, which segment, which columns.
struct Ctx {
    int G, t, g, R;       // group size, my index in it, my group in the block, groups per block
    int C, rank;          // segments per row, my segment
    int64_t slot, slots;  // my block's (cluster's) place among the grid's row walkers, and their number
    int64_t n, seg_begin, seg_end;
    int mode, packed, flags;
    int head, body;  // kBody only (Slice::locate): head elements before the first 16-byte boundary, body packs
    int64_t table;   // kBody: Layout::table
};

// WHOLE: a kernel built for kWhole only (one segment a row, starting at column 0): constants the compiler folds.
// EXP: a kernel built for the experimental switches (Layout::flags); elsewhere they are a constant 0.
template <bool WHOLE, bool EXP = false>
__device__ inline Ctx make_ctx(const Layout &L, int64_t n) {
    Ctx c;
    c.G = L.group;
    c.t = (int)threadIdx.x % L.group;
    c.g = (int)threadIdx.x / L.group;
    c.R = (int)blockDim.x / L.group;
    c.C = WHOLE ? 1 : L.segments;
    c.rank = WHOLE ? 0 : (int)(blockIdx.x % (unsigned)L.segments);
    c.slot = WHOLE ? blockIdx.x : blockIdx.x / (unsigned)L.segments;
    c.slots = WHOLE ? gridDim.x : gridDim.x / (unsigned)L.segments;
    c.n = n;
    c.seg_begin = (int64_t)c.rank * L.seg_len;
    c.seg_end = WHOLE ? n : (c.seg_begin + L.seg_len < n ? c.seg_begin + L.seg_len : n);
    c.mode = WHOLE ? (int)kWhole : L.mode;
    c.packed = L.packed;
    c.flags = WHOLE || !EXP ? 0 : L.flags;
    c.head = 0;
    c.body = 0;
    c.table = L.table;
    return c;
}

// GROUP > 0: a kernel built for rows that fill a group of GROUP threads exactly (whole rows of 16-byte packs; the host
// picks it only then, Plan::fixed). The group size becomes a constant here, and the row length one in the kernel,
// which passes its constant n to make_ctx. So the compiler folds the packs' bounds checks, the butterfly's widths and
// the rows' addresses, as torch.compile's kernels have them (its row length is a constant of each kernel it
// generates; NOTES.md, "Twenty-third pass").
template <int GROUP>
__device__ inline Ctx fixed_ctx(Ctx c) {
    if constexpr (GROUP > 0) {
        c.G = GROUP;
        c.t = (int)threadIdx.x % GROUP;
        c.g = (int)threadIdx.x / GROUP;
        c.R = (int)blockDim.x / GROUP;
    }
    return c;
}

// ---- what one thread holds of a row ------------------------------------------------------------------------------
// The bits of a pack: a thread keeps its packs as 32-bit words (4 a pack, whatever T is) and widens an element to
// acc_t<T> only where a pass uses it. Widening a bf16 is one shift or mask (its bits are a float's upper half), a half
// one conversion, so doing it again in each pass is cheap; keeping 32 widened floats live across the row's reduction
// is not (32 registers more, and the H100 ran 4-pack bf16 forwards at 128 registers before this: NOTES.md).
//   get(w, j)        element j of a pack, widened
//   put(w, v)        the S values v, narrowed (round to nearest even, as from_acc) into a pack's words
//   set_raw(w, j, e) element j of a pack from a loaded T (the single-element layout)
template <typename T>
struct Bits;
template <>
struct Bits<float> {
    __device__ static float get(const uint32_t *w, int j) {
        return __uint_as_float(w[j]);
    }
    __device__ static void put(uint32_t *w, const float *v) {
#pragma unroll
        for (int i = 0; i < 4; ++i) w[i] = __float_as_uint(v[i]);
    }
    __device__ static void set_raw(uint32_t *w, int j, float e) {
        w[j] = __float_as_uint(e);
    }
};
template <>
struct Bits<double> {
    __device__ static double get(const uint32_t *w, int j) {
        return __hiloint2double((int)w[2 * j + 1], (int)w[2 * j]);
    }
    __device__ static void put(uint32_t *w, const double *v) {
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            w[2 * i] = (uint32_t)__double2loint(v[i]);
            w[2 * i + 1] = (uint32_t)__double2hiint(v[i]);
        }
    }
    __device__ static void set_raw(uint32_t *w, int j, double e) {
        w[2 * j] = (uint32_t)__double2loint(e);
        w[2 * j + 1] = (uint32_t)__double2hiint(e);
    }
};
// 16-bit types: element j is the low (j even) or high (j odd) half of word j / 2 — little-endian, as in memory.
template <typename H>
struct Bits16 {
    __device__ static uint32_t half_bits(const uint32_t *w, int j) {
        return (j & 1) ? w[j >> 1] >> 16 : w[j >> 1] & 0xffffu;
    }
    __device__ static void set_half(uint32_t *w, int j, uint32_t bits) {
        w[j >> 1] = (j & 1) ? (w[j >> 1] & 0xffffu) | (bits << 16) : (w[j >> 1] & 0xffff0000u) | bits;
    }
};
template <>
struct Bits<__nv_bfloat16> : Bits16<__nv_bfloat16> {
    __device__ static float get(const uint32_t *w, int j) {  // a bf16 is the upper half of a float
        return __uint_as_float((j & 1) ? w[j >> 1] & 0xffff0000u : w[j >> 1] << 16);
    }
    __device__ static void put(uint32_t *w, const float *v) {
#pragma unroll
        for (int i = 0; i < 4; ++i)
            w[i] = (uint32_t)__bfloat16_as_ushort(__float2bfloat16_rn(v[2 * i])) |
                   (uint32_t)__bfloat16_as_ushort(__float2bfloat16_rn(v[2 * i + 1])) << 16;
    }
    __device__ static void set_raw(uint32_t *w, int j, __nv_bfloat16 e) {
        set_half(w, j, __bfloat16_as_ushort(e));
    }
};
template <>
struct Bits<__half> : Bits16<__half> {
    __device__ static float get(const uint32_t *w, int j) {
        return __half2float(__ushort_as_half((unsigned short)half_bits(w, j)));
    }
    __device__ static void put(uint32_t *w, const float *v) {
#pragma unroll
        for (int i = 0; i < 4; ++i)
            w[i] = (uint32_t)__half_as_ushort(__float2half_rn(v[2 * i])) |
                   (uint32_t)__half_as_ushort(__float2half_rn(v[2 * i + 1])) << 16;
    }
    __device__ static void set_raw(uint32_t *w, int j, __half e) {
        set_half(w, j, __half_as_ushort(e));
    }
};

// PPT packs of T (Pack<T>::size = S elements each, 16 bytes). Element (k, j) is element j of pack k; its column
// depends on the layout (RowLayout, see the file's header), a compile-time choice, so the registers of a thread hold
// just its values. kBody adds one more pack, k = PPT, for the row's edges: element 0 is head element t (column t),
// element 1 tail element t; its other elements are never used (the compiler drops them). K counts the packs.
// Which elements lie inside the segment does not change from row to row (for kBody: the launcher makes every row
// a group walks start at the same place relative to a 16-byte boundary, size_plan), so one count, computed once per
// kernel, says which. kPacks and kSingles: a prefix, the first `count` packs (a pack lies wholly inside, since
// segments are whole packs) or the first `count` elements. kBody: the first count & 0xff body packs, plus bit 8 if
// this thread holds a head element and bit 9 if it holds a tail element.
template <typename T, int PPT, int LAYOUT>
struct Slice {
    static constexpr int S = Pack<T>::size;
    static constexpr int W = course::kPackBytes / 4;  // 32-bit words per pack
    static constexpr int K = LAYOUT == kBody ? PPT + 1 : PPT;
    static constexpr int kLayout = LAYOUT;
    static constexpr bool PACKED = LAYOUT != kSingles;  // body packs are 16-byte packs too
    uint32_t w[K][W];

    // kBody: where this group's rows cross their first 16-byte boundary. `rows` is any of the row tensors (x, y, dy:
    // the launcher checked that their addresses agree modulo 16). The group's first row stands for all of them.
    __device__ static Ctx locate(Ctx c, const T *rows) {
        if constexpr (LAYOUT == kBody) {
            const int64_t first = c.slot * c.R + c.g;  // may lie past the last row: only its address is taken
            const uintptr_t address = reinterpret_cast<uintptr_t>(rows + first * c.n + c.seg_begin);
            const int64_t h = (int64_t)((16 - (address & 15)) & 15) / (int64_t)sizeof(T);
            const int64_t len = c.seg_end - c.seg_begin;
            c.head = (int)(h < len ? h : len);
            c.body = (int)((len - c.head) / S);
        }
        return c;
    }

    // The column of element (k, j), counted from the segment's start.
    __device__ static int offset(const Ctx &c, int k, int j) {
        if constexpr (LAYOUT == kBody) {
            if (k < PPT) return c.head + (k * c.G + c.t) * S + j;
            return j == 0 ? c.t : c.head + c.body * S + c.t;  // head element t, tail element t
        }
        return PACKED ? (k * c.G + c.t) * S + j : (k * S + j) * c.G + c.t;
    }
    __device__ static int64_t column(const Ctx &c, int k, int j) {
        return c.seg_begin + offset(c, k, j);
    }
    // kBody: the inverse of offset(). Which thread t of the group holds column `off` of the segment, and as which
    // element e = k S + j, in a group whose rows have the head and body of c (locate).
    __device__ static void owner(const Ctx &c, int off, int &t, int &e) {
        const int body_end = c.head + c.body * S;
        if (off < c.head) {
            t = off, e = PPT * S;  // head element t: edge element 0
        } else if (off < body_end) {
            const int p = (off - c.head) / S;  // body pack p = k G + t
            t = p % c.G, e = p / c.G * S + (off - c.head) % S;
        } else {
            t = off - body_end, e = PPT * S + 1;  // tail element t: edge element 1
        }
    }
    __device__ static int count(const Ctx &c) {
        const int64_t len = c.seg_end - c.seg_begin;
        int n = 0;
        if constexpr (LAYOUT == kBody) {
#pragma unroll
            for (int k = 0; k < PPT; ++k)
                if (k * c.G + c.t < c.body) n = k + 1;
            const int64_t tail = len - c.head - (int64_t)c.body * S;
            if (c.t < c.head) n |= 1 << 8;
            if (c.t < tail) n |= 1 << 9;
        } else if constexpr (PACKED) {
            // A segment is whole packs, so pack k is inside if its first element is: PPT comparisons, in 32 bits (a
            // segment is at most a block's packs). Comparing all PPT * S elements in 64 bits, as singles do, cost
            // every thread ~130 instructions before its first load (SASS: 920 -> 648 for the bf16 RMSNorm forward
            // of whole rows; with a block per row group that is once per row; NOTES.md, "Seventh pass").
#pragma unroll
            for (int k = 0; k < PPT; ++k)
                if (offset(c, k, 0) < (int)len) n = k + 1;
        } else {
#pragma unroll
            for (int k = 0; k < PPT; ++k)
#pragma unroll
                for (int j = 0; j < S; ++j)
                    if (offset(c, k, j) < len) n = k * S + j + 1;
        }
        return n;
    }
    __device__ static bool valid(int count, int k, int j) {
        if constexpr (LAYOUT == kBody) {
            if (k < PPT) return k < (count & 0xff);
            return j < 2 && ((count >> (8 + j)) & 1);  // the edge pack: head (j = 0), tail (j = 1)
        }
        return PACKED ? k < count : k * S + j < count;
    }
    __device__ static bool any(int count, int k) {  // pack k holds at least one element of the segment
        if constexpr (LAYOUT == kBody) return k < PPT ? k < (count & 0xff) : (count >> 8) != 0;
        return PACKED ? k < count : k * S < count;
    }
    // row: the row's first element. Words outside the segment are zero (no pass reads them). Zero and not "left as
    // they were": a word loaded under a predicate and otherwise kept would be live from one row to the next, and
    // ptxas then holds (or spills) every such word across the row loop.
    // SKIP_L1: 16-byte packs are read past L1 (ld.global.nc.L1::no_allocate; norm_backward says where).
    template <bool SKIP_L1 = false>
    __device__ void load(const T *__restrict__ row, const Ctx &c, int count) {
#pragma unroll
        for (int k = 0; k < K; ++k) load_pack<false, SKIP_L1>(row, c, count, k);
    }
    // Pack k alone. The norms read the weight and bias this way, one pack at a time while writing, through a pointer
    // from in_loop(), where the compiler no longer sees a read-only global array: LDG asks for the read-only global
    // load (__ldg, LDG.E.128.CONSTANT) that it picks by itself for the rows. (__ldg for the rows too cost a cluster
    // softmax 52 bytes of spills at its 64-register cap.)
    template <bool LDG, bool SKIP_L1 = false>
    __device__ void load_pack(const T *__restrict__ row, const Ctx &c, int count, int k) {
        const T *segment = row + c.seg_begin;
        if constexpr (LAYOUT == kBody) {
            // Body packs always take the read-only load (LDG.E.128.CONSTANT, as kPacks' rows get by themselves): the
            // compiler does not pick it here, where the columns depend on the row's address (locate). The scalar
            // edges stay plain loads (read-only ones cost 26 registers more in a 2-pack cluster backward).
            if (k == PPT) {
                load_edges<LDG>(segment, c, count);
                return;
            }
            w[k][0] = w[k][1] = w[k][2] = w[k][3] = 0;
            if (k < (count & 0xff)) put_words(w[k], read16<true>(segment + c.head + (k * c.G + c.t) * S));
        } else if constexpr (PACKED) {
            uint4 q = make_uint4(0, 0, 0, 0);
            if (k < count) {
                if constexpr (LDG)
                    q = __ldg(reinterpret_cast<const uint4 *>(segment + (k * c.G + c.t) * S));
                else if constexpr (SKIP_L1)
                    q = read16_past_l1(segment + (k * c.G + c.t) * S);
                else
                    q = *reinterpret_cast<const uint4 *>(segment + (k * c.G + c.t) * S);
            }
            w[k][0] = q.x, w[k][1] = q.y, w[k][2] = q.z, w[k][3] = q.w;
        } else {
#pragma unroll
            for (int i = 0; i < W; ++i) w[k][i] = 0;
#pragma unroll
            for (int j = 0; j < S; ++j) {
                if (!valid(count, k, j)) continue;
                if constexpr (LDG)
                    Bits<T>::set_raw(w[k], j, __ldg(segment + (k * S + j) * c.G + c.t));
                else
                    Bits<T>::set_raw(w[k], j, segment[(k * S + j) * c.G + c.t]);
            }
        }
    }
    // The same for a parameter vector. kBody: body pack k of this thread covers the vector's columns head + p S ...
    // head + p S + S - 1 (p = k G + t), which straddle the vector's 16-byte packs p and p + 1 whenever head > 0 (the
    // vector starts on a 16-byte boundary, the row does not). Where the launcher made the vector's table (c.table:
    // copy h shifted by h elements, shift_table_kernel), pack p of copy `head` holds them, one aligned read. Otherwise
    // both packs are read (L1 hits: the neighbours read them too) and funnel-shifted by head elements (two loads and
    // 17 instructions a pack, NOTES.md "Eighth pass"); pack p + 1 is read whole only where it lies inside the vector
    // (the sanitizer sees exact allocations), else its head elements one by one.
    template <bool LDG, bool TABLE = false>  // TABLE: built for c.table (the backward's); the forwards are not
    __device__ void load_vector_pack(const T *__restrict__ vec, const Ctx &c, int count, int k) {
        if constexpr (LAYOUT != kBody) {
            load_pack<LDG>(vec, c, count, k);
        } else {
            const T *segment = vec + c.seg_begin;
            if (k == PPT) {
                load_edges<LDG>(segment, c, count);
                return;
            }
            w[k][0] = w[k][1] = w[k][2] = w[k][3] = 0;
            if (k >= (count & 0xff)) return;
            const int p = k * c.G + c.t;
            // Copy `head` of the table (its row 0 is the vector itself: load_edges reads that one).
            if (TABLE && c.table != 0) {
                put_words(w[k], read16<LDG>(segment + c.head * c.table + p * S));
                return;
            }
            uint32_t lo[W], hi[W] = {0, 0, 0, 0};
            put_words(lo, read16<LDG>(segment + p * S));
            if (c.head > 0) {
                if ((int64_t)(p + 2) * S <= c.n - c.seg_begin) {
                    put_words(hi, read16<LDG>(segment + (p + 1) * S));
                } else {
#pragma unroll
                    for (int j = 0; j < S; ++j)
                        if (j < c.head) Bits<T>::set_raw(hi, j, read1<LDG>(segment + (p + 1) * S + j));
                }
            }
            shift_words(w[k], lo, hi, c.head * (int)sizeof(T));
        }
    }
    // Narrows the S values `out` and writes them as pack k (one 16-byte store) or as its elements inside the
    // segment (kSingles, and the edge pack of kBody). The caller checks any(count, k).
    __device__ static void store(T *__restrict__ row, const Ctx &c, int count, int k, const acc_t<T> (&out)[S]) {
        T *segment = row + c.seg_begin;
        if constexpr (LAYOUT == kBody) {
            if (k == PPT) {
                if (valid(count, k, 0)) segment[offset(c, k, 0)] = from_acc<T>(out[0]);
                if (valid(count, k, 1)) segment[offset(c, k, 1)] = from_acc<T>(out[1]);
            } else {
                uint32_t q[W];
                Bits<T>::put(q, out);
                *reinterpret_cast<uint4 *>(segment + offset(c, k, 0)) = make_uint4(q[0], q[1], q[2], q[3]);
            }
        } else if constexpr (PACKED) {
            uint32_t q[W];
            Bits<T>::put(q, out);
            *reinterpret_cast<uint4 *>(segment + (k * c.G + c.t) * S) = make_uint4(q[0], q[1], q[2], q[3]);
        } else {
#pragma unroll
            for (int j = 0; j < S; ++j)
                if (valid(count, k, j)) segment[(k * S + j) * c.G + c.t] = from_acc<T>(out[j]);
        }
    }
    __device__ acc_t<T> get(int k, int j) const {
        return Bits<T>::get(w[k], j);
    }
    // Call after the row's reduction, before the pass that writes: says the words may have changed (an empty asm
    // statement, no instruction), so the compiler widens them again there instead of keeping every value it widened
    // before the reduction live across it.
    __device__ void refresh() {
#pragma unroll
        for (int k = 0; k < K; ++k)
#pragma unroll
            for (int i = 0; i < W; ++i) asm volatile("" : "+r"(w[k][i]));
    }

   private:
    // A read-only 16-byte load that L1 does not keep (load16_hinted's sibling, without an L2 policy).
    __device__ static uint4 read16_past_l1(const T *__restrict__ p) {
        uint4 q;
        asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
            : "=r"(q.x), "=r"(q.y), "=r"(q.z), "=r"(q.w)
            : "l"(p));
        return q;
    }
    template <bool LDG>
    __device__ static uint4 read16(const T *__restrict__ p) {
        if constexpr (LDG)
            return __ldg(reinterpret_cast<const uint4 *>(p));
        else
            return *reinterpret_cast<const uint4 *>(p);
    }
    template <bool LDG>
    __device__ static T read1(const T *__restrict__ p) {
        if constexpr (LDG)
            return __ldg(p);
        else
            return *p;
    }
    __device__ static void put_words(uint32_t *words, uint4 q) {
        words[0] = q.x, words[1] = q.y, words[2] = q.z, words[3] = q.w;
    }
    // kBody's edge pack: head element t and tail element t, each a scalar load where this thread holds one.
    template <bool LDG>
    __device__ void load_edges(const T *segment, const Ctx &c, int count) {
#pragma unroll
        for (int i = 0; i < W; ++i) w[PPT][i] = 0;
#pragma unroll
        for (int j = 0; j < 2; ++j)
            if (valid(count, PPT, j)) Bits<T>::set_raw(w[PPT], j, read1<LDG>(segment + offset(c, PPT, j)));
    }
    // out = the 16 bytes that start `bytes` bytes into lo:hi (little-endian, so a right shift of the 32 bytes). By
    // whole words first (by 2, then by 1: selects, as `bytes` is known only at run time), then by the 16 bits a bf16
    // or half may leave (a funnel shift takes bits from the next word; a shift of 0 returns the first word).
    __device__ static void shift_words(uint32_t *out, const uint32_t *lo, const uint32_t *hi, int bytes) {
        uint32_t v[2 * W];
#pragma unroll
        for (int i = 0; i < W; ++i) v[i] = lo[i], v[W + i] = hi[i];
        const int words = bytes >> 2, bits = (bytes & 3) * 8;
#pragma unroll
        for (int i = 0; i + 2 < 2 * W; ++i) v[i] = (words & 2) ? v[i + 2] : v[i];
#pragma unroll
        for (int i = 0; i + 1 < 2 * W; ++i) v[i] = (words & 1) ? v[i + 1] : v[i];
#pragma unroll
        for (int i = 0; i < W; ++i) out[i] = __funnelshift_r(v[i], v[i + 1], bits);
    }
};

// Every element a thread holds: for (k, j) in RW_EACH(PPT, S) { ... } — unrolled, so k and j are constants and the
// packs stay in registers (a run-time index would move them to local memory).
#define RW_EACH(PPT, S) \
    _Pragma("unroll") for (int k = 0; k < (PPT); ++k) _Pragma("unroll") for (int j = 0; j < (S); ++j)

// A thread's sum over the elements it holds, as N partial sums side by side (pack k adds to sum k % N), added
// pairwise at the end. One running sum over all K S elements is one chain of K S dependent adds, each waiting for
// the one before (4 cycles a step); N sums make N shorter chains that run at once. The compiler does not reorder
// float adds by itself, --use_fast_math or not: the order is the code's.
// Where: backward_chains below.
template <int N, typename A>
struct PerPack {
    A p[N];
    __device__ explicit PerPack(A init) {
#pragma unroll
        for (int i = 0; i < N; ++i) p[i] = init;
    }
    __device__ void add(int k, A x) {
        p[k % N] += x;
    }
    __device__ A sum() const {
        A q[N];
#pragma unroll
        for (int i = 0; i < N; ++i) q[i] = p[i];
#pragma unroll
        for (int w = 1; w < N; w *= 2)
#pragma unroll
            for (int i = 0; i + w < N; i += 2 * w) q[i] += q[i + w];
        return q[0];
    }
};

// Partial sums side by side in the backward's reductions: one a pack (1 or 2) for 16-byte rows over several blocks,
// whose kernels run at 128 registers, few warps a scheduler to hide a chain's wait: on the H100 at 4096 x 32768 they
// gained 5-15 points of the copy (LayerNorm bf16 70 -> 75 %, RMSNorm bf16 74 -> 84, float32 63 -> 76 and 65 -> 70).
// Whole rows, the aligned body and the forwards measured the same or up to 1.3 points slower with them, so they keep
// one sum (NOTES.md, "Seventh pass").
template <typename Sl, bool WHOLE>
__host__ __device__ constexpr int backward_chains() {
    return !WHOLE && Sl::kLayout == kPacks && Sl::K <= 4 ? Sl::K : 1;
}

// The same pointer, but the compiler may not assume so: addresses computed from it inside a loop stay in the loop.
// The norms read the weight and bias once per row; without this, ptxas hoisted their per-pack 64-bit addresses out
// of the row loop (16 registers for 4 packs of each, spilled at a 64-register cap).
template <typename T>
__device__ inline const T *in_loop(const T *p) {
    asm volatile("" : "+l"(p));
    return p;
}

// ---- math in the accumulation type -------------------------------------------------------------------------------
__device__ inline float exp_acc(float x) {
    return exp2f(x * RW_LOG2E);  // ex2.approx under --use_fast_math: the fast exp of the GPU
}
__device__ inline double exp_acc(double x) {
    return exp(x);
}
__device__ inline float rsqrt_acc(float x) {
    return rsqrtf(x);
}
__device__ inline double rsqrt_acc(double x) {
    return 1.0 / sqrt(x);
}

// ---- the statistics each op reduces, with their merges -----------------------------------------------------------
// merge(a, b) is the statistic of the two parts together. The reductions below always put the part of the lower
// lane, warp or block first, so every thread of a row computes the same bits. pick(first, a, b) is a or b, chosen
// field by field (selects in registers: a reference to either part would send both to local memory).

// softmax: the online (max, sum) pair (online_softmax.h explains it for float).
template <typename A>
struct MaxSum {
    A max, sum;
    __device__ static MaxSum empty() {
        return {A(-INFINITY), A(0)};
    }
};
// One exponential a merge, not two: the part that holds the larger max needs none (its factor would be exp(0) = 1).
// An empty smaller part (max -inf) counts 0, not 0 * exp(NaN). (The warp's butterfly merges five times a row, the
// mailbox C - 1 times, in every thread: on the H100 the softmax forward at 4096 x 32768 issued 20 % of its
// instructions there.)
template <typename A>
__device__ inline MaxSum<A> merge(const MaxSum<A> &a, const MaxSum<A> &b) {
    const A m = fmax(a.max, b.max);
    const bool a_larger = a.max == m;
    const A small_max = a_larger ? b.max : a.max, small_sum = a_larger ? b.sum : a.sum;
    const A small = small_max == A(-INFINITY) ? A(0) : small_sum * exp_acc(small_max - m);
    return {m, (a_larger ? a.sum : b.sum) + small};
}
template <typename A>
__device__ inline MaxSum<A> pick(bool first, const MaxSum<A> &a, const MaxSum<A> &b) {
    return {first ? a.max : b.max, first ? a.sum : b.sum};
}
template <typename A>
__device__ inline MaxSum<A> shfl_xor(const MaxSum<A> &s, int mask) {
    return {__shfl_xor_sync(0xffffffffu, s.max, mask), __shfl_xor_sync(0xffffffffu, s.sum, mask)};
}

// LayerNorm: count, mean and M2 = sum of (x - mean)^2 of a part; Chan et al.'s merge of Welford's statistics.
template <typename A>
struct Moments {
    A count, mean, m2;
    __device__ static Moments empty() {
        return {A(0), A(0), A(0)};
    }
};
template <typename A>
__device__ inline Moments<A> merge(const Moments<A> &a, const Moments<A> &b) {
    const A count = a.count + b.count;
    if (count == A(0)) return a;
    const A delta = b.mean - a.mean, share = b.count / count;
    return {count, a.mean + delta * share, a.m2 + b.m2 + delta * delta * a.count * share};
}
template <typename A>
__device__ inline Moments<A> shfl_xor(const Moments<A> &s, int mask) {
    return {__shfl_xor_sync(0xffffffffu, s.count, mask), __shfl_xor_sync(0xffffffffu, s.mean, mask),
            __shfl_xor_sync(0xffffffffu, s.m2, mask)};
}
template <typename A>
__device__ inline Moments<A> pick(bool first, const Moments<A> &a, const Moments<A> &b) {
    return {first ? a.count : b.count, first ? a.mean : b.mean, first ? a.m2 : b.m2};
}

// Everything else: K plain sums.
template <typename A, int K>
struct Sums {
    A v[K];
    __device__ static Sums empty() {
        Sums s;
#pragma unroll
        for (int i = 0; i < K; ++i) s.v[i] = A(0);
        return s;
    }
};
template <typename A, int K>
__device__ inline Sums<A, K> merge(const Sums<A, K> &a, const Sums<A, K> &b) {
    Sums<A, K> r;
#pragma unroll
    for (int i = 0; i < K; ++i) r.v[i] = a.v[i] + b.v[i];
    return r;
}
template <typename A, int K>
__device__ inline Sums<A, K> shfl_xor(const Sums<A, K> &s, int mask) {
    Sums<A, K> r;
#pragma unroll
    for (int i = 0; i < K; ++i) r.v[i] = __shfl_xor_sync(0xffffffffu, s.v[i], mask);
    return r;
}

// Merges that give the same bits in either order (float addition is commutative): the butterfly merges them as they
// come, with nothing to pick.
template <typename S>
struct Commutative : std::false_type {};
template <typename A, int K>
struct Commutative<Sums<A, K>> : std::true_type {};

// ---- reductions --------------------------------------------------------------------------------------------------
// Shared memory of the reductions, double-buffered: row i uses buffer i % 2, so one barrier per row suffices (a
// thread can only overwrite buffer p at row i + 2 after every thread passed row i + 1's barrier, after reading it).
template <typename S>
struct Exchange {
    S warps[2][kMaxWarps];
    S cluster[2];
};

// Butterfly over groups of `width` lanes (a power of two up to 32): lanes i and i ^ mask swap and merge, the lower
// lane's part first (plain sums: either order), so every lane of a group ends with the same bits. Unrolled over the
// five masks a warp can have, with one merge of values picked field by field (pick): a loop over the width known at
// run time kept a counter, a branch and a copy of the merge for each order (38 instructions a step in the softmax),
// and a merge of whichever part a run-time bool named put both parts in local memory (NOTES.md, "Sixth pass").
template <typename S>
__device__ inline S butterfly(S v, int lane, int width) {
#pragma unroll
    for (int mask = kWarp / 2; mask > 0; mask /= 2) {
        if (mask >= width) continue;
        const S other = shfl_xor(v, mask);
        if constexpr (Commutative<S>::value) {
            v = merge(v, other);
        } else {
            const bool upper = (lane & mask) != 0;
            v = merge(pick(upper, other, v), pick(upper, v, other));
        }
    }
    return v;
}

// Every thread of the group gets the group's statistic. Called by all threads of the block (it has a barrier when
// groups are larger than a warp).
template <typename S>
__device__ inline S reduce_group(S v, const Ctx &c, Exchange<S> &x, int parity) {
    const int lane = (int)threadIdx.x % kWarp;
    v = butterfly(v, lane, c.G < kWarp ? c.G : kWarp);
    if (c.G > kWarp) {  // the same for every thread of the block
        const int warp = (int)threadIdx.x / kWarp, first = c.g * (c.G / kWarp), count = c.G / kWarp;
        if (lane == 0) x.warps[parity][warp] = v;
        __syncthreads();
        // Every warp merges the group's `count` warp parts by the same butterfly, lane i holding part i % width
        // (empty past count): log2(count) merges a thread, not a chain of count - 1, each waiting for the one before
        // (a division in LayerNorm's merge, an exponential in the softmax's; 31 of them for a block of 1024 threads,
        // while nothing else of the block runs: NOTES.md, "Twelfth pass").
        const int width = count <= 1 ? 1 : 1 << (32 - __clz(count - 1));  // count rounded up to a power of two
        const int i = lane & (width - 1);
        v = butterfly(i < count ? x.warps[parity][first + i] : S::empty(), lane, width);
    }
    return v;
}

// Every thread of the cluster's C blocks gets the row's statistic: each block's thread 0 puts its block's part in
// its shared memory, the cluster waits, and every thread reads the C parts (its own block's and the others', through
// distributed shared memory) in rank order.
template <typename S>
__device__ inline S mailbox_combine(const S &v, const Ctx &c, int parity);

template <typename S>
__device__ inline S cluster_combine(S v, const Ctx &c, Exchange<S> &x, int parity) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (c.flags & ROWWISE_FLAG_MAILBOX) return mailbox_combine(v, c, parity);  // experimental
    cg::cluster_group cluster = cg::this_cluster();
    if (threadIdx.x == 0) x.cluster[parity] = v;
    cluster.sync();
    S total = *cluster.map_shared_rank(&x.cluster[parity], 0);
    for (int r = 1; r < c.C; ++r) total = merge(total, *cluster.map_shared_rank(&x.cluster[parity], r));
    return total;
#else
    (void)c, (void)x, (void)parity;
    __trap();  // the host launches clusters only on sm_90 and later
    return v;
#endif
}

// At the end of a cluster kernel: no block may leave while another still reads its shared memory.
__device__ inline void finish(const Ctx &c) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (c.mode == kCluster) cg::this_cluster().sync();
#else
    (void)c;
#endif
}

// ---- version 6: a block per row that reads it twice ---------------------------------------------------------------
// A row too long for one block's registers, without a cluster: the block's threads walk the row in steps of U packs
// each (thread t loads packs s U B + u B + t of step s, u < U, in a block of B threads: each load instruction of a warp
// covers 512 consecutive bytes), fold each step into their own statistic, reduce once over the block, and walk the
// row again to write it. x is read twice, but the second read need not reach device memory: the first walk's loads
// ask L2 to keep their lines (evict_last), the second walk's to drop them (evict_first), and the stores stream
// (st.global.cs). The rows in flight on the GPU (a block's each) must then fit in L2 together. torch.compile's
// looped reductions do the same with Triton's eviction policies. Version 0 takes it for the forwards where a block's
// rows in flight fit L2 (reread_choice below; NOTES.md, "Tenth pass" to "Fourteenth pass").
// U: 4 packs a step by default; tune may ask 1 or 2 (fewer registers and bytes in flight a thread: on the H100, in
// the block reread_block picks, 3-25 points slower at every shape measured; NOTES.md, "Thirteenth pass"), and
// RMSNorm 8 (its plain build only: fast_reread_choice's float32 rows).
constexpr int kRereadPacks = 4;

__device__ inline uint64_t l2_keep_policy() {
    uint64_t policy;
    asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
    return policy;
}
__device__ inline uint64_t l2_drop_policy() {
    uint64_t policy;
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
    return policy;
}
// A 16-byte load with an L2 policy (a cache hint: the result is the same whatever the policy). SKIP_L1: the line is
// not kept in L1 either (L1::no_allocate), which leaves L1 to the vectors every row reads (reread_skips_l1).
template <bool SKIP_L1 = false>
__device__ inline void load16_hinted(uint32_t (&w)[4], const uint4 *p, uint64_t policy) {
    if constexpr (SKIP_L1)
        asm volatile("ld.global.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                     : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3])
                     : "l"(p), "l"(policy));
    else
        asm volatile("ld.global.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                     : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3])
                     : "l"(p), "l"(policy));
}

// Pack `at` of a weight or bias that every row reads (L1 and L2 hits), or zeros where the vector is absent. PRESENT:
// the kernel is built for the vector being there (no check).
template <bool PRESENT = false>
__device__ inline void param16(uint32_t (&w)[4], const uint4 *vec, int64_t at) {
    if constexpr (!PRESENT) {
        w[0] = w[1] = w[2] = w[3] = 0;
        if (vec == nullptr) return;
    }
    const uint4 q = __ldg(vec + at);
    w[0] = q.x, w[1] = q.y, w[2] = q.z, w[3] = q.w;
}

// One walk over a row of `packs` 16-byte packs: visit(w, valid, first) for each step, w[u] holding pack
// first + u * blockDim.x (load(w[u], at) reads pack `at`), of which the first `valid` lie inside the row (the others
// are zero). reread_walk reads the packs from global memory with an L2 policy, held_walk from shared memory. Their
// loaders capture by value: by reference, the same walk compiled to other machine code in 73 kernels (NOTES.md,
// "Thirty-ninth pass").
// The full steps (all U packs inside the row) come first, in a loop that checks no pack: `valid` is the constant U
// there, so the visitor's own checks fold away. Only the last, partial step (if any) checks each pack. Measured on the
// H100 (NOTES.md, "Fourteenth pass"): with a check on every pack, LayerNorm at 4096 x 32768 ran at 94.3 % (bf16) and
// 92.0 % (float32) of the copy; without, 97.2 and 93.3. Loading the next step before folding this one gained 0.6
// points at most and cost the bf16 softmax 1-2: not done.
// B: the block size of a kernel built for one (else 0: blockDim.x). A step's packs then lie at constant distances
// (u B 16 bytes) from its first, so each load's address is one register plus a constant, and the walk counts packs
// in 32 bits (the launcher keeps such builds to rows of at most 2^30 elements): float32 LayerNorm's machine code
// 1192 -> 864 instructions with B, 832 with B and 32 bits (layer_norm_reread_kernel).
template <int U, int B = 0, typename Load, typename Visit>
__device__ inline void walk_steps(int64_t row_packs, Load load, Visit visit) {
    using I = std::conditional_t<(B > 0), int, int64_t>;
    const I packs = (I)row_packs;
    const I step = B > 0 ? (I)B : (I)blockDim.x;
    const I full = packs - (U - 1) * step;  // a step starting below `full` lies inside the row
    I first = threadIdx.x;
    for (; first < full; first += U * step) {
        uint32_t w[U][4];
#pragma unroll
        for (int u = 0; u < U; ++u) load(w[u], first + u * step);
        visit(w, U, first);
    }
    if (first < packs) {  // the last step: fewer than U of its packs lie inside the row
        uint32_t w[U][4];
        int valid = 0;
#pragma unroll
        for (int u = 0; u < U; ++u) {
            w[u][0] = w[u][1] = w[u][2] = w[u][3] = 0;
            if (first + u * step < packs) {
                load(w[u], first + u * step);
                valid = u + 1;
            }
        }
        visit(w, valid, first);
    }
}
template <int U, bool SKIP_L1 = false, int B = 0, typename Visit>
__device__ inline void reread_walk(const void *row, int64_t packs, uint64_t policy, Visit visit) {
    const uint4 *p = static_cast<const uint4 *>(row);
    walk_steps<U, B>(
        packs, [p, policy](uint32_t (&w)[4], int64_t at) { load16_hinted<SKIP_L1>(w, p + at, policy); }, visit);
}

// The S values r narrowed to a 16-byte pack and stored to *dst: streamed (st.global.cs: no line of it is read again),
// or with STREAM false a plain st.global.
template <typename T, bool STREAM = true>
__device__ inline void store_pack(uint4 *dst, const acc_t<T> (&r)[Pack<T>::size]) {
    uint32_t q[4];
    Bits<T>::put(q, r);
    if constexpr (STREAM)
        __stcs(dst, make_uint4(q[0], q[1], q[2], q[3]));
    else
        *dst = make_uint4(q[0], q[1], q[2], q[3]);
}

// Version 6's second walk: pack `at` of the output row is out(w, at, r), from pack `at` of the input row (its words
// w), narrowed from the S values r and streamed to memory (store_pack).
template <int U, bool SKIP_L1 = false, typename T, typename Out>
__device__ inline void reread_write(const T *in_row, T *out_row, int64_t packs, uint64_t policy, Out out) {
    uint4 *dst = reinterpret_cast<uint4 *>(out_row);
    reread_walk<U, SKIP_L1>(in_row, packs, policy, [&](const uint32_t (&w)[U][4], int valid, int64_t first) {
#pragma unroll
        for (int k = 0; k < U; ++k) {
            if (k >= valid) continue;
            const int64_t at = first + k * (int64_t)blockDim.x;
            acc_t<T> r[Pack<T>::size];
            out(w[k], at, r);
            store_pack<T>(dst + at, r);
        }
    });
}

// Version 6's second walk with the step's packs of the V vectors (RMSNorm's weight; LayerNorm's weight and bias) all
// loaded before its first value is computed (out(w, vv, r): vv[i], vector i's words, zero where it is absent), as the
// step's row packs are (reread_walk), not each beside its store. Each load waited for in turn costs a block its
// latency once a pack; a block of 1024 (one an SM) has no other block's loads to hide it. PRESENT: every vector is
// there (the kernel is built for it). B: as walk_steps'.
// RMSNorm's plain build at 4 packs a step, H200, % of the copy, pack by pack -> weight first (NOTES.md, "Thirty-fourth
// pass"): bf16 4096 x 32768 in blocks of 512 87.5 -> 95.8, 2048 x 65536 (1024) 76.0 -> 82.8, float32 4096 x 32768
// (1024) 90.7 -> 92.4. Not taken there: steps of 2 packs (RMSNorm bf16 4096 x 24576: 92.0 -> 85.6), the cluster build
// (LayerNorm's spilled). LayerNorm's weight and bias first measured -2.9 to +3.5 by row in its run-time build, but
// gained 1-6 points in its build for a block size (layer_norm_reread_kernel; NOTES.md, "Forty-third pass").
template <int U, bool SKIP_L1, int B, int V, bool PRESENT, typename T, typename Out>
__device__ inline void reread_write_vectors_first(const T *in_row, T *out_row, int64_t packs, uint64_t policy,
                                                  const uint4 *const (&vec)[V], Out out) {
    uint4 *dst = reinterpret_cast<uint4 *>(out_row);
    const int64_t step = B > 0 ? (int64_t)B : (int64_t)blockDim.x;
    reread_walk<U, SKIP_L1, B>(in_row, packs, policy, [&](const uint32_t (&w)[U][4], int valid, int64_t first) {
        uint32_t vv[U][V][4];
#pragma unroll
        for (int i = 0; i < V; ++i)
#pragma unroll
            for (int k = 0; k < U; ++k) {
                vv[k][i][0] = vv[k][i][1] = vv[k][i][2] = vv[k][i][3] = 0;
                if (k < valid) param16<PRESENT>(vv[k][i], vec[i], first + k * step);
            }
#pragma unroll
        for (int k = 0; k < U; ++k) {
            if (k >= valid) continue;
            acc_t<T> r[Pack<T>::size];
            out(w[k], vv[k], r);
            store_pack<T>(dst + first + k * step, r);
        }
    });
}

// Version 6's place of a block: its row walk and its segment of the row. A kernel built for a block a row
// (CLUSTER false, the plain launch) gives each block whole rows (reduce_group's view: every thread of the block holds
// part of one row). A kernel built for clusters (CLUSTER true) launched with clusters of C blocks (tune's
// blocks_per_row) gives the C blocks of a cluster one row, block `rank` its rank-th segment of ceil(packs / C) packs
// (the last shorter, or empty); their statistics meet in each block's mailbox (reread_combine). Two builds, not one:
// the cluster's code in the plain kernel (its branches never taken) cost the H100 1.5-2.7 points of the copy in
// float32 rows of 32768 (NOTES.md, "Eighteenth pass"). S: elements a 16-byte pack.
template <bool CLUSTER>
__device__ inline Ctx reread_ctx(int64_t n, int S) {
    Ctx c{};
    c.G = (int)blockDim.x;
    c.t = (int)threadIdx.x;
    c.R = 1;
    c.C = 1;
    c.slot = blockIdx.x;
    c.slots = gridDim.x;
    c.n = n;
    c.seg_end = n;
    c.mode = kReread;
    c.packed = kPacks;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (CLUSTER) {
        const cg::cluster_group cluster = cg::this_cluster();  // one block, rank 0, without clusters
        c.C = (int)cluster.num_blocks();
        c.rank = (int)cluster.block_rank();
        c.slot = blockIdx.x / (unsigned)c.C;
        c.slots = gridDim.x / (unsigned)c.C;
        c.flags = c.C > 1 ? ROWWISE_FLAG_MAILBOX : 0;  // the blocks' parts meet in each block's mailbox
        const int64_t seg_len = (n / S + c.C - 1) / c.C * S;
        c.seg_begin = (int64_t)c.rank * seg_len < n ? (int64_t)c.rank * seg_len : n;
        c.seg_end = c.seg_begin + seg_len < n ? c.seg_begin + seg_len : n;
    }
#endif
    (void)S;
    return c;
}

// The row's statistic from each block's (reduce_group's): over the cluster's blocks in rank order when the row has
// several (the same bits in every block and run), sent to every block's mailbox (mailbox_combine, below; the launch
// gives it its dynamic shared memory), else the block's own. Open the mailbox (open_mailbox) before the rows.
template <bool CLUSTER, typename S>
__device__ inline S reread_combine(const S &v, const Ctx &c, int parity) {
    if constexpr (CLUSTER) return c.C > 1 ? mailbox_combine(v, c, parity) : v;
    (void)c, (void)parity;
    return v;
}

// At the end of a version 6 kernel over a cluster: no block leaves while another still reads its shared memory.
template <bool CLUSTER>
__device__ inline void reread_finish(const Ctx &c) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (CLUSTER) {
        if (c.C > 1) cg::this_cluster().sync();
    }
#endif
    (void)c;
}

// ---- experimental switches (rowwise.h, ROWWISE_FLAG_*): rows over several blocks -----------------------------------
// Why (NOTES.md, "Rows longer than a block"): a block walking rows does load -> reduce -> cluster barrier -> store,
// and nothing of its next row is in flight while it reduces and waits. cg::this_cluster().sync() is also a release
// and acquire: ptxas puts MEMBAR.ALL.GPU before the barrier (each thread waits until its earlier stores, and any load
// still in flight, are done) and CCTL.IVALL after it, on every row.
//   PREFETCH_L2  thread 0 asks L2 for the block's segment of its next row (cp.async.bulk.prefetch.L2: no registers, no
//                shared memory), right after this row's loads: the DRAM reads of row i + 1 overlap row i's reductions.
//   STAGE_NEXT   (forward) each thread copies its packs of the next row into its own slots of shared memory
//                (cp.async) right after reading this row's, and reads them from there on the next step: the loads
//                are in flight through the reductions, the barrier and the stores.
//   MAILBOX      (clusters) instead of the barrier, lane r of warp 0 sends the block's part to rank r's shared memory
//                with st.async, which counts its bytes on rank r's mbarrier; every thread arrives there too and
//                waits, then reads the C parts from its own shared memory. No fence, no cluster barrier per row.

// HOLD_PARAMS where the bias is held too (the host sets it in a plan's flags where shared memory has room for it).
constexpr int kHoldBias = 1 << 16;
// STAGE_NEXT in one set of slots, not two, where two and the held weight and bias do not fit (the host sets it).
constexpr int kStageOneSet = 1 << 17;

// MAILBOX: the parts the cluster's blocks sent for a row, by rank, and the mbarrier that counts them in (with this
// block's threads), double-buffered as Exchange. It lives at the start of the dynamic shared memory of the kernels
// built for the switches (EXP; mailbox_bytes() there, before the staged rows or the column sums), not in Exchange:
// the lesson's kernels keep their shared memory and code as they were.
template <typename S>
struct Mailbox {
    alignas(16) uint64_t arrived[2];
    S mail[2][kMaxCluster];
};
__host__ __device__ constexpr size_t mailbox_bytes(size_t part_bytes) {
    return (16 + 2 * kMaxCluster * part_bytes + 15) / 16 * 16;
}
template <typename S>
__device__ inline Mailbox<S> &mailbox() {
    static_assert(sizeof(Mailbox<S>) == mailbox_bytes(sizeof(S)), "the host sizes the mailbox as the device");
    extern __shared__ uint4 rowwise_dynamic_smem[];
    return *reinterpret_cast<Mailbox<S> *>(rowwise_dynamic_smem);
}
// What an EXP kernel's dynamic shared memory holds after its mailbox (the staged rows, the column sums). An address
// the compiler computes from the symbol where it is used, not one more register held through the rows.
template <typename S>
__device__ inline uint4 *after_mailbox() {
    extern __shared__ uint4 rowwise_dynamic_smem[];
    return rowwise_dynamic_smem + mailbox_bytes(sizeof(S)) / 16;
}

// ---- version 6 with the row held in shared memory (ROWWISE_FLAG_HELD; the softmax forward) ------------------------
// Instead of reading its row (segment) twice, the second time from L2, a block copies it once into its dynamic shared
// memory with cp.async, pack k into slot k, then walks the slots for the statistics and again to write. Each thread
// reads back only the slots it copied itself, so cp.async.wait_all is all the synchronisation there is. Shared memory
// is storage the registers do not have to hold: three blocks of 512 an SM hold three 64 KB rows at 32 registers a
// thread. NEXT: in the write walk each slot, once read, takes the pack of the block's next row (blocks that walk rows),
// so the next row's loads are in flight while this one is written.
template <typename S, bool CLUSTER>
__device__ inline uint4 *held_slots() {
    extern __shared__ uint4 rowwise_dynamic_smem[];
    if constexpr (CLUSTER) return after_mailbox<S>();
    return rowwise_dynamic_smem;
}
// cp.async of 16 bytes from global `from` to shared `to` (L1 bypassed: .cg). AFTER: `after`, a value computed from the
// slot's words as read, is an operand, so the copy cannot overwrite the slot before that read is done.
template <bool AFTER = false>
__device__ inline void copy16_async(uint4 *to, const uint4 *from, uint32_t after = 0) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const uint32_t dst = (uint32_t)__cvta_generic_to_shared(to);
    const auto src = __cvta_generic_to_global(from);
    if constexpr (AFTER)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src), "r"(after) : "memory");
    else
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
#else
    (void)to, (void)from, (void)after;
#endif
}
// This thread's packs of a row segment of `packs` packs into their slots.
__device__ inline void held_fill(uint4 *held, const void *row, int64_t packs) {
    const uint4 *p = static_cast<const uint4 *>(row);
    for (int64_t k = threadIdx.x; k < packs; k += blockDim.x) copy16_async(held + k, p + k);
}
// Waits for this thread's cp.async copies (copy16_async's, and STAGE_NEXT's: Staging::read).
__device__ inline void wait_async_copies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}
// walk_steps over the slots: visit(w, valid, first) for each step of U packs a thread (zeros past the segment).
template <int U, typename Visit>
__device__ inline void held_walk(const uint4 *held, int64_t packs, Visit visit) {
    walk_steps<U>(
        packs,
        [held](uint32_t (&w)[4], int64_t at) {
            const uint4 q = held[at];
            w[0] = q.x, w[1] = q.y, w[2] = q.z, w[3] = q.w;
        },
        visit);
}

// STAGE_NEXT: a thread's packs of a row segment in its slots of shared memory, two sets of them: a row is read from
// set `parity` while the next is copied into the other, so a copy never lands on slots whose read is in flight (each
// thread reads only what it copied itself: cp.async.wait_all is all the synchronisation there is). Packed rows only.
template <typename Sl>
struct Staging;
template <typename T, int PPT, int LAYOUT>
struct Staging<Slice<T, PPT, LAYOUT>> {
    // 16-byte packs, a segment of whole packs at a 16-byte boundary: kPacks only (not kBody's edges, nor kSingles)
    static constexpr bool kApplies = LAYOUT == kPacks;
    __device__ static uint4 *slot(uint4 *stage, int parity, int k) {  // a warp's slots side by side: no bank conflict
        return stage + (parity * PPT + k) * blockDim.x + threadIdx.x;
    }
    // cp.async of this thread's packs of `row` (as Slice::load reads them) into its slots of set `parity`.
    __device__ static void copy_async(const T *row, const Ctx &c, int count, uint4 *stage, int parity) {
        copy<false>(row, c, count, stage, parity, 0.f);
    }
    // The same, kStageOneSet's: `after` is a value computed from every word this thread read from these slots, an
    // operand of the copies (no instruction of its own), so that they cannot start before those reads are done.
    __device__ static void copy_async_after(const T *row, const Ctx &c, int count, uint4 *stage, float after) {
        copy<true>(row, c, count, stage, 0, after);
    }
    template <bool AFTER>
    __device__ static void copy(const T *row, const Ctx &c, int count, uint4 *stage, int parity, float after) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#pragma unroll
        for (int k = 0; k < PPT; ++k) {
            if (k >= count) continue;
            const uint32_t to = (uint32_t)__cvta_generic_to_shared(slot(stage, parity, k));
            const auto from = __cvta_generic_to_global(row + Slice<T, PPT, LAYOUT>::column(c, k, 0));
            if constexpr (AFTER)
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(to), "l"(from), "f"(after) : "memory");
            else
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(to), "l"(from) : "memory");
        }
#else
        (void)row, (void)c, (void)count, (void)stage, (void)parity, (void)after;
#endif
    }
    // Waits for this thread's copies, then reads its slots of set `parity` into v (zeros past `count`, as
    // Slice::load).
    __device__ static void read(Slice<T, PPT, LAYOUT> &v, int count, uint4 *stage, int parity) {
        wait_async_copies();
#pragma unroll
        for (int k = 0; k < PPT; ++k) {
            const uint4 q = k < count ? *slot(stage, parity, k) : make_uint4(0, 0, 0, 0);
            v.w[k][0] = q.x, v.w[k][1] = q.y, v.w[k][2] = q.z, v.w[k][3] = q.w;
        }
    }
};

// PREFETCH_L2: thread 0 asks L2 for `bytes` (a multiple of 16, below 2^31) from p (16-byte aligned), in one request;
// the bulk-copy unit splits it. (One request from each of warp 0's lanes, as first written, made the compiler walk
// the lanes one at a time, since the instruction takes its operands from uniform registers: a loop of 32 turns for
// warp 0 every row, while the block's other warps waited for it at the next barrier. NOTES.md, "The prefetch's
// loop".)
__device__ inline void prefetch_l2(const void *p, uint32_t bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (threadIdx.x != 0) return;
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(__cvta_generic_to_global(p)), "r"(bytes)
                 : "memory");
#else
    (void)p, (void)bytes;
#endif
}

// PREFETCH_L2 for a tensor of rows like x (`base`): the block's segment of the row after `row` in its walk.
template <typename Sl, typename T>
__device__ inline void prefetch_next(const T *base, int64_t row, int64_t rows, const Ctx &c) {
    if constexpr (Staging<Sl>::kApplies) {
        const int64_t next = row + c.slots * c.R;
        if ((c.flags & ROWWISE_FLAG_PREFETCH_L2) && next < rows)
            prefetch_l2(base + next * c.n + c.seg_begin, (uint32_t)(c.seg_end - c.seg_begin) * (uint32_t)sizeof(T));
    }
}

// A forward's load of row `row` of x into v, with the switches: STAGE_NEXT reads it from shared memory (stage_first
// copied the block's first row there) and starts the copy of the next; PREFETCH_L2 asks L2 for the next. St: the
// kernel's statistic (its mailbox comes first in the dynamic shared memory, the staged packs after it); parity:
// for_each_row's. Without switches, v.load. (The copies are issued here, before this row's reductions, and the
// first row's before the loop: a branch for it in the loop cost 44 bytes of spill at 64 registers.)
// ONE_SET: a kernel that may stage rows in one set of slots (kStageOneSet: the norms' forwards that hold weights).
template <typename St, typename Sl, typename T, bool ONE_SET = false>
__device__ inline void load_row(Sl &v, const T *__restrict__ x, int64_t row, int64_t rows, const Ctx &c, int count,
                                int parity) {
    if constexpr (Staging<Sl>::kApplies) {
        if (c.flags & ROWWISE_FLAG_STAGE_NEXT) {
            uint4 *stage = after_mailbox<St>();
            if (ONE_SET && (c.flags & kStageOneSet)) {  // the caller copies the next row once it has used this one
                Staging<Sl>::read(v, count, stage, 0);
                return;
            }
            Staging<Sl>::read(v, count, stage, parity);
            const int64_t next = row + c.slots * c.R;
            if (next < rows) Staging<Sl>::copy_async(x + next * c.n, c, count, stage, parity ^ 1);
            return;
        }
    }
    v.load(x + row * c.n, c, count);
    prefetch_next<Sl>(x, row, rows, c);
}

// HOLD_PARAMS: this thread's slot for pack k of held vector v (0: the weight, 1: the bias), after the staged rows.
template <typename St, int PPT>
__device__ inline uint4 *held_slot(const Ctx &c, int v, int k) {
    const int sets = !(c.flags & ROWWISE_FLAG_STAGE_NEXT) ? 0 : (c.flags & kStageOneSet) ? 1 : 2;
    uint4 *base = after_mailbox<St>() + sets * PPT * blockDim.x;
    return base + (v * PPT + k) * blockDim.x + threadIdx.x;
}

// STAGE_NEXT in one set of slots (kStageOneSet): the copy of the next row into the slots this row was read from,
// issued after `used`, a value computed from every word of this row (so after the reads of the slots).
template <typename St, typename Sl, typename T>
__device__ inline void stage_next_after(const T *__restrict__ x, int64_t row, int64_t rows, const Ctx &c, int count,
                                        float used) {
    if constexpr (Staging<Sl>::kApplies) {
        const int64_t next = row + c.slots * c.R;
        if ((c.flags & ROWWISE_FLAG_STAGE_NEXT) && (c.flags & kStageOneSet) && next < rows)
            Staging<Sl>::copy_async_after(x + next * c.n, c, count, after_mailbox<St>(), used);
    }
}

// STAGE_NEXT: the copy of the block's first row, before the rows (load_row reads every row from shared memory).
template <typename St, typename Sl, typename T>
__device__ inline void stage_first(const T *__restrict__ x, int64_t rows, const Ctx &c, int count) {
    if constexpr (Staging<Sl>::kApplies) {
        const int64_t first = c.slot * c.R + c.g;
        if ((c.flags & ROWWISE_FLAG_STAGE_NEXT) && first < rows)
            Staging<Sl>::copy_async(x + first * c.n, c, count, after_mailbox<St>(), 0);  // for_each_row's first parity
    }
}

// MAILBOX: set up this block's two mbarriers (every thread arrives on them, and the parts' bytes), before any block
// of the cluster sends. Call from every thread of a kernel for rows over several blocks, before the rows. MODE: the
// row layout that has a mailbox in this kernel (version 4's kCluster; version 6's cluster build, kReread). One mode a
// build, not a test of both: the second test changed the register allocation of the float32 LayerNorm backward
// capped at 80 registers (24 bytes spilled) and cost it 16 points of the copy at 4096 x 32768 (NOTES.md, "Nineteenth
// pass").
template <typename S, int MODE = kCluster>
__device__ inline void open_mailbox(const Ctx &c) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (c.mode != MODE || !(c.flags & ROWWISE_FLAG_MAILBOX)) return;
    Mailbox<S> &box = mailbox<S>();
    if (threadIdx.x == 0) {
        for (int p = 0; p < 2; ++p)
            asm volatile(
                "mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"((uint32_t)__cvta_generic_to_shared(&box.arrived[p])),
                "r"(blockDim.x)
                : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    cg::this_cluster().sync();
#else
    (void)c;
#endif
}

// MAILBOX: cluster_combine without a cluster barrier; the same merges in the same order, so the same bits. Buffer
// `parity` is written again two rows later, and a block can only be one row ahead of another: it needs every
// block's part of its row, which each block sends after its block reduction (a barrier, or a warp's shuffles: all its
// threads have read the parts of two rows back by then).
template <typename S>
__device__ inline S mailbox_combine(const S &v, const Ctx &c, int parity) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    Mailbox<S> &box = mailbox<S>();
    const uint32_t arrived = (uint32_t)__cvta_generic_to_shared(&box.arrived[parity]);
    uint64_t state;
    if (threadIdx.x == 0)  // this row's phase completes with every thread here and C parts' bytes landed
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], %2;"
                     : "=l"(state)
                     : "r"(arrived), "r"((uint32_t)(c.C * sizeof(S)))
                     : "memory");
    else
        asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(state) : "r"(arrived) : "memory");
    if ((int)threadIdx.x < c.C) {  // lane r sends this block's part to rank r (itself included)
        const uint32_t to = threadIdx.x;
        uint32_t slot = (uint32_t)__cvta_generic_to_shared(&box.mail[parity][c.rank]), bar;
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(slot) : "r"(slot), "r"(to));
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(bar) : "r"(arrived), "r"(to));
        static_assert(sizeof(S) % 4 == 0, "a part is sent as 32-bit words");
        uint32_t words[sizeof(S) / 4];
        memcpy(words, &v, sizeof(S));
#pragma unroll
        for (int i = 0; i < (int)(sizeof(S) / 4); ++i)
            asm volatile(
                "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" ::"r"(slot + 4 * i),
                "r"(words[i]), "r"(bar)
                : "memory");
    }
    uint32_t done = 0;
    do {
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                     : "=r"(done)
                     : "r"(arrived), "l"(state)
                     : "memory");
    } while (!done);
    S total = box.mail[parity][0];
    for (int r = 1; r < c.C; ++r) total = merge(total, box.mail[parity][r]);
    return total;
#else
    (void)c, (void)parity;
    __trap();
    return v;
#endif
}

// The rows a block (cluster) walks: rows slot*R + g, then every slots*R further. The same number of steps for every
// thread of the block and every block of a cluster, so the barriers inside match.
template <typename Body>
__device__ inline void for_each_row(const Ctx &c, int64_t rows, Body body) {
    int parity = 0;
    for (int64_t first = c.slot * c.R; first < rows; first += c.slots * c.R) {
        const int64_t row = first + c.g;
        body(row, row < rows, parity);
        parity ^= 1;
    }
}

// One row, in every mode: load its slice, reduce the statistic over the row, apply it. `stats` is the split modes'
// global array of per-segment statistics [rows][C]. WHOLE: the kernel was built for kWhole only, so the code of the
// other modes is left out of it (it held registers: about 20 more per thread for a 4-pack bf16 forward).
template <bool WHOLE, typename S, typename Load, typename Local, typename Apply>
__device__ inline void process_row(const Ctx &c, int64_t row, bool active, int parity, Exchange<S> &x, S *stats,
                                   Load load, Local local, Apply apply) {
    if (!WHOLE && c.mode == kSplitApply) {  // no reduction here: the first launch left every segment's part
        if (!active) return;
        load();
        S total = stats[row * c.C];
        for (int r = 1; r < c.C; ++r) total = merge(total, stats[row * c.C + r]);
        apply(total);
        return;
    }
    if (active) load();
    S total = reduce_group(active ? local() : S::empty(), c, x, parity);
    if (!WHOLE && c.mode == kCluster) total = cluster_combine(total, c, x, parity);
    if (!WHOLE && c.mode == kSplitStats) {
        if (active && threadIdx.x == 0) stats[row * c.C + c.rank] = total;
        return;
    }
    if (active) apply(total);
}

// Backward: a thread's running sums of dweight (or dbias) over the rows its block walks, one per element it holds, in
// shared memory rather than registers (32 registers fewer for 2 bf16 packs of dweight and dbias). A thread reads and
// writes only its own slots, so no barrier is needed until the end. Slots are 16-byte vectors of V sums (V = 4 floats,
// 2 doubles): vector q of thread i sits at q * blockDim + i, so one LDS.128 / STS.128 moves V sums and a warp's
// threads touch consecutive vectors (no bank conflict). kBody: one vector more, for the edge pack's two elements (the
// head and the tail element a thread may hold).
template <typename T, int PPT, int LAYOUT>
struct ColumnSums {
    using A = acc_t<T>;
    using Sl = Slice<T, PPT, LAYOUT>;
    static constexpr int S = Pack<T>::size;
    static constexpr int V = 16 / (int)sizeof(A);
    static constexpr int kVectors = PPT * S / V + (LAYOUT == kBody ? 1 : 0);  // per thread
    struct alignas(16) Vec {
        A v[V];
    };
    static_assert(S % V == 0 && V >= 2, "a pack holds whole vectors of sums; a vector holds the two edge sums");
    Vec *base;  // kVectors * blockDim vectors: this block's slots of one gradient

    __device__ Vec &slot(int q, int thread) const {
        return base[(size_t)q * blockDim.x + thread];
    }
    __device__ void zero() const {
#pragma unroll
        for (int q = 0; q < kVectors; ++q)
#pragma unroll
            for (int i = 0; i < V; ++i) slot(q, threadIdx.x).v[i] = A(0);
    }
    // Adds the S values of pack k (elements outside the segment add zero: their words are zero). kBody's edge pack
    // (k = PPT) adds its elements 0 and 1 (head, tail) to the last vector.
    __device__ void add(int k, const A (&values)[S]) const {
        if constexpr (LAYOUT == kBody) {
            if (k == PPT) {
                Vec s = slot(PPT * S / V, threadIdx.x);
                s.v[0] += values[0];
                s.v[1] += values[1];
                slot(PPT * S / V, threadIdx.x) = s;
                return;
            }
        }
#pragma unroll
        for (int q = 0; q < S / V; ++q) {
            Vec s = slot(k * (S / V) + q, threadIdx.x);
#pragma unroll
            for (int i = 0; i < V; ++i) s.v[i] += values[q * V + i];
            slot(k * (S / V) + q, threadIdx.x) = s;
        }
    }
    // The block's sums, as partial[slot][column]. A block whose groups each held a row adds the groups' slots in
    // group order (the first group's threads do it), so the bits do not depend on timing. Call after a barrier when
    // the block holds more than one group (c.R > 1). rows: a row tensor, for kBody (Slice::locate).
    __device__ void write(const Ctx &c, int count, A *partial, const T *rows) const {
        if (c.g != 0) return;
        A *out = partial + c.slot * c.n;
        if constexpr (LAYOUT == kBody) {
            // Each group's rows have their own head (the group's first row's place relative to 16 bytes), so a column
            // sits in another thread and element in each group: Slice::owner finds it. Element e = k S + j of the
            // edge pack (k = PPT, j < 2) is element j of the last vector, as e / V and e % V say.
#pragma unroll 1  // once per block: compact code
            for (int e = 0; e < Sl::K * S; ++e) {
                const int k = e / S, j = e % S;
                if (!Sl::valid(count, k, j)) continue;
                const int off = Sl::offset(c, k, j);
                A total = slot(e / V, c.t).v[e % V];
#pragma unroll 1
                for (int g = 1; g < c.R; ++g) {
                    Ctx other = c;
                    other.g = g;
                    other = Sl::locate(other, rows);
                    int t, f;
                    Sl::owner(other, off, t, f);
                    total += slot(f / V, g * c.G + t).v[f % V];
                }
                out[c.seg_begin + off] = total;
            }
        } else {
            (void)rows;
            RW_EACH(PPT, S) {
                if (!Sl::valid(count, k, j)) continue;
                const int e = k * S + j;
                A total = slot(e / V, c.t).v[e % V];
#pragma unroll 1  // once per block: compact code
                for (int g = 1; g < c.R; ++g) total += slot(e / V, g * c.G + c.t).v[e % V];
                out[Sl::column(c, k, j)] = total;
            }
        }
    }
};

// dweight[col] = sum over the partial rows, in order: a 32 x 32 block per 32 columns, each thread summing every 32nd
// partial row, then one thread per column adding the 32 sums in order. No atomics: the same bits on every run.
template <typename T>
__global__ void __launch_bounds__(1024)
    sum_partials_kernel(const acc_t<T> *__restrict__ partial, int64_t slots, int64_t n, T *__restrict__ out) {
    using A = acc_t<T>;
    __shared__ A part[32][33];
    const int64_t col = (int64_t)blockIdx.x * 32 + threadIdx.x;
    A s = A(0);
    if (col < n)
        for (int64_t r = threadIdx.y; r < slots; r += 32) s += partial[r * n + col];
    part[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && col < n) {
        A total = A(0);
        for (int i = 0; i < 32; ++i) total += part[i][threadIdx.x];
        out[col] = from_acc<T>(total);
    }
}

// ---- which instantiation a launch takes ---------------------------------------------------------------------------
// Make::get<PPT, LAYOUT, WHOLE>() names one kernel. Built: forward 2 and 4 packs per thread (float32 also 8: 16
// blocks of a cluster then hold 2^18 elements; bfloat16 8 for the switches only), backward 1 and 2; float64 one size
// (forward 2, backward 1); each in the three row layouts, for kWhole only (WHOLE) or for the other modes. nullptr for a
// pack count not built.
template <typename K, typename Make, int PPT, int LAYOUT>
K pick_mode(bool whole) {
    return whole ? Make::template get<PPT, LAYOUT, true>() : Make::template get<PPT, LAYOUT, false>();
}
template <typename K, typename Make, int PPT>
K pick_layout(int packed, bool whole) {
    if (packed == kPacks) return pick_mode<K, Make, PPT, kPacks>(whole);
    if (packed == kBody) return pick_mode<K, Make, PPT, kBody>(whole);
    return pick_mode<K, Make, PPT, kSingles>(whole);
}
template <typename T, typename K, typename Make>
K pick_forward(int ppt, int packed, bool whole) {
    if (ppt == 2) return pick_layout<K, Make, 2>(packed, whole);
    if constexpr (sizeof(T) != 8) {
        if (ppt == 4) return pick_layout<K, Make, 4>(packed, whole);
    }
    if constexpr (sizeof(T) == 4) {
        if (ppt == 8) return pick_layout<K, Make, 8>(packed, whole);
    }
    // 16 packs: float32 whole rows of 16-byte packs only, 64 registers of row a thread under the cap of 128 that
    // kMaxThreads gives (ptxas: the softmax's 8 bytes of spill, the norms' none); the softmax's wide rows
    // (wide_row_choice, softmax_kernels.cu), or tune.
    if constexpr (std::is_same<T, float>::value) {
        if (ppt == 16 && packed == kPacks && whole) return Make::template get<16, kPacks, true>();
    }
    return nullptr;
}
template <typename T, typename K, typename Make>
K pick_backward(int ppt, int packed, bool whole) {
    if (ppt == 1) return pick_layout<K, Make, 1>(packed, whole);
    if constexpr (sizeof(T) != 8) {
        if (ppt == 2) return pick_layout<K, Make, 2>(packed, whole);
    }
    return nullptr;
}

// The kernels built for the experimental switches (EXP): packed rows over several blocks, bfloat16 and float32 only
// (the sizes pick_forward and pick_backward build for them); nullptr otherwise.
template <typename T, typename K, typename Make>
K pick_experimental_forward(int ppt) {
    if constexpr (std::is_same<T, float>::value || std::is_same<T, __nv_bfloat16>::value) {
        if (ppt == 2) return Make::template get<2, kPacks, false, true>();
        if (ppt == 4) return Make::template get<4, kPacks, false, true>();
        if (ppt == 8) return Make::template get<8, kPacks, false, true>();  // bfloat16: these kernels only
    }
    (void)ppt;
    return nullptr;
}
template <typename T, typename K, typename Make>
K pick_experimental_backward(int ppt) {
    if constexpr (std::is_same<T, float>::value || std::is_same<T, __nv_bfloat16>::value) {
        if (ppt == 1) return Make::template get<1, kPacks, false, true>();
        if (ppt == 2) return Make::template get<2, kPacks, false, true>();
    }
    (void)ppt;
    return nullptr;
}

// ---- the host's plan of a launch ---------------------------------------------------------------------------------
struct Plan {
    int mode = kWhole, ppt = 4, block = 256, group = 32, segments = 1, packed = kPacks;  // packed: RowLayout
    int waves = 0;  // most waves of row walkers in the grid (tuning); 0: kForwardWaves or kBackwardWaves
    int flags = 0;  // experimental switches (tuning), less those that do not apply to the launch (size_plan)
    int64_t seg_len = 0, grid = 1, slots = 1;
    int64_t phase_rows = 1;    // kBody: rows after which a row starts at the same place relative to 16 bytes
    size_t smem = 0;           // dynamic shared memory per block
    size_t stats_bytes = 0;    // split modes: rows x C statistics
    size_t partial_bytes = 0;  // backward: one [slots][n] array of partial sums per wanted gradient
    int partials = 0;          // how many such arrays (dweight, dbias)
    int64_t table = 0;         // kBody: the weight's table of shifted copies, one copy's length; 0: none (plan_table)
    size_t table_bytes = 0;    // the table's bytes in the workspace
    int registers = 0;         // a kernel capped at fewer registers than its block size allows (norms: capped_backward)
    int held = 0;              // HOLD_PARAMS: the vectors each thread holds in shared memory (weight, bias)
    bool fixed = false;        // whole rows that fill their group exactly: the kernel built for this length (fixed_ctx)
    bool skip_l1 = false;      // version 6: x's loads skip L1, left to the weight and bias (reread_skips_l1)
    bool built = false;        // version 6: LayerNorm's kernel built for its block size (layer_norm_built_for_block)
    size_t held_bytes = 0;     // version 6 with HELD: the bytes of a block's segment, held in its shared memory
};

inline int64_t ceil_div(int64_t a, int64_t b) {
    return (a + b - 1) / b;
}
inline int64_t round_up(int64_t a, int64_t b) {
    return ceil_div(a, b) * b;
}
// The fewest threads, in whole warps, that hold `count` items at `per_thread` a thread (a row's packs, its elements).
inline int64_t warp_threads(int64_t count, int64_t per_thread) {
    return round_up(ceil_div(count, per_thread), kWarp);
}
inline int next_pow2(int64_t v) {
    int p = 1;
    while (p < v) p *= 2;
    return p;
}
inline bool aligned16(const void *p) {
    return p == nullptr || course::is_pack_aligned(p);
}
inline size_t align256(size_t bytes) {
    return (bytes + 255) / 256 * 256;
}

// Whether tune names a field of the plan (its block, packs, blocks a row or switches): version 0 then plans what the
// caller asked instead of choosing. Its waves alone leave version 0 the choice.
inline bool tuning_names_a_plan(const rowwise_tuning *tuning) {
    return tuning && (tuning->block_threads || tuning->packs_per_thread || tuning->blocks_per_row || tuning->flags);
}

// The forward built for a plan's row length (fixed_ctx), where there is one: the plan takes whole rows of 16-byte
// packs, PPT packs a thread, no switches, in blocks of kFixedBlock (every such plan's default) or of one row
// (norm_run's block a row where the memory is fast); the row fills its group of 32 to 256 threads exactly (n = group x
// PPT x pack size); and tune names no field (the kernels for any length then run, and the tests compare the two).
// Make::get<GROUP>() names the kernel built for a group. nullptr otherwise: the caller keeps its kernel.
template <typename T, int PPT, typename Make>
auto pick_fixed(const Plan &p, int64_t n, const rowwise_tuning *tuning) -> decltype(Make::template get<32>()) {
    const bool tuned = tuning_names_a_plan(tuning) || (tuning && tuning->waves);
    if (tuned || p.mode != kWhole || p.packed != kPacks || p.flags || p.ppt != PPT ||
        (p.block != kFixedBlock && p.block != p.group) || n != (int64_t)p.group * PPT * Pack<T>::size)
        return nullptr;
    if (p.group == 32) return Make::template get<32>();
    if (p.group == 64) return Make::template get<64>();
    if (p.group == 128) return Make::template get<128>();
    if (p.group == 256) return Make::template get<256>();
    return nullptr;
}

// What the host asked the runtime about a kernel on a device, kept so that it asks once (as course::blocks_per_wave
// does): the attribute and occupancy calls below cost microseconds each, on every launch, and a backward launches
// three kernels. `key` says what the answer depends on besides the kernel and the device.
struct Remembered {
    const void *kernel;
    int device;
    int64_t key[3];
    int64_t value;
};
template <typename Kernel, typename Ask>
cudaError_t remembered(Kernel kernel, int64_t a, int64_t b, int64_t c, int64_t *value, Ask ask) {
    static std::mutex lock;
    static std::vector<Remembered> known;
    int device = 0;
    CUDA_RETURN_IF_ERROR(cudaGetDevice(&device));
    const Remembered wanted{reinterpret_cast<const void *>(kernel), device, {a, b, c}, 0};
    {
        const std::lock_guard<std::mutex> guard(lock);
        for (const Remembered &k : known) {
            if (k.kernel == wanted.kernel && k.device == device && k.key[0] == a && k.key[1] == b && k.key[2] == c) {
                *value = k.value;
                return cudaSuccess;
            }
        }
    }
    CUDA_RETURN_IF_ERROR(ask(value));
    const std::lock_guard<std::mutex> guard(lock);
    known.push_back(Remembered{wanted.kernel, device, {a, b, c}, *value});
    return cudaSuccess;
}

inline bool device_has_clusters() {
    int device = 0, major = 0, launch = 0;
    if (cudaGetDevice(&device) != cudaSuccess) return false;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) return false;
    if (cudaDeviceGetAttribute(&launch, cudaDevAttrClusterLaunch, device) != cudaSuccess) return false;
    return major >= 9 && launch != 0;
}

// The device memory's peak bytes per SM cycle: memory clock x 2 (double data rate) x bus width, over SMs x SM clock.
// By the datasheets 12.8 on the H100 SXM (3.35 TB/s, 132 SMs at 1.98 GHz) and 18.4 on the H200 (4.8 TB/s, the same
// SMs). The planner's rules were measured on the H100; a few take other plans where the memory moves more than
// kFastMemoryBytesPerCycle a cycle, as measured on the H200 (NOTES.md, "Twenty-sixth pass"). Asked once per device
// (remembered, keyed on this function: the planner calls it on every launch). A query that fails is the caller's
// error.
constexpr double kFastMemoryBytesPerCycle = 16.0;
inline cudaError_t device_fast_memory(bool *fast) {
    int64_t answer = 0;
    CUDA_RETURN_IF_ERROR(remembered(&device_fast_memory, 0, 0, 0, &answer, [](int64_t *value) {
        int device = 0, memory_khz = 0, bus_bits = 0, sm_khz = 0, sms = 0;
        CUDA_RETURN_IF_ERROR(cudaGetDevice(&device));
        CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, device));
        CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device));
        CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, device));
        CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        const double per_cycle =
            sm_khz > 0 && sms > 0 ? 2.0 * memory_khz * (bus_bits / 8.0) / ((double)sms * sm_khz) : 0;
        *value = per_cycle > kFastMemoryBytesPerCycle;
        return cudaSuccess;
    }));
    *fast = answer != 0;
    return cudaSuccess;
}

// Version 6's kernel for a plan's packs a thread a step (p.ppt: 1, 2, 4 or 8; the kernels' template parameter U), or
// nullptr where the op is not built for 8 (only RMSNorm's plain build is: fast_reread_choice). The launchers answer a
// nullptr with cudaErrorInvalidValue: a tuned plan the kernels cannot make (the binding's ValueError).
template <typename Kernel>
Kernel reread_pick(int ppt, Kernel one, Kernel two, Kernel four, Kernel eight = nullptr) {
    return ppt == 1 ? one : ppt == 2 ? two : ppt == 8 ? eight : four;
}
// The packs a step a tuning asks version 6 for (kRereadPacks: none asked).
inline int reread_step(const rowwise_tuning *tuning) {
    return tuning && tuning->packs_per_thread ? tuning->packs_per_thread : kRereadPacks;
}

// Version 6's block when none is asked for and none fits L2 (below): 1024 threads.
constexpr int kRereadThreads = 1024;

// Version 6's block for rows of row_bytes: the smallest of 512 and 1024 threads whose rows in flight (one a block, as
// many blocks an SM as the kernel's registers and threads allow: cudaOccupancyMaxActiveBlocksPerMultiprocessor) fit
// in a third of L2, so that the second walk reads L2, not device memory; 0 where none does. More blocks an SM hide
// more of a block's reduction behind another's loads; more rows in flight than L2 holds send the second walk to
// device memory. Measured on the H100 (NOTES.md, "Eleventh pass" and "Twelfth pass", % of the copy): bf16 LayerNorm
// rows of 32768 in blocks of 512 (two an SM, 17 MB of rows) 90 %, of 1024 (one an SM) 68 %; float32 rows of 32768
// in blocks of 512 (35 MB) 73 %, of 1024 (17 MB) 87 %; float32 RMSNorm rows of 65536 in blocks of 1024 (35 MB) 73 %.
// Where the memory is fast (device_fast_memory: the H200, 60 MB of L2), a block of 512 may fill half of L2, not a
// third: there a second block an SM, walking while the first reduces, was worth more than the second walk's L2
// misses. H200, % of the copy, a block of 1024 -> 512 (NOTES.md, "Twenty-ninth pass"): float32 rows of 20480 (two
// blocks of 512 an SM: 21 MB of rows in flight) softmax 65.8 -> 94.8, LayerNorm 65.9 -> 88.8, RMSNorm 74.7 -> 95.0;
// of 24576 (26 MB) 77.6 -> 91.6, 74.9 -> 87.5, 83.4 -> 91.9; bf16 rows of 40960 (21 MB) 61.5 -> 88.2, 59.9 -> 86.0,
// 70.7 -> 85.4; float32 rows of 28672 (30 MB, the longest that fit) about even, 85.9 -> 86.9, 80.0 -> 80.7, RMSNorm
// 86.4 -> 84.3 in one sweep and 82.4 -> 85.9 in the next. Rows of 32768 (35 MB) keep the block of 1024.
// Asks the device for its L2 size and SM count and the kernel's occupancy (queries, no launch), once per kernel,
// device and row length (remembered). A query that fails is the caller's error: its launch does not go ahead.
template <typename Kernel>
cudaError_t reread_block(Kernel kernel, int64_t row_bytes, int *threads) {
    if (kernel == nullptr) return cudaErrorInvalidValue;  // packs a step the op is not built for (reread_pick)
    int64_t found = 0;
    const cudaError_t asked = remembered(kernel, row_bytes, 0, 0, &found, [&](int64_t *answer) {
        int device = 0, l2 = 0, sms = 0;
        bool fast = false;
        CUDA_RETURN_IF_ERROR(cudaGetDevice(&device));
        CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
        CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        CUDA_RETURN_IF_ERROR(device_fast_memory(&fast));
        *answer = 0;
        for (const int block : {512, 1024}) {
            int blocks = 0;
            CUDA_RETURN_IF_ERROR(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, block, 0));
            const int64_t budget = fast && block == 512 ? (int64_t)l2 / 2 : (int64_t)l2 / 3;
            if (blocks > 0 && (int64_t)sms * blocks * row_bytes <= budget) {
                *answer = block;
                break;
            }
        }
        return cudaSuccess;
    });
    *threads = (int)found;
    return asked;
}

// Whether version 6's loads of x skip L1 (L1::no_allocate): where a row and the vectors each row reads beside it
// (`vectors` of them: the norms' weight, LayerNorm's bias) do not fit together in an SM's L1, which shares its storage
// with shared memory. Kept in L1, x's lines push out the weight and bias, which every row then reads from L2 again; a
// row that fits L1 beside them (or alone) gains from its second walk's L1 hits. Measured on the H100 (228 KB of
// shared memory an SM; NOTES.md, "Twenty-fifth pass"), % of the copy, L1 kept -> skipped: LayerNorm float32 4096 x
// 32768 (384 KB with weight and bias) 94.2 -> 95.4; bf16 4096 x 32768 (192 KB) 96.6 -> 95.3, float32 8192 x 12288
// 98.5 -> 97.9, the softmax float32 4096 x 32768 (128 KB, no vectors) 98.8 -> 98.0; RMSNorm float32 4096 x 32768
// (256 KB) 99.0 both ways. On the H200 float32 RMSNorm gains (4369 x 30720 82.7 -> 91.2, 4096 x 32768 86-89 ->
// 88-90) and bf16 RMSNorm loses (4096 x 65536 79.3 -> 77.5), so norm_run takes the rule for LayerNorm and float32
// RMSNorm (NOTES.md, "Thirtieth pass").
inline cudaError_t reread_skips_l1(int64_t row_bytes, int vectors, bool *skip) {
    int device = 0, shared = 0;
    CUDA_RETURN_IF_ERROR(cudaGetDevice(&device));
    CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&shared, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
    *skip = vectors > 0 && (1 + vectors) * row_bytes > (int64_t)shared;
    return cudaSuccess;
}

// Version 6 over a cluster, where version 0 takes it (reread_choice): rows of 16-bit LayerNorm too long for a block
// per row to keep its rows in flight in L2, in segments of kRereadSegmentBytes a block of kRereadClusterThreads (two
// an SM: a cluster's blocks hold as many rows' bytes in flight as version 6's blocks of 512 for rows of 32768), up to
// 8 blocks a row (the portable cluster), walking the rows (a wave of clusters). Measured on the H100 (NOTES.md,
// "Eighteenth pass"), % of the copy, version 4 -> this: bf16 LayerNorm 512 x 2^18 67.7 -> 82.1, 1024 x 2^17 75.4 ->
// 84.4. Not for float32 LayerNorm (2^18: 71.7 -> 71.1 at best), RMSNorm or the softmax (their version 4 as fast or
// faster at these rows: RMSNorm bf16 2^17 87.1 -> 85.1, softmax float32 2^18 92.9 -> 87.9), except the softmax where
// the memory is fast (the H200; softmax_run), whose float32 rows of up to twice that take segments of up to 128 KB.
constexpr int64_t kRereadSegmentBytes = 64 * 1024;
constexpr int kRereadClusterThreads = 512;
constexpr int kRereadClusterMax = 8;
constexpr int64_t kRereadClusterRowBytes = kRereadClusterMax * kRereadSegmentBytes;  // 512 KB: bf16 rows of 2^18
// Where the memory is fast (device_fast_memory: the H200), 16-bit rows take at most 4 blocks: segments of up to
// 128 KB, two blocks an SM still. H200, % of the copy, a block for each 64 KB -> 4 blocks (NOTES.md, "Thirty-eighth
// pass"): the softmax bf16 683 x 196608 (6 blocks) 68.3 -> 77.7, 512 x 2^18 (8) 69.8 -> 75.7, fp16 512 x 2^18 71.0 ->
// 75.2; LayerNorm bf16 66.1 -> 75.1 and 68.5 -> 70.1. 2 and 3 blocks were slower than 4 at these rows (bf16 2^18
// softmax: 65.0 at 2), and float32's rows of 512 KB-1 MB keep 8 (the softmax's 2^18 at 4: 64.8, at 8: 78).
constexpr int kRereadClusterMaxFast16 = 4;

// The block version 6 runs in, as a tuning (tuned: the caller's block; asked for by name: reread_block's, or
// kRereadThreads where no block fits L2), and whether version 0 (AUTO) takes version 6: for a forward of 16-byte rows
// that do not fit one block's registers (whole_limit threads x 4 packs: the op's whole-row limit) and that
// reread_block fits in L2 (H100: the softmax and LayerNorm bf16 rows of 16385-66180 elements, float32 8193-33090;
// RMSNorm bf16 32769-66180, float32 16385-33090), or, for rows of up to cluster_row_bytes (0: none; 16-bit LayerNorm
// on a GPU with clusters: kRereadClusterRowBytes, bf16 rows of 66181-262144 elements), over a cluster of a block for
// each kRereadSegmentBytes, up to kRereadClusterMax blocks (16-bit rows where the memory is fast:
// kRereadClusterMaxFast16; longer rows: longer segments).
// `kernel` is the one the plan will launch (its occupancy). Sets *version to the version to plan and *use to the
// tuning to plan it with (the caller's, or *chosen, naming the block); returns the error of a device query that
// failed.
template <typename T, typename Kernel>
cudaError_t reread_choice(int *version, int backward, int64_t n, int packed, const rowwise_tuning *tuning,
                          int whole_limit, int64_t cluster_row_bytes, Kernel kernel, rowwise_tuning *chosen,
                          const rowwise_tuning **use) {
    *use = tuning;
    if (backward || packed != kPacks || sizeof(T) == 8) return cudaSuccess;
    const bool tuned = tuning_names_a_plan(tuning);
    const int64_t row_bytes = n * (int64_t)sizeof(T);
    int threads = 0;
    if (*version == ROWWISE_AUTO) {
        if (tuned || n <= (int64_t)whole_limit * 4 * Pack<T>::size) return cudaSuccess;  // tuned: the caller's plan
        CUDA_RETURN_IF_ERROR(reread_block(kernel, row_bytes, &threads));
        if (threads == 0) {
            if (row_bytes > cluster_row_bytes) return cudaSuccess;
            int64_t blocks = ceil_div(row_bytes, kRereadSegmentBytes), most = kRereadClusterMax;
            if (sizeof(T) == 2) {
                bool fast = false;
                CUDA_RETURN_IF_ERROR(device_fast_memory(&fast));
                if (fast) most = kRereadClusterMaxFast16;
            }
            if (blocks > most) blocks = most;
            *version = ROWWISE_REREAD;
            *chosen = rowwise_tuning{kRereadClusterThreads, 0, (int)blocks, 1, 0};  // a wave of clusters walks the rows
            *use = chosen;
            return cudaSuccess;
        }
        *version = ROWWISE_REREAD;
    } else if (*version == ROWWISE_REREAD && !(tuning && tuning->block_threads)) {
        CUDA_RETURN_IF_ERROR(reread_block(kernel, row_bytes, &threads));
        if (threads == 0) threads = kRereadThreads;
    } else {
        return cudaSuccess;
    }
    *chosen = tuning ? *tuning : rowwise_tuning{};
    chosen->block_threads = threads;
    *use = chosen;
    return cudaSuccess;
}

// Version 0's choice of version 6 where the memory is fast (device_fast_memory: the H200), before reread_choice:
// RMSNorm's float32 and bf16 forwards of rows of 1024 elements up to half its whole-row limit (one step of 4 packs,
// below), and forwards of rows of 16-byte packs that take more than half the op's whole-row limit at 4 packs a thread
// (whole_limit / 2 < threads <= whole_limit: the softmax and LayerNorm 16-bit rows of 8193-16384 elements, RMSNorm
// 16-bit rows of 16385-32768, float32 RMSNorm rows of 8193-16384 and softmax rows of 4097-8192) and that are a whole
// number of the block's steps take version 6 with the block and packs a step the H200 measured best, instead of the
// whole row in one large block's registers. Version 6 reads the row twice (the second time from L2) but holds a few
// packs a thread, so that more rows are in flight an SM; a last step that fills part of the block lost (float32 softmax
// 4096 x 6144, 1.5 steps: 97.5 -> 85.5) or tied (fp16 4096 x 12288: 75.0 -> 74.7), except for RMSNorm, whose rows take
// version 6 whatever their last step (a single reduction a row: its whole rows lose more to their large blocks than its
// partial last step costs). H200, % of the copy, registers -> version 6 with a partial last step (NOTES.md,
// "Twenty-ninth pass"): float32 RMSNorm rows of 10240 (1.25 steps) 74.6 -> 92.1, 12288 78.4 -> 96.0, 14336 81.3 ->
// 98.7; bf16 rows of 20480 (2.5 steps) 72.3 -> 96.1, 28672 79.2 -> 93.8; where the softmax's and LayerNorm's 16-bit
// rows of 12288 tied or lost (79.4 -> 79.8, 70.7 -> 67.9). H200, % of the copy, registers -> version 6 (NOTES.md,
// "Twenty-sixth pass", "Twenty-seventh pass"): softmax bf16 4096 x 16384 80.5 -> 87.7, fp16 76.5 -> 88.7, float32 4096
// x 8192 90.0 -> 93.8 (512 threads, 2 packs a step); LayerNorm bf16 4096 x 16384 72.2 -> 77.6, fp16 71.6 -> 77.9 (512,
// 4); RMSNorm bf16 4096 x 32768 81.6 -> 90.9, 2048 x 32768 79.9 -> 85.4, fp16 4096 x 32768 81.7 -> 90.6 (512, 2),
// float32 2048 x 16384 81.7 -> 92.5 (1024, 2). float32 LayerNorm kept its registers (4096 x 8192: 85.0, version 6 at
// best 84.0). A tuned plan is the caller's. Sets *version and *use (pointing at *chosen) where it applies; returns the
// error of a device query that failed.
template <typename T>
cudaError_t fast_reread_choice(int op, int *version, int backward, int64_t n, int packed, const rowwise_tuning *tuning,
                               int whole_limit, rowwise_tuning *chosen, const rowwise_tuning **use) {
    if (*version != ROWWISE_AUTO || backward || packed != kPacks) return cudaSuccess;
    if (tuning_names_a_plan(tuning)) return cudaSuccess;
    const int64_t longest = (int64_t)whole_limit * 4 * Pack<T>::size;  // the longest row a block holds at 4 packs
    const int64_t packs = n / Pack<T>::size;
    // 16-bit rows and the float32 softmax:
    int threads = 512, step = 2;
    // RMSNorm's float32 and bf16 rows of 1024 elements up to half `longest`, which a block holds whole: one step of 4
    // packs a thread in a block of the fewest warps that hold the row, as the whole row's plan, but reading x twice
    // (the second time mostly from L1) instead of keeping it in registers, as torch.compile's kernel does. H200, % of
    // the copy, the whole row in registers -> this (NOTES.md, "Thirty-seventh pass"): float32 rows of 1024 97.3 ->
    // 98.6, 2048 97.1 -> 99.0, 3072 97.1 -> 99.2, 4096 96.5-97.2 -> 99.2-100.2, 5120 98.2 -> 98.8, 6144 97.1 -> 99.6,
    // 8192 96.1 -> 96.6; bf16 rows of 1024 95.8 -> 96.9, 4096 96.2 -> 97.9, 8192 95.4 -> 96.0. The softmax (bf16 4096:
    // 97.7 -> 88.4) and float32 LayerNorm (1024: 97.2 -> 97.0; 4096: 96.8 -> 92.3) lost; float16 was not measured.
    const bool short_rms = op == ROWWISE_RMS_NORM &&
                           (std::is_same<T, float>::value || std::is_same<T, __nv_bfloat16>::value) && n >= 1024 &&
                           n <= longest / 2;
    if (short_rms) {
        threads = (int)warp_threads(packs, 4);
        step = 4;
    } else if (sizeof(T) == 2) {
        // LayerNorm's 16-bit rows take 4 packs a step, and so do RMSNorm's bf16 rows that are a whole number of such
        // steps, whose kernel loads the weight before the step's first store (reread_write_weight_first). H200, % of
        // the copy, RMSNorm bf16 4096 x 32768: 2 packs 90.1, 4 packs 95.5 (NOTES.md, "Thirty-fourth pass"; the only
        // such row measured).
        if (op == ROWWISE_LAYER_NORM) step = 4;
        if (op == ROWWISE_RMS_NORM && std::is_same<T, __nv_bfloat16>::value &&
            n % ((int64_t)threads * 4 * Pack<T>::size) == 0)
            step = 4;
    } else if (std::is_same<T, float>::value && op == ROWWISE_RMS_NORM) {
        threads = 1024;
        // float32 RMSNorm rows past `longest`, up to twice it (16385-32768): steps of 8 packs a thread, as
        // torch.compile's kernel holds a row (a thread's 8 packs loaded at once, x kept in L1 for the second walk), in
        // blocks of 512 (two an SM) where a row is at most one and a half of their steps (up to 24576), else in one
        // step of the fewest warps that hold the row. H200, % of the copy, reread_choice's plan (4 packs a step) ->
        // this (NOTES.md, "Thirty-fifth pass"): 7943 x 16896 97.0 -> 99.8, 6553 x 20480 95.9 -> 98.2, 5461 x 24576
        // 92.0 -> 95.2, 4681 x 28672 (896 threads) 85.7 -> 97.7, 4096 x 32768 (1024) 92.7 -> 96.1; one step of the
        // fewest warps lost at 16896 (544 threads: 90.4) and 20480 (640: 96.1), where a block of 512 leaves room for a
        // second.
        if (n > longest && n <= 2 * longest) {
            threads = packs <= 3 * 512 * 8 / 2 ? 512 : (int)warp_threads(packs, 8);
            step = 8;
        }
    } else if (!(std::is_same<T, float>::value && op == ROWWISE_SOFTMAX)) {
        return cudaSuccess;
    }
    if (step != 8 && !short_rms) {  // rows of more than half `longest` and at most it, of whole steps (RMSNorm: any)
        const bool whole_steps = n % ((int64_t)threads * step * Pack<T>::size) == 0;
        if (n <= longest / 2 || n > longest || (!whole_steps && op != ROWWISE_RMS_NORM)) return cudaSuccess;
    }
    bool fast = false;
    CUDA_RETURN_IF_ERROR(device_fast_memory(&fast));
    if (!fast) return cudaSuccess;
    *version = ROWWISE_REREAD;
    *chosen = tuning ? *tuning : rowwise_tuning{};  // the caller's waves, if any
    chosen->block_threads = threads;
    chosen->packs_per_thread = step;
    *use = chosen;
    return cudaSuccess;
}

// The row-layout part of a plan (no device queries): threads per row, blocks per row, packs per thread.
// Returns false when `version` cannot hold a row of n elements (rowwise_unsupported says why).
// whole_limit: the largest group a whole forward row in 16-byte packs may take where its kernel fits 64 registers (the
// op's call, whole_threads(): kMaxThreads, or kMaxWholeThreads for RMSNorm); odd rows take kMaxWholeThreads.
template <typename T>
bool shape_plan(int backward, int version, int64_t n, const rowwise_tuning *tuning, bool clusters, Plan *p,
                int defaults = 0, int whole_limit = kMaxThreads) {
    constexpr int S = Pack<T>::size;
    const int max_group = backward ? kMaxBackwardThreads : kMaxThreads;
    // kBody: row r starts r * n * sizeof(T) bytes after row 0, so the place of its first 16-byte boundary repeats
    // every phase_rows rows (8 for bf16 and odd n, 4 for float32, 1 when rows are aligned).
    p->phase_rows = 1;
    while (p->phase_rows * n * (int64_t)sizeof(T) % 16 != 0) p->phase_rows *= 2;
    if (version == ROWWISE_REREAD) {  // forward, rows of whole 16-byte packs; one block of kRereadThreads a row
        if (backward || n * (int64_t)sizeof(T) % 16 != 0) return false;
        const int step = reread_step(tuning);
        // built for 1, 2, 4 or 8 packs a step; of the switches, HELD (and NEXT with it) only
        const int held = tuning ? tuning->flags & ~ROWWISE_FLAG_NEXT : 0;
        if ((step != 1 && step != 2 && step != 4 && step != 8) || (held && held != ROWWISE_FLAG_HELD)) return false;
        const int threads = tuning && tuning->block_threads ? tuning->block_threads : kRereadThreads;
        if (threads % kWarp != 0 || threads > 1024) return false;
        // Blocks a row: one, or a cluster of them (sm_90), each walking its segment of the row (reread_ctx).
        const int64_t C = tuning && tuning->blocks_per_row > 1 ? tuning->blocks_per_row : 1;
        if (C > 1 && (!clusters || C > kMaxCluster)) return false;
        p->mode = kReread;
        p->packed = kPacks;
        p->ppt = step;
        p->group = p->block = threads;
        p->segments = (int)C;
        p->seg_len = ceil_div(n / S, C) * S;
        p->waves = tuning ? tuning->waves : 0;
        p->flags = held ? tuning->flags : 0;                        // NEXT alone: dropped
        p->held_bytes = held ? (size_t)p->seg_len * sizeof(T) : 0;  // a segment's packs, slot k for pack k
        return true;
    }
    // Forward 4 packs per thread, backward 2 (two rows in registers). On the H100, 2 packs for bf16 forwards (half
    // the registers, twice the occupancy) ran slower than 4 at every shape: bytes in flight per thread won (NOTES.md).
    // RMSNorm's whole rows are the exception (one reduction a row): norm_run gives them 2 where that fits 256 threads.
    int ppt = tuning && tuning->packs_per_thread ? tuning->packs_per_thread : (backward ? 2 : 4);
    if (sizeof(T) == 8) ppt = backward ? 1 : 2;  // float64 is built for one size only
    p->waves = tuning ? tuning->waves : 0;
    p->flags = 0;  // whole rows: none of the experimental switches (below for rows over several blocks)
    p->ppt = ppt;
    const int64_t per_thread = (int64_t)ppt * S;
    const int64_t need = ceil_div(n, per_thread);
    const auto group_for = [](int64_t threads) {
        return threads <= kWarp ? next_pow2(threads) : (int)round_up(threads, kWarp);
    };
    // kBody (odd n): a whole row's group needs threads for the body's packs only, at most n / S of them (its head and
    // tail elements go to threads 0 .. S - 2 besides): bf16 rows of 4097 take 128 threads at 4 packs, as rows of 4096
    // do, not 160, and float32 backward rows of 4097 fit a block of 512 when the version is left to choose. The head
    // and tail need at least S threads; where even the single-element group is smaller (short rows), single elements.
    const int64_t body_need = ceil_div(n / S, ppt);
    const int body_group = group_for(body_need) > S ? group_for(body_need) : S;
    const bool body = p->packed == kBody && body_group <= group_for(need);
    // Whole rows: forwards whose kernels fit 64 registers take groups of up to whole_limit (the op's call, above);
    // the others up to max_group. (The layout a whole row ends up with: a body layout whose body needs more threads
    // than single elements do falls back to single elements, below.)
    // Odd rows (an aligned body), which version 6 cannot take, go whole into up to kMaxWholeThreads for every op
    // rather than over a cluster, where that layout ran at 29-50 % of the copy on the H100 (NOTES.md,
    // "Twenty-first pass").
    const int whole_layout = p->packed == kBody && !body ? (int)kSingles : p->packed;
    const int limit = whole_layout == kBody ? kMaxWholeThreads : whole_limit;
    const int whole_max = !backward && whole_forward_fits_64(sizeof(T), ppt, whole_layout) && limit > max_group
                              ? (limit < kMaxWholeThreads ? limit : kMaxWholeThreads)
                              : max_group;
    const bool fits = need <= whole_max || (version == ROWWISE_AUTO && body && body_group <= whole_max);
    if (version == ROWWISE_REGISTERS || (version == ROWWISE_AUTO && fits)) {
        if (!fits) return false;
        p->mode = kWhole;
        p->segments = 1;
        p->seg_len = n;
        p->group = body ? body_group : group_for(need);
        const int target = tuning && tuning->block_threads ? tuning->block_threads : (backward ? 512 : 256);
        const int groups = target / p->group > 1 ? target / p->group : 1;
        p->block = groups * p->group;
        if (p->block > whole_max) p->block = p->group;
        if (p->packed == kBody && !body) p->packed = kSingles;
        return true;
    }
    // A row over C blocks. Packs per thread, where tune leaves them to the kernels: float32 forwards take 8 (on the
    // H100 at 4096 x 32768: LayerNorm 587 -> 436 µs, RMSNorm 465 -> 398; NOTES.md, "Long rows: the switches
    // measured"), and so do bfloat16 forwards with the switches whose 16-byte rows need 4 or more blocks of
    // kMaxThreads at 4 packs (n > 3 * 16384): twice the bytes a block moves a row step for the same reductions and
    // waits. H100, % of the copy, 4 -> 8 packs: 2^18 softmax 72 -> 84, LayerNorm 50 -> 67, RMSNorm 81 -> 83; 131072:
    // 75 -> 87, 60 -> 74, 82 -> 85; 65536: LayerNorm 74 -> 81, the others the same (NOTES.md, "Seventh pass").
    // The switches: those tune asks for, or (0) the op's defaults; ROWWISE_FLAG_NONE: none, the kernels before them.
    const int asked = tuning ? tuning->flags : 0;
    const int switches = asked != 0 ? asked & ROWWISE_FLAG_ALL & ~(ROWWISE_FLAG_HELD | ROWWISE_FLAG_NEXT) : defaults;
    if (!backward && !(tuning && tuning->packs_per_thread)) {
        if (sizeof(T) == 4) ppt = 8;
        if (std::is_same<T, __nv_bfloat16>::value && p->packed == kPacks && switches != 0 &&
            ceil_div(n, (int64_t)max_group * ppt * S) >= 4)
            ppt = 8;
    }
    p->ppt = ppt;
    // Asked for, the switches are the caller's; by default they apply where kernels are built for them (bfloat16 and
    // float32, the pack counts of pick_experimental_*).
    const bool built = (std::is_same<T, float>::value || std::is_same<T, __nv_bfloat16>::value) &&
                       (backward ? ppt <= 2 : ppt >= 2 && ppt <= 8);
    p->flags = asked != 0 || built ? switches : 0;
    const int64_t capacity = (int64_t)max_group * ppt * S;
    int64_t C = tuning && tuning->blocks_per_row ? tuning->blocks_per_row : ceil_div(n, capacity);
    // In a cluster, at least kClusterMin blocks a row (smaller blocks): more of them per SM, at different steps of
    // their rows, keep loads in flight while others reduce (H100, 4096 x 32768 bf16: softmax forward 213 -> 199 µs,
    // LayerNorm backward 462 -> 427; NOTES.md).
    // (Rows that fit one block, in version 4 by name, keep 2 blocks: 8 would leave blocks of a warp or less.)
    if (!(tuning && tuning->blocks_per_row) && clusters && version != ROWWISE_SPLIT && C >= 2 && C < kClusterMin)
        C = kClusterMin;
    // (Backward rows over a cluster: each launcher then picks its own blocks, cluster_backward_blocks.)
    if (version != ROWWISE_AUTO && C < 2) C = 2;  // versions 4 and 5 asked for by name: at least two blocks a row
    // An empty row (n == 0) gets a segment of one pack: nothing runs, but C below must not divide by zero.
    p->seg_len = round_up(n > 0 ? ceil_div(n, C) : 1, S);
    C = ceil_div(n, p->seg_len);
    if (C < 1) C = 1;
    p->segments = (int)C;
    p->group = (int)warp_threads(p->seg_len, (int64_t)ppt * S);
    if (p->group > max_group) return false;
    p->block = p->group;
    const bool cluster = version == ROWWISE_CLUSTER || (version == ROWWISE_AUTO && clusters && C <= kMaxCluster);
    if (version == ROWWISE_CLUSTER && (!clusters || C > kMaxCluster)) return false;
    p->mode = cluster ? kCluster : kSplitStats;
    // The experimental switches that apply (rowwise.h): rows over several blocks in 16-byte packs; staged rows in the
    // forward only. A plan with any takes the kernels built for them (pick_experimental_*), which REBUILT names.
    if (p->packed != kPacks) p->flags = 0;
    if (backward) p->flags &= ~(ROWWISE_FLAG_STAGE_NEXT | ROWWISE_FLAG_HOLD_PARAMS);
    if (ppt != 8) p->flags &= ~ROWWISE_FLAG_HOLD_PARAMS;
    if (p->flags) p->flags |= ROWWISE_FLAG_REBUILT;
    return true;
}

}  // namespace rowwise

namespace rowwise {

// A backward plan of rows over a cluster with the switches, 2 packs a thread: the fewest blocks of `threads` that hold
// a row of n (0 for any other plan). Each launcher replans such rows with it (softmax_run, norm_run): the blocks a
// thread's registers allow, not shape_plan's kClusterMin blocks of n / 64 (float32) or n / 128 (16-bit) threads,
// which the row length alone sets (float32 rows of 6144: blocks of 96). The caller checks the count fits a cluster.
template <typename T>
int64_t cluster_backward_blocks(const Plan &p, int64_t n, int threads) {
    if (!(p.flags && p.mode == kCluster && p.ppt == 2)) return 0;
    return ceil_div(n, (int64_t)threads * 2 * Pack<T>::size);
}

// ---- from a plan to a launch -------------------------------------------------------------------------------------
inline void cluster_config(cudaLaunchConfig_t *config, cudaLaunchAttribute *attribute, const Plan &p,
                           cudaStream_t stream) {
    *config = cudaLaunchConfig_t{};
    config->gridDim = dim3((unsigned)p.grid);
    config->blockDim = dim3((unsigned)p.block);
    config->dynamicSmemBytes = p.smem;
    config->stream = stream;
    attribute->id = cudaLaunchAttributeClusterDimension;
    attribute->val.clusterDim.x = (unsigned)p.segments;
    attribute->val.clusterDim.y = 1;
    attribute->val.clusterDim.z = 1;
    config->attrs = attribute;
    config->numAttrs = 1;
}

// Whether a plan launches clusters: version 4, and version 6 with several blocks a row.
inline bool launches_clusters(const Plan &p) {
    return p.mode == kCluster || (p.mode == kReread && p.segments > 1);
}

// How many clusters of this plan the GPU holds at once (0: none fits, e.g. too many blocks per cluster).
template <typename Kernel>
cudaError_t active_clusters(Kernel kernel, const Plan &p, int *clusters) {
    int64_t value = 0;
    CUDA_RETURN_IF_ERROR(remembered(kernel, p.segments, p.block, (int64_t)p.smem, &value, [&](int64_t *answer) {
        if (p.segments > 8)
            CUDA_RETURN_IF_ERROR(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
        cudaLaunchConfig_t config;
        cudaLaunchAttribute attribute;
        Plan one = p;
        one.grid = p.segments;
        cluster_config(&config, &attribute, one, nullptr);
        int fit = 0;
        CUDA_RETURN_IF_ERROR(cudaOccupancyMaxActiveClusters(&fit, kernel, &config));
        *answer = fit;
        return cudaSuccess;
    }));
    *clusters = (int)value;
    return cudaSuccess;
}

// kBody: the rows a group walks (one every slots * R rows) must all start at the same place relative to a 16-byte
// boundary, the place Slice::locate finds from the group's first row; then a thread holds the same columns in every
// row (the weight's gradient sums them per fixed column). So slots * R is made a multiple of phase_rows. Not needed
// when no group gets a second row.
inline int64_t body_walkers(const Plan &p, int64_t walkers, int groups, int64_t rows) {
    if (p.packed != kBody || walkers * groups >= rows) return walkers;
    int64_t m = p.phase_rows;
    for (int g = groups; m > 1 && g % 2 == 0; g /= 2) m /= 2;  // phase_rows / gcd(phase_rows, R): powers of two
    return walkers / m * m > m ? walkers / m * m : m;
}

// A launch gets 48 KB of shared memory, static and dynamic together, unless the kernel asks for more: this asks when
// `dynamic` and the kernel's static part (its Exchange) pass 48 KB. (Dynamic alone at exactly 48 KB, with a static
// part on top, failed with cudaErrorInvalidConfiguration: float32 LayerNorm backward, odd N.)
// Asked once per kernel, device and size (remembered). The attribute is raised, never lowered: it is the most any
// launch of the kernel may take, and a size remembered as allowed must stay allowed (lowered for a smaller plan, it
// made a later launch of a larger size, remembered as done, fail with cudaErrorInvalidConfiguration: float32 softmax
// rows of 16384, then 65536, then 2^17; tests/test_gpu_paths.py).
template <typename Kernel>
cudaError_t allow_shared(Kernel kernel, size_t dynamic) {
    int64_t done = 0;
    return remembered(kernel, (int64_t)dynamic, 0, 0, &done, [&](int64_t *answer) {
        cudaFuncAttributes attributes;
        CUDA_RETURN_IF_ERROR(cudaFuncGetAttributes(&attributes, kernel));
        *answer = 1;
        if (attributes.sharedSizeBytes + dynamic <= 48 * 1024) return cudaSuccess;
        if ((size_t)attributes.maxDynamicSharedSizeBytes >= dynamic) return cudaSuccess;  // a larger size is allowed
        return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dynamic);
    });
}

// STAGE_NEXT's shared memory a block: two sets of each thread's packs (Staging).
inline size_t staged_bytes(const Plan &p) {
    return 2 * (size_t)p.block * p.ppt * course::kPackBytes;
}

// The dynamic shared memory a block of `kernel` may have on this device: the opt-in limit less its static memory.
template <typename Kernel>
cudaError_t shared_room(Kernel kernel, size_t *room) {
    int64_t value = 0;
    CUDA_RETURN_IF_ERROR(remembered(kernel, -1, 0, 0, &value, [&](int64_t *answer) {
        int device = 0, optin = 0;
        cudaFuncAttributes attributes;
        CUDA_RETURN_IF_ERROR(cudaGetDevice(&device));
        CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
        CUDA_RETURN_IF_ERROR(cudaFuncGetAttributes(&attributes, kernel));
        *answer = optin > (int)attributes.sharedSizeBytes ? optin - (int64_t)attributes.sharedSizeBytes : 0;
        return cudaSuccess;
    }));
    *room = (size_t)value;
    return cudaSuccess;
}

// HELD: `dynamic` bytes of shared memory for a block that holds its row (segment), or cudaErrorInvalidValue (the
// binding's ValueError) where a block cannot have that much, asked before any attribute is set.
template <typename Kernel>
cudaError_t allow_held(Kernel kernel, size_t dynamic) {
    size_t room = 0;
    CUDA_RETURN_IF_ERROR(shared_room(kernel, &room));
    if (dynamic > room) return cudaErrorInvalidValue;
    return allow_shared(kernel, dynamic);
}

// Grid size, shared memory and workspace of a plan whose row layout shape_plan chose. A cluster plan that the GPU
// cannot hold (no cluster of that size fits) becomes a split plan when the version was left to choose (AUTO).
// backward_smem_per_thread: the dynamic shared memory a backward block needs per thread (the norms keep each thread's
// dweight/dbias sums there; the softmax needs none).
template <typename Kernel>
cudaError_t size_plan(Kernel kernel, int version, int backward, int64_t rows, int64_t n, size_t acc_bytes,
                      size_t stats_bytes, int partials, Plan *p, size_t backward_smem_per_thread = 0) {
    const int groups = p->block / p->group;
    p->smem = backward ? backward_smem_per_thread * (size_t)p->block : 0;
    if (p->flags && p->mode != kReread) {  // an EXP kernel (shape_plan): its mailbox, then two sets of staged packs
        p->smem += mailbox_bytes(stats_bytes);
        if (p->flags & ROWWISE_FLAG_STAGE_NEXT) p->smem += staged_bytes(*p);
        // HOLD_PARAMS: the vectors the op asked to hold (p->held: the weight, and LayerNorm's bias; the softmax none)
        // that fit; the switch is dropped where none is held.
        if (p->flags & ROWWISE_FLAG_HOLD_PARAMS) {
            const size_t vector = (size_t)p->block * p->ppt * course::kPackBytes;
            size_t room = 0;
            CUDA_RETURN_IF_ERROR(shared_room(kernel, &room));
            // Staged rows in one set of slots, not two, where that makes room for both vectors (LayerNorm).
            if (p->held == 2 && (p->flags & ROWWISE_FLAG_STAGE_NEXT) && p->smem + 2 * vector > room &&
                p->smem - staged_bytes(*p) / 2 + 2 * vector <= room) {
                p->smem -= staged_bytes(*p) / 2;
                p->flags |= kStageOneSet;
            }
            const int fit = room > p->smem ? (int)((room - p->smem) / vector) : 0;
            if (p->held > fit) p->held = fit;
            if (p->held == 0) p->flags &= ~ROWWISE_FLAG_HOLD_PARAMS;
            if (p->held == 2) p->flags |= kHoldBias;
            p->smem += (size_t)p->held * vector;
        }
        CUDA_RETURN_IF_ERROR(allow_shared(kernel, p->smem));
    }
    const int64_t waves = p->waves > 0 ? p->waves : backward ? kBackwardWaves : kForwardWaves;
    // Whole rows: by default a block for every row group, no walk, unless the backward sums dweight/dbias per block
    // (then one wave, so few partial rows to add). On the H100 the walk of 4 waves cost the forwards 3-6 % and the
    // softmax backward 8 % (NOTES.md, "Whole rows: a block per row group").
    // Version 6: a block for every row too (NOTES.md, "Thirteenth pass": 4096 x 32768 forward, 92-94 % of the copy
    // with blocks walking 4 waves of rows, 94-99 % with a block a row, as Triton's and QuACK's grids are).
    const bool every_row = p->waves == 0 && (p->mode == kWhole || p->mode == kReread) && !(backward && partials > 0);
    // The grid: `walkers` blocks (clusters) of C blocks each, within the 2^31 - 1 blocks a launch may have.
    // kBody: body_walkers keeps every row a group walks at one 16-byte phase (aligned rows: the same walkers).
    const auto grid_of = [p, groups, rows](int64_t walkers) {
        const int64_t most = 2147483647 / p->segments;
        walkers = body_walkers(*p, walkers < most ? walkers : most, groups, rows);
        return (walkers < 1 ? 1 : walkers) * p->segments;
    };
    if (p->mode == kReread) {  // version 6: over a cluster, reread_combine's mailbox; then (HELD) the segment's slots
        p->smem = (launches_clusters(*p) ? mailbox_bytes(stats_bytes) : 0) + p->held_bytes;
        if (p->held_bytes) CUDA_RETURN_IF_ERROR(allow_held(kernel, p->smem));
    }
    if (launches_clusters(*p)) {
        int clusters = 0;
        CUDA_RETURN_IF_ERROR(active_clusters(kernel, *p, &clusters));
        if (clusters >= 1) {
            p->grid = grid_of(every_row || rows < clusters * waves ? rows : clusters * waves);
        } else if (version == ROWWISE_CLUSTER || p->mode == kReread) {
            return cudaErrorInvalidConfiguration;  // version 4 by name, or version 6 (no split form)
        } else {
            p->mode = kSplitStats;  // AUTO: the portable way
        }
    }
    if (!launches_clusters(*p)) {
        int64_t wave = 0;
        CUDA_RETURN_IF_ERROR(course::blocks_per_wave(kernel, p->block, p->smem, &wave));
        const int64_t need = ceil_div(rows, groups);
        const int64_t per_wave = wave / p->segments > 0 ? wave / p->segments : 1;
        p->grid = grid_of(every_row || need < per_wave * waves ? need : per_wave * waves);
    }
    if (p->mode != kCluster) p->flags &= ~ROWWISE_FLAG_MAILBOX;
    p->slots = p->grid / p->segments;
    p->stats_bytes = p->mode == kSplitStats ? align256((size_t)rows * p->segments * stats_bytes) : 0;
    p->partials = backward ? partials : 0;
    p->partial_bytes = align256((size_t)p->slots * n * acc_bytes);
    return cudaSuccess;
}

inline size_t workspace_of(const Plan &p) {
    return p.stats_bytes + (size_t)p.partials * p.partial_bytes + p.table_bytes;
}

inline Layout layout_of(const Plan &p, int mode) {
    return Layout{p.group, p.segments, p.seg_len, mode, p.packed, p.flags, p.table};
}

// Launch `kernel` as the plan says: a cluster launch (cudaLaunchKernelEx with the cluster's size as an attribute)
// or a plain one.
template <typename... Params, typename... Args>
cudaError_t launch(void (*kernel)(Params...), const Plan &p, cudaStream_t stream, Args... args) {
    if (launches_clusters(p)) {
        cudaLaunchConfig_t config;
        cudaLaunchAttribute attribute;
        cluster_config(&config, &attribute, p, stream);
        return cudaLaunchKernelEx(&config, kernel, args...);
    }
    kernel<<<(unsigned)p.grid, (unsigned)p.block, p.smem, stream>>>(args...);
    return cudaGetLastError();
}

// The finishing launch of a backward: each wanted gradient is the sum of its partial rows.
template <typename T>
cudaError_t sum_partials(const Plan &p, const void *partial, int64_t n, void *out, cudaStream_t stream) {
    sum_partials_kernel<T><<<(unsigned)ceil_div(n, 32), dim3(32, 32), 0, stream>>>(
        static_cast<const acc_t<T> *>(partial), p.slots, n, static_cast<T *>(out));
    return cudaGetLastError();
}

// Where the parts of the workspace start.
struct Workspace {
    void *stats, *partial[2], *table;
};
inline Workspace carve(const Plan &p, void *base) {
    char *at = static_cast<char *>(base);
    Workspace w;
    w.stats = at;
    w.partial[0] = at + p.stats_bytes;
    w.partial[1] = at + p.stats_bytes + p.partial_bytes;
    w.table = at + p.stats_bytes + (size_t)p.partials * p.partial_bytes;
    return w;
}

// kBody with a weight: rows of odd length start at S places relative to 16 bytes, and a body pack then needs the
// weight's elements head .. head + S - 1 of its columns, which straddle two of the weight's packs. The launcher can
// make a table of S copies, copy h shifted by h elements (copy 0 is the weight), so that each body pack reads one
// aligned pack of copy `head`: a small launch (S n elements) instead of two loads and a shift in every pack of every
// row. Made for the backward in 16-bit types (8 elements a pack, the shift costs most) where the rows are many more
// than the table's copies (kTableRows). H100, bf16 backward, % of the copy: 16384 x 4097 LayerNorm 72 -> 75, RMSNorm
// 79 -> 86; 65536 x 1025 62 -> 65, 72 -> 78. Not for the forwards (the launch cost more than the reads saved: RMSNorm
// 96 -> 94; LayerNorm, two vectors, 84 -> 85-90 with a launch each, still far from the copy: NOTES.md, "Seventeenth
// pass") nor float32 (4 elements a pack, a shift of whole words: RMSNorm 93 -> 91). NOTES.md, "Eighth pass".
constexpr int64_t kTableRows = 64;

template <typename T>
__global__ void shift_table_kernel(const T *__restrict__ vec, int64_t n, int64_t stride, T *__restrict__ table) {
    const int64_t count = (int64_t)Pack<T>::size * stride;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t h = i / stride, column = i % stride + h;
        table[i] = column < n ? vec[column] : from_acc<T>(acc_t<T>(0));
    }
}

// The plan's table of the weight, for kBody backward launches of many rows in 16-bit types.
template <typename T>
void plan_table(Plan *p, int64_t rows, int64_t n, bool weight) {
    if (p->packed != kBody || sizeof(T) != 2 || !weight || rows < kTableRows) return;
    p->table = round_up(n, Pack<T>::size);
    p->table_bytes = align256((size_t)Pack<T>::size * p->table * sizeof(T));
}

// Makes the planned table from *w in the workspace and points *w at it (nothing when the plan has none).
template <typename T>
cudaError_t make_table(const Plan &p, const Workspace &ws, int64_t n, const T **w, cudaStream_t stream) {
    if (p.table == 0) return cudaSuccess;
    T *table = static_cast<T *>(ws.table);
    int64_t blocks = 0;
    CUDA_RETURN_IF_ERROR(
        course::grid_size(shift_table_kernel<T>, 256, 0, (int64_t)Pack<T>::size * p.table, 1, &blocks));
    shift_table_kernel<T><<<(unsigned)blocks, 256, 0, stream>>>(*w, n, p.table, table);
    CUDA_RETURN_IF_ERROR(cudaGetLastError());
    *w = table;
    return cudaSuccess;
}

inline bool args_packed(const rowwise_args *a, size_t element) {
    return a->n * element % 16 == 0 && aligned16(a->x) && aligned16(a->dy) && aligned16(a->w) && aligned16(a->b) &&
           aligned16(a->y);
}

// The row layout for these tensors (RowLayout). kPacks when every row is 16-byte aligned. Otherwise kBody when the
// row tensors (x, dy, y) lie alike modulo 16 bytes, so that a row's first 16-byte boundary is at the same column in
// each of them, and the weight and bias start on a 16-byte boundary; else single elements. (shape_plan may still
// turn kBody into kSingles: groups of fewer than S threads.)
inline int row_layout(const rowwise_args *a, size_t element) {
    if (args_packed(a, element)) return kPacks;
    const uintptr_t phase = reinterpret_cast<uintptr_t>(a->x) & 15;
    const auto alike = [&](const void *p) { return p == nullptr || (reinterpret_cast<uintptr_t>(p) & 15) == phase; };
    if (phase % element == 0 && alike(a->dy) && alike(a->y) && aligned16(a->w) && aligned16(a->b)) return kBody;
    return kSingles;
}

// A plan's text (rowwise_describe).
inline void describe(const Plan &p, char *text, size_t bytes) {
    if (p.mode == kReread && (p.flags & ROWWISE_FLAG_HELD)) {
        char where[64] = "a";
        if (p.segments > 1) snprintf(where, sizeof where, "a cluster of %d", p.segments);
        snprintf(text, bytes,
                 "reread: %s %d-thread block%s per row, %s into shared memory once and walking it there twice%s, "
                 "%d packs of 16 bytes per thread a step, %lld blocks",
                 where, p.block, p.segments > 1 ? "s" : "", p.segments > 1 ? "each copying its segment" : "copying it",
                 p.flags & ROWWISE_FLAG_NEXT ? " (the next row copied in as it writes)" : "", p.ppt, (long long)p.grid);
        return;
    }
    if (p.mode == kReread && p.segments > 1) {
        snprintf(text, bytes,
                 "reread: a cluster of %d %d-thread blocks per row, each walking its segment twice (the second time "
                 "from L2), %d packs of 16 bytes per thread a step, %lld blocks",
                 p.segments, p.block, p.ppt, (long long)p.grid);
        return;
    }
    if (p.mode == kReread) {
        snprintf(text, bytes,
                 "reread: a %d-thread block per row walks it twice (the second time from L2), %d packs of 16 bytes "
                 "per thread a step%s%s, %lld blocks",
                 p.block, p.ppt, p.skip_l1 ? " (x past L1, leaving it to the parameters)" : "",
                 p.built ? ", built for its block size" : "", (long long)p.grid);
        return;
    }
    static const char *names[] = {"registers", "cluster", "split", "split"};
    static const char *layouts[] = {" (as single elements)", "",
                                    " (from each row's first 16-byte boundary, a scalar head and tail)"};
    snprintf(text, bytes,
             "%s: %d threads per row, %d packs of 16 bytes per thread%s, %d block%s per row, "
             "%d-thread blocks, %lld blocks",
             names[p.mode], p.group, p.ppt, layouts[p.packed], p.segments, p.segments > 1 ? "s" : "", p.block,
             (long long)p.grid);
    if (p.flags) {  // the switches the launch takes (rowwise.h, ROWWISE_FLAG_*)
        const size_t used = strlen(text);
        snprintf(text + used, bytes > used ? bytes - used : 0, "; switches:%s%s%s%s%s",
                 p.flags & ROWWISE_FLAG_PREFETCH_L2 ? " L2 prefetch" : "",
                 !(p.flags & ROWWISE_FLAG_STAGE_NEXT) ? ""
                 : p.flags & kStageOneSet             ? " staged rows (one set)"
                                                      : " staged rows",
                 p.flags & ROWWISE_FLAG_MAILBOX ? " mailbox" : "", p.flags & ROWWISE_FLAG_REBUILT ? " rebuilt" : "",
                 !(p.flags & ROWWISE_FLAG_HOLD_PARAMS) ? ""
                 : p.flags & kHoldBias                 ? " held weight and bias"
                                                       : " held weight");
    }
    if (p.registers) {  // a kernel of fewer registers, for more blocks an SM
        const size_t used = strlen(text);
        snprintf(text + used, bytes > used ? bytes - used : 0, "; a kernel of %d registers a thread", p.registers);
    }
    if (p.fixed) {  // a kernel with the row length built in (fixed_ctx)
        const size_t used = strlen(text);
        snprintf(text + used, bytes > used ? bytes - used : 0, "; a kernel built for this row length");
    }
    if (p.table) {  // kBody: the weight as a table of shifted copies (plan_table)
        const size_t used = strlen(text);
        snprintf(text + used, bytes > used ? bytes - used : 0, "; the weight from shifted copies");
    }
}

}  // namespace rowwise
