/*
 * add2_torch.h — the C++ glue shared by both bindings of add2 (C++, PyTorch API):
 * add2_ops.cpp registers it with the dispatcher (TORCH_LIBRARY), add2_pybind.cpp binds it with pybind11.
 *
 * Checks come first in Python (add2/ops.py); these TORCH_CHECKs are the second line, for callers that reach the
 * op directly. n is always derived from the tensors here: the seed's separate `n` argument is kept only in the
 * pitfall op (add2_ops.cpp).
 */
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty_like.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "add2.h"
#include "course_torch.h"

namespace add2_torch {

inline add2_dtype dtype_code(const at::Tensor &t) {
    switch (t.scalar_type()) {
        case at::kFloat:
            return ADD2_FLOAT32;
        case at::kHalf:
            return ADD2_FLOAT16;
        case at::kBFloat16:
            return ADD2_BFLOAT16;
        case at::kDouble:
            return ADD2_FLOAT64;
        default:
            COURSE_CHECK(false, "add2: dtype ", t.scalar_type(),
                         " is not supported (float32, float16, bfloat16, float64)");
    }
}

inline void check_inputs(const at::Tensor &a, const at::Tensor &b) {
    COURSE_CHECK(a.is_cuda(), "add2: a must be a CUDA tensor, got one on ", a.device());
    COURSE_CHECK(b.device() == a.device(), "add2: a and b must be on the same device, got ", a.device(), " and ",
                 b.device());
    COURSE_CHECK(a.scalar_type() == b.scalar_type(), "add2: a and b must have the same dtype, got ", a.scalar_type(),
                 " and ", b.scalar_type());
    COURSE_CHECK(a.sizes() == b.sizes(), "add2: a and b must have the same shape, got ", a.sizes(), " and ", b.sizes());
    COURSE_CHECK(a.is_contiguous() && b.is_contiguous(), "add2: a and b must be contiguous");
    dtype_code(a);
}

/* c = a + b with version 2 (vectorized); blocks_per_sm = 0 is the default launch size. */
inline at::Tensor add2_vec(const at::Tensor &a, const at::Tensor &b, int64_t blocks_per_sm) {
    check_inputs(a, b);
    COURSE_CHECK(blocks_per_sm >= 0 && blocks_per_sm <= 64, "add2: blocks_per_sm must be in [0, 64], got ",
                 blocks_per_sm);
    const c10::cuda::CUDAGuard guard(a.device());
    at::Tensor c = at::empty_like(a, at::MemoryFormat::Contiguous);
    COURSE_CHECK_LAUNCH(add2_vec_launch(c.data_ptr(), a.const_data_ptr(), b.const_data_ptr(), a.numel(), dtype_code(a),
                                        (int)blocks_per_sm, c10::cuda::getCurrentCUDAStream()));
    return c;
}

/* c = a + b with version 1 (the seed's kernel), n taken from the tensors. */
inline at::Tensor add2_seed(const at::Tensor &a, const at::Tensor &b) {
    check_inputs(a, b);
    const c10::cuda::CUDAGuard guard(a.device());
    at::Tensor c = at::empty_like(a, at::MemoryFormat::Contiguous);
    COURSE_CHECK_LAUNCH(add2_seed_launch(c.data_ptr(), a.const_data_ptr(), b.const_data_ptr(), a.numel(), dtype_code(a),
                                         c10::cuda::getCurrentCUDAStream()));
    return c;
}

}  // namespace add2_torch
