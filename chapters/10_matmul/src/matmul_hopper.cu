/*
 * matmul_hopper.cu — rung 11: C = A·B in bf16/fp16 on Hopper's tensor cores, the way Hopper wants to be fed.
 *
 * What changed from rung 10 (matmul_tensor.cu), four things, all new in Hopper (compute capability 9.0):
 *   - wgmma: one instruction for a WARPGROUP (4 warps, 128 threads) multiplies a 64×256 tile of A·B over k = 16
 *     (m64n256k16). Its operands come straight from shared memory, described by 64-bit "matrix descriptors"
 *     (address, strides, swizzle mode): no ldmatrix, no fragments in registers for A and B. It is asynchronous: a
 *     warpgroup issues several, commits them as a group and waits for the group (wgmma.commit_group/wait_group).
 *   - TMA (the tensor memory accelerator): ONE thread asks the copy engine for a whole 2-D box of a matrix
 *     (cp.async.bulk.tensor.2d), described by a tensor map made on the host with cuTensorMapEncodeTiled. The engine
 *     computes the addresses, fills with zeros what lies outside the matrix (the tails of M, N and K), and writes
 *     the box into shared memory already swizzled the way wgmma reads it (128-byte swizzle on both sides).
 *   - mbarrier: a barrier object in shared memory that counts arrivals AND bytes. The copy engine "arrives" with
 *     the bytes it wrote (complete_tx); a waiting thread polls the barrier's phase bit. A ring of STAGES buffers has
 *     two per stage: full[s] (the copy landed) and empty[s] (both consumers are done with it).
 *   - warp specialisation: warpgroup 0 is the PRODUCER (one thread issues the copies; the warpgroup gives its
 *     registers back with setmaxnreg.dec), warpgroups 1 and 2 are CONSUMERS (each takes 240 registers with
 *     setmaxnreg.inc: 128 fp32 accumulators for its 64×256 half of the block's 128×256 tile).
 * Not done in the op's schedule (where the last 10 % lives; README.md, part 2): a persistent grid whose epilogue
 * overlaps the next tile's loads, thread-block clusters with TMA multicast, stores through shared memory and TMA.
 * All three, and "ping-pong" consumers, are written as variants (WgmmaConfig below) that src/wgmma_variants.cu times
 * against cuBLAS.
 *
 * Layouts. A (M×K, row-major) is K-major: a 128×64 box is 128 rows of 128 bytes, swizzled in 1024-byte atoms of
 * 8 rows (descriptor: SBO = 1024 bytes between 8-row groups; k-steps of 16 elements move the start by 32 bytes).
 * B (K×N, row-major) is MN-major ("transposed" for wgmma, tnspB = 1): the 64×256 tile is 4 boxes of 64 k-rows × 64
 * columns (128 bytes); descriptor LBO = 8192 bytes between the 64-column boxes, SBO = 1024 bytes between 8-row
 * groups of k; a k-step of 16 rows moves the start by 2048 bytes. These numbers follow CUTLASS's make_gmma_desc
 * (cute/atom/mma_traits_sm90_gmma.hpp, canonical layouts K-major and MN-major for SW128).
 * Requirements (matmul_tma_compatible, checked by the dispatcher): column stride 1, row strides multiples of 16
 * bytes, 16-byte aligned addresses. Other operands run rung 10.
 *
 * Built for sm_90a alone (Makefile: -gencode=arch=compute_90a,code=sm_90a): wgmma and setmaxnreg exist only there.
 * The kernel's body is inside #if defined(__CUDA_ARCH_FEAT_SM90_ALL), so any other target compiles an empty kernel
 * (and the dispatcher never launches it: matmul_tensor_rung asks for compute capability 9.0).
 * No libcuda at link time: cuTensorMapEncodeTiled comes from the driver through the runtime
 * (cudaGetDriverEntryPointByVersion), so the extension builds on a machine with no driver.
 */
#include <cuda.h> /* CUtensorMap and its enums only: the function comes through the runtime */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h> /* PFN_cuTensorMapEncodeTiled */
#include <stdint.h>

#include <algorithm>
#include <type_traits>

#include "course_check.h"
#include "matmul.h"
#include "matmul_store.cuh"

