// norm_diff_binding.cpp — the PyTorch side of ‖a − b‖₂: three ops in the dispatcher, a CPU and a CUDA kernel each,
// and the autograd kernels of the two that are differentiable.
//
//   norm_diff::norm_diff(Tensor a, Tensor b, int version=3) -> Tensor            a 0-dim tensor of a's dtype
//   norm_diff::norm_diff_backward(Tensor grad, Tensor a, Tensor b, Tensor norm) -> Tensor   grad_a
//   norm_diff::norm_diff_sum_squares(Tensor a, Tensor b) -> Tensor   Σ (a − b)², a 0-dim float64 tensor
//
// The dispatcher picks the CPU or the CUDA function from the tensors' device. Each checks its inputs once, at its
// top, with the course's check family (common/include/course_torch.h: TypeError for a dtype, ValueError for a
// device or shape, the messages of common/course/checks.py); norm_diff/ops.py calls the ops and checks nothing
// again. Autograd is registered here too (TORCH_LIBRARY_IMPL(..., Autograd, m)), so a call runs no Python beyond
// the dispatcher's entry; the fake (meta) implementations are in Python (torch.library.register_fake).
// NORM_DIFF_NS is the op namespace: norm_diff for the setuptools build, another one for the JIT build, since one
// process may load both and a namespace can be defined only once.
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/scalar_tensor.h>
#include <c10/core/ScalarType.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>

#include "course_torch.h"
#include "norm_diff.h"

#ifndef NORM_DIFF_NS
#define NORM_DIFF_NS norm_diff
#endif
// One more level of macros so that NORM_DIFF_NS is replaced by its value before TORCH_LIBRARY pastes it.
#define NORM_TORCH_LIBRARY(ns, m) TORCH_LIBRARY(ns, m)
#define NORM_TORCH_LIBRARY_IMPL(ns, key, m) TORCH_LIBRARY_IMPL(ns, key, m)
#define NORM_OP_NAME(op) COURSE_STRINGIFY(NORM_DIFF_NS) "::" op

