/*
 * course_dtype.h — the element types the course's kernels take, as one plain C enum.
 *
 * A launcher behind a C header receives `const void *` data and a course_dtype saying what it points to; the
 * binding maps a tensor's dtype to it (course::dtype_of in course_torch.h), and the .cu file turns it back into a
 * C++ type once (course::with_element_type in course_launch.cuh). Every chapter uses this one enum, in this order.
 */
#ifndef COURSE_DTYPE_H
#define COURSE_DTYPE_H

typedef enum {
    COURSE_FLOAT32 = 0,
    COURSE_FLOAT64 = 1,
    COURSE_FLOAT16 = 2,
    COURSE_BFLOAT16 = 3,
} course_dtype;

/* Bytes per element of a course_dtype (0 for a value outside the enum). */
static inline int course_dtype_size(course_dtype dtype) {
    switch (dtype) {
        case COURSE_FLOAT32:
            return 4;
        case COURSE_FLOAT64:
            return 8;
        case COURSE_FLOAT16:
        case COURSE_BFLOAT16:
            return 2;
    }
    return 0;
}

#endif /* COURSE_DTYPE_H */
