/*
 * nvrtc_demo.c — compile CUDA C at run time with NVRTC, then load and launch it with the CUDA Driver API.
 *
 *   build/nvrtc_demo [run]            compile src/kernels.cu, then (with a GPU) run vector add and ReLU
 *                                     forward/backward on an odd-sized array and check them against the CPU
 *   build/nvrtc_demo ptx              only compile: PTX for compute_90 and a CUBIN for sm_90 (no GPU needed)
 *   build/nvrtc_demo syntax-error     compile a kernel with a syntax error: NVRTC's log names file and line
 *   build/nvrtc_demo not-initialized  call the driver before cuInit: CUDA_ERROR_NOT_INITIALIZED
 *   build/nvrtc_demo too-many-threads launch with 2048 threads per block: a checked launch error
 *   build/nvrtc_demo plan N [BLOCK]   print the launch plan and argument array for n elements (no GPU needed)
 *   options: --source FILE (default: the chapter's kernels.cu), --out DIR (where .ptx/.cubin go; default build)
 *
 * NVRTC is a library: it needs no GPU and no driver, so compiling works everywhere. The driver (libcuda.so.1)
 * comes with the NVIDIA driver, not with the toolkit; it is loaded at run time (cuda_driver_loader.h), so this
 * program builds and compiles kernels on a machine without one and says clearly what it skipped.
 * The error demos exit 0 when the expected error happened and 1 when it did not.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <nvrtc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_driver_loader.h"
/* course_check.h after the loader: CU_CHECK then names errors through the loaded driver table. */
#include "course_check.h"
#include "launch.h"

#ifndef KERNELS_PATH
#define KERNELS_PATH "src/kernels.cu"
#endif

enum { BLOCK = 256, RELU_ITEMS_PER_THREAD = 4 };

typedef struct {
    char *data;
    size_t size;
} blob;

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "cannot open %s (run from the chapter folder, or pass --source FILE)\n", path);
        exit(EXIT_FAILURE);
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)size + 1);
    if (text == NULL || fread(text, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(EXIT_FAILURE);
    }
    text[size] = '\0';
    fclose(f);
    return text;
}

static void write_file(const char *dir, const char *name, const blob *b) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(b->data, 1, b->size, f) != b->size) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(EXIT_FAILURE);
    }
    fclose(f);
    printf("  wrote %s (%zu bytes)\n", path, b->size);
}

/* Compile `source` for `arch` ("compute_90": PTX only; "sm_90": PTX and a CUBIN). Prints NVRTC's log when it has
 * one. Returns the result of nvrtcCompileProgram; on success fills ptx (and cubin for an sm_ target). */
static nvrtcResult compile(const char *source, const char *name, const char *arch, blob *ptx, blob *cubin) {
    nvrtcProgram prog = NULL;
    NVRTC_CHECK(nvrtcCreateProgram(&prog, source, name, 0, NULL, NULL));
    char arch_option[64];
    snprintf(arch_option, sizeof arch_option, "--gpu-architecture=%s", arch);
    const char *options[] = {arch_option, "--std=c++17", "-lineinfo"};
    /* The _TRY form prints the error and the program's log but returns, so callers decide what a failure means. */
    nvrtcResult result = NVRTC_TRY_PROGRAM(prog, nvrtcCompileProgram(prog, 3, options));
    if (result == NVRTC_SUCCESS) {
        size_t log_size = 0;
        NVRTC_CHECK_PROGRAM(prog, nvrtcGetProgramLogSize(prog, &log_size));
        if (log_size > 1) { /* warnings: a successful compile can still have a log */
            char *log = malloc(log_size);
            NVRTC_CHECK_PROGRAM(prog, nvrtcGetProgramLog(prog, log));
            printf("NVRTC log for %s:\n%s\n", name, log);
            free(log);
        }
        NVRTC_CHECK_PROGRAM(prog, nvrtcGetPTXSize(prog, &ptx->size));
        ptx->data = malloc(ptx->size);
        NVRTC_CHECK_PROGRAM(prog, nvrtcGetPTX(prog, ptx->data));
        if (cubin != NULL && strncmp(arch, "sm_", 3) == 0) {
            NVRTC_CHECK_PROGRAM(prog, nvrtcGetCUBINSize(prog, &cubin->size));
            cubin->data = malloc(cubin->size);
            NVRTC_CHECK_PROGRAM(prog, nvrtcGetCUBIN(prog, cubin->data));
        }
    }
    NVRTC_CHECK(nvrtcDestroyProgram(&prog));
    return result;
}

