"""The drop-in modules: torch.nn.LayerNorm's and torch.nn.RMSNorm's state-dict keys, shapes and outputs."""

from __future__ import annotations

import pytest
import torch
from helpers import DEVICES
from rowwise import LayerNorm, RMSNorm, Softmax


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    "kwargs",
    [{}, {"bias": False}, {"elementwise_affine": False}, {"eps": 1e-3}],
    ids=["default", "nobias", "plain", "eps"],
)
def test_layer_norm_module_is_a_drop_in(device, kwargs):
    theirs = torch.nn.LayerNorm((4, 24), **kwargs).to(device)
    ours = LayerNorm((4, 24), **kwargs).to(device)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    with torch.no_grad():
        for p in theirs.parameters():
            p.uniform_(-1, 2)
    ours.load_state_dict(theirs.state_dict())
    x = torch.randn(3, 5, 4, 24, device=device)
    torch.testing.assert_close(ours(x), theirs(x), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kwargs", [{}, {"eps": 1e-6}, {"elementwise_affine": False}], ids=["default", "eps", "plain"])
def test_rms_norm_module_is_a_drop_in(device, kwargs):
    theirs = torch.nn.RMSNorm(48, **kwargs).to(device)
    ours = RMSNorm(48, **kwargs).to(device)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    with torch.no_grad():
        for p in theirs.parameters():
            p.uniform_(-1, 2)
    ours.load_state_dict(theirs.state_dict())
    x = torch.randn(7, 48, device=device)
    torch.testing.assert_close(ours(x), theirs(x), rtol=1e-5, atol=1e-5)


def test_module_errors():
    with pytest.raises(ValueError, match="last dimensions are"):
        LayerNorm(8)(torch.randn(3, 9))
    with pytest.raises(ValueError, match="dim=-1"):
        Softmax(dim=0)
    assert torch.equal(Softmax()(torch.zeros(2, 4)), torch.full((2, 4), 0.25))
