// binding.cpp — the only C++ in this chapter: it registers the op with PyTorch's dispatcher and hands raw
// pointers to the C core (square_bias.h). Python reaches it as torch.ops.square_bias.square_bias(x, b).
//
// What the binding does around the C call:
//   * checks its inputs again (Python checked them first; these guard callers who go straight to torch.ops);
//   * makes x and grad_y contiguous (a no-op when they already are);
//   * turns b's broadcast into the C core's contract: when b's shape (leading 1s dropped) equals x's trailing
//     dims, b already repeats every b.numel() elements of x; any other broadcast (a column, say) is materialised
//     with expand + contiguous, and its gradient is reduced with sum_to_size.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <c10/core/SymIntArrayRef.h>
#include <torch/library.h>

#include <tuple>

#include "course_torch.h"
#include "square_bias.h"

namespace {

void check_inputs(const char *op, const at::Tensor &x, const char *other_name, const at::Tensor &other) {
    COURSE_CHECK(x.device().is_cpu(), op, ": x must be a CPU tensor, but it is on ", x.device());
    COURSE_CHECK(other.device().is_cpu(), op, ": ", other_name, " must be a CPU tensor, but it is on ", other.device());
    COURSE_CHECK(x.scalar_type() == at::kFloat || x.scalar_type() == at::kDouble, op, ": x has dtype ", x.scalar_type(),
                 ", but only float32 and float64 are supported");
    COURSE_CHECK(other.scalar_type() == x.scalar_type(), op, ": x and ", other_name,
                 " must have the same dtype, but x has ", x.scalar_type(), " and ", other_name, " has ",
                 other.scalar_type());
}

// How many elements of x one copy of b covers, when b's shape (leading 1s dropped) equals x's trailing dims;
// -1 when b broadcasts some other way.
int64_t repeating_block(at::IntArrayRef b_shape, at::IntArrayRef x_shape) {
    size_t first = 0;
    while (first < b_shape.size() && b_shape[first] == 1) ++first;
    const at::IntArrayRef kept = b_shape.slice(first);
    if (kept.size() > x_shape.size()) return -1;
    int64_t block = 1;
    for (size_t i = 0; i < kept.size(); ++i) {
        if (kept[i] != x_shape[x_shape.size() - kept.size() + i]) return -1;
        block *= kept[i];
    }
    return block;
}

// b broadcasts to x without changing x's shape: right-aligned, each of b's sizes is 1 or x's size.
void check_broadcast(const char *op, at::IntArrayRef b_shape, at::IntArrayRef x_shape) {
    bool ok = b_shape.size() <= x_shape.size();
    for (size_t i = 0; ok && i < b_shape.size(); ++i) {
        const int64_t b_size = b_shape[b_shape.size() - 1 - i], x_size = x_shape[x_shape.size() - 1 - i];
        ok = b_size == 1 || b_size == x_size;
    }
    COURSE_CHECK(ok, op, ": b of shape ", b_shape, " cannot be broadcast to x's shape ", x_shape);
}

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
    check_inputs("square_bias", x, "b", b);
    check_broadcast("square_bias", b.sizes(), x.sizes());
    const at::Tensor xc = x.contiguous();
    int64_t b_n = repeating_block(b.sizes(), x.sizes());
    const at::Tensor bc = b_n >= 0 ? b.contiguous() : b.expand(x.sizes()).contiguous();
    if (b_n < 0) b_n = x.numel();
    at::Tensor y = at::empty_like(xc, at::MemoryFormat::Contiguous);
    const int status = forward_core(xc, bc, y, b_n);
    COURSE_CHECK(status == SQUARE_BIAS_OK, "square_bias: the C core refused sizes n=", x.numel(), ", b_n=", b_n);
    return y;
}

// (grad_x, grad_b) = (2 * x * grad_y, grad_y summed down to b_shape), in one pass over x and grad_y.
std::tuple<at::Tensor, at::Tensor> square_bias_backward_cpu(const at::Tensor &grad_y, const at::Tensor &x,
                                                            c10::SymIntArrayRef b_shape_sym) {
    const at::IntArrayRef b_shape = C10_AS_INTARRAYREF_SLOW(b_shape_sym);
    check_inputs("square_bias_backward", x, "grad_y", grad_y);
    COURSE_CHECK(grad_y.sizes() == x.sizes(), "square_bias_backward: grad_y has shape ", grad_y.sizes(),
                 " but x has shape ", x.sizes());
    check_broadcast("square_bias_backward", b_shape, x.sizes());
    const at::Tensor xc = x.contiguous();
    const at::Tensor gy = grad_y.contiguous();
    at::Tensor grad_x = at::empty_like(xc, at::MemoryFormat::Contiguous);
    const int64_t b_n = repeating_block(b_shape, x.sizes());
    if (b_n >= 0) {
        at::Tensor grad_b = at::empty(b_shape, x.options());
        const int status = backward_core(xc, gy, grad_x, &grad_b, b_n);
        COURSE_CHECK(status == SQUARE_BIAS_OK, "square_bias_backward: the C core refused n=", x.numel(), ", b_n=", b_n);
        return {grad_x, grad_b};
    }
    // b was materialised in the forward: its gradient is grad_y summed over the broadcast dims.
    const int status = backward_core(xc, gy, grad_x, nullptr, x.numel());
    COURSE_CHECK(status == SQUARE_BIAS_OK, "square_bias_backward: the C core refused n=", x.numel());
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
