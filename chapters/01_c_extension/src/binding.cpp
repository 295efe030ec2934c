// binding.cpp — the only C++ in this chapter: it registers the op with PyTorch's dispatcher and hands raw
// pointers to the C core (square_bias.h). Python reaches it as torch.ops.square_bias.square_bias(x, b).
//
// What the binding does around the C call:
//   * checks its inputs once, at the top of each op, with the course's helpers (common/include/course_torch.h):
//     a wrong dtype raises TypeError, a wrong device or shape ValueError, with the messages of Python's
//     course.checks. The Python wrapper does not check again: this is the one place;
//   * makes x and grad_y contiguous (a no-op when they already are);
//   * turns b's broadcast into the C core's contract: when b's shape (leading 1s dropped) equals x's trailing
//     dims, b already repeats every b_n elements of x (course::repeat_length); any other broadcast (a column,
//     say) is materialised with expand + contiguous, and its gradient is reduced with sum_to_size.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <c10/core/SymIntArrayRef.h>
#include <torch/library.h>

#include <tuple>

#include "course_torch.h"
#include "square_bias.h"

namespace {

int forward_core(const at::Tensor &x, const at::Tensor &b, at::Tensor &y, int64_t b_n) {
    if (x.scalar_type() == at::kDouble)
        return square_bias_forward_f64(x.const_data_ptr<double>(), b.const_data_ptr<double>(),
                                       y.mutable_data_ptr<double>(), x.numel(), b_n);
    return square_bias_forward_f32(x.const_data_ptr<float>(), b.const_data_ptr<float>(), y.mutable_data_ptr<float>(),
                                   x.numel(), b_n);
}

int backward_core(const at::Tensor &x, const at::Tensor &grad_y, at::Tensor &grad_x, at::Tensor *grad_b, int64_t b_n) {
    if (x.scalar_type() == at::kDouble)
        return square_bias_backward_f64(x.const_data_ptr<double>(), grad_y.const_data_ptr<double>(),
                                        grad_x.mutable_data_ptr<double>(),
                                        grad_b ? grad_b->mutable_data_ptr<double>() : nullptr, x.numel(), b_n);
    return square_bias_backward_f32(x.const_data_ptr<float>(), grad_y.const_data_ptr<float>(),
                                    grad_x.mutable_data_ptr<float>(),
                                    grad_b ? grad_b->mutable_data_ptr<float>() : nullptr, x.numel(), b_n);
}

// y = x*x + b
at::Tensor square_bias_cpu(const at::Tensor &x, const at::Tensor &b) {
    course::check_dtype("x", x, {at::kFloat, at::kDouble});  // TypeError
    course::check_device("x", x, c10::DeviceType::CPU);      // ValueError
    course::check_dtype("b", b, {at::kFloat, at::kDouble});
    course::check_device("b", b, c10::DeviceType::CPU);
    course::check_same_dtype("x", x, "b", b);
    course::check_broadcastable_to("b", b.sizes(), "x", x.sizes());

    const at::Tensor xc = x.contiguous();
    int64_t b_n = course::repeat_length(b.sizes(), x.sizes());  // 0: b must be expanded to x's shape first
    const at::Tensor bc = b_n > 0 ? b.contiguous() : b.expand(x.sizes()).contiguous();
    if (b_n == 0) b_n = x.numel();
    at::Tensor y = at::empty_like(xc, at::MemoryFormat::Contiguous);
    const int status = forward_core(xc, bc, y, b_n);
    TORCH_CHECK(status == SQUARE_BIAS_OK, "square_bias: the C core refused sizes n=", x.numel(), ", b_n=", b_n);
    return y;
}

// (grad_x, grad_b) = (2 * x * grad_y, grad_y summed down to b_shape), in one pass over x and grad_y.
// b_shape is SymInt[] in the schema; this CPU kernel always gets concrete sizes, which the macro reads out.
std::tuple<at::Tensor, at::Tensor> square_bias_backward_cpu(const at::Tensor &grad_y, const at::Tensor &x,
                                                            c10::SymIntArrayRef b_shape_sym) {
    const at::IntArrayRef b_shape = C10_AS_INTARRAYREF_SLOW(b_shape_sym);
    course::check_dtype("x", x, {at::kFloat, at::kDouble});
    course::check_device("x", x, c10::DeviceType::CPU);
    course::check_device("grad_y", grad_y, c10::DeviceType::CPU);
    course::check_same_dtype("grad_y", grad_y, "x", x);
    course::check_same_shape("grad_y", grad_y, "x", x);
    course::check_broadcastable_to("b", b_shape, "x", x.sizes());

    const at::Tensor xc = x.contiguous();
    const at::Tensor gy = grad_y.contiguous();
    at::Tensor grad_x = at::empty_like(xc, at::MemoryFormat::Contiguous);
    const int64_t b_n = course::repeat_length(b_shape, x.sizes());
    if (b_n > 0) {
        at::Tensor grad_b = at::empty(b_shape, x.options());
        const int status = backward_core(xc, gy, grad_x, &grad_b, b_n);
        TORCH_CHECK(status == SQUARE_BIAS_OK, "square_bias_backward: the C core refused n=", x.numel(), ", b_n=", b_n);
        return {grad_x, grad_b};
    }
    // b was materialised in the forward: its gradient is grad_y summed over the broadcast dims.
    const int status = backward_core(xc, gy, grad_x, nullptr, x.numel());
    TORCH_CHECK(status == SQUARE_BIAS_OK, "square_bias_backward: the C core refused n=", x.numel());
    return {grad_x, gy.sum_to_size(b_shape)};
}

}  // namespace

// The schemas: what torch.ops.square_bias.* accept and return. SymInt[] lets torch.compile keep b's shape symbolic.
TORCH_LIBRARY(square_bias, m) {
    m.def("square_bias(Tensor x, Tensor b) -> Tensor");
    m.def("square_bias_backward(Tensor grad_y, Tensor x, SymInt[] b_shape) -> (Tensor, Tensor)");
}

// The CPU implementations. (Chapter 03 adds CUDA ones for its own op the same way.)
TORCH_LIBRARY_IMPL(square_bias, CPU, m) {
    m.impl("square_bias", &square_bias_cpu);
    m.impl("square_bias_backward", &square_bias_backward_cpu);
}

COURSE_PYTHON_MODULE()
