/*
 * add2_pybind.cpp — the seed's way to reach add2 from Python: a pybind11 module (C++, PyTorch API).
 *
 * torch.utils.cpp_extension.load() compiles this file with add2_seed.cu and add2_vec.cu just in time
 * (add2/jit.py: load_from_files). The functions are plain pybind11 functions, outside PyTorch's dispatcher: no
 * torch.compile, no autograd, no fake tensors — but also nothing between the Python call and the launch, which is
 * what the benchmark's call-overhead row compares with the TORCH_LIBRARY op.
 *
 * <torch/csrc/utils/pybind.h> brings pybind11 and the at::Tensor <-> torch.Tensor converter; it is much lighter
 * than <torch/extension.h>, which compiles the whole C++ frontend as well.
 */
#include <torch/csrc/utils/pybind.h>

#include "add2_torch.h"

namespace {

at::Tensor add2_pybind(const at::Tensor &a, const at::Tensor &b) {
    return add2_torch::add2_vec(a, b, 0);
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.doc() = "add2 bound with pybind11 (JIT-built from files)";
    m.def("add2", &add2_pybind, "c = a + b, vectorized kernel", pybind11::arg("a"), pybind11::arg("b"));
    m.def("add2_seed", &add2_torch::add2_seed, "c = a + b, the seed's kernel", pybind11::arg("a"), pybind11::arg("b"));
}
