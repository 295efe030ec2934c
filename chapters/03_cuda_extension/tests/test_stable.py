"""The appendix: the forward op built against LibTorch's stable ABI (stable/src/stable_binding.cpp)."""

import shutil
import subprocess
from pathlib import Path

import pytest
import torch

from conftest import ALL_DTYPES, DEVICES, reference_forward

UNAVAILABLE = Path(__file__).resolve().parents[1] / "build" / "stable-unavailable.txt"


@pytest.fixture(scope="module")
def stable():
    if UNAVAILABLE.exists():
        pytest.skip(f"this torch cannot build the stable-ABI variant: {UNAVAILABLE.read_text().strip()[:300]}")
    import square_bias_cuda_stable

    return square_bias_cuda_stable


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("x_shape,b_shape", [((0,), (0,)), ((1025,), ()), ((500, 500), (500,)), ((7, 9), (7, 9))])
def test_stable_forward_matches_eager(stable, device, x_shape, b_shape):
    dtypes = ALL_DTYPES if device == "cuda" else [torch.float32, torch.float64]
    for dtype in dtypes:
        x = torch.randn(x_shape, device=device).to(dtype)
        b = torch.randn(b_shape, device=device).to(dtype)
        torch.testing.assert_close(stable.square_bias(x, b), reference_forward(x, b))
        torch.testing.assert_close(
            stable.square_bias(x.t() if x.dim() == 2 else x, b.t() if b.dim() == 2 else b),
            reference_forward(x.t(), b.t()) if x.dim() == 2 else reference_forward(x, b),
        )


@pytest.mark.parametrize("device", DEVICES)
def test_stable_opcheck(stable, device):
    x = torch.randn(5, 7, device=device)
    torch.library.opcheck(torch.ops.square_bias_cuda_stable.square_bias, (x, torch.randn(7, device=device)))


def test_stable_errors(stable):
    """Checked once, in C++, with the stable ABI's STD_TORCH_CHECK: it throws std::runtime_error, which Python
    sees as RuntimeError (the stable headers have no TypeError/ValueError variant)."""
    with pytest.raises(RuntimeError, match="x and b must have the same dtype, but x has Float and b has Double"):
        stable.square_bias(torch.ones(3), torch.ones(3, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="x has dtype Long, but only float32, float64, float16, bfloat16"):
        stable.square_bias(torch.ones(3, dtype=torch.int64), torch.ones(3, dtype=torch.int64))
    with pytest.raises(RuntimeError, match="a scalar, a row or of x's shape"):
        stable.square_bias(torch.ones(4, 3), torch.ones(4, 1))  # broadcasts, but as a column


@pytest.mark.parametrize("x_shape,b_shape", [((2, 3), (4,)), ((3,), (2, 3)), ((4, 3), (2, 1))], ids=str)
def test_stable_refuses_a_bad_broadcast(stable, x_shape, b_shape):
    """course_broadcasts_to (common/include/course_broadcast.h, plain C) decides, as in the main op."""
    with pytest.raises(RuntimeError, match=r"b of shape \(.*\) cannot be broadcast to x's shape \("):
        torch.ops.square_bias_cuda_stable.square_bias(torch.ones(x_shape), torch.ones(b_shape))


@pytest.mark.skipif(shutil.which("nm") is None, reason="nm (binutils) not installed")
def test_stable_library_uses_no_cpp_torch_symbols(stable):
    """What makes it survive upgrades: it imports only C functions from libtorch (aoti_torch_*, torch_*), none of
    the C++ symbols (c10::, at::, torch::) whose names and layouts change between releases. The main module does."""
    from course.build import import_extension

    def cpp_torch_symbols(path):
        out = subprocess.run(["nm", "-D", "--undefined-only", path], capture_output=True, text=True, check=True)
        return [s for s in out.stdout.split() if s.startswith(("_ZN3c10", "_ZN2at", "_ZN5torch"))]

    assert cpp_torch_symbols(stable._C.__file__) == []
    assert cpp_torch_symbols(import_extension("square_bias_cuda").__file__) != []
    assert stable._C.__file__.endswith(".abi3.so")
