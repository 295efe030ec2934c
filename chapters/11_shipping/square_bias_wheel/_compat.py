"""Which torch this wheel works with, checked before any of its libraries loads.

The libraries themselves cannot say it clearly: a torch older than the stable ABI they target lacks some C shim
function and the import dies with "undefined symbol: aoti_torch_...", and a torch built for another CUDA major
version fails at the first kernel launch or with "libcudart.so.13: cannot open shared object file". So the package
compares versions first and raises an ImportError that says what to install instead.
"""

from __future__ import annotations

import re


def parse_version(text: str) -> tuple[int, int]:
    """(2, 13) from "2.13.0+cpu", "2.14.1", "2.15.0.dev20270101+cu130"."""
    match = re.match(r"(\d+)\.(\d+)", text)
    if not match:
        raise ImportError(f"square_bias_wheel cannot read torch's version {text!r}")
    return int(match.group(1)), int(match.group(2))


def check_torch(torch_version: str, torch_cuda: str | None, torch_target: tuple[int, int], cuda_major: int) -> bool:
    """Raise ImportError for a torch this wheel does not support; return whether to load the CUDA library.

    torch_version  torch.__version__;  torch_cuda  torch.version.cuda (None for a CPU-only build of torch)
    torch_target   the oldest torch the wheel's stable ABI targets;  cuda_major  the wheel's CUDA major version"""
    version = parse_version(torch_version)
    wanted = f"{torch_target[0]}.{torch_target[1]}"
    if version < torch_target:
        raise ImportError(
            f"square_bias_wheel needs torch >= {wanted}, but torch {torch_version} is installed. The wheel is built "
            f"against PyTorch's stable ABI of torch {wanted}; an older torch lacks some of the C functions it calls. "
            f"Upgrade torch (pip install 'torch>={wanted}')."
        )
    if version[0] != torch_target[0]:
        raise ImportError(
            f"square_bias_wheel was built for torch {torch_target[0]}.x (stable ABI {wanted}), and torch "
            f"{torch_version} is a new major version whose ABI nobody has promised: install a build of "
            "square_bias_wheel made for it."
        )
    if torch_cuda is None:
        return False  # a CPU-only torch: the CPU kernel only
    major = int(torch_cuda.split(".")[0])
    if major != cuda_major:
        raise ImportError(
            f"this square_bias_wheel is the CUDA {cuda_major} build (course-square-bias-cu{cuda_major}), but torch "
            f"{torch_version} uses CUDA {torch_cuda}. The CUDA runtime of one major version is not the other's: "
            f"install course-square-bias-cu{major} instead."
        )
    return True
