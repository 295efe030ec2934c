"""A chain of small course ops, called eagerly, replayed from a CUDA graph, and compiled with
torch.compile(mode="reduce-overhead") (which captures CUDA graphs itself).

Ten y = x*x + b (chapter 03's op) at 2^14 elements: each kernel runs for about a microsecond, each eager call
costs several microseconds of Python, dispatcher and launch. The GPU waits for the host; a graph replays the ten
launches with one call.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from functools import partial

import torch
from course.compiled import compile_per_shape
from course.graphs import capture
from course.report import Goals, Table
from course.timing import interleaved_rounds

CHAIN_LENGTH = 10
CHAIN_N = 2**14


def device_time_ms(calls: dict[str, Callable[[], object]], *, per_graph: int = 10, rounds: int = 5) -> dict[str, list]:
    """The GPU time of one call of each fn, free of host overhead: `per_graph` calls captured in one CUDA graph,
    its replays timed with CUDA events in interleaved rounds. Returns name -> per-round ms per call."""
    graphs = {name: capture(lambda fn=fn: [fn() for _ in range(per_graph)])[0] for name, fn in calls.items()}
    times = interleaved_rounds({name: g.replay for name, g in graphs.items()}, rounds=rounds, warmup=3, repeat=10)
    return {name: [t / per_graph for t in per_round] for name, per_round in times.items()}


def compiled_kernel_ratios(n: int = 2**24, rounds: int = 5) -> dict[str, list[float]]:
    """Per work, eager's GPU time / torch.compile's (compiled for n), round by round: the sanity floor on what
    torch.compile generates. At 2^24 a compiled call's host cost (about 100 µs on the course's H100) exceeds the
    kernel's (about 50 µs for relu), so a per-call comparison would measure the host, not the compiled code."""
    from perf.harness import make_inputs

    works = {
        "square_bias": lambda x, b: x * x + b,
        "add": lambda a, b: a + b,
        "relu": torch.relu,
        "norm": lambda a, b: torch.linalg.vector_norm(a - b),
    }
    ratios = {}
    for work, fn in works.items():
        inputs = make_inputs(work, n, "cuda")
        compiled = compile_per_shape(fn)
        compiled(*inputs)  # compile for n before capturing
        times = device_time_ms({"eager": partial(fn, *inputs), "compiled": partial(compiled, *inputs)}, rounds=rounds)
        ratios[work] = [e / c for e, c in zip(times["eager"], times["compiled"])]
    return ratios


def make_chain(square_bias: Callable) -> Callable:
    def chain(x: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        for _ in range(CHAIN_LENGTH):
            x = square_bias(x, b)
        return x

    return chain


def chain_inputs(n: int = CHAIN_N) -> tuple[torch.Tensor, torch.Tensor]:
    # |x| < 1 and a small negative b keep x*x + b inside [-0.1, 0.9] however often it is applied.
    return torch.rand(n, device="cuda") - 0.5, torch.full((), -0.1, device="cuda")


def ways(square_bias: Callable) -> dict[str, Callable[[], torch.Tensor]]:
    """name -> a zero-argument call that runs the chain once and returns its output (checked equal to eager)."""
    chain = make_chain(square_bias)
    x, b = chain_inputs()
    graph, graph_out = capture(chain, x, b)
    compiled = compile_per_shape(chain, mode="reduce-overhead")

    def replay():
        graph.replay()
        return graph_out

    calls = {
        "eager": lambda: chain(x, b),
        "CUDA graph replay": replay,
        "torch.compile reduce-overhead": lambda: compiled(x, b),
    }
    expected = chain(x, b)
    for name, call in calls.items():
        for _ in range(3):  # compiled: the first calls record its graphs
            result = call()
        torch.testing.assert_close(result, expected, msg=lambda m, name=name: f"{name}: {m}")
    return calls


def chain_bench(square_bias: Callable, out, rounds: int = 7) -> None:
    calls = ways(square_bias)
    times = interleaved_rounds(calls, rounds=rounds, warmup=20, repeat=100)
    table = Table(
        f"{CHAIN_LENGTH} x (x*x + b) at n = 2^14, fp32: one call of the whole chain",
        ["way", "time_us", "min_us", "max_us", "vs eager"],
    )
    eager = times["eager"]
    for name, per_round in times.items():
        median = statistics.median(per_round)
        table.add(
            way=name,
            time_us=median * 1e3,
            min_us=min(per_round) * 1e3,
            max_us=max(per_round) * 1e3,
            **{"vs eager": statistics.median(eager) / median},
        )
    table.save(out / "graph_chain")
    goals = Goals("Goal: CUDA graphs on a chain of small ops")
    goals.check_rounds(
        "eager chain time / CUDA graph replay time",
        [e / g for e, g in zip(eager, times["CUDA graph replay"])],
        ">=",
        3.0,
        "x",
    )
    goals.note(
        "torch.compile reduce-overhead / eager: "
        + f"{statistics.median(eager) / statistics.median(times['torch.compile reduce-overhead']):.2f}x"
    )
    goals.report(out / "graph_chain_goals.txt")
