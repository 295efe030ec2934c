"""The harness: every implementation is checked before it is timed, the checks can fail, and the bench writes its
tables and plots."""

import os
import subprocess
import sys
from pathlib import Path

import perf.harness
import pytest
import torch
from perf import WORKLOADS, Implementation, implementations, run
from perf.extra_implementation import EXTRA_IMPLEMENTATION
from perf.harness import check, make_inputs, reference

CHAPTER = Path(__file__).resolve().parents[1]


def test_every_workload_has_cpu_implementations_and_a_baseline():
    impls = implementations(with_compile=False)
    for workload in WORKLOADS:
        cpu = [i for i in impls if i.workload == workload and i.device == "cpu"]
        assert len(cpu) >= 2 and sum(i.baseline for i in cpu) == 1, workload


def test_the_chapters_ops_are_in_the_harness():
    names = {i.name for i in implementations(with_compile=False)}
    assert {"C extension", "CUDA extension", "add2 vectorized", "add2 seed", "NVRTC ReLU", "ladder rung 3"} <= names


@pytest.mark.parametrize("workload", list(WORKLOADS))
def test_reference_is_float64(workload):
    assert reference(workload, make_inputs(workload, 5, "cpu")).dtype == torch.float64


def test_check_rejects_a_wrong_implementation():
    wrong = Implementation("square_bias", "x*x - b", "cpu", lambda x, b: lambda: x * x - b)
    with pytest.raises(AssertionError, match="x\\*x - b"):
        check(wrong, make_inputs("square_bias", 1000, "cpu"))


def test_check_rejects_a_float16_shortcut():
    rough = Implementation("add", "fp16 add", "cpu", lambda a, b: lambda: (a.half() + b.half()).float())
    with pytest.raises(AssertionError):
        check(rough, make_inputs("add", 4096, "cpu"))


def test_extra_implementation_is_correct():
    """The exercise: one more implementation of y = x*x + b, checked like every other."""
    check(EXTRA_IMPLEMENTATION, make_inputs("square_bias", 3001, "cpu"))
    assert EXTRA_IMPLEMENTATION in implementations(with_compile=False)


