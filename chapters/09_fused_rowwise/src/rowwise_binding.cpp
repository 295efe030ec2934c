// rowwise_binding.cpp — the PyTorch side of the chapter: six ops in the dispatcher, each with a CPU and a CUDA kernel.
//
//   rowwise::softmax(Tensor x, int rung=-1) -> Tensor
//   rowwise::softmax_backward(Tensor y, Tensor dy, int rung=-1) -> Tensor
//   rowwise::layer_norm(Tensor x, Tensor? weight, Tensor? bias, float eps, int rung=-1)
//       -> (Tensor y, Tensor mean, Tensor rstd)
//   rowwise::layer_norm_backward(Tensor dy, Tensor x, Tensor? weight, Tensor mean, Tensor rstd, bool[2] grads,
//       int rung=-1) -> (Tensor dx, Tensor dweight, Tensor dbias)
//   rowwise::rms_norm(Tensor x, Tensor? weight, float eps, int rung=-1) -> (Tensor y, Tensor rstd)
//   rowwise::rms_norm_backward(Tensor dy, Tensor x, Tensor? weight, Tensor rstd, bool want_dweight, int rung=-1)
//       -> (Tensor dx, Tensor dweight)
//   rowwise::describe(Tensor x, str op, bool backward=False, int rung=-1) -> str   (the CUDA launch, in words)
//
// Every op normalizes over the last dimension of x, of any leading shape; mean and rstd have x's leading shape and
// the accumulation dtype (float32, or float64 for float64 inputs). A gradient that is not wanted comes back as an
// empty tensor. `rung` picks a rung of the GPU ladder (rowwise.h; -1: the top rung this GPU runs); the CPU has one
// implementation and only checks it. Each implementation checks its inputs once, at its top (course_torch.h:
// TypeError for a dtype, ValueError for a shape, device or rung). Autograd is registered here too, in C++ (the
// pattern of chapters 03, 04 and 06): a call runs no Python beyond the line that makes it. Python adds the fake
// implementations (rowwise/ops.py).
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <c10/core/ScalarType.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>

#include <string>
#include <tuple>
#include <vector>

#include "course_torch.h"
#define ROWWISE_WITH_CUDA_API
#include "rowwise.h"

