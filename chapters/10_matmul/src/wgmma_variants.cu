/*
 * wgmma_variants.cu — rung 11 (wgmma + TMA) in several schedules, side by side with cuBLAS: the experiments for the
 * next version of the op's kernel (NOTES.md, "Rung 11: variants"). `make wgmma-variants` on an H100 builds and runs
 * it (sm_90a only, about a minute).
 *
 * It includes matmul_hopper.cu itself, so each line times the op's own kernel with another WgmmaConfig (stages,
 * persistent or not, wait_group 1 or 0, clusters of 1 or 2). First every variant is checked on small awkward shapes
 * (M, N, K not multiples of the tile, K = 8 and 16, M = 1, an odd number of tile rows for the clusters) in bf16 and
 * fp16; then, for each timed size: C poisoned with NaN, one run checked against cuBLAS's C (same inputs, fp32 sums),
 * then 5 rounds of 10 timed launches (CUDA events); min / median / max TFLOP/s over the rounds and the median as % of
 * cuBLAS (timed just before). The op's configuration is timed first and again last: the difference is the drift
 * (clocks, temperature) of the run. A variant whose barriers never complete traps after 10 s (mbarrier_wait) and
 * ends the program with the CUDA error: the riskiest variants (clusters) come last.
 */
#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "course_check.h"
#include "matmul_hopper.cu"
#include "sweep_harness.cuh"

/* Row-major A (M×K), B (K×N), C and cuBLAS's C, in T, with inputs uniform in [-1, 1]. */
template <typename T>
struct Problem {
    int64_t m, n, k;
    T *a = nullptr, *b = nullptr, *c = nullptr, *reference = nullptr;
    double cublas_tflops = 0;