namespace {

// a and b: one of the four dtypes, one dtype, one device, one shape (the order of course.checks.check_same).
void check_pair(const at::Tensor &a, const at::Tensor &b) {
    course::check_dtype("a", a, {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16});
    course::check_dtype("b", b, {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16});
    course::check_same_device("a", a, "b", b);
    course::check_same_dtype("a", a, "b", b);
    course::check_same_shape("a", a, "b", b);
}

void check_version(int64_t version) {
    TORCH_CHECK_VALUE(version >= NORM_VERSION_FIRST && version <= NORM_VERSION_LAST, "version must be in ",
                      NORM_VERSION_FIRST, "..", NORM_VERSION_LAST, ", got ", version);
}

void check_backward(const at::Tensor &grad, const at::Tensor &a, const at::Tensor &b, const at::Tensor &norm) {
    check_pair(a, b);
    TORCH_CHECK_VALUE(grad.numel() == 1 && norm.numel() == 1, "grad and norm must hold one element each, but grad has ",
                      grad.numel(), " and norm has ", norm.numel());
    course::check_same_dtype("grad", grad, "a", a);
    course::check_same_dtype("norm", norm, "a", a);
    course::check_same_device("grad", grad, "a", a);
    course::check_same_device("norm", norm, "a", a);
}

// ---- CPU --------------------------------------------------------------------------------------------------------
at::Tensor norm_diff_cpu_impl(const at::Tensor &a_in, const at::Tensor &b_in, int64_t version) {
    check_pair(a_in, b_in);
    check_version(version);  // the CPU has one implementation; the version is checked, then ignored
    const at::Tensor a = a_in.contiguous(), b = b_in.contiguous();
    const double norm = norm_diff_cpu(course::dtype_of(a), a.const_data_ptr(), b.const_data_ptr(), a.numel());
    return at::scalar_tensor(norm, a.options());
}

// Σ (a − b)² before the root, kept in double (the dtype every rung combines partials in): chapter 08 adds these
// sums across GPUs, and rounding each to a's dtype first would lose what the double accumulation kept.
at::Tensor norm_diff_sum_squares_cpu_impl(const at::Tensor &a_in, const at::Tensor &b_in) {
    check_pair(a_in, b_in);
    const at::Tensor a = a_in.contiguous(), b = b_in.contiguous();
    const double sum =
        norm_diff_sum_squares_cpu(course::dtype_of(a), a.const_data_ptr(), b.const_data_ptr(), a.numel());
    return at::scalar_tensor(sum, a.options().dtype(at::kDouble));
}

at::Tensor norm_diff_backward_cpu_impl(const at::Tensor &grad, const at::Tensor &a_in, const at::Tensor &b_in,
                                       const at::Tensor &norm) {
    check_backward(grad, a_in, b_in, norm);
    const at::Tensor a = a_in.contiguous(), b = b_in.contiguous();
    at::Tensor grad_a = at::empty_like(a, at::MemoryFormat::Contiguous);
    norm_diff_backward_cpu(course::dtype_of(a), grad.item<double>(), norm.item<double>(), a.const_data_ptr(),
                           b.const_data_ptr(), grad_a.mutable_data_ptr(), a.numel());
    return grad_a;
}

// ---- CUDA -------------------------------------------------------------------------------------------------------
// What the two CUDA reductions share: contiguous inputs, the rung's workspace (block partials and a counter) from
// PyTorch's caching allocator, then `launch(dtype, a, b, n, workspace, bytes, stream)` on PyTorch's current stream
// of a's device. Every CUDA error (the workspace size comes from an occupancy query) becomes a RuntimeError.
template <typename Launch>
void run_reduction(const at::Tensor &a_in, const at::Tensor &b_in, int version, Launch &&launch) {
    const c10::cuda::CUDAGuard guard(a_in.device());
    const at::Tensor a = a_in.contiguous(), b = b_in.contiguous();
    const course_dtype dtype = course::dtype_of(a);
    size_t bytes = 0;
    COURSE_CHECK_LAUNCH(norm_diff_workspace_bytes(version, dtype, a.numel(), &bytes));
    at::Tensor workspace = at::empty({(int64_t)bytes}, a.options().dtype(at::kByte));
    COURSE_CHECK_LAUNCH(launch(dtype, a.const_data_ptr(), b.const_data_ptr(), a.numel(), workspace.mutable_data_ptr(),
                               bytes, c10::cuda::getCurrentCUDAStream()));
}

at::Tensor norm_diff_cuda_impl(const at::Tensor &a, const at::Tensor &b, int64_t version) {
    check_pair(a, b);
    check_version(version);
    at::Tensor out = at::empty({}, a.options());
    run_reduction(a, b, (int)version,
                  [&](course_dtype dtype, const void *pa, const void *pb, int64_t n, void *ws, size_t bytes,
                      cudaStream_t stream) {
                      return norm_diff_cuda((int)version, dtype, pa, pb, n, out.mutable_data_ptr(), ws, bytes, stream);
                  });
    return out;
}

at::Tensor norm_diff_sum_squares_cuda_impl(const at::Tensor &a, const at::Tensor &b) {
    check_pair(a, b);
    at::Tensor out = at::empty({}, a.options().dtype(at::kDouble));
    run_reduction(a, b, NORM_VERSION_BEST,
                  [&](course_dtype dtype, const void *pa, const void *pb, int64_t n, void *ws, size_t bytes,
                      cudaStream_t stream) {
                      return norm_diff_sum_squares_cuda(dtype, pa, pb, n, out.mutable_data_ptr<double>(), ws, bytes,
                                                        stream);
                  });
    return out;
}

at::Tensor norm_diff_backward_cuda_impl(const at::Tensor &grad_in, const at::Tensor &a_in, const at::Tensor &b_in,
                                        const at::Tensor &norm_in) {
    check_backward(grad_in, a_in, b_in, norm_in);
    const c10::cuda::CUDAGuard guard(a_in.device());
    const at::Tensor a = a_in.contiguous(), b = b_in.contiguous();
    const at::Tensor grad = grad_in.contiguous(), norm = norm_in.contiguous();
    at::Tensor grad_a = at::empty_like(a, at::MemoryFormat::Contiguous);
    // g and the norm stay on the device: reading them here would make the host wait for the GPU.
    COURSE_CHECK_LAUNCH(norm_diff_backward_cuda(course::dtype_of(a), grad.const_data_ptr(), norm.const_data_ptr(),
                                                a.const_data_ptr(), b.const_data_ptr(), grad_a.mutable_data_ptr(),
                                                a.numel(), c10::cuda::getCurrentCUDAStream()));
    return grad_a;
}

// ---- autograd, in C++ -------------------------------------------------------------------------------------------
// The pattern of chapter 04 (src/add2_ops.cpp): a torch::autograd::Function whose forward calls the op again below
// the autograd key (through the dispatcher, so fake tensors under torch.compile reach the fake impl), registered for
// the Autograd key. When no graph can be recorded the call is passed straight to the kernel below with redispatch.
// A backward registered in Python (torch.library.register_autograd) would run a Python function on every call,
// gradients or not: microseconds, as much as the kernel at small sizes (chapter 07).
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Ops looked up once, for calling them again through the dispatcher.
const auto &norm_op() {
    static const auto op = c10::Dispatcher::singleton()
                               .findSchemaOrThrow(NORM_OP_NAME("norm_diff"), "")
                               .typed<at::Tensor(const at::Tensor &, const at::Tensor &, int64_t)>();
    return op;
}
const auto &sum_squares_op() {
    static const auto op = c10::Dispatcher::singleton()
                               .findSchemaOrThrow(NORM_OP_NAME("norm_diff_sum_squares"), "")
                               .typed<at::Tensor(const at::Tensor &, const at::Tensor &)>();
    return op;
}
const auto &backward_op() {
    static const auto op =
        c10::Dispatcher::singleton()
            .findSchemaOrThrow(NORM_OP_NAME("norm_diff_backward"), "")
            .typed<at::Tensor(const at::Tensor &, const at::Tensor &, const at::Tensor &, const at::Tensor &)>();
    return op;
}

bool records_graph(const at::Tensor &a, const at::Tensor &b) {
    return at::GradMode::is_enabled() && (a.requires_grad() || b.requires_grad());
}

// ‖a − b‖: grad_a = g·(a − b)/‖a − b‖ (0 where the norm is 0), by the op norm_diff_backward; grad_b = −grad_a.
struct NormDiffBackward : public torch::autograd::Function<NormDiffBackward> {
    static at::Tensor forward(AutogradContext *ctx, const at::Tensor &a, const at::Tensor &b, int64_t version) {
        at::Tensor norm;
        {
            const at::AutoDispatchBelowADInplaceOrView below_autograd;
            norm = norm_op().call(a, b, version);
        }
        ctx->save_for_backward({a, b, norm});
        return norm;
    }
    static variable_list backward(AutogradContext *ctx, variable_list grads) {
        const variable_list saved = ctx->get_saved_variables();
        const at::Tensor grad_a = backward_op().call(grads[0], saved[0], saved[1], saved[2]);
        return {grad_a, -grad_a, at::Tensor()};  // no gradient for the version number
    }
};

at::Tensor norm_diff_autograd(c10::DispatchKeySet keys, const at::Tensor &a, const at::Tensor &b, int64_t version) {
    if (!records_graph(a, b)) {
        const at::AutoDispatchBelowADInplaceOrView below_autograd;
        return norm_op().redispatch(keys & c10::after_autograd_keyset, a, b, version);
    }
    return NormDiffBackward::apply(a, b, version);
}

// Σ (a − b)²: grad_a = 2g·(a − b), one element-wise expression in PyTorch's own kernels; grad_b = −grad_a.
struct SumSquaresBackward : public torch::autograd::Function<SumSquaresBackward> {
    static at::Tensor forward(AutogradContext *ctx, const at::Tensor &a, const at::Tensor &b) {
        const at::AutoDispatchBelowADInplaceOrView below_autograd;
        ctx->save_for_backward({a, b});
        return sum_squares_op().call(a, b);
    }
    static variable_list backward(AutogradContext *ctx, variable_list grads) {
        const variable_list saved = ctx->get_saved_variables();
        const at::Tensor &a = saved[0], &b = saved[1];
        const at::Tensor grad_a = grads[0].mul(2).mul(a.sub(b));  // grad is float64 and 0-dim: the result has a's dtype
        return {grad_a.to(a.scalar_type()), grad_a.neg().to(b.scalar_type())};
    }
};

at::Tensor norm_diff_sum_squares_autograd(c10::DispatchKeySet keys, const at::Tensor &a, const at::Tensor &b) {
    if (!records_graph(a, b)) {
        const at::AutoDispatchBelowADInplaceOrView below_autograd;
        return sum_squares_op().redispatch(keys & c10::after_autograd_keyset, a, b);
    }
    return SumSquaresBackward::apply(a, b);
}

}  // namespace

