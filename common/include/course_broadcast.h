/*
 * course_broadcast.h — PyTorch's broadcasting rule for "b is added to x", in plain C (shapes as int64_t arrays).
 *
 *   course_broadcasts_to(b, x)   b broadcasts to x's shape without changing it: right-aligned, each of b's sizes
 *                                is 1 or x's size, and b has no more dimensions than x.
 *   course_repeat_length(b, x)   the kernels' contract "b repeats every b_n elements of x" holds when b's shape,
 *                                leading 1s dropped, equals x's trailing sizes (a scalar, a row, x's own shape):
 *                                returns that b_n, or 0 when b broadcasts some other way (a column, say) and must
 *                                first be expanded to x's shape.
 *   course_shape_text(buf, ...)  a shape as Python prints it, for messages.
 * Used by every binding of x*x + b (chapters 01 and 03, the stable-ABI one too); course/checks.py has the Python
 * twin of the first, with the same message.
 */
#ifndef COURSE_BROADCAST_H
#define COURSE_BROADCAST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

static inline bool course_broadcasts_to(const int64_t *b_shape, int64_t b_dim, const int64_t *x_shape, int64_t x_dim) {
    if (b_dim > x_dim) return false;
    for (int64_t k = 1; k <= b_dim; ++k) {
        const int64_t b_size = b_shape[b_dim - k], x_size = x_shape[x_dim - k];
        if (b_size != 1 && b_size != x_size) return false;
    }
    return true;
}

static inline int64_t course_repeat_length(const int64_t *b_shape, int64_t b_dim, const int64_t *x_shape,
                                           int64_t x_dim) {
    int64_t first = 0;
    while (first < b_dim && b_shape[first] == 1) ++first;
    const int64_t kept = b_dim - first;
    if (kept > x_dim) return 0;
    int64_t b_n = 1;
    for (int64_t j = 0; j < kept; ++j) {
        if (b_shape[first + j] != x_shape[x_dim - kept + j]) return 0;
        b_n *= b_shape[first + j];
    }
    return b_n;
}

/* A shape as Python prints it ("(2, 3)", "(5,)", "()") into buf, cut short if it does not fit; returns buf. For
 * code that has no C++ formatter (the stable-ABI binding). */
static inline const char *course_shape_text(char *buf, size_t size, const int64_t *shape, int64_t dim) {
    size_t used = 0;
    if (size == 0) return buf;
    buf[0] = '\0';
    used += (size_t)snprintf(buf + used, size - used, "(");
    for (int64_t k = 0; k < dim && used < size; ++k) {
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", k ? ", " : "", (long long)shape[k]);
    }
    if (used < size) snprintf(buf + used, size - used, dim == 1 ? ",)" : ")");
    return buf;
}

#endif /* COURSE_BROADCAST_H */
