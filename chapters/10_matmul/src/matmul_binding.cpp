// matmul_binding.cpp — C = A·B as PyTorch ops: the only C++ of the chapter. It checks the inputs once, allocates the
// output, and hands pointers and strides to the C code (matmul.h): the CPU loop or the GPU ladder.
//
//   matmul::matmul(Tensor a, Tensor b, int rung=-1) -> Tensor                 C = A·B, a new (M, N) tensor
//   matmul::matmul_out(Tensor a, Tensor b, Tensor(a!) out, int rung=-1) -> () the same into `out`, whose rows must be
//                                                                             contiguous (the tests poison it first)
//   matmul::emulate_shared_tiles(Tensor a, Tensor b) -> Tensor                rung 2's per-thread code on the CPU
//   matmul::fma_chains(Tensor x, int iterations) -> Tensor                    the FMA-rate probe (bench.py's roof)
//   matmul::rung_used(Tensor a, Tensor b, int rung=-1) -> int                 the rung a CUDA call would run
//
// float32/float64 run the CUDA-core ladder (rungs 0-8 / 0-4), float16/bfloat16 the tensor-core rungs 9-11.
// No input is copied for rungs 0-10: A and B reach the kernels with their strides, so a.t(), b.t() and sliced
// views cost nothing (the backward passes Bᵀ and Aᵀ this way). Rung 11 reads its operands with TMA, which needs
// rows of contiguous elements: on a Hopper GPU an operand whose columns are not contiguous (a.t()) is copied to a
// contiguous tensor first; when TMA still cannot read it (a row length that is not a multiple of 8 elements, a
// misaligned view), rung 10 runs instead, on the original views. rung_used says which ran. `rung` picks a kernel of the
// GPU ladder (-1: the best for the dtype); the CPU has one implementation and only checks it. Autograd and the fake
// (meta) implementations are registered in Python (matmul/ops.py); the Python wrapper adds no checks: they are here,
// once.
#include <ATen/MemoryOverlap.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include "course_torch.h"
#include "matmul.h"

