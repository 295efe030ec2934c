"""Input checks, op registration and fake implementations: everything about the ops that needs no GPU."""

import add2
import pytest
import torch


def test_ops_are_registered():
    for name in ("add2", "add2_seed", "add2_capped", "pitfall_seed_n", "emulate_seed"):
        assert hasattr(torch.ops.add2, name), name


@pytest.mark.parametrize("op", [add2.add2, add2.add2_seed, add2.add2_capped])
def test_cpu_tensors_are_refused(op):
    a = torch.ones(4)
    with pytest.raises(ValueError, match="a must be on cuda"):
        op(a, a)


@pytest.mark.parametrize("op", [add2.add2, add2.add2_seed, add2.add2_capped])
def test_bad_dtype(op):
    a = torch.ones(4, dtype=torch.int32)
    with pytest.raises(TypeError, match="a has dtype int32"):
        op(a, a)


def test_dtypes_must_match():
    with pytest.raises(TypeError, match="a and b must have the same dtype"):
        add2.add2(torch.ones(4), torch.ones(4, dtype=torch.float16))


def test_shapes_must_match():
    with pytest.raises(ValueError, match=r"a and b must have the same shape.*\(4,\).*\(5,\)"):
        add2.add2(torch.ones(4), torch.ones(5))


def test_not_a_tensor():
    with pytest.raises(TypeError, match="b must be a torch.Tensor, got list"):
        add2.add2(torch.ones(2), [1.0, 2.0])


@pytest.mark.parametrize("blocks_per_sm", [0, 65, 2.5])
def test_capped_needs_blocks_per_sm_in_range(blocks_per_sm):
    with pytest.raises(ValueError, match="blocks_per_sm must be an int in"):
        add2.add2_capped(torch.ones(4), torch.ones(4), blocks_per_sm)


def test_cpp_check_fires_for_direct_calls():
    """The second line of defence: calling the dispatcher op directly with CPU tensors has no CPU kernel."""
    with pytest.raises(NotImplementedError, match="add2::add2"):
        torch.ops.add2.add2(torch.ones(4), torch.ones(4))


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
    with pytest.raises(RuntimeError, match=r"n must be in \[0, numel\]"):
        add2.emulate_seed(a, a, grid=1, block=32, n=11)


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
