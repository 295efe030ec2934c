"""The chapter's demo (`make run`): what the wheel carries, which torch it met, and the op on each device."""

import torch

import square_bias_wheel
from square_bias_wheel import _build_info, square_bias


def main() -> None:
    target = ".".join(map(str, _build_info.TORCH_TARGET))
    archs = ", ".join(_build_info.GPU_ARCHITECTURES)
    print(
        f"square_bias_wheel {square_bias_wheel.__version__}: built with nvcc {_build_info.CUDA_VERSION}, "
        f"for torch >= {target} (stable ABI), GPU code for {archs}"
    )
    print(
        f"this torch: {torch.__version__} (CUDA {torch.version.cuda}); CUDA library loaded: "
        f"{square_bias_wheel._HAS_CUDA_LIBRARY}"
    )
    x, b = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True), torch.tensor([0.5, -1.0, 2.0])
    y = square_bias(x, b)
    y.sum().backward()
    print(f"CPU  x*x + b = {y.tolist()},  grad x = {x.grad.tolist()}")
    if not torch.cuda.is_available():
        print(
            "skipped the GPU part: no CUDA device visible. On a GPU the same call runs the kernel for its architecture."
        )
        return
    major, minor = torch.cuda.get_device_capability()
    print(
        f"CUDA x*x + b = {square_bias(x.detach().cuda(), b.cuda()).tolist()}  (on {torch.cuda.get_device_name()}, "
        f"sm_{major}{minor})"
    )


if __name__ == "__main__":
    main()
