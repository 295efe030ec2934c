/*
 * matmul_cpu_body.h — the blocked CPU loop, written once for an element type. matmul_cpu.c includes it twice, with
 * REAL = float and REAL = double (and NAME(x) = x_f32 / x_f64): C's way of writing one function for two types.
 *
 * The loop nest (after Goto and van de Geijn, "Anatomy of high-performance matrix multiplication", 2008):
 *
 *   for jc in steps of NC over N:              a panel of B's columns ...
 *     for pc in steps of KC over K:            ... and of its rows: B[pc:pc+KC, jc:jc+NC], copied ("packed")
 *                                               into Bp, in column strips of NR: ~0.5 MB, stays in L2
 *       for ic in steps of MC over M:          A[ic:ic+MC, pc:pc+KC] packed into Ap in row strips of MR: ~64 KB
 *         for each NR-wide strip of Bp, for each MR-high strip of Ap:
 *           the micro-kernel: an MR×NR block of C held in local variables (registers), KC rank-1 updates
 *
 * Packing reads A and B through their strides once per block, so transposed and sliced inputs cost no extra pass,
 * and the micro-kernel always reads contiguous, zero-padded strips: no edge cases inside the hot loop.
 */

/* Ap[strip][k][r] = A(i0 + strip·MR + r, k) for the mc×kc block at A, zero past mc. */
static void NAME(pack_a)(const REAL *a, int64_t rs, int64_t cs, int64_t mc, int64_t kc, REAL *ap) {
    for (int64_t i0 = 0; i0 < mc; i0 += MR)
        for (int64_t k = 0; k < kc; ++k)
            for (int r = 0; r < MR; ++r) *ap++ = i0 + r < mc ? a[(i0 + r) * rs + k * cs] : (REAL)0;
}

/* Bp[strip][k][j] = B(k, strip·NR + j) for the kc×nc block at B, zero past nc. */
static void NAME(pack_b)(const REAL *b, int64_t rs, int64_t cs, int64_t kc, int64_t nc, REAL *bp) {
    for (int64_t j0 = 0; j0 < nc; j0 += NR)
        for (int64_t k = 0; k < kc; ++k)
            for (int j = 0; j < NR; ++j) *bp++ = j0 + j < nc ? b[k * rs + (j0 + j) * cs] : (REAL)0;
}

/* C[0:mr, 0:nr] (+)= Ap-strip · Bp-strip over kc: MR·NR sums in local variables, which the compiler keeps in
 * (vector) registers; each step reads MR values of A and NR of B and does MR·NR multiply-adds. */
static void NAME(micro_kernel)(int64_t kc, const REAL *ap, const REAL *bp, REAL *c, int64_t ldc, int mr, int nr,
                               int accumulate) {
    REAL acc[MR][NR] = {{0}};
    for (int64_t k = 0; k < kc; ++k) {
        for (int r = 0; r < MR; ++r) {
            const REAL av = ap[k * MR + r];
            for (int j = 0; j < NR; ++j) acc[r][j] += av * bp[k * NR + j];
        }
    }
    for (int r = 0; r < mr; ++r)
        for (int j = 0; j < nr; ++j) c[r * ldc + j] = accumulate ? c[r * ldc + j] + acc[r][j] : acc[r][j];
}

static int NAME(matmul)(int64_t M, int64_t N, int64_t K, const REAL *a, int64_t a_rs, int64_t a_cs, const REAL *b,
                        int64_t b_rs, int64_t b_cs, REAL *c, int64_t ldc) {
    if (K == 0) { /* an empty sum: every element is 0 */
        for (int64_t i = 0; i < M; ++i)
            for (int64_t j = 0; j < N; ++j) c[i * ldc + j] = 0;
        return 0;
    }
    REAL *ap = malloc(sizeof(REAL) * (size_t)(MC + MR) * KC);
    REAL *bp = malloc(sizeof(REAL) * (size_t)(NC + NR) * KC);
    if (ap == NULL || bp == NULL) {
        free(ap);
        free(bp);
        return -1;
    }
    for (int64_t jc = 0; jc < N; jc += NC) {
        const int64_t nc = N - jc < NC ? N - jc : NC;
        for (int64_t pc = 0; pc < K; pc += KC) {
            const int64_t kc = K - pc < KC ? K - pc : KC;
            NAME(pack_b)(b + pc * b_rs + jc * b_cs, b_rs, b_cs, kc, nc, bp);
            for (int64_t ic = 0; ic < M; ic += MC) {
                const int64_t mc = M - ic < MC ? M - ic : MC;
                NAME(pack_a)(a + ic * a_rs + pc * a_cs, a_rs, a_cs, mc, kc, ap);
                for (int64_t jr = 0; jr < nc; jr += NR) {
                    for (int64_t ir = 0; ir < mc; ir += MR) {
                        const int mr = mc - ir < MR ? (int)(mc - ir) : MR, nr = nc - jr < NR ? (int)(nc - jr) : NR;
                        NAME(micro_kernel)(kc, ap + ir * kc, bp + jr * kc, c + (ic + ir) * ldc + jc + jr, ldc, mr, nr,
                                           pc > 0);
                    }
                }
            }
        }
    }
    free(ap);
    free(bp);
    return 0;
}
