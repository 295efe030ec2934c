"""ReLU forward and backward as run-time-compiled kernels, launched on torch tensors inside autograd.

    y = relu(x)            # x: contiguous float32 CUDA tensor; differentiable
    y.sum().backward()     # runs the NVRTC-compiled relu_backward

The path of one call: check the inputs (before anything touches the GPU) -> the compiled kernels for the tensor's
device (compiled by NVRTC and loaded once per (source, options, device), then cached) -> allocate the output ->
cuLaunchKernel on PyTorch's CURRENT stream, with the tensors' data pointers as arguments: from C where
nvrtc_relu._c_launch is built (src/launch_module.c), else from Python (launch.py's Launcher).
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from pathlib import Path

import torch
from course import check_tensor

from . import compiler, driver

BLOCK = 256
KERNEL_NAMES = ("vector_add", "relu_forward", "relu_backward")


def _launch_module():
    """nvrtc_relu/launch.py, or the student's exercises/launch.py under EXERCISE=1."""
    from course.build import exercise_mode

    if not exercise_mode():
        from . import launch

        return launch
    path = Path(__file__).resolve().parents[1] / "exercises" / "launch.py"
    spec = importlib.util.spec_from_file_location("nvrtc_relu._launch_exercise", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


launch = _launch_module()

# ---- compiled modules, cached per (source, options, device) --------------------------------------------------
_modules: dict[tuple[str, tuple[str, ...], int], dict[str, object]] = {}
_modules_lock = threading.Lock()
_default_modules: dict[int, dict[str, object]] = {}  # kernels.cu with the default options, per device


def device_arch(device: int) -> str:
    major, minor = torch.cuda.get_device_capability(device)
    return f"sm_{major}{minor}"


def kernels(
    device: int, source: str | None = None, options: tuple[str, ...] = compiler.DEFAULT_OPTIONS
) -> dict[str, object]:
    """name -> Launcher for the kernels of `source` (default: kernels.cu) on `device`: compiled for the device's
    architecture (a CUBIN, sm_XY) and loaded into its primary context the first time, then from the cache."""
    if source is None and options is compiler.DEFAULT_OPTIONS:
        found = _default_modules.get(device)  # the hot path: one small dictionary lookup
        if found is None:
            found = _default_modules[device] = kernels(device, compiler.kernels_source(), options)
        return found
    source = compiler.kernels_source() if source is None else source
    key = (source, tuple(options), device)
    found = _modules.get(key)
    if found is not None:
        return found
    with _modules_lock:
        found = _modules.get(key)
        if found is None:
            ptx, cubin, _ = compiler.compile_source(source, device_arch(device), tuple(options))
            names = tuple(n for n in KERNEL_NAMES if f" {n}(" in source or f" {n} (" in source) or KERNEL_NAMES
            functions = driver.load_functions(cubin, names, device, ptx=ptx.decode())
            found = _modules[key] = {name: launch.Launcher(f, name) for name, f in functions.items()}
    return found


def clear_cache() -> None:
    """Forget compiled code and loaded modules (the modules stay loaded in the driver until the process ends)."""
    compiler.compile_source.cache_clear()
    _modules.clear()
    _default_modules.clear()


# ---- input checks ---------------------------------------------------------------------------------------------
def _check(name: str, t: object) -> None:
    """float32, contiguous, on a CUDA device; each failure names the argument. The fast test comes first."""
    if isinstance(t, torch.Tensor) and t.dtype is torch.float32 and t.is_cuda and t.is_contiguous():
        return
    check_tensor(name, t, dtypes=(torch.float32,), contiguous=True)
    check_tensor(name, t, device="cuda")


# torch's current stream on a device, as the CUstream handle (an int) that cuLaunchKernel wants. The public way,
# torch.cuda.current_stream(device).cuda_stream, builds a torch.cuda.Stream object on every call: microseconds, as
# much as the rest of a small call (make bench shows both). torch._C._cuda_getCurrentRawStream returns the int
# directly; torch.compile's generated code calls it for the same reason. It is private, so where a torch lacks it
# we fall back to the public way (tests check that both give the same handle).
_raw_current_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def _public_current_stream_handle(device: int) -> int:
    return torch.cuda.current_stream(device).cuda_stream


# current_stream_handle(device): the CUstream handle of PyTorch's current stream on `device` (what
# `with torch.cuda.stream(s)` changes). The private function itself where it exists: no Python frame in between.
current_stream_handle = _raw_current_stream or _public_current_stream_handle


def _load_c_launch():
    """nvrtc_relu._c_launch.launch: cuLaunchKernel called from C (src/launch_module.c, which `make build` compiles
    with launch.c). The same driver call as Launcher's, without the binding's work on every Python argument: about
    as many microseconds as the rest of a small call (make bench). None where it is not built, and under EXERCISE=1,
    where the op runs the student's Python launcher (exercises/launch.py)."""
    from course.build import exercise_mode

    if exercise_mode():
        return None
    try:
        from ._c_launch import launch as c_launch
    except ImportError:
        return None
    return c_launch


c_launch = _load_c_launch()


def _launch(name: str, n: int, device: int, *pointers: int, stream: int | None = None) -> None:
    launcher = (_default_modules.get(device) or kernels(device))[name]  # the hot path: one dictionary lookup
    driver.make_current(device)
    stream = current_stream_handle(device) if stream is None else stream
    if c_launch is not None:
        c_launch(launcher.handle, stream, n, launcher.items_per_thread, BLOCK, *pointers, n)
    else:
        launcher(stream, n, BLOCK, *pointers, n)


def _relu_forward_checked(x: torch.Tensor) -> torch.Tensor:
    """relu_forward once x has passed _check. The hottest path of the chapter, so _launch is written out here:
    at n = 32 every Python call on the way costs a noticeable part of the whole (make bench, host time per call)."""
    y = torch.empty_like(x)
    n = x.numel()
    if n:
        device = x.get_device()
        launcher = (_default_modules.get(device) or kernels(device))["relu_forward"]
        driver.make_current(device)
        if c_launch is not None:
            stream = current_stream_handle(device)
            c_launch(launcher.handle, stream, n, launcher.items_per_thread, BLOCK, y.data_ptr(), x.data_ptr(), n)
        else:
            launcher(current_stream_handle(device), n, BLOCK, y.data_ptr(), x.data_ptr(), n)
    return y


def relu_forward(x: torch.Tensor) -> torch.Tensor:
    """y = max(x, 0), no autograd."""
    _check("x", x)
    return _relu_forward_checked(x)


def relu_backward(grad_y: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """grad_x = grad_y where x > 0, else 0."""
    _check("grad_y", grad_y)
    _check("x", x)
    if grad_y.shape != x.shape or grad_y.device != x.device:
        raise ValueError(
            f"grad_y and x must have the same shape and device, got {tuple(grad_y.shape)} on {grad_y.device} "
            f"and {tuple(x.shape)} on {x.device}"
        )
    grad_x = torch.empty_like(x)
    n = x.numel()
    if n:
        _launch("relu_backward", n, x.get_device(), grad_x.data_ptr(), grad_y.data_ptr(), x.data_ptr())
    return grad_x


def vector_add(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """c = a + b for same-shaped float32 CUDA tensors (the chapter's first kernel; no autograd)."""
    _check("a", a)
    _check("b", b)
    if a.shape != b.shape or a.device != b.device:
        raise ValueError(f"a and b must have the same shape and device, got {tuple(a.shape)} and {tuple(b.shape)}")
    c = torch.empty_like(a)
    if a.numel():
        _launch("vector_add", a.numel(), a.get_device(), c.data_ptr(), a.data_ptr(), b.data_ptr())
    return c


class ReLUFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _relu_forward_checked(x)  # relu() checked x

    @staticmethod
    def backward(ctx, grad_y):
        (x,) = ctx.saved_tensors
        # Gradients arriving from e.g. y.sum() are expanded views (stride 0): make them contiguous first.
        return relu_backward(grad_y.contiguous(), x)


def relu(x: torch.Tensor) -> torch.Tensor:
    """ReLU through the NVRTC-compiled kernels, differentiable."""
    _check("x", x)  # before autograd: a bad input fails here with a clear message
    if x.requires_grad and torch.is_grad_enabled():
        return ReLUFunction.apply(x)
    # Nothing to differentiate (inference, or x needs no gradient): skip autograd.Function's bookkeeping, a few
    # microseconds a call, as torch.relu itself records nothing then.
    return _relu_forward_checked(x)


# ---- the seed's pitfall ---------------------------------------------------------------------------------------
def pitfall_relu_default_stream(x: torch.Tensor) -> torch.Tensor:
    """PITFALL (seed 003): launching on stream 0 instead of torch.cuda.current_stream().

    PyTorch's side streams are created non-blocking: work on the legacy default stream does not wait for them. When
    x is produced on a side stream, this launch can read x before it is written. Use relu_forward instead."""
    _check("x", x)
    y = torch.empty_like(x)
    if x.numel():
        _launch("relu_forward", x.numel(), x.get_device(), y.data_ptr(), x.data_ptr(), stream=0)
    return y


# ---- the same launch through cuda.core (NVIDIA's Pythonic layer), for comparison ------------------------------
class _TorchStreamHandle:
    """Hands a torch stream to cuda.core through the __cuda_stream__ protocol: (version 0, CUstream address)."""

    def __init__(self, handle: int):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


_core: dict[int, tuple] = {}
_core_streams: dict[int, object] = {}
_core_configs: dict[int, object] = {}  # grid -> LaunchConfig: building one costs about 1 µs, so once per grid


def relu_forward_core(x: torch.Tensor) -> torch.Tensor:
    """relu_forward launched with cuda.core: Device, ObjectCode.from_cubin, LaunchConfig and launch()."""
    import numpy as np
    from cuda.core import Device, LaunchConfig, ObjectCode
    from cuda.core import launch as core_launch

    _check("x", x)
    device = x.get_device()
    entry = _core.get(device)
    if entry is None:
        _, cubin, _ = compiler.compile_source(compiler.kernels_source(), device_arch(device), compiler.DEFAULT_OPTIONS)
        dev = Device(device)
        dev.set_current()  # the primary context, as torch's
        kernel = ObjectCode.from_cubin(cubin).get_kernel("relu_forward")
        entry = _core[device] = (dev, kernel)
    dev, kernel = entry
    y = torch.empty_like(x)
    n = x.numel()
    if n:
        handle = current_stream_handle(device)
        stream = _core_streams.get(handle)
        if stream is None:
            stream = _core_streams[handle] = dev.create_stream(_TorchStreamHandle(handle))
        grid = launch.grid_for(n, launch.ITEMS_PER_THREAD["relu_forward"], BLOCK)
        config = _core_configs.get(grid)
        if config is None:
            config = _core_configs[grid] = LaunchConfig(grid=grid, block=BLOCK)
        core_launch(stream, config, kernel, y.data_ptr(), x.data_ptr(), np.int64(n))
    return y