namespace {

constexpr int kBM = 128, kBN = 256, kBK = 64; /* block tile; BK = 64 elements = 128 bytes: one swizzle row */
constexpr int kConsumers = 2;                 /* consumer warpgroups, 64 rows of the block tile each */
constexpr int kThreads = 128 * (1 + kConsumers);
constexpr int kBoxN = 64; /* B's box: 64 columns (128 bytes) × kBK rows */
/* B's tile and box; A's tile and the stage depend on the schedule (WgmmaConfig::kTileABytes, kStageBytes: 16 + 32 =
 * 48 KB a stage, ping-pong 8 + 32 = 40 KB). */
constexpr int kTileBBytes = kBN * kBK * 2, kBoxBBytes = kBK * kBoxN * 2;
constexpr int kGroupM = 8; /* blocks go down 8 tile rows before moving right (L2 reuse, as rungs 7-10) */

/* The kernel's schedule, a compile-time choice like rung 10's MmaTileShape. The op runs WgmmaTile (persistent, C
 * stored by TMA, 3 stages), the fastest that src/wgmma_variants.cu measured against cuBLAS (NOTES.md, "Rung 11:
 * variants"); WgmmaFirst is the first version (4 stages, one block per tile, wait_group 0, no cluster).
 *   STAGES       shared-memory ring depth, 48 KB a stage (4 is the most that fits in 227 KB).
 *   PERSISTENT   false: one block per output tile. true: one block per SM (or as many as fit), each walking a
 *                static list of tiles (tile = first + i × blocks); the producer loads the next tile's K-tiles while
 *                the consumers still store the previous tile from registers, so the pipeline fill is hidden.
 *   KEEP_ONE     false: each consumer waits for all its wgmmas after every K-tile (wait_group 0) and then releases
 *                the stage. true: wait_group 1, so the K-tile just issued keeps the tensor cores busy while the
 *                consumer releases the stage of the K-tile before it.
 *   CLUSTER      1, or 2: two blocks of a thread-block cluster compute vertically adjacent tiles (same columns of
 *                B); each loads its own A and half of B's boxes, and TMA multicasts each B box into both blocks'
 *                shared memory: B's L2 traffic is halved.
 *   TMA_STORE    false: the consumers store C from registers (two elements per store, straight to global memory).
 *                true: each consumer writes its 64×256 half of the tile into shared memory (bf16/fp16, 32 KB, in the
 *                128-byte swizzle) and one thread hands it to the copy engine (cp.async.bulk.tensor, global ←
 *                shared), which stores it while the consumers go back to the next tile's K-loop; 64 KB more shared
 *                memory, so at most 3 stages. C must suit TMA (row stride a multiple of 8 elements, 16-byte aligned
 *                address); otherwise the launch falls back to the same schedule with register stores.
 *   PINGPONG     false ("cooperative"): both consumers work on the same 128×256 tile, 64 rows each, and store it
 *                together while the tensor cores idle. true ("ping-pong", CUTLASS's name; persistent only): a tile is
 *                64×256, a stage holds 64 rows of A (8 KB) and B (32 KB), and the consumers take the block's tiles
 *                in turns (warpgroup 1 the 1st, 3rd, ...; warpgroup 2 the 2nd, 4th, ...). The ring is filled in tile
 *                order, so one consumer's K-loop follows the other's, and each consumer stores its tile while the
 *                other multiplies: the epilogue leaves the tensor cores' critical path. An mbarrier per consumer
 *                ("turn") lets a consumer start waiting on its next tile's stages only after the other one has
 *                waited on all of its own: the stage barriers' phase parities then never alias. The cost: B is
 *                loaded once per 64 rows instead of 128, 1.67x the L2 → shared memory bytes per flop. */
template <int STAGES, bool PERSISTENT, bool KEEP_ONE, int CLUSTER, bool TMA_STORE = false, bool PINGPONG = false>
struct WgmmaConfig {
    static constexpr int kStages = STAGES;
    static constexpr bool kPersistent = PERSISTENT;
    static constexpr bool kKeepOne = KEEP_ONE;
    static constexpr int kCluster = CLUSTER;
    static constexpr bool kTmaStore = TMA_STORE;
    static constexpr bool kPingPong = PINGPONG;
    using RegisterStore = WgmmaConfig<STAGES, PERSISTENT, KEEP_ONE, CLUSTER, false, PINGPONG>; /* the fallback */
    static constexpr int kTileM = kPingPong ? 64 : kBM; /* rows of one tile (one unit of the schedule) */
    static constexpr int kTileABytes = kTileM * kBK * 2, kStageBytes = kTileABytes + kTileBBytes;
    /* Tile rows a group walks down before moving right: 8 × 128 rows of C, as rung 10. */
    static constexpr int kGroupUnits = kGroupM * kBM / kTileM / kCluster;
    static constexpr size_t kStoreBytes = kTmaStore ? (size_t)kBM * kBN * 2 : 0; /* C's staging: 2 × 64×256 */
    static constexpr size_t kSharedBytes = (size_t)kStages * kStageBytes         /* tiles */
                                           + kStoreBytes                         /* C's staging (TMA_STORE) */
                                           + 2 * kStages * 8 + 16 /* full[], empty[], turn[2] mbarriers */
                                           + 1024;                /* room to align the tiles to 1024 bytes */
    /* setmaxnreg's split of the block's 384 × 168 registers (the cap at entry): 24 for the producer and 240 for
     * each consumer; with a cluster the producer needs more (the multicast's rank, mask, box loop: at 24 it
     * spills), so 40 and 232: 128 × 40 + 256 × 232 = 384 × 168. */
    static constexpr int kProducerRegisters = kCluster > 1 ? 40 : 24;
    static constexpr int kConsumerRegisters = kCluster > 1 ? 232 : 240;
    static_assert(128 * kProducerRegisters + 256 * kConsumerRegisters <= kThreads * 168, "more than the block has");
    static_assert(kStages >= 2 && kSharedBytes <= 227 * 1024, "the ring must fit in 227 KB of shared memory");
    static_assert(kCluster == 1 || kCluster == 2, "clusters of 1 or 2 blocks along M");
    static_assert(kGroupM % kCluster == 0 && (kBN / kBoxN) % kCluster == 0, "B's boxes split evenly");
    static_assert(!kPingPong || (kPersistent && kCluster == 1), "ping-pong: persistent, no cluster");
};
/* The op's: persistent, C stored by TMA, 3 stages (NOTES.md: 784 TFLOP/s at 4096³ against the first version's 687,
 * 102 % of cuBLAS; 6 % slower than the first version at 3000³, where a fixed tile order balances 288 tiles worse). */
using WgmmaTile = WgmmaConfig<3, true, false, 1, true>;
using WgmmaFirst = WgmmaConfig<4, false, false, 1>; /* the first version: one block per tile, C from registers */

template <typename T>
struct Element;
template <>
struct Element<__nv_bfloat16> {
    static constexpr CUtensorMapDataType kTmaType = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
};
template <>
struct Element<__half> {
    static constexpr CUtensorMapDataType kTmaType = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
/* ---- mbarrier ----------------------------------------------------------------------------------------------- */
__device__ __forceinline__ void mbarrier_init(uint32_t bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
/* One arrival that also tells the barrier to expect `bytes` more bytes from the copy engine in this phase. */
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbarrier_arrive(uint32_t bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
/* Waits until the phase with parity `parity` has completed (the barrier's phase bit has moved past it). A phase that
 * never completes (a byte count that does not match what TMA delivers, a wrong parity) would hang the GPU: after 10 s
 * of waiting (a whole 8192³ product takes ~2 ms) the thread traps, so the launch fails with an error instead. */
__device__ __forceinline__ uint64_t global_ns() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__device__ __forceinline__ void mbarrier_wait(uint32_t bar, uint32_t parity) {
    uint64_t start = 0;
    for (uint32_t tries = 0;; ++tries) {
        uint32_t done;
        asm volatile(
            "{\n"
            ".reg .pred p;\n"
            "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
            "selp.u32 %0, 1, 0, p;\n"
            "}\n"
            : "=r"(done)
            : "r"(bar), "r"(parity)
            : "memory");
        if (done) return;
        if (tries == 0) {
            start = global_ns();
        } else if (global_ns() - start > 10000000000ull) {
            __trap();
        }
    }
}

/* ---- TMA: one thread copies a 2-D box; the barrier counts its bytes ------------------------------------------ */
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap *map, int inner, int outer, uint32_t bar) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
            dst),
        "l"((uint64_t)map), "r"(inner), "r"(outer), "r"(bar)
        : "memory");
}

