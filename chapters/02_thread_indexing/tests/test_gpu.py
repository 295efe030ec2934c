"""The same formulas on the GPU: the table the hardware writes equals the emulated one; the device's limits; a
grid-stride loop past 2^31 elements; warp divergence kernel output. GPU tests are marked `gpu`."""

import subprocess
from pathlib import Path

import pytest
import thread_index as ti
import torch
from reference import as_int32
from test_emulation import ALL_CORRECT, SHAPES

CHAPTER = Path(__file__).resolve().parents[1]
gpu = pytest.mark.gpu


@gpu
@pytest.mark.parametrize("name, grid, block", ALL_CORRECT)
def test_gpu_table_equals_emulation(name, grid, block, small):
    if small and tuple(grid) != SHAPES[ti.formula_dims(name)[0]][1]:
        pytest.skip("under compute-sanitizer: one launch shape per formula")
    on_gpu = ti.record_threads(name, grid, block).as_table().cpu()
    emulated = ti.emulate(name, grid, block).as_table()
    # lanes included: the GPU records the hardware's %laneid, the emulation computes (thread in block) % 32
    torch.testing.assert_close(on_gpu, emulated)
    torch.testing.assert_close(on_gpu[:, 0], torch.arange(on_gpu.shape[0]))


@gpu
@pytest.mark.parametrize(
    "name, grid, block",
    [("pitfall_1d_griddim", 3, 8), ("pitfall_2d_add_dim", (3, 2), (4, 3)), ("pitfall_seed000", (5, 3), 4)],
)
def test_gpu_pitfalls_compute_what_the_emulation_says(name, grid, block):
    torch.testing.assert_close(
        ti.record_threads(name, grid, block).as_table().cpu(), ti.emulate(name, grid, block).as_table()
    )


@gpu
@pytest.mark.slow
def test_gpu_index_past_2_31():
    # 8,388,609 blocks of 256 threads: 2^31 + 256 threads; only the last block records its row
    threads = 256
    blocks = 2**31 // threads + 1
    reference = (blocks - 1) * threads + torch.arange(threads)
    wide = ti.record_threads("grid1d_block1d", blocks, threads, first_block=blocks - 1)
    narrow = ti.record_threads("pitfall_int32_1d", blocks, threads, first_block=blocks - 1)
    torch.testing.assert_close(wide.global_index.cpu(), reference)
    torch.testing.assert_close(narrow.global_index.cpu(), as_int32(reference))
    assert (narrow.global_index < 0).all()


@gpu
def test_device_limits():
    limits = ti.device_limits()
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    assert limits["sm_count"] == props.multi_processor_count
    assert limits["warp_size"] == 32
    assert limits["max_grid_y"] == limits["max_grid_z"] == 65535
    assert limits["max_grid_x"] == 2**31 - 1
    assert limits["max_threads_per_block"] == 1024


@gpu
def test_grid_y_past_65535_fails_with_the_checked_error(small):
    # the seed's launch: a 2D grid sized by a tensor's shape, (rows, cols) with cols > 65535
    # CUDA 13 on the H100 reports cudaErrorInvalidValue ("invalid argument"); older releases said
    # cudaErrorInvalidConfiguration. Either way it is the launcher's checked error, not a crash or a silent no-op.
    with pytest.raises(RuntimeError, match="cudaErrorInvalid(Value|Configuration)"):
        ti.record_threads("pitfall_seed000", (2, 65536), 4)
    # the limit itself is fine, and the context survives the failed launch
    rows = 1 if small else 65535
    table = ti.record_threads("grid2d_block1d", (1, 65535), 1, first_block=65535 - rows)
    torch.testing.assert_close(table.block_idx[:, 1].cpu(), torch.arange(65535 - rows, 65535))


@gpu
@pytest.mark.parametrize("n, blocks, threads", [(1, 1, 1), (1000, 3, 32), (100_003, 7, 128), (140_000, 132, 256)])
def test_gpu_grid_stride_matches_emulation(n, blocks, threads):
    owner = ti.grid_stride_owner(n, blocks, threads).cpu()
    torch.testing.assert_close(owner, ti.emulate_grid_stride(n, blocks, threads)[0])
    assert ti.grid_stride_count(n, blocks, threads).eq(1).all()


