/*
 * rowwise_launch.cu — the C launchers of rowwise.h: they pick the op's planner and launcher (softmax_kernels.cu,
 * norm_kernels.cu), check the version against the shape, and hand every CUDA error back to the caller.
 */
#include <cuda_runtime.h>

#include "course_check.h" /* CUDA_RETURN_IF_ERROR: every launch and API call is checked */
#include "rowwise_kernels.cuh"

namespace rowwise {
cudaError_t softmax_dispatch(int backward, int version, course_dtype dtype, const rowwise_args *a,
                             const rowwise_tuning *tuning, void *workspace, size_t workspace_bytes, cudaStream_t stream,
                             bool plan_only, Plan *out);
cudaError_t norm_dispatch(bool rms, int backward, int version, course_dtype dtype, const rowwise_args *a,
                          const rowwise_tuning *tuning, void *workspace, size_t workspace_bytes, cudaStream_t stream,
                          bool plan_only, Plan *out);

namespace {

cudaError_t dispatch(rowwise_op op, int backward, int version, course_dtype dtype, const rowwise_args *a,
                     const rowwise_tuning *tuning, void *workspace, size_t workspace_bytes, cudaStream_t stream,
                     bool plan_only, Plan *out) {
    if (a == nullptr || a->rows < 0 || a->n < 0 || version < 0 || version > ROWWISE_VERSION_LAST)
        return cudaErrorInvalidValue;
    if (rowwise_unsupported(op, backward, version, dtype, a->n) != nullptr) return cudaErrorInvalidValue;
    switch (op) {
        case ROWWISE_SOFTMAX:
            return softmax_dispatch(backward, version, dtype, a, tuning, workspace, workspace_bytes, stream, plan_only,
                                    out);
        case ROWWISE_LAYER_NORM:
        case ROWWISE_RMS_NORM:
            return norm_dispatch(op == ROWWISE_RMS_NORM, backward, version, dtype, a, tuning, workspace,
                                 workspace_bytes, stream, plan_only, out);
    }
    return cudaErrorInvalidValue;
}

template <typename T>
const char *unsupported_shape(rowwise_op op, int backward, int version, int64_t n) {
    Plan p;
    if (shape_plan<T>(backward, version, n, nullptr, device_has_clusters(), &p, 0,
                      whole_threads(op == ROWWISE_RMS_NORM)))
        return nullptr;
    if (version == ROWWISE_REGISTERS)
        return "version 3 holds a row in the registers of one block; this row is too long for it (use 0, 4 or 5)";
    if (version == ROWWISE_CLUSTER && !device_has_clusters())
        return "version 4 needs thread-block clusters: a GPU of compute capability 9.0 or later (use 0 or 5)";
    if (version == ROWWISE_CLUSTER)
        return "version 4: this row needs more blocks than a cluster may have (16); use 0 or 5";
    return "this row is too long for any version of the kernels";
}

}  // namespace
}  // namespace rowwise

using namespace rowwise;

extern "C" const char *rowwise_unsupported(rowwise_op op, int backward, int version, course_dtype dtype, int64_t n) {
    if (version < 0 || version > ROWWISE_VERSION_LAST) return "version must be one of 0, 1, 2, 3, 4, 5, 6";
    if ((version == ROWWISE_NAIVE || version == ROWWISE_WARP_ONLINE) && (op != ROWWISE_SOFTMAX || backward))
        return "versions 1 and 2 are softmax forward kernels only";
    if (version == ROWWISE_REREAD && backward)
        return "version 6 is a forward kernel only (the backward takes version 0)";
    if (version == ROWWISE_REREAD && n * (int64_t)course_dtype_size(dtype) % 16 != 0)
        return "version 6 reads rows of whole 16-byte packs: n times the element size must be a multiple of 16 (use 0)";
    if (version == ROWWISE_WARP_ONLINE && dtype == COURSE_FLOAT64)
        return "version 2 computes in float32 (online_softmax.h): it takes float32, float16 and bfloat16";
    if (version == ROWWISE_NAIVE || version == ROWWISE_WARP_ONLINE) return nullptr;
    switch (dtype) {
        case COURSE_FLOAT32:
            return unsupported_shape<float>(op, backward, version, n);
        case COURSE_FLOAT64:
            return unsupported_shape<double>(op, backward, version, n);
        case COURSE_FLOAT16:
            return unsupported_shape<__half>(op, backward, version, n);
        case COURSE_BFLOAT16:
            return unsupported_shape<__nv_bfloat16>(op, backward, version, n);
    }
    return "unknown dtype";
}

extern "C" const char *rowwise_unaligned(int version, course_dtype dtype, const rowwise_args *args) {
    if (version != ROWWISE_REREAD || args == nullptr || args_packed(args, course_dtype_size(dtype))) return nullptr;
    return "version 6 loads 16-byte packs: x, weight and bias must start at a multiple of 16 bytes (a view at an "
           "offset may not); use version 0";
}

extern "C" cudaError_t rowwise_workspace_bytes(rowwise_op op, int backward, int version, course_dtype dtype,
                                               const rowwise_args *args, const rowwise_tuning *tuning, size_t *bytes) {
    Plan p;
    *bytes = 0;
    CUDA_RETURN_IF_ERROR(dispatch(op, backward, version, dtype, args, tuning, nullptr, 0, nullptr, true, &p));
    *bytes = workspace_of(p);
    return cudaSuccess;
}

extern "C" cudaError_t rowwise_forward_cuda(rowwise_op op, int version, course_dtype dtype, const rowwise_args *args,
                                            const rowwise_tuning *tuning, void *workspace, size_t workspace_bytes,
                                            cudaStream_t stream) {
    Plan p;
    return dispatch(op, 0, version, dtype, args, tuning, workspace, workspace_bytes, stream, false, &p);
}

extern "C" cudaError_t rowwise_backward_cuda(rowwise_op op, int version, course_dtype dtype, const rowwise_args *args,
                                             const rowwise_tuning *tuning, void *workspace, size_t workspace_bytes,
                                             cudaStream_t stream) {
    Plan p;
    return dispatch(op, 1, version, dtype, args, tuning, workspace, workspace_bytes, stream, false, &p);
}

extern "C" cudaError_t rowwise_describe(rowwise_op op, int backward, int version, course_dtype dtype,
                                        const rowwise_args *args, const rowwise_tuning *tuning, char *text,
                                        size_t text_bytes) {
    Plan p;
    CUDA_RETURN_IF_ERROR(dispatch(op, backward, version, dtype, args, tuning, nullptr, 0, nullptr, true, &p));
    if (version == ROWWISE_NAIVE) {
        snprintf(text, text_bytes, "naive: a %d-thread block per row, three passes, %lld blocks", p.block,
                 (long long)p.grid);
    } else if (version == ROWWISE_WARP_ONLINE) {
        snprintf(text, text_bytes, "warp online: a warp per row, %d-thread blocks, %lld blocks", p.block,
                 (long long)p.grid);
    } else {
        describe(p, text, text_bytes);
    }
    return cudaSuccess;
}
