// ordinary_binding.cpp — THE PITFALL: the same op, y = x*x + b on the CPU, built the ordinary way.
//
// It includes ATen's C++ headers and registers with TORCH_LIBRARY, as chapters 01-10 do. That is right for code
// built on the machine that runs it, and wrong for a wheel: the .so calls C++ functions of libtorch by their mangled
// names (c10::..., at::..., torch::...) and bakes in the layout of C++ classes (at::Tensor, c10::IValue) of the
// torch it was built against. Another torch release renames, removes or reshapes some of them, and the .so then
// fails at import with "undefined symbol: ..." (or, worse, loads and misbehaves). tests/test_pitfall.py builds this
// file against one torch and imports it under another; the lesson shows the message.
#include <Python.h>

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty_like.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include "square_bias.h"          // chapter 01's C core
#include "square_bias_kernels.h"  // the wheel's kernel (float32 here)

namespace {

at::Tensor square_bias_ordinary(const at::Tensor &x_, const at::Tensor &b_) {
    TORCH_CHECK(x_.scalar_type() == at::kFloat && b_.scalar_type() == at::kFloat, "float32 only");
    TORCH_CHECK(b_.numel() > 0 && x_.numel() % b_.numel() == 0, "b must repeat along x");
    const at::Tensor x = x_.contiguous(), b = b_.contiguous();
    at::Tensor y = at::empty_like(x);
    const int status = square_bias_forward_f32(x.const_data_ptr<float>(), b.const_data_ptr<float>(),
                                               y.mutable_data_ptr<float>(), x.numel(), b.numel());
    TORCH_CHECK(status == SQUARE_BIAS_OK, "chapter 01's C core rejected the sizes");
    return y;
}

at::Tensor square_bias_ordinary_cuda(const at::Tensor &x_, const at::Tensor &b_) {
    TORCH_CHECK(x_.scalar_type() == at::kFloat && b_.scalar_type() == at::kFloat, "float32 only");
    TORCH_CHECK(b_.numel() > 0 && x_.numel() % b_.numel() == 0, "b must repeat along x");
    const c10::cuda::CUDAGuard guard(x_.device());
    const at::Tensor x = x_.contiguous(), b = b_.contiguous();
    at::Tensor y = at::empty_like(x);
    const cudaError_t err =
        square_bias_forward_cuda(COURSE_FLOAT32, x.const_data_ptr(), b.const_data_ptr(), y.mutable_data_ptr(),
                                 x.numel(), b.numel(), c10::cuda::getCurrentCUDAStream().stream());
    TORCH_CHECK(err == cudaSuccess, "CUDA error ", cudaGetErrorName(err), ": ", cudaGetErrorString(err));
    return y;
}

}  // namespace

TORCH_LIBRARY(square_bias_ordinary, m) {
    m.def("square_bias(Tensor x, Tensor b) -> Tensor");
}

TORCH_LIBRARY_IMPL(square_bias_ordinary, CPU, m) {
    m.impl("square_bias", &square_bias_ordinary);
}

TORCH_LIBRARY_IMPL(square_bias_ordinary, CUDA, m) {
    m.impl("square_bias", &square_bias_ordinary_cuda);
}

// Importing the module loads the library, and the library's static initialisers register the op.
extern "C" PyObject *PyInit_square_bias_ordinary(void) {
    static PyModuleDef module = {PyModuleDef_HEAD_INIT,
                                 "square_bias_ordinary",
                                 "The ordinary build (the pitfall).",
                                 -1,
                                 nullptr,
                                 nullptr,
                                 nullptr,
                                 nullptr,
                                 nullptr};
    return PyModule_Create(&module);
}
