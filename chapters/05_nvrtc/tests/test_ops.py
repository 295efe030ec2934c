"""ReLU through NVRTC-compiled kernels on torch tensors, registered as torch.ops.nvrtc_relu.*. Input checks,
registration and the error path run without a GPU; launches, opcheck and torch.compile are gpu-marked."""

import ast
from pathlib import Path

import nvrtc_relu
import pytest
import torch

SIZES = [0, 1, 3, 4, 5, 255, 257, 1023, 4097, 1_000_003]
PACKAGE_DIR = Path(nvrtc_relu.__file__).resolve().parent


def _input(n, device="cuda", seed=0):
    g = torch.Generator(device="cpu").manual_seed(seed)
    x = torch.randn(n, generator=g)
    if n > 8:  # exact zeros, NaN and infinities are the edge cases of ReLU and its gradient
        x[:4] = torch.tensor([0.0, -0.0, float("inf"), float("-inf")])
        x[5] = float("nan")
    return x.to(device)


# ---- the registered ops ---------------------------------------------------------------------------------------
def test_ops_are_registered_with_their_schemas():
    schemas = {name: str(getattr(torch.ops.nvrtc_relu, name).default._schema) for name in ("relu", "relu_backward")}
    assert schemas == {
        "relu": "nvrtc_relu::relu(Tensor x) -> Tensor",
        "relu_backward": "nvrtc_relu::relu_backward(Tensor grad_y, Tensor x) -> Tensor",
    }
    assert (
        str(torch.ops.nvrtc_relu.vector_add.default._schema) == "nvrtc_relu::vector_add(Tensor a, Tensor b) -> Tensor"
    )


# ---- bad inputs: clear errors before anything touches the GPU ----------------------------------------------
def test_rejects_wrong_dtype():
    with pytest.raises(TypeError, match="x has dtype float64, but only float32 are supported"):
        nvrtc_relu.relu(torch.zeros(3, dtype=torch.float64))


def test_cpu_tensor_is_a_clear_error():
    """The op is CUDA-only. Its implementation is registered for every device, so that a CPU tensor reaches the
    check and gets this message, not the dispatcher's "could not run ... with arguments from the 'CPU' backend"."""
    with pytest.raises(ValueError, match="x must be on cuda, but it is on cpu"):
        nvrtc_relu.relu(torch.zeros(3))
    with pytest.raises(ValueError, match="x must be on cuda, but it is on cpu"):
        torch.ops.nvrtc_relu.relu(torch.zeros(3))


def test_cpu_tensor_under_torch_compile_is_the_same_error():
    """torch.compile runs the fake implementation while tracing; it checks as the real one does."""
    compiled = torch.compile(nvrtc_relu.relu, fullgraph=True, backend="eager")
    with pytest.raises(RuntimeError, match="x must be on cuda, but it is on cpu"):
        compiled(torch.zeros(3))


def test_rejects_non_tensor():
    # The op: the dispatcher matches the arguments against the schema before our code runs.
    with pytest.raises(RuntimeError, match="Expected a value of type 'Tensor' for argument 'x'"):
        nvrtc_relu.relu([1.0, -1.0])
    # The implementation called directly: course.checks.
    with pytest.raises(TypeError, match="x must be a torch.Tensor, got list"):
        nvrtc_relu.relu_forward([1.0, -1.0])


def test_backward_rejects_bad_grad():
    with pytest.raises(TypeError, match="grad_y has dtype int64"):
        nvrtc_relu.relu_backward(torch.zeros(3, dtype=torch.int64), torch.zeros(3))


@pytest.mark.gpu
def test_rejects_bad_inputs_on_gpu():
    with pytest.raises(TypeError, match="x has dtype float16, but only float32 are supported"):
        nvrtc_relu.relu(torch.zeros(3, device="cuda", dtype=torch.float16))
    with pytest.raises(ValueError, match="x must be contiguous"):
        nvrtc_relu.relu(torch.zeros(4, 4, device="cuda").t())
    with pytest.raises(ValueError, match="grad_y and x must have the same shape"):
        nvrtc_relu.relu_backward(torch.zeros(3, device="cuda"), torch.zeros(4, device="cuda"))
    with pytest.raises(ValueError, match="a and b must have the same shape"):
        nvrtc_relu.vector_add(torch.zeros(3, device="cuda"), torch.zeros(4, device="cuda"))


# ---- driver errors: every call's result is checked ------------------------------------------------------------
def test_check_raises_driver_error_with_the_name():
    from cuda.bindings import driver as cu
    from nvrtc_relu import driver

    driver.check(cu.CUresult.CUDA_SUCCESS, "cuNothing")
    with pytest.raises(nvrtc_relu.DriverError, match=r"^cuLaunchKernel\(k\) failed: CUDA_ERROR_INVALID_VALUE$"):
        driver.check(cu.CUresult.CUDA_ERROR_INVALID_VALUE, "cuLaunchKernel(k)")