NORM_TORCH_LIBRARY(NORM_DIFF_NS, m) {
    m.def("norm_diff(Tensor a, Tensor b, int version=3) -> Tensor");
    m.def("norm_diff_backward(Tensor grad, Tensor a, Tensor b, Tensor norm) -> Tensor");
    m.def("norm_diff_sum_squares(Tensor a, Tensor b) -> Tensor");
}

NORM_TORCH_LIBRARY_IMPL(NORM_DIFF_NS, CPU, m) {
    m.impl("norm_diff", &norm_diff_cpu_impl);
    m.impl("norm_diff_backward", &norm_diff_backward_cpu_impl);
    m.impl("norm_diff_sum_squares", &norm_diff_sum_squares_cpu_impl);
}

NORM_TORCH_LIBRARY_IMPL(NORM_DIFF_NS, CUDA, m) {
    m.impl("norm_diff", &norm_diff_cuda_impl);
    m.impl("norm_diff_backward", &norm_diff_backward_cuda_impl);
    m.impl("norm_diff_sum_squares", &norm_diff_sum_squares_cuda_impl);
}

// norm_diff_backward has no autograd kernel: it is what the backward calls (no second derivative here).
NORM_TORCH_LIBRARY_IMPL(NORM_DIFF_NS, Autograd, m) {
    m.impl("norm_diff", &norm_diff_autograd);
    m.impl("norm_diff_sum_squares", &norm_diff_sum_squares_autograd);
}

COURSE_PYTHON_MODULE()