/* The same copy, delivered to the same shared-memory offset in every block of the cluster named in `mask` (bit r:
 * the block of rank r); each block's barrier at offset `bar` counts the bytes it received. */
[[maybe_unused]] __device__ __forceinline__ void tma_load_2d_multicast(uint32_t dst, const CUtensorMap *map, int inner,
                                                                       int outer, uint32_t bar, uint16_t mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
        "l"((uint64_t)map), "r"(inner), "r"(outer), "r"(bar), "h"(mask)
        : "memory");
}

/* ---- clusters ------------------------------------------------------------------------------------------------ */
__device__ __forceinline__ uint32_t cluster_rank() {
    uint32_t rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    return rank;
}
/* Every thread of every block of the cluster arrives, then waits for all of them (release / acquire: what each
 * thread did before, barrier inits included, is visible to the others after). */
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
}
/* One arrival on the barrier at shared offset `bar` of the cluster's block `rank` (this block's own rank too).
 * The arrival is a plain one (release at the scope of this block, the default), as CUTLASS's ClusterBarrier::arrive
 * writes it. The first version wrote `mbarrier.arrive.release.cluster`: a release at cluster scope, which ptxas
 * compiles to MEMBAR.ALL.CTA + MEMBAR.ALL.GPU + ERRBAR + CGAERRBAR before the arrive, i.e. a GPU-wide memory fence
 * twice per K-tile in every consumer warp while the tensor cores wait: the 2.5x slowdown of the first cluster
 * variants (NOTES.md, "Rung 11: variants"). Nothing needs releasing here: the arrival only says "the wgmmas that
 * read this stage have completed" (wgmma.wait_group came first), and the stage's next writer is the copy engine,
 * which the partner's producer starts only after its wait on this barrier. */
__device__ __forceinline__ void mbarrier_arrive_cluster(uint32_t bar, uint32_t rank) {
    uint32_t remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(bar), "r"(rank));
    asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(remote) : "memory");
}

/* ---- wgmma --------------------------------------------------------------------------------------------------- */
/* A shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format"): bits 0-13 start address >> 4, 16-29 the
 * leading-dimension byte offset >> 4, 32-45 the stride-dimension byte offset >> 4, 49-51 base offset (0: our tiles
 * start on 1024-byte boundaries), 62-63 the swizzle mode (1 = 128-byte swizzle). */
__device__ __forceinline__ uint64_t descriptor(uint32_t address, uint32_t leading_bytes, uint32_t stride_bytes) {
    return (uint64_t)((address & 0x3FFFF) >> 4) | (uint64_t)((leading_bytes & 0x3FFFF) >> 4) << 16 |
           (uint64_t)((stride_bytes & 0x3FFFF) >> 4) << 32 | (uint64_t)1 << 62;
}

/* ---- TMA store: the copy engine writes a 2-D box of shared memory into a tensor (clipped at the matrix's edges) */
[[maybe_unused]] __device__ __forceinline__ void tma_store_2d(const CUtensorMap *map, uint32_t src, int inner,
                                                              int outer) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" ::"l"((uint64_t)map),
                 "r"(inner), "r"(outer), "r"(src)
                 : "memory");
}
/* The stores issued so far by this thread form one group; wait_read<0> waits until every group has finished READING
 * shared memory (it may be overwritten), wait_all<0> until the writes to global memory are done too. */
[[maybe_unused]] __device__ __forceinline__ void tma_store_commit() {
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
[[maybe_unused]] __device__ __forceinline__ void tma_store_wait_read() {
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}
[[maybe_unused]] __device__ __forceinline__ void tma_store_wait_all() {
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}
/* A barrier for the 128 threads of one warpgroup alone (id 1 or 2; id 0 is __syncthreads'). */
[[maybe_unused]] __device__ __forceinline__ void warpgroup_sync(int id) {
    asm volatile("bar.sync %0, 128;" ::"r"(id) : "memory");
}
[[maybe_unused]] __device__ __forceinline__ void st_shared_b32(uint32_t address, uint32_t value) {
    asm volatile("st.shared.b32 [%0], %1;" ::"r"(address), "r"(value) : "memory");
}
/* Two floats rounded to T and packed into one 32-bit word (the lower address gets x). */
template <typename T>
__device__ __forceinline__ uint32_t pack_pair(float x, float y) {
    if constexpr (std::is_same<T, __nv_bfloat16>::value) {
        __nv_bfloat162 v = __floats2bfloat162_rn(x, y);
        return *reinterpret_cast<uint32_t *>(&v);
    } else {
        __half2 v = __floats2half2_rn(x, y);
        return *reinterpret_cast<uint32_t *>(&v);
    }
}

__device__ __forceinline__ void wgmma_fence() {
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
/* Waits until at most `pending` committed groups of this warpgroup are still running. */
template <int pending>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(pending) : "memory");
}

