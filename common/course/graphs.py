"""CUDA graphs: record a sequence of launches once, replay it with one call.

A graph replays exactly the kernels, on exactly the memory, that it recorded. An op can be captured only if it
  - launches on PyTorch's current stream (during capture that is the capture stream; a launch elsewhere is missed
    or breaks the capture),
  - never synchronizes with the host (no .item(), no cudaDeviceSynchronize, no copy to the CPU),
  - allocates through PyTorch (the caching allocator gives the graph a private memory pool; a raw cudaMalloc
    during capture is an error).
New data goes in by copying it into the captured input tensors; results appear in the captured outputs.

    outputs = check_capture(lambda x, b: square_bias(x, b), lambda: (torch.randn(n, device="cuda"), b))
"""

from __future__ import annotations

from collections.abc import Callable


def capture(fn: Callable, *static_inputs, warmup: int = 3):
    """Warm fn up on a side stream (module loading, allocator), then capture fn(*static_inputs) into a CUDA graph.
    Returns (graph, static_output)."""
    import torch

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(warmup):
            fn(*static_inputs)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_output = fn(*static_inputs)
    return graph, static_output


def capture_skip_reason() -> str:
    """'' where CUDA graphs can be captured; otherwise why not. The sanitizer runs (make sanitize) turn PyTorch's
    caching allocator off so that compute-sanitizer sees every allocation; every allocation is then a cudaMalloc,
    which is not allowed while a stream is capturing."""
    import os

    if os.environ.get("PYTORCH_NO_CUDA_MEMORY_CACHING") == "1":
        return "CUDA graph capture needs PyTorch's caching allocator, which PYTORCH_NO_CUDA_MEMORY_CACHING=1 turns off"
    return ""


def check_capture(fn: Callable, make_inputs: Callable[[], tuple], *, replays: int = 3, **assert_close) -> None:
    """Capture fn on one set of inputs, then for `replays` fresh sets: copy them into the captured inputs, replay,
    and compare the captured output with fn called eagerly on the same data (torch.testing.assert_close). Skips the
    calling test where capture cannot work (capture_skip_reason)."""
    import pytest
    import torch

    reason = capture_skip_reason()
    if reason:
        pytest.skip(reason)

    static_inputs = make_inputs()
    graph, static_output = capture(fn, *static_inputs)
    for _ in range(replays):
        fresh = make_inputs()
        for static, new in zip(static_inputs, fresh):
            static.copy_(new)
        graph.replay()
        torch.testing.assert_close(static_output, fn(*fresh), **assert_close)
