"""The seed's grid-stride loop (the exercise) checked on the CPU: add2_seed_emulate_f32 runs the very function the
kernel runs, add2_seed_thread() in src/add2_seed.cu (exercises/add2_seed.cu under EXERCISE=1), for every (block,
thread) of a launch, so these tests pass or fail with the student's loop — no GPU needed."""

import add2
import pytest
import torch

# (n, grid, block): one element per thread; grids too small (every thread loops); too large (idle threads);
# block sizes that are not powers of two; n smaller than one block; n = 0 and 1.
CASES = [
    (0, 1, 1024),
    (1, 1, 1024),
    (1000, 1, 1024),
    (4097, 5, 1024),  # ceil(4097 / 1024) = 5: the seed's launch
    (4097, 2, 1024),  # 2 blocks of 1024 threads cover 4097 elements only by looping
    (4097, 3, 96),
    (5000, 1, 7),
    (123, 64, 32),  # more threads than elements
    (100_003, 13, 256),
]


@pytest.mark.parametrize("n,grid,block", CASES)
def test_loop_covers_every_element(n, grid, block):
    g = torch.Generator().manual_seed(n + grid + block)
    a, b = torch.randn(n, generator=g), torch.randn(n, generator=g)
    c = add2.emulate_seed(a, b, grid=grid, block=block)
    assert not c.isnan().any(), f"{int(c.isnan().sum())} of {n} elements were never written"
    torch.testing.assert_close(c, a + b, rtol=0, atol=0)


def test_seed_pitfall_wrong_n_leaves_elements_unwritten():
    """PITFALL (seed 004): n is passed separately from the tensors. Pass n - 5 and the last 5 outputs keep
    whatever was there (NaN here) — no error, no warning."""
    n = 3000
    a, b = torch.randn(n), torch.randn(n)
    c = add2.emulate_seed(a, b, grid=3, block=1024, n=n - 5)
    torch.testing.assert_close(c[: n - 5], (a + b)[: n - 5], rtol=0, atol=0)
    assert c[n - 5 :].isnan().all(), "elements past the wrong n should be left unwritten"
    with pytest.raises(AssertionError):
        torch.testing.assert_close(c, a + b)
