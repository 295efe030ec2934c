/*
 * course_torch.h — what every binding file needs besides the op itself (C++, PyTorch API).
 *
 *   COURSE_PYTHON_MODULE()    the Python module `import package._C` loads. It holds no functions: the ops live in
 *                             the dispatcher (TORCH_LIBRARY) and are reached as torch.ops.<ns>.<op>.
 *                             TORCH_EXTENSION_NAME (_C or _C_exercise) is set by torch's BuildExtension.
 *   COURSE_CHECK_LAUNCH(call) evaluates a launcher call once; a failed cudaError_t becomes a RuntimeError naming it.
 *   course::check_*           input checks with the messages and Python exception types of common/course/checks.py:
 *                             a wrong dtype raises TypeError (TORCH_CHECK_TYPE), a wrong device, shape or size
 *                             ValueError (TORCH_CHECK_VALUE). An op calls them once, in its C++ implementation.
 *   course::dtype_of(t)       the course_dtype of a tensor (course_dtype.h), for launchers behind a C header.
 *   course::shape_text(s)     a shape as Python prints it: "(2, 3)", "(5,)", "()".
 */
#pragma once

#include <ATen/core/Tensor.h>
#include <Python.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>
#include <c10/util/ArrayRef.h>
#include <c10/util/Exception.h>

#include <initializer_list>
#include <string>

#include "course_broadcast.h"
#include "course_dtype.h"

#define COURSE_CAT_(a, b) a##b
#define COURSE_CAT(a, b) COURSE_CAT_(a, b)
#define COURSE_STRINGIFY_(x) #x
#define COURSE_STRINGIFY(x) COURSE_STRINGIFY_(x)

#define COURSE_PYTHON_MODULE()                                                   \
    extern "C" PyObject *COURSE_CAT(PyInit_, TORCH_EXTENSION_NAME)(void) {       \
        static PyModuleDef module = {PyModuleDef_HEAD_INIT,                      \
                                     COURSE_STRINGIFY(TORCH_EXTENSION_NAME),     \
                                     "Loads this chapter's ops into torch.ops.", \
                                     -1,                                         \
                                     nullptr,                                    \
                                     nullptr,                                    \
                                     nullptr,                                    \
                                     nullptr,                                    \
                                     nullptr};                                   \
        return PyModule_Create(&module);                                         \
    }

#define COURSE_CHECK_LAUNCH(call)                                                                                 \
    do {                                                                                                          \
        const cudaError_t course_launch_err_ = (call);                                                            \
        TORCH_CHECK(course_launch_err_ == cudaSuccess, "CUDA error ", cudaGetErrorName(course_launch_err_), ": ", \
                    cudaGetErrorString(course_launch_err_));                                                      \
    } while (0)

namespace course {

// "float32", as Python's str(torch.float32) without "torch.".
inline std::string dtype_name(c10::ScalarType type) {
    switch (type) {
        case c10::ScalarType::Float:
            return "float32";
        case c10::ScalarType::Double:
            return "float64";
        case c10::ScalarType::Half:
            return "float16";
        case c10::ScalarType::BFloat16:
            return "bfloat16";
        case c10::ScalarType::Int:
            return "int32";
        case c10::ScalarType::Long:
            return "int64";
        case c10::ScalarType::Bool:
            return "bool";
        default:
            return c10::toString(type);
    }
}

inline std::string shape_text(c10::IntArrayRef shape) {
    std::string out = "(";
    for (size_t k = 0; k < shape.size(); ++k) out += (k ? ", " : "") + std::to_string(shape[k]);
    return out + (shape.size() == 1 ? ",)" : ")");
}

inline void check_dtype(const char *name, const at::Tensor &t, std::initializer_list<c10::ScalarType> dtypes) {
    for (const c10::ScalarType d : dtypes)
        if (t.scalar_type() == d) return;
    std::string allowed;
    for (const c10::ScalarType d : dtypes) allowed += (allowed.empty() ? "" : ", ") + dtype_name(d);
    TORCH_CHECK_TYPE(false, name, " has dtype ", dtype_name(t.scalar_type()), ", but only ", allowed, " are supported");
}

// `device`: a device type ("cuda" in the message) — any GPU of that type is accepted.
inline void check_device(const char *name, const at::Tensor &t, c10::DeviceType device) {
    TORCH_CHECK_VALUE(t.device().type() == device, name, " must be on ", c10::DeviceTypeName(device, true),
                      ", but it is on ", t.device().str());
}

inline void check_ndim(const char *name, const at::Tensor &t, int64_t ndim) {
    TORCH_CHECK_VALUE(t.dim() == ndim, name, " must have ", ndim, " dimensions, but has shape ", shape_text(t.sizes()));
}

// The checks of course.checks.check_same, one attribute at a time.
inline void check_same_dtype(const char *a_name, const at::Tensor &a, const char *b_name, const at::Tensor &b) {
    TORCH_CHECK_TYPE(a.scalar_type() == b.scalar_type(), a_name, " and ", b_name, " must have the same dtype, but ",
                     a_name, " has ", dtype_name(a.scalar_type()), " and ", b_name, " has ",
                     dtype_name(b.scalar_type()));
}
inline void check_same_device(const char *a_name, const at::Tensor &a, const char *b_name, const at::Tensor &b) {
    TORCH_CHECK_VALUE(a.device() == b.device(), a_name, " and ", b_name, " must have the same device, but ", a_name,
                      " has ", a.device().str(), " and ", b_name, " has ", b.device().str());
}
inline void check_same_shape(const char *a_name, const at::Tensor &a, const char *b_name, const at::Tensor &b) {
    TORCH_CHECK_VALUE(a.sizes() == b.sizes(), a_name, " and ", b_name, " must have the same shape, but ", a_name,
                      " has ", shape_text(a.sizes()), " and ", b_name, " has ", shape_text(b.sizes()));
}

inline void check_broadcastable_to(const char *name, c10::IntArrayRef shape, const char *target_name,
                                   c10::IntArrayRef target) {
    TORCH_CHECK_VALUE(course_broadcasts_to(shape.data(), (int64_t)shape.size(), target.data(), (int64_t)target.size()),
                      name, " of shape ", shape_text(shape), " cannot be broadcast to ", target_name, "'s shape ",
                      shape_text(target));
}

// b's repeat length for x (course_broadcast.h): b_n > 0, or 0 when b must be expanded to x's shape first.
inline int64_t repeat_length(c10::IntArrayRef b_shape, c10::IntArrayRef x_shape) {
    return course_repeat_length(b_shape.data(), (int64_t)b_shape.size(), x_shape.data(), (int64_t)x_shape.size());
}

inline course_dtype dtype_of(const at::Tensor &t) {
    switch (t.scalar_type()) {
        case c10::ScalarType::Float:
            return COURSE_FLOAT32;
        case c10::ScalarType::Double:
            return COURSE_FLOAT64;
        case c10::ScalarType::Half:
            return COURSE_FLOAT16;
        case c10::ScalarType::BFloat16:
            return COURSE_BFLOAT16;
        default:
            TORCH_CHECK_TYPE(false, "dtype ", dtype_name(t.scalar_type()),
                             " has no course kernel (float32, float64, float16, bfloat16)");
    }
}

}  // namespace course