@pytest.mark.parametrize("exercise", ["0", "1"])
def test_the_exercise_file_replaces_the_module(exercise):
    """Under EXERCISE=1, `import perf.extra_implementation` loads exercises/extra_implementation.py (perf/__init__.py
    puts exercises/ first on the package's path); otherwise the reference in perf/."""
    script = (
        "import perf.extra_implementation as m, perf.harness as h; "
        "print(m.__file__, h.EXTRA_IMPLEMENTATION is m.EXTRA_IMPLEMENTATION)"
    )
    paths = [str(CHAPTER), str(CHAPTER.parents[1] / "common")]
    env = {**os.environ, "EXERCISE": exercise, "PYTHONPATH": os.pathsep.join(paths)}
    result = subprocess.run([sys.executable, "-c", script], cwd=CHAPTER, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    path, same = result.stdout.split()
    folder = "exercises" if exercise == "1" else "perf"
    assert Path(path) == CHAPTER / folder / "extra_implementation.py" and same == "True"


def _missing_build(chapter, package):
    raise ImportError(f"{package}._C is not built: run `make build` in the chapter's folder")


def test_a_missing_build_leaves_its_rows_out_and_says_so(monkeypatch, capsys):
    monkeypatch.delenv("COURSE_REQUIRE_BUILDS", raising=False)
    monkeypatch.setattr(perf.harness, "import_reference_chapter", _missing_build)
    names = {i.name for i in implementations(with_compile=False)}
    assert "C extension" not in names and "add2 vectorized" not in names and "eager" in names
    assert "leaving out 04_jit: add2._C is not built" in capsys.readouterr().err


def test_a_missing_build_is_an_error_where_builds_are_required(monkeypatch):
    """make gpu-check and CI set COURSE_REQUIRE_BUILDS=1: a table without a chapter's rows would pass unnoticed."""
    monkeypatch.setenv("COURSE_REQUIRE_BUILDS", "1")
    monkeypatch.setattr(perf.harness, "import_reference_chapter", _missing_build)
    with pytest.raises(ImportError, match="is not built"):
        implementations(with_compile=False)


def test_an_error_other_than_a_missing_build_is_never_swallowed(monkeypatch):
    def broken(chapter, package):
        raise RuntimeError(f"{package} is broken")

    monkeypatch.delenv("COURSE_REQUIRE_BUILDS", raising=False)
    monkeypatch.setattr(perf.harness, "import_reference_chapter", broken)
    with pytest.raises(RuntimeError, match="is broken"):
        implementations(with_compile=False)


def test_under_exercise_1_the_other_chapters_are_their_reference_builds(monkeypatch):
    """Only this chapter's own file is the student's: the harness imports the other chapters' reference builds
    (their _C, not _C_exercise), so EXERCISE=1 needs no exercise build of chapters 01-06."""
    monkeypatch.setenv("EXERCISE", "1")
    monkeypatch.setenv("COURSE_REQUIRE_BUILDS", "1")
    names = {i.name for i in implementations(with_compile=False)}
    assert {"C extension", "CUDA extension", "add2 vectorized", "NVRTC ReLU", "ladder rung 3"} <= names


def test_cpu_run_at_tiny_sizes():
    rows = run([2**10, 2**11], devices=("cpu",), with_compile=False, repeat=3, progress=lambda _: None)
    cpu_impls = [i for i in implementations(with_compile=False) if i.device == "cpu"]
    assert len(rows) == 2 * len(cpu_impls)
    for row in rows:
        assert row["time_us"] > 0 and row["GB/s"] > 0
    eager = [r for r in rows if r["implementation"] == "eager"]
    assert all(r["speedup_vs_eager"] == 1.0 for r in eager)


def test_python_loop_is_capped():
    rows = run(
        [2**17],
        devices=("cpu",),
        with_compile=False,
        repeat=3,
        progress=lambda _: None,
        impls=[i for i in implementations(with_compile=False) if i.name in ("python loop", "eager")],
    )
    assert {r["implementation"] for r in rows} == {"eager"}


def test_bench_writes_tables_and_plots(tmp_path):
    result = subprocess.run(
        [sys.executable, "bench.py", "--quick", "--no-compile", "--out", str(tmp_path)],
        cwd=CHAPTER,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    for name in ("perf.csv", "perf.md", "time_vs_size.png", "speedup_vs_eager.png"):
        assert (tmp_path / name).stat().st_size > 0, name
    assert "| square_bias | C extension | cpu | 2^10 |" in (tmp_path / "perf.md").read_text()


@pytest.mark.gpu
def test_gpu_run_at_small_sizes(small):
    sizes = [2**10] if small else [2**10, 2**14]
    rows = run(sizes, devices=("cuda",), with_compile=not small, repeat=3, progress=lambda _: None)
    names = {r["implementation"] for r in rows}
    assert {"device copy", "eager", "CUDA extension", "add2 vectorized", "NVRTC ReLU", "ladder rung 3"} <= names
    if not small:
        assert "torch.compile" in names


def test_plots_with_gpu_rows(tmp_path):
    """The GPU-only pictures (bandwidth under the copy roof, the roofline) from made-up rows: no GPU needed."""
    from perf.plots import plot_all

    rows = []
    for n in (2**20, 2**22):
        rows.append(
            {
                "workload": "copy",
                "implementation": "device copy",
                "device": "cuda",
                "n": n,
                "time_us": n * 8 / 2.9e3,
                "GB/s": 2900.0,
                "speedup_vs_eager": float("nan"),
            }
        )
        for workload, spec in WORKLOADS.items():
            for name, efficiency in (("eager", 0.5), ("kernel", 0.95)):
                seconds = n * spec["bytes"] / (2.9e12 * efficiency)
                rows.append(
                    {
                        "workload": workload,
                        "implementation": name,
                        "device": "cuda",
                        "n": n,
                        "time_us": seconds * 1e6,
                        "GB/s": 2900 * efficiency,
                        "speedup_vs_eager": efficiency / 0.5,
                    }
                )
    written = plot_all(rows, tmp_path, "made-up rows")
    assert {p.name for p in written} == {
        "time_vs_size.png",
        "bandwidth_vs_size.png",
        "speedup_vs_eager.png",
        "roofline.png",
    }
    assert all(p.stat().st_size > 10_000 for p in written)