/* The 128 fp32 accumulators of m64n256: d[j][0..7] for columns 16j..16j+15 (see the epilogue for which is where). */
#define WGMMA_D_REGISTERS                                                                          \
    "{"                                                                                            \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                       \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "             \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "             \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "             \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "             \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "             \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
    "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}"

#define WGMMA_D_OPERANDS                                                                                             \
    "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[0][4]), "+f"(d[0][5]), "+f"(d[0][6]),         \
        "+f"(d[0][7]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[1][4]), "+f"(d[1][5]),     \
        "+f"(d[1][6]), "+f"(d[1][7]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[2][4]),     \
        "+f"(d[2][5]), "+f"(d[2][6]), "+f"(d[2][7]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]),     \
        "+f"(d[3][4]), "+f"(d[3][5]), "+f"(d[3][6]), "+f"(d[3][7]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]),     \
        "+f"(d[4][3]), "+f"(d[4][4]), "+f"(d[4][5]), "+f"(d[4][6]), "+f"(d[4][7]), "+f"(d[5][0]), "+f"(d[5][1]),     \
        "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[5][4]), "+f"(d[5][5]), "+f"(d[5][6]), "+f"(d[5][7]), "+f"(d[6][0]),     \
        "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[6][4]), "+f"(d[6][5]), "+f"(d[6][6]), "+f"(d[6][7]),     \
        "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3]), "+f"(d[7][4]), "+f"(d[7][5]), "+f"(d[7][6]),     \
        "+f"(d[7][7]), "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3]), "+f"(d[8][4]), "+f"(d[8][5]),     \
        "+f"(d[8][6]), "+f"(d[8][7]), "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]), "+f"(d[9][4]),     \
        "+f"(d[9][5]), "+f"(d[9][6]), "+f"(d[9][7]), "+f"(d[10][0]), "+f"(d[10][1]), "+f"(d[10][2]), "+f"(d[10][3]), \
        "+f"(d[10][4]), "+f"(d[10][5]), "+f"(d[10][6]), "+f"(d[10][7]), "+f"(d[11][0]), "+f"(d[11][1]),              \
        "+f"(d[11][2]), "+f"(d[11][3]), "+f"(d[11][4]), "+f"(d[11][5]), "+f"(d[11][6]), "+f"(d[11][7]),              \
        "+f"(d[12][0]), "+f"(d[12][1]), "+f"(d[12][2]), "+f"(d[12][3]), "+f"(d[12][4]), "+f"(d[12][5]),              \
        "+f"(d[12][6]), "+f"(d[12][7]), "+f"(d[13][0]), "+f"(d[13][1]), "+f"(d[13][2]), "+f"(d[13][3]),              \
        "+f"(d[13][4]), "+f"(d[13][5]), "+f"(d[13][6]), "+f"(d[13][7]), "+f"(d[14][0]), "+f"(d[14][1]),              \
        "+f"(d[14][2]), "+f"(d[14][3]), "+f"(d[14][4]), "+f"(d[14][5]), "+f"(d[14][6]), "+f"(d[14][7]),              \
        "+f"(d[15][0]), "+f"(d[15][1]), "+f"(d[15][2]), "+f"(d[15][3]), "+f"(d[15][4]), "+f"(d[15][5]),              \
        "+f"(d[15][6]), "+f"(d[15][7])

/* D += A·B over k = 16: A K-major (tnspA = 0), B MN-major (tnspB = 1); scale-d = 1 (accumulate), scales of A, B 1. */
template <typename T>
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[16][8], uint64_t desc_a, uint64_t desc_b) {
    if constexpr (std::is_same<T, __nv_bfloat16>::value) {
        asm volatile("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 " WGMMA_D_REGISTERS
                     ", %128, %129, 1, 1, 1, 0, 1;"
                     : WGMMA_D_OPERANDS
                     : "l"(desc_a), "l"(desc_b));
    } else {
        asm volatile("wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 " WGMMA_D_REGISTERS
                     ", %128, %129, 1, 1, 1, 0, 1;"
                     : WGMMA_D_OPERANDS
                     : "l"(desc_a), "l"(desc_b));
    }
}
#endif /* __CUDA_ARCH_FEAT_SM90_ALL */

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
/* Unit → tile coordinates, grouped: kGroupM tile rows at a time go down before moving right. A unit is one tile, or
 * with clusters of 2 a pair of vertically adjacent tiles (unit row u covers tile rows 2u and 2u + 1). */
__device__ __forceinline__ void unit_coordinates(int unit, int units_m, int tiles_n, int group_units, int &unit_m,
                                                 int &tile_n) {
    const int per_group = group_units * tiles_n, group = unit / per_group;
    const int first_m = group * group_units, group_rows = min(units_m - first_m, group_units);
    unit_m = first_m + (unit % per_group) % group_rows;
    tile_n = (unit % per_group) / group_rows;
}
#endif

/* One block computes a 128×256 tile of C at a time: warpgroup 0 loads, warpgroups 1 and 2 multiply (rows 0-63,
 * 64-127). With Cfg::kPersistent it goes on to further tiles; with Cfg::kCluster = 2 it shares B with its neighbour. */
