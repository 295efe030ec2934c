"""square_bias against PyTorch: values, gradients, broadcasts, dtypes, layouts, empty tensors, bad inputs,
opcheck and torch.compile."""

import pytest
import torch
from square_bias import SquareBias, square_bias, square_bias_autograd_function
from square_bias.ops import check_inputs

DTYPES = [torch.float32, torch.float64]

# (x's shape, b's shape): scalar, row, same shape, column (materialised), middle broadcast, leading 1s, 0-d x,
# odd sizes, a row wider than the C core's 1024-column block, and empty tensors.
SHAPES = [
    ((7,), ()),
    ((7,), (1,)),
    ((5, 3), (3,)),
    ((5, 3), (5, 3)),
    ((5, 3), (5, 1)),
    ((4, 3, 2), (3, 1)),
    ((4, 3, 2), (1, 3, 2)),
    ((2, 3, 5), (1, 1, 5)),
    ((), ()),
    ((1,), ()),
    ((3, 2500), (2500,)),
    ((17, 1031), (1031,)),
    ((1 << 16,), ()),
    ((0,), ()),
    ((0, 3), (3,)),
    ((4, 0), (4, 1)),
    ((4, 0), (0,)),
]


def reference(x, b):
    return x * x + b


def make(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, dtype=dtype, generator=g)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("x_shape,b_shape", SHAPES, ids=str)
def test_values_and_gradients_match_pytorch(x_shape, b_shape, dtype):
    x = make(x_shape, dtype, 0).requires_grad_()
    b = make(b_shape, dtype, 1).requires_grad_()
    y = square_bias(x, b)
    x_ref = x.detach().clone().requires_grad_()
    b_ref = b.detach().clone().requires_grad_()
    y_ref = reference(x_ref, b_ref)
    torch.testing.assert_close(y, y_ref)
    assert y.shape == y_ref.shape and y.dtype == dtype

    grad_y = make(y.shape, dtype, 2)
    y.backward(grad_y)
    y_ref.backward(grad_y)
    torch.testing.assert_close(x.grad, x_ref.grad)
    torch.testing.assert_close(b.grad, b_ref.grad)
    assert b.grad.shape == b.shape


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_non_contiguous_inputs(dtype):
    base = make((6, 10), dtype, 3)
    x = base.t()[:, ::2]  # transposed and strided: shape (10, 3)
    b = make((3, 4), dtype, 4)[:, 1]  # a strided row of 3
    assert not x.is_contiguous() and not b.is_contiguous()
    torch.testing.assert_close(square_bias(x, b), reference(x, b))
    x = x.detach().requires_grad_()
    b = b.detach().requires_grad_()
    grad_y = make((3, 10), dtype, 5).t()  # a non-contiguous incoming gradient
    square_bias(x, b).backward(grad_y)
    torch.testing.assert_close(x.grad, 2 * x.detach() * grad_y)
    torch.testing.assert_close(b.grad, grad_y.sum(0))


def test_expanded_gradient_from_sum():
    # y.sum().backward() hands the op a stride-0 gradient of ones.
    x = make((64, 33), torch.float64, 6).requires_grad_()
    b = make((33,), torch.float64, 7).requires_grad_()
    square_bias(x, b).sum().backward()
    torch.testing.assert_close(x.grad, 2 * x.detach())
    torch.testing.assert_close(b.grad, torch.full((33,), 64.0, dtype=torch.float64))


@pytest.mark.parametrize("x_needs,b_needs", [(True, False), (False, True)])
def test_only_one_input_needs_grad(x_needs, b_needs):
    x = make((8, 5), torch.float64, 8).requires_grad_(x_needs)
    b = make((5,), torch.float64, 9).requires_grad_(b_needs)
    square_bias(x, b).sum().backward()
    assert (x.grad is not None) == x_needs and (b.grad is not None) == b_needs


def test_float32_scalar_bias_gradient_is_summed_accurately():
    # 2^20 float32 values summed into one number: the C core accumulates in double.
    grad_y = make((1 << 20,), torch.float32, 10)
    x = torch.zeros(1 << 20, requires_grad=True)
    b = torch.zeros((), requires_grad=True)
    square_bias(x, b).backward(grad_y)
    exact = grad_y.double().sum().float()
    torch.testing.assert_close(b.grad, exact, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("b_shape", [(), (4,), (3, 1), (3, 4)], ids=str)
def test_gradcheck(b_shape):
    x = make((3, 4), torch.float64, 11).requires_grad_()
    b = make(b_shape, torch.float64, 12).requires_grad_()
    assert torch.autograd.gradcheck(square_bias, (x, b))


@pytest.mark.parametrize("x_shape,b_shape", [((3, 4), (4,)), ((3, 4), (3, 1)), ((2, 3), ()), ((0, 2), (2,))], ids=str)
def test_opcheck(x_shape, b_shape):
    x = make(x_shape, torch.float32, 13).requires_grad_()
    b = make(b_shape, torch.float32, 14).requires_grad_()
    torch.library.opcheck(torch.ops.square_bias.square_bias, (x, b))
    grad_y = make(x_shape, torch.float32, 15)
    torch.library.opcheck(torch.ops.square_bias.square_bias_backward, (grad_y, x.detach(), list(b_shape)))


def test_torch_compile_fullgraph():
    def f(x, b):
        return square_bias(x, b).sin() * 2  # the op in the middle of a graph

    compiled = torch.compile(f, fullgraph=True, backend="aot_eager")
    x = make((6, 5), torch.float32, 16).requires_grad_()
    b = make((5,), torch.float32, 17).requires_grad_()
    y = compiled(x, b)
    torch.testing.assert_close(y, (x * x + b).sin() * 2)
    y.sum().backward()
    x_ref = x.detach().requires_grad_()
    b_ref = b.detach().requires_grad_()
    ((x_ref * x_ref + b_ref).sin() * 2).sum().backward()
    torch.testing.assert_close(x.grad, x_ref.grad)
    torch.testing.assert_close(b.grad, b_ref.grad)


def test_autograd_function_way_gives_the_same_result():
    x = make((4, 6), torch.float64, 18).requires_grad_()
    b = make((6,), torch.float64, 19).requires_grad_()
    assert torch.autograd.gradcheck(square_bias_autograd_function, (x, b))
    torch.testing.assert_close(square_bias_autograd_function(x, b), square_bias(x, b))


def test_module_learns_its_bias():
    module = SquareBias(bias_shape=(3,), dtype=torch.float64)
    x = make((10, 3), torch.float64, 20)
    target = x * x + torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)
    optimizer = torch.optim.SGD(module.parameters(), lr=0.5)
    for _ in range(100):
        optimizer.zero_grad()
        loss = ((module(x) - target) ** 2).mean()
        loss.backward()
        optimizer.step()
    torch.testing.assert_close(module.bias.detach(), torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64))


