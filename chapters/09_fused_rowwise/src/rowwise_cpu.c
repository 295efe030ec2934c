/*
 * rowwise_cpu.c — the CPU ops and the chapter's reference: softmax, LayerNorm and RMSNorm, forward and backward,
 * one row at a time, accumulated in double (rowwise_cpu_impl.h, compiled here for float and for double).
 *
 * The binding gives float16 and bfloat16 inputs to the float version (converted once, rounded once at the end).
 * A calloc that fails leaves dw/db unwritten: the binding allocates with PyTorch first, so it cannot happen for
 * sizes PyTorch could hold.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "rowwise.h"

#define REAL float
#define SUFFIX f32
#include "rowwise_cpu_impl.h"
#undef REAL
#undef SUFFIX

#define REAL double
#define SUFFIX f64
#include "rowwise_cpu_impl.h"
#undef REAL
#undef SUFFIX