template <typename T, class Cfg>
__global__ void __launch_bounds__(kThreads, 1)
    wgmma_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                 const __grid_constant__ CUtensorMap map_c /* used with Cfg::kTmaStore only */, T *c, int64_t ldc,
                 int M, int N, int k_tiles, int tiles_m, int tiles_n, int paired) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    constexpr int kStages = Cfg::kStages, kCluster = Cfg::kCluster;
    extern __shared__ uint8_t shared_raw[];
    /* The 128-byte swizzle repeats every 1024 bytes, and the descriptors assume tiles start on such a boundary.
     * (The dynamic shared memory starts at the same offset in every block, so the blocks of a cluster agree on it.) */
    const uint32_t raw = (uint32_t)__cvta_generic_to_shared(shared_raw);
    const uint32_t tiles = (raw + 1023u) & ~1023u;
    const uint32_t tiles_a = tiles, tiles_b = tiles + kStages * Cfg::kTileABytes;
    const uint32_t staging = tiles + kStages * Cfg::kStageBytes; /* C's staging (TMA_STORE): 32 KB per consumer */
    /* full[s] at bars + 8s, empty[s] at bars + 8(kStages + s), turn[c] (ping-pong) at bars + 8(2 kStages + c) */
    const uint32_t bars = staging + Cfg::kStoreBytes;
    const uint32_t turns = bars + 16 * kStages;

    /* The units this block computes: blockIdx.x / kCluster, then (persistent) every units_step-th after it. */
    const uint32_t rank = kCluster > 1 ? cluster_rank() : 0; /* = blockIdx.x % kCluster */
    const int units_m = (tiles_m + kCluster - 1) / kCluster, units = units_m * tiles_n;
    const int first_unit = blockIdx.x / kCluster;
    const int units_step = Cfg::kPersistent ? gridDim.x / kCluster : units; /* non-persistent: one unit */

    const int warpgroup = threadIdx.x / 128, thread = threadIdx.x % 128;
    if (threadIdx.x == 0) {
        for (int s = 0; s < kStages; ++s) {
            mbarrier_init(bars + 8 * s, 1); /* the producer's arrive.expect_tx */
            /* Without a cluster every consumer thread arrives; with one, lane 0 of each consumer warp of each block of
             * the cluster (the producers write into every block's stage s, so they wait for all of them). */
            /* (Ping-pong: one consumer reads each stage, all 128 of its threads arrive.) */
            mbarrier_init(bars + 8 * (kStages + s), Cfg::kPingPong  ? 128
                                                    : kCluster == 1 ? kConsumers * 128
                                                                    : kConsumers * 4 * kCluster);
        }
        mbarrier_init(turns, 128); /* ping-pong: the 128 threads of the other consumer */
        mbarrier_init(turns + 8, 128);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); /* the inits, visible to the copy engine */
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
    if constexpr (kCluster > 1) {
        cluster_sync(); /* the neighbour's barriers exist before anything is multicast into it */
    } else {
        __syncthreads();
    }

    if (warpgroup == 0) {
        /* PRODUCER. Fewer registers for this warpgroup, more for the consumers (setmaxnreg works on whole warpgroups,
         * so every thread of it executes this; then thread 0 alone issues the copies). */
        asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(Cfg::kProducerRegisters));
        if (thread == 0) {
            int it = 0; /* K-tiles loaded so far by this block, over all its tiles: stage it % kStages */
            for (int unit = first_unit; unit < units; unit += units_step) {
                int unit_m, tile_n;
                unit_coordinates(unit, units_m, tiles_n, Cfg::kGroupUnits, unit_m, tile_n);
                const int m0 = (unit_m * kCluster + (int)rank) * Cfg::kTileM, n0 = tile_n * kBN;
                /* B's boxes that start inside the matrix (at the right edge fewer than 4; the columns of the others
                 * only feed outputs past N, which are not stored, so their stale shared memory is harmless). */
                const int boxes_b = min(kBN / kBoxN, (N - n0 + kBoxN - 1) / kBoxN);
                /* Whole boxes' bytes, also where a box hangs over the matrix's edge: TMA writes those zeros too
                 * (with a cluster, also a block whose A tile lies wholly below M: its tile is zeros). */
                const uint32_t bytes = Cfg::kTileABytes + boxes_b * kBoxBBytes;
                for (int kt = 0; kt < k_tiles; ++kt, ++it) {
                    const int s = it % kStages;
                    /* The stage was used by round it/kStages - 1: wait until every consumer released it. */
                    if (it >= kStages) mbarrier_wait(bars + 8 * (kStages + s), ((it / kStages) - 1) & 1);
                    const uint32_t full = bars + 8 * s;
                    mbarrier_arrive_expect_tx(full, bytes);
                    tma_load_2d(tiles_a + s * Cfg::kTileABytes, &map_a, kt * kBK, m0, full); /* {k, m} */
                    /* B: every box (no cluster), or every kCluster-th box starting at this block's rank, sent to
                     * all the cluster's blocks: each block's full[s] receives all boxes_b boxes in the end. */
                    for (int j = (int)rank; j < boxes_b; j += kCluster) {
                        const uint32_t dst = tiles_b + s * kTileBBytes + j * kBoxBBytes;
                        if constexpr (kCluster == 1) {
                            tma_load_2d(dst, &map_b, n0 + j * kBoxN, kt * kBK, full); /* {n, k} */
                        } else {
                            tma_load_2d_multicast(dst, &map_b, n0 + j * kBoxN, kt * kBK, full,
                                                  (uint16_t)((1u << kCluster) - 1));
                        }
                    }
                }
                if constexpr (!Cfg::kPersistent) break; /* one tile per block (the compiler then drops the loop) */
            }
            /* With a cluster, the neighbour's consumers arrive on this block's empty[] barriers: the block may leave
             * only once they all have (a later arrival would land in freed shared memory). Waiting for the release
             * of each of the last kStages K-tiles, as CUTLASS's producer "tail" does, is enough: the multicast bytes
             * into this block were all awaited by its own consumers. (The first version ended with a cluster_sync,
             * whose release at cluster scope is a GPU-wide fence behind the epilogue's stores.) */
            if constexpr (kCluster > 1) {
                for (int i = 0; i < kStages; ++i, ++it) {
                    if (it >= kStages) mbarrier_wait(bars + 8 * (kStages + it % kStages), ((it / kStages) - 1) & 1);
                }
            }
        }
    } else {
        /* CONSUMERS: warpgroup w (1 or 2) computes rows 64(w-1) .. 64(w-1)+63 of the block's tile. */
        asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(Cfg::kConsumerRegisters));
        const int half = warpgroup - 1, warp = thread / 32, lane = thread % 32;
        /* Stage s has been read by this warpgroup: tell the producer(s). */
        const auto release = [&](int s) {
            if constexpr (kCluster == 1) {
                mbarrier_arrive(bars + 8 * (kStages + s));
            } else if (lane == 0) {
                for (int r = 0; r < kCluster; ++r) mbarrier_arrive_cluster(bars + 8 * (kStages + s), r);
            }
        };
        /* K-tiles of this block's tiles before this one, the producer's count: stage it % kStages. Ping-pong:
         * warpgroup 2 starts at the block's second tile, and each consumer steps over the other's tiles. */
        constexpr int kTurns = Cfg::kPingPong ? 2 : 1;
        const int order = Cfg::kPingPong ? half : 0;
        int it = order * k_tiles, done = 0; /* done: tiles this consumer has finished */
        for (int unit = first_unit + order * units_step; unit < units; unit += kTurns * units_step, ++done) {
            int unit_m, tile_n;
            unit_coordinates(unit, units_m, tiles_n, Cfg::kGroupUnits, unit_m, tile_n);
            const int m0 = (unit_m * kCluster + (int)rank) * Cfg::kTileM + (Cfg::kPingPong ? 0 : half * 64);
            const int n0 = tile_n * kBN;
            if constexpr (Cfg::kPingPong) {
                /* Wait for the other consumer to have waited on every stage of the tile before this one (warpgroup
                 * 1's first tile has none): its phase `done` of turn[1] (warpgroup 2), `done - 1` of turn[0]. */
                if (half == 1) {
                    mbarrier_wait(turns + 8, done & 1);
                } else if (done > 0) {
                    mbarrier_wait(turns, (done - 1) & 1);
                }
            }
            float d[16][8];
#pragma unroll
            for (int j = 0; j < 16; ++j) {
#pragma unroll
                for (int e = 0; e < 8; ++e) d[j][e] = 0.0f;
            }
            for (int kt = 0; kt < k_tiles; ++kt, ++it) {
                const int s = it % kStages;
                mbarrier_wait(bars + 8 * s, (it / kStages) & 1);
                /* This warpgroup's 64 rows (ping-pong: the stage's A is 64 rows). */
                const uint32_t a = tiles_a + s * Cfg::kTileABytes + (Cfg::kPingPong ? 0 : half * (64 * kBK * 2));
                const uint32_t b = tiles_b + s * kTileBBytes;
                wgmma_fence(); /* the accumulators were written by ordinary instructions (the zeros, earlier tiles) */
#pragma unroll
                for (int kk = 0; kk < kBK / 16; ++kk) {
                    /* A: K-major, 16 elements further along k = 32 bytes further along the (swizzled) row.
                     * B: MN-major, 16 rows further along k = 16 × 128 bytes. */
                    const uint64_t desc_a = descriptor(a + kk * 32, 16, 1024);
                    const uint64_t desc_b = descriptor(b + kk * 16 * 128, kBoxBBytes, 1024);
                    wgmma_m64n256k16<T>(d, desc_a, desc_b);
                }
                wgmma_commit();
                if constexpr (Cfg::kKeepOne) {
                    /* This K-tile's group may still run; the one before it is done: release that one's stage. */
                    wgmma_wait<1>();
                    if (kt > 0) release((it - 1) % kStages);
                } else {
                    wgmma_wait<0>(); /* this stage's shared memory is read: release it to the producer */
                    release(s);
                }
            }
            /* Ping-pong: every stage of this tile has been waited on; the other consumer may start its tile. */
            if constexpr (Cfg::kPingPong) mbarrier_arrive(turns + 8 * (1 - half));
            if constexpr (Cfg::kKeepOne) {
                wgmma_wait<0>();
                release((it - 1) % kStages);
            }
            /* Epilogue: thread t of warp w holds, for each 16 columns j, rows 16w + t/4 and +8, columns 2(t%4), +1,
             * +8, +9 (the m64nNk16 accumulator layout; the lesson draws mma.sync's, the same per warp). */
            if constexpr (Cfg::kTmaStore) {
                /* Through shared memory: this warpgroup's 64×256 half as 4 boxes of 64 rows × 64 columns (8 KB), each
                 * in the 128-byte swizzle TMA expects (map_c): row r at r × 128 bytes, its 16-byte chunk q at
                 * position q ^ (r % 8). A warp's store then touches 8 rows × 16 bytes in 8 different chunk positions:
                 * all 32 banks, no conflict. */
                const uint32_t mine = staging + half * (64 * kBN * 2);
                if (thread == 0) tma_store_wait_read(); /* the previous tile's stores have read the staging */
                warpgroup_sync(1 + half);
                const int r0 = warp * 16 + lane / 4;
#pragma unroll
                for (int j = 0; j < 16; ++j) {
                    const uint32_t box = mine + (j / 4) * (64 * kBoxN * 2);
#pragma unroll
                    /* d[j][2h], d[j][2h+1]: row r0 (+8 for h odd), column +8 for h >= 2 */
                    for (int h = 0; h < 4; ++h) {
                        const int r = r0 + 8 * (h % 2), col = (16 * j) % 64 + 8 * (h / 2) + 2 * (lane % 4);
                        const uint32_t at = box + r * 128 + (((col / 8) ^ (r % 8)) * 16) + (col % 8) * 2;
                        st_shared_b32(at, pack_pair<T>(d[j][2 * h], d[j][2 * h + 1]));
                    }
                }
                /* The copy engine reads what ordinary stores wrote: each writer fences (the async proxy), then the
                 * warpgroup meets, then one thread starts the 4 stores; the copy engine clips rows past M and columns
                 * past N. The consumers go straight on to the next tile. */
                asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
                warpgroup_sync(1 + half);
                if (thread == 0) {
                    for (int b = 0; b < kBN / kBoxN && n0 + b * kBoxN < N; ++b) {
                        tma_store_2d(&map_c, mine + b * (64 * kBoxN * 2), n0 + b * kBoxN, m0);
                    }
                    tma_store_commit();
                }
            } else {
                const int64_t row = (int64_t)m0 + warp * 16 + lane / 4;
#pragma unroll
                for (int j = 0; j < 16; ++j) {
                    const int64_t col = (int64_t)n0 + 16 * j + 2 * (lane % 4);
                    store_pair<T>(c, ldc, M, N, row, col, d[j][0], d[j][1], paired);
                    store_pair<T>(c, ldc, M, N, row + 8, col, d[j][2], d[j][3], paired);
                    store_pair<T>(c, ldc, M, N, row, col + 8, d[j][4], d[j][5], paired);
                    store_pair<T>(c, ldc, M, N, row + 8, col + 8, d[j][6], d[j][7], paired);
                }
            }
            if constexpr (Cfg::kPingPong) it += k_tiles; /* the other consumer's tile, next in the ring */
            if constexpr (!Cfg::kPersistent) break;
        }
        /* The block's shared memory must outlive the copy engine's reads, and its stores should be done. */
        if constexpr (Cfg::kTmaStore) {
            if (thread == 0) tma_store_wait_all();
        }
    }
