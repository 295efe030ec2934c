/*
 * add2_ops.cpp — registers add2 with PyTorch's dispatcher as torch.ops.add2.* (C++, PyTorch API).
 *
 *   add2(a, b) -> c                         version 2, the vectorized kernel (the one to use)
 *   add2_seed(a, b) -> c                    version 1, the seed's grid-stride kernel
 *   add2_capped(a, b, blocks_per_sm) -> c   version 2 with the grid capped at blocks_per_sm blocks per SM
 *   pitfall_seed_n(c!, a, b, n)             PITFALL: the seed's interface, n passed separately and trusted
 *   emulate_seed(c!, a, b, n, grid, block)  CPU: runs version 1's loop for every (block, thread) of a launch
 *
 * Built ahead of time by setup.py (module add2._C); the Python wrappers and fake impls are in add2/ops.py.
 *
 * The module add2._C also holds one Python function, call_add2(a, b): the op called from C++ through the dispatcher
 * (autograd included), reached from Python through pybind11. torch.ops.add2.add2(a, b) reaches the same op through
 * the dispatcher's generic Python entry, which matches the arguments against the schema and boxes them on every
 * call: at small sizes, where the call is all there is, that costs as much as the kernel (chapter 07).
 *
 * Autograd, two ways: add2's is registered here in C++ (Add2Backward below), add2_seed's and add2_capped's in Python
 * with torch.library.register_autograd (add2/ops.py). The Python one is shorter, but it runs a Python function on
 * every call, gradients or not; at n = 32, where the call is all there is, the benchmark shows what that costs.
 */
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/csrc/utils/pybind.h>
#include <torch/library.h>

#include "add2_torch.h"

namespace {

at::Tensor add2_cuda(const at::Tensor &a, const at::Tensor &b) {
    return add2_torch::add2_vec(a, b, 0);
}

/* The op, looked up once, for calling it again through the dispatcher. */
const c10::TypedOperatorHandle<at::Tensor(const at::Tensor &, const at::Tensor &)> &add2_op() {
    static const auto op = c10::Dispatcher::singleton()
                               .findSchemaOrThrow("add2::add2", "")
                               .typed<at::Tensor(const at::Tensor &, const at::Tensor &)>();
    return op;
}

/* c = a + b: dc/da = dc/db = 1, so the backward hands the incoming gradient to both inputs. The forward calls the
 * op again below the autograd key (through the dispatcher, so fake tensors under torch.compile reach the fake impl),
 * and autograd records Add2Backward when an input requires grad. */
struct Add2Backward : public torch::autograd::Function<Add2Backward> {
    static at::Tensor forward(torch::autograd::AutogradContext *, const at::Tensor &a, const at::Tensor &b) {
        const at::AutoDispatchBelowADInplaceOrView below_autograd;
        return add2_op().call(a, b);
    }
    static torch::autograd::variable_list backward(torch::autograd::AutogradContext *,
                                                   torch::autograd::variable_list grads) {
        return {grads[0], grads[0]};
    }
};

/* The dispatcher hands a kernel the key set it was dispatched with when the first parameter asks for it. */
at::Tensor add2_autograd(c10::DispatchKeySet keys, const at::Tensor &a, const at::Tensor &b) {
    if (!at::GradMode::is_enabled() || !(a.requires_grad() || b.requires_grad())) {
        // No graph to record: skip building an autograd node (Function::apply always makes one) and pass the call
        // to the next kernel below autograd (CUDA, or the fake impl under torch.compile) with redispatch, as
        // PyTorch's own autograd kernels do, instead of dispatching it again from the top.
        const at::AutoDispatchBelowADInplaceOrView below_autograd;
        return add2_op().redispatch(keys & c10::after_autograd_keyset, a, b);
    }
    return Add2Backward::apply(a, b);
}

at::Tensor add2_capped_cuda(const at::Tensor &a, const at::Tensor &b, int64_t blocks_per_sm) {
    COURSE_CHECK(blocks_per_sm > 0, "add2_capped: blocks_per_sm must be positive, got ", blocks_per_sm);
    return add2_torch::add2_vec(a, b, blocks_per_sm);
}

/* PITFALL (seed 004): the seed's launcher took the output and a separate `int n` and trusted both. n smaller than
 * the tensors silently leaves c's last elements unwritten; n larger reads and writes past the end of every
 * buffer. Kept to show the bug — add2_seed() above derives n from the tensors instead. Only n >= 0 is checked. */
void pitfall_seed_n_cuda(at::Tensor c, const at::Tensor &a, const at::Tensor &b, int64_t n) {
    add2_torch::check_inputs(a, b);
    COURSE_CHECK(c.device() == a.device() && c.scalar_type() == a.scalar_type() && c.is_contiguous(),
                 "pitfall_seed_n: c must be a contiguous tensor like a");
    COURSE_CHECK(n >= 0, "pitfall_seed_n: n must be >= 0, got ", n);
    const c10::cuda::CUDAGuard guard(a.device());
    COURSE_CHECK_LAUNCH(add2_seed_launch(c.data_ptr(), a.const_data_ptr(), b.const_data_ptr(), n,
                                         add2_torch::dtype_code(a), c10::cuda::getCurrentCUDAStream()));
}

void emulate_seed_cpu(at::Tensor c, const at::Tensor &a, const at::Tensor &b, int64_t n, int64_t grid, int64_t block) {
    const auto is_cpu_f32 = [](const at::Tensor &t) {
        return t.device().is_cpu() && t.scalar_type() == at::kFloat && t.is_contiguous();
    };
    COURSE_CHECK(is_cpu_f32(c) && is_cpu_f32(a) && is_cpu_f32(b),
                 "emulate_seed: c, a and b must be contiguous float32 CPU tensors");
    COURSE_CHECK(n >= 0 && n <= c.numel() && n <= a.numel() && n <= b.numel(),
                 "emulate_seed: n must be in [0, numel] (the emulation stays in bounds), got ", n);
    COURSE_CHECK(grid >= 1 && block >= 1 && block <= 1024, "emulate_seed: need grid >= 1 and 1 <= block <= 1024");
    add2_seed_emulate_f32(c.data_ptr<float>(), a.const_data_ptr<float>(), b.const_data_ptr<float>(), n, grid, block);
}

}  // namespace

