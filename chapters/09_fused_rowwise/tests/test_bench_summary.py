"""bench.py's summary table without a GPU: fed a CSV of made-up rows (so that the lead's GPU run of `make bench`
cannot fail on a typo in the reporting code)."""

from __future__ import annotations

import csv

import bench


def test_summary_has_one_line_per_case_and_marks_the_best_peer(tmp_path):
    path = tmp_path / "rowwise.csv"
    rows = [
        ("softmax", "bf16", "8x16", "fwd", "device copy", 100.0),
        ("softmax", "bf16", "8x16", "fwd", "ours", 95.0),
        ("softmax", "bf16", "8x16", "fwd", "eager", 42.0),
        ("softmax", "bf16", "8x16", "fwd", "Liger", 93.4),
        ("softmax", "bf16", "8x16", "fwd+bwd", "ours", 90.0),
        ("softmax", "bf16", "8x16", "fwd+bwd", "Triton", 91.0),
    ]
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["op", "dtype", "shape", "pass", "impl", "% of copy"])
        writer.writerows(rows)
    text = bench.summary(path)
    lines = [line for line in text.splitlines() if line.startswith("| softmax")]
    assert lines == [
        "| softmax | bf16 | 8x16 | fwd | 95 | 42 | — | — | **93** | — |",
        "| softmax | bf16 | 8x16 | fwd+bwd | 90 | — | — | **91** | — | — |",
    ]
