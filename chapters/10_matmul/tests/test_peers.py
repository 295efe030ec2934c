"""The Triton peer (matmul/triton_matmul.py) on the CPU, through Triton's interpreter (TRITON_INTERPRET=1, NumPy):
the kernel's indexing, masks and grouped order are checked without a GPU. On a GPU test_ladder_gpu.py runs it
autotuned."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CHAPTER = Path(__file__).resolve().parents[1]
COURSE = CHAPTER.parents[1]

CHECK = """
import torch
from matmul.triton_matmul import run_untuned
for M, N, K in [(1, 1, 1), (7, 33, 127), (70, 45, 33), (33, 7, 1)]:
    for transposed in (False, True):
        a = torch.randn(M, K)
        b = torch.randn(N, K).t() if transposed else torch.randn(K, N)
        c = run_untuned(a, b)
        ref = a.double() @ b.double()
        error = ((c.double() - ref).norm() / ref.norm()).item()
        assert error < 1e-5, (M, N, K, transposed, error)
        half = run_untuned(a.half(), b.half())  # 16-bit inputs, fp32 sums, fp16 output (part 2's peer)
        ref = a.half().double() @ b.half().double()
        error = ((half.double() - ref).norm() / ref.norm()).item()
        assert half.dtype == torch.float16 and error < 2e-3, (M, N, K, transposed, error)
print("ok")
"""


def triton_version() -> tuple[int, ...]:
    import triton

    return tuple(int(x) for x in triton.__version__.split(".")[:2])


@pytest.mark.skipif(
    triton_version() < (3, 8),
    reason="Triton < 3.8's interpreter cannot loop over range(tl.cdiv(K, BLOCK_SIZE_K)) (a one-element array where "
    "it wants an int); the GPU tests run the kernel itself",
)
def test_triton_kernel_in_the_interpreter():
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": os.pathsep.join([str(CHAPTER), str(COURSE / "common")])}
    result = subprocess.run(
        [sys.executable, "-c", CHECK], cwd=CHAPTER, env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0 and "ok" in result.stdout, result.stderr[-3000:]
