"""bench.py's part 2 without a GPU: its tables, goal lines, plots and the combined goals file, fed with made-up
timings (so that the lead's one GPU run of `make bench` cannot fail on a typo in the reporting code)."""

from __future__ import annotations

import bench
import torch


def fake_measurement(shape, compiled=True):
    """measure_tensor's result shape, with timings that say: rung 9 at 1/4 of cuBLAS, rung 10 at 2/3, rung 11 at 0.9."""
    cublas_ms = bench.flops(*shape) / 700e12 * 1e3
    speed = {"rung 9": 0.25, "rung 10": 0.66, "rung 11": 0.9, "rung 11 fp16": 0.9, bench.CUBLAS_BF16: 1.0,
             "cuBLAS fp16": 1.0, bench.TRITON_BF16: 0.97, bench.COMPILED_BF16: 1.0}  # fmt: skip
    if not compiled:
        del speed[bench.COMPILED_BF16]
    out = {}
    for name, fraction in speed.items():
        out[name] = {
            "times_ms": [cublas_ms / fraction * (1 + 0.01 * i) for i in range(5)],
            "rel_error": 2e-3,
            "error_vs_cublas": 1.0,
            "first_call_s": 0.1,
            "dtype": torch.float16 if "fp16" in name else torch.bfloat16,
        }
        if name.startswith("rung "):
            out[name]["ran"] = 10 if shape == (3000, 3000, 3000) and "11" in name else int(name.split()[1])
    return out


def test_tensor_report_from_made_up_timings(tmp_path):
    at_size = {shape: fake_measurement(shape, compiled=shape[0] in bench.TENSOR_COMPILE_AT)
               for shape in bench.TENSOR_SIZES}  # fmt: skip
    rows = [row for shape, m in at_size.items() for row in bench.tensor_rows(m, shape)]
    assert len(rows) == sum(len(m) for m in at_size.values())
    kernels = {("4096x4096x4096", bench.COMPILED_BF16): "sm90_xmma_gemm_bf16bf16_..."}
    goals = bench.tensor_goals(at_size, kernels)
    text = "\n".join(goals.lines)
    assert "PASS  rung 10 (mma.sync) / cuBLAS bf16 at 8192³: 0.66" in text
    assert "MISS  rung 11 (wgmma) / Triton bf16 autotuned at 4096³" in text
    assert "MISS  stretch: rung 11 (wgmma) / cuBLAS bf16 at 8192³" in text
    assert "rung 11 (ran rung 10)" in text  # 3000³ in the made-up data
    assert "torch.compile max-autotune runs: sm90_xmma" in text
    goals.report(tmp_path / "goals_tensor.txt")
    (tmp_path / "goals_fp32.txt").write_text("Goals, fp32, TF32 off (...)\nPASS  something\n")
    combined = bench.combined_goals(tmp_path, None).read_text()
    assert combined.index("Goals, fp32") < combined.index("Goals, bf16")
    bench.plot_tensor_tflops(rows, tmp_path)
    bench.plot_tensor_roofline(rows, 3000.0, (4096, 4096, 4096), tmp_path)
    assert (tmp_path / "matmul_tensor_roofline.png").exists()


def test_combined_goals_take_the_last_run_of_a_part_not_measured(tmp_path):
    out, results = tmp_path / "out", tmp_path / "results"
    out.mkdir(), results.mkdir()
    (results / "goals_fp32.txt").write_text("Goals, fp32 (last run)\n")
    (out / "goals_tensor.txt").write_text("Goals, bf16 (this run)\n")
    assert bench.combined_goals(out, results).read_text() == "Goals, fp32 (last run)\n\nGoals, bf16 (this run)\n"
