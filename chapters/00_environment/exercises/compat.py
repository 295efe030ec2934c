"""Exercise (chapter 00): decide whether an NVIDIA driver can run code built with a given CUDA toolkit.

`driver_cuda` is the highest CUDA version the driver supports: what `nvidia-smi` prints as "CUDA Version", or
cuDriverGetVersion() read as major.minor. `toolkit` is the CUDA version the code was built with (nvcc --version,
or torch.version.cuda). Both are envcheck.Version(major, minor) tuples.

The rule (see the chapter README): drivers are backward compatible. A driver runs code from its own CUDA version
and from every older one, but not from a newer one. Compare major first, then minor.

Check your answer with:  EXERCISE=1 make test
"""


def driver_can_run_toolkit(driver_cuda, toolkit) -> bool:
    # TODO: return True when the driver's CUDA version is at least the toolkit's (about 1 line).
    raise NotImplementedError("exercise: driver_can_run_toolkit is not written yet")
