// binding.cpp — registers y = x*x + b with PyTorch's dispatcher: one op, two devices, autograd in C++.
//
//   torch.ops.square_bias_cuda.square_bias(x, b)   CPU: chapter 01's C core    CUDA: square_bias_kernels.cu
//
// The dispatcher looks at the tensors' device and calls the matching implementation below. Before it, on every
// call, it runs the op's Autograd kernel (square_bias_autograd, registered for both devices): it records the
// backward when an input needs a gradient, and otherwise passes the call straight down. It is C++, so a call runs
// no Python beyond the line that makes it. The fake (shape-only) implementation is registered in Python
// (square_bias_cuda/ops.py).
// Each implementation checks its inputs once, at its top, with the course's helpers (common/include/course_torch.h:
// TypeError for a dtype, ValueError for a device or a shape, the messages of Python's course.checks), then arranges
// memory (contiguous, broadcast → "b repeats every b_n elements"), allocates the outputs and calls the C launchers
// on PyTorch's current stream, under a guard for the tensors' GPU.
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/full.h>
#include <ATen/ops/zeros.h>
#include <c10/core/SymIntArrayRef.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>

#include <cmath>
#include <tuple>
#include <vector>

#include "course_torch.h"
#include "square_bias.h"  // chapter 01's C core (the CPU implementation)
#include "square_bias_kernels.h"

