"""The sharded norm across GPUs: local kernel, the scalar all_reduce, the whole op; weak and strong scaling.

    python bench.py --out build/logs [--copy-to results/h200]       (make bench)

This script is the launcher: for each world size P it starts `torchrun --standalone --nproc-per-node P bench.py
--worker ...` (P = 1, and 2 where two GPUs are visible; on a machine without GPUs, 1 and 2 CPU processes with Gloo
at small sizes). Every rank times, in ROUNDS interleaved rounds, with CUDA events after warm-up:
    local        sum_squares_diff on its shard (chapter 06's best kernel, stopped before the root)
    all_reduce   dist.all_reduce of one float64 (what the op adds to the kernel)
    total        sharded_norm_diff (kernel + all_reduce + root)
A round starts on every rank at once (a barrier, then a device synchronize); a round's time is the slowest rank's,
since that is what the job waits for. The table gives the median over rounds, the min and the max.

Cases: weak scaling, 2^26 … 2^28 elements per rank (fp32) on P = 1 and 2; strong scaling, 2^30 elements in all.
Efficiency: weak T(1)/T(P) at the same size per rank; strong T(1)/(P·T(P)) at the same total.
Goals (need 2 GPUs): weak efficiency >= 90 % at 2^28 per rank; strong T(2)/T(1) <= 0.55 at 2^30 in all.
Also measured: all_reduce of 8 B … 256 MB (a scalar is latency-bound, a gradient bucket bandwidth-bound).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch.distributed as dist
from course.report import Goals, Table, copy_results, environment_line

ROUNDS = 7
GPU_WEAK = [1 << 26, 1 << 27, 1 << 28]  # elements per rank
GPU_STRONG = 1 << 30  # elements in all
CPU_WEAK = [1 << 20, 1 << 21, 1 << 22]
CPU_STRONG = 1 << 22
MESSAGES = [8, 4096, 1 << 20, 25 << 20, 256 << 20]  # bytes: a scalar ... DDP's default bucket (25 MiB) ... 256 MB
GOAL_WEAK, GOAL_STRONG = 0.90, 0.55


# ---- the worker: one rank under torchrun ----------------------------------------------------------------------
class Clock:
    """Per-call time of fn, in ms, started on every rank at once: CUDA events on a GPU, perf_counter on a CPU."""

    def __init__(self, device: torch.device):
        self.device = device

    def start_together(self) -> None:
        dist.barrier()
        if self.device.type == "cuda":
            torch.cuda.synchronize()

    def per_call_ms(self, fn, calls: int) -> float:
        self.start_together()
        if self.device.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(calls):
                fn()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / calls
        began = time.perf_counter()
        for _ in range(calls):
            fn()
        return (time.perf_counter() - began) * 1e3 / calls


def slowest(ms: float, device: torch.device) -> float:
    value = torch.tensor([ms], dtype=torch.float64, device=device)
    dist.all_reduce(value, op=dist.ReduceOp.MAX)
    return value.item()


def time_shards(n_per_rank: int, device: torch.device, clock: Clock, calls: int) -> dict[str, list[float]]:
    from multigpu import sharded_norm_diff
    from multigpu.chapters import norm_diff

    generator = torch.Generator(device=device).manual_seed(dist.get_rank())
    a = torch.randn(n_per_rank, device=device, generator=generator)
    b = torch.randn(n_per_rank, device=device, generator=generator)
    scalar = torch.zeros((), dtype=torch.float64, device=device)
    fns = {
        "local": lambda: norm_diff.sum_squares_diff(a, b),
        "all_reduce": lambda: dist.all_reduce(scalar),
        "total": lambda: sharded_norm_diff(a, b),
    }
    for fn in fns.values():  # warm-up: kernels loaded, NCCL's communicator set up, the allocator's blocks cached
        for _ in range(3):
            fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(ROUNDS):
        for name, fn in fns.items():
            times[name].append(slowest(clock.per_call_ms(fn, calls), device))
    return times


def time_messages(device: torch.device, clock: Clock, calls: int) -> dict[int, list[float]]:
    times = {}
    for size in MESSAGES:
        # 8 bytes: the sharded norm's one float64; larger sizes: float32 buffers, as DDP's gradient buckets
        if size == 8:
            buffer = torch.ones((), dtype=torch.float64, device=device)
        else:
            buffer = torch.ones(size // 4, device=device)
        for _ in range(3):
            dist.all_reduce(buffer)
        times[size] = [
            slowest(clock.per_call_ms(lambda b=buffer: dist.all_reduce(b), calls), device) for _ in range(ROUNDS)
        ]
    return times


def worker(args) -> None:
    from multigpu.ranks import init_group

    device = init_group(args.backend, int(os.environ["LOCAL_RANK"]), timeout_s=120)
    try:
        world = dist.get_world_size()
        clock = Clock(device)
        calls = 10 if device.type == "cuda" else 3
        cases = [("weak", n) for n in args.weak] + [("strong", args.strong // world)]
        rows = []
        for case, n in cases:
            times = time_shards(n, device, clock, calls)
            rows.append({"case": case, "ranks": world, "n_per_rank": n, "times_ms": times})
        messages = time_messages(device, clock, 20 if device.type == "cuda" else 5)
        if dist.get_rank() == 0:
            Path(args.json).write_text(json.dumps({"rows": rows, "messages": {str(k): v for k, v in messages.items()}}))
    finally:
        dist.destroy_process_group()


# ---- the launcher ----------------------------------------------------------------------------------------------
def run_world(world: int, backend: str, weak: list[int], strong: int, folder: Path) -> dict:
    out = folder / f"ranks-{world}.json"
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={world}"]
    command += [__file__, "--worker", "--backend", backend, "--json", str(out), "--strong", str(strong)]
    command += ["--weak", *map(str, weak)]
    print(f"\n$ torchrun --standalone --nproc-per-node {world} bench.py --worker --backend {backend} ...", flush=True)
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    subprocess.run(command, check=True, env=env, timeout=900)
    return json.loads(out.read_text())


def power(n: int) -> str:
    return f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else f"{n:,}"


def median(values: list[float]) -> float:
    return statistics.median(values)


def report(results: dict[int, dict], worlds: list[int], gpus: int, out: Path, copy_to: Path | None) -> None:
    table = Table(
        "sharded ‖a − b‖₂, fp32: per call, slowest rank, median over rounds (µs)",
        [
            "case",
            "ranks",
            "per rank",
            "local",
            "all_reduce",
            "total",
            "total min",
            "total max",
            "GB/s per rank",
            "efficiency",
        ],
    )
    totals: dict[tuple[str, int, int], list[float]] = {}
    for world in worlds:
        for row in results[world]["rows"]:
            t = row["times_ms"]
            totals[(row["case"], world, row["n_per_rank"])] = t["total"]
    for world in worlds:
        for row in results[world]["rows"]:
            t, n, case = row["times_ms"], row["n_per_rank"], row["case"]
            one = totals.get((case, 1, n * world if case == "strong" else n))
            efficiency = (
                median(one) / (median(t["total"]) * (world if case == "strong" else 1)) if one else float("nan")
            )
            table.add(
                case=case,
                ranks=world,
                **{"per rank": power(n)},
                local=median(t["local"]) * 1e3,
                all_reduce=median(t["all_reduce"]) * 1e3,
                total=median(t["total"]) * 1e3,
                **{"total min": min(t["total"]) * 1e3, "total max": max(t["total"]) * 1e3},
                **{"GB/s per rank": 8 * n / (median(t["local"]) * 1e-3) / 1e9, "efficiency": efficiency},
            )
    table.save(out / "scaling")

    messages = Table(
        "all_reduce by message size: latency-bound to bandwidth-bound (µs, median over rounds)",
        ["bytes", *[f"{w} rank{'s' if w > 1 else ''}" for w in worlds], "bus GB/s"],
    )
    for size in MESSAGES:
        cells = {f"{w} rank{'s' if w > 1 else ''}": median(results[w]["messages"][str(size)]) * 1e3 for w in worlds}
        widest = max(worlds)
        # NCCL's "bus bandwidth": what each link carries in a ring all-reduce, 2(P-1)/P of the message each way
        ms = median(results[widest]["messages"][str(size)])
        bus = size * 2 * (widest - 1) / widest / (ms * 1e-3) / 1e9 if widest > 1 else float("nan")
        messages.add(bytes=f"{size:,}", **cells, **{"bus GB/s": bus})
    messages.save(out / "all_reduce_sizes")

    goals = Goals("Goals: scaling the sharded norm")
    weak_n = max(GPU_WEAK) if gpus else max(CPU_WEAK)
    strong_n = GPU_STRONG if gpus else CPU_STRONG
    if 2 in worlds:
        one, two = totals[("weak", 1, weak_n)], totals[("weak", 2, weak_n)]
        goals.check_rounds(
            f"weak-scaling efficiency at {power(weak_n)} per rank, T(1)/T(2)",
            [a / b for a, b in zip(one, two)],
            ">=",
            GOAL_WEAK,
        )
        one, two = totals[("strong", 1, strong_n)], totals[("strong", 2, strong_n // 2)]
        goals.check_rounds(
            f"strong scaling at {power(strong_n)} in all, T(2)/T(1)",
            [b / a for a, b in zip(one, two)],
            "<=",
            GOAL_STRONG,
        )
    else:
        goals.note(f"NOT RUN  the weak- and strong-scaling goals need 2 GPUs; {gpus} visible here")
    one = results[1]["rows"]
    at = next(r for r in one if r["case"] == "weak" and r["n_per_rank"] == weak_n)["times_ms"]
    goals.check_rounds(
        f"one rank at {power(weak_n)}: total / local kernel (the cost of the collective and the root)",
        [t / k for t, k in zip(at["total"], at["local"])],
        "<=",
        1.05,
    )
    if not gpus:
        goals.note("CPU processes with Gloo: the goals are set for GPUs; these numbers show the method, not the target")
    goals.report(out / "goals.txt")
    plot(results, worlds, out / "scaling.png")
    if copy_to is not None:
        names = ("scaling.csv", "scaling.md", "all_reduce_sizes.csv", "all_reduce_sizes.md", "goals.txt", "scaling.png")
        copy_results(out, copy_to, names)


def plot(results: dict[int, dict], worlds: list[int], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.6))
    labels, local, reduce_ = [], [], []
    for world in worlds:
        for row in results[world]["rows"]:
            t = row["times_ms"]
            labels.append(f"{row['case']}\n{world}×{power(row['n_per_rank'])}")
            local.append(median(t["local"]) * 1e3)
            reduce_.append(max(median(t["total"]) - median(t["local"]), 0) * 1e3)
    x = range(len(labels))
    ax.bar(x, local, label="local Σ(a − b)² (chapter 06: its kernel on a GPU, its C loop on a CPU)")
    ax.bar(x, reduce_, bottom=local, label="the rest: all_reduce of one float64, root")
    ax.set_xticks(list(x), labels, fontsize=8)
    ax.set_ylabel("µs per call (slowest rank, median)")
    ax.set_title(f"Sharded ‖a − b‖₂ — {environment_line()}", fontsize=9)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("build/logs"))
    parser.add_argument("--copy-to", type=Path, default=None, help="also copy tables, goals and plot here")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--backend", default="nccl", help=argparse.SUPPRESS)
    parser.add_argument("--json", default="", help=argparse.SUPPRESS)
    parser.add_argument("--weak", type=int, nargs="*", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--strong", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    gpus = torch.cuda.device_count()
    backend, weak, strong = ("nccl", GPU_WEAK, GPU_STRONG) if gpus else ("gloo", CPU_WEAK, CPU_STRONG)
    worlds = [1, 2] if gpus >= 2 or not gpus else [1]
    print(f"Sharded norm scaling — {environment_line()}")
    print(f"{gpus} GPU(s) visible: backend {backend}, world sizes {worlds}")
    if gpus == 1:
        print("one GPU: only the 1-rank rows; the scaling goals need a machine with 2 GPUs")
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        results = {world: run_world(world, backend, weak, strong, Path(folder)) for world in worlds}
    report(results, worlds, gpus, args.out, args.copy_to)


if __name__ == "__main__":
    main()