def _driver_calls_unchecked(path: Path) -> list[str]:
    """Each call of a Driver API function (driver.cuXxx / cu.cuXxx) whose CUresult is not assigned to `result` and
    then passed to check() in the same function."""
    tree = ast.parse(path.read_text())
    problems = []
    for function in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]:
        for statement in ast.walk(function):
            for call in [n for n in ast.iter_child_nodes(statement) if isinstance(n, ast.Call)]:
                func = call.func
                if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
                    continue
                if func.value.id not in ("driver", "cu") or not func.attr.startswith("cu") or func.attr[2].islower():
                    continue
                target = statement.targets[0] if isinstance(statement, ast.Assign) else None
                first = target.elts[0] if isinstance(target, ast.Tuple) and target.elts else None
                checked = any(
                    isinstance(n, ast.Call)
                    and getattr(n.func, "id", getattr(n.func, "attr", None)) == "check"
                    and n.args
                    and isinstance(n.args[0], ast.Name)
                    and n.args[0].id == getattr(first, "id", None)
                    and n.lineno > call.lineno
                    for n in ast.walk(function)
                )
                if not checked:
                    problems.append(f"{path.name}:{call.lineno} {func.attr} in {function.name}")
    return problems


def test_every_driver_call_is_checked():
    files = [PACKAGE_DIR / name for name in ("driver.py", "launch.py", "faster_launch.py")]
    calls = sum((_driver_calls_unchecked(f) for f in files), [])
    assert calls == [], "driver calls whose CUresult is not checked: " + ", ".join(calls)


@pytest.mark.gpu
def test_driver_errors_raise_driver_error():
    from nvrtc_relu import driver, launch, ops

    with pytest.raises(nvrtc_relu.DriverError, match=r"cuModuleLoadData failed: CUDA_ERROR_\w+"):
        driver.load_functions(b"not a module", ("relu_forward",), 0)
    x = _input(8)
    y = torch.empty_like(x)
    function = ops.kernels(0)["relu_forward"]
    stream = torch.cuda.current_stream(0).cuda_stream
    # 2048 threads in a block: more than any GPU allows (1024), so the driver refuses the launch
    with pytest.raises(nvrtc_relu.DriverError, match=r"cuLaunchKernel\(relu_forward, grid=1, block=2048\) failed"):
        launch.launch(function, "relu_forward", 8, stream, y.data_ptr(), x.data_ptr(), 8, block=2048)


# ---- correctness against torch --------------------------------------------------------------------------------
@pytest.mark.gpu
@pytest.mark.parametrize("n", SIZES)
def test_forward_matches_torch(n):
    x = _input(n)
    torch.testing.assert_close(nvrtc_relu.relu(x), torch.relu(x), equal_nan=True, rtol=0, atol=0)
    torch.testing.assert_close(nvrtc_relu.relu_forward(x), torch.relu(x), equal_nan=True, rtol=0, atol=0)


@pytest.mark.gpu
@pytest.mark.parametrize("n", SIZES)
def test_backward_matches_torch(n):
    x = _input(n).requires_grad_()
    grad = _input(n, seed=1)
    y = nvrtc_relu.relu(x)
    (gx,) = torch.autograd.grad(y, x, grad)
    x_ref = x.detach().clone().requires_grad_()
    (gx_ref,) = torch.autograd.grad(torch.relu(x_ref), x_ref, grad)
    torch.testing.assert_close(y, torch.relu(x_ref), equal_nan=True, rtol=0, atol=0)
    torch.testing.assert_close(gx, gx_ref, equal_nan=True, rtol=0, atol=0)


@pytest.mark.gpu
def test_relu_records_autograd_only_when_needed():
    x = _input(1000)
    y = nvrtc_relu.relu(x)  # x needs no gradient: no graph
    assert y.grad_fn is None
    torch.testing.assert_close(y, torch.relu(x), equal_nan=True, rtol=0, atol=0)
    x.requires_grad_()
    assert nvrtc_relu.relu(x).grad_fn is not None
    with torch.no_grad():
        assert nvrtc_relu.relu(x).grad_fn is None


@pytest.mark.gpu
def test_shapes_and_misaligned_views():
    x = _input(7 * 129 * 3).reshape(7, 129, 3)
    torch.testing.assert_close(nvrtc_relu.relu(x), torch.relu(x), equal_nan=True, rtol=0, atol=0)
    base = _input(4099)
    view = base[1:]  # contiguous but 4 bytes past a 16-byte boundary: the kernels' scalar path
    assert view.data_ptr() % 16 != 0
    torch.testing.assert_close(nvrtc_relu.relu(view), torch.relu(view), equal_nan=True, rtol=0, atol=0)
    grad = _input(4098, seed=2)
    want = torch.ops.aten.threshold_backward(grad, torch.relu(view), 0.0)  # what autograd runs for torch.relu
    torch.testing.assert_close(nvrtc_relu.relu_backward(grad, view), want, equal_nan=True, rtol=0, atol=0)