@gpu
def test_gpu_ops_check_their_arguments_against_the_device():
    """The C++ checks (course_torch.h) on CUDA tensors: a block larger than this device allows is refused with the
    device's own limit, before any launch; the others with the messages and types of course.checks."""
    limit = ti.device_limits()["max_threads_per_block"]
    with pytest.raises(ValueError, match=rf"threads must be in \[1, {limit}\] on cuda:\d, got {limit + 1}"):
        ti.grid_stride_count(10, 1, limit + 1)
    with pytest.raises(ValueError, match="out must be contiguous"):
        ti.divergence(torch.empty(8, device="cuda")[::2], "uniform", 1)
    with pytest.raises(ValueError, match="iters must be in"):
        ti.divergence(torch.empty(8, device="cuda"), "uniform", -1)
    with pytest.raises(TypeError, match="table has dtype float32, but only int64 are supported"):
        torch.ops.thread_index.record_threads_(torch.empty(12, 9, device="cuda"), 0, [3, 1, 1], [4, 1, 1], 0)
    with pytest.raises(ValueError, match=r"table must have shape .* but has shape \(12, 8\)"):
        torch.ops.thread_index.record_threads_(
            torch.empty(12, 8, dtype=torch.int64, device="cuda"), 0, [3, 1, 1], [4, 1, 1], 0
        )


@gpu
@pytest.mark.slow
@pytest.mark.big_memory
def test_gpu_grid_stride_past_2_31_elements():
    n = 2**31 + 7
    free, _ = torch.cuda.mem_get_info()
    if free < 3 * n:
        pytest.skip(f"needs {3 * n / 2**30:.1f} GiB of free GPU memory, {free / 2**30:.1f} GiB free")
    counts = ti.grid_stride_count(n, 132 * 8, 256)
    assert counts.eq(1).all()
    del counts


def divergence_reference(n: int, mode: str, iters: int) -> torch.Tensor:
    i = torch.arange(n, device="cuda")
    lane_in_block = i % 256
    branch = {
        "uniform": torch.zeros_like(i),
        "odd_even_lanes": lane_in_block % 2,
        "odd_even_warps": (lane_in_block // 32) % 2,
    }[mode]
    x = (i & 1023).to(torch.float32) * 1e-3
    for _ in range(iters):
        x = torch.where(branch == 0, x * 0.999 + 0.5, x * 1.001 - 0.25)
    return x


@gpu
@pytest.mark.parametrize("mode", list(ti.DIVERGENCE_MODES))
def test_divergence_kernel_output(mode):
    n, iters = 1000, 20
    out = ti.divergence(torch.empty(n, device="cuda"), mode, iters)
    torch.testing.assert_close(out, divergence_reference(n, mode, iters), rtol=1e-5, atol=1e-5)


@gpu
def test_opcheck():
    table = torch.full((2 * 3 * 12, len(ti.COLUMNS)), -1, dtype=torch.int64, device="cuda")
    torch.library.opcheck(torch.ops.thread_index.record_threads_.default, (table, 4, [3, 2, 1], [4, 3, 1], 0))
    owner = torch.full((100,), -1, dtype=torch.int64, device="cuda")
    torch.library.opcheck(torch.ops.thread_index.grid_stride_owner_.default, (owner, 2, 32))
    counts = torch.zeros(100, dtype=torch.uint8, device="cuda")
    torch.library.opcheck(torch.ops.thread_index.grid_stride_count_.default, (counts, 2, 32))
    out = torch.empty(100, device="cuda")
    torch.library.opcheck(torch.ops.thread_index.divergence_.default, (out, 1, 5))


@gpu
@pytest.mark.nvcc
def test_race_demo_correct_kernel_runs():
    # only the correct variant: the broken one is for `make racecheck-demo`
    result = subprocess.run([CHAPTER / "build" / "race_demo", "correct"], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 of 1024 elements wrong" in result.stdout