namespace {

// The op's contract, in the order a user would fix things: dtypes (TypeError), devices, dimensions, then the inner
// dimension (ValueError). `device` is the implementation's device type: a CPU tensor beside a CUDA one reaches the
// CUDA implementation, which names the CPU tensor.
void check_inputs(const at::Tensor &a, const at::Tensor &b, c10::DeviceType device) {
    course::check_dtype("a", a, {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16});
    course::check_dtype("b", b, {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16});
    course::check_same_dtype("a", a, "b", b);
    course::check_device("a", a, device);
    course::check_device("b", b, device);
    course::check_same_device("a", a, "b", b);
    course::check_ndim("a", a, 2);
    course::check_ndim("b", b, 2);
    TORCH_CHECK_VALUE(a.size(1) == b.size(0),
                      "a's columns must match b's rows (the inner dimension K), but a has shape ",
                      course::shape_text(a.sizes()), " and b has shape ", course::shape_text(b.sizes()));
}

void check_rung(int64_t rung, const at::Tensor &a) {
    TORCH_CHECK_VALUE(rung == MATMUL_RUNG_BEST || (rung >= 0 && rung < MATMUL_RUNG_END),
                      "rung must be -1 (the best for the dtype) or 0..", MATMUL_RUNG_END - 1, ", got ", rung);
    TORCH_CHECK_VALUE(matmul_rung_supported((int)rung, course::dtype_of(a)), "rung ", rung, " has no ",
                      course::dtype_name(a.scalar_type()), " kernel: float32 runs rungs 0-", MATMUL_RUNG_COUNT - 1,
                      ", float64 rungs 0-", MATMUL_RUNG_BLOCKTILE_2D, ", float16 and bfloat16 rungs ", MATMUL_RUNG_WMMA,
                      "-", MATMUL_RUNG_END - 1);
}

bool is_tensor_core_dtype(const at::Tensor &a) {
    return a.scalar_type() == at::kHalf || a.scalar_type() == at::kBFloat16;
}

// `out` must be a (M, N) tensor of a's dtype and device whose rows are contiguous (stride 1 along a row) and do not
// overlap each other, a or b. Its row stride may be larger than N (a slice of a wider matrix).
void check_out(const at::Tensor &out, const at::Tensor &a, const at::Tensor &b) {
    course::check_same_dtype("out", out, "a", a);
    course::check_same_device("out", out, "a", a);
    TORCH_CHECK_VALUE(out.dim() == 2 && out.size(0) == a.size(0) && out.size(1) == b.size(1), "out must have shape (",
                      a.size(0), ", ", b.size(1), "), but has shape ", course::shape_text(out.sizes()));
    TORCH_CHECK_VALUE(out.size(1) <= 1 || out.stride(1) == 1, "out's rows must be contiguous, but out has strides ",
                      course::shape_text(out.strides()));
    TORCH_CHECK_VALUE(out.size(0) <= 1 || out.stride(0) >= out.size(1), "out's rows overlap: strides ",
                      course::shape_text(out.strides()), " for shape ", course::shape_text(out.sizes()));
    at::assert_no_overlap(out, a);
    at::assert_no_overlap(out, b);
}

matmul_operand operand(const at::Tensor &t) {
    return {t.const_data_ptr(), t.stride(0), t.stride(1)};
}

// The row stride the C code writes with: out.stride(0), or N when out has one row (its row stride is then
// arbitrary, possibly smaller than N).
int64_t row_stride(const at::Tensor &out) {
    return out.size(0) <= 1 ? out.size(1) : out.stride(0);
}

void run_cpu(const at::Tensor &a, const at::Tensor &b, at::Tensor &out) {
    if (is_tensor_core_dtype(a)) {
        // float16/bfloat16 on the CPU: the C loop in float32 on float32 copies, rounded once at the end (the same
        // arithmetic as the tensor-core rungs: 16-bit inputs, fp32 sums, one rounding).
        at::Tensor a32 = at::empty(a.sizes(), a.options().dtype(at::kFloat)).copy_(a);
        at::Tensor b32 = at::empty(b.sizes(), b.options().dtype(at::kFloat)).copy_(b);
        at::Tensor c32 = at::empty(out.sizes(), out.options().dtype(at::kFloat));
        run_cpu(a32, b32, c32);
        out.copy_(c32);
        return;
    }
    const int status = matmul_cpu(course::dtype_of(a), a.size(0), b.size(1), a.size(1), operand(a), operand(b),
                                  out.mutable_data_ptr(), row_stride(out));
    TORCH_CHECK(status == 0, "matmul_cpu could not allocate its packing buffers");
}

// What a CUDA call runs: the operands it passes (for rung 11 on a Hopper GPU, contiguous copies of operands whose
// columns are not contiguous) and the rung. The fp32/fp64 ladder runs the rung asked for (BEST: matmul_best_rung).
struct Plan {
    at::Tensor a, b;
    int rung;
};

Plan plan_cuda(const at::Tensor &a, const at::Tensor &b, int64_t rung) {
    if (!is_tensor_core_dtype(a))
        return {a, b, rung == MATMUL_RUNG_BEST ? matmul_best_rung(course::dtype_of(a)) : (int)rung};
    int major = 0, minor = 0;
    COURSE_CHECK_LAUNCH(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, a.get_device()));
    COURSE_CHECK_LAUNCH(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, a.get_device()));
    const int64_t M = a.size(0), N = b.size(1), K = a.size(1);
    Plan plan{a, b, -1};
    if (major == 9 && (rung == MATMUL_RUNG_BEST || rung == MATMUL_RUNG_WGMMA)) {
        if (a.stride(1) != 1) plan.a = a.contiguous();
        if (b.stride(1) != 1) plan.b = b.contiguous();
        if (!matmul_tma_compatible(M, N, K, operand(plan.a), operand(plan.b))) plan = {a, b, -1};  // rung 10, in place
    }
    plan.rung = matmul_tensor_rung((int)rung, major, minor, M, N, K, operand(plan.a), operand(plan.b));
    TORCH_CHECK(plan.rung >= 0, "the tensor-core rungs need a GPU of compute capability 8.0 or later (bf16 tensor ",
                "cores); this GPU has ", major, ".", minor);
    return plan;
}

// The kernels run on PyTorch's current stream, on a's GPU. Rung 8's scratch memory (the partial sums of its splits
// of K) comes from PyTorch's caching allocator, on the same stream: no synchronisation, usually no cudaMalloc.
void run_cuda(const at::Tensor &a_in, const at::Tensor &b_in, at::Tensor &out, int64_t rung_in) {
    const c10::cuda::CUDAGuard guard(a_in.device());
    const Plan plan = plan_cuda(a_in, b_in, rung_in);
    const at::Tensor &a = plan.a, &b = plan.b;
    const int64_t rung = plan.rung;
    const course_dtype dtype = course::dtype_of(a);
    const int64_t M = a.size(0), N = b.size(1), K = a.size(1);
    size_t bytes = 0;
    COURSE_CHECK_LAUNCH(matmul_workspace_bytes((int)rung, dtype, M, N, K, &bytes));
    at::Tensor workspace;
    if (bytes > 0) workspace = at::empty({(int64_t)bytes}, a.options().dtype(at::kByte));
    COURSE_CHECK_LAUNCH(matmul_cuda((int)rung, dtype, M, N, K, operand(a), operand(b), out.mutable_data_ptr(),
                                    row_stride(out), bytes > 0 ? workspace.mutable_data_ptr() : nullptr, bytes,
                                    c10::cuda::getCurrentCUDAStream()));
}

