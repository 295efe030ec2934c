"""Nsight Compute on every rung: the counters the lesson reads, one table (make ncu, on a GPU machine with ncu).

    python -m matmul.profile --out build/logs [--size 4096] [--rungs 0,1,2,...]
    python -m matmul.profile --out build/logs --rungs 9,10,11,cuBLAS-bf16          (part 2, the tensor cores)

For each rung (and cuBLAS) this runs `ncu` on a child process that calls the op twice at size³ (fp32 for rungs 0-8
and cuBLAS, bf16 for rungs 9-11 and cuBLAS-bf16); ncu skips the
first launch (module loading, warm-up) and measures the second. `--clock-control none` leaves the GPU's clocks as
they are (ncu would otherwise lock them at base clock). The metrics:

  global load efficiency   smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct   bytes used per sector moved
  sectors per request      l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum / ..._requests_...   4 is one 128-byte line
  bank conflicts (ld, st)  l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}.sum    extra shared-memory passes
  achieved occupancy       sm__warps_active.avg.pct_of_peak_sustained_active                 warps resident / possible
  FMA pipe busy            sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active       how busy the FMA units are
  FMAs issued per cycle    smsp__inst_executed_pipe_fma.avg.per_cycle_active                 per scheduler (1.0 = peak)
  registers per thread     launch__registers_per_thread
  duration                 gpu__time_duration.sum
and for the tensor-core rungs (the part 2 table):
  tensor pipe busy         sm__pipe_tensor_op_hmma_cycles_active (mma.sync, WMMA), ..._gmma_... (wgmma)
  issue slots busy         sm__inst_issued.avg.pct_of_peak_sustained_active                  issued / possible
  stalls per issue         smsp__average_warps_issue_stalled_<why>_per_issue_active.ratio    warps waiting, by reason:
                           barrier, long_scoreboard (global/L1), short_scoreboard (shared memory, ldmatrix),
                           math_pipe_throttle (the tensor pipe is full), mio_throttle (shared-memory queue),
                           wait (a fixed latency), not_selected (another warp issued), dispatch, no_instruction
A metric this ncu does not know (another GPU, another version) is left out of the table, with a note.

Writes OUT/ncu_<what>.csv for each and the table: OUT/ncu.md (rungs 0-8), OUT/ncu_tensor.md (rungs 9-11).
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import subprocess
import sys
from pathlib import Path

METRICS = {
    "duration_us": "gpu__time_duration.sum",
    "gld_efficiency_%": "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct",
    "ld_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "ld_requests": "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "smem_ld_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "smem_st_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "occupancy_%": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "fma_pipe_%": "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
    "fma_per_cycle": "smsp__inst_executed_pipe_fma.avg.per_cycle_active",
    "registers": "launch__registers_per_thread",
}
TENSOR_METRICS = {
    "tensor_pipe_%": "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
    "gmma_pipe_%": "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active",
    "issue_%": "sm__inst_issued.avg.pct_of_peak_sustained_active",
    "stall_barrier": "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
    "stall_long_sb": "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
    "stall_short_sb": "smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio",
    "stall_math_throttle": "smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio",
    "stall_mio_throttle": "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio",
    "stall_wait": "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio",
    "stall_not_selected": "smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio",
    "stall_dispatch": "smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio",
    "stall_no_instruction": "smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio",
}
KERNELS = {  # the kernel each rung launches, as ncu's --kernel-name regex
    0: "naive_rows_kernel", 1: "coalesced_kernel", 2: "shared_tiles_kernel", 3: "blocktile_1d_kernel",
    4: "blocktile_2d_kernel", 5: "vectorized_kernel", 6: "warptile_kernel", 7: "pipelined_kernel",
    8: "pipelined_kernel", "cuBLAS": "gemm", 9: "wmma_kernel", 10: "mma_sync_kernel", 11: "wgmma_kernel",
    "cuBLAS-bf16": "gemm|nvjet",
}  # fmt: skip


def child(what: str, size: int) -> None:
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    from matmul import matmul

    bf16 = what == "cuBLAS-bf16" or (what.isdigit() and int(what) >= 9)
    dtype = torch.bfloat16 if bf16 else torch.float32
    a, b = torch.randn(size, size, device="cuda", dtype=dtype), torch.randn(size, size, device="cuda", dtype=dtype)
    for _ in range(2):  # ncu measures the second
        torch.mm(a, b) if what.startswith("cuBLAS") else matmul(a, b, int(what))
    torch.cuda.synchronize()


def known_metrics(metrics: dict) -> dict:
    """The metrics this ncu can collect on this GPU (ncu --query-metrics lists their base names)."""
    result = subprocess.run(["ncu", "--query-metrics", "--csv"], capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"ncu --query-metrics failed:\n{result.stderr[-2000:]}")
    bases = {line.split(",")[0].strip('"') for line in result.stdout.splitlines()}
    kept = {name: metric for name, metric in metrics.items() if metric.split(".")[0] in bases}
    for name in metrics.keys() - kept.keys():
        print(f"note: this ncu has no {metrics[name]}: {name} is left out")
    return kept


def profile_one(what, size: int, out: Path, metrics: dict) -> dict:
    command = ["ncu", "--clock-control", "none", "--csv", "--kernel-name", f"regex:{KERNELS[what]}",
               "--launch-skip", "1", "--launch-count", "1", "--metrics", ",".join(metrics.values()),
               sys.executable, "-m", "matmul.profile", "--child", str(what), "--size", str(size)]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ))
    (out / f"ncu_{what}.csv").write_text(result.stdout + result.stderr)
    if result.returncode != 0:
        raise RuntimeError(f"ncu failed for {what}:\n{result.stderr[-2000:]}")
    lines = [line for line in result.stdout.splitlines() if line.startswith('"')]
    values = {}
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        values[row["Metric Name"]] = (row["Metric Value"], row.get("Metric Unit", ""))
    row = {"rung": what}
    for name, metric in metrics.items():
        value, unit = values.get(metric, ("—", ""))
        try:
            number = float(value.replace(",", ""))
            if name == "duration_us":
                number = number / 1e3 if unit in ("nsecond", "ns") else number * 1e3 if unit in ("msecond",) else number
            row[name] = number
        except ValueError:
            row[name] = value
    sectors, requests = row.get("ld_sectors"), row.get("ld_requests")
    ok = isinstance(sectors, float) and isinstance(requests, float) and requests
    row["sectors_per_request"] = sectors / requests if ok else "—"
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("build/logs"))
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--rungs", default="0,1,2,3,4,5,6,7,8,cuBLAS")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.child, args.size)
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    rungs = [int(what) if what.isdigit() else what for what in args.rungs.split(",")]
    tensor = all(what == "cuBLAS-bf16" or (isinstance(what, int) and what >= 9) for what in rungs)
    metrics = known_metrics({**METRICS, **TENSOR_METRICS} if tensor else METRICS)
    rows = []
    for what in rungs:
        print(f"ncu: {what} at {args.size}³ ...", flush=True)
        rows.append(profile_one(what, args.size, args.out, metrics))
    if tensor:  # part 2: the tensor pipe and why warps wait, instead of the FMA pipe and global-load efficiency
        columns = ["rung", "duration_us", *(n for n in TENSOR_METRICS if n in metrics), "smem_ld_conflicts",
                   "occupancy_%", "registers"]  # fmt: skip
    else:
        columns = ["rung", "duration_us", "gld_efficiency_%", "sectors_per_request", "smem_ld_conflicts",
                   "smem_st_conflicts", "occupancy_%", "fma_pipe_%", "fma_per_cycle", "registers"]  # fmt: skip

    def cell(v):
        return f"{v:,.3g}" if isinstance(v, float) else str(v)

    table = ["| " + " | ".join(columns) + " |", "|" + "---:|" * len(columns)]
    table += ["| " + " | ".join(cell(r.get(c, "—")) for c in columns) + " |" for r in rows]
    title = f"Nsight Compute, {args.size}³ (rungs 0-8 and cuBLAS fp32, the others bf16), --clock-control none"
    text = title + "\n\n" + "\n".join(table) + "\n"
    (args.out / ("ncu_tensor.md" if tensor else "ncu.md")).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
