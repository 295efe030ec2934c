/*
 * course_check.h — one way to check every CUDA call in the course.
 *
 * Include the API header(s) you use first (cuda_runtime.h, cuda.h, nvrtc.h); the matching macros appear:
 *
 *   CUDA_CHECK(call)               runtime API  (cudaMalloc, cudaMemcpy, launches via CUDA_CHECK(cudaGetLastError()))
 *   CU_CHECK(call)                 driver API   (cuInit, cuModuleLoadData, cuLaunchKernel, ...)
 *   NVRTC_CHECK(call)              NVRTC        (nvrtcCreateProgram, ...)
 *   NVRTC_CHECK_PROGRAM(prog, call)  NVRTC, and on failure also prints the program's compile log
 *
 * On failure each prints file:line, the call's text, the error's name and its message, then exits with status 1:
 * what a C program should do. Code that runs inside Python must not exit the interpreter, so launchers behind a
 * PyTorch binding return the error instead (CUDA_RETURN_IF_ERROR) and the binding raises a Python exception.
 * The *_TRY forms print the same report but return the error, for demos that show a failure and carry on.
 */
#ifndef COURSE_CHECK_H
#define COURSE_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define COURSE_STR_(x) #x
#define COURSE_STR(x) COURSE_STR_(x)

/* ---- CUDA runtime API ----------------------------------------------------------------------------------------- */
#if defined(CUDART_VERSION)
static inline cudaError_t course_cuda_report(cudaError_t err, const char *call, const char *file, int line) {
    if (err != cudaSuccess) {
        fprintf(stderr, "%s:%d: CUDA runtime error %s: %s\n    in: %s\n", file, line, cudaGetErrorName(err),
                cudaGetErrorString(err), call);
    }
    return err;
}
#define CUDA_TRY(call) course_cuda_report((call), #call, __FILE__, __LINE__)
#define CUDA_CHECK(call)                                       \
    do {                                                       \
        if (CUDA_TRY(call) != cudaSuccess) exit(EXIT_FAILURE); \
    } while (0)
/* For launchers called from a PyTorch binding: hand the error back instead of exiting. */
#define CUDA_RETURN_IF_ERROR(call)                          \
    do {                                                    \
        cudaError_t course_err_ = (call);                   \
        if (course_err_ != cudaSuccess) return course_err_; \
    } while (0)
#endif

/* ---- CUDA driver API ------------------------------------------------------------------------------------------ */
/* A program that loads libcuda at run time (cuda_driver_loader.h) reaches cuGetErrorName through its table. */
#if defined(CUDA_VERSION) && defined(__cuda_cuda_h__)
#ifndef COURSE_CU_GET_ERROR_NAME
#define COURSE_CU_GET_ERROR_NAME cuGetErrorName
#define COURSE_CU_GET_ERROR_STRING cuGetErrorString
#endif
/* The driver's name for res ("CUDA_ERROR_INVALID_VALUE"), for a message that goes elsewhere than stderr (a Python
 * exception, say). */
static inline const char *course_cu_error_name(CUresult res) {
    const char *name = NULL;
    if (COURSE_CU_GET_ERROR_NAME(res, &name) != CUDA_SUCCESS || name == NULL) name = "unknown CUresult";
    return name;
}
static inline CUresult course_cu_report(CUresult res, const char *call, const char *file, int line) {
    if (res != CUDA_SUCCESS) {
        const char *message = NULL;
        if (COURSE_CU_GET_ERROR_STRING(res, &message) != CUDA_SUCCESS) message = "no description";
        fprintf(stderr, "%s:%d: CUDA driver error %s (%d): %s\n    in: %s\n", file, line, course_cu_error_name(res),
                (int)res, message, call);
    }
    return res;
}
#define CU_TRY(call) course_cu_report((call), #call, __FILE__, __LINE__)
#define CU_CHECK(call)                                        \
    do {                                                      \
        if (CU_TRY(call) != CUDA_SUCCESS) exit(EXIT_FAILURE); \
    } while (0)
#endif

/* ---- NVRTC ---------------------------------------------------------------------------------------------------- */
#if defined(__NVRTC_H__)
static inline nvrtcResult course_nvrtc_report(nvrtcResult res, nvrtcProgram prog, const char *call, const char *file,
                                              int line) {
    if (res != NVRTC_SUCCESS) {
        fprintf(stderr, "%s:%d: NVRTC error %s\n    in: %s\n", file, line, nvrtcGetErrorString(res), call);
        size_t log_size = 0;
        if (prog != NULL && nvrtcGetProgramLogSize(prog, &log_size) == NVRTC_SUCCESS && log_size > 1) {
            char *log = (char *)malloc(log_size);
            if (log != NULL && nvrtcGetProgramLog(prog, log) == NVRTC_SUCCESS) {
                fprintf(stderr, "---- NVRTC program log ----\n%s\n---------------------------\n", log);
            }
            free(log);
        }
    }
    return res;
}
#define NVRTC_TRY_PROGRAM(prog, call) course_nvrtc_report((call), (prog), #call, __FILE__, __LINE__)
#define NVRTC_CHECK_PROGRAM(prog, call)                                         \
    do {                                                                        \
        if (NVRTC_TRY_PROGRAM(prog, call) != NVRTC_SUCCESS) exit(EXIT_FAILURE); \
    } while (0)
#define NVRTC_CHECK(call) NVRTC_CHECK_PROGRAM(NULL, call)
#endif

#endif /* COURSE_CHECK_H */
