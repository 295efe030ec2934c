/*
 * course_torch.h — the two things every binding file needs besides the op itself (C++, PyTorch API).
 *
 *   COURSE_PYTHON_MODULE()      defines the Python module `import package._C` loads. It holds no functions: the
 *                               ops live in the dispatcher (TORCH_LIBRARY) and are reached as torch.ops.<ns>.<op>.
 *                               TORCH_EXTENSION_NAME (_C or _C_exercise) is set by torch's BuildExtension.
 *   COURSE_CHECK_LAUNCH(call)   evaluates a launcher call once and turns a failed cudaError_t into a Python
 *                               RuntimeError naming the error.
 */
#pragma once

#include <Python.h>
#include <c10/util/Exception.h>

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
