"""Input checks, op registration and fake implementations: everything about the ops that needs no GPU."""

import add2
import pytest
import torch


def test_ops_are_registered():
    for name in ("add2", "add2_seed", "add2_capped", "pitfall_seed_n", "emulate_seed"):
        assert hasattr(torch.ops.add2, name), name


# Each op checks its inputs once, in C++ (src/add2_torch.h); the Python function only calls the op. So the public
# function and the op called directly raise the same exception with the same message.
CALLERS = {
    "add2.add2": add2.add2,
    "torch.ops.add2.add2": torch.ops.add2.add2.default,
    "add2.add2_seed": add2.add2_seed,
    "torch.ops.add2.add2_seed": torch.ops.add2.add2_seed.default,
    "add2.add2_capped": add2.add2_capped,
    "torch.ops.add2.add2_capped": lambda a, b: torch.ops.add2.add2_capped.default(a, b, 8),
}


@pytest.mark.parametrize("caller", CALLERS)
def test_cpu_tensors_are_refused(caller):
    a = torch.ones(4)
    with pytest.raises(ValueError, match="^a must be on cuda, but it is on cpu$"):
        CALLERS[caller](a, a)


@pytest.mark.parametrize("caller", CALLERS)
def test_bad_dtype(caller):
    a = torch.ones(4, dtype=torch.int32)
    with pytest.raises(TypeError, match=r"^a has dtype int32, but only float32, float16, bfloat16, float64 are"):
        CALLERS[caller](a, a)


@pytest.mark.parametrize("caller", CALLERS)
def test_dtypes_must_match(caller):
    with pytest.raises(TypeError, match="^a and b must have the same dtype, but a has float32 and b has float16$"):
        CALLERS[caller](torch.ones(4), torch.ones(4, dtype=torch.float16))


@pytest.mark.parametrize("caller", CALLERS)
def test_shapes_must_match(caller):
    with pytest.raises(ValueError, match=r"^a and b must have the same shape, but a has \(4,\) and b has \(5,\)$"):
        CALLERS[caller](torch.ones(4), torch.ones(5))


@pytest.mark.parametrize("caller", ["add2.add2", "torch.ops.add2.add2"])
def test_devices_must_match(caller):
    """A CPU tensor and a meta one: the dispatcher picks the meta (fake) impl, whose checks are the same family's."""
    with pytest.raises(ValueError, match="^a and b must have the same device, but a has cpu and b has meta$"):
        CALLERS[caller](torch.ones(4), torch.ones(4, device="meta"))


def test_not_a_tensor():
    """The dispatcher's own argument parsing: a RuntimeError naming the argument and the type it got."""
    with pytest.raises(RuntimeError, match="Expected a value of type 'Tensor' for argument 'b'"):
        add2.add2(torch.ones(2), [1.0, 2.0])


@pytest.mark.parametrize("blocks_per_sm", [0, 65])
def test_capped_needs_blocks_per_sm_in_range(blocks_per_sm):
    with pytest.raises(ValueError, match=r"^blocks_per_sm must be in \[1, 64\], got"):
        add2.add2_capped(torch.ones(4), torch.ones(4), blocks_per_sm)
    with pytest.raises(ValueError, match=r"^blocks_per_sm must be in \[1, 64\], got"):  # the fake impl's check
        add2.add2_capped(torch.ones(4, device="meta"), torch.ones(4, device="meta"), blocks_per_sm)


def test_capped_needs_an_int():
    with pytest.raises(RuntimeError, match="Expected a value of type 'int' for argument 'blocks_per_sm'"):
        add2.add2_capped(torch.ones(4), torch.ones(4), 2.5)


def test_pitfall_op_checks_its_inputs():
    a = torch.ones(4)
    with pytest.raises(ValueError, match="^a must be on cuda, but it is on cpu$"):
        add2.pitfall_seed_n(torch.empty(4), a, a, 4)


@pytest.mark.parametrize("name", ["add2", "add2_seed"])
def test_fake_impl_gives_shape_and_dtype(name):
    a = torch.empty(3, 5, dtype=torch.bfloat16, device="meta")
    out = getattr(torch.ops.add2, name)(a, a)
    assert out.shape == (3, 5) and out.dtype == torch.bfloat16 and out.device.type == "meta"


def test_fake_impl_capped():
    a = torch.empty(7, device="meta")
    assert torch.ops.add2.add2_capped(a, a, 8).shape == (7,)


def test_opcheck_emulate_seed():
    a, b = torch.randn(100), torch.randn(100)
    c = torch.zeros(100)
    torch.library.opcheck(torch.ops.add2.emulate_seed.default, (c, a, b, 100, 1, 32))


def test_emulate_refuses_out_of_bounds_n():
    a = torch.randn(10)
    with pytest.raises(ValueError, match=r"n must be in \[0, numel\]"):
        add2.emulate_seed(a, a, grid=1, block=32, n=11)


def test_emulate_checks_its_inputs():
    with pytest.raises(TypeError, match="^a has dtype float64, but only float32 are supported$"):
        add2.emulate_seed(torch.randn(10, dtype=torch.float64), torch.randn(10), grid=1, block=32)
    with pytest.raises(ValueError, match=r"^a and b must have the same shape, but a has \(10,\) and b has \(9,\)$"):
        add2.emulate_seed(torch.randn(10), torch.randn(9), grid=1, block=32)


def test_emulate_takes_any_layout():
    """Inputs that are not contiguous are copied first (in C++), as torch.add takes any layout."""
    a, b = torch.randn(8, 5).t(), torch.randn(5, 8)
    torch.testing.assert_close(add2.emulate_seed(a, b, grid=2, block=8), (a + b).contiguous(), rtol=0, atol=0)


@pytest.mark.parametrize("name", ["add2", "add2_seed"])
def test_autograd_wiring_on_meta_tensors(name):
    """add2's autograd is C++ (Add2Backward), add2_seed's Python (register_autograd); on meta tensors both run
    without a GPU: the forward redispatches to the fake impl, the backward hands the gradient to a and b."""
    a = torch.empty(3, 4, device="meta", requires_grad=True)
    b = torch.empty(3, 4, device="meta", requires_grad=True)
    out = getattr(torch.ops.add2, name)(a, b)
    assert out.requires_grad and out.grad_fn is not None
    out.backward(torch.empty(3, 4, device="meta"))
    assert a.grad.shape == (3, 4) and b.grad.shape == (3, 4)
    with torch.no_grad():
        assert getattr(torch.ops.add2, name)(a, b).grad_fn is None


@pytest.mark.parametrize("name", ["add2", "add2_seed"])
def test_opcheck_on_meta_tensors(name):
    a = torch.empty(5, device="meta")
    torch.library.opcheck(getattr(torch.ops.add2, name).default, (a, a))


def test_fake_impl_of_a_non_contiguous_input_is_contiguous():
    """The CUDA impl copies inputs that are not contiguous and returns a contiguous c: the fake says the same."""
    a = torch.empty(5, 3, device="meta").t()
    out = torch.ops.add2.add2(a, torch.empty(3, 5, device="meta"))
    assert out.shape == (3, 5) and out.is_contiguous()
