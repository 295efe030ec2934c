"""Bad input gives a clear Python error naming the argument, before anything is launched.

The op checks its inputs once, in C++ (src/binding.cpp, with common/include/course_torch.h): TypeError for a
dtype, ValueError for a device or a shape, with the messages of Python's course.checks. square_bias() calls the op
and checks nothing itself; the fake implementation (meta tensors, torch.compile) checks with course.checks."""

import pytest
import torch
from square_bias_cuda import ops, square_bias
from square_bias_cuda.ops import check_inputs


def test_mixed_dtypes():
    with pytest.raises(TypeError, match="x and b must have the same dtype, but x has float32 and b has float64"):
        square_bias(torch.ones(3), torch.ones(3, dtype=torch.float64))


def test_unsupported_dtype():
    with pytest.raises(
        TypeError, match="x has dtype int32, but only float32, float64, float16, bfloat16 are supported"
    ):
        square_bias(torch.ones(3, dtype=torch.int32), torch.ones(3, dtype=torch.int32))


def test_not_a_tensor():
    """Refused by the dispatcher itself, when it matches the arguments against the schema: before our code."""
    with pytest.raises(RuntimeError, match="Expected a value of type 'Tensor' for argument 'b'"):
        square_bias(torch.ones(3), 1.0)


def test_incompatible_shapes():
    with pytest.raises(ValueError, match=r"b of shape \(4,\) cannot be broadcast to x's shape \(2, 3\)"):
        square_bias(torch.ones(2, 3), torch.ones(4))
    with pytest.raises(ValueError, match="cannot be broadcast"):  # b may not grow x
        square_bias(torch.ones(3), torch.ones(2, 3))


def test_device_mismatch_cpu_meta():
    """Any two devices: the check fires before any kernel (here b is on the meta device, so the fake
    implementation runs, and checks with course.checks)."""
    with pytest.raises(ValueError, match="x and b must have the same device, but x has cpu and b has meta"):
        square_bias(torch.ones(3), torch.ones(3, device="meta"))


@pytest.mark.parametrize(
    "x,b,error",
    [
        (torch.ones(3, dtype=torch.int64), torch.ones(3, dtype=torch.int64), TypeError),
        (torch.ones(3), torch.ones(3, dtype=torch.bool), TypeError),
        (torch.ones(3), torch.ones(3, dtype=torch.float64), TypeError),
        (torch.ones(2, 3), torch.ones(4), ValueError),
        (torch.ones(3), torch.ones(2, 3), ValueError),
        (torch.ones(4, 3), torch.ones(2, 1), ValueError),
    ],
    ids=["int64", "b-bool", "mixed-dtypes", "shape", "b-more-dims", "column"],
)
def test_cpp_and_python_checks_say_the_same(x, b, error):
    """The C++ op, called directly (torch.ops, no Python in between), and course.checks (check_inputs, which the
    fake implementation runs) raise the same exception type with the same message."""
    with pytest.raises(error) as from_cpp:
        ops.square_bias(x, b)
    with pytest.raises(error) as from_python:
        check_inputs(x, b)
    assert str(from_cpp.value) == str(from_python.value)


def test_cpp_backward_ops_check_their_inputs():
    with pytest.raises(
        ValueError, match=r"grad_y and x must have the same shape, but grad_y has \(3,\) and x has \(2,\)"
    ):
        ops.square_bias_grad_x(torch.ones(3), torch.ones(2))
    with pytest.raises(TypeError, match="grad_y and x must have the same dtype"):
        ops.square_bias_backward(torch.ones(2, dtype=torch.float64), torch.ones(2), [])
    with pytest.raises(ValueError, match=r"b of shape \(3,\) cannot be broadcast to x's shape \(2,\)"):
        ops.square_bias_backward(torch.ones(2), torch.ones(2), [3])


@pytest.mark.gpu
def test_device_mismatch_cuda_cpu():
    with pytest.raises(ValueError, match="x and b must have the same device, but x has cuda:0 and b has cpu"):
        square_bias(torch.ones(3, device="cuda"), torch.ones(3))
    with pytest.raises(ValueError, match="x and b must have the same device"):
        ops.square_bias(torch.ones(3), torch.ones(3, device="cuda"))
    with pytest.raises(ValueError, match="grad_y and x must have the same device"):
        ops.square_bias_backward(torch.ones(3), torch.ones(3, device="cuda"), [3])


@pytest.mark.gpu
def test_cuda_checks_say_the_same_as_python():
    x, b = torch.ones(2, 3, device="cuda"), torch.ones(4, device="cuda")
    with pytest.raises(ValueError) as from_cpp:
        ops.square_bias(x, b)
    with pytest.raises(ValueError) as from_python:
        check_inputs(x, b)
    assert str(from_cpp.value) == str(from_python.value)
    with pytest.raises(TypeError, match="x has dtype int32"):
        ops.square_bias(x.int(), b.int())