static void show_ptx_head(const blob *ptx, int lines) {
    printf("---- first lines of the PTX ----\n");
    const char *p = ptx->data;
    for (int line = 0; line < lines && *p != '\0'; ++line) {
        const char *end = strchr(p, '\n');
        int len = end ? (int)(end - p) : (int)strlen(p);
        printf("%.*s\n", len, p);
        p += len + (end ? 1 : 0);
    }
    printf("--------------------------------\n");
}

/* Compile for a virtual architecture (PTX) and a real one (CUBIN) and save both. */
static void compile_both(const char *source, const char *out_dir, int major, int minor, blob *ptx, blob *cubin) {
    char virtual_arch[32], real_arch[32];
    snprintf(virtual_arch, sizeof virtual_arch, "compute_%d%d", major, minor);
    snprintf(real_arch, sizeof real_arch, "sm_%d%d", major, minor);
    int nvrtc_major = 0, nvrtc_minor = 0;
    NVRTC_CHECK(nvrtcVersion(&nvrtc_major, &nvrtc_minor));
    printf("NVRTC %d.%d: compiling kernels.cu for %s (PTX) and %s (PTX + CUBIN)\n", nvrtc_major, nvrtc_minor,
           virtual_arch, real_arch);
    double t0 = now_ms();
    if (compile(source, "kernels.cu", virtual_arch, ptx, NULL) != NVRTC_SUCCESS) exit(EXIT_FAILURE);
    double t1 = now_ms();
    blob real_ptx = {NULL, 0};
    if (compile(source, "kernels.cu", real_arch, &real_ptx, cubin) != NVRTC_SUCCESS) exit(EXIT_FAILURE);
    double t2 = now_ms();
    free(real_ptx.data);
    printf("  PTX   (%s): %zu bytes in %.1f ms — virtual ISA text; the driver JIT-compiles it for the GPU it runs on\n",
           virtual_arch, ptx->size, t1 - t0);
    printf("  CUBIN (%s): %zu bytes in %.1f ms — machine code (ELF) for exactly this architecture, loads as is\n",
           real_arch, cubin->size, t2 - t1);
    char name[64];
    snprintf(name, sizeof name, "kernels.%s.ptx", virtual_arch);
    write_file(out_dir, name, ptx);
    snprintf(name, sizeof name, "kernels.%s.cubin", real_arch);
    write_file(out_dir, name, cubin);
}

/* What NVRTC alone can do, with or without a GPU: compile the kernels for the course's H100 (sm_90) and show the
 * start of the PTX. */
static void compile_for_h100(const char *source_path, const char *out_dir) {
    char *source = read_file(source_path);
    blob ptx = {NULL, 0}, cubin = {NULL, 0};
    compile_both(source, out_dir, 9, 0, &ptx, &cubin);
    show_ptx_head(&ptx, 14);
    free(ptx.data);
    free(cubin.data);
    free(source);
}

/* ---- the error lessons ------------------------------------------------------------------------------------- */

static const char broken_kernel[] =
    "extern \"C\" __global__ void broken(float *y, long long n) {\n"
    "    long long i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = 2.0f * y[i]   // <- missing semicolon\n"
    "}\n";

static int demo_syntax_error(void) {
    printf("Compiling a kernel with a syntax error (line 3 lacks its ';'):\n%s\n", broken_kernel);
    blob ptx = {NULL, 0};
    nvrtcResult result = compile(broken_kernel, "broken_kernel.cu", "compute_90", &ptx, NULL);
    if (result == NVRTC_ERROR_COMPILATION) {
        printf(
            "As expected: nvrtcCompileProgram returned NVRTC_ERROR_COMPILATION and the log above names the file "
            "and line (broken_kernel.cu(4): the error is seen at the next token).\n");
        return 0;
    }
    free(ptx.data);
    printf("UNEXPECTED: the broken kernel compiled (result %d)\n", (int)result);
    return 1;
}

