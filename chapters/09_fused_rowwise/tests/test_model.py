"""In a model: a pre-norm transformer block trained for a few steps gives the same losses with the chapter's norms
and softmax as with torch's; torch.compile(fullgraph=True) compiles a model that uses them."""

from __future__ import annotations

import pytest
import torch
from rowwise.model import train, twin_models

# Losses agree to: float64, the rounding of a few hundred thousand operations; float32, likewise at 1e-7 per
# operation; bfloat16 on the GPU, the 3 digits of bfloat16 over five Adam steps.
TOLERANCE = {torch.float64: 1e-10, torch.float32: 1e-4, torch.bfloat16: 3e-2}


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=str)
@pytest.mark.parametrize("norm", ["layer", "rms"])
def test_training_gives_the_same_losses_on_the_cpu(norm, dtype):
    theirs, ours = twin_models(norm, dtype)
    expected, got = train(theirs), train(ours)
    assert len(got) == 5 and got[-1] < got[0]  # it learns
    for a, b in zip(got, expected):
        assert abs(a - b) <= TOLERANCE[dtype] * abs(b), f"losses {got} vs torch's {expected}"


@pytest.mark.gpu
@pytest.mark.parametrize("norm", ["layer", "rms"])
def test_training_gives_the_same_losses_on_the_gpu_in_bf16(norm):
    theirs, ours = twin_models(norm, torch.bfloat16, "cuda")
    expected, got = train(theirs, device="cuda"), train(ours, device="cuda")
    for a, b in zip(got, expected):
        assert abs(a - b) <= TOLERANCE[torch.bfloat16] * abs(b), f"losses {got} vs torch's {expected}"


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_torch_compile_fullgraph(device, small):
    if small and device == "cuda":
        pytest.skip("torch.compile on CUDA runs in the normal GPU tests; under compute-sanitizer it only adds time")
    if device == "cpu" and torch.cuda.is_available():
        pytest.skip("the CUDA variant covers torch.compile here; inductor's CPU build takes a minute on a GPU machine")
    torch._dynamo.reset()
    theirs, ours = twin_models("layer", torch.float32, device)
    compiled = torch.compile(ours, fullgraph=True)
    got = train(ours, steps=3, device=device, step_fn=compiled)
    expected = train(theirs, steps=3, device=device)
    for a, b in zip(got, expected):
        assert abs(a - b) <= 1e-4 * abs(b)