namespace {

using at::Tensor;
using c10::optional;

constexpr std::initializer_list<c10::ScalarType> kDtypes = {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16};

at::ScalarType acc_dtype(const Tensor &x) {
    return x.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
}

// The checks every op makes on x and returns its matrix view's size: rows, n.
std::pair<int64_t, int64_t> check_x(const char *name, const Tensor &x) {
    course::check_dtype(name, x, kDtypes);
    TORCH_CHECK_VALUE(x.dim() >= 1, name, " must have at least one dimension (the one normalized), but has shape ",
                      course::shape_text(x.sizes()));
    const int64_t n = x.size(-1);
    return {n == 0 ? 0 : x.numel() / n, n};
}

void check_param(const char *name, const optional<Tensor> &p, const Tensor &x) {
    if (!p.has_value()) return;
    course::check_same_device(name, *p, "x", x);
    course::check_same_dtype(name, *p, "x", x);
    TORCH_CHECK_VALUE(p->dim() == 1 && p->size(0) == x.size(-1), name, " must have shape (", x.size(-1),
                      ",) (x's last dimension), but has shape ", course::shape_text(p->sizes()));
}

void check_stat(const char *name, const Tensor &s, const Tensor &x) {
    course::check_same_device(name, s, "x", x);
    TORCH_CHECK_TYPE(s.scalar_type() == acc_dtype(x), name, " must have dtype ", course::dtype_name(acc_dtype(x)),
                     ", but has ", course::dtype_name(s.scalar_type()));
    TORCH_CHECK_VALUE(s.sizes() == x.sizes().slice(0, x.dim() - 1), name, " must have shape ",
                      course::shape_text(x.sizes().slice(0, x.dim() - 1)), " (x's leading dimensions), but has ",
                      course::shape_text(s.sizes()));
}

void check_rung(int64_t rung) {
    TORCH_CHECK_VALUE(rung == ROWWISE_RUNG_BEST || (rung >= 1 && rung <= ROWWISE_RUNG_LAST),
                      "rung must be -1 (the top rung this GPU runs) or 1..", ROWWISE_RUNG_LAST, ", got ", rung);
}

// One check per op, the first call of its CPU and of its CUDA implementation; each returns (rows, n).
std::pair<int64_t, int64_t> check_softmax(const Tensor &x, int64_t rung) {
    const auto shape = check_x("x", x);
    check_rung(rung);
    return shape;
}

std::pair<int64_t, int64_t> check_softmax_backward(const Tensor &y, const Tensor &dy, int64_t rung) {
    const auto shape = check_x("y", y);
    course::check_same_device("dy", dy, "y", y);
    course::check_same_dtype("dy", dy, "y", y);
    course::check_same_shape("dy", dy, "y", y);
    check_rung(rung);
    return shape;
}

std::pair<int64_t, int64_t> check_layer_norm(const Tensor &x, const optional<Tensor> &w, const optional<Tensor> &b,
                                             int64_t rung) {
    const auto shape = check_x("x", x);
    check_param("weight", w, x);
    check_param("bias", b, x);
    check_rung(rung);
    return shape;
}

// dy like x, then the norm's own parameters and saved statistics (mean: LayerNorm only).
std::pair<int64_t, int64_t> check_norm_backward(const Tensor &dy, const Tensor &x, const optional<Tensor> &w,
                                                const Tensor *mean, const Tensor &rstd, int64_t rung) {
    const auto shape = check_x("x", x);
    course::check_same_device("dy", dy, "x", x);
    course::check_same_dtype("dy", dy, "x", x);
    course::check_same_shape("dy", dy, "x", x);
    check_param("weight", w, x);
    if (mean != nullptr) check_stat("mean", *mean, x);
    check_stat("rstd", rstd, x);
    check_rung(rung);
    return shape;
}

std::pair<int64_t, int64_t> check_layer_norm_backward(const Tensor &dy, const Tensor &x, const optional<Tensor> &w,
                                                      const Tensor &mean, const Tensor &rstd, int64_t rung) {
    return check_norm_backward(dy, x, w, &mean, rstd, rung);
}

std::pair<int64_t, int64_t> check_rms_norm(const Tensor &x, const optional<Tensor> &w, int64_t rung) {
    const auto shape = check_x("x", x);
    check_param("weight", w, x);
    check_rung(rung);
    return shape;
}

std::pair<int64_t, int64_t> check_rms_norm_backward(const Tensor &dy, const Tensor &x, const optional<Tensor> &w,
                                                    const Tensor &rstd, int64_t rung) {
    return check_norm_backward(dy, x, w, nullptr, rstd, rung);
}

std::vector<int64_t> leading(const Tensor &x) {
    return x.sizes().slice(0, x.dim() - 1).vec();
}

// ---- CPU: the C reference of rowwise_cpu.c. float16/bfloat16 compute in float32 and round once at the end. ----
Tensor compute_copy(const Tensor &t) {
    return t.scalar_type() == at::kDouble ? t.contiguous() : t.to(at::kFloat).contiguous();
}
const float *f32(const optional<Tensor> &t) {
    return t.has_value() ? t->const_data_ptr<float>() : nullptr;
}
const double *f64(const optional<Tensor> &t) {
    return t.has_value() ? t->const_data_ptr<double>() : nullptr;
}
optional<Tensor> compute_copy(const optional<Tensor> &t) {
    return t.has_value() ? optional<Tensor>(compute_copy(*t)) : c10::nullopt;
}

Tensor softmax_cpu(const Tensor &x_in, int64_t rung) {
    const auto [rows, n] = check_softmax(x_in, rung);
    const Tensor x = compute_copy(x_in);
    Tensor y = at::empty(x.sizes(), x.options());
    if (x.scalar_type() == at::kDouble)
        rowwise_softmax_cpu_f64(x.const_data_ptr<double>(), y.mutable_data_ptr<double>(), rows, n);
    else
        rowwise_softmax_cpu_f32(x.const_data_ptr<float>(), y.mutable_data_ptr<float>(), rows, n);
    return y.to(x_in.scalar_type());
}

Tensor softmax_backward_cpu(const Tensor &y_in, const Tensor &dy_in, int64_t rung) {
    const auto [rows, n] = check_softmax_backward(y_in, dy_in, rung);
    const Tensor y = compute_copy(y_in), dy = compute_copy(dy_in);
    Tensor dx = at::empty(y.sizes(), y.options());
    if (y.scalar_type() == at::kDouble)
        rowwise_softmax_backward_cpu_f64(y.const_data_ptr<double>(), dy.const_data_ptr<double>(),
                                         dx.mutable_data_ptr<double>(), rows, n);
    else
        rowwise_softmax_backward_cpu_f32(y.const_data_ptr<float>(), dy.const_data_ptr<float>(),
                                         dx.mutable_data_ptr<float>(), rows, n);
    return dx.to(y_in.scalar_type());
}

std::tuple<Tensor, Tensor, Tensor> layer_norm_cpu(const Tensor &x_in, const optional<Tensor> &w_in,
                                                  const optional<Tensor> &b_in, double eps, int64_t rung) {
    const auto [rows, n] = check_layer_norm(x_in, w_in, b_in, rung);
    const Tensor x = compute_copy(x_in);
    const optional<Tensor> w = compute_copy(w_in), b = compute_copy(b_in);
    Tensor y = at::empty(x.sizes(), x.options());
    Tensor mean = at::empty(leading(x), x.options()), rstd = at::empty(leading(x), x.options());
    if (x.scalar_type() == at::kDouble)
        rowwise_layer_norm_cpu_f64(x.const_data_ptr<double>(), f64(w), f64(b), eps, y.mutable_data_ptr<double>(),
                                   mean.mutable_data_ptr<double>(), rstd.mutable_data_ptr<double>(), rows, n);
    else
        rowwise_layer_norm_cpu_f32(x.const_data_ptr<float>(), f32(w), f32(b), eps, y.mutable_data_ptr<float>(),
                                   mean.mutable_data_ptr<float>(), rstd.mutable_data_ptr<float>(), rows, n);
    return {y.to(x_in.scalar_type()), mean, rstd};
}

std::tuple<Tensor, Tensor, Tensor> layer_norm_backward_cpu(const Tensor &dy_in, const Tensor &x_in,
                                                           const optional<Tensor> &w_in, const Tensor &mean_in,
                                                           const Tensor &rstd_in, std::array<bool, 2> grads,
                                                           int64_t rung) {
    const auto [rows, n] = check_layer_norm_backward(dy_in, x_in, w_in, mean_in, rstd_in, rung);
    const Tensor x = compute_copy(x_in), dy = compute_copy(dy_in), mean = mean_in.contiguous(),
                 rstd = rstd_in.contiguous();
    const optional<Tensor> w = compute_copy(w_in);
    Tensor dx = at::empty(x.sizes(), x.options());
    Tensor dw = at::empty({grads[0] ? n : 0}, x.options()), db = at::empty({grads[1] ? n : 0}, x.options());
    if (x.scalar_type() == at::kDouble)
        rowwise_layer_norm_backward_cpu_f64(dy.const_data_ptr<double>(), x.const_data_ptr<double>(), f64(w),
                                            mean.const_data_ptr<double>(), rstd.const_data_ptr<double>(),
                                            dx.mutable_data_ptr<double>(),
                                            grads[0] ? dw.mutable_data_ptr<double>() : nullptr,
                                            grads[1] ? db.mutable_data_ptr<double>() : nullptr, rows, n);
    else
        rowwise_layer_norm_backward_cpu_f32(dy.const_data_ptr<float>(), x.const_data_ptr<float>(), f32(w),
                                            mean.const_data_ptr<float>(), rstd.const_data_ptr<float>(),
                                            dx.mutable_data_ptr<float>(),
                                            grads[0] ? dw.mutable_data_ptr<float>() : nullptr,
                                            grads[1] ? db.mutable_data_ptr<float>() : nullptr, rows, n);
    const auto dtype = x_in.scalar_type();
    return {dx.to(dtype), dw.to(dtype), db.to(dtype)};
}

std::tuple<Tensor, Tensor> rms_norm_cpu(const Tensor &x_in, const optional<Tensor> &w_in, double eps, int64_t rung) {
    const auto [rows, n] = check_rms_norm(x_in, w_in, rung);
    const Tensor x = compute_copy(x_in);
    const optional<Tensor> w = compute_copy(w_in);
    Tensor y = at::empty(x.sizes(), x.options()), rstd = at::empty(leading(x), x.options());
    if (x.scalar_type() == at::kDouble)
        rowwise_rms_norm_cpu_f64(x.const_data_ptr<double>(), f64(w), eps, y.mutable_data_ptr<double>(),
                                 rstd.mutable_data_ptr<double>(), rows, n);
    else
        rowwise_rms_norm_cpu_f32(x.const_data_ptr<float>(), f32(w), eps, y.mutable_data_ptr<float>(),
                                 rstd.mutable_data_ptr<float>(), rows, n);
    return {y.to(x_in.scalar_type()), rstd};
}

std::tuple<Tensor, Tensor> rms_norm_backward_cpu(const Tensor &dy_in, const Tensor &x_in, const optional<Tensor> &w_in,
                                                 const Tensor &rstd_in, bool want_dw, int64_t rung) {
    const auto [rows, n] = check_rms_norm_backward(dy_in, x_in, w_in, rstd_in, rung);
    const Tensor x = compute_copy(x_in), dy = compute_copy(dy_in), rstd = rstd_in.contiguous();
    const optional<Tensor> w = compute_copy(w_in);
    Tensor dx = at::empty(x.sizes(), x.options()), dw = at::empty({want_dw ? n : 0}, x.options());
    if (x.scalar_type() == at::kDouble)
        rowwise_rms_norm_backward_cpu_f64(dy.const_data_ptr<double>(), x.const_data_ptr<double>(), f64(w),
                                          rstd.const_data_ptr<double>(), dx.mutable_data_ptr<double>(),
                                          want_dw ? dw.mutable_data_ptr<double>() : nullptr, rows, n);
    else
        rowwise_rms_norm_backward_cpu_f32(dy.const_data_ptr<float>(), x.const_data_ptr<float>(), f32(w),
                                          rstd.const_data_ptr<float>(), dx.mutable_data_ptr<float>(),
                                          want_dw ? dw.mutable_data_ptr<float>() : nullptr, rows, n);
    return {dx.to(x_in.scalar_type()), dw.to(x_in.scalar_type())};
}

// ---- CUDA ---------------------------------------------------------------------------------------------------------
const void *ptr(const optional<Tensor> &t) {
    return t.has_value() ? t->const_data_ptr() : nullptr;
}

void check_cuda_rung(rowwise_op op, int backward, int64_t rung, const Tensor &x) {
    TORCH_CHECK_VALUE(x.size(-1) <= INT32_MAX, "rows of more than 2^31 - 1 elements are not supported on the GPU, got ",
                      x.size(-1));
    const char *why = rowwise_unsupported(op, backward, (int)rung, course::dtype_of(x), x.size(-1));
    TORCH_CHECK_VALUE(why == nullptr, why);
}

// Plans the launch, allocates its workspace through PyTorch, launches on the current stream.
void run_cuda(rowwise_op op, int backward, int64_t rung, const Tensor &x, const rowwise_args &args) {
    const course_dtype dtype = course::dtype_of(x);
    rowwise_plan plan;
    size_t bytes = 0;
    COURSE_CHECK_LAUNCH(rowwise_plan_launch(op, backward, (int)rung, dtype, &args, &plan, &bytes));
    Tensor workspace = at::empty({(int64_t)bytes}, x.options().dtype(at::kByte));
    const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
    if (backward)
        COURSE_CHECK_LAUNCH(rowwise_backward_cuda(op, dtype, &args, &plan, workspace.mutable_data_ptr(), stream));
    else
        COURSE_CHECK_LAUNCH(rowwise_forward_cuda(op, dtype, &args, &plan, workspace.mutable_data_ptr(), stream));
}

Tensor softmax_cuda(const Tensor &x_in, int64_t rung) {
    const auto [rows, n] = check_softmax(x_in, rung);
    check_cuda_rung(ROWWISE_SOFTMAX, 0, rung, x_in);
    const c10::cuda::CUDAGuard guard(x_in.device());
    const Tensor x = x_in.contiguous();
    Tensor y = at::empty(x.sizes(), x.options());
    if (n == 0) return y;  // rows of no elements: nothing to launch (as the norms below)
    rowwise_args a{};
    a.x = x.const_data_ptr();
    a.y = y.mutable_data_ptr();
    a.rows = rows;
    a.n = n;
    run_cuda(ROWWISE_SOFTMAX, 0, rung, x, a);
    return y;
}

Tensor softmax_backward_cuda(const Tensor &y_in, const Tensor &dy_in, int64_t rung) {
    const auto [rows, n] = check_softmax_backward(y_in, dy_in, rung);
    check_cuda_rung(ROWWISE_SOFTMAX, 1, rung, y_in);
    const c10::cuda::CUDAGuard guard(y_in.device());
    const Tensor y = y_in.contiguous(), dy = dy_in.contiguous();
    Tensor dx = at::empty(y.sizes(), y.options());
    if (n == 0) return dx;
    rowwise_args a{};
    a.x = y.const_data_ptr();
    a.dy = dy.const_data_ptr();
    a.y = dx.mutable_data_ptr();
    a.rows = rows;
    a.n = n;
    run_cuda(ROWWISE_SOFTMAX, 1, rung, y, a);
    return dx;
}

optional<Tensor> contiguous(const optional<Tensor> &t) {
    return t.has_value() ? optional<Tensor>(t->contiguous()) : c10::nullopt;
}

std::tuple<Tensor, Tensor, Tensor> layer_norm_cuda(const Tensor &x_in, const optional<Tensor> &w_in,
                                                   const optional<Tensor> &b_in, double eps, int64_t rung) {
    const auto [rows, n] = check_layer_norm(x_in, w_in, b_in, rung);
    check_cuda_rung(ROWWISE_LAYER_NORM, 0, rung, x_in);
    const c10::cuda::CUDAGuard guard(x_in.device());
    const Tensor x = x_in.contiguous();
    const optional<Tensor> w = contiguous(w_in), b = contiguous(b_in);
    Tensor y = at::empty(x.sizes(), x.options());
    Tensor mean = at::empty(leading(x), x.options().dtype(acc_dtype(x)));
    Tensor rstd = at::empty(leading(x), x.options().dtype(acc_dtype(x)));
    if (n == 0) {  // no elements: the statistics of an empty row, as the CPU gives them
        mean.fill_(NAN);
        rstd.fill_(NAN);
        return {y, mean, rstd};
    }
    rowwise_args a{};
    a.x = x.const_data_ptr();
    a.w = ptr(w);
    a.b = ptr(b);
    a.y = y.mutable_data_ptr();
    a.mean = mean.mutable_data_ptr();
    a.rstd = rstd.mutable_data_ptr();
    a.rows = rows;
    a.n = n;
    a.eps = eps;
    run_cuda(ROWWISE_LAYER_NORM, 0, rung, x, a);
    return {y, mean, rstd};
}

std::tuple<Tensor, Tensor, Tensor> layer_norm_backward_cuda(const Tensor &dy_in, const Tensor &x_in,
                                                            const optional<Tensor> &w_in, const Tensor &mean_in,
                                                            const Tensor &rstd_in, std::array<bool, 2> grads,
                                                            int64_t rung) {
    const auto [rows, n] = check_layer_norm_backward(dy_in, x_in, w_in, mean_in, rstd_in, rung);
    check_cuda_rung(ROWWISE_LAYER_NORM, 1, rung, x_in);
    const c10::cuda::CUDAGuard guard(x_in.device());
    const Tensor x = x_in.contiguous(), dy = dy_in.contiguous(), mean = mean_in.contiguous(),
                 rstd = rstd_in.contiguous();
    const optional<Tensor> w = contiguous(w_in);
    Tensor dx = at::empty(x.sizes(), x.options());
    Tensor dw = at::empty({grads[0] ? n : 0}, x.options()), db = at::empty({grads[1] ? n : 0}, x.options());
    if (n == 0) return {dx, dw, db};
    rowwise_args a{};
    a.x = x.const_data_ptr();
    a.dy = dy.const_data_ptr();
    a.w = ptr(w);
    a.y = dx.mutable_data_ptr();
    a.mean = const_cast<void *>(mean.const_data_ptr());
    a.rstd = const_cast<void *>(rstd.const_data_ptr());
    a.dw = grads[0] ? dw.mutable_data_ptr() : nullptr;
    a.db = grads[1] ? db.mutable_data_ptr() : nullptr;
    a.rows = rows;
    a.n = n;
    run_cuda(ROWWISE_LAYER_NORM, 1, rung, x, a);
    return {dx, dw, db};
}

std::tuple<Tensor, Tensor> rms_norm_cuda(const Tensor &x_in, const optional<Tensor> &w_in, double eps, int64_t rung) {
    const auto [rows, n] = check_rms_norm(x_in, w_in, rung);
    check_cuda_rung(ROWWISE_RMS_NORM, 0, rung, x_in);
    const c10::cuda::CUDAGuard guard(x_in.device());
    const Tensor x = x_in.contiguous();
    const optional<Tensor> w = contiguous(w_in);
    Tensor y = at::empty(x.sizes(), x.options());
    Tensor rstd = at::empty(leading(x), x.options().dtype(acc_dtype(x)));
    if (n == 0) {
        rstd.fill_(NAN);
        return {y, rstd};
    }
    rowwise_args a{};
    a.x = x.const_data_ptr();
    a.w = ptr(w);
    a.y = y.mutable_data_ptr();
    a.rstd = rstd.mutable_data_ptr();
    a.rows = rows;
    a.n = n;
    a.eps = eps;
    run_cuda(ROWWISE_RMS_NORM, 0, rung, x, a);
    return {y, rstd};
}

std::tuple<Tensor, Tensor> rms_norm_backward_cuda(const Tensor &dy_in, const Tensor &x_in, const optional<Tensor> &w_in,
                                                  const Tensor &rstd_in, bool want_dw, int64_t rung) {
    const auto [rows, n] = check_rms_norm_backward(dy_in, x_in, w_in, rstd_in, rung);
    check_cuda_rung(ROWWISE_RMS_NORM, 1, rung, x_in);
    const c10::cuda::CUDAGuard guard(x_in.device());
    const Tensor x = x_in.contiguous(), dy = dy_in.contiguous(), rstd = rstd_in.contiguous();
    const optional<Tensor> w = contiguous(w_in);
    Tensor dx = at::empty(x.sizes(), x.options()), dw = at::empty({want_dw ? n : 0}, x.options());
    if (n == 0) return {dx, dw};
    rowwise_args a{};
    a.x = x.const_data_ptr();
    a.dy = dy.const_data_ptr();
    a.w = ptr(w);
    a.y = dx.mutable_data_ptr();
    a.rstd = const_cast<void *>(rstd.const_data_ptr());
    a.dw = want_dw ? dw.mutable_data_ptr() : nullptr;
    a.rows = rows;
    a.n = n;
    run_cuda(ROWWISE_RMS_NORM, 1, rung, x, a);
    return {dx, dw};
}

rowwise_op op_of(const std::string &name) {
    if (name == "softmax") return ROWWISE_SOFTMAX;
    if (name == "layer_norm") return ROWWISE_LAYER_NORM;
    TORCH_CHECK_VALUE(name == "rms_norm", "op must be softmax, layer_norm or rms_norm, got ", name);
    return ROWWISE_RMS_NORM;
}

std::string describe_cuda(const Tensor &x, const std::string &name, bool backward, int64_t rung) {
    const auto [rows, n] = check_x("x", x);
    check_rung(rung);
    const rowwise_op op = op_of(name);
    check_cuda_rung(op, backward, rung, x);
    const c10::cuda::CUDAGuard guard(x.device());
    rowwise_args a{};
    a.rows = rows;
    a.n = n;
    rowwise_plan plan;
    size_t bytes = 0;
    COURSE_CHECK_LAUNCH(rowwise_plan_launch(op, backward, (int)rung, course::dtype_of(x), &a, &plan, &bytes));
    char text[256];
    rowwise_describe(&plan, text, sizeof text);
    return text;
}

std::string describe_cpu(const Tensor &x, const std::string &name, bool backward, int64_t rung) {
    check_x("x", x);
    check_rung(rung);
    op_of(name);
    (void)backward;
    return "cpu: one row at a time, in double (rowwise_cpu.c)";
}

// ---- autograd, in C++ ---------------------------------------------------------------------------------------------
// Each differentiable op gets a torch::autograd::Function whose forward calls the op again below the autograd key
// (through the dispatcher, so that under torch.compile the fake implementation answers), registered for the Autograd
// key. When no graph can be recorded the call goes straight to the kernel below with redispatch.
// Why C++: a backward registered in Python (torch.library.register_autograd) runs Python on every forward and every
// backward. On the H100's host that was ~140 µs per forward+backward, more than the GPU's work in bf16 at
// 16384 x 4096 (NOTES.md, "Forward+backward in bf16").
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// An op's handle, looked up once by each caller (a function-local static).
template <typename Signature>
c10::TypedOperatorHandle<Signature> find_op(const char *name) {
    return c10::Dispatcher::singleton().findSchemaOrThrow(name, "").typed<Signature>();
}
using SoftmaxSig = Tensor(const Tensor &, int64_t);
using SoftmaxBackwardSig = Tensor(const Tensor &, const Tensor &, int64_t);
using LayerNormSig = std::tuple<Tensor, Tensor, Tensor>(const Tensor &, const optional<Tensor> &,
                                                        const optional<Tensor> &, double, int64_t);
using LayerNormBackwardSig = std::tuple<Tensor, Tensor, Tensor>(const Tensor &, const Tensor &,
                                                                const optional<Tensor> &, const Tensor &,
                                                                const Tensor &, std::array<bool, 2>, int64_t);
using RmsNormSig = std::tuple<Tensor, Tensor>(const Tensor &, const optional<Tensor> &, double, int64_t);
using RmsNormBackwardSig = std::tuple<Tensor, Tensor>(const Tensor &, const Tensor &, const optional<Tensor> &,
                                                      const Tensor &, bool, int64_t);

// Rungs 1 and 2 are forward kernels only: their backward is the top rung's. Rungs 3-5 keep theirs.
int64_t backward_rung(int64_t rung) {
    return rung == ROWWISE_RUNG_NAIVE || rung == ROWWISE_RUNG_WARP ? ROWWISE_RUNG_BEST : rung;
}

bool wants_grad(const Tensor &x, const optional<Tensor> &w = {}, const optional<Tensor> &b = {}) {
    return at::GradMode::is_enabled() &&
           (x.requires_grad() || (w.has_value() && w->requires_grad()) || (b.has_value() && b->requires_grad()));
}

// softmax: dx = y (dy - sum(y dy)), so the output is all the backward keeps.
struct SoftmaxFunction : public torch::autograd::Function<SoftmaxFunction> {
    static Tensor forward(AutogradContext *ctx, const Tensor &x, int64_t rung) {
        const at::AutoDispatchBelowADInplaceOrView below_autograd;
        static const auto op = find_op<SoftmaxSig>("rowwise::softmax");
        Tensor y = op.call(x, rung);
        ctx->save_for_backward({y});
        ctx->saved_data["rung"] = backward_rung(rung);
        return y;
    }
    static variable_list backward(AutogradContext *ctx, variable_list grads) {
        static const auto op = find_op<SoftmaxBackwardSig>("rowwise::softmax_backward");
        const Tensor y = ctx->get_saved_variables()[0];
        return {op.call(y, grads[0], ctx->saved_data["rung"].toInt()), Tensor()};
    }
};

Tensor softmax_autograd(c10::DispatchKeySet keys, const Tensor &x, int64_t rung) {
    if (!wants_grad(x)) {
        static const auto op = find_op<SoftmaxSig>("rowwise::softmax");
        const at::AutoDispatchBelowADInplaceOrView below_autograd;
        return op.redispatch(keys & c10::after_autograd_keyset, x, rung);
    }
    return SoftmaxFunction::apply(x, rung);
}

// The norms keep x (an input: no extra memory) and the row statistics; mean and rstd are outputs nothing
// differentiates. set_materialize_grads(false): no zero-filled gradients for them on every backward (on the H100's
// host that was ~95 µs a call when the backward was Python's), and an undefined gradient for y when y was not used.
struct LayerNormFunction : public torch::autograd::Function<LayerNormFunction> {
    static variable_list forward(AutogradContext *ctx, const Tensor &x, const optional<Tensor> &w,
                                 const optional<Tensor> &b, double eps, int64_t rung) {
        const at::AutoDispatchBelowADInplaceOrView below_autograd;
        static const auto op = find_op<LayerNormSig>("rowwise::layer_norm");
        auto [y, mean, rstd] = op.call(x, w, b, eps, rung);
        ctx->mark_non_differentiable({mean, rstd});
        ctx->set_materialize_grads(false);
        ctx->save_for_backward({x, w.value_or(Tensor()), mean, rstd});
        ctx->saved_data["rung"] = backward_rung(rung);
        ctx->saved_data["has_weight"] = w.has_value();
        ctx->saved_data["has_bias"] = b.has_value();
        return {y, mean, rstd};
    }
    static variable_list backward(AutogradContext *ctx, variable_list grads) {
        static const auto op = find_op<LayerNormBackwardSig>("rowwise::layer_norm_backward");
        const bool has_w = ctx->saved_data["has_weight"].toBool(), has_b = ctx->saved_data["has_bias"].toBool();
        if (!grads[0].defined()) return variable_list(5);  // y was not used: nothing flows back
        const variable_list saved = ctx->get_saved_variables();
        // needs_input_grad counts the tensors given: x, then weight and bias where present.
        const bool want_w = has_w && ctx->needs_input_grad(1), want_b = has_b && ctx->needs_input_grad(has_w ? 2 : 1);
        const optional<Tensor> w = has_w ? optional<Tensor>(saved[1]) : c10::nullopt;
        auto [dx, dw, db] =
            op.call(grads[0], saved[0], w, saved[2], saved[3], {want_w, want_b}, ctx->saved_data["rung"].toInt());
        return {dx, want_w ? dw : Tensor(), want_b ? db : Tensor(), Tensor(), Tensor()};
    }
};

std::tuple<Tensor, Tensor, Tensor> layer_norm_autograd(c10::DispatchKeySet keys, const Tensor &x,
                                                       const optional<Tensor> &w, const optional<Tensor> &b, double eps,
                                                       int64_t rung) {
    if (!wants_grad(x, w, b)) {
        static const auto op = find_op<LayerNormSig>("rowwise::layer_norm");
        const at::AutoDispatchBelowADInplaceOrView below_autograd;
        return op.redispatch(keys & c10::after_autograd_keyset, x, w, b, eps, rung);
    }
    const variable_list out = LayerNormFunction::apply(x, w, b, eps, rung);
    return {out[0], out[1], out[2]};
}

struct RmsNormFunction : public torch::autograd::Function<RmsNormFunction> {
    static variable_list forward(AutogradContext *ctx, const Tensor &x, const optional<Tensor> &w, double eps,
                                 int64_t rung) {
        const at::AutoDispatchBelowADInplaceOrView below_autograd;
        static const auto op = find_op<RmsNormSig>("rowwise::rms_norm");
        auto [y, rstd] = op.call(x, w, eps, rung);
        ctx->mark_non_differentiable({rstd});
        ctx->set_materialize_grads(false);
        ctx->save_for_backward({x, w.value_or(Tensor()), rstd});
        ctx->saved_data["rung"] = backward_rung(rung);
        ctx->saved_data["has_weight"] = w.has_value();
        return {y, rstd};
    }
    static variable_list backward(AutogradContext *ctx, variable_list grads) {
        static const auto op = find_op<RmsNormBackwardSig>("rowwise::rms_norm_backward");
        const bool has_w = ctx->saved_data["has_weight"].toBool();
        if (!grads[0].defined()) return variable_list(4);
        const variable_list saved = ctx->get_saved_variables();
        const bool want_w = has_w && ctx->needs_input_grad(1);
        const optional<Tensor> w = has_w ? optional<Tensor>(saved[1]) : c10::nullopt;
        auto [dx, dw] = op.call(grads[0], saved[0], w, saved[2], want_w, ctx->saved_data["rung"].toInt());
        return {dx, want_w ? dw : Tensor(), Tensor(), Tensor()};
    }
};

std::tuple<Tensor, Tensor> rms_norm_autograd(c10::DispatchKeySet keys, const Tensor &x, const optional<Tensor> &w,
                                             double eps, int64_t rung) {
    if (!wants_grad(x, w)) {
        static const auto op = find_op<RmsNormSig>("rowwise::rms_norm");
        const at::AutoDispatchBelowADInplaceOrView below_autograd;
        return op.redispatch(keys & c10::after_autograd_keyset, x, w, eps, rung);
    }
    const variable_list out = RmsNormFunction::apply(x, w, eps, rung);
    return {out[0], out[1]};
}

}  // namespace