    Problem(cublasHandle_t handle, int64_t m_, int64_t n_, int64_t k_) : m(m_), n(n_), k(k_) {
        CUDA_CHECK(cudaMalloc(&a, (size_t)m * k * sizeof(T)));
        CUDA_CHECK(cudaMalloc(&b, (size_t)k * n * sizeof(T)));
        CUDA_CHECK(cudaMalloc(&c, (size_t)m * n * sizeof(T)));
        CUDA_CHECK(cudaMalloc(&reference, (size_t)m * n * sizeof(T)));
        srand(1);
        for (T *target : {a, b}) {
            std::vector<T> host((size_t)(target == a ? m * k : k * n));
            for (auto &v : host) v = T(2.0f * rand() / RAND_MAX - 1.0f);
            CUDA_CHECK(cudaMemcpy(target, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
        }
        cublas(handle);
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    ~Problem() {
        for (T *p : {a, b, c, reference}) cudaFree(p);
    }
    /* Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: cuBLAS gets B first. */
    void cublas(cublasHandle_t handle) {
        const float one = 1, zero = 0;
        const cudaDataType type = std::is_same<T, bf16>::value ? CUDA_R_16BF : CUDA_R_16F;
        CHECK_CUBLAS(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m, (int)k, &one, b, type, (int)n, a,
                                  type, (int)k, &zero, reference, type, (int)n, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT));
    }
    /* C poisoned with NaN, one run of the variant, its error against cuBLAS. */
    template <class Cfg>
    double check() {
        const matmul_operand a_op{a, k, 1}, b_op{b, n, 1};
        CUDA_CHECK(cudaMemset(c, 0xff, (size_t)m * n * sizeof(T)));
        CUDA_CHECK((launch_wgmma_variant<T, Cfg>(m, n, k, a_op, b_op, c, n, nullptr)));
        CUDA_CHECK(cudaDeviceSynchronize());
        return relative_error(c, reference, (size_t)m * n);
    }
};

/* The variant's error on the small awkward shapes, bf16 and fp16; the worst one. */
template <typename T, class Cfg>
static double worst_small_error(cublasHandle_t handle) {
    /* M = 1 (one row: TMA's row length), 300 rows = 3 tile rows (a cluster pair hangs below M), N = 264 (a B box
     * past N), K = 8 and 16 (one K-tile, mostly zeros), K = 520 (a K tail), 2500×4104 (many tiles, tails). */
    const int64_t shapes[][3] = {{1, 8, 8}, {300, 264, 16}, {1000, 1000, 72}, {129, 520, 520}, {2500, 4104, 520}};
    double worst = 0;
    for (const auto &s : shapes) {
        Problem<T> p(handle, s[0], s[1], s[2]);
        worst = std::max(worst, p.template check<Cfg>());
    }
    return worst;
}

template <class Cfg>
static void variant_line(const char *name, Problem<bf16> &p, cublasHandle_t handle, bool first_size) {
    const matmul_operand a{p.a, p.k, 1}, b{p.b, p.n, 1};
    const auto launch = [&] { CUDA_CHECK((launch_wgmma_variant<bf16, Cfg>(p.m, p.n, p.k, a, b, p.c, p.n, nullptr))); };
    cudaFuncAttributes attributes;
    CUDA_CHECK(cudaFuncGetAttributes(&attributes, wgmma_kernel<bf16, Cfg>));
    char small[64] = "";
    if (first_size) {
        const double e = std::max(worst_small_error<bf16, Cfg>(handle), worst_small_error<__half, Cfg>(handle));
        std::snprintf(small, sizeof small, "  small shapes %.1e%s", e, e < 1e-2 ? "" : " WRONG");
    }
    const double error = p.template check<Cfg>();
    const auto r = time_tflops(launch, 2.0 * p.m * p.n * p.k);
    std::printf("  %-44s %3d regs %3zu B local  %6.1f / %6.1f / %6.1f TFLOP/s  %5.1f %% of cuBLAS  error %.1e%s%s\n",
                name, attributes.numRegs, attributes.localSizeBytes, r[0], r[1], r[2], 100 * r[1] / p.cublas_tflops,
                error, error < 1e-2 ? "" : " WRONG", small);
    std::fflush(stdout);
}

int main() {
    setvbuf(stdout, nullptr, _IOLBF, 0);
    int device = 0, sms = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    if (prop.major != 9) {
        std::fprintf(stderr, "%s is compute capability %d.%d: these kernels are sm_90a (Hopper) code\n", prop.name,
                     prop.major, prop.minor);
        return 1;
    }
    std::printf(
        "%s, %d SMs. Per variant: registers at entry (setmaxnreg then moves 24 to the producer, 240 to the\n"
        "consumers), local memory, min / median / max TFLOP/s over 5 rounds of 10, median / cuBLAS's median,\n"
        "the error against cuBLAS (and, at the first size, the worst over small awkward shapes, bf16 and fp16)\n",
        prop.name, sms);
    cublasHandle_t handle;
    CHECK_CUBLAS(cublasCreate(&handle));
    const int64_t sizes[][3] = {{4096, 4096, 4096}, {8192, 8192, 8192}, {3000, 3000, 3000}};
    bool first = true;
    for (const auto &size : sizes) {
        Problem<bf16> p(handle, size[0], size[1], size[2]);
        const auto c = time_tflops([&] { p.cublas(handle); }, 2.0 * p.m * p.n * p.k);
        p.cublas_tflops = c[1];
        std::printf("%lldx%lldx%lld: cuBLAS bf16 %.1f / %.1f / %.1f TFLOP/s\n", (long long)p.m, (long long)p.n,
                    (long long)p.k, c[0], c[1], c[2]);
        /* stages, persistent, wait_group 1, cluster */
        variant_line<WgmmaTile>("the op's WgmmaTile (persistent, TMA store)", p, handle, first);
        variant_line<WgmmaFirst>("first version (4 st, 1 tile/block, wait 0)", p, handle, first);
        variant_line<WgmmaConfig<4, false, true, 1>>("wait_group 1", p, handle, first);
        variant_line<WgmmaConfig<4, true, false, 1>>("persistent", p, handle, first);
        variant_line<WgmmaConfig<4, true, true, 1>>("persistent + wait_group 1", p, handle, first);
        variant_line<WgmmaConfig<3, true, true, 1>>("persistent + wait_group 1, 3 stages", p, handle, first);
        variant_line<WgmmaConfig<3, true, true, 1, true>>("persistent + wait 1 + TMA store, 3 st", p, handle, first);
        /* stages, persistent, wait_group 1, cluster, TMA store, ping-pong (64×256 tiles, 40 KB stages) */
        variant_line<WgmmaConfig<5, true, true, 1, false, true>>("ping-pong 64x256, wait 1, 5 stages", p, handle,
                                                                 first);
        variant_line<WgmmaConfig<5, true, false, 1, false, true>>("ping-pong 64x256, wait 0, 5 stages", p, handle,
                                                                  first);
        variant_line<WgmmaConfig<4, true, true, 1, true, true>>("ping-pong + TMA store, wait 1, 4 st", p, handle,
                                                                first);
        variant_line<WgmmaConfig<4, false, false, 2>>("cluster 2 (B multicast)", p, handle, first);
        variant_line<WgmmaConfig<4, false, true, 2>>("cluster 2 + wait_group 1", p, handle, first);
        variant_line<WgmmaConfig<4, true, true, 2>>("cluster 2 + persistent + wait_group 1", p, handle, first);
        variant_line<WgmmaConfig<4, true, false, 2>>("cluster 2 + persistent", p, handle, first);
        variant_line<WgmmaConfig<3, true, false, 2, true>>("cluster 2 + persistent + TMA store, 3 st", p, handle,
                                                           first);
        variant_line<WgmmaTile>("the op's WgmmaTile, again (drift)", p, handle, false);
        first = false;
    }
    CHECK_CUBLAS(cublasDestroy(handle));
    return 0;
}
