"""`make run`: the harness at two small sizes, every implementation this machine can run, then where the full
results are."""

from pathlib import Path

import torch
from course.report import environment_line

from perf.harness import run

print(f"Every implementation at n = 2^12 and 2^16 — {environment_line()}")
if not torch.cuda.is_available():
    print("(no CUDA device visible: the GPU implementations are skipped; results/h100/ holds a real H100 run)")
rows = run([2**12, 2**16], with_compile=False, repeat=10, progress=lambda _: None)
print(f"\n{'workload':<12} {'device':<6} {'implementation':<20} {'n':>7} {'time (µs)':>10} {'vs eager':>9}")
for r in rows:
    speedup = "" if r["speedup_vs_eager"] != r["speedup_vs_eager"] else f"{r['speedup_vs_eager']:.2f}x"
    n = f"2^{r['n'].bit_length() - 1}"
    print(f"{r['workload']:<12} {r['device']:<6} {r['implementation']:<20} {n:>7} {r['time_us']:>10.1f} {speedup:>9}")
results = Path(__file__).resolve().parents[1] / "results"
print(f"\nFull runs (2^10 ... 2^28, plots): {results}/h100 and {results}/cpu; `make bench` measures this machine.")
