"""ReLU forward and backward as run-time-compiled kernels, registered with PyTorch as the op nvrtc_relu::relu.

    y = nvrtc_relu.relu(x)     # x: contiguous float32 CUDA tensor; the same as torch.ops.nvrtc_relu.relu(x)
    y.sum().backward()         # runs the NVRTC-compiled relu_backward (torch.ops.nvrtc_relu.relu_backward)

The path of one call, all of it in this file and launch.py:
  1. check the inputs (course.checks, once, before anything touches the GPU);
  2. the compiled kernels for the tensor's device: NVRTC compiles kernels.cu for the device's architecture and
     cuModuleLoadData loads it into the device's primary context, once per (source, options, device);
  3. allocate the output with torch.empty_like;
  4. cuLaunchKernel on PyTorch's current stream, with the tensors' data pointers and n as the kernel's arguments
     (launch.launch), while the device's primary context is current (driver.in_primary_context).

Registration (docs/how-an-op-is-built.md): torch.library.custom_op makes each function an op of the dispatcher,
register_fake gives torch.compile the output's shape without running a kernel, and register_autograd gives
relu its backward. Launching faster than launch.launch does is measured in faster_launch.py.
"""

from __future__ import annotations

import threading

import torch
from course.checks import check_same, check_tensor

from . import compiler, driver, launch

KERNEL_NAMES = ("vector_add", "relu_forward", "relu_backward")
FLOAT32 = (torch.float32,)

# ---- compiled modules, cached per (source, options, device) --------------------------------------------------
_modules: dict[tuple[str, tuple[str, ...], int], dict[str, object]] = {}
_modules_lock = threading.Lock()


def device_arch(device: int) -> str:
    major, minor = torch.cuda.get_device_capability(device)
    return f"sm_{major}{minor}"


def kernels(
    device: int, source: str | None = None, options: tuple[str, ...] = compiler.DEFAULT_OPTIONS
) -> dict[str, object]:
    """name -> CUfunction for the kernels of `source` (default: kernels.cu) on `device`: compiled for the device's
    architecture (a CUBIN, sm_XY) and loaded into its primary context the first time, then from the cache."""
    source = compiler.kernels_source() if source is None else source
    key = (source, tuple(options), device)
    found = _modules.get(key)
    if found is not None:
        return found
    with _modules_lock:  # two threads' first calls compile and load once
        found = _modules.get(key)
        if found is None:
            ptx, cubin, _ = compiler.compile_source(source, device_arch(device), tuple(options))
            names = tuple(n for n in KERNEL_NAMES if f" {n}(" in source or f" {n} (" in source) or KERNEL_NAMES
            found = _modules[key] = driver.load_functions(cubin, names, device, ptx=ptx.decode())
    return found


def clear_cache() -> None:
    """Forget compiled code and loaded modules (the modules stay loaded in the driver until the process ends)."""
    compiler.compile_source.cache_clear()
    _modules.clear()


def _launch(name: str, n: int, device: int, *values: int, stream: int | None = None) -> None:
    """Launch kernel `name` over n elements on `device`, on PyTorch's current stream unless `stream` is given."""
    function = kernels(device)[name]
    if stream is None:
        stream = torch.cuda.current_stream(device).cuda_stream  # what `with torch.cuda.stream(s)` changes
    # cuLaunchKernel launches into the thread's current context: the primary one, where the module is loaded
    with driver.in_primary_context(device):
        launch.launch(function, name, n, stream, *values)


# ---- the inputs the kernels take: contiguous float32 on a GPU. Each op's implementation and its fake check once here.
def check_input(name: str, t: object) -> None:
    check_tensor(name, t, dtypes=FLOAT32, device="cuda", contiguous=True)


def check_pair(first_name: str, first: object, second_name: str, second: object) -> None:
    """Both inputs as check_input wants them, with the same shape on the same device."""
    check_input(first_name, first)
    check_input(second_name, second)
    check_same(**{first_name: first, second_name: second}, attributes=("shape", "device"))


# ---- the ops' CUDA implementations: what torch.ops.nvrtc_relu.* run ------------------------------------------
def relu_forward(x: torch.Tensor) -> torch.Tensor:
    """y = max(x, 0) for a contiguous float32 CUDA tensor. The implementation of nvrtc_relu::relu, here without
    the dispatcher (no autograd, no torch.compile): call `relu` instead."""
    check_input("x", x)
    y = torch.empty_like(x)
    n = x.numel()
    if n:
        _launch("relu_forward", n, x.get_device(), y.data_ptr(), x.data_ptr(), n)
    return y


def _relu_backward(grad_y: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """grad_x = grad_y where x > 0, else 0 (0 at x == 0; grad_y at NaN, as PyTorch)."""
    check_pair("grad_y", grad_y, "x", x)
    grad_x = torch.empty_like(x)
    n = x.numel()
    if n:
        _launch("relu_backward", n, x.get_device(), grad_x.data_ptr(), grad_y.data_ptr(), x.data_ptr(), n)
    return grad_x


def _vector_add(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """c = a + b for same-shaped float32 CUDA tensors (the chapter's first kernel; no autograd)."""
    check_pair("a", a, "b", b)
    c = torch.empty_like(a)
    n = a.numel()
    if n:
        _launch("vector_add", n, a.get_device(), c.data_ptr(), a.data_ptr(), b.data_ptr(), n)
    return c


# ---- registration: each function becomes an op of the dispatcher ---------------------------------------------
# No device_types: the implementation is registered for every device, so that a CPU tensor reaches our check and
# gets its clear message ("x must be on cuda, but it is on cpu") instead of the dispatcher's "could not run
# 'nvrtc_relu::relu' with arguments from the 'CPU' backend".
relu = torch.library.custom_op("nvrtc_relu::relu", relu_forward, mutates_args=())
relu_backward = torch.library.custom_op("nvrtc_relu::relu_backward", _relu_backward, mutates_args=())
vector_add = torch.library.custom_op("nvrtc_relu::vector_add", _vector_add, mutates_args=())


# The fake implementations: the output's shape, dtype and device, no data. torch.compile and opcheck run them
# instead of the kernels, so they check the inputs the same way (the same messages).
@relu.register_fake
def _(x):
    check_input("x", x)
    return torch.empty_like(x)


@relu_backward.register_fake
def _(grad_y, x):
    check_pair("grad_y", grad_y, "x", x)
    return torch.empty_like(x)


@vector_add.register_fake
def _(a, b):
    check_pair("a", a, "b", b)
    return torch.empty_like(a)


# Autograd for relu: save x in the forward, run relu_backward in the backward.
def _setup_context(ctx, inputs, output):
    (x,) = inputs
    ctx.save_for_backward(x)


def _backward(ctx, grad_y):
    (x,) = ctx.saved_tensors
    # Gradients arriving from e.g. y.sum() are expanded views (stride 0): make them contiguous first.
    return relu_backward(grad_y.contiguous(), x)


relu.register_autograd(_backward, setup_context=_setup_context)


# ---- the seed's pitfall ---------------------------------------------------------------------------------------
def pitfall_relu_default_stream(x: torch.Tensor) -> torch.Tensor:
    """PITFALL (seed 003): launching on stream 0 instead of torch.cuda.current_stream().

    PyTorch's side streams are created non-blocking: work on the legacy default stream does not wait for them. When
    x is produced on a side stream, this launch can read x before it is written. Use relu instead."""
    check_input("x", x)
    y = torch.empty_like(x)
    n = x.numel()
    if n:
        _launch("relu_forward", n, x.get_device(), y.data_ptr(), x.data_ptr(), n, stream=0)
    return y
