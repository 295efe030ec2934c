// norm_diff_binding.cpp — the PyTorch side of ‖a − b‖₂: two ops in the dispatcher, a CPU and a CUDA kernel each.
//
//   norm_diff::norm_diff(Tensor a, Tensor b, int version=3) -> Tensor            a 0-dim tensor of a's dtype
//   norm_diff::norm_diff_backward(Tensor grad, Tensor a, Tensor b, Tensor norm) -> Tensor   grad_a
//   norm_diff::norm_diff_sum_squares(Tensor a, Tensor b) -> Tensor   Σ (a − b)², a 0-dim float64 tensor
//
// The dispatcher picks the CPU or the CUDA function from the tensors' device. Python (norm_diff/ops.py) checks the
// inputs first and registers autograd and fake implementations; the TORCH_CHECKs here guard direct callers.
// NORM_DIFF_NS is the op namespace: norm_diff for the setuptools build, another one for the JIT build, since one
// process may load both and a namespace can be defined only once.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/scalar_tensor.h>
#include <c10/core/ScalarType.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <string>

#include "course_torch.h"
#include "norm_diff.h"

#ifndef NORM_DIFF_NS
#define NORM_DIFF_NS norm_diff
#endif
// One more level of macros so that NORM_DIFF_NS is replaced by its value before TORCH_LIBRARY pastes it.
#define NORM_TORCH_LIBRARY(ns, m) TORCH_LIBRARY(ns, m)
#define NORM_TORCH_LIBRARY_IMPL(ns, key, m) TORCH_LIBRARY_IMPL(ns, key, m)