TORCH_LIBRARY(add2, m) {
    m.def("add2(Tensor a, Tensor b) -> Tensor");
    m.def("add2_seed(Tensor a, Tensor b) -> Tensor");
    m.def("add2_capped(Tensor a, Tensor b, int blocks_per_sm) -> Tensor");
    m.def("pitfall_seed_n(Tensor(a!) c, Tensor a, Tensor b, int n) -> ()");
    m.def("emulate_seed(Tensor(a!) c, Tensor a, Tensor b, int n, int grid, int block) -> ()");
}

TORCH_LIBRARY_IMPL(add2, CUDA, m) {
    m.impl("add2", &add2_cuda);
    m.impl("add2_seed", &add2_torch::add2_seed);
    m.impl("add2_capped", &add2_capped_cuda);
    m.impl("pitfall_seed_n", &pitfall_seed_n_cuda);
}

TORCH_LIBRARY_IMPL(add2, Autograd, m) {
    m.impl("add2", &add2_autograd);
}

TORCH_LIBRARY_IMPL(add2, CPU, m) {
    m.impl("emulate_seed", &emulate_seed_cpu);
}

/* add2 from Python in one step: pybind11 turns the arguments into at::Tensor, and the typed handle calls the op
 * through the dispatcher (from the top: autograd, then the CUDA kernel). The checks are check_inputs'. */
at::Tensor call_add2(const at::Tensor &a, const at::Tensor &b) {
    return add2_op().call(a, b);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.doc() = "Loads add2's ops into torch.ops.add2; call_add2 calls the add2 op from C++";
    m.def("call_add2", &call_add2, "c = a + b through the dispatcher (the add2 op), called from C++",
          pybind11::arg("a"), pybind11::arg("b"));
}
