"""ReLU through NVRTC-compiled kernels on torch tensors. Input checks run without a GPU; launches are gpu-marked."""

import nvrtc_relu
import pytest
import torch

SIZES = [0, 1, 3, 4, 5, 255, 257, 1023, 4097, 1_000_003]


def _input(n, device="cuda", seed=0):
    g = torch.Generator(device="cpu").manual_seed(seed)
    x = torch.randn(n, generator=g)
    if n > 8:  # exact zeros, NaN and infinities are the edge cases of ReLU and its gradient
        x[:4] = torch.tensor([0.0, -0.0, float("inf"), float("-inf")])
        x[5] = float("nan")
    return x.to(device)


# ---- bad inputs: clear errors before anything touches the GPU ----------------------------------------------
def test_rejects_wrong_dtype():
    with pytest.raises(TypeError, match="x has dtype float64, but only float32"):
        nvrtc_relu.relu(torch.zeros(3, dtype=torch.float64))


def test_rejects_cpu_tensor():
    with pytest.raises(ValueError, match="x must be on cuda, but it is on cpu"):
        nvrtc_relu.relu(torch.zeros(3))


def test_rejects_non_contiguous():
    with pytest.raises(ValueError, match="x must be contiguous"):
        nvrtc_relu.relu(torch.zeros(4, 4).t())


def test_rejects_non_tensor():
    with pytest.raises(TypeError, match="x must be a torch.Tensor"):
        nvrtc_relu.relu([1.0, -1.0])


def test_backward_rejects_bad_grad():
    with pytest.raises(TypeError, match="grad_y has dtype int64"):
        nvrtc_relu.relu_backward(torch.zeros(3, dtype=torch.int64), torch.zeros(3))


@pytest.mark.gpu
def test_rejects_wrong_dtype_on_gpu():
    with pytest.raises(TypeError, match="float16"):
        nvrtc_relu.relu(torch.zeros(3, device="cuda", dtype=torch.float16))
    with pytest.raises(ValueError, match="contiguous"):
        nvrtc_relu.relu(torch.zeros(4, 4, device="cuda").t())
    with pytest.raises(ValueError, match="same shape"):
        nvrtc_relu.relu_backward(torch.zeros(3, device="cuda"), torch.zeros(4, device="cuda"))


# ---- correctness against torch --------------------------------------------------------------------------------
@pytest.mark.gpu
@pytest.mark.parametrize("n", SIZES)
def test_forward_matches_torch(n):
    x = _input(n)
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
    y = nvrtc_relu.relu(x)  # x needs no gradient: the plain launch, no graph
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
    torch.testing.assert_close(nvrtc_relu.relu_forward(view), torch.relu(view), equal_nan=True, rtol=0, atol=0)
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
        y = nvrtc_relu.relu_forward(x)
    side.synchronize()
    torch.testing.assert_close(y, torch.relu(src), rtol=0, atol=0)


@pytest.mark.gpu
def test_current_stream_handle_is_torchs_current_stream():
    """The fast handle lookup (torch's private raw-stream call) must agree with the public API, in and out of a
    `with torch.cuda.stream(...)` block."""
    from nvrtc_relu import ops

    assert ops.current_stream_handle(0) == torch.cuda.current_stream(0).cuda_stream
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        assert ops.current_stream_handle(0) == side.cuda_stream != 0
    assert ops.current_stream_handle(0) == torch.cuda.current_stream(0).cuda_stream


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
        y_right = nvrtc_relu.relu_forward(x)
    torch.cuda.synchronize()
    torch.testing.assert_close(y_right, src)
    assert (y_wrong == 0).float().mean() > 0.5, "the pitfall read x after the copy; expected the stale -1s"


@pytest.mark.gpu
def test_modules_cached_per_device_and_source():
    nvrtc_relu.relu_forward(torch.ones(3, device="cuda"))
    first = nvrtc_relu.kernels(0)
    assert nvrtc_relu.kernels(0) is first
    other = nvrtc_relu.kernels(0, options=("--std=c++17",))
    assert other is not first
    x = _input(1001)
    torch.testing.assert_close(nvrtc_relu.relu_forward(x), torch.relu(x), equal_nan=True, rtol=0, atol=0)


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


