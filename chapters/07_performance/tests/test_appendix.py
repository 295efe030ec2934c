"""The appendix on private shortcuts (perf/appendix_private.py): its arithmetic on made-up times, the note a missed
small-size goal gets, and on a GPU one real row per course op."""

import importlib.util
import math
from pathlib import Path

import pytest
import torch
from perf.appendix_private import COLUMNS, Case, appendix_table, cases, layer_costs, measure, shortcut

CHAPTER = Path(__file__).resolve().parents[1]

# Made-up host µs per call for one op at one size, each layer a round number so that the differences are exact.
TIMES = {
    "public": 12.0,
    "op": 10.0,
    "op below autograd": 6.0,
    "shortcut": 6.5,
    "PyTorch": 8.0,
    "empty_like": 2.0,
    "empty_like via torch.ops": 3.5,
}


def test_layer_costs_are_differences_of_the_timed_calls():
    row = layer_costs(TIMES, kernel_us=1.25)
    assert row["public call"] == 12.0
    assert row["Python wrapper"] == 2.0  # public - op
    assert row["autograd key"] == 4.0  # op - op below autograd
    assert row["torch.ops entry"] == 1.5  # empty_like via torch.ops - empty_like
    assert row["checks + launch"] == 2.5  # op below autograd - empty_like via torch.ops
    assert row["kernel (GPU)"] == 1.25
    assert row["shortcut saves"] == 5.5  # public - shortcut
    assert math.isclose(row["public vs PyTorch"], 8 / 12) and math.isclose(row["shortcut vs PyTorch"], 8 / 6.5)
    # the public call is the sum of its layers: wrapper + autograd + entry-side allocation + checks and launch
    assert (
        row["Python wrapper"] + row["autograd key"] + row["checks + launch"] + TIMES["empty_like via torch.ops"] == 12
    )
    assert set(row) | {"op", "n"} == set(COLUMNS)


def test_without_the_chapters_there_is_nothing_to_measure():
    assert cases() == []


def _bench_module():
    spec = importlib.util.spec_from_file_location("bench07", CHAPTER / "bench.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def test_a_missed_small_size_goal_gets_its_layers(tmp_path):
    """A small-size goal that misses is explained by the appendix's row for that op at the nearest size."""
    bench = _bench_module()
    layers = [
        {"op": "a + b (ch 04)", "n": f"2^{e}", "workload": "add", "n_elements": 2**e, **layer_costs(TIMES, 1.25)}
        for e in (5, 8, 11, 14)
    ]
    note = bench.layers_note("add", 2**10, layers)
    assert note.startswith("add at 2^11 (appendix_private.md") and "the private shortcut would save 5.50 µs" in note
    assert bench.layers_note("relu", 2**10, layers) == ""

    # A run whose add2 is 0.8x eager at 2^10: a MISS, and the note under it.
    speedups = [0.8, 0.8, 0.8]
    rows = [
        {"workload": "add", "implementation": "add2 vectorized", "device": "cuda", "n": 2**10, "_speedups": speedups}
    ]
    for row in rows:
        row["speedup_vs_eager"] = 0.8
    bench.goals(rows, tmp_path, layers)
    text = (tmp_path / "goals.txt").read_text()
    assert "MISS  add: add2 vectorized / eager, worst size from 2^10" in text
    assert "add at 2^11 (appendix_private.md" in text


def _gpu_cases():
    from perf.harness import _chapter

    return cases(
        square_bias_cuda=_chapter("03_cuda_extension", "square_bias_cuda"),
        add2=_chapter("04_jit", "add2"),
        nvrtc_relu=_chapter("05_nvrtc", "nvrtc_relu"),
        norm_diff=_chapter("06_shared_memory_norm", "norm_diff"),
    )


@pytest.mark.gpu
def test_the_shortcut_computes_what_the_public_call_does():
    all_cases = _gpu_cases()
    assert {c.workload for c in all_cases} == {"square_bias", "add", "relu", "norm"}
    for case in all_cases:
        inputs = case.make_inputs(1000)
        torch.testing.assert_close(shortcut(case.op, *inputs, *case.extra), case.public(*inputs))


@pytest.mark.gpu
def test_one_row_per_op_at_a_small_size(tmp_path):
    from course.graphs import capture_skip_reason

    kernel = capture_skip_reason() == ""  # the sanitizer runs turn the caching allocator off: no CUDA graphs
    table = appendix_table(_gpu_cases(), tmp_path, sizes=[2**5], kernel=kernel, rounds=1, calls=50, repeat=2)
    assert len(table.rows) == 4
    for row in table.rows:
        assert row["public call"] > 0 and row["shortcut call"] > 0 and row["PyTorch op"] > 0
        assert row["kernel (GPU)"] > 0 or not kernel
    assert "APPENDIX (private API)" in (tmp_path / "appendix_private.md").read_text()


@pytest.mark.gpu
def test_a_case_is_checked_before_it_is_timed():
    """A shortcut that computes something else stops the measurement (correct before fast)."""
    wrong = Case("wrong", "add", torch.add, torch.sub, torch.add, lambda n: (torch.ones(n, device="cuda"),) * 2)
    with pytest.raises(AssertionError, match="wrong, shortcut"):
        measure(wrong, 32, rounds=1, calls=10, repeat=1, kernel=False)