TORCH_LIBRARY(rowwise, m) {
    m.def("softmax(Tensor x, int rung=-1) -> Tensor");
    m.def("softmax_backward(Tensor y, Tensor dy, int rung=-1) -> Tensor");
    m.def(
        "layer_norm(Tensor x, Tensor? weight, Tensor? bias, float eps, int rung=-1) "
        "-> (Tensor, Tensor, Tensor)");
    m.def(
        "layer_norm_backward(Tensor dy, Tensor x, Tensor? weight, Tensor mean, Tensor rstd, bool[2] grads, "
        "int rung=-1) -> (Tensor, Tensor, Tensor)");
    m.def("rms_norm(Tensor x, Tensor? weight, float eps, int rung=-1) -> (Tensor, Tensor)");
    m.def(
        "rms_norm_backward(Tensor dy, Tensor x, Tensor? weight, Tensor rstd, bool want_dweight, int rung=-1) -> "
        "(Tensor, Tensor)");
    m.def("describe(Tensor x, str op, bool backward=False, int rung=-1) -> str");
}

TORCH_LIBRARY_IMPL(rowwise, CPU, m) {
    m.impl("softmax", &softmax_cpu);
    m.impl("softmax_backward", &softmax_backward_cpu);
    m.impl("layer_norm", &layer_norm_cpu);
    m.impl("layer_norm_backward", &layer_norm_backward_cpu);
    m.impl("rms_norm", &rms_norm_cpu);
    m.impl("rms_norm_backward", &rms_norm_backward_cpu);
    m.impl("describe", &describe_cpu);
}

TORCH_LIBRARY_IMPL(rowwise, CUDA, m) {
    m.impl("softmax", &softmax_cuda);
    m.impl("softmax_backward", &softmax_backward_cuda);
    m.impl("layer_norm", &layer_norm_cuda);
    m.impl("layer_norm_backward", &layer_norm_backward_cuda);
    m.impl("rms_norm", &rms_norm_cuda);
    m.impl("rms_norm_backward", &rms_norm_backward_cuda);
    m.impl("describe", &describe_cuda);
}

// Autograd covers every device (AutogradCPU, AutogradCUDA, ...): each backward is written once, for both.
TORCH_LIBRARY_IMPL(rowwise, Autograd, m) {
    m.impl("softmax", &softmax_autograd);
    m.impl("layer_norm", &layer_norm_autograd);
    m.impl("rms_norm", &rms_norm_autograd);
}

COURSE_PYTHON_MODULE()
