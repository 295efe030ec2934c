// square_bias_cpu.cpp — the wheel's first library, square_bias_wheel._C: the op's schema and its CPU implementation.
//
//   torch.ops.square_bias_wheel.square_bias(x, b)   CPU: chapter 01's C core (float32, float64)
//
// Built against the stable ABI (square_bias_stable.h says what that means) and Python's limited API, so the one file
// _C.abi3.so serves every CPython >= 3.10 and every torch >= 2.11. It needs nothing of CUDA: it loads into a CPU-only
// torch too. The CUDA implementation is the second library, _C_cuda (square_bias_cuda.cpp), which the package loads
// only when torch itself is a CUDA build.
#include <Python.h>

#include <torch/csrc/stable/library.h>

#include "square_bias.h"  // chapter 01's C core
#include "square_bias_stable.h"

namespace {

using square_bias::Tensor;

Tensor square_bias_cpu(Tensor x_, Tensor b_) {
    int64_t b_n = 0;
    const course_dtype dtype = square_bias::check_inputs(x_, b_, &b_n);
    STD_TORCH_CHECK(dtype == COURSE_FLOAT32 || dtype == COURSE_FLOAT64, "on the CPU, x has dtype ", x_.scalar_type(),
                    ", but only float32, float64 are supported there");
    const Tensor x = torch::stable::contiguous(x_), b = torch::stable::contiguous(b_);
    Tensor y = torch::stable::empty_like(x);
    const int64_t n = x.numel();
    if (n == 0) return y;
    const int status = dtype == COURSE_FLOAT32 ? square_bias_forward_f32(static_cast<const float *>(x.data_ptr()),
                                                                         static_cast<const float *>(b.data_ptr()),
                                                                         static_cast<float *>(y.data_ptr()), n, b_n)
                                               : square_bias_forward_f64(static_cast<const double *>(x.data_ptr()),
                                                                         static_cast<const double *>(b.data_ptr()),
                                                                         static_cast<double *>(y.data_ptr()), n, b_n);
    STD_TORCH_CHECK(status == SQUARE_BIAS_OK, "chapter 01's C core rejected the sizes");
    return y;
}

}  // namespace

STABLE_TORCH_LIBRARY(square_bias_wheel, m) {
    m.def("square_bias(Tensor x, Tensor b) -> Tensor");
}

STABLE_TORCH_LIBRARY_IMPL(square_bias_wheel, CPU, m) {
    m.impl("square_bias", TORCH_BOX(&square_bias_cpu));
}

// The Python module only loads the library (its static initialisers register the op); the op lives in torch.ops.
extern "C" PyObject *PyInit__C(void) {
    static PyModuleDef module = {PyModuleDef_HEAD_INIT,
                                 "_C",
                                 "Registers square_bias_wheel's op and its CPU kernel.",
                                 -1,
                                 nullptr,
                                 nullptr,
                                 nullptr,
                                 nullptr,
                                 nullptr};
    return PyModule_Create(&module);
}