@pytest.mark.gpu
def test_vector_add():
    a, b = _input(100_003), _input(100_003, seed=3)
    torch.testing.assert_close(nvrtc_relu.vector_add(a, b), a + b, equal_nan=True)


@pytest.mark.gpu
def test_gradcheck():
    # float32 kernels: finite differences with eps 1e-3 on inputs kept away from ReLU's kink at 0
    x = torch.randn(257, device="cuda")
    x = (x + x.sign() * 0.1).requires_grad_()
    assert torch.autograd.gradcheck(nvrtc_relu.relu, (x,), eps=1e-3, atol=1e-3, rtol=1e-3)


@pytest.mark.gpu
def test_gradient_through_a_graph():
    x = _input(1000).nan_to_num().requires_grad_()
    (nvrtc_relu.relu(x * 2.0) ** 2).sum().backward()  # the incoming gradient is non-trivial
    x_ref = x.detach().clone().requires_grad_()
    (torch.relu(x_ref * 2.0) ** 2).sum().backward()
    torch.testing.assert_close(x.grad, x_ref.grad)


# ---- the op as PyTorch sees it: opcheck and torch.compile -----------------------------------------------------
@pytest.mark.gpu
def test_opcheck():
    """Schema, fake implementation, autograd registration and tracing, each checked by PyTorch itself. (Plain random
    inputs: opcheck compares outputs with NaN != NaN.)"""
    x, other = torch.randn(1001, device="cuda"), torch.randn(1001, device="cuda")
    torch.library.opcheck(torch.ops.nvrtc_relu.relu.default, (x,))
    torch.library.opcheck(torch.ops.nvrtc_relu.relu.default, (x.clone().requires_grad_(),))
    torch.library.opcheck(torch.ops.nvrtc_relu.relu_backward.default, (other, x))
    torch.library.opcheck(torch.ops.nvrtc_relu.vector_add.default, (x, other))


@pytest.mark.gpu
@pytest.mark.slow  # Inductor compiles Triton kernels for the ops around ours: seconds, and nothing for the sanitizers
def test_torch_compile_fullgraph():
    def f(x):
        return nvrtc_relu.relu(x * 2.0).sin() * 3.0  # the op in the middle of a graph

    compiled = torch.compile(f, fullgraph=True)
    x = torch.randn(4097, device="cuda", requires_grad=True)
    y = compiled(x)
    y.sum().backward()
    x_ref = x.detach().clone().requires_grad_()
    y_ref = torch.relu(x_ref * 2.0).sin() * 3.0
    y_ref.sum().backward()
    torch.testing.assert_close(y, y_ref)
    torch.testing.assert_close(x.grad, x_ref.grad)


# ---- contexts: launches go into the primary context, whatever was current -------------------------------------
@pytest.mark.gpu
def test_relu_runs_while_another_context_is_current(small):
    """A context created with cuCtxCreate is current when the op is called (as another library may leave it): the
    op must notice (cuCtxGetCurrent), launch in the primary context, and leave the created one current again."""
    from cuda.bindings import driver as cu
    from nvrtc_relu import driver

    if small:  # under the sanitizers, PYTORCH_NO_CUDA_MEMORY_CACHING=1
        pytest.skip("without torch's caching allocator, torch.empty_like would cudaMalloc in the created context")

    x = _input(4097)
    want = torch.relu(x)
    nvrtc_relu.relu(x)  # compiled and loaded; torch's allocator keeps a block of this size for the next call
    torch.cuda.synchronize()
    primary = driver.primary_context(0)
    result, device = cu.cuDeviceGet(0)
    driver.check(result, "cuDeviceGet")
    result, created = cu.cuCtxCreate(None, 0, device)  # cuda.bindings 13: (CUctxCreateParams or None, flags, dev)
    driver.check(result, "cuCtxCreate")
    try:  # cuCtxCreate pushed `created` onto this thread's context stack: it is current now
        result, current = cu.cuCtxGetCurrent()
        driver.check(result, "cuCtxGetCurrent")
        assert int(current) == int(created) != int(primary)
        y = nvrtc_relu.relu(x)
        result, current = cu.cuCtxGetCurrent()
        driver.check(result, "cuCtxGetCurrent")
        assert int(current) == int(created), "the op left another context current than it found"
    finally:
        # Pop what is on top (`created`, or the primary context if the op did not restore), then destroy ours.
        result, _ = cu.cuCtxPopCurrent()
        driver.check(result, "cuCtxPopCurrent")
        (result,) = cu.cuCtxDestroy(created)
        driver.check(result, "cuCtxDestroy")
    torch.cuda.synchronize()
    torch.testing.assert_close(y, want, equal_nan=True, rtol=0, atol=0)


