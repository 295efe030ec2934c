"""Rung 0's pitfall in numbers, without a GPU: the sectors one warp's accesses touch (matmul.coalescing evaluates
the kernels' index formulas). On the H100 the same shows as time: make bench."""

from __future__ import annotations

from matmul.coalescing import efficiency, sectors_per_request


def test_rung_0_reads_a_and_writes_c_one_sector_per_thread():
    assert sectors_per_request(0) == {"A load": 32, "B load": 1, "C store": 32}
    assert efficiency(0)["A load"] == 4 / 32  # 12.5 %: each thread uses 4 bytes of its own 32-byte sector


def test_rung_1_reads_and_writes_whole_lines():
    assert sectors_per_request(1) == {"A load": 1, "B load": 4, "C store": 4}
    assert efficiency(1)["B load"] == 1.0 and efficiency(1)["C store"] == 1.0
