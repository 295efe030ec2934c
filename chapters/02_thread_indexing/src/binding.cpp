// binding.cpp — the chapter's kernels as PyTorch ops (torch.ops.thread_index.*), the only C++ in the chapter.
//
// Each op checks its arguments once, at its top, with the course:: checks of common/include/course_torch.h (the
// messages and exception types of Python's course.checks: TypeError for a dtype, ValueError for a device, shape
// or size), takes PyTorch's current stream and calls a C launcher from record.h. Outputs are written into tensors
// the caller allocated (the ops' names end in _), so the dispatcher knows they mutate them.
#include <ATen/core/Tensor.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <cstdint>
#include <vector>

#include "course_torch.h"
#include "record.h"
#include "thread_index.h"

namespace {

void check_cuda_out(const char *name, const at::Tensor &t, at::ScalarType dtype) {
    course::check_dtype(name, t, {dtype});
    course::check_device(name, t, c10::DeviceType::CUDA);
    TORCH_CHECK_VALUE(t.is_contiguous(), name, " must be contiguous; call .contiguous() on it first");
}

void check_dims(const char *name, c10::IntArrayRef dims, uint32_t out[3]) {
    TORCH_CHECK_VALUE(dims.size() == 3, name, " must have 3 entries (x, y, z), got ", dims.size());
    for (int k = 0; k < 3; ++k) {
        TORCH_CHECK_VALUE(dims[k] >= 1 && dims[k] <= UINT32_MAX, name, "[", k, "] must be in [1, 2^32), got ", dims[k]);
        out[k] = static_cast<uint32_t>(dims[k]);
    }
}

void record_threads_(at::Tensor &table, int64_t formula, c10::IntArrayRef grid, c10::IntArrayRef block,
                     int64_t first_block) {
    check_cuda_out("table", table, at::kLong);
    TORCH_CHECK_VALUE(formula >= 0 && formula < TI_FORMULA_COUNT, "formula must be in [0, ", TI_FORMULA_COUNT,
                      "), got ", formula);
    uint32_t g[3], b[3];
    check_dims("grid", grid, g);
    check_dims("block", block, b);
    const int64_t threads_per_block = int64_t{b[0]} * b[1] * b[2];
    const int64_t total_blocks = int64_t{g[0]} * g[1] * g[2];
    TORCH_CHECK_VALUE(table.dim() == 2 && table.size(1) == TI_COLUMNS && table.size(0) % threads_per_block == 0,
                      "table must have shape (n_blocks * threads per block, ", TI_COLUMNS, "), but has shape ",
                      course::shape_text(table.sizes()));
    const int64_t n_blocks = table.size(0) / threads_per_block;
    TORCH_CHECK_VALUE(first_block >= 0 && first_block + n_blocks <= total_blocks, "blocks ", first_block, " .. ",
                      first_block + n_blocks - 1, " are not all in the grid of ", total_blocks, " blocks");
    // The device's grid and block limits are left to the launch, whose checked error is part of the lesson.
    const c10::cuda::CUDAGuard guard(table.device());
    COURSE_CHECK_LAUNCH(ti_launch_record(static_cast<int>(formula), g, b, first_block, n_blocks,
                                         table.data_ptr<int64_t>(), c10::cuda::getCurrentCUDAStream()));
}

// A 1D launch of blocks x threads for a grid-stride loop over `t`. The sizes are checked against 1 before the
// tensor, so a wrong size is named even for a tensor on the wrong device, then against the device's own limits.
void check_launch_1d(const char *name, const at::Tensor &t, at::ScalarType dtype, int64_t blocks, int64_t threads) {
    TORCH_CHECK_VALUE(blocks >= 1, "blocks must be at least 1, got ", blocks);
    TORCH_CHECK_VALUE(threads >= 1, "threads must be at least 1, got ", threads);
    check_cuda_out(name, t, dtype);
    int64_t limits[TI_LIMIT_COUNT];
    COURSE_CHECK_LAUNCH(ti_device_limits(t.device().index(), limits));
    TORCH_CHECK_VALUE(blocks <= limits[TI_LIMIT_MAX_GRID_X], "blocks must be in [1, ", limits[TI_LIMIT_MAX_GRID_X],
                      "] on ", t.device().str(), ", got ", blocks);
    TORCH_CHECK_VALUE(threads <= limits[TI_LIMIT_MAX_THREADS_PER_BLOCK], "threads must be in [1, ",
                      limits[TI_LIMIT_MAX_THREADS_PER_BLOCK], "] on ", t.device().str(), ", got ", threads);
}

void grid_stride_count_(at::Tensor &counts, int64_t blocks, int64_t threads) {
    check_launch_1d("counts", counts, at::kByte, blocks, threads);
    const c10::cuda::CUDAGuard guard(counts.device());
    COURSE_CHECK_LAUNCH(ti_launch_grid_stride(static_cast<uint32_t>(blocks), static_cast<uint32_t>(threads),
                                              counts.numel(), counts.data_ptr<uint8_t>(), nullptr,
                                              c10::cuda::getCurrentCUDAStream()));
}

void grid_stride_owner_(at::Tensor &owner, int64_t blocks, int64_t threads) {
    check_launch_1d("owner", owner, at::kLong, blocks, threads);
    const c10::cuda::CUDAGuard guard(owner.device());
    COURSE_CHECK_LAUNCH(ti_launch_grid_stride(static_cast<uint32_t>(blocks), static_cast<uint32_t>(threads),
                                              owner.numel(), nullptr, owner.data_ptr<int64_t>(),
                                              c10::cuda::getCurrentCUDAStream()));
}

void divergence_(at::Tensor &out, int64_t branching, int64_t iters) {
    check_cuda_out("out", out, at::kFloat);
    TORCH_CHECK_VALUE(branching >= 0 && branching <= 2, "branching must be 0, 1 or 2, got ", branching);
    TORCH_CHECK_VALUE(iters >= 0 && iters <= INT32_MAX, "iters must be in [0, 2^31), got ", iters);
    const c10::cuda::CUDAGuard guard(out.device());
    COURSE_CHECK_LAUNCH(ti_launch_divergence(static_cast<int>(branching), static_cast<int>(iters),
                                             out.data_ptr<float>(), out.numel(), c10::cuda::getCurrentCUDAStream()));
}

// No tensor goes in or out, so this one is registered for every dispatch key at once (a catch-all kernel).
std::vector<int64_t> device_limits(int64_t device) {
    int64_t limits[TI_LIMIT_COUNT];
    COURSE_CHECK_LAUNCH(ti_device_limits(static_cast<int>(device), limits));
    return std::vector<int64_t>(limits, limits + TI_LIMIT_COUNT);
}

}  // namespace

