/*
 * add2_torch.h — the C++ glue shared by both bindings of add2 (C++, PyTorch API):
 * add2_ops.cpp registers it with the dispatcher (TORCH_LIBRARY), add2_pybind.cpp binds it with pybind11 for the
 * JIT lesson.
 *
 * Each function checks its inputs once, here, with the course's check family (common/include/course_torch.h): a
 * wrong dtype raises TypeError, a wrong device or shape ValueError, with the messages of the Python checks
 * (common/course/checks.py). The Python wrappers (add2/ops.py) do not repeat them. Inputs that are not contiguous
 * are copied into contiguous ones first, as torch.add accepts any layout. n is always derived from the tensors
 * here: the seed's separate `n` argument is kept only in the pitfall op (add2_ops.cpp).
 */
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty_like.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "add2.h"
#include "course_torch.h"

namespace add2_torch {

/* a and b: float32, float16, bfloat16 or float64, one dtype, one shape, one CUDA device. */
inline void check_inputs(const at::Tensor &a, const at::Tensor &b) {
    course::check_dtype("a", a, {at::kFloat, at::kHalf, at::kBFloat16, at::kDouble});
    course::check_dtype("b", b, {at::kFloat, at::kHalf, at::kBFloat16, at::kDouble});
    course::check_same_dtype("a", a, "b", b);
    course::check_same_shape("a", a, "b", b);
    course::check_same_device("a", a, "b", b);
    course::check_device("a", a, c10::DeviceType::CUDA);
}

/* c = a + b with version 2 (vectorized); blocks_per_sm = 0 is the default launch size. */
inline at::Tensor add2_vec(const at::Tensor &a_in, const at::Tensor &b_in, int64_t blocks_per_sm) {
    check_inputs(a_in, b_in);
    const c10::cuda::CUDAGuard guard(a_in.device());
    const at::Tensor a = a_in.contiguous(), b = b_in.contiguous();  // no copy when they already are
    at::Tensor c = at::empty_like(a, at::MemoryFormat::Contiguous);
    COURSE_CHECK_LAUNCH(add2_vec_launch(c.data_ptr(), a.const_data_ptr(), b.const_data_ptr(), a.numel(),
                                        course::dtype_of(a), (int)blocks_per_sm, c10::cuda::getCurrentCUDAStream()));
    return c;
}

/* c = a + b with version 1 (the seed's kernel), n taken from the tensors. */
inline at::Tensor add2_seed(const at::Tensor &a_in, const at::Tensor &b_in) {
    check_inputs(a_in, b_in);
    const c10::cuda::CUDAGuard guard(a_in.device());
    const at::Tensor a = a_in.contiguous(), b = b_in.contiguous();
    at::Tensor c = at::empty_like(a, at::MemoryFormat::Contiguous);
    COURSE_CHECK_LAUNCH(add2_seed_launch(c.data_ptr(), a.const_data_ptr(), b.const_data_ptr(), a.numel(),
                                         course::dtype_of(a), c10::cuda::getCurrentCUDAStream()));
    return c;
}

}  // namespace add2_torch
