"""The chapter's demo (`make run`): one op, two devices, and the kernels' thread code run on the CPU."""

import torch
from course import gpu_skip_reason

from square_bias_cuda import ops, square_bias


def main() -> None:
    print("torch.ops.square_bias_cuda.square_bias — kernels registered with the dispatcher:")
    for key in ("CPU", "CUDA", "Autograd"):
        has = ops.square_bias.default.has_kernel_for_dispatch_key(key)
        print(f"  {key:<8} {'yes' if has else 'no'}")

    x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    b = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = square_bias(x, b)  # on the CPU: chapter 01's C core
    y.sum().backward()
    print(f"\nCPU  x*x + b      = {y.tolist()}")
    print(f"     grad x = 2x  = {x.grad.tolist()}")
    print(f"     grad b (sum) = {b.grad.tolist()}")
    print(f"     backward node: {y.grad_fn.name()}  (a C++ node: the backward runs no Python)")

    # The forward kernel's per-thread code, run for every thread of a 2-block x 4-thread grid on the CPU:
    big_x, big_b = torch.arange(20.0), torch.ones(20)
    emulated = ops.emulate_forward(big_x, big_b, 2, 4)
    print(f"\nemulated grid (2 blocks x 4 threads, 20 elements) matches x*x + b: {torch.equal(emulated, big_x**2 + 1)}")

    reason = gpu_skip_reason()
    if reason:
        print(f"\nskipped the GPU part: {reason}. On a GPU the same call runs the CUDA kernels.")
        return
    xc, bc = x.detach().cuda().requires_grad_(), b.detach().cuda().requires_grad_()
    yc = square_bias(xc, bc)  # same op, CUDA tensors: the dispatcher picks the CUDA kernels
    yc.sum().backward()
    print(f"\nCUDA x*x + b      = {yc.tolist()}  (on {yc.device})")
    print(f"     grad b (sum) = {bc.grad.tolist()}")
    wrong = ops.pitfall_seed_index(torch.randn(500, 500, device="cuda"), torch.randn(500, 500, device="cuda"))
    print(
        f"\npitfall: the seed's index with 4-thread blocks wrote {torch.count_nonzero(wrong).item()} of 250000 elements"
    )
    try:
        ops.pitfall_rows_grid(torch.ones(70000, 2, device="cuda"), torch.ones(70000, 2, device="cuda"))
    except RuntimeError as error:
        print(f"pitfall: a grid with one block row per tensor row, 70,000 rows: {str(error).splitlines()[0]}")


if __name__ == "__main__":
    main()
