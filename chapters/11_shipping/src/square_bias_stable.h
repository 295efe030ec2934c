// square_bias_stable.h — what the CPU and the CUDA bindings share: the input checks, against the stable ABI only.
//
// Only torch/csrc/stable and torch/headeronly headers: they reach libtorch through its C shim (aoti_torch_* and
// torch_* functions), which PyTorch promises to keep for at least two years after a release, so one build loads into
// every torch from TORCH_TARGET_VERSION (setup.py: 2.11) on. Never include ATen, c10 or torch/extension.h here.
#pragma once

#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>
#include <torch/headeronly/util/Exception.h>

#include "course_broadcast.h"  // plain C: usable where no ATen header may be included
#include "course_dtype.h"

namespace square_bias {

using torch::headeronly::ScalarType;
using torch::stable::Tensor;

// The course_dtype for a tensor's dtype; false for a dtype the op does not take.
inline bool kernel_dtype(ScalarType type, course_dtype *dtype) {
    switch (type) {
        case ScalarType::Float:
            *dtype = COURSE_FLOAT32;
            return true;
        case ScalarType::Double:
            *dtype = COURSE_FLOAT64;
            return true;
        case ScalarType::Half:
            *dtype = COURSE_FLOAT16;
            return true;
        case ScalarType::BFloat16:
            *dtype = COURSE_BFLOAT16;
            return true;
        default:
            return false;
    }
}

// The op's one check, called first by both implementations. STD_TORCH_CHECK throws std::runtime_error, which
// reaches Python as RuntimeError: the stable headers have no TypeError/ValueError variant. Returns the element type
// and b_n, the number of elements after which b repeats along x.
inline course_dtype check_inputs(const Tensor &x, const Tensor &b, int64_t *b_n) {
    course_dtype dtype;
    STD_TORCH_CHECK(kernel_dtype(x.scalar_type(), &dtype), "x has dtype ", x.scalar_type(),
                    ", but only float32, float64, float16, bfloat16 are supported");
    STD_TORCH_CHECK(x.scalar_type() == b.scalar_type(), "x and b must have the same dtype, but x has ", x.scalar_type(),
                    " and b has ", b.scalar_type());
    STD_TORCH_CHECK(x.is_cpu() == b.is_cpu() && x.get_device_index() == b.get_device_index(),
                    "x and b must be on the same device");
    const auto x_shape = x.sizes(), b_shape = b.sizes();
    if (!course_broadcasts_to(b_shape.data(), b.dim(), x_shape.data(), x.dim())) {
        char b_text[128], x_text[128];
        STD_TORCH_CHECK(false, "b of shape ", course_shape_text(b_text, sizeof b_text, b_shape.data(), b.dim()),
                        " cannot be broadcast to x's shape ",
                        course_shape_text(x_text, sizeof x_text, x_shape.data(), x.dim()));
    }
    *b_n = course_repeat_length(b_shape.data(), b.dim(), x_shape.data(), x.dim());
    STD_TORCH_CHECK(*b_n > 0 || x.numel() == 0,
                    "b must be a scalar, a row or of x's shape; expand any other b to x's shape first");
    return dtype;
}

}  // namespace square_bias
