import pytest
import torch

# Every dtype the sharded norm takes, with the tolerance against a float64 norm of the same (rounded) inputs:
# the sum is float64 across ranks; what is left is each thread's fp32 running sum and rounding the answer.
RTOL = {torch.float32: 2e-6, torch.float64: 1e-12, torch.float16: 1e-3, torch.bfloat16: 8e-3}


@pytest.fixture
def rtol():
    return RTOL
