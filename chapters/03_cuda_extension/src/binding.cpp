// binding.cpp — registers y = x*x + b with PyTorch's dispatcher: one op, two devices.
//
//   torch.ops.square_bias_cuda.square_bias(x, b)   CPU: chapter 01's C core    CUDA: square_bias_kernels.cu
//
// The dispatcher looks at the tensors' device and calls the matching implementation below; autograd and the
// fake (shape-only) implementation are registered once, in Python (square_bias_cuda/ops.py), for both devices.
// This file only arranges memory (contiguous, broadcast → "b repeats every b_n elements"), checks, allocates the
// outputs and calls the C launchers on PyTorch's current stream, under a guard for the tensors' GPU.
#include <torch/library.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/full.h>
#include <ATen/ops/zeros.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <cmath>
#include <string>
#include <tuple>

#include "course_torch.h"
#include "square_bias.h"  // chapter 01's C core (the CPU implementation)
#include "square_bias_kernels.h"

namespace {

using at::Tensor;

// "(2, 3)", as Python prints a shape.
std::string shape_str(at::IntArrayRef shape) {
    std::string out = "(";
    for (size_t k = 0; k < shape.size(); ++k) out += (k ? ", " : "") + std::to_string(shape[k]);
    return out + (shape.size() == 1 ? ",)" : ")");
}

void check_dtype(const Tensor &t, const char *name) {
    const auto s = t.scalar_type();
    COURSE_CHECK(s == at::kFloat || s == at::kDouble || s == at::kHalf || s == at::kBFloat16, name, " has dtype ", s,
                 ", but only float32, float64, float16 and bfloat16 are supported");
}

void check_pair(const Tensor &x, const char *x_name, const Tensor &other, const char *other_name) {
    COURSE_CHECK(x.device() == other.device(), x_name, " and ", other_name, " must be on the same device, but ", x_name,
                 " is on ", x.device(), " and ", other_name, " on ", other.device());
    COURSE_CHECK(x.scalar_type() == other.scalar_type(), x_name, " and ", other_name, " must have the same dtype, but ",
                 x_name, " has ", x.scalar_type(), " and ", other_name, " has ", other.scalar_type());
}

// b broadcasts to x without changing x's shape (as in x*x + b).
void check_broadcast(at::IntArrayRef x_shape, at::IntArrayRef b_shape) {
    bool ok = b_shape.size() <= x_shape.size();
    for (size_t k = 1; ok && k <= b_shape.size(); ++k) {
        const int64_t bs = b_shape[b_shape.size() - k], xs = x_shape[x_shape.size() - k];
        ok = bs == xs || bs == 1;
    }
    COURSE_CHECK(ok, "b of shape ", shape_str(b_shape), " cannot be broadcast to x's shape ", shape_str(x_shape));
}

// The C core's and the kernels' broadcast contract: b repeats every b_n elements of x. That holds when b's shape,
// leading 1s dropped, equals x's trailing dimensions (a scalar, a row, x's own shape). Returns b_n, or 0 when b
// must first be expanded to x's shape (a column, say).
int64_t repeat_length(at::IntArrayRef x_shape, at::IntArrayRef b_shape) {
    size_t first = 0;
    while (first < b_shape.size() && b_shape[first] == 1) ++first;
    const size_t k = b_shape.size() - first;
    int64_t b_n = 1;
    for (size_t j = 0; j < k; ++j) {
        if (b_shape[first + j] != x_shape[x_shape.size() - k + j]) return 0;
        b_n *= b_shape[first + j];
    }
    return b_n;
}

struct Prepared {
    Tensor x, b;  // contiguous; b holds b_n elements
    int64_t n, b_n;
};

Prepared prepare(const Tensor &x, const Tensor &b) {
    check_dtype(x, "x");
    check_pair(x, "x", b, "b");
    check_broadcast(x.sizes(), b.sizes());
    Prepared p{x.contiguous(), b, x.numel(), repeat_length(x.sizes(), b.sizes())};
    if (p.b_n == 0) {  // materialise: b of x's shape
        p.b = b.expand(x.sizes()).contiguous();
        p.b_n = p.n;
    } else {
        p.b = b.contiguous();
    }
    return p;
}

sb_dtype kernel_dtype(const Tensor &t) {
    switch (t.scalar_type()) {
        case at::kFloat:
            return SB_FLOAT32;
        case at::kDouble:
            return SB_FLOAT64;
        case at::kHalf:
            return SB_FLOAT16;
        case at::kBFloat16:
            return SB_BFLOAT16;
        default:
            COURSE_CHECK(false, "unsupported dtype ", t.scalar_type());
    }
}

void check_core(int status, const char *what) {
    COURSE_CHECK(status == SQUARE_BIAS_OK, what, ": chapter 01's C core rejected the sizes (status ", status, ")");
}

// ---- CPU: chapter 01's C core ------------------------------------------------------------------------------------
// The core has float32 and float64 functions; float16 and bfloat16 go through float32 (computed in float32, as on
// the GPU) and are rounded once at the end.
Tensor forward_cpu(const Tensor &x_, const Tensor &b_) {
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

// grad_x and grad_b in one pass of the core. grad_b comes back in b's shape.
std::tuple<Tensor, Tensor> backward_cpu(const Tensor &grad_y_, const Tensor &x_, at::IntArrayRef b_shape) {
    check_dtype(x_, "x");
    check_pair(x_, "x", grad_y_, "grad_y");
    COURSE_CHECK(grad_y_.sizes() == x_.sizes(), "grad_y must have x's shape ", shape_str(x_.sizes()), ", got ",
                 shape_str(grad_y_.sizes()));
    check_broadcast(x_.sizes(), b_shape);
    const int64_t n = x_.numel(), r = repeat_length(x_.sizes(), b_shape), b_n = r == 0 ? n : r;
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
    return std::get<0>(backward_cpu(grad_y, x, {}));
}

// ---- CUDA: square_bias_kernels.cu ---------------------------------------------------------------------------------
Tensor forward_cuda(const Tensor &x, const Tensor &b) {
    Prepared p = prepare(x, b);
    const c10::cuda::CUDAGuard guard(p.x.device());  // launches and allocations go to x's GPU
    Tensor y = at::empty(p.x.sizes(), p.x.options());
    COURSE_CHECK_LAUNCH(square_bias_forward_cuda(kernel_dtype(p.x), p.x.const_data_ptr(), p.b.const_data_ptr(),
                                                 y.mutable_data_ptr(), p.n, p.b_n, c10::cuda::getCurrentCUDAStream()));
    return y;
}

Tensor grad_x_cuda(const Tensor &grad_y_, const Tensor &x_) {
    check_dtype(x_, "x");
    check_pair(x_, "x", grad_y_, "grad_y");
    COURSE_CHECK(grad_y_.sizes() == x_.sizes(), "grad_y must have x's shape ", shape_str(x_.sizes()), ", got ",
                 shape_str(grad_y_.sizes()));
    const c10::cuda::CUDAGuard guard(x_.device());
    Tensor x = x_.contiguous(), grad_y = grad_y_.contiguous();
    Tensor grad_x = at::empty(x.sizes(), x.options());
    COURSE_CHECK_LAUNCH(square_bias_grad_x_cuda(kernel_dtype(x), grad_y.const_data_ptr(), x.const_data_ptr(),
                                                grad_x.mutable_data_ptr(), x.numel(),
                                                c10::cuda::getCurrentCUDAStream()));
    return grad_x;
}

std::tuple<Tensor, Tensor> backward_cuda(const Tensor &grad_y_, const Tensor &x_, at::IntArrayRef b_shape) {
    check_dtype(x_, "x");
    check_pair(x_, "x", grad_y_, "grad_y");
    COURSE_CHECK(grad_y_.sizes() == x_.sizes(), "grad_y must have x's shape ", shape_str(x_.sizes()), ", got ",
                 shape_str(grad_y_.sizes()));
    check_broadcast(x_.sizes(), b_shape);
    const c10::cuda::CUDAGuard guard(x_.device());
    Tensor x = x_.contiguous(), grad_y = grad_y_.contiguous();
    const int64_t n = x.numel(), r = repeat_length(x.sizes(), b_shape);
    const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
    const sb_dtype dtype = kernel_dtype(x);
    if (r == 0) {  // b was materialised in the forward: grad_x by the kernel, grad_b by PyTorch's reduction
        Tensor grad_x = grad_x_cuda(grad_y, x);
        return {grad_x, grad_y.sum_to_size(b_shape).contiguous()};
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

// ---- test helpers and pitfalls ------------------------------------------------------------------------------------
// The kernels' per-thread code run on the CPU for a small grid (float32/float64 CPU tensors).
Tensor emulate_forward_cpu(const Tensor &x, const Tensor &b, int64_t grid, int64_t block) {
    Prepared p = prepare(x, b);
    COURSE_CHECK(p.x.scalar_type() == at::kFloat || p.x.scalar_type() == at::kDouble, "emulation: float32/64 only");
    Tensor y = at::full(p.x.sizes(), NAN, p.x.options());  // anything the threads miss stays NaN
    COURSE_CHECK(
        square_bias_emulate_forward(kernel_dtype(p.x), p.x.const_data_ptr(), p.b.const_data_ptr(), y.mutable_data_ptr(),
                                    p.n, p.b_n, static_cast<unsigned>(grid), static_cast<unsigned>(block)) == 0,
        "emulate_forward: bad arguments");
    return y;
}

std::tuple<Tensor, Tensor> emulate_backward_cpu(const Tensor &grad_y_, const Tensor &x_, int64_t b_n, int64_t grid_x,
                                                int64_t grid_y) {
    check_pair(x_, "x", grad_y_, "grad_y");
    COURSE_CHECK(x_.scalar_type() == at::kFloat || x_.scalar_type() == at::kDouble, "emulation: float32/64 only");
    Tensor x = x_.contiguous(), grad_y = grad_y_.contiguous();
    Tensor grad_x = at::full(x.sizes(), NAN, x.options()), grad_b = at::full({b_n}, NAN, x.options());
    COURSE_CHECK(square_bias_emulate_backward(kernel_dtype(x), grad_y.const_data_ptr(), x.const_data_ptr(),
                                              grad_x.mutable_data_ptr(), grad_b.mutable_data_ptr(), x.numel(), b_n,
                                              static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y)) == 0,
                 "emulate_backward: bad arguments");
    return {grad_x, grad_b};
}

Tensor pitfall_cuda(const Tensor &x_, const Tensor &b_, bool seed_index) {
    COURSE_CHECK(x_.dim() == 2 && x_.scalar_type() == at::kFloat, "the pitfall demos take a 2D float32 x");
    COURSE_CHECK(b_.sizes() == x_.sizes(), "the pitfall demos take b of x's shape");
    check_pair(x_, "x", b_, "b");
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

TORCH_LIBRARY(square_bias_cuda, m) {
    m.def("square_bias(Tensor x, Tensor b) -> Tensor");
    m.def("square_bias_backward(Tensor grad_y, Tensor x, int[] b_shape) -> (Tensor grad_x, Tensor grad_b)");
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

COURSE_PYTHON_MODULE()
