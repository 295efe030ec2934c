/*
 * add2_ops.cpp — registers add2 with PyTorch's dispatcher as torch.ops.add2.* (C++, PyTorch API).
 *
 *   add2(a, b) -> c                         version 2, the vectorized kernel (the one to use)
 *   add2_seed(a, b) -> c                    version 1, the seed's grid-stride kernel
 *   add2_capped(a, b, blocks_per_sm) -> c   version 2 with the grid capped at blocks_per_sm blocks per SM
 *   pitfall_seed_n(c!, a, b, n)             PITFALL: the seed's interface, n passed separately and trusted
 *   emulate_seed(c!, a, b, n, grid, block)  CPU: runs version 1's loop for every (block, thread) of a launch
 *
 * Built ahead of time by setup.py (module add2._C, which holds no functions: COURSE_PYTHON_MODULE); the Python
 * wrappers and fake impls are in add2/ops.py. Each op checks its inputs once, in its C++ implementation
 * (add2_torch.h: TypeError for a dtype, ValueError for a device or shape, the messages of course.checks). The CUDA
 * ops are registered for the CPU too, so that CPU tensors get that ValueError ("a must be on cuda, but it is on
 * cpu") rather than the dispatcher's NotImplementedError.
 *
 * Autograd, two ways: add2's is registered here in C++ (Add2Backward below), add2_seed's and add2_capped's in Python
 * with torch.library.register_autograd (add2/ops.py). The Python one is shorter, but it runs a Python function on
 * every call, gradients or not; at n = 32, where the call is all there is, the benchmark shows what that costs.
 * The C++ one runs no Python at all: a call of torch.ops.add2.add2 goes from the dispatcher's Python entry to C++.
 */
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>

#include "add2_torch.h"

namespace {

at::Tensor add2_impl(const at::Tensor &a, const at::Tensor &b) {
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

at::Tensor add2_capped_impl(const at::Tensor &a, const at::Tensor &b, int64_t blocks_per_sm) {
    TORCH_CHECK_VALUE(blocks_per_sm >= 1 && blocks_per_sm <= 64, "blocks_per_sm must be in [1, 64], got ",
                      blocks_per_sm);
    return add2_torch::add2_vec(a, b, blocks_per_sm);
}

/* PITFALL (seed 004): the seed's launcher took the output and a separate `int n` and trusted both. n smaller than
 * the tensors silently leaves c's last elements unwritten; n larger reads and writes past the end of every
 * buffer. Kept to show the bug — add2_seed() above derives n from the tensors instead. Only n >= 0 is checked. */
void pitfall_seed_n_impl(at::Tensor c, const at::Tensor &a_in, const at::Tensor &b_in, int64_t n) {
    add2_torch::check_inputs(a_in, b_in);
    course::check_same_dtype("a", a_in, "c", c);
    course::check_same_shape("a", a_in, "c", c);
    course::check_same_device("a", a_in, "c", c);
    TORCH_CHECK_VALUE(c.is_contiguous(), "c must be contiguous; call .contiguous() on it first");
    TORCH_CHECK_VALUE(n >= 0, "n must be >= 0, got ", n);
    const c10::cuda::CUDAGuard guard(a_in.device());
    const at::Tensor a = a_in.contiguous(), b = b_in.contiguous();
    COURSE_CHECK_LAUNCH(add2_seed_launch(c.data_ptr(), a.const_data_ptr(), b.const_data_ptr(), n, course::dtype_of(a),
                                         c10::cuda::getCurrentCUDAStream()));
}

void emulate_seed_cpu(at::Tensor c, const at::Tensor &a_in, const at::Tensor &b_in, int64_t n, int64_t grid,
                      int64_t block) {
    course::check_dtype("a", a_in, {at::kFloat});
    course::check_device("a", a_in, c10::DeviceType::CPU);
    course::check_dtype("b", b_in, {at::kFloat});
    course::check_device("b", b_in, c10::DeviceType::CPU);
    course::check_same_shape("a", a_in, "b", b_in);
    course::check_dtype("c", c, {at::kFloat});
    course::check_device("c", c, c10::DeviceType::CPU);
    TORCH_CHECK_VALUE(c.is_contiguous(), "c must be contiguous; call .contiguous() on it first");
    TORCH_CHECK_VALUE(n >= 0 && n <= c.numel() && n <= a_in.numel(),
                      "n must be in [0, numel] (the emulation stays in bounds), got ", n);
    TORCH_CHECK_VALUE(grid >= 1 && block >= 1 && block <= 1024, "need grid >= 1 and 1 <= block <= 1024, got grid ",
                      grid, " and block ", block);
    const at::Tensor a = a_in.contiguous(), b = b_in.contiguous();
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

// The checking impls are registered for the CPU as well: there they stop at "a must be on cuda" (ValueError).
TORCH_LIBRARY_IMPL(add2, CUDA, m) {
    m.impl("add2", &add2_impl);
    m.impl("add2_seed", &add2_torch::add2_seed);
    m.impl("add2_capped", &add2_capped_impl);
    m.impl("pitfall_seed_n", &pitfall_seed_n_impl);
}

TORCH_LIBRARY_IMPL(add2, CPU, m) {
    m.impl("add2", &add2_impl);
    m.impl("add2_seed", &add2_torch::add2_seed);
    m.impl("add2_capped", &add2_capped_impl);
    m.impl("pitfall_seed_n", &pitfall_seed_n_impl);
    m.impl("emulate_seed", &emulate_seed_cpu);
}

TORCH_LIBRARY_IMPL(add2, Autograd, m) {
    m.impl("add2", &add2_autograd);
}

COURSE_PYTHON_MODULE()
