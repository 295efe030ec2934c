// stable_binding.cpp — the appendix: the forward op against LibTorch's *stable* ABI.
//
//   torch.ops.square_bias_cuda_stable.square_bias(x, b)    CPU: chapter 01's C core    CUDA: the same kernels
//
// binding.cpp uses at::Tensor, c10::cuda and TORCH_LIBRARY: C++ classes whose layout and mangled names change
// between torch releases, so its .so only loads into the torch it was built against (otherwise: "undefined
// symbol: ..." at import). This file includes only torch/csrc/stable and torch/headeronly: they reach libtorch
// through a C API (the aoti_torch_* / torch_* shim functions) that keeps working across releases, and the module
// is built for Python's limited API (one .abi3.so for every CPython >= 3.9). TORCH_TARGET_VERSION (setup.py)
// pins the newest stable API this file may use: 2.10, so the build loads into torch 2.10 and every later one.
#include <Python.h>

#include <torch/csrc/inductor/aoti_torch/c/shim.h>
#include <torch/csrc/stable/accelerator.h>
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>
#include <torch/headeronly/util/Exception.h>

#include "course_broadcast.h"  // plain C: usable here, where no ATen header may be included
#include "course_dtype.h"
#include "square_bias.h"  // chapter 01's C core
#include "square_bias_kernels.h"

namespace {

using torch::headeronly::ScalarType;
using torch::stable::Tensor;

// The course_dtype the kernels take for a tensor's dtype; false for a dtype they do not take.
bool kernel_dtype(ScalarType type, course_dtype *dtype) {
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

// The checks use the stable ABI's STD_TORCH_CHECK: it throws std::runtime_error, which reaches Python as
// RuntimeError (the stable headers have no TypeError/ValueError variant, so the main op's exception types are not
// available here), with a message that starts with this function's name, file and line. Dtypes print with C++
// names ("Float"); shapes print as Python prints them (course_shape_text, plain C).
Tensor square_bias_stable(Tensor x_, Tensor b_) {
    course_dtype dtype;
    STD_TORCH_CHECK(kernel_dtype(x_.scalar_type(), &dtype), "x has dtype ", x_.scalar_type(),
                    ", but only float32, float64, float16, bfloat16 are supported");
    STD_TORCH_CHECK(x_.scalar_type() == b_.scalar_type(), "x and b must have the same dtype, but x has ",
                    x_.scalar_type(), " and b has ", b_.scalar_type());
    STD_TORCH_CHECK(x_.is_cpu() == b_.is_cpu() && x_.get_device_index() == b_.get_device_index(),
                    "x and b must have the same device");
    const auto x_shape = x_.sizes(), b_shape = b_.sizes();
    if (!course_broadcasts_to(b_shape.data(), b_.dim(), x_shape.data(), x_.dim())) {
        char b_text[128], x_text[128];
        STD_TORCH_CHECK(false, "b of shape ", course_shape_text(b_text, sizeof b_text, b_shape.data(), b_.dim()),
                        " cannot be broadcast to x's shape ",
                        course_shape_text(x_text, sizeof x_text, x_shape.data(), x_.dim()));
    }
    const int64_t b_n = course_repeat_length(b_shape.data(), b_.dim(), x_shape.data(), x_.dim());
    STD_TORCH_CHECK(b_n > 0 || x_.numel() == 0,
                    "the stable variant takes a b that is a scalar, a row or of x's shape; expand any other b to "
                    "x's shape first");

    Tensor x = torch::stable::contiguous(x_), b = torch::stable::contiguous(b_);
    Tensor y = torch::stable::empty_like(x);
    const int64_t n = x.numel();
    if (n == 0) return y;
    if (x.is_cpu()) {
        int status = SQUARE_BIAS_EINVAL;
        if (dtype == COURSE_FLOAT32)
            status = square_bias_forward_f32(static_cast<const float *>(x.data_ptr()),
                                             static_cast<const float *>(b.data_ptr()),
                                             static_cast<float *>(y.data_ptr()), n, b_n);
        else if (dtype == COURSE_FLOAT64)
            status = square_bias_forward_f64(static_cast<const double *>(x.data_ptr()),
                                             static_cast<const double *>(b.data_ptr()),
                                             static_cast<double *>(y.data_ptr()), n, b_n);
        else
            STD_TORCH_CHECK(false, "the stable variant on the CPU takes float32 or float64");
        STD_TORCH_CHECK(status == SQUARE_BIAS_OK, "chapter 01's C core rejected the sizes");
        return y;
    }
    STD_TORCH_CHECK(x.is_cuda(), "the stable variant runs on the CPU or a CUDA GPU");
    const torch::stable::accelerator::DeviceGuard guard(x.get_device_index());
    void *stream = nullptr;  // PyTorch's current stream, through the C shim
    STD_TORCH_CHECK(aoti_torch_get_current_cuda_stream(x.get_device_index(), &stream) == AOTI_TORCH_SUCCESS,
                    "could not get the current CUDA stream");
    const cudaError_t err = square_bias_forward_cuda(dtype, x.data_ptr(), b.data_ptr(), y.data_ptr(), n, b_n,
                                                     static_cast<cudaStream_t>(stream));
    STD_TORCH_CHECK(err == cudaSuccess, "CUDA error ", cudaGetErrorName(err), ": ", cudaGetErrorString(err));
    return y;
}

}  // namespace

STABLE_TORCH_LIBRARY(square_bias_cuda_stable, m) {
    m.def("square_bias(Tensor x, Tensor b) -> Tensor");
}

STABLE_TORCH_LIBRARY_IMPL(square_bias_cuda_stable, CPU, m) {
    m.impl("square_bias", TORCH_BOX(&square_bias_stable));
}

STABLE_TORCH_LIBRARY_IMPL(square_bias_cuda_stable, CUDA, m) {
    m.impl("square_bias", TORCH_BOX(&square_bias_stable));
}

// The Python module only loads the library; the op lives in torch.ops. Limited API only: no torch/extension.h.
extern "C" PyObject *PyInit__C(void) {
    static PyModuleDef module = {PyModuleDef_HEAD_INIT,
                                 "_C",
                                 "Loads square_bias_cuda_stable's op.",
                                 -1,
                                 nullptr,
                                 nullptr,
                                 nullptr,
                                 nullptr,
                                 nullptr};
    return PyModule_Create(&module);
}