static int demo_not_initialized(void) {
    CUdevice device;
    printf("Calling cuDeviceGet before cuInit:\n");
    CUresult res = CU_TRY(driver.cuDeviceGet(&device, 0));
    if (res != CUDA_ERROR_NOT_INITIALIZED) {
        printf("UNEXPECTED: cuDeviceGet returned %d, not CUDA_ERROR_NOT_INITIALIZED\n", (int)res);
        return 1;
    }
    printf("As expected: CUDA_ERROR_NOT_INITIALIZED. The Driver API must be started with cuInit(0) first.\n");
    CU_CHECK(driver.cuInit(0));
    CU_CHECK(driver.cuDeviceGet(&device, 0));
    printf("After cuInit(0), cuDeviceGet succeeds.\n");
    return 0;
}

/* ---- the Driver API walk-through ------------------------------------------------------------------------------ */

static float relu_ref(float v) {
    return v <= 0.0f ? 0.0f : v;
}

static int64_t count_mismatches(const float *got, const float *want, int64_t n, const char *what) {
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) {
        if (got[i] != want[i]) { /* these ops are exact in float32 */
            if (bad < 3) printf("  %s mismatch at %lld: got %g, want %g\n", what, (long long)i, got[i], want[i]);
            ++bad;
        }
    }
    printf("  %-13s %s (%lld of %lld elements differ)\n", what, bad ? "WRONG" : "ok", (long long)bad, (long long)n);
    return bad;
}

