"""torch.compile the way its users run it: one compiled graph per input shape, warmed up before timing, and the
compile time measured on its own.

    fused = compile_per_shape(lambda x, b: x * x + b)
    seconds = first_call_seconds(fused, x, b)   # compiles for x's shape (seconds), then runs from its cache
    time_cuda(lambda: fused(x, b))              # what a user's training loop pays per call

`dynamic=True` asks for one graph whose sizes are symbols, which serves every size but gives up the size-specific
code that makes compiled kernels fast (a benchmark that used it reported the compiled norm 100x slower than eager).
Dynamo's default guess, "recompile once with a symbolic size after the first size change", would do the same behind
the user's back, and after 8 sizes it stops compiling altogether: both are switched off here.
"""

from __future__ import annotations

import time
from collections.abc import Callable

# Every size a benchmark uses gets its own graph: raise Dynamo's limits on graphs per function to this.
RECOMPILE_LIMIT = 64


def compile_per_shape(fn: Callable, **options) -> Callable:
    """torch.compile(fn, dynamic=False), with Dynamo's recompile limits raised so that each new shape compiles
    its own graph instead of falling back to eager. options pass through (e.g. mode="reduce-overhead")."""
    import torch
    import torch._dynamo

    config = torch._dynamo.config
    for name in ("recompile_limit", "cache_size_limit", "accumulated_recompile_limit", "accumulated_cache_size_limit"):
        if hasattr(config, name):
            setattr(config, name, max(getattr(config, name), RECOMPILE_LIMIT))
    return torch.compile(fn, dynamic=False, **options)


def first_call_seconds(fn: Callable, *args) -> float:
    """Seconds taken by fn(*args) the first time, device work included: for a compiled fn and a new shape, the
    compilation (tracing, code generation, autotuning, loading). Later calls run the cached graph."""
    import torch

    sync = torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)
    sync()
    start = time.perf_counter()
    fn(*args)
    sync()
    return time.perf_counter() - start