@pytest.mark.gpu
def test_relu_in_a_new_thread():
    """A new thread may have no current context at all; the op makes the primary one current there."""
    from concurrent.futures import ThreadPoolExecutor

    x = _input(4097)
    with ThreadPoolExecutor(max_workers=1) as pool:
        y = pool.submit(nvrtc_relu.relu, x).result()  # .result() raises what the thread raised
    torch.cuda.synchronize()
    torch.testing.assert_close(y, torch.relu(x), equal_nan=True, rtol=0, atol=0)


@pytest.mark.gpu
def test_relu_follows_torch_cuda_device():
    """torch.cuda.set_device and `with torch.cuda.device(i)` make device i's primary context current behind the
    op's back; each launch must still go to the tensor's own device, and torch's current device stays as it was."""
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two GPUs")
    x0, x1 = _input(4097, device="cuda:0"), _input(4097, device="cuda:1")
    for _ in range(2):
        for x in (x0, x1, x0):
            other = 1 - x.get_device()
            with torch.cuda.device(other):
                torch.ones(1, device="cuda")  # the other device's context is current now
                torch.testing.assert_close(nvrtc_relu.relu(x), torch.relu(x), equal_nan=True, rtol=0, atol=0)
                assert torch.cuda.current_device() == other


# ---- streams ----------------------------------------------------------------------------------------------------
@pytest.mark.gpu
def test_launches_on_the_current_stream():
    """On a non-default stream, synchronizing only that stream must be enough to see the results."""
    n = 1 << 20
    x = torch.full((n,), -1.0, device="cuda")
    src = _input(n).nan_to_num()
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(20_000_000)  # keeps the side stream busy, so out-of-order work would show
        x.copy_(src)
        y = nvrtc_relu.relu(x)
    side.synchronize()
    torch.testing.assert_close(y, torch.relu(src), rtol=0, atol=0)


@pytest.mark.gpu
def test_pitfall_default_stream_reads_stale_input(small):
    if small:
        pytest.skip("compute-sanitizer serializes the streams, which hides the race this test shows")
    n = 1 << 20
    x = torch.full((n,), -1.0, device="cuda")
    src = torch.rand(n, device="cuda") + 0.5  # all positive
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(50_000_000)
        x.copy_(src)
        y_wrong = nvrtc_relu.pitfall_relu_default_stream(x)  # stream 0: does not wait for `side`
        y_right = nvrtc_relu.relu(x)
    torch.cuda.synchronize()
    torch.testing.assert_close(y_right, src)
    assert (y_wrong == 0).float().mean() > 0.5, "the pitfall read x after the copy; expected the stale -1s"


@pytest.mark.gpu
def test_forward_and_backward_capture_into_a_cuda_graph():
    """cuLaunchKernel on PyTorch's current stream (the capture stream while capturing), no host synchronisation,
    outputs from torch.empty_like: the NVRTC kernels are captured and replayed like any PyTorch op."""
    from course.graphs import check_capture

    check_capture(nvrtc_relu.relu, lambda: (torch.randn(10_007, device="cuda"),))
    check_capture(
        nvrtc_relu.relu_backward, lambda: (torch.randn(10_007, device="cuda"), torch.randn(10_007, device="cuda"))
    )


# ---- the module cache and the side-by-side launchers -------------------------------------------------------------
@pytest.mark.gpu
def test_modules_cached_per_device_and_source():
    nvrtc_relu.relu(torch.ones(3, device="cuda"))
    first = nvrtc_relu.kernels(0)
    assert nvrtc_relu.kernels(0) is first
    other = nvrtc_relu.kernels(0, options=("--std=c++17",))
    assert other is not first
    x = _input(1001)
    torch.testing.assert_close(nvrtc_relu.relu(x), torch.relu(x), equal_nan=True, rtol=0, atol=0)


@pytest.mark.gpu
def test_cuda_core_launch_matches():
    x = _input(10_001)
    torch.testing.assert_close(nvrtc_relu.relu_forward_core(x), torch.relu(x), equal_nan=True, rtol=0, atol=0)


def test_cupy_side_by_side():
    from nvrtc_relu.cupy_side import cupy_skip_reason, relu_forward_cupy

    reason = cupy_skip_reason()
    if reason:
        pytest.skip(reason)
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device visible")
    x = _input(10_001)
    torch.testing.assert_close(relu_forward_cupy(x), torch.relu(x), equal_nan=True, rtol=0, atol=0)
