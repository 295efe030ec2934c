"""The CUDA Driver API from Python (cuda.bindings.driver): the device's primary context, loading modules, errors.

PyTorch uses the runtime API, which works in each device's PRIMARY context. We load our modules into that same
context (cuDevicePrimaryCtxRetain), so our kernels can use torch's memory and torch's streams.
"""

from __future__ import annotations

import threading


class NoDriverError(RuntimeError):
    """There is no NVIDIA driver (libcuda) or no GPU: compiling works, launching cannot."""


class DriverError(RuntimeError):
    """A Driver API call failed; the message names the call and the CUresult."""


def error_name(result) -> str:
    from cuda.bindings import driver

    try:
        err, name = driver.cuGetErrorName(result)
        if err == driver.CUresult.CUDA_SUCCESS:
            return name.decode() if isinstance(name, bytes) else str(name)
    except Exception:  # naming an error must not hide it
        pass
    return str(result)


def check(result, what: str) -> None:
    from cuda.bindings import driver

    if result != driver.CUresult.CUDA_SUCCESS:
        raise DriverError(f"{what} failed: {error_name(result)}")


def _driver_missing_errors() -> tuple[type[BaseException], ...]:
    """What cuda.bindings raises when libcuda.so.1 cannot be found (cuda.pathfinder's error in recent versions)."""
    errors: list[type[BaseException]] = [OSError]
    try:
        from cuda.pathfinder import DynamicLibNotFoundError

        errors.append(DynamicLibNotFoundError)
    except ImportError:
        pass
    return tuple(errors)


_init_lock = threading.Lock()
_initialized = False
_primary: dict[int, object] = {}  # device ordinal -> CUcontext (retained once, for the life of the process)
_thread = threading.local()  # .device: the device whose primary context this thread made current


def init() -> None:
    """cuInit(0), once. Raises NoDriverError where there is no driver or no GPU."""
    global _initialized
    if _initialized:
        return
    with _init_lock:
        if _initialized:
            return
        from cuda.bindings import driver

        try:
            (result,) = driver.cuInit(0)
        except _driver_missing_errors() as error:
            raise NoDriverError(f"no NVIDIA driver: {error}") from error
        if result == driver.CUresult.CUDA_ERROR_NO_DEVICE:
            raise NoDriverError("the NVIDIA driver sees no GPU (CUDA_ERROR_NO_DEVICE)")
        check(result, "cuInit(0)")
        _initialized = True


def driver_skip_reason() -> str:
    """'' when the driver can run kernels here; otherwise why not (for tests and demos)."""
    try:
        init()
    except NoDriverError as error:
        return str(error).split("\n")[0]
    return ""


def primary_context(device: int):
    """The device's primary context, retained once (PyTorch's runtime uses the same one)."""
    context = _primary.get(device)
    if context is None:
        from cuda.bindings import driver

        init()
        result, dev = driver.cuDeviceGet(device)
        check(result, f"cuDeviceGet({device})")
        result, context = driver.cuDevicePrimaryCtxRetain(dev)
        check(result, f"cuDevicePrimaryCtxRetain(device {device})")
        _primary[device] = context
    return context


def make_current(device: int) -> None:
    """Make the device's primary context current on this thread (once per thread and device switch).

    A thread that only touches cached torch memory may never have had a context bound by the runtime, and
    cuLaunchKernel launches into the CURRENT context."""
    if getattr(_thread, "device", None) == device:
        return
    from cuda.bindings import driver

    (result,) = driver.cuCtxSetCurrent(primary_context(device))
    check(result, f"cuCtxSetCurrent(primary context of device {device})")
    _thread.device = device


def load_functions(image: bytes, names: tuple[str, ...], device: int, ptx: str | None = None) -> dict[str, object]:
    """cuModuleLoadData(image) in the device's primary context, then cuModuleGetFunction for each name.
    The module stays loaded for the life of the process (the compiled-module cache owns it). Given the module's
    PTX, a name that is not found gets a message listing the names the module does define."""
    from cuda.bindings import driver

    make_current(device)
    result, module = driver.cuModuleLoadData(image)
    check(result, "cuModuleLoadData")
    functions = {}
    for name in names:
        result, function = driver.cuModuleGetFunction(module, name.encode())
        if result == driver.CUresult.CUDA_ERROR_NOT_FOUND and ptx is not None:
            from .compiler import missing_kernel_message

            raise DriverError(
                f"cuModuleGetFunction({name!r}) failed: CUDA_ERROR_NOT_FOUND: " + missing_kernel_message(name, ptx)
            )
        check(result, f"cuModuleGetFunction({name!r})")
        functions[name] = function
    return functions
