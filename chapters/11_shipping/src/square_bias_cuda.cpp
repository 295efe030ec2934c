// square_bias_cuda.cpp — the wheel's second library, square_bias_wheel._C_cuda: the op's CUDA implementation.
//
// A library of its own because it needs CUDA: libcudart.so.13 (the CUDA runtime that torch's CUDA build brings) and
// libtorch_cuda.so (for the current stream). Neither exists beside a CPU-only torch, where loading this library would
// fail with "libcudart.so.13: cannot open shared object file"; so square_bias_wheel/__init__.py loads it only when
// torch.version.cuda says torch is a CUDA build, and first checks that torch's CUDA major version is the wheel's.
#include <Python.h>

#include <torch/csrc/inductor/aoti_torch/c/shim.h>
#include <torch/csrc/stable/accelerator.h>
#include <torch/csrc/stable/library.h>

#include "square_bias_kernels.h"
#include "square_bias_stable.h"

namespace {

using square_bias::Tensor;

Tensor square_bias_cuda(Tensor x_, Tensor b_) {
    int64_t b_n = 0;
    const course_dtype dtype = square_bias::check_inputs(x_, b_, &b_n);
    STD_TORCH_CHECK(x_.is_cuda(), "the CUDA kernel got a tensor that is not on a CUDA device");
    const torch::stable::accelerator::DeviceGuard guard(x_.get_device_index());
    const Tensor x = torch::stable::contiguous(x_), b = torch::stable::contiguous(b_);
    Tensor y = torch::stable::empty_like(x);
    void *stream = nullptr;  // PyTorch's current stream, through the C shim
    STD_TORCH_CHECK(aoti_torch_get_current_cuda_stream(x.get_device_index(), &stream) == AOTI_TORCH_SUCCESS,
                    "could not get the current CUDA stream");
    // A GPU the wheel has no code for fails here: cudaErrorNoKernelImageForDevice, "no kernel image is available
    // for execution on the device".
    const cudaError_t err = square_bias_forward_cuda(dtype, x.data_ptr(), b.data_ptr(), y.data_ptr(), x.numel(), b_n,
                                                     static_cast<cudaStream_t>(stream));
    STD_TORCH_CHECK(err == cudaSuccess, "CUDA error ", cudaGetErrorName(err), ": ", cudaGetErrorString(err));
    return y;
}

}  // namespace

STABLE_TORCH_LIBRARY_IMPL(square_bias_wheel, CUDA, m) {
    m.impl("square_bias", TORCH_BOX(&square_bias_cuda));
}

extern "C" PyObject *PyInit__C_cuda(void) {
    static PyModuleDef module = {PyModuleDef_HEAD_INIT,
                                 "_C_cuda",
                                 "Registers square_bias_wheel's CUDA kernel.",
                                 -1,
                                 nullptr,
                                 nullptr,
                                 nullptr,
                                 nullptr,
                                 nullptr};
    return PyModule_Create(&module);
}