namespace {

using at::Tensor;

// ---- input checks (one set per op, called first thing by each of its implementations) -----------------------------
void check_float_dtype(const char *name, const Tensor &t) {
    course::check_dtype(name, t, {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16});
}

// square_bias(x, b). ops.py's check_inputs says the same in Python, for the fake implementation.
void check_square_bias_inputs(const Tensor &x, const Tensor &b) {
    check_float_dtype("x", x);
    check_float_dtype("b", b);
    course::check_same_device("x", x, "b", b);
    course::check_same_dtype("x", x, "b", b);
    course::check_broadcastable_to("b", b.sizes(), "x", x.sizes());
}

// square_bias_grad_x(grad_y, x), and square_bias_backward's tensors.
void check_grad_inputs(const Tensor &grad_y, const Tensor &x) {
    check_float_dtype("x", x);
    course::check_same_device("grad_y", grad_y, "x", x);
    course::check_same_dtype("grad_y", grad_y, "x", x);
    course::check_same_shape("grad_y", grad_y, "x", x);
}

// ---- memory: contiguous, and b's broadcast as the kernels take it ---------------------------------------------------
struct Prepared {
    Tensor x, b;  // contiguous; b holds b_n elements
    int64_t n, b_n;
};

// The C core's and the kernels' broadcast contract: b repeats every b_n elements of x (course::repeat_length). A b
// that broadcasts some other way (a column, say) is materialised at x's shape first.
Prepared prepare(const Tensor &x, const Tensor &b) {
    Prepared p{x.contiguous(), b, x.numel(), course::repeat_length(b.sizes(), x.sizes())};
    if (p.b_n == 0) {  // materialise: b of x's shape
        p.b = b.expand(x.sizes()).contiguous();
        p.b_n = p.n;
    } else {
        p.b = b.contiguous();
    }
    return p;
}

void check_core(int status, const char *what) {
    TORCH_CHECK(status == SQUARE_BIAS_OK, what, ": chapter 01's C core rejected the sizes (status ", status, ")");
}

// ---- CPU: chapter 01's C core ------------------------------------------------------------------------------------
// The core has float32 and float64 functions; float16 and bfloat16 go through float32 (computed in float32, as on
// the GPU) and are rounded once at the end.
Tensor forward_cpu(const Tensor &x_, const Tensor &b_) {
    check_square_bias_inputs(x_, b_);
    Prepared p = prepare(x_, b_);
    const bool half = p.x.scalar_type() == at::kHalf || p.x.scalar_type() == at::kBFloat16;
    Tensor x = half ? p.x.to(at::kFloat) : p.x, b = half ? p.b.to(at::kFloat) : p.b;
    Tensor y = at::empty(x.sizes(), x.options());
    if (p.n > 0) {
        if (x.scalar_type() == at::kFloat)
            check_core(square_bias_forward_f32(x.const_data_ptr<float>(), b.const_data_ptr<float>(),
                                               y.mutable_data_ptr<float>(), p.n, p.b_n),
                       "square_bias_forward_f32");
        else
            check_core(square_bias_forward_f64(x.const_data_ptr<double>(), b.const_data_ptr<double>(),
                                               y.mutable_data_ptr<double>(), p.n, p.b_n),
                       "square_bias_forward_f64");
    }
    return half ? y.to(x_.scalar_type()) : y;
}

// grad_x and grad_b in one pass of the core. grad_b comes back in b's shape. The schema's b_shape is SymInt[]
// (torch.compile may trace it symbolically); a kernel always gets concrete sizes, which the macro reads out.
std::tuple<Tensor, Tensor> backward_cpu(const Tensor &grad_y_, const Tensor &x_, c10::SymIntArrayRef b_shape_sym) {
    const at::IntArrayRef b_shape = C10_AS_INTARRAYREF_SLOW(b_shape_sym);
    check_grad_inputs(grad_y_, x_);
    course::check_broadcastable_to("b", b_shape, "x", x_.sizes());
    const int64_t n = x_.numel(), r = course::repeat_length(b_shape, x_.sizes()), b_n = r == 0 ? n : r;
    const bool half = x_.scalar_type() == at::kHalf || x_.scalar_type() == at::kBFloat16;
    Tensor x = (half ? x_.to(at::kFloat) : x_).contiguous();
    Tensor grad_y = (half ? grad_y_.to(at::kFloat) : grad_y_).contiguous();
    Tensor grad_x = at::empty(x.sizes(), x.options());
    Tensor grad_b = at::empty({b_n}, x.options());
    if (n > 0) {
        if (x.scalar_type() == at::kFloat)
            check_core(
                square_bias_backward_f32(x.const_data_ptr<float>(), grad_y.const_data_ptr<float>(),
                                         grad_x.mutable_data_ptr<float>(), grad_b.mutable_data_ptr<float>(), n, b_n),
                "square_bias_backward_f32");
        else
            check_core(
                square_bias_backward_f64(x.const_data_ptr<double>(), grad_y.const_data_ptr<double>(),
                                         grad_x.mutable_data_ptr<double>(), grad_b.mutable_data_ptr<double>(), n, b_n),
                "square_bias_backward_f64");
    } else {
        grad_b.zero_();
    }
    grad_b = r == 0 ? grad_b.view(x.sizes()).sum_to_size(b_shape) : grad_b.view(b_shape);
    if (half) return {grad_x.to(x_.scalar_type()), grad_b.to(x_.scalar_type())};
    return {grad_x, grad_b.contiguous()};
}

Tensor grad_x_cpu(const Tensor &grad_y, const Tensor &x) {
    return std::get<0>(backward_cpu(grad_y, x, {}));  // b_shape () checks nothing more: a scalar fits any x
}

// ---- CUDA: square_bias_kernels.cu ---------------------------------------------------------------------------------
Tensor forward_cuda(const Tensor &x, const Tensor &b) {
    check_square_bias_inputs(x, b);
    Prepared p = prepare(x, b);
    const c10::cuda::CUDAGuard guard(p.x.device());  // launches and allocations go to x's GPU
    Tensor y = at::empty(p.x.sizes(), p.x.options());
    COURSE_CHECK_LAUNCH(square_bias_forward_cuda(course::dtype_of(p.x), p.x.const_data_ptr(), p.b.const_data_ptr(),
                                                 y.mutable_data_ptr(), p.n, p.b_n, c10::cuda::getCurrentCUDAStream()));
    return y;
}

// grad_x = 2 x grad_y, for checked, contiguous tensors on the current GPU.
Tensor launch_grad_x(const Tensor &grad_y, const Tensor &x) {
    Tensor grad_x = at::empty(x.sizes(), x.options());
    COURSE_CHECK_LAUNCH(square_bias_grad_x_cuda(course::dtype_of(x), grad_y.const_data_ptr(), x.const_data_ptr(),
                                                grad_x.mutable_data_ptr(), x.numel(),
                                                c10::cuda::getCurrentCUDAStream()));
    return grad_x;
}

Tensor grad_x_cuda(const Tensor &grad_y, const Tensor &x) {
    check_grad_inputs(grad_y, x);
    const c10::cuda::CUDAGuard guard(x.device());
    return launch_grad_x(grad_y.contiguous(), x.contiguous());
}

std::tuple<Tensor, Tensor> backward_cuda(const Tensor &grad_y_, const Tensor &x_, c10::SymIntArrayRef b_shape_sym) {
    const at::IntArrayRef b_shape = C10_AS_INTARRAYREF_SLOW(b_shape_sym);
    check_grad_inputs(grad_y_, x_);
    course::check_broadcastable_to("b", b_shape, "x", x_.sizes());
    const c10::cuda::CUDAGuard guard(x_.device());
    Tensor x = x_.contiguous(), grad_y = grad_y_.contiguous();
    const int64_t n = x.numel(), r = course::repeat_length(b_shape, x.sizes());
    const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
    const course_dtype dtype = course::dtype_of(x);
    if (r == 0) {  // b was materialised in the forward: grad_x by the kernel, grad_b by PyTorch's reduction
        return {launch_grad_x(grad_y, x), grad_y.sum_to_size(b_shape).contiguous()};
    }
    Tensor grad_x = at::empty(x.sizes(), x.options());
    Tensor grad_b = at::empty(b_shape, x.options());
    if (n == 0) return {grad_x, grad_b.zero_()};
    size_t bytes = 0;
    COURSE_CHECK_LAUNCH(square_bias_backward_workspace_bytes(dtype, n, r, &bytes));
    // Scratch for the per-block partial sums, from PyTorch's caching allocator (on this stream: no sync needed).
    Tensor workspace = at::empty({static_cast<int64_t>(bytes)}, x.options().dtype(at::kByte));
    COURSE_CHECK_LAUNCH(square_bias_backward_cuda(dtype, grad_y.const_data_ptr(), x.const_data_ptr(),
                                                  grad_x.mutable_data_ptr(), grad_b.mutable_data_ptr(), n, r,
                                                  workspace.mutable_data_ptr(), bytes, stream));
    return {grad_x, grad_b};
}

// ---- autograd, in C++: one kernel for both devices -----------------------------------------------------------------
// The ops, looked up once, for calling them through the dispatcher: under torch.compile the call then reaches the
// fake implementation instead of a device kernel.
const c10::TypedOperatorHandle<Tensor(const Tensor &, const Tensor &)> &square_bias_op() {
    static const auto op = c10::Dispatcher::singleton()
                               .findSchemaOrThrow("square_bias_cuda::square_bias", "")
                               .typed<Tensor(const Tensor &, const Tensor &)>();
    return op;
}
const c10::TypedOperatorHandle<Tensor(const Tensor &, const Tensor &)> &grad_x_op() {
    static const auto op = c10::Dispatcher::singleton()
                               .findSchemaOrThrow("square_bias_cuda::square_bias_grad_x", "")
                               .typed<Tensor(const Tensor &, const Tensor &)>();
    return op;
}
using BackwardSignature = std::tuple<Tensor, Tensor>(const Tensor &, const Tensor &, c10::SymIntArrayRef);
const c10::TypedOperatorHandle<BackwardSignature> &backward_op() {
    static const auto op = c10::Dispatcher::singleton()
                               .findSchemaOrThrow("square_bias_cuda::square_bias_backward", "")
                               .typed<BackwardSignature>();
    return op;
}

// y = x*x + b: dy/dx = 2x, dy/db = 1 (summed over the dimensions b is broadcast along). The forward saves x (an
// input: no extra memory) and b's shape; the backward calls the fused backward ops, themselves registered ops with
// CPU and CUDA implementations (and opcheck'ed in the tests).
struct SquareBiasFunction : public torch::autograd::Function<SquareBiasFunction> {
    static Tensor forward(torch::autograd::AutogradContext *ctx, const Tensor &x, const Tensor &b) {
        ctx->save_for_backward({x});
        ctx->saved_data["b_shape"] = b.sym_sizes();
        const at::AutoDispatchBelowADInplaceOrView below_autograd;  // on to the device's kernel
        return square_bias_op().call(x, b);
    }
    static torch::autograd::variable_list backward(torch::autograd::AutogradContext *ctx,
                                                   torch::autograd::variable_list grads) {
        const Tensor x = ctx->get_saved_variables()[0];
        const Tensor &grad_y = grads[0];
        const std::vector<c10::SymInt> b_shape = ctx->saved_data["b_shape"].toSymIntVector();
        const bool need_x = ctx->needs_input_grad(0), need_b = ctx->needs_input_grad(1);
        if (!need_b || c10::SymIntArrayRef(b_shape).equals(x.sym_sizes())) {
            // b of x's shape: grad_b *is* grad_y, no copy (eager PyTorch does the same); grad_x in one pass.
            return {need_x ? grad_x_op().call(grad_y, x) : Tensor(), need_b ? grad_y : Tensor()};
        }
        // A broadcast b: one fused pass writes grad_x and reduces grad_y into grad_b.
        auto [grad_x, grad_b] = backward_op().call(grad_y, x, b_shape);
        return {need_x ? grad_x : Tensor(), grad_b};
    }
};

// The op's Autograd kernel. The dispatcher passes the key set it dispatched with as the first argument.
Tensor square_bias_autograd(c10::DispatchKeySet keys, const Tensor &x, const Tensor &b) {
    if (!at::GradMode::is_enabled() || !(x.requires_grad() || b.requires_grad())) {
        // Nothing to record: hand the call to the next kernel below autograd (CPU, CUDA, or the fake impl under
        // torch.compile) with redispatch, as PyTorch's own autograd kernels do, without building an autograd node.
        const at::AutoDispatchBelowADInplaceOrView below_autograd;
        return square_bias_op().redispatch(keys & c10::after_autograd_keyset, x, b);
    }
    return SquareBiasFunction::apply(x, b);
}

// ---- test helpers and pitfalls ------------------------------------------------------------------------------------
// The kernels' per-thread code run on the CPU for a small grid (float32/float64 CPU tensors).
Tensor emulate_forward_cpu(const Tensor &x, const Tensor &b, int64_t grid, int64_t block) {
    course::check_dtype("x", x, {at::kFloat, at::kDouble});  // the emulation runs float32/float64 only
    course::check_same_dtype("x", x, "b", b);
    course::check_broadcastable_to("b", b.sizes(), "x", x.sizes());
    TORCH_CHECK_VALUE(grid >= 1 && block >= 1, "emulate_forward: grid and block must be >= 1, got ", grid, " and ",
                      block);
    Prepared p = prepare(x, b);
    Tensor y = at::full(p.x.sizes(), NAN, p.x.options());  // anything the threads miss stays NaN
    const int status = square_bias_emulate_forward(course::dtype_of(p.x), p.x.const_data_ptr(), p.b.const_data_ptr(),
                                                   y.mutable_data_ptr(), p.n, p.b_n, static_cast<unsigned>(grid),
                                                   static_cast<unsigned>(block));
    TORCH_CHECK(status == 0, "emulate_forward: the emulation refused its arguments");
    return y;
}

std::tuple<Tensor, Tensor> emulate_backward_cpu(const Tensor &grad_y_, const Tensor &x_, int64_t b_n, int64_t grid_x,
                                                int64_t grid_y) {
    course::check_dtype("x", x_, {at::kFloat, at::kDouble});
    course::check_same_dtype("grad_y", grad_y_, "x", x_);
    course::check_same_shape("grad_y", grad_y_, "x", x_);
    TORCH_CHECK_VALUE(b_n >= 1 && x_.numel() > 0 && x_.numel() % b_n == 0,
                      "emulate_backward: b_n must divide x's size ", x_.numel(), ", got ", b_n);
    TORCH_CHECK_VALUE(grid_x >= 1 && grid_y >= 1, "emulate_backward: grid_x and grid_y must be >= 1");
    Tensor x = x_.contiguous(), grad_y = grad_y_.contiguous();
    Tensor grad_x = at::full(x.sizes(), NAN, x.options()), grad_b = at::full({b_n}, NAN, x.options());
    const int status = square_bias_emulate_backward(course::dtype_of(x), grad_y.const_data_ptr(), x.const_data_ptr(),
                                                    grad_x.mutable_data_ptr(), grad_b.mutable_data_ptr(), x.numel(),
                                                    b_n, static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y));
    TORCH_CHECK(status == 0, "emulate_backward: the emulation refused its arguments");
    return {grad_x, grad_b};
}