#endif /* __CUDA_ARCH_FEAT_SM90_ALL */
}

/* cuTensorMapEncodeTiled, from the driver through the runtime (nothing links libcuda), looked up once. */
cudaError_t tensor_map_encoder(PFN_cuTensorMapEncodeTiled_v12000 *encode) {
    static PFN_cuTensorMapEncodeTiled_v12000 found = nullptr;
    if (found == nullptr) {
        void *function = nullptr;
        cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
        CUDA_RETURN_IF_ERROR(
            cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &function, 12000, cudaEnableDefault, &status));
        if (status != cudaDriverEntryPointSuccess || function == nullptr) return cudaErrorNotSupported;
        found = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(function);
    }
    *encode = found;
    return cudaSuccess;
}

/* A row-major rows×cols matrix (row stride ld elements) as TMA sees it: dimension 0 is the columns (contiguous),
 * dimension 1 the rows; boxes of box_cols × box_rows, swizzled by 128 bytes; zeros outside the matrix. */
cudaError_t make_map(CUtensorMap *map, CUtensorMapDataType type, const void *data, int64_t rows, int64_t cols,
                     int64_t ld, uint32_t box_cols, uint32_t box_rows) {
    PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;
    CUDA_RETURN_IF_ERROR(tensor_map_encoder(&encode));
    const cuuint64_t dims[2] = {(cuuint64_t)cols, (cuuint64_t)rows};
    const cuuint64_t strides[1] = {(cuuint64_t)(rows > 1 ? ld : cols) * 2}; /* bytes, of dimension 1 */
    const cuuint32_t box[2] = {box_cols, box_rows};
    const cuuint32_t element_strides[2] = {1, 1};
    const CUresult result = encode(map, type, 2, const_cast<void *>(data), dims, strides, box, element_strides,
                                   CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                   CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return result == CUDA_SUCCESS ? cudaSuccess : cudaErrorNotSupported;
}

/* How many blocks of `kernel` the GPU holds at once (persistent grids): blocks per SM × SMs, or with clusters the
 * clusters that fit at once × their size (a cluster's blocks must sit in one GPC, so fewer may fit). Asked once
 * per device and kernel. */
template <class Cfg, typename Kernel>
cudaError_t resident_blocks(Kernel kernel, int device, int *blocks) {
    static int known[64] = {};
    if (device >= 0 && device < 64 && known[device] > 0) {
        *blocks = known[device];
        return cudaSuccess;
    }
    int count = 0;
    if constexpr (Cfg::kCluster == 1) {
        int sms = 0, per_sm = 0;
        CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        CUDA_RETURN_IF_ERROR(
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, Cfg::kSharedBytes));
        count = sms * per_sm;
    } else {
        cudaLaunchConfig_t config = {};
        cudaLaunchAttribute cluster[1];
        cluster[0].id = cudaLaunchAttributeClusterDimension;
        cluster[0].val.clusterDim.x = Cfg::kCluster;
        cluster[0].val.clusterDim.y = cluster[0].val.clusterDim.z = 1;
        config.gridDim = dim3(Cfg::kCluster);
        config.blockDim = dim3(kThreads);
        config.dynamicSmemBytes = Cfg::kSharedBytes;
        config.attrs = cluster;
        config.numAttrs = 1;
        int clusters = 0;
        CUDA_RETURN_IF_ERROR(cudaOccupancyMaxActiveClusters(&clusters, kernel, &config));
        count = clusters * Cfg::kCluster;
    }
    if (count <= 0) return cudaErrorInvalidConfiguration;
    if (device >= 0 && device < 64) known[device] = count;
    *blocks = count;
    return cudaSuccess;
}

