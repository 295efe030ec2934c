"""Bad input gives a clear Python error naming the argument, before anything is launched."""

import pytest
import torch
from square_bias_cuda import ops, square_bias


def test_mixed_dtypes():
    with pytest.raises(TypeError, match="x and b must have the same dtype"):
        square_bias(torch.ones(3), torch.ones(3, dtype=torch.float64))


def test_unsupported_dtype():
    with pytest.raises(TypeError, match="x has dtype int32"):
        square_bias(torch.ones(3, dtype=torch.int32), torch.ones(3, dtype=torch.int32))


def test_not_a_tensor():
    with pytest.raises(TypeError, match="b must be a torch.Tensor"):
        square_bias(torch.ones(3), 1.0)


def test_incompatible_shapes():
    with pytest.raises(ValueError, match=r"b of shape \(4,\) cannot be broadcast to x's shape \(2, 3\)"):
        square_bias(torch.ones(2, 3), torch.ones(4))
    with pytest.raises(ValueError, match="cannot be broadcast"):  # b may not grow x
        square_bias(torch.ones(3), torch.ones(2, 3))


def test_device_mismatch_cpu_meta():
    """Any two devices: the check fires before any kernel (here b is on the meta device)."""
    with pytest.raises(ValueError, match="x and b must have the same device"):
        square_bias(torch.ones(3), torch.ones(3, device="meta"))


def test_cpp_checks_back_up_the_python_ones():
    """Called directly, the op's C++ side still refuses bad input with a message (RuntimeError from TORCH_CHECK)."""
    with pytest.raises(RuntimeError, match="x and b must have the same dtype"):
        ops.square_bias(torch.ones(3), torch.ones(3, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="cannot be broadcast"):
        ops.square_bias(torch.ones(2, 3), torch.ones(4))
    with pytest.raises(RuntimeError, match="only float32, float64, float16 and bfloat16"):
        ops.square_bias(torch.ones(3, dtype=torch.int64), torch.ones(3, dtype=torch.int64))


@pytest.mark.gpu
def test_device_mismatch_cuda_cpu():
    with pytest.raises(ValueError, match="x and b must have the same device"):
        square_bias(torch.ones(3, device="cuda"), torch.ones(3))
    with pytest.raises(RuntimeError, match="must be on the same device"):
        ops.square_bias(torch.ones(3, device="cuda"), torch.ones(3))