static int run_driver_demo(const char *source, const char *out_dir, const char *only) {
    int driver_version = 0;
    CU_CHECK(driver.cuInit(0)); /* 1. always first: every other call returns CUDA_ERROR_NOT_INITIALIZED before it */
    CU_CHECK(driver.cuDriverGetVersion(&driver_version));
    int count = 0;
    CU_CHECK(driver.cuDeviceGetCount(&count));
    if (count == 0) {
        printf("The NVIDIA driver (CUDA %d.%d) sees no GPU: skipping the launches.\n", driver_version / 1000,
               driver_version % 1000 / 10);
        return 0;
    }
    CUdevice device; /* 2. a device is an ordinal; its properties come from cuDeviceGetAttribute */
    CU_CHECK(driver.cuDeviceGet(&device, 0));
    char name[256];
    int major = 0, minor = 0;
    CU_CHECK(driver.cuDeviceGetName(name, sizeof name, device));
    CU_CHECK(driver.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device));
    CU_CHECK(driver.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device));
    printf("Driver API: CUDA %d.%d driver, device 0 = %s, compute capability %d.%d\n", driver_version / 1000,
           driver_version % 1000 / 10, name, major, minor);

    blob ptx = {NULL, 0}, cubin = {NULL, 0}; /* 3. compile for this device's architecture */
    compile_both(source, out_dir, major, minor, &ptx, &cubin);

    /* 4. a context owns modules, memory and streams. The PRIMARY context is the one per device that the runtime
     * API (and so PyTorch, cuBLAS, ...) uses: retaining it shares their allocations and modules. A CREATED context
     * is private, pushed on this thread's context stack, and must be destroyed. */
    CUcontext own = NULL, current = NULL;
    CUctxCreateParams params;
    memset(&params, 0, sizeof params);                      /* no affinity, no CIG: a plain context */
    CU_CHECK(driver.cuCtxCreate(&own, &params, 0, device)); /* creates it AND pushes it: it is now current */
    CU_CHECK(driver.cuCtxGetCurrent(&current));
    printf("Created context %p (current: %p) — private to this program; popped and destroyed again\n", (void *)own,
           (void *)current);
    CU_CHECK(driver.cuCtxPopCurrent(&current));
    CU_CHECK(driver.cuCtxDestroy(own));

    CUcontext primary = NULL;
    CU_CHECK(driver.cuDevicePrimaryCtxRetain(&primary, device)); /* reference-counted, shared with the runtime */
    CU_CHECK(driver.cuCtxSetCurrent(primary));                   /* bind it to this thread */
    printf("Primary context %p retained and current — the one PyTorch's runtime calls use too\n", (void *)primary);

    /* 5. modules: a CUBIN loads as is; PTX is compiled by the driver's JIT first (cached in ~/.nv/ComputeCache). */
    CUmodule module = NULL, ptx_module = NULL;
    double t0 = now_ms();
    CU_CHECK(driver.cuModuleLoadData(&module, cubin.data));
    double t1 = now_ms();
    CU_CHECK(driver.cuModuleLoadData(&ptx_module, ptx.data));
    double t2 = now_ms();
    printf("cuModuleLoadData: CUBIN %.2f ms, PTX %.2f ms (the PTX one includes the driver's JIT)\n", t1 - t0, t2 - t1);
    CUfunction vector_add, relu_forward, relu_backward;
    CU_CHECK(driver.cuModuleGetFunction(&vector_add, module, "vector_add"));
    CU_CHECK(driver.cuModuleGetFunction(&relu_forward, module, "relu_forward"));
    CU_CHECK(driver.cuModuleGetFunction(&relu_backward, module, "relu_backward"));

    if (only != NULL && strcmp(only, "too-many-threads") == 0) {
        int max_threads = 0;
        CU_CHECK(driver.cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, relu_forward));
        printf("relu_forward allows at most %d threads per block; launching with 2048:\n", max_threads);
        CUdeviceptr y = 0, x = 0;
        int64_t n = 4096;
        void *args[3];
        relu_forward_args(args, &y, &x, &n);
        launch_shape shape = {2u, 2048u};
        CUresult res = CU_TRY(launch_elementwise(relu_forward, NULL, shape, args));
        CU_CHECK(driver.cuModuleUnload(ptx_module));
        CU_CHECK(driver.cuModuleUnload(module));
        CU_CHECK(driver.cuDevicePrimaryCtxRelease(device));
        free(ptx.data);
        free(cubin.data);
        if (res != CUDA_SUCCESS) {
            printf(
                "As expected: the launch was refused (see the error above) and nothing ran. Unchecked, this "
                "leaves the output unwritten and the program goes on with garbage.\n");
            return 0;
        }
        printf("UNEXPECTED: a launch with 2048 threads per block succeeded\n");
        return 1;
    }

    /* 6. a stream, memory, copies */
    CUstream stream;
    CU_CHECK(driver.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    int64_t n = 1000003; /* odd: not a multiple of 4 nor of the block size */
    size_t bytes = (size_t)n * sizeof(float);
    float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes), *want = malloc(bytes);
    if (a == NULL || b == NULL || c == NULL || want == NULL) {
        fprintf(stderr, "out of host memory\n");
        return 1;
    }
    for (int64_t i = 0; i < n; ++i) {
        a[i] = (float)((i * 7919) % 2001 - 1000) / 100.0f; /* negative, zero and positive values */
        b[i] = (float)(i % 13) - 6.0f;
    }
    CUdeviceptr d_a, d_b, d_c;
    CU_CHECK(driver.cuMemAlloc(&d_a, bytes));
    CU_CHECK(driver.cuMemAlloc(&d_b, bytes));
    CU_CHECK(driver.cuMemAlloc(&d_c, bytes));
    CU_CHECK(driver.cuMemcpyHtoDAsync(d_a, a, bytes, stream));
    CU_CHECK(driver.cuMemcpyHtoDAsync(d_b, b, bytes, stream));

    /* 7. launches: arguments are passed as an array of their addresses */
    int64_t bad = 0;
    {
        void *args[] = {&d_c, &d_a, &d_b, &n};
        CU_CHECK(launch_elementwise(vector_add, stream, plan_elementwise(n, 1, BLOCK), args));
        CU_CHECK(driver.cuMemcpyDtoHAsync(c, d_c, bytes, stream));
        CU_CHECK(driver.cuStreamSynchronize(stream));
        for (int64_t i = 0; i < n; ++i) want[i] = a[i] + b[i];
        bad += count_mismatches(c, want, n, "vector_add");
    }
    {
        void *args[3];
        relu_forward_args(args, &d_c, &d_a, &n); /* y = relu(a) */
        launch_shape shape = plan_elementwise(n, RELU_ITEMS_PER_THREAD, BLOCK);
        printf("  relu_forward: grid %u x block %u for n = %lld\n", shape.grid_x, shape.block_x, (long long)n);
        CU_CHECK(launch_elementwise(relu_forward, stream, shape, args));
        CU_CHECK(driver.cuMemcpyDtoHAsync(c, d_c, bytes, stream));
        CU_CHECK(driver.cuStreamSynchronize(stream));
        for (int64_t i = 0; i < n; ++i) want[i] = relu_ref(a[i]);
        bad += count_mismatches(c, want, n, "relu_forward");
    }
    {
        void *args[] = {&d_c, &d_b, &d_a, &n}; /* grad_x = relu_backward(grad_y = b, x = a) */
        CU_CHECK(launch_elementwise(relu_backward, stream, plan_elementwise(n, RELU_ITEMS_PER_THREAD, BLOCK), args));
        CU_CHECK(driver.cuMemcpyDtoHAsync(c, d_c, bytes, stream));
        CU_CHECK(driver.cuStreamSynchronize(stream));
        for (int64_t i = 0; i < n; ++i) want[i] = a[i] <= 0.0f ? 0.0f : b[i];
        bad += count_mismatches(c, want, n, "relu_backward");
    }

    /* 8. clean up in reverse order of creation */
    CU_CHECK(driver.cuMemFree(d_c));
    CU_CHECK(driver.cuMemFree(d_b));
    CU_CHECK(driver.cuMemFree(d_a));
    CU_CHECK(driver.cuStreamDestroy(stream));
    CU_CHECK(driver.cuModuleUnload(ptx_module));
    CU_CHECK(driver.cuModuleUnload(module));
    CU_CHECK(driver.cuDevicePrimaryCtxRelease(device));
    free(a);
    free(b);
    free(c);
    free(want);
    free(ptx.data);
    free(cubin.data);
    printf(bad ? "FAILED: results differ from the CPU reference\n" : "All results match the CPU reference.\n");
    return bad ? 1 : 0;
}

