"""C = A·B as a PyTorch op: a ladder of CUDA-core kernels from naive to near cuBLAS (rungs 0-8, fp32), tensor-core
kernels for fp16/bf16 (rungs 9-11: WMMA, mma.sync, Hopper wgmma), a blocked CPU loop, autograd, fake implementations
and a drop-in Linear layer.

    from matmul import matmul, Linear
    matmul(a, b)               # the fastest rung for the dtype (rung 8 for float32 on a GPU)
    matmul(a, b, rung=2)       # any rung of the ladder: RUNGS says what each one changes
    rung_used(a, b)            # the rung a CUDA call runs (bf16 on a Hopper GPU: 11)
    Linear(512, 256)           # torch.nn.Linear with this op inside
"""

from matmul.ops import (
    BEST,
    DTYPES,
    FLOAT64_RUNGS,
    RUNG_COUNT,
    RUNGS,
    TENSOR_RUNGS,
    Linear,
    matmul,
    matmul_out,
    rung_used,
)

__all__ = ["BEST", "DTYPES", "FLOAT64_RUNGS", "RUNG_COUNT", "RUNGS", "TENSOR_RUNGS", "Linear", "matmul", "matmul_out",
           "rung_used"]  # fmt: skip
