"""How many 32-byte memory sectors one warp's load or store touches in rungs 0 and 1: the number that shows
rung 0's pitfall without a GPU.

A warp issues one load instruction for its 32 threads; the memory system serves it in 32-byte sectors. When the 32
threads read 32 consecutive floats (128 bytes) that is 4 sectors, every byte used. When they read 32 floats that lie
a row apart, it is 32 sectors of which each thread uses 4 bytes: 8 times the traffic for the same data. Nsight
Compute counts the same thing (l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum over ..._requests_...: sectors per
request; its "global load efficiency" is the bytes used over the bytes moved).

The functions below evaluate the kernels' index formulas (src/matmul_kernels.cu, rungs 0 and 1) for the 32 threads
of the first warp of a block, at one step k of the K loop.
"""

from __future__ import annotations

SECTOR_BYTES = 32
FLOAT_BYTES = 4


def _sectors(addresses: list[int]) -> int:
    return len({address // SECTOR_BYTES for address in addresses})


def warp_accesses(rung: int, K: int, N: int, k: int = 0, warp_y: int = 0) -> dict[str, list[int]]:
    """Byte addresses (relative to each matrix's start) that the 32 threads of one warp touch at step k: A(row, k)
    and B(k, col) loads, the C(row, col) store; A (M×K), B (K×N), C (M×N) row-major. Threads are (x = lane,
    y = warp_y) of a (32, Y) block: rung 0 maps x to the row, rung 1 maps x to the column."""
    if rung not in (0, 1):
        raise ValueError("the model covers rungs 0 and 1 (one thread per output)")
    rows_cols = [(lane, warp_y) if rung == 0 else (warp_y, lane) for lane in range(32)]
    return {
        "A load": [(row * K + k) * FLOAT_BYTES for row, _ in rows_cols],
        "B load": [(k * N + col) * FLOAT_BYTES for _, col in rows_cols],
        "C store": [(row * N + col) * FLOAT_BYTES for row, col in rows_cols],
    }


def sectors_per_request(rung: int, K: int = 4096, N: int = 4096) -> dict[str, int]:
    """Sectors each warp-wide access touches: 1 (all 32 threads read one float: a broadcast), 4 (32 consecutive
    floats) or 32 (32 floats in 32 different rows)."""
    return {what: _sectors(addresses) for what, addresses in warp_accesses(rung, K, N).items()}


def efficiency(rung: int, K: int = 4096, N: int = 4096) -> dict[str, float]:
    """Bytes the threads asked for over bytes moved (distinct bytes asked for, as a broadcast moves one float)."""
    out = {}
    for what, addresses in warp_accesses(rung, K, N).items():
        out[what] = len(set(addresses)) * FLOAT_BYTES / (_sectors(addresses) * SECTOR_BYTES)
    return out