namespace {

// Messages are built from strings only (std::to_string, not `stream << number`): on a machine where two copies of
// libstdc++ meet in one process, streaming a number into an ostringstream inside the extension can crash.
std::string shape_string(at::IntArrayRef sizes) {
    std::string text = "(";
    for (size_t i = 0; i < sizes.size(); i++) text += (i ? ", " : "") + std::to_string(sizes[i]);
    return text + (sizes.size() == 1 ? ",)" : ")");
}

norm_dtype to_norm_dtype(at::ScalarType type) {
    switch (type) {
        case at::kFloat:
            return NORM_F32;
        case at::kDouble:
            return NORM_F64;
        case at::kHalf:
            return NORM_F16;
        case at::kBFloat16:
            return NORM_BF16;
        default:
            break;
    }
    TORCH_CHECK(false, "norm_diff supports float32, float64, float16 and bfloat16, not ", c10::toString(type));
    return NORM_F32;  // not reached
}

void check_pair(const at::Tensor &a, const at::Tensor &b, int64_t version) {
    TORCH_CHECK(a.sizes() == b.sizes(), "a and b must have the same shape, got ", shape_string(a.sizes()), " and ",
                shape_string(b.sizes()));
    TORCH_CHECK(a.scalar_type() == b.scalar_type(), "a and b must have the same dtype, got ",
                c10::toString(a.scalar_type()), " and ", c10::toString(b.scalar_type()));
    TORCH_CHECK(a.device() == b.device(), "a and b must be on the same device, got ", a.device().str(), " and ",
                b.device().str());
    TORCH_CHECK(version >= NORM_VERSION_FIRST && version <= NORM_VERSION_LAST, "version must be in ",
                std::to_string(NORM_VERSION_FIRST), "..", std::to_string(NORM_VERSION_LAST), ", got ",
                std::to_string(version));
}

at::Tensor norm_diff_cpu_impl(const at::Tensor &a_in, const at::Tensor &b_in, int64_t version) {
    check_pair(a_in, b_in, version);  // the CPU has one implementation; the version is checked, then ignored
    const norm_dtype dtype = to_norm_dtype(a_in.scalar_type());
    const at::Tensor a = a_in.contiguous(), b = b_in.contiguous();
    const double norm = norm_diff_cpu(dtype, a.const_data_ptr(), b.const_data_ptr(), a.numel());
    return at::scalar_tensor(norm, a.options());
}

at::Tensor norm_diff_cuda_impl(const at::Tensor &a_in, const at::Tensor &b_in, int64_t version) {
    check_pair(a_in, b_in, version);
    const norm_dtype dtype = to_norm_dtype(a_in.scalar_type());
    const c10::cuda::CUDAGuard guard(a_in.device());
    const at::Tensor a = a_in.contiguous(), b = b_in.contiguous();
    at::Tensor out = at::empty({}, a.options());
    const size_t workspace_bytes = norm_diff_workspace_bytes((int)version, dtype, a.numel());
    at::Tensor workspace = at::empty({(int64_t)workspace_bytes}, a.options().dtype(at::kByte));
    const cudaError_t err =
        norm_diff_cuda((int)version, dtype, a.const_data_ptr(), b.const_data_ptr(), a.numel(), out.mutable_data_ptr(),
                       workspace.mutable_data_ptr(), workspace_bytes, c10::cuda::getCurrentCUDAStream());
    COURSE_CHECK_LAUNCH(err);
    return out;
}

// Σ (a − b)² before the root, kept in double (the dtype every rung combines partials in): chapter 08 adds these
// sums across GPUs, and rounding each to a's dtype first would lose what the double accumulation kept.
at::Tensor norm_diff_sum_squares_cpu_impl(const at::Tensor &a_in, const at::Tensor &b_in) {
    check_pair(a_in, b_in, NORM_VERSION_BEST);
    const norm_dtype dtype = to_norm_dtype(a_in.scalar_type());
    const at::Tensor a = a_in.contiguous(), b = b_in.contiguous();
    const double sum = norm_diff_sum_squares_cpu(dtype, a.const_data_ptr(), b.const_data_ptr(), a.numel());
    return at::scalar_tensor(sum, a.options().dtype(at::kDouble));
}

at::Tensor norm_diff_sum_squares_cuda_impl(const at::Tensor &a_in, const at::Tensor &b_in) {
    check_pair(a_in, b_in, NORM_VERSION_BEST);
    const norm_dtype dtype = to_norm_dtype(a_in.scalar_type());
    const c10::cuda::CUDAGuard guard(a_in.device());
    const at::Tensor a = a_in.contiguous(), b = b_in.contiguous();
    at::Tensor out = at::empty({}, a.options().dtype(at::kDouble));
    const size_t workspace_bytes = norm_diff_workspace_bytes(NORM_VERSION_BEST, dtype, a.numel());
    at::Tensor workspace = at::empty({(int64_t)workspace_bytes}, a.options().dtype(at::kByte));
    const cudaError_t err = norm_diff_sum_squares_cuda(dtype, a.const_data_ptr(), b.const_data_ptr(), a.numel(),
                                                       out.mutable_data_ptr<double>(), workspace.mutable_data_ptr(),
                                                       workspace_bytes, c10::cuda::getCurrentCUDAStream());
    COURSE_CHECK_LAUNCH(err);
    return out;
}

void check_backward(const at::Tensor &grad, const at::Tensor &a, const at::Tensor &b, const at::Tensor &norm) {
    check_pair(a, b, NORM_VERSION_BEST);
    TORCH_CHECK(grad.numel() == 1 && norm.numel() == 1, "grad and norm must hold one element each");
    TORCH_CHECK(grad.scalar_type() == a.scalar_type() && norm.scalar_type() == a.scalar_type(),
                "grad and norm must have a's dtype ", c10::toString(a.scalar_type()));
    TORCH_CHECK(grad.device() == a.device() && norm.device() == a.device(), "grad and norm must be on a's device");
}

at::Tensor norm_diff_backward_cpu_impl(const at::Tensor &grad, const at::Tensor &a_in, const at::Tensor &b_in,
                                       const at::Tensor &norm) {
    check_backward(grad, a_in, b_in, norm);
    const at::Tensor a = a_in.contiguous(), b = b_in.contiguous();
    at::Tensor grad_a = at::empty_like(a, at::MemoryFormat::Contiguous);
    norm_diff_backward_cpu(to_norm_dtype(a.scalar_type()), grad.item<double>(), norm.item<double>(), a.const_data_ptr(),
                           b.const_data_ptr(), grad_a.mutable_data_ptr(), a.numel());
    return grad_a;
}

at::Tensor norm_diff_backward_cuda_impl(const at::Tensor &grad_in, const at::Tensor &a_in, const at::Tensor &b_in,
                                        const at::Tensor &norm_in) {
    check_backward(grad_in, a_in, b_in, norm_in);
    const c10::cuda::CUDAGuard guard(a_in.device());
    const at::Tensor a = a_in.contiguous(), b = b_in.contiguous();
    const at::Tensor grad = grad_in.contiguous(), norm = norm_in.contiguous();
    at::Tensor grad_a = at::empty_like(a, at::MemoryFormat::Contiguous);
    // g and the norm stay on the device: reading them here would make the host wait for the GPU.
    const cudaError_t err = norm_diff_backward_cuda(
        to_norm_dtype(a.scalar_type()), grad.const_data_ptr(), norm.const_data_ptr(), a.const_data_ptr(),
        b.const_data_ptr(), grad_a.mutable_data_ptr(), a.numel(), c10::cuda::getCurrentCUDAStream());
    COURSE_CHECK_LAUNCH(err);
    return grad_a;
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

COURSE_PYTHON_MODULE()