Tensor pitfall_cuda(const Tensor &x_, const Tensor &b_, bool seed_index) {
    course::check_dtype("x", x_, {at::kFloat});  // the pitfall demos take a 2D float32 x and b of x's shape
    course::check_ndim("x", x_, 2);
    course::check_same_device("x", x_, "b", b_);
    course::check_same_dtype("x", x_, "b", b_);
    course::check_same_shape("x", x_, "b", b_);
    const c10::cuda::CUDAGuard guard(x_.device());
    Tensor x = x_.contiguous(), b = b_.contiguous();
    Tensor y = at::zeros(x.sizes(), x.options());  // what the kernel does not write stays 0
    const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
    const float *xp = x.const_data_ptr<float>(), *bp = b.const_data_ptr<float>();
    float *yp = y.mutable_data_ptr<float>();
    COURSE_CHECK_LAUNCH(seed_index ? pitfall_seed_index_forward_cuda(xp, bp, yp, x.size(0), x.size(1), stream)
                                   : pitfall_rows_grid_forward_cuda(xp, bp, yp, x.size(0), x.size(1), stream));
    return y;
}

Tensor pitfall_seed_index(const Tensor &x, const Tensor &b) {
    return pitfall_cuda(x, b, true);
}
Tensor pitfall_rows_grid(const Tensor &x, const Tensor &b) {
    return pitfall_cuda(x, b, false);
}

}  // namespace