# --- bad input: each gives a clear error naming the argument ----------------------------------------------------
# The op checks its inputs once, in C++ (src/binding.cpp, course_torch.h): TypeError for a dtype, ValueError for a
# device or a shape, with the messages of Python's course.checks. A value that is not a tensor never reaches our
# code: the dispatcher refuses it when it matches the arguments against the schema (RuntimeError).
@pytest.mark.parametrize(
    "x,b,error,message",
    [
        ([1.0, 2.0], torch.zeros(()), RuntimeError, "Expected a value of type 'Tensor' for argument 'x'"),
        (torch.zeros(2), 1.0, RuntimeError, "Expected a value of type 'Tensor' for argument 'b'"),
        (
            torch.zeros(2, dtype=torch.int32),
            torch.zeros((), dtype=torch.int32),
            TypeError,
            "x has dtype int32, but only float32, float64 are supported",
        ),
        (torch.zeros(2, dtype=torch.float16), torch.zeros(()), TypeError, "x has dtype float16"),
        (torch.zeros(2), torch.zeros((), dtype=torch.bfloat16), TypeError, "b has dtype bfloat16"),
        (
            torch.zeros(2),
            torch.zeros((), dtype=torch.float64),
            TypeError,
            "x and b must have the same dtype, but x has float32 and b has float64",
        ),
        (torch.zeros(2, 3), torch.zeros(2), ValueError, "b of shape (2,) cannot be broadcast to x's shape (2, 3)"),
        (torch.zeros(3), torch.zeros(2, 3), ValueError, "b of shape (2, 3) cannot be broadcast"),
        # meta tensors reach the fake implementation, which checks with course.checks: the same words
        (torch.zeros(2, device="meta"), torch.zeros(()), ValueError, "x must be on cpu, but it is on meta"),
        (torch.zeros(2), torch.zeros((), device="meta"), ValueError, "b must be on cpu, but it is on meta"),
    ],
    ids=[
        "x-list",
        "b-float",
        "int32",
        "float16",
        "b-bfloat16",
        "mixed-dtypes",
        "b-wrong-shape",
        "b-more-dims",
        "x-meta",
        "b-meta",
    ],
)
def test_bad_input(x, b, error, message):
    with pytest.raises(error) as info:
        square_bias(x, b)
    assert message in str(info.value)


@pytest.mark.parametrize(
    "x,b,error",
    [
        (torch.zeros(2, dtype=torch.int64), torch.zeros((), dtype=torch.int64), TypeError),
        (torch.zeros(2), torch.zeros((), dtype=torch.float16), TypeError),
        (torch.zeros(2), torch.zeros((), dtype=torch.float64), TypeError),
        (torch.zeros(2, 3), torch.zeros(2), ValueError),
        (torch.zeros(3), torch.zeros(1, 3, 1), ValueError),
    ],
    ids=["int64", "b-float16", "mixed-dtypes", "shape", "b-more-dims"],
)
def test_cpp_and_python_checks_say_the_same(x, b, error):
    """The C++ op (torch.ops..., no Python in between) and course.checks (check_inputs, which the fake
    implementation runs) raise the same exception type with the same message."""
    with pytest.raises(error) as from_cpp:
        torch.ops.square_bias.square_bias(x, b)
    with pytest.raises(error) as from_python:
        check_inputs(x, b)
    assert str(from_cpp.value) == str(from_python.value)


def test_cpp_backward_checks():
    with pytest.raises(
        ValueError, match=r"grad_y and x must have the same shape, but grad_y has \(3,\) and x has \(2,\)"
    ):
        torch.ops.square_bias.square_bias_backward(torch.zeros(3), torch.zeros(2), [])
    with pytest.raises(ValueError, match=r"b of shape \(3,\) cannot be broadcast to x's shape \(2,\)"):
        torch.ops.square_bias.square_bias_backward(torch.zeros(2), torch.zeros(2), [3])
    with pytest.raises(TypeError, match="grad_y and x must have the same dtype"):
        torch.ops.square_bias.square_bias_backward(torch.zeros(2, dtype=torch.float64), torch.zeros(2), [])