at::Tensor matmul_cpu_impl(const at::Tensor &a, const at::Tensor &b, int64_t rung) {
    check_inputs(a, b, c10::DeviceType::CPU);
    check_rung(rung, a);  // the CPU has one implementation: the rung is checked, then not used
    at::Tensor out = at::empty({a.size(0), b.size(1)}, a.options());
    run_cpu(a, b, out);
    return out;
}

at::Tensor matmul_cuda_impl(const at::Tensor &a, const at::Tensor &b, int64_t rung) {
    check_inputs(a, b, c10::DeviceType::CUDA);
    check_rung(rung, a);
    at::Tensor out = at::empty({a.size(0), b.size(1)}, a.options());
    run_cuda(a, b, out, rung);
    return out;
}

void matmul_out_cpu_impl(const at::Tensor &a, const at::Tensor &b, at::Tensor &out, int64_t rung) {
    check_inputs(a, b, c10::DeviceType::CPU);
    check_rung(rung, a);
    check_out(out, a, b);
    run_cpu(a, b, out);
}

void matmul_out_cuda_impl(const at::Tensor &a, const at::Tensor &b, at::Tensor &out, int64_t rung) {
    check_inputs(a, b, c10::DeviceType::CUDA);
    check_rung(rung, a);
    check_out(out, a, b);
    run_cuda(a, b, out, rung);
}

at::Tensor emulate_shared_tiles_impl(const at::Tensor &a, const at::Tensor &b) {
    check_inputs(a, b, c10::DeviceType::CPU);
    at::Tensor out = at::empty({a.size(0), b.size(1)}, a.options());
    const int status = matmul_emulate_shared_tiles(course::dtype_of(a), a.size(0), b.size(1), a.size(1), operand(a),
                                                   operand(b), out.mutable_data_ptr(), row_stride(out));
    TORCH_CHECK(status == 0, "matmul_emulate_shared_tiles could not allocate its buffers");
    return out;
}

int64_t rung_used_cuda_impl(const at::Tensor &a, const at::Tensor &b, int64_t rung) {
    check_inputs(a, b, c10::DeviceType::CUDA);
    check_rung(rung, a);
    const c10::cuda::CUDAGuard guard(a.device());
    return plan_cuda(a, b, rung).rung;
}

at::Tensor fma_chains_cuda_impl(const at::Tensor &x, int64_t iterations) {
    course::check_dtype("x", x, {at::kFloat});
    course::check_device("x", x, c10::DeviceType::CUDA);
    TORCH_CHECK_VALUE(x.is_contiguous(), "x must be contiguous");
    TORCH_CHECK_VALUE(iterations >= 0 && iterations <= INT32_MAX, "iterations must be in 0..2^31-1, got ", iterations);
    const c10::cuda::CUDAGuard guard(x.device());
    at::Tensor y = at::empty_like(x);
    COURSE_CHECK_LAUNCH(matmul_fma_chains_cuda(x.const_data_ptr<float>(), y.mutable_data_ptr<float>(), x.numel(),
                                               (int)iterations, c10::cuda::getCurrentCUDAStream()));
    return y;
}

}  // namespace

TORCH_LIBRARY(matmul, m) {
    m.def("matmul(Tensor a, Tensor b, int rung=-1) -> Tensor");
    m.def("matmul_out(Tensor a, Tensor b, Tensor(a!) out, int rung=-1) -> ()");
    m.def("emulate_shared_tiles(Tensor a, Tensor b) -> Tensor");
    m.def("fma_chains(Tensor x, int iterations) -> Tensor");
    m.def("rung_used(Tensor a, Tensor b, int rung=-1) -> int");
}

TORCH_LIBRARY_IMPL(matmul, CPU, m) {
    m.impl("matmul", &matmul_cpu_impl);
    m.impl("matmul_out", &matmul_out_cpu_impl);
    m.impl("emulate_shared_tiles", &emulate_shared_tiles_impl);
}

TORCH_LIBRARY_IMPL(matmul, CUDA, m) {
    m.impl("matmul", &matmul_cuda_impl);
    m.impl("matmul_out", &matmul_out_cuda_impl);
    m.impl("fma_chains", &fma_chains_cuda_impl);
    m.impl("rung_used", &rung_used_cuda_impl);
}

COURSE_PYTHON_MODULE()