template <typename T, class Cfg>
cudaError_t launch_wgmma_variant(int64_t M, int64_t N, int64_t K, matmul_operand a, matmul_operand b, void *c,
                                 int64_t ldc, cudaStream_t stream) {
    CUtensorMap map_a, map_b, map_c = {};
    CUDA_RETURN_IF_ERROR(make_map(&map_a, Element<T>::kTmaType, a.data, M, K, a.row_stride, kBK, Cfg::kTileM));
    CUDA_RETURN_IF_ERROR(make_map(&map_b, Element<T>::kTmaType, b.data, K, N, b.row_stride, kBoxN, kBK));
    if constexpr (Cfg::kTmaStore) {
        /* C through TMA: rows of a multiple of 16 bytes, a 16-byte aligned start (as for A and B); else the same
         * schedule with register stores. Boxes of 64 rows × 64 columns, as the kernel stages them. */
        const bool fits = (M == 1 ? N % 8 == 0 : ldc % 8 == 0) && reinterpret_cast<uintptr_t>(c) % 16 == 0;
        if (!fits) return launch_wgmma_variant<T, typename Cfg::RegisterStore>(M, N, K, a, b, c, ldc, stream);
        CUDA_RETURN_IF_ERROR(make_map(&map_c, Element<T>::kTmaType, c, M, N, ldc, kBoxN, 64));
    }
    const auto kernel = wgmma_kernel<T, Cfg>;
    CUDA_RETURN_IF_ERROR(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)Cfg::kSharedBytes));
    const int64_t tiles_m = (M + Cfg::kTileM - 1) / Cfg::kTileM, tiles_n = (N + kBN - 1) / kBN,
                  k_tiles = (K + kBK - 1) / kBK;
    /* Units: tiles, or with clusters pairs of tiles one above the other (the last pair may hang below M). */
    const int64_t units = (tiles_m + Cfg::kCluster - 1) / Cfg::kCluster * tiles_n;
    int device = 0, most_blocks = 0;
    CUDA_RETURN_IF_ERROR(cudaGetDevice(&device));
    CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&most_blocks, cudaDevAttrMaxGridDimX, device));
    if (units * Cfg::kCluster > most_blocks || M > INT32_MAX || N > INT32_MAX || k_tiles > INT32_MAX)
        return cudaErrorInvalidConfiguration;
    int64_t blocks = units * Cfg::kCluster; /* one block per tile */
    if constexpr (Cfg::kPersistent) {
        int resident = 0;
        CUDA_RETURN_IF_ERROR(resident_blocks<Cfg>(kernel, device, &resident));
        blocks = std::min<int64_t>(blocks, resident / Cfg::kCluster * Cfg::kCluster);
    }
    const int paired = ldc % 2 == 0 && reinterpret_cast<uintptr_t>(c) % 4 == 0;
    if constexpr (Cfg::kCluster == 1) {
        kernel<<<(unsigned int)blocks, kThreads, Cfg::kSharedBytes, stream>>>(map_a, map_b, map_c, static_cast<T *>(c),
                                                                              ldc, (int)M, (int)N, (int)k_tiles,
                                                                              (int)tiles_m, (int)tiles_n, paired);
    } else {
        cudaLaunchConfig_t config = {};
        cudaLaunchAttribute cluster[1];
        cluster[0].id = cudaLaunchAttributeClusterDimension;
        cluster[0].val.clusterDim.x = Cfg::kCluster;
        cluster[0].val.clusterDim.y = cluster[0].val.clusterDim.z = 1;
        config.gridDim = dim3((unsigned int)blocks);
        config.blockDim = dim3(kThreads);
        config.dynamicSmemBytes = Cfg::kSharedBytes;
        config.stream = stream;
        config.attrs = cluster;
        config.numAttrs = 1;
        CUDA_RETURN_IF_ERROR(cudaLaunchKernelEx(&config, kernel, map_a, map_b, map_c, static_cast<T *>(c), ldc, (int)M,
                                                (int)N, (int)k_tiles, (int)tiles_m, (int)tiles_n, paired));
    }
    return cudaGetLastError();
}

