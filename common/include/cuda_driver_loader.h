/*
 * cuda_driver_loader.h — reach the CUDA driver API by loading libcuda.so.1 at run time.
 *
 * libcuda ships with the NVIDIA driver, not with the toolkit, so a machine without a driver (a laptop, CI) has no
 * libcuda to link against. Loading it with dlopen lets one binary build everywhere and say "no NVIDIA driver"
 * clearly instead of failing to start. Calls go through the table `driver`:
 *
 *     char why[256];
 *     if (course_driver_load(why, sizeof why) != 0) { puts(why); return 0; }
 *     CU_CHECK(driver.cuInit(0));
 *
 * cuda.h maps many names to versioned symbols (cuMemAlloc -> cuMemAlloc_v2, cuCtxCreate -> cuCtxCreate_v4); the
 * table's fields and the symbols looked up go through the same macros, so each call reaches the version whose
 * signature this cuda.h declares.
 */
#ifndef COURSE_CUDA_DRIVER_LOADER_H
#define COURSE_CUDA_DRIVER_LOADER_H

#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COURSE_DRIVER_FUNCTIONS(X) \
    X(cuInit)                      \
    X(cuDriverGetVersion)          \
    X(cuGetErrorName)              \
    X(cuGetErrorString)            \
    X(cuDeviceGetCount)            \
    X(cuDeviceGet)                 \
    X(cuDeviceGetName)             \
    X(cuDeviceGetAttribute)        \
    X(cuDeviceTotalMem)            \
    X(cuDevicePrimaryCtxRetain)    \
    X(cuDevicePrimaryCtxRelease)   \
    X(cuCtxCreate)                 \
    X(cuCtxDestroy)                \
    X(cuCtxSetCurrent)             \
    X(cuCtxGetCurrent)             \
    X(cuCtxPushCurrent)            \
    X(cuCtxPopCurrent)             \
    X(cuCtxSynchronize)            \
    X(cuModuleLoadData)            \
    X(cuModuleUnload)              \
    X(cuModuleGetFunction)         \
    X(cuFuncGetAttribute)          \
    X(cuFuncGetParamInfo)          \
    X(cuMemAlloc)                  \
    X(cuMemFree)                   \
    X(cuMemcpyHtoD)                \
    X(cuMemcpyDtoH)                \
    X(cuMemcpyHtoDAsync)           \
    X(cuMemcpyDtoHAsync)           \
    X(cuStreamCreate)              \
    X(cuStreamDestroy)             \
    X(cuStreamSynchronize)         \
    X(cuLaunchKernel)

#define COURSE_DRIVER_FIELD(fn) __typeof__(&fn) fn;
typedef struct {
    void *library;
    COURSE_DRIVER_FUNCTIONS(COURSE_DRIVER_FIELD)
} course_driver_table;
#undef COURSE_DRIVER_FIELD

static course_driver_table driver;

#define COURSE_DRIVER_XSTR_(x) #x
#define COURSE_DRIVER_XSTR(x) COURSE_DRIVER_XSTR_(x)

/* Returns 0 once every function is found; otherwise writes the reason into `why` and returns -1. */
/* COURSE_LIBCUDA names another file to load, so tests can show the no-driver path on a machine that has one. */
static inline int course_driver_load(char *why, size_t why_size) {
    if (driver.library != NULL) return 0;
    const char *path = getenv("COURSE_LIBCUDA");
    if (path == NULL || path[0] == '\0') path = "libcuda.so.1";
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        snprintf(why, why_size,
                 "no NVIDIA driver: %s could not be loaded (%s). The driver API needs an installed NVIDIA driver; "
                 "the toolkit alone does not provide libcuda.",
                 path, dlerror());
        return -1;
    }
#define COURSE_DRIVER_LOOKUP(fn)                                                                                 \
    *(void **)(&driver.fn) = dlsym(library, COURSE_DRIVER_XSTR(fn));                                             \
    if (driver.fn == NULL) {                                                                                     \
        snprintf(why, why_size, "the NVIDIA driver is too old: libcuda.so.1 has no %s", COURSE_DRIVER_XSTR(fn)); \
        dlclose(library);                                                                                        \
        memset(&driver, 0, sizeof driver);                                                                       \
        return -1;                                                                                               \
    }
    COURSE_DRIVER_FUNCTIONS(COURSE_DRIVER_LOOKUP)
#undef COURSE_DRIVER_LOOKUP
    driver.library = library;
    return 0;
}

/* The check macros in course_check.h name errors through the loaded table. */
#define COURSE_CU_GET_ERROR_NAME driver.cuGetErrorName
#define COURSE_CU_GET_ERROR_STRING driver.cuGetErrorString

#endif /* COURSE_CUDA_DRIVER_LOADER_H */
