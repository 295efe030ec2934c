"""The harness's pictures: time vs size, bandwidth vs size under the copy roof, speed-up over eager, a roofline."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from perf.harness import WORKLOADS  # noqa: E402

H100_FP32_TFLOPS = 67.0  # NVIDIA's datasheet figure for the H100 SXM without tensor cores


def _series(rows, workload, device=None):
    names = []
    for r in rows:
        if r["workload"] == workload and (device is None or r["device"] == device):
            key = (r["implementation"], r["device"])
            if key not in names:
                names.append(key)
    for name, dev in names:
        points = sorted(
            (r["n"], r) for r in rows if r["workload"] == workload and (r["implementation"], r["device"]) == (name, dev)
        )
        yield f"{name} ({dev})", [p[0] for p in points], [p[1] for p in points]


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def _four_panels(path: Path, suptitle: str, draw) -> Path:
    """One panel per workload; draw(ax, workload) plots its lines and sets its title and y label."""
    fig, axes = plt.subplots(2, 2, figsize=(13, 9))
    for ax, workload in zip(axes.flat, WORKLOADS):
        draw(ax, workload)
        ax.set_xlabel("elements n")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(suptitle)
    return _save(fig, path)


def plot_all(rows: list[dict], out: Path, title: str) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    copy = sorted((r["n"], r["GB/s"]) for r in rows if r["workload"] == "copy")

    def time(ax, workload):
        for label, ns, rs in _series(rows, workload):
            ax.loglog(ns, [r["time_us"] for r in rs], marker="o", ms=3, label=label)
        ax.set(title=f"{workload}: {WORKLOADS[workload]['what']}", ylabel="time (µs)")

    def bandwidth(ax, workload):
        ax.semilogx([n for n, _ in copy], [g for _, g in copy], "k--", label="device copy (roof)")
        for label, ns, rs in _series(rows, workload, "cuda"):
            ax.semilogx(ns, [r["GB/s"] for r in rs], marker="o", ms=3, label=label)
        ax.set(title=f"{workload}: {WORKLOADS[workload]['bytes']} bytes/element", ylabel="effective bandwidth (GB/s)")

    def speedup(ax, workload):
        for label, ns, rs in _series(rows, workload):
            ax.semilogx(ns, [r["speedup_vs_eager"] for r in rs], marker="o", ms=3, label=label)
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_yscale("log")
        ax.set(title=workload, ylabel="speed-up over eager PyTorch on the same device")

    written = [_four_panels(out / "time_vs_size.png", f"Time vs size — {title}", time)]
    if copy:
        written.append(_four_panels(out / "bandwidth_vs_size.png", f"Bandwidth vs size — {title}", bandwidth))
    written.append(_four_panels(out / "speedup_vs_eager.png", f"Speed-up over eager — {title}", speedup))

    if copy:
        largest = max(r["n"] for r in rows if r["device"] == "cuda")
        roof = max(g for _, g in copy)
        peak = H100_FP32_TFLOPS * 1e3  # GFLOP/s
        ridge = peak / roof
        fig, ax = plt.subplots(figsize=(8, 6))
        ax.loglog(
            [0.01, ridge, 1000],
            [roof * 0.01, peak, peak],
            "k-",
            label=f"roof: {roof:,.0f} GB/s copy, {H100_FP32_TFLOPS:.0f} TFLOP/s fp32",
        )
        for r in rows:
            if r["device"] == "cuda" and r["n"] == largest and r["workload"] in WORKLOADS:
                spec = WORKLOADS[r["workload"]]
                intensity = spec["flops"] / spec["bytes"]
                gflops = spec["flops"] * r["n"] / (r["time_us"] * 1e-6) / 1e9
                ax.loglog(intensity, gflops, "o", label=f"{r['workload']}: {r['implementation']}")
        ax.set(
            xlabel="arithmetic intensity (FLOP per byte moved)",
            ylabel="GFLOP/s",
            title=f"Roofline at n = {largest:,} — every op here is far left of the ridge ({ridge:.0f} FLOP/B)",
        )
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
        written.append(_save(fig, out / "roofline.png"))
    return written
