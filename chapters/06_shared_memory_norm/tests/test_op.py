"""The op on every device: values against a float64 reference, layouts, bad inputs, gradients, opcheck, compile."""

from __future__ import annotations

import pytest
import torch
from helpers import DEVICES, DTYPES, assert_norm_close, inputs
from norm_diff import norm_diff


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("n", [0, 1, 7, 4097, 100_003])
def test_matches_float64_reference(device, dtype, n):
    a, b = inputs(n, dtype, device)
    assert_norm_close(norm_diff(a, b), a, b)


@pytest.mark.parametrize("device", DEVICES)
def test_like_torch_norm_on_a_matrix(device):
    a, b = inputs(300 * 70, torch.float32, device)
    a, b = a.view(300, 70), b.view(300, 70)
    torch.testing.assert_close(norm_diff(a, b), torch.norm(a - b), rtol=1e-5, atol=0)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", ["strided", "transposed", "offset", "expanded"])
def test_non_contiguous(device, layout):
    a, b = inputs(2 * 513 * 7 + 1, torch.float32, device)
    if layout == "strided":
        a, b = a[::2], b[::2]
    elif layout == "transposed":
        a, b = a[1:].view(513, 14).t(), b[1:].view(513, 14).t()
    elif layout == "offset":  # contiguous but not 16-byte aligned: the GPU's vector loads must fall back
        a, b = a[1:-2], b[3:]
    else:
        a, b = a[:9].expand(5, 9), b[:9]
        b = b.expand(5, 9)
    assert not a.is_contiguous() or layout == "offset"
    assert_norm_close(norm_diff(a, b), a, b)


# Each op checks its inputs once, in C++ (src/norm_diff_binding.cpp); norm_diff() only calls the op. So the public
# function and the op called directly raise the same exception with the same message.
CALLERS = {
    "norm_diff": lambda a, b, version=3: norm_diff(a, b, version=version),
    "torch.ops.norm_diff.norm_diff": lambda a, b, version=3: torch.ops.norm_diff.norm_diff.default(a, b, version),
}


@pytest.mark.parametrize("caller", CALLERS)
def test_bad_inputs_name_the_problem(caller):
    call, a = CALLERS[caller], torch.randn(10)
    with pytest.raises(ValueError, match=r"^a and b must have the same shape, but a has \(10,\) and b has \(11,\)$"):
        call(a, torch.randn(11))
    with pytest.raises(TypeError, match="^a and b must have the same dtype, but a has float32 and b has float64$"):
        call(a, torch.randn(10, dtype=torch.float64))
    with pytest.raises(ValueError, match="^a and b must have the same device, but a has cpu and b has meta$"):
        call(a, torch.randn(10, device="meta"))  # the meta (fake) impl runs: its checks are the same family's
    with pytest.raises(TypeError, match="^b has dtype int64, but only float32, float64, float16, bfloat16 are"):
        call(a, torch.ones(10, dtype=torch.int64))
    with pytest.raises(TypeError, match="^a has dtype int32, but only"):
        call(a.int(), a.int())
    for version in (-1, 5, 9):
        with pytest.raises(ValueError, match=f"^version must be in 0..4, got {version}$"):
            call(a, a, version=version)


def test_what_the_dispatcher_refuses():
    """Arguments of the wrong kind never reach the op: the dispatcher's parser names the argument."""
    a = torch.randn(10)
    with pytest.raises(RuntimeError, match="Expected a value of type 'Tensor' for argument 'a'"):
        norm_diff([1.0, 2.0], a)
    with pytest.raises(RuntimeError, match="Expected a value of type 'int' for argument 'version'"):
        norm_diff(a, a, version=2.0)


def test_meta_tensors_give_the_shape_of_the_result():
    out = norm_diff(torch.randn(3, 4, device="meta"), torch.randn(3, 4, device="meta"))
    assert out.shape == () and out.device.type == "meta" and out.dtype == torch.float32


@pytest.mark.parametrize("device", DEVICES)
def test_autograd_is_registered_in_cpp(device):
    """The backward is a C++ autograd kernel (NormDiffBackward): no Python runs per call. Without a gradient to
    record, no node is made at all."""
    a, b = inputs(10, torch.float32, device)
    out = norm_diff(a.requires_grad_(), b)
    assert "NormDiffBackward" in out.grad_fn.name()
    with torch.no_grad():
        assert norm_diff(a, b).grad_fn is None
    assert norm_diff(a.detach(), b).grad_fn is None


@pytest.mark.parametrize("device", DEVICES)
def test_gradcheck(device):
    a, b = inputs(37, torch.float64, device)
    a.requires_grad_()
    b.requires_grad_()
    assert torch.autograd.gradcheck(lambda x, y: norm_diff(x, y), (a, b))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_gradients_match_torch(device, dtype):
    a, b = inputs(1001, dtype, device)
    ours = [t.clone().requires_grad_() for t in (a, b)]
    theirs = [t.clone().requires_grad_() for t in (a, b)]
    norm_diff(*ours).mul(2.5).backward()
    torch.linalg.vector_norm(theirs[0] - theirs[1]).mul(2.5).backward()
    tol = {"rtol": 1e-2, "atol": 1e-3} if dtype in (torch.float16, torch.bfloat16) else {}
    torch.testing.assert_close(ours[0].grad, theirs[0].grad, **tol)
    torch.testing.assert_close(ours[1].grad, theirs[1].grad, **tol)


@pytest.mark.parametrize("device", DEVICES)
def test_gradient_at_zero_norm_is_what_torch_gives(device):
    a, _ = inputs(17, torch.float64, device)
    ours, theirs = a.clone().requires_grad_(), a.clone().requires_grad_()
    norm_diff(ours, a).backward()
    torch.norm(theirs - a).backward()
    assert torch.equal(theirs.grad, torch.zeros_like(a))  # torch defines it as 0, not NaN
    torch.testing.assert_close(ours.grad, theirs.grad)


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck(device, small):
    if small and device == "cuda":
        pytest.skip("opcheck on CUDA runs in the normal GPU tests; under compute-sanitizer it only adds time")
    a, b = inputs(129, torch.float32, device)
    torch.library.opcheck(torch.ops.norm_diff.norm_diff.default, (a, b, 3))
    torch.library.opcheck(
        torch.ops.norm_diff.norm_diff.default, (a.clone().requires_grad_(), b.clone().requires_grad_(), 3)
    )
    norm = torch.linalg.vector_norm(a - b)
    torch.library.opcheck(torch.ops.norm_diff.norm_diff_backward.default, (torch.ones_like(norm), a, b, norm))


@pytest.mark.parametrize("device", DEVICES)
def test_torch_compile_fullgraph(device, small):
    if small and device == "cuda":
        pytest.skip("torch.compile on CUDA runs in the normal GPU tests; under compute-sanitizer it only adds time")
    if device == "cpu" and torch.cuda.is_available():
        pytest.skip("the CUDA variant covers torch.compile here; inductor's CPU build takes a minute on a GPU machine")
    torch._dynamo.reset()
    a, b = inputs(1000, torch.float32, device)
    a.requires_grad_()

    @torch.compile(fullgraph=True)
    def loss(x, y):
        return norm_diff(x * 2, y) + 1

    out = loss(a, b)
    out.backward()
    expected = torch.linalg.vector_norm(a.detach() * 2 - b) + 1
    torch.testing.assert_close(out.detach(), expected)
    torch.testing.assert_close(a.grad, 2 * (a.detach() * 2 - b) / (expected - 1))
