/*
 * launch_module.c — the Python module nvrtc_relu._c_launch: cuLaunchKernel called from C ("faster launching").
 *
 * The op launches through cuda.bindings (nvrtc_relu/launch.py), where every argument crosses into the binding as a
 * Python object: microseconds per call on top of the driver's own work (make bench measures them). This module
 * takes plain integers (the CUfunction handle, the stream handle, pointers and n), plans the grid with
 * plan_elementwise and launches with launch_elementwise (launch.c, the C demo's launch), so that a call costs the
 * driver's time and little else. nvrtc_relu/faster_launch.py uses it; the registered op does not. Plain C against
 * Python's C API: no PyTorch headers, nothing to wait for when building.
 *
 *     _c_launch.launch(function, stream, n, items_per_thread, block, *arguments)   arguments: 64-bit integers
 *
 * A driver error raises nvrtc_relu.driver.DriverError with the message check() would give; no driver raises
 * NoDriverError: the same errors as the launch from Python.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>

#include "cuda_driver_loader.h"
/* after the loader: course_check.h then names driver errors through its table */
#include "course_check.h"
#include "launch.h"

/* The chapter's kernels take at most four arguments (vector_add: c, a, b, n); a few more cost nothing. */
#define MAX_KERNEL_ARGS 8

/* How many parameters `function` declares, asked from the driver (cuFuncGetParamInfo answers for each index that
 * exists). cuLaunchKernel reads that many pointers from kernelParams whatever it is given, so a call with too few
 * arguments would make the driver read past them: refuse it instead. The last few answers are kept, since the op
 * launches the same two or three kernels again and again (the GIL makes this cache safe, and the op never unloads a
 * module, so a handle keeps its kernel). */
static int kernel_parameter_count(CUfunction function) {
    enum { REMEMBERED = 8 };
    static CUfunction functions[REMEMBERED];
    static int counts[REMEMBERED];
    static int next;
    for (int i = 0; i < REMEMBERED; i++) {
        if (functions[i] == function) return counts[i];
    }
    int count = 0;
    size_t offset, size;
    while (count <= MAX_KERNEL_ARGS &&
           driver.cuFuncGetParamInfo(function, (size_t)count, &offset, &size) == CUDA_SUCCESS) {
        count++;
    }
    functions[next] = function;
    counts[next] = count;
    next = (next + 1) % REMEMBERED;
    return count;
}

/* nvrtc_relu.driver's DriverError and NoDriverError, looked up when the module is imported. */
static PyObject *driver_error;
static PyObject *no_driver_error;

/* Python's None, with the reference a returned object owns (Py_RETURN_NONE, written out: static analysers do not
 * see a return inside that macro). */
static PyObject *none(void) {
    Py_INCREF(Py_None);
    return Py_None;
}

/* launch(function, stream, n, items_per_thread, block, *arguments) -> None; raises RuntimeError naming the
 * driver's error. Each argument is a 64-bit integer (a device pointer, or n as a long long): the kernel reads the
 * 8 bytes as the type it declares. n == 0 launches nothing. */
static PyObject *launch(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs < 5 || nargs > 5 + MAX_KERNEL_ARGS) {
        return PyErr_Format(PyExc_TypeError,
                            "launch(function, stream, n, items_per_thread, block, *arguments) takes 5 to %d "
                            "arguments, got %zd",
                            5 + MAX_KERNEL_ARGS, nargs);
    }
    CUfunction function = (CUfunction)PyLong_AsVoidPtr(args[0]);
    CUstream stream = (CUstream)PyLong_AsVoidPtr(args[1]);
    const long long n = PyLong_AsLongLong(args[2]);
    const long long items_per_thread = PyLong_AsLongLong(args[3]);
    const unsigned long block = PyLong_AsUnsignedLong(args[4]);
    uint64_t values[MAX_KERNEL_ARGS];
    void *params[MAX_KERNEL_ARGS];
    for (Py_ssize_t i = 5; i < nargs; i++) {
        values[i - 5] = (uint64_t)PyLong_AsUnsignedLongLongMask(args[i]); /* n < 0 keeps its bits */
        params[i - 5] = &values[i - 5];
    }
    if (PyErr_Occurred()) return NULL; /* a non-integer argument: Python's own TypeError */
    if (function == NULL) return PyErr_Format(PyExc_ValueError, "launch: function is a null CUfunction handle");
    if (n == 0) return none(); /* nothing to launch (and a 0-block grid is an error for the driver) */
    if (n < 0 || block == 0 || block > 1024) {
        return PyErr_Format(PyExc_ValueError, "launch: need n >= 0 and 1 <= block <= 1024, got n=%lld, block=%lu", n,
                            block);
    }
    if (driver.library == NULL) {
        char why[512];
        if (course_driver_load(why, sizeof why) != 0) return PyErr_Format(no_driver_error, "%s", why);
    }
    const int declared = kernel_parameter_count(function);
    if (declared != nargs - 5) {
        return PyErr_Format(PyExc_ValueError, "launch: the kernel declares %d parameters, but %zd arguments were given",
                            declared, nargs - 5);
    }
    const launch_shape shape = plan_elementwise(n, items_per_thread, (unsigned int)block);
    const CUresult result = launch_elementwise(function, stream, shape, params);
    if (result != CUDA_SUCCESS) {
        return PyErr_Format(driver_error, "cuLaunchKernel(grid=%u, block=%lu) failed: %s", shape.grid_x, block,
                            course_cu_error_name(result));
    }
    return none();
}

static PyMethodDef methods[] = {
    {"launch", (PyCFunction)(void (*)(void))launch, METH_FASTCALL,
     "launch(function, stream, n, items_per_thread, block, *arguments): cuLaunchKernel from C"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_c_launch", "cuLaunchKernel from C (launch.c)", -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__c_launch(void) {
    PyObject *errors = PyImport_ImportModule("nvrtc_relu.driver");
    if (errors == NULL) return NULL;
    driver_error = PyObject_GetAttrString(errors, "DriverError");
    no_driver_error = PyObject_GetAttrString(errors, "NoDriverError");
    Py_DECREF(errors);
    if (driver_error == NULL || no_driver_error == NULL) return NULL;
    /* Load the driver now where there is one. Where there is none the module still imports, and launch() tries again
     * and raises the loader's reason. */
    char why[512];
    (void)course_driver_load(why, sizeof why);
    return PyModule_Create(&module);
}