template <typename T>
cudaError_t launch_wgmma(int64_t M, int64_t N, int64_t K, matmul_operand a, matmul_operand b, void *c, int64_t ldc,
                         cudaStream_t stream) {
    return launch_wgmma_variant<T, WgmmaTile>(M, N, K, a, b, c, ldc, stream);
}

}  // namespace

extern "C" int matmul_tma_compatible(int64_t M, int64_t N, int64_t K, matmul_operand a, matmul_operand b) {
    const auto aligned = [](const void *p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
    /* A matrix with one row has no row stride to speak of: TMA gets its row length instead (make_map). */
    const auto rows_ok = [](int64_t rows, int64_t cols, int64_t ld) {
        return rows == 1 ? cols % 8 == 0 : ld % 8 == 0 && ld >= cols;
    };
    return M >= 1 && N >= 1 && K >= 1 && a.col_stride == 1 && b.col_stride == 1 && rows_ok(M, K, a.row_stride) &&
           rows_ok(K, N, b.row_stride) && aligned(a.data) && aligned(b.data) && (uint64_t)K * 2 < ((uint64_t)1 << 40);
}

extern "C" cudaError_t matmul_wgmma_cuda(course_dtype dtype, int64_t M, int64_t N, int64_t K, matmul_operand a,
                                         matmul_operand b, void *c, int64_t ldc, cudaStream_t stream) {
    if (!matmul_tma_compatible(M, N, K, a, b) || (M > 1 && ldc < N)) return cudaErrorInvalidValue;
    switch (dtype) {
        case COURSE_BFLOAT16:
            return launch_wgmma<__nv_bfloat16>(M, N, K, a, b, c, ldc, stream);
        case COURSE_FLOAT16:
            return launch_wgmma<__half>(M, N, K, a, b, c, ldc, stream);
        default:
            return cudaErrorInvalidValue;
    }
}
