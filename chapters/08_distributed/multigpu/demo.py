"""What every process runs under torchrun (`make run`): the sharded norm, then DDP training; rank 0 prints.

torchrun --standalone --nproc-per-node 2 -m multigpu.demo --backend gloo
"""

import argparse
import os

import torch
import torch.distributed as dist

from multigpu import shard_of, sharded_norm_diff
from multigpu.ranks import init_group, rank_device
from multigpu.training import TOLERANCE, train_ddp, train_single


def say(*text) -> None:
    if dist.get_rank() == 0:
        print(*text, flush=True)


def sharded_norm_report(rank: int, world_size: int, n: int) -> dict:
    """The sharded norm of n float32 elements and its gradient on this rank, against float64 on one device. A job for
    torchrun (below) or multigpu.ranks.run_ranks (the notebook): every rank returns the same report."""
    device = rank_device()
    generator = torch.Generator().manual_seed(0)  # the same whole a and b on every rank; each keeps its shard
    a, b = torch.randn(n, generator=generator), torch.randn(n, generator=generator)
    a_mine = shard_of(a, rank, world_size).to(device).requires_grad_()
    b_mine = shard_of(b, rank, world_size).to(device)
    norm = sharded_norm_diff(a_mine, b_mine)
    norm.backward()

    sizes = [None] * world_size
    dist.all_gather_object(sizes, a_mine.numel())
    expected = torch.linalg.vector_norm(a.double() - b.double()).item()
    exact_grad = shard_of((a - b).double() / expected, rank, world_size)
    worst = torch.tensor((a_mine.grad.cpu().double() - exact_grad).abs().max().item(), device=device)
    dist.all_reduce(worst, op=dist.ReduceOp.MAX)
    return {"n": n, "sizes": sizes, "norm": norm.item(), "expected": expected, "grad_error": worst.item()}


def print_norm_report(report: dict) -> None:
    world = len(report["sizes"])
    print(f"\n## ‖a − b‖₂ of {report['n']:,} float32 elements, split over {world} rank{'s' if world > 1 else ''}")
    print(f"shard sizes: {report['sizes']}")
    print(f"sharded_norm_diff: {report['norm']:.6f}   (one all_reduce of one float64)")
    relative = abs(report["norm"] / report["expected"] - 1)
    print(f"float64, one device: {report['expected']:.6f}   relative error {relative:.1e}")
    print(f"gradients, each rank its own slice, no second collective: largest error {report['grad_error']:.1e}")


def ddp_part(device: torch.device) -> None:
    rank, world = dist.get_rank(), dist.get_world_size()
    result = train_ddp(rank, world, batch=32, steps=2, log_hooks=True)
    say(f"\n## DDP: TinyNet (Linear → x*x + b, chapter 03's op → Linear), batch 32 split over {world} rank(s)")
    say("rank 0's log of two steps (buckets of one parameter each, to see every reduction):")
    for event in result["events"]:
        say(f"  {event}")
    longer = train_ddp(rank, world, batch=32, steps=5)
    if rank == 0:
        expected = train_single(batch=32, steps=5)
        worst = max((longer["parameters"][k] - v).abs().max().item() for k, v in expected.items())
        ok = all(torch.allclose(longer["parameters"][k], v, **TOLERANCE) for k, v in expected.items())
        print(
            f"after 5 steps, parameters vs one process on the whole batch: largest difference {worst:.1e} "
            f"({'within' if ok else 'OUTSIDE'} rtol {TOLERANCE['rtol']:g}, atol {TOLERANCE['atol']:g})"
        )
        print(f"loss per step (rank 0's share): {', '.join(f'{v:.4f}' for v in longer['losses'])}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backend", choices=["nccl", "gloo"], default="nccl" if torch.cuda.is_available() else "gloo")
    parser.add_argument("--n", type=int, default=None, help="elements of a and b (default: 10M on GPUs, 1M on CPUs)")
    parser.add_argument("--fail-rank", type=int, default=None, help="this rank raises at the start (for the tests)")
    args = parser.parse_args()

    device = init_group(args.backend, int(os.environ["LOCAL_RANK"]), timeout_s=60)
    try:
        if args.fail_rank == dist.get_rank():
            raise RuntimeError(f"rank {args.fail_rank} fails on purpose (--fail-rank)")
        say(f"{dist.get_world_size()} processes, backend {dist.get_backend()}, rank 0 on {device}")
        n = args.n or (10_000_001 if device.type == "cuda" else 1_000_003)
        report = sharded_norm_report(dist.get_rank(), dist.get_world_size(), n)
        if dist.get_rank() == 0:
            print_norm_report(report)
        ddp_part(device)
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
