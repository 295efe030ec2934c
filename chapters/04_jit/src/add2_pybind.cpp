/*
 * add2_pybind.cpp — the seed's way to reach add2 from Python, kept for the JIT lesson: a pybind11 module
 * (C++, PyTorch API).
 *
 * torch.utils.cpp_extension.load() compiles this file with add2_seed.cu and add2_vec.cu just in time
 * (add2/jit.py: load_from_files), to show how load() builds and caches a module. It is not how the course's ops
 * are reached: add2.add2 is the TORCH_LIBRARY op (add2_ops.cpp). These are plain pybind11 functions, outside
 * PyTorch's dispatcher: no autograd, no torch.compile, no fake tensors, no opcheck. The benchmark's call-overhead
 * table times one of them beside the op, to show what the dispatcher's generic Python entry costs per call at a
 * tiny size; that is a measurement, not a route to copy.
 *
 * The checks are the op's (add2_torch.h): a TORCH_CHECK_TYPE / TORCH_CHECK_VALUE failure reaches Python as
 * TypeError / ValueError through torch's pybind11 exception translation.
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
    m.doc() = "add2 bound with pybind11, JIT-built from files (the JIT lesson; the op is torch.ops.add2.add2)";
    m.def("add2", &add2_pybind, "c = a + b, vectorized kernel", pybind11::arg("a"), pybind11::arg("b"));
    m.def("add2_seed", &add2_torch::add2_seed, "c = a + b, the seed's kernel", pybind11::arg("a"), pybind11::arg("b"));
}
