/*
 * course_torch.h — the two things every binding file needs besides the op itself (C++, PyTorch API).
 *
 *   COURSE_PYTHON_MODULE()      defines the Python module `import package._C` loads. It holds no functions: the
 *                               ops live in the dispatcher (TORCH_LIBRARY) and are reached as torch.ops.<ns>.<op>.
 *                               TORCH_EXTENSION_NAME (_C or _C_exercise) is set by torch's BuildExtension.
 *   COURSE_CHECK(cond, ...)     TORCH_CHECK whose message is built without iostreams (see below).
 *   COURSE_CHECK_LAUNCH(call)   evaluates a launcher call once and turns a failed cudaError_t into a Python
 *                               RuntimeError naming the error.
 */
#pragma once

#include <Python.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>
#include <c10/util/ArrayRef.h>
#include <c10/util/Exception.h>

#include <string>
#include <type_traits>

#define COURSE_CAT_(a, b) a##b
#define COURSE_CAT(a, b) COURSE_CAT_(a, b)
#define COURSE_STRINGIFY_(x) #x
#define COURSE_STRINGIFY(x) COURSE_STRINGIFY_(x)

#define COURSE_PYTHON_MODULE()                                                                      \
    extern "C" PyObject *COURSE_CAT(PyInit_, TORCH_EXTENSION_NAME)(void) {                          \
        static PyModuleDef module = {PyModuleDef_HEAD_INIT, COURSE_STRINGIFY(TORCH_EXTENSION_NAME), \
                                     "Loads this chapter's ops into torch.ops.", -1, nullptr};      \
        return PyModule_Create(&module);                                                            \
    }

#define COURSE_CHECK_LAUNCH(call)                                                                                 \
    do {                                                                                                          \
        const cudaError_t course_launch_err_ = (call);                                                            \
        TORCH_CHECK(course_launch_err_ == cudaSuccess, "CUDA error ", cudaGetErrorName(course_launch_err_), ": ", \
                    cudaGetErrorString(course_launch_err_));                                                      \
    } while (0)

/*
 * Error messages without iostreams. TORCH_CHECK(cond, "n=", n) formats n with a std::ostringstream built inside
 * the extension. On the course's GPU machine (torch 2.11, extensions compiled by the image's /opt/gcc) that crashed
 * the process whenever a number was formatted, while messages made only of strings worked. std::to_string and
 * plain concatenation never touch the stream's locale, so COURSE_CHECK builds the message that way and hands
 * TORCH_CHECK a single string. Arguments: strings, numbers, ScalarType, Device, and sizes (IntArrayRef).
 */
namespace course {
inline std::string text(const std::string &s) {
    return s;
}
inline std::string text(const char *s) {
    return s;
}
inline std::string text(char c) {
    return std::string(1, c);
}
inline std::string text(bool b) {
    return b ? "true" : "false";
}
template <typename T, std::enable_if_t<std::is_arithmetic_v<T> || std::is_enum_v<T>, int> = 0>
std::string text(T value) {
    if constexpr (std::is_enum_v<T>) {
        return std::to_string(static_cast<long long>(value));
    } else {
        return std::to_string(value);
    }
}
inline std::string text(c10::ScalarType type) {
    return c10::toString(type);
}
inline std::string text(const c10::Device &device) {
    return device.str();
}
inline std::string text(c10::IntArrayRef sizes) {
    std::string out = "[";
    for (size_t i = 0; i < sizes.size(); ++i) out += (i ? ", " : "") + std::to_string(sizes[i]);
    return out + "]";
}
template <typename... Args>
std::string message(const Args &...args) {
    std::string out;
    ((out += text(args)), ...);
    return out;
}
}  // namespace course

#define COURSE_CHECK(cond, ...) TORCH_CHECK(cond, ::course::message(__VA_ARGS__))