@pytest.mark.gpu
def test_forward_and_backward_capture_into_a_cuda_graph():
    """cuLaunchKernel on PyTorch's current stream (the capture stream while capturing), no host synchronisation,
    outputs from torch.empty_like: the NVRTC kernels are captured and replayed like any PyTorch op."""
    from course.graphs import check_capture

    check_capture(nvrtc_relu.relu_forward, lambda: (torch.randn(10_007, device="cuda"),))
    check_capture(
        nvrtc_relu.relu_backward, lambda: (torch.randn(10_007, device="cuda"), torch.randn(10_007, device="cuda"))
    )


# ---- the launch from C (src/launch_module.c) --------------------------------------------------------------------
def test_the_c_launcher_is_built_and_used():
    """`make build` compiles nvrtc_relu._c_launch; the op launches through it (the student's Python launcher under
    EXERCISE=1)."""
    from course.build import exercise_mode
    from nvrtc_relu import ops

    assert (ops.c_launch is None) == exercise_mode()


def test_the_c_launcher_checks_its_arguments():
    from nvrtc_relu import _c_launch

    with pytest.raises(TypeError, match="takes 5 to 13 arguments"):
        _c_launch.launch(1, 0, 8)
    with pytest.raises(TypeError):
        _c_launch.launch(1, 0, 8, 4, 256, "not a pointer")
    with pytest.raises(ValueError, match="null CUfunction"):
        _c_launch.launch(0, 0, 8, 4, 256, 1, 2, 8)
    with pytest.raises(ValueError, match="1 <= block <= 1024"):
        _c_launch.launch(1, 0, 8, 4, 2048, 1, 2, 8)
    _c_launch.launch(1, 0, 0, 4, 256, 1, 2, 0)  # n == 0: nothing to launch, nothing reaches the driver


@pytest.mark.gpu
@pytest.mark.parametrize("n", [1, 5, 4097, 1_000_003])
def test_c_and_python_launches_agree(n):
    from nvrtc_relu import ops

    x = _input(n)
    launcher = ops.kernels(x.get_device())["relu_forward"]
    by_python = torch.full_like(x, float("nan"))
    by_c = torch.full_like(x, float("nan"))
    stream = ops.current_stream_handle(x.get_device())
    launcher(stream, n, ops.BLOCK, by_python.data_ptr(), x.data_ptr(), n)
    from nvrtc_relu import _c_launch

    _c_launch.launch(launcher.handle, stream, n, launcher.items_per_thread, ops.BLOCK, by_c.data_ptr(), x.data_ptr(), n)
    assert torch.equal(by_c.nan_to_num(1.5), by_python.nan_to_num(1.5))
    torch.testing.assert_close(by_c, torch.relu(x), equal_nan=True, rtol=0, atol=0)


@pytest.mark.gpu
def test_c_launcher_refuses_the_wrong_number_of_arguments():
    """cuLaunchKernel reads as many argument pointers as the kernel declares, whatever it is given: too few would
    make it read past the array. The C launcher asks the driver for the count first."""
    from nvrtc_relu import _c_launch, ops

    x = _input(8)
    y = torch.empty_like(x)
    launcher = ops.kernels(x.get_device())["relu_forward"]
    with pytest.raises(ValueError, match="the kernel declares 3 parameters, but 2 arguments were given"):
        _c_launch.launch(launcher.handle, 0, 8, 4, 256, y.data_ptr(), x.data_ptr())
    with pytest.raises(ValueError, match="declares 3 parameters, but 4"):
        _c_launch.launch(launcher.handle, 0, 8, 4, 256, y.data_ptr(), x.data_ptr(), 8, 8)


def test_c_launcher_without_a_driver_says_so():
    from course.gpu import gpu_available
    from nvrtc_relu import _c_launch

    if gpu_available():
        pytest.skip("a driver is loaded here: the launcher's driver errors are the GPU tests' business")
    with pytest.raises(RuntimeError, match="no NVIDIA driver"):
        _c_launch.launch(1, 0, 8, 4, 256, 1, 2, 8)
