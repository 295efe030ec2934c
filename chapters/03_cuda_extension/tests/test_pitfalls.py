"""The seed's bugs, kept as pitfall kernels (src/square_bias_kernels.cu), each shown failing beside the fix."""

import pytest
import torch
from square_bias_cuda import ops, square_bias

from conftest import reference_forward

pytestmark = pytest.mark.gpu


def test_pitfall_seed_index_with_4_thread_blocks_is_wrong():
    """Seed 000, 8.1.2: index = blockIdx.x + blockDim.x * blockIdx.y, <<<dim3(rows, cols), 4>>>. The 4 threads of
    a block write the same element, so most of y is never written (left at 0 here)."""
    x = torch.randn(500, 500, device="cuda")
    b = torch.randn(500, 500, device="cuda")
    expected = reference_forward(x, b)
    wrong = ops.pitfall_seed_index(x, b)
    torch.cuda.synchronize()
    matching = torch.isclose(wrong, expected).float().mean().item()
    assert matching < 0.02, f"the seed's index should miss most elements, yet {matching:.1%} match"
    # index = bx + 4 by with bx < 500, by < 500: nothing past element 499 + 4 * 499 = 2,495 is ever written
    assert torch.count_nonzero(wrong.flatten()[2496:]) == 0
    torch.testing.assert_close(square_bias(x, b), expected)  # the fix: a 1D grid-stride loop


def test_pitfall_2d_grid_by_rows_fails_past_65535_rows(small):
    """A grid with one block row per tensor row: gridDim.y may not exceed 65,535. The launch is refused (CUDA 13
    reports cudaErrorInvalidValue, older toolkits cudaErrorInvalidConfiguration)."""
    ok = torch.randn(65535, 4, device="cuda")
    torch.testing.assert_close(ops.pitfall_rows_grid(ok, ok), reference_forward(ok, ok))  # at the limit: fine
    if small:
        pytest.skip("under compute-sanitizer the refused launch counts as an API error; shown in the normal run")
    x = torch.randn(65536, 4, device="cuda")
    b = torch.randn(65536, 4, device="cuda")
    with pytest.raises(RuntimeError, match="cudaErrorInvalid(Configuration|Value)"):
        ops.pitfall_rows_grid(x, b)
    torch.testing.assert_close(square_bias(x, b), reference_forward(x, b))  # the fix: grid sized from the SMs
