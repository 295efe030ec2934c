"""The same launch through cuda.core (NVIDIA's Pythonic layer over the driver), side by side with launch.launch.

Device(i).set_current() makes the primary context current, ObjectCode.from_cubin(...).get_kernel(...) loads the
module and finds the kernel, LaunchConfig holds the grid and block, and launch(stream, config, kernel, *args) makes
the call. Torch's stream is handed over through the __cuda_stream__ protocol. Shorter code; `make bench` prints
its cost per call next to the others.
"""

from __future__ import annotations

import torch

from . import compiler, driver, launch, ops


class _TorchStreamHandle:
    """Hands a torch stream to cuda.core through the __cuda_stream__ protocol: (version 0, CUstream address)."""

    def __init__(self, handle: int):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


_core: dict[int, tuple] = {}
_core_streams: dict[int, object] = {}
_core_configs: dict[int, object] = {}  # grid -> LaunchConfig: building one costs about 1 µs, so once per grid


def relu_forward_core(x: torch.Tensor) -> torch.Tensor:
    """relu_forward launched with cuda.core: Device, ObjectCode.from_cubin, LaunchConfig and launch()."""
    import numpy as np
    from cuda.core import Device, LaunchConfig, ObjectCode
    from cuda.core import launch as core_launch

    ops.check_input("x", x)
    device = x.get_device()
    entry = _core.get(device)
    if entry is None:
        _, cubin, _ = compiler.compile_source(
            compiler.kernels_source(), ops.device_arch(device), compiler.DEFAULT_OPTIONS
        )
        dev = Device(device)
        dev.set_current()  # the primary context, as torch's
        kernel = ObjectCode.from_cubin(cubin).get_kernel("relu_forward")
        entry = _core[device] = (dev, kernel)
    dev, kernel = entry
    y = torch.empty_like(x)
    n = x.numel()
    if n:
        handle = torch.cuda.current_stream(device).cuda_stream
        stream = _core_streams.get(handle)
        if stream is None:
            stream = _core_streams[handle] = dev.create_stream(_TorchStreamHandle(handle))
        grid = launch.grid_for(n, launch.ITEMS_PER_THREAD["relu_forward"], launch.BLOCK)
        config = _core_configs.get(grid)
        if config is None:
            config = _core_configs[grid] = LaunchConfig(grid=grid, block=launch.BLOCK)
        with driver.in_primary_context(device):  # another context may be current by now (driver.make_current)
            core_launch(stream, config, kernel, y.data_ptr(), x.data_ptr(), np.int64(n))
    return y
