"""Every rung of the ladder on the GPU: values, the seed's pitfall, determinism, accuracy at 2^26, > 2^31 elements,
and the JIT build."""

from __future__ import annotations

import pytest
import torch
from helpers import DTYPES, assert_norm_close, inputs, reference
from norm_diff import norm_diff

pytestmark = pytest.mark.gpu
RUNGS = [1, 2, 3, 4]  # rung 0 is the pitfall, tested below


@pytest.mark.parametrize("version", RUNGS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("n", [0, 1, 7, 31, 4097, 65_536 * 3 + 5])
def test_every_rung_matches_float64_reference(version, dtype, n, small):
    if small and n > 4097:
        pytest.skip("large sizes are covered outside compute-sanitizer")
    a, b = inputs(n, dtype, "cuda")
    assert_norm_close(norm_diff(a, b, version=version), a, b)


@pytest.mark.parametrize("version", RUNGS)
def test_unaligned_and_strided(version):
    a, b = inputs(100_003, torch.float16, "cuda")
    assert_norm_close(norm_diff(a[1:], b[:-1], version=version), a[1:], b[:-1])  # not 16-byte aligned
    assert_norm_close(norm_diff(a[::3], b[::3], version=version), a[::3], b[::3])


def test_pitfall_seed_design_is_wrong_past_4096_elements():
    a, b = inputs(4096, torch.float32, "cuda")
    assert_norm_close(norm_diff(a, b, version=0), a, b)  # up to its buffer's size it is right...
    a, b = inputs(4097, torch.float32, "cuda")
    wrong = norm_diff(a, b, version=0).item()
    right = reference(a, b).item()
    # ...one more element and it is silently wrong: its 64×64 buffer only ever holds the first 4096.
    assert abs(wrong - right) > 1e-6 * right
    assert wrong == pytest.approx(reference(a[:4096], b[:4096]).item(), rel=1e-5)
    a, b = inputs(1 << 16, torch.float32, "cuda")
    assert norm_diff(a, b, version=0).item() < 0.5 * reference(a, b).item()


@pytest.mark.parametrize("version", RUNGS)
def test_same_bits_on_every_run(version, small):
    a, b = inputs(1 << (16 if small else 22), torch.float32, "cuda")
    first = norm_diff(a, b, version=version)
    for _ in range(3 if small else 20):
        assert torch.equal(norm_diff(a, b, version=version), first)  # no atomics on floats: deterministic


@pytest.mark.parametrize("version", RUNGS)
def test_relative_error_at_2_26_fp32(version, small):
    if small:
        pytest.skip("2^26 elements take too long under compute-sanitizer")
    a = torch.randn(1 << 26, device="cuda")
    b = torch.randn(1 << 26, device="cuda")
    exact = torch.linalg.vector_norm(a.double() - b.double()).item()
    error = abs(norm_diff(a, b, version=version).item() - exact) / exact
    assert error <= 1e-6, f"rung {version}: relative error {error:.2e}"


def test_backward_on_gpu_streams():
    a, b = inputs(5000, torch.float32, "cuda")
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())  # a and b were made on the default stream
    with torch.cuda.stream(stream):  # kernels must run on PyTorch's current stream
        a2, b2 = a.clone().requires_grad_(), b.clone()
        norm_diff(a2, b2).backward()
    stream.synchronize()
    torch.testing.assert_close(a2.grad, (a - b) / reference(a, b).float().cuda())


@pytest.mark.slow
@pytest.mark.big_memory
def test_more_than_2_31_float16_elements(small):
    if small:
        pytest.skip("too large for compute-sanitizer")
    n = (1 << 31) + 4099
    a = torch.randn(n, device="cuda", dtype=torch.float16)
    b = torch.zeros(n, device="cuda", dtype=torch.float16)
    b[-5:] = 7.0  # something past index 2^31 that a 32-bit index would miss or misplace
    exact = (
        sum((x.double() - y.double()).square().sum().item() for x, y in zip(a.split(1 << 28), b.split(1 << 28))) ** 0.5
    )
    for version in RUNGS:
        got = norm_diff(a, b, version=version).item()
        assert got == pytest.approx(exact, rel=1e-3), f"rung {version}"
    norm = norm_diff(a, b)
    grad_a = torch.ops.norm_diff.norm_diff_backward(torch.ones_like(norm), a, b, norm)
    torch.testing.assert_close(grad_a[-5:], ((a[-5:].float() - 7.0) / norm.float()).half(), rtol=1e-2, atol=1e-3)


@pytest.mark.slow
def test_jit_build_gives_the_same_op(small):
    if small:
        pytest.skip("the JIT build is tested outside compute-sanitizer")
    from norm_diff.jit import load_jit

    ops = load_jit()  # compiles the same sources with torch.utils.cpp_extension.load
    a, b = inputs(100_003, torch.float32, "cuda")
    for version in range(5):
        assert torch.equal(ops.norm_diff(a, b, version), norm_diff(a, b, version=version))
    cpu = [t.cpu() for t in (a, b)]
    assert torch.equal(ops.norm_diff(*cpu, 3), norm_diff(*cpu))


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_every_rung_captures_into_a_cuda_graph(version):
    """Captured once, replayed with new data: the same result as eager calls (course.graphs). Rungs 3-4 reset
    their finished-blocks counter inside the captured work, so every replay starts from zero."""
    from course.graphs import check_capture

    def make():
        return (torch.randn(100_003, device="cuda"), torch.randn(100_003, device="cuda"))

    check_capture(lambda a, b: norm_diff(a, b, version), make, rtol=1e-5, atol=0)
