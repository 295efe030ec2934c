"""add2's kernels against torch.add on the GPU: awkward sizes, every dtype, misaligned and non-contiguous inputs,
gradients, opcheck, streams, the seed's wrong-n pitfall, and more than 2^31 elements."""

import add2
import pytest
import torch

pytestmark = pytest.mark.gpu

KERNELS = {
    "vectorized": add2.add2,
    "seed": add2.add2_seed,
    "capped_8_per_sm": lambda a, b: add2.add2_capped(a, b, 8),
    "capped_1_per_sm": lambda a, b: add2.add2_capped(a, b, 1),  # few threads: every thread loops many times
}
# 0, 1, around the vector widths (2, 4, 8 elements), around the block sizes (256, 1024), odd, primes, and a size
# needing more than one grid-stride pass with the capped grids.
SIZES = [0, 1, 2, 3, 5, 7, 8, 9, 15, 17, 255, 257, 1023, 1024, 1025, 4099, 65_537, 1_000_003]
SMALL_SIZES = [0, 1, 3, 9, 1025, 4099]


def _sizes(small):
    return SMALL_SIZES if small else SIZES


def _inputs(n, dtype, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(n, generator=g, device="cuda").to(dtype)
    b = torch.randn(n, generator=g, device="cuda").to(dtype)
    return a, b


def _poison_allocator(like):
    """Free a NaN-filled block of the output's size, so the op's output (taken from PyTorch's caching allocator)
    starts as NaN and an element the kernel never writes cannot pass by luck."""
    torch.full_like(like, float("nan"), memory_format=torch.contiguous_format)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("dtype", add2.DTYPES, ids=str)
def test_matches_torch_add(kernel, dtype, small):
    for n in _sizes(small):
        a, b = _inputs(n, dtype, seed=n)
        expected = a + b
        _poison_allocator(a)
        torch.testing.assert_close(KERNELS[kernel](a, b), expected, msg=lambda m, n=n: f"n={n}: {m}")


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("which", ["a", "b", "both"])
def test_misaligned_views_take_the_scalar_path(kernel, dtype, which, small):
    """A view that starts one element into its storage is not 16-byte aligned: version 2 must notice and use
    one-element steps. (Version 1 has no vectors and must be right anyway.)"""
    for n in [1, 7, 9, 1000, 4099] if small else [1, 7, 9, 1000, 4099, 100_001]:
        base_a, base_b = _inputs(n + 1, dtype, seed=n)
        a = base_a[1:] if which in ("a", "both") else base_a[:n]
        b = base_b[1:] if which in ("b", "both") else base_b[:n]
        assert a.is_contiguous() and b.is_contiguous()
        expected = a + b
        _poison_allocator(a)
        torch.testing.assert_close(KERNELS[kernel](a, b), expected)


@pytest.mark.parametrize("kernel", KERNELS)
def test_non_contiguous_and_nd(kernel):
    a = torch.randn(65, 33, device="cuda").t()  # transposed: not contiguous
    b = torch.randn(33, 65, device="cuda")
    out = KERNELS[kernel](a, b)
    assert out.shape == (33, 65)
    torch.testing.assert_close(out, a + b)
    x, y = _inputs(3 * 5 * 7, torch.float16)
    torch.testing.assert_close(KERNELS[kernel](x.view(3, 5, 7), y.view(3, 5, 7)), (x + y).view(3, 5, 7))


def test_runs_on_the_current_stream():
    a, b = _inputs(1 << 20, torch.float32)
    expected = a + b
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        outs = [add2.add2(a, b), add2.add2_seed(a, b)]
    stream.synchronize()
    for out in outs:
        torch.testing.assert_close(out, expected)


def test_device_mismatch():
    with pytest.raises(ValueError, match="a and b must have the same device"):
        add2.add2(torch.ones(4, device="cuda"), torch.ones(4))


@pytest.mark.parametrize("op", [add2.add2, add2.add2_seed, lambda a, b: add2.add2_capped(a, b, 8)])
def test_gradcheck(op):
    a = torch.randn(37, dtype=torch.float64, device="cuda", requires_grad=True)
    b = torch.randn(37, dtype=torch.float64, device="cuda", requires_grad=True)
    assert torch.autograd.gradcheck(op, (a, b))


def test_opcheck():
    a, b = _inputs(1000, torch.float32)
    torch.library.opcheck(torch.ops.add2.add2.default, (a, b))
    torch.library.opcheck(torch.ops.add2.add2_seed.default, (a, b))
    torch.library.opcheck(torch.ops.add2.add2_capped.default, (a, b, 8))
    torch.library.opcheck(torch.ops.add2.pitfall_seed_n.default, (torch.empty_like(a), a, b, 1000))


def test_seed_pitfall_wrong_n_leaves_elements_unwritten():
    """PITFALL (seed 004): the seed passed n separately from the tensors. n = numel - 5 silently leaves the last 5
    outputs as they were (NaN here). (n > numel would read and write out of bounds: never run that.)"""
    n = 5000
    a, b = _inputs(n, torch.float32)
    c = torch.full_like(a, float("nan"))
    add2.pitfall_seed_n(c, a, b, n - 5)
    torch.testing.assert_close(c[: n - 5], (a + b)[: n - 5])
    assert c[n - 5 :].isnan().all()
    # the fix: n comes from the tensors
    torch.testing.assert_close(add2.add2_seed(a, b), a + b)


@pytest.mark.slow
@pytest.mark.big_memory
@pytest.mark.parametrize("kernel", ["seed", "vectorized"])
def test_more_than_2_31_elements(kernel):
    """Indices past 2^31 - 1: int would overflow; the kernels use int64_t. Small integers add exactly in fp16, so
    the result must equal torch.add bit for bit."""
    n = (1 << 31) + 7
    a = torch.randint(0, 100, (n,), device="cuda", dtype=torch.int8).to(torch.float16)
    b = torch.randint(0, 100, (n,), device="cuda", dtype=torch.int8).to(torch.float16)
    out = KERNELS[kernel](a, b)
    assert torch.equal(out, a + b)


@pytest.mark.parametrize("op", [add2.add2, add2.add2_seed])
def test_captures_into_a_cuda_graph(op):
    """Captured once, replayed with new data: the same results as eager calls (course.graphs)."""
    from course.graphs import check_capture

    check_capture(op, lambda: (torch.randn(10_007, device="cuda"), torch.randn(10_007, device="cuda")))


def test_errors_are_the_same_through_the_function_and_the_op():
    """One check, in C++: add2.add2 and torch.ops.add2.add2 raise the same exception with the same message."""
    a, b = torch.randn(1000, device="cuda"), torch.randn(1000, device="cuda")
    for call in (add2.add2, torch.ops.add2.add2.default, torch.ops.add2.add2):
        with pytest.raises(
            ValueError, match=r"^a and b must have the same shape, but a has \(1000,\) and b has \(10,\)$"
        ):
            call(a, b[:10])
        with pytest.raises(ValueError, match="^a and b must have the same device, but a has cuda:0 and b has cpu$"):
            call(a, b.cpu())
        with pytest.raises(TypeError, match="^a and b must have the same dtype, but a has float32 and b has float64$"):
            call(a, b.double())


def test_autograd_and_compile_through_the_public_function():
    """add2.add2 is the op: autograd is the dispatcher's (Add2Backward, in C++), and torch.compile traces the op
    with no graph break."""
    a, b = torch.randn(1000, device="cuda"), torch.randn(1000, device="cuda")
    x = a.clone().requires_grad_()
    out = add2.add2(x, b)
    assert "Add2Backward" in out.grad_fn.name()
    out.sum().backward()
    torch.testing.assert_close(x.grad, torch.ones_like(a))

    torch._dynamo.reset()
    compiled = torch.compile(lambda p, q: add2.add2(p * 2, q), fullgraph=True)
    torch.testing.assert_close(compiled(a, b), a * 2 + b)
