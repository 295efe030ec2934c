/*
 * device_report.c — what the CUDA runtime and the NVIDIA driver say about this machine.
 *
 * The runtime API (libcudart, linked statically here) belongs to the toolkit the program was built with; the
 * driver API (libcuda) belongs to the installed driver. Each reports its own CUDA version, which is why
 * `nvcc --version` and `nvidia-smi` can disagree. libcuda is loaded at run time, so this program builds and runs
 * on a machine with no driver and says so instead of failing to start.
 */
#include <cuda_runtime_api.h>

#include "cuda_driver_loader.h"
#include "course_check.h"

static void print_version(const char *what, int version) {
    printf("%-34s %d.%d  (%d)\n", what, version / 1000, (version % 1000) / 10, version);
}

static int attribute(CUdevice device, CUdevice_attribute which) {
    int value = 0;
    CU_CHECK(driver.cuDeviceGetAttribute(&value, which, device));
    return value;
}

int main(void) {
    int runtime_version = 0;
    CUDA_CHECK(cudaRuntimeGetVersion(&runtime_version));
    print_version("CUDA runtime (this program's):", runtime_version);

    char why[512];
    if (course_driver_load(why, sizeof why) != 0) {
        printf("CUDA driver:                       none\n%s\n", why);
        printf("No GPU work is possible here; building CUDA code still is (nvcc needs no driver).\n");
        return 0;
    }
    CU_CHECK(driver.cuInit(0));
    int driver_version = 0;
    CU_CHECK(driver.cuDriverGetVersion(&driver_version));
    print_version("CUDA driver API (installed driver):", driver_version);
    if (driver_version < runtime_version) {
        printf(
            "MISMATCH: the driver supports CUDA up to %d.%d but this program's runtime is %d.%d: update the "
            "driver.\n",
            driver_version / 1000, (driver_version % 1000) / 10, runtime_version / 1000, (runtime_version % 1000) / 10);
    }

    int count = 0;
    CU_CHECK(driver.cuDeviceGetCount(&count));
    printf("%-34s %d\n", "devices:", count);
    for (int i = 0; i < count; ++i) {
        CUdevice device;
        CU_CHECK(driver.cuDeviceGet(&device, i));
        char name[256];
        CU_CHECK(driver.cuDeviceGetName(name, (int)sizeof name, device));
        size_t bytes = 0;
        CU_CHECK(driver.cuDeviceTotalMem(&bytes, device));
        printf("device %d: %s\n", i, name);
        printf("  compute capability   %d.%d\n", attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
               attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
        printf("  multiprocessors      %d\n", attribute(device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
        printf("  memory               %.1f GiB\n", (double)bytes / (1024.0 * 1024.0 * 1024.0));
        printf("  max threads / block  %d\n", attribute(device, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK));
        printf("  warp size            %d\n", attribute(device, CU_DEVICE_ATTRIBUTE_WARP_SIZE));
    }
    return 0;
}
