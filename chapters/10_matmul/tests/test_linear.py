"""matmul.Linear, a drop-in for torch.nn.Linear: the same parameters and state_dict, the same outputs, and a small MLP
that trains the same way with either (losses and weights within a stated tolerance after many SGD steps)."""

from __future__ import annotations

import pytest
import torch
from helpers import DEVICES
from matmul import Linear


def mlp(layer, device, dtype, seed=0):
    torch.manual_seed(seed)
    return torch.nn.Sequential(
        layer(20, 64, device=device, dtype=dtype), torch.nn.Tanh(), layer(64, 64, device=device, dtype=dtype),
        torch.nn.Tanh(), layer(64, 3, device=device, dtype=dtype),
    )  # fmt: skip


def train(model, x, y, steps):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("device", DEVICES)
def test_linear_is_a_drop_in(device):
    ours, theirs = Linear(20, 7, device=device), torch.nn.Linear(20, 7, device=device)
    assert isinstance(ours, torch.nn.Linear)
    ours.load_state_dict(theirs.state_dict())
    for shape in [(5, 20), (2, 3, 20), (20,)]:
        x = torch.randn(*shape, device=device)
        torch.testing.assert_close(ours(x), theirs(x), rtol=1e-5, atol=1e-5)
    no_bias = Linear(20, 7, bias=False, device=device)
    assert no_bias.bias is None and no_bias(torch.randn(4, 20, device=device)).shape == (4, 7)


# The tolerance: the two models differ only in the order in which each matrix product adds its terms (a few ulps per
# step in float32). Training amplifies such differences a little (a chaotic system would amplify them a lot); after
# 200 steps of SGD with momentum on this small MLP they stay within these bounds, measured with margin.
TOLERANCE = {torch.float64: {"rtol": 1e-10, "atol": 1e-12}, torch.float32: {"rtol": 1e-3, "atol": 1e-4}}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_mlp_trains_like_torch_nn_linear(device, dtype, monkeypatch):
    if device == "cuda":  # torch.nn.Linear in real fp32, as ours computes (restored after the test)
        monkeypatch.setattr(torch.backends.cuda.matmul, "allow_tf32", False)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(256, 20, generator=g, dtype=dtype).to(device)
    y = torch.sin(x[:, :3] * 2) + x[:, 3:6] ** 2  # something to learn
    ours, theirs = mlp(Linear, device, dtype), mlp(torch.nn.Linear, device, dtype)
    theirs.load_state_dict(ours.state_dict())
    ours_losses, theirs_losses = train(ours, x, y, 200), train(theirs, x, y, 200)
    assert ours_losses[-1] < 0.5 * ours_losses[0], "the MLP did not learn"
    torch.testing.assert_close(torch.tensor(ours_losses), torch.tensor(theirs_losses), **TOLERANCE[dtype])
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
        torch.testing.assert_close(p, q, **TOLERANCE[dtype], msg=lambda m, name=name: f"{name}: {m}")
