"""Chapter 07's benchmark: every implementation, every workload, sizes 2^10 ... 2^28 (the Python loop capped).

python bench.py --out DIR            # full run: CSV, Markdown table, plots in DIR
python bench.py --out DIR --quick    # a few small sizes (what the tests run)
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import torch
from course.report import environment_line
from perf.harness import run
from perf.plots import plot_all


def markdown(rows: list[dict], title: str) -> str:
    lines = [
        f"**{title}** — {environment_line()}",
        "",
        "| workload | implementation | device | n | time (µs) | GB/s | speed-up vs eager |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        speedup = "" if r["speedup_vs_eager"] != r["speedup_vs_eager"] else f"{r['speedup_vs_eager']:.2f}×"
        lines.append(
            f"| {r['workload']} | {r['implementation']} | {r['device']} | 2^{r['n'].bit_length() - 1} | "
            f"{r['time_us']:,.1f} | {r['GB/s']:,.1f} | {speedup} |"
        )
    return "\n".join(lines) + "\n"


def ncu_report(out: Path) -> None:
    """One kernel's hardware counters: chapter 04's vectorized add2 at 2^26 fp32, under Nsight Compute."""
    if shutil.which("ncu") is None or not torch.cuda.is_available():
        return
    script = (
        "import sys; from course.notebook import use_chapter; use_chapter('04_jit', build=False); "
        "import torch, add2; a = torch.randn(2**26, device='cuda'); b = torch.randn_like(a); "
        "[add2.add2(a, b) for _ in range(3)]; torch.cuda.synchronize()"
    )
    metrics = (
        "gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,"
        "dram__throughput.avg.pct_of_peak_sustained_elapsed"
    )
    command = [
        "ncu",
        "--clock-control",
        "none",
        "--kernel-name",
        "regex:add2",
        "--launch-skip",
        "2",
        "--launch-count",
        "1",
        "--metrics",
        metrics,
        sys.executable,
        "-c",
        script,
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    (out / "ncu_add2.txt").write_text(result.stdout[-6000:] + result.stderr[-2000:])
    print(f"\nNsight Compute on add2 (2^26 fp32), saved to {out / 'ncu_add2.txt'}:")
    print("\n".join(line for line in result.stdout.splitlines() if "__" in line or "add2" in line))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("build/logs"))
    parser.add_argument("--quick", action="store_true", help="sizes 2^10 and 2^12 only")
    parser.add_argument("--full", action="store_true", help="(default) sizes 2^10 ... 2^28")
    parser.add_argument("--no-compile", action="store_true", help="leave torch.compile out")
    parser.add_argument("--copy-to", type=Path, help="also copy the CSV, table, plots and ncu report here")
    args = parser.parse_args()

    gpu = torch.cuda.is_available()
    if args.quick:
        sizes = [2**10, 2**12]
    else:
        sizes = [2**e for e in range(10, 29 if gpu else 23, 2)]
    title = "every implementation" + ("" if gpu else " (no GPU here: CPU implementations only)")
    print(f"{title}\n{environment_line()}\nsizes: {', '.join(f'2^{s.bit_length() - 1}' for s in sizes)}")
    rows = run(
        sizes,
        with_compile=not args.no_compile,
        repeat=10 if args.quick else 20,
        progress=lambda line: print(line, flush=True),
    )

    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "perf.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    table = markdown(rows, title)
    (args.out / "perf.md").write_text(table)
    plots = plot_all(rows, args.out, environment_line())
    print("\n" + table)
    print("wrote", ", ".join(str(p) for p in [args.out / "perf.csv", args.out / "perf.md", *plots]))
    if not args.quick:
        ncu_report(args.out)
    if args.copy_to is not None:
        args.copy_to.mkdir(parents=True, exist_ok=True)
        for name in ["perf.csv", "perf.md", "ncu_add2.txt", *(p.name for p in plots)]:
            if (args.out / name).exists() and (args.out / name).resolve() != (args.copy_to / name).resolve():
                shutil.copy2(args.out / name, args.copy_to / name)
        print("copied the results into", args.copy_to)
    return 0


if __name__ == "__main__":
    status = main()
    # On the H100 the full run finished and wrote everything, then the interpreter hung on its way out (torch.compile's
    # compile workers) until the step's timeout killed it. Nothing is left to do: leave without the shutdown.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
