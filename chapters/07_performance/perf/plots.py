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


def plot_all(rows: list[dict], out: Path, title: str) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []

    fig, axes = plt.subplots(2, 2, figsize=(13, 9))
    for ax, workload in zip(axes.flat, WORKLOADS):
        for label, ns, rs in _series(rows, workload):
            ax.loglog(ns, [r["time_us"] for r in rs], marker="o", ms=3, label=label)
        ax.set(title=f"{workload}: {WORKLOADS[workload]['what']}", xlabel="elements n", ylabel="time (µs)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"Time vs size — {title}")
    fig.tight_layout()
    written.append(out / "time_vs_size.png")
    fig.savefig(written[-1], dpi=80)
    plt.close(fig)

    copy = sorted((r["n"], r["GB/s"]) for r in rows if r["workload"] == "copy")
    if copy:
        fig, axes = plt.subplots(2, 2, figsize=(13, 9))
        for ax, workload in zip(axes.flat, WORKLOADS):
            ax.semilogx([n for n, _ in copy], [g for _, g in copy], "k--", label="device copy (roof)")
            for label, ns, rs in _series(rows, workload, "cuda"):
                ax.semilogx(ns, [r["GB/s"] for r in rs], marker="o", ms=3, label=label)
            ax.set(
                title=f"{workload}: {WORKLOADS[workload]['bytes']} bytes/element",
                xlabel="elements n",
                ylabel="effective bandwidth (GB/s)",
            )
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7)
        fig.suptitle(f"Bandwidth vs size — {title}")
        fig.tight_layout()
        written.append(out / "bandwidth_vs_size.png")
        fig.savefig(written[-1], dpi=80)
        plt.close(fig)

    fig, axes = plt.subplots(2, 2, figsize=(13, 9))
    for ax, workload in zip(axes.flat, WORKLOADS):
        for label, ns, rs in _series(rows, workload):
            ax.semilogx(ns, [r["speedup_vs_eager"] for r in rs], marker="o", ms=3, label=label)
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_yscale("log")
        ax.set(title=workload, xlabel="elements n", ylabel="speed-up over eager PyTorch on the same device")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"Speed-up over eager — {title}")
    fig.tight_layout()
    written.append(out / "speedup_vs_eager.png")
    fig.savefig(written[-1], dpi=80)
    plt.close(fig)

    if copy:
        largest = max(r["n"] for r in rows if r["device"] == "cuda")
        bandwidth = max(g for _, g in copy)
        fig, ax = plt.subplots(figsize=(8, 6))
        intensities = [0.01, 1000]
        ax.loglog(
            intensities,
            [min(H100_FP32_TFLOPS * 1e3, bandwidth * i) for i in intensities],
            "k-",
            label=f"roof: {bandwidth:,.0f} GB/s copy, {H100_FP32_TFLOPS:.0f} TFLOP/s fp32",
        )
        ridge = H100_FP32_TFLOPS * 1e3 / bandwidth
        ax.loglog([0.01, ridge, 1000], [bandwidth * 0.01, H100_FP32_TFLOPS * 1e3, H100_FP32_TFLOPS * 1e3], "k-")
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
        fig.tight_layout()
        written.append(out / "roofline.png")
        fig.savefig(written[-1], dpi=80)
        plt.close(fig)
    return written
