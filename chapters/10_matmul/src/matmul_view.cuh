/*
 * matmul_view.cuh — how the kernels, and the CPU emulation of rung 2, see a matrix (CUDA C++, host and device).
 *
 * A MatrixView is a pointer, a shape and two strides: element (i, j) is data[i*row_stride + j*col_stride]. A
 * transposed PyTorch view is the same memory with the strides swapped, so the kernels read Aᵀ or a sliced view
 * without a copy. Strides and indices are int64_t: a row stride times a row index passes 2^31 in a large matrix.
 */
#pragma once

#include <stdint.h>

template <typename T>
struct MatrixView {
    const T *data;
    int64_t rows, cols;
    int64_t row_stride, col_stride;
};