TORCH_LIBRARY(thread_index, m) {
    m.def("record_threads_(Tensor(a!) table, int formula, int[] grid, int[] block, int first_block) -> ()");
    m.def("grid_stride_count_(Tensor(a!) counts, int blocks, int threads) -> ()");
    m.def("grid_stride_owner_(Tensor(a!) owner, int blocks, int threads) -> ()");
    // Not `int mode`: torch.compile's functionalization of mutating ops takes a keyword argument named `mode`
    // itself, and opcheck's test_aot_dispatch_dynamic fails with "got multiple values for argument 'mode'".
    m.def("divergence_(Tensor(a!) out, int branching, int iters) -> ()");
    m.def("device_limits(int device) -> int[]", &device_limits);
}

TORCH_LIBRARY_IMPL(thread_index, CUDA, m) {
    m.impl("record_threads_", &record_threads_);
    m.impl("grid_stride_count_", &grid_stride_count_);
    m.impl("grid_stride_owner_", &grid_stride_owner_);
    m.impl("divergence_", &divergence_);
}

// The kernels run on CUDA only. The same functions are registered for the CPU so that a CPU tensor gets their
// checks' message ("out must be on cuda, but it is on cpu", a ValueError) instead of the dispatcher's
// NotImplementedError; their device check refuses it before anything else happens.
TORCH_LIBRARY_IMPL(thread_index, CPU, m) {
    m.impl("record_threads_", &record_threads_);
    m.impl("grid_stride_count_", &grid_stride_count_);
    m.impl("grid_stride_owner_", &grid_stride_owner_);
    m.impl("divergence_", &divergence_);
}

COURSE_PYTHON_MODULE()