static int print_plan(int64_t n, unsigned int block) {
    launch_shape shape = plan_elementwise(n, RELU_ITEMS_PER_THREAD, block);
    printf("plan n=%lld items_per_thread=%d block=%u: grid_x=%u block_x=%u\n", (long long)n, RELU_ITEMS_PER_THREAD,
           block, shape.grid_x, shape.block_x);
    CUdeviceptr y = 0x1000, x = 0x2000; /* made-up addresses: nothing is launched */
    void *args[3] = {NULL, NULL, NULL};
    relu_forward_args(args, &y, &x, &n);
    printf("args[0] %s y\n", args[0] == (void *)&y ? "->" : "does not point at");
    printf("args[1] %s x\n", args[1] == (void *)&x ? "->" : "does not point at");
    printf("args[2] %s n\n", args[2] == (void *)&n ? "->" : "does not point at");
    return 0;
}

int main(int argc, char **argv) {
    const char *command = "run", *source_path = KERNELS_PATH, *out_dir = "build";
    const char *positional[2] = {NULL, NULL};
    int npositional = 0, have_command = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--source") == 0 && i + 1 < argc) {
            source_path = argv[++i];
        } else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
            out_dir = argv[++i];
        } else if (!have_command) {
            command = argv[i];
            have_command = 1;
        } else if (npositional < 2) {
            positional[npositional++] = argv[i];
        } else {
            fprintf(stderr, "too many arguments\n");
            return 2;
        }
    }
    setvbuf(stdout, NULL, _IONBF, 0); /* keep stdout and stderr in order when both go to one pipe */

    if (strcmp(command, "plan") == 0) {
        if (positional[0] == NULL) {
            fprintf(stderr, "usage: nvrtc_demo plan N [BLOCK]\n");
            return 2;
        }
        return print_plan(strtoll(positional[0], NULL, 10),
                          positional[1] ? (unsigned int)strtoul(positional[1], NULL, 10) : BLOCK);
    }
    if (strcmp(command, "syntax-error") == 0) return demo_syntax_error();
    if (strcmp(command, "ptx") == 0) {
        compile_for_h100(source_path, out_dir);
        return 0;
    }
    if (strcmp(command, "run") != 0 && strcmp(command, "not-initialized") != 0 &&
        strcmp(command, "too-many-threads") != 0) {
        fprintf(stderr, "unknown command '%s': use run, ptx, syntax-error, not-initialized, too-many-threads, plan\n",
                command);
        return 2;
    }

    char why[512];
    if (course_driver_load(why, sizeof why) != 0) {
        if (strcmp(command, "run") == 0) {
            compile_for_h100(source_path, out_dir);
        }
        printf("%s\nSKIPPED: %s needs the NVIDIA driver and a GPU%s.\n", why,
               strcmp(command, "run") == 0 ? "loading and launching the kernels" : command,
               strcmp(command, "run") == 0 ? " (NVRTC compiled the kernels above without either)" : "");
        return 0;
    }
    if (strcmp(command, "not-initialized") == 0) return demo_not_initialized();
    char *source = read_file(source_path);
    int status = run_driver_demo(source, out_dir, strcmp(command, "too-many-threads") == 0 ? command : NULL);
    free(source);
    return status;
}
