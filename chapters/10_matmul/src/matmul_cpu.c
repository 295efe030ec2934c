/*
 * matmul_cpu.c — C = A·B on the CPU: a cache-blocked loop in plain C11, for float32 and float64.
 *
 * This is the op's CPU implementation, so the op, opcheck, gradcheck and the MLP test run on any machine. It is
 * honest, simple C: one thread, no intrinsics, the vectorising compiler's SSE2 (the x86-64 baseline) and a blocking
 * for the caches (matmul_cpu_body.h). The lesson compares it with torch's CPU matmul (a BLAS with hand-written
 * AVX2/AVX-512 kernels on every core). Each C element is a sum of K products accumulated in the input's type, in
 * blocks of KC: the same order of rounding as a BLAS, not a float64 reference; the tests take float64 for that.
 */
#include <stdint.h>
#include <stdlib.h>

#include "matmul.h"

/* Blocking. MR×NR is the micro-kernel's block of C in registers (4×8 floats: 8 SSE registers of 4, plus one of A
 * and two of B, within x86-64's 16); KC rows of a strip of B (KC·NR·4 = 8 KB) stay in L1 while MC rows of A
 * (MC·KC·4 = 64 KB) and the KC×NC panel of B (512 KB) stay in L2. */
enum { MC = 64, KC = 256, NC = 512 };

#define MR 4
#define NR 8
#define REAL float
#define NAME(x) x##_f32
#include "matmul_cpu_body.h"
#undef REAL
#undef NAME
#undef NR

#define NR 4 /* 4×4 doubles: 8 SSE registers of 2 */
#define REAL double
#define NAME(x) x##_f64
#include "matmul_cpu_body.h"
#undef REAL
#undef NAME
#undef NR
#undef MR

int matmul_cpu(course_dtype dtype, int64_t M, int64_t N, int64_t K, matmul_operand a, matmul_operand b, void *c,
               int64_t ldc) {
    if (M < 0 || N < 0 || K < 0 || (M > 1 && ldc < N)) return -1;
    if (M == 0 || N == 0) return 0; /* nothing to write */
    if (c == NULL || (K > 0 && (a.data == NULL || b.data == NULL))) return -1;
    switch (dtype) {
        case COURSE_FLOAT32:
            return matmul_f32(M, N, K, a.data, a.row_stride, a.col_stride, b.data, b.row_stride, b.col_stride, c, ldc);
        case COURSE_FLOAT64:
            return matmul_f64(M, N, K, a.data, a.row_stride, a.col_stride, b.data, b.row_stride, b.col_stride, c, ldc);
        default:
            return -1;
    }
}
