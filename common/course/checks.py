"""Input checks whose messages name the argument and the problem.

Ops call these before handing tensors to compiled code, so bad input becomes a clear Python exception rather than
a crash or a silently wrong result:

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


def same_plain_tensors(first: object, second: object, dtypes: frozenset) -> bool:
    """The common case in one cheap test: two plain tensors (not subclasses) of one dtype from `dtypes`, on one
    device, with one shape, both contiguous. An op that sees True can skip its full checks, which name the problem
    when there is one but cost microseconds per call: as much as a small kernel (chapter 07, small sizes)."""
    return (
        type(first) is torch.Tensor
        and type(second) is torch.Tensor
        and first.dtype is second.dtype
        and first.dtype in dtypes
        and first.device == second.device
        and first.shape == second.shape
        and first.is_contiguous()
        and second.is_contiguous()
    )


# The dispatcher's guard that skips the Autograd key (private; the fast path is skipped where a torch lacks it).
_BELOW_AUTOGRAD = getattr(torch._C, "_AutoDispatchBelowAutograd", None)


def call_below_autograd_if_no_grad(op, *tensors: torch.Tensor, extra: tuple = ()) -> torch.Tensor | None:
    """op(*tensors, *extra) below the Autograd dispatch key when no gradient can be recorded (grad mode off, or no
    tensor requires grad), else None. An op whose backward is registered in Python (torch.library.register_autograd)
    otherwise calls into Python on EVERY call, just to find that there is nothing to record: microseconds, more
    than a small kernel (chapter 07, small sizes). Not while torch.compile traces: it records the op itself."""
    if _BELOW_AUTOGRAD is None or torch.compiler.is_compiling():
        return None
    if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
        return None
    with _BELOW_AUTOGRAD():
        return op(*tensors, *extra)


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
