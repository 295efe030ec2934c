"""Input checks whose messages name the argument and the problem.

Code with no C++ implementation of its own (an op written in Python, a fake implementation) calls these once,
so bad input becomes a clear Python exception rather than a crash or a silently wrong result. An op's C++
implementation checks with their twins in common/include/course_torch.h: the same messages, the same exception
types (TypeError for a dtype, ValueError for a device, shape or size):

    check_tensor("x", x, dtypes=(torch.float32, torch.float64), device="cuda")
    check_same(x=x, b=b, attributes=("device", "dtype"))
"""

from __future__ import annotations

from collections.abc import Iterable

import torch


def _names(dtypes: Iterable[torch.dtype]) -> str:
    return ", ".join(str(d).removeprefix("torch.") for d in dtypes)


def check_tensor(
    name: str,
    value: object,
    *,
    dtypes: Iterable[torch.dtype] | None = None,
    device: str | torch.device | None = None,
    ndim: int | None = None,
    contiguous: bool = False,
    nonempty: bool = False,
) -> torch.Tensor:
    """Check one argument; returns it so calls can be chained. Raises TypeError for the wrong kind of value or
    dtype, ValueError for the wrong device, shape or layout."""
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    if dtypes is not None:
        dtypes = tuple(dtypes)
        if value.dtype not in dtypes:
            raise TypeError(f"{name} has dtype {_names([value.dtype])}, but only {_names(dtypes)} are supported")
    if device is not None:
        wanted = torch.device(device)
        if value.device.type != wanted.type or (wanted.index is not None and value.device.index != wanted.index):
            raise ValueError(f"{name} must be on {wanted}, but it is on {value.device}")
    if ndim is not None and value.dim() != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, but has shape {tuple(value.shape)}")
    if nonempty and value.numel() == 0:
        raise ValueError(f"{name} must not be empty (shape {tuple(value.shape)})")
    if contiguous and not value.is_contiguous():
        raise ValueError(f"{name} must be contiguous; call .contiguous() on it first")
    return value


def check_same(*, attributes: Iterable[str] = ("device", "dtype", "shape"), **tensors: torch.Tensor) -> None:
    """Check that all named tensors agree on each attribute ("device", "dtype" or "shape")."""
    items = list(tensors.items())
    if len(items) < 2:
        return
    first_name, first = items[0]
    for attribute in attributes:
        expected = getattr(first, attribute)
        for name, tensor in items[1:]:
            actual = getattr(tensor, attribute)
            if actual != expected:
                shown = {"shape": lambda s: tuple(s), "dtype": lambda d: _names([d])}.get(attribute, str)
                kind = TypeError if attribute == "dtype" else ValueError
                raise kind(
                    f"{first_name} and {name} must have the same {attribute}, "
                    f"but {first_name} has {shown(expected)} and {name} has {shown(actual)}"
                )


def check_broadcastable_to(name: str, value: torch.Tensor, target_name: str, target: torch.Tensor) -> None:
    """Check that `value` broadcasts to `target`'s shape without changing it (as b does in x**2 + b)."""
    # The rule written out (torch.broadcast_shapes does the same, but costs ~10 us a call: too much for an op).
    small, large = value.shape, target.shape
    fits = len(small) <= len(large) and all(s in (1, t) for s, t in zip(reversed(small), reversed(large)))
    if not fits:
        raise ValueError(f"{name} of shape {tuple(small)} cannot be broadcast to {target_name}'s shape {tuple(large)}")
