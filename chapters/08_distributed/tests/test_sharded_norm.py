"""The sharded norm against a float64 norm on one device: uneven shards, an empty shard, one rank; its gradients.

Each test starts its own process group of CPU processes with Gloo (multigpu.ranks.run_ranks; a group of one rank
runs in the test's own process): what CI runs. The GPU versions, on NCCL, are in test_nccl.py.
"""

from __future__ import annotations

import pytest
import torch
from multigpu import shard_of
from multigpu.ranks import run_ranks
from rank_jobs import (
    bad_call,
    gradcheck_one_rank,
    norm_and_grads,
    norm_and_grads_every_dtype,
    opcheck_and_compile,
    whole_inputs,
)

from conftest import RTOL


def reference(n: int, dtype: torch.dtype, scale: float = 2.5):
    """‖a − b‖₂ in float64 on one device, and the gradients of scale·‖a − b‖ for the whole a and b."""
    a, b = (t.double().requires_grad_() for t in whole_inputs(n, dtype))
    norm = torch.linalg.vector_norm(a - b)
    (norm * scale).backward()
    return norm.detach(), a.grad, b.grad


def check(results, n, dtype, sizes=None):
    norm, grad_a, grad_b = reference(n, dtype)
    for result in results:
        assert result["norm"].dtype == dtype and result["norm"].shape == ()
        torch.testing.assert_close(result["norm"].double(), norm, rtol=RTOL[dtype], atol=0)
    assert torch.equal(results[0]["norm"], results[-1]["norm"]), "the ranks disagree on the norm"
    assert sum(r["n"] for r in results) == n
    gradient_tol = (
        {"rtol": 1e-2, "atol": 1e-3} if dtype in (torch.float16, torch.bfloat16) else {"rtol": 1e-5, "atol": 0}
    )
    pieces = sizes or [r["n"] for r in results]
    for result, expected_a, expected_b in zip(results, grad_a.split(pieces), grad_b.split(pieces), strict=True):
        torch.testing.assert_close(result["grad_a"].double(), expected_a, **gradient_tol)
        torch.testing.assert_close(result["grad_b"].double(), expected_b, **gradient_tol)


DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def test_two_ranks_uneven_shards_every_dtype():
    n = 10_001  # shard_of gives 5001 and 5000
    results = run_ranks(norm_and_grads_every_dtype, 2, args=(n, DTYPES))  # one process group for all dtypes
    for dtype in DTYPES:
        check([rank_results[dtype] for rank_results in results], n, dtype)


def test_an_empty_shard_still_joins():
    n = 7
    check(run_ranks(norm_and_grads, 2, args=(n, torch.float32, [n, 0])), n, torch.float32, [n, 0])


def test_one_rank_is_the_single_device_norm():
    n = 4097
    check(run_ranks(norm_and_grads, 1, args=(n, torch.float32)), n, torch.float32)


def test_three_ranks_more_than_elements():
    n = 2  # shard_of gives 1, 1 and 0 elements
    check(run_ranks(norm_and_grads, 3, args=(n, torch.float64)), n, torch.float64)


def test_gradcheck_through_the_collective():
    assert run_ranks(gradcheck_one_rank, 1) == [True]


def test_the_op_passes_opcheck_and_compiles_whole():
    """Registered with torch.library (schema, fake, autograd), the op is visible to opcheck and to the compiler."""
    for rank, result in enumerate(run_ranks(opcheck_and_compile, 2)):
        torch.testing.assert_close(result["compiled"], result["eager"].detach(), msg=f"rank {rank}")


def test_shard_of_splits_like_tensor_split():
    t = torch.arange(10)
    assert [shard_of(t, r, 3).tolist() for r in range(3)] == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]
    assert shard_of(t.view(2, 5), 1, 2).tolist() == [5, 6, 7, 8, 9]
    with pytest.raises(ValueError, match="rank must be in 0..2"):
        shard_of(t, 3, 3)


def test_without_a_process_group_the_error_says_what_to_do():
    from multigpu import sharded_norm_diff

    with pytest.raises(RuntimeError, match="init_process_group"):
        sharded_norm_diff(torch.randn(3), torch.randn(3))


@pytest.mark.parametrize(
    "case, error, words",
    [
        ("not_a_tensor", "TypeError", "a must be a torch.Tensor"),
        ("shapes", "ValueError", "same shape"),
        ("dtype", "TypeError", "only float32"),
    ],
)
def test_bad_inputs_name_the_problem(case, error, words):
    name, message = run_ranks(bad_call, 1, args=(case,))[0]
    assert name == error and words in message, message
