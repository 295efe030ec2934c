"""The CUDA Driver API from Python (cuda.bindings.driver): the device's primary context, loading modules, errors.

PyTorch uses the runtime API, which works in each device's PRIMARY context. We load our modules into that same
context (cuDevicePrimaryCtxRetain), so our kernels can use torch's memory and torch's streams. Every driver call
returns a CUresult first; check() turns any other result than CUDA_SUCCESS into a DriverError naming the call.
"""

from __future__ import annotations

import threading

from cuda.bindings import driver as cu  # importing it needs no driver; its functions load libcuda on first use

_SUCCESS = cu.CUresult.CUDA_SUCCESS


class NoDriverError(RuntimeError):
    """There is no NVIDIA driver (libcuda) or no GPU: compiling works, launching cannot."""


class DriverError(RuntimeError):
    """A Driver API call failed; the message names the call and the CUresult."""


def error_name(result) -> str:
    """CUDA_ERROR_INVALID_VALUE for the CUresult 1: the enum's own name, so naming an error needs no driver call."""
    return cu.CUresult(result).name


def check(result, what: str) -> None:
    """Raise DriverError("<what> failed: CUDA_ERROR_...") unless `result` is CUDA_SUCCESS."""
    if result != _SUCCESS:
        raise DriverError(f"{what} failed: {error_name(result)}")


def _driver_missing_errors() -> tuple[type[BaseException], ...]:
    """What cuda.bindings raises when libcuda.so.1 cannot be found (cuda.pathfinder's error in recent versions)."""
    errors: list[type[BaseException]] = [OSError]
    try:
        from cuda.pathfinder import DynamicLibNotFoundError

        errors.append(DynamicLibNotFoundError)
    except ImportError:  # an older cuda.bindings, without cuda.pathfinder: it raises OSError
        pass
    return tuple(errors)


_init_lock = threading.Lock()
_initialized = False
_primary: dict[int, object] = {}  # device ordinal -> CUcontext (retained once, for the life of the process)


def init() -> None:
    """cuInit(0), once. Raises NoDriverError where there is no driver or no GPU."""
    global _initialized
    if _initialized:
        return
    with _init_lock:
        if _initialized:
            return
        try:
            (result,) = cu.cuInit(0)
        except _driver_missing_errors() as error:
            raise NoDriverError(f"no NVIDIA driver: {error}") from error
        if result == cu.CUresult.CUDA_ERROR_NO_DEVICE:
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
        init()
        result, dev = cu.cuDeviceGet(device)
        check(result, f"cuDeviceGet({device})")
        result, context = cu.cuDevicePrimaryCtxRetain(dev)
        check(result, f"cuDevicePrimaryCtxRetain(device {device})")
        _primary[device] = context
    return context


def make_current(device: int):
    """Make the device's primary context the calling thread's current context, unless it already is. Returns the
    context it replaced, for restore_current, or None when there was nothing to replace.

    cuLaunchKernel launches into the CURRENT context, and a function handle belongs to the context its module was
    loaded in. What is current can change between two calls without this module knowing: torch.cuda.set_device and
    `with torch.cuda.device(i)` make another device's primary context current, and any library may call
    cuCtxSetCurrent or cuCtxPushCurrent. So we ask the driver every time (cuCtxGetCurrent, a fraction of a
    microsecond) instead of remembering what we set."""
    context = primary_context(device)
    result, current = cu.cuCtxGetCurrent()
    check(result, "cuCtxGetCurrent")
    if int(current) == int(context):  # the handles' addresses
        return None  # the common case: one driver call
    (result,) = cu.cuCtxSetCurrent(context)
    check(result, f"cuCtxSetCurrent(primary context of device {device})")
    # A thread without a current context (0) keeps the primary one, as after the runtime API's first call there.
    return current if int(current) else None


def restore_current(context) -> None:
    """Make `context` (what make_current replaced) current again."""
    (result,) = cu.cuCtxSetCurrent(context)
    check(result, "cuCtxSetCurrent(the context that was current before)")


class in_primary_context:  # lower case, as torch.cuda.device: it is used like a function
    """`with in_primary_context(device): ...`: the device's primary context is current inside the block, and what
    was current before is current again after it, as torch's device guards leave the current device."""

    __slots__ = ("device", "replaced")

    def __init__(self, device: int):
        self.device = device

    def __enter__(self) -> None:
        self.replaced = make_current(self.device)

    def __exit__(self, *exception) -> None:
        if self.replaced is not None:
            restore_current(self.replaced)


def load_functions(image: bytes, names: tuple[str, ...], device: int, ptx: str | None = None) -> dict[str, object]:
    """cuModuleLoadData(image) in the device's primary context, then cuModuleGetFunction for each name.
    The module stays loaded for the life of the process (the compiled-module cache owns it). Given the module's
    PTX, a name that is not found gets a message listing the names the module does define."""
    with in_primary_context(device):
        result, module = cu.cuModuleLoadData(image)
    check(result, "cuModuleLoadData")
    functions = {}
    for name in names:
        result, function = cu.cuModuleGetFunction(module, name.encode())
        if result == cu.CUresult.CUDA_ERROR_NOT_FOUND and ptx is not None:
            from .compiler import missing_kernel_message

            raise DriverError(
                f"cuModuleGetFunction({name!r}) failed: CUDA_ERROR_NOT_FOUND: " + missing_kernel_message(name, ptx)
            )
        check(result, f"cuModuleGetFunction({name!r})")
        functions[name] = function
    return functions
