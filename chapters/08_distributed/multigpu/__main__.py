"""`make run`: the chapter's demo (multigpu/demo.py) under torchrun, PyTorch's launcher.

One process per visible GPU with NCCL, or, with no GPU, 2 CPU processes with Gloo. torchrun --standalone starts
its rendezvous on a free local port, gives each process RANK, LOCAL_RANK and WORLD_SIZE, and if one process fails
it stops the others and exits non-zero.
"""

import os
import subprocess
import sys

import torch


def choose() -> tuple[int, str, str]:
    gpus = torch.cuda.device_count()
    if gpus:
        return gpus, "nccl", f"{gpus} GPU{'s' if gpus > 1 else ''} visible: one process per GPU, NCCL"
    return 2, "gloo", "no GPU visible: 2 CPU processes, Gloo"


def main(argv: list[str]) -> int:
    processes, backend, why = choose()
    print(f"make run: {why}")
    print(f"  $ torchrun --standalone --nproc-per-node {processes} -m multigpu.demo --backend {backend}", flush=True)
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={processes}"]
    # one thread per process unless asked otherwise (torchrun would set it too, with a banner saying so)
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    return subprocess.call([*command, "-m", "multigpu.demo", "--backend", backend, *argv], env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