// SymInt[] b_shape (as in chapter 01): under torch.compile b's shape may stay symbolic.
TORCH_LIBRARY(square_bias_cuda, m) {
    m.def("square_bias(Tensor x, Tensor b) -> Tensor");
    m.def("square_bias_backward(Tensor grad_y, Tensor x, SymInt[] b_shape) -> (Tensor grad_x, Tensor grad_b)");
    m.def("square_bias_grad_x(Tensor grad_y, Tensor x) -> Tensor");
    m.def("emulate_forward(Tensor x, Tensor b, int grid, int block) -> Tensor");
    m.def("emulate_backward(Tensor grad_y, Tensor x, int b_n, int grid_x, int grid_y) -> (Tensor, Tensor)");
    m.def("pitfall_seed_index(Tensor x, Tensor b) -> Tensor");
    m.def("pitfall_rows_grid(Tensor x, Tensor b) -> Tensor");
}

TORCH_LIBRARY_IMPL(square_bias_cuda, CPU, m) {
    m.impl("square_bias", &forward_cpu);
    m.impl("square_bias_backward", &backward_cpu);
    m.impl("square_bias_grad_x", &grad_x_cpu);
    m.impl("emulate_forward", &emulate_forward_cpu);
    m.impl("emulate_backward", &emulate_backward_cpu);
}

TORCH_LIBRARY_IMPL(square_bias_cuda, CUDA, m) {
    m.impl("square_bias", &forward_cuda);
    m.impl("square_bias_backward", &backward_cuda);
    m.impl("square_bias_grad_x", &grad_x_cuda);
    m.impl("pitfall_seed_index", &pitfall_seed_index);
    m.impl("pitfall_rows_grid", &pitfall_rows_grid);
}

// Autograd covers every device (AutogradCPU, AutogradCUDA, ...): the backward is written once, for both.
TORCH_LIBRARY_IMPL(square_bias_cuda, Autograd, m) {
    m.impl("square_bias", &square_bias_autograd);
}

COURSE_PYTHON_MODULE()
