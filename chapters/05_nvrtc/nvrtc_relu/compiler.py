"""NVRTC from Python: CUDA C source (a string) -> PTX or CUBIN, with the compile log, cached.

We call NVRTC through `cuda.bindings.nvrtc`, the one-to-one binding of the C API, because it needs no GPU and no
driver: compiling works (and is tested) on a machine without either. (`cuda.core.Program.compile("ptx")` asks the
driver for its version first, to check the PTX will load, so it fails where there is no driver.)
"""

from __future__ import annotations

import functools
from pathlib import Path

KERNELS_PATH = Path(__file__).resolve().parents[1] / "src" / "kernels.cu"
DEFAULT_OPTIONS = ("--std=c++17", "-lineinfo")


class CompileError(RuntimeError):
    """NVRTC could not compile the source. `log` holds NVRTC's program log (file(line): error: ...)."""

    def __init__(self, name: str, arch: str, log: str):
        self.log = log
        super().__init__(f"NVRTC could not compile {name} for {arch}:\n{log}")


@functools.cache
def kernels_source() -> str:
    """kernels.cu's text, read once."""
    return KERNELS_PATH.read_text()


def _check(result, what: str) -> None:
    from cuda.bindings import nvrtc

    if result != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        _, message = nvrtc.nvrtcGetErrorString(result)
        raise RuntimeError(f"{what} failed: {message.decode() if isinstance(message, bytes) else message}")


def nvrtc_version() -> tuple[int, int]:
    from cuda.bindings import nvrtc

    result, major, minor = nvrtc.nvrtcVersion()
    _check(result, "nvrtcVersion")
    return major, minor


@functools.lru_cache(maxsize=64)
def compile_source(
    source: str, arch: str = "compute_90", options: tuple[str, ...] = DEFAULT_OPTIONS, name: str = "kernels.cu"
) -> tuple[bytes, bytes | None, str]:
    """Compile `source` for `arch`. Returns (ptx, cubin, log): cubin is None for a virtual target (compute_XX),
    the machine code for a real one (sm_XX). Raises CompileError with NVRTC's log when compilation fails.

    Cached per (source, arch, options, name): compiling the same thing twice costs a dictionary lookup."""
    from cuda.bindings import nvrtc

    result, program = nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], [])
    _check(result, "nvrtcCreateProgram")
    try:
        all_options = [f"--gpu-architecture={arch}".encode(), *(o.encode() for o in options)]
        (compiled,) = nvrtc.nvrtcCompileProgram(program, len(all_options), all_options)
        result, log_size = nvrtc.nvrtcGetProgramLogSize(program)
        _check(result, "nvrtcGetProgramLogSize")
        log = b" " * log_size
        (result,) = nvrtc.nvrtcGetProgramLog(program, log)
        _check(result, "nvrtcGetProgramLog")
        log_text = log.rstrip(b"\x00 ").decode(errors="replace")
        if compiled == nvrtc.nvrtcResult.NVRTC_ERROR_COMPILATION:
            raise CompileError(name, arch, log_text)
        _check(compiled, "nvrtcCompileProgram")
        result, size = nvrtc.nvrtcGetPTXSize(program)
        _check(result, "nvrtcGetPTXSize")
        ptx = b" " * size
        (result,) = nvrtc.nvrtcGetPTX(program, ptx)
        _check(result, "nvrtcGetPTX")
        cubin = None
        if arch.startswith("sm_"):
            result, size = nvrtc.nvrtcGetCUBINSize(program)
            _check(result, "nvrtcGetCUBINSize")
            cubin = b" " * size
            (result,) = nvrtc.nvrtcGetCUBIN(program, cubin)
            _check(result, "nvrtcGetCUBIN")
        return ptx.rstrip(b"\x00"), cubin, log_text
    finally:
        nvrtc.nvrtcDestroyProgram(program)


def compile_ptx(
    source: str | None = None,
    arch: str = "compute_90",
    options: tuple[str, ...] = DEFAULT_OPTIONS,
    name: str = "kernels.cu",
) -> str:
    """PTX text for a virtual architecture; works without a GPU. Raises CompileError with NVRTC's log."""
    ptx, _, _ = compile_source(kernels_source() if source is None else source, arch, tuple(options), name)
    return ptx.decode()


def ptx_entries(ptx: str) -> list[str]:
    """The kernels (.entry) a PTX text defines."""
    return [line.split()[2].rstrip("(") for line in ptx.splitlines() if line.startswith(".visible .entry")]


def _demangle(names: list[str]) -> list[str]:
    """C++ names as a person reads them (`_Z10vector_addPKfS0_Pfx` -> `vector_add(float const*, ...)`), through
    binutils' c++filt where it is installed; the mangled names unchanged where it is not."""
    import shutil
    import subprocess

    if not names or shutil.which("c++filt") is None:
        return names
    try:
        result = subprocess.run(["c++filt", *names], capture_output=True, text=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return names
    readable = result.stdout.split("\n")[: len(names)]
    return readable if len(readable) == len(names) else names


def missing_kernel_message(name: str, ptx: str) -> str:
    """Why cuModuleGetFunction(name) found nothing, for a module compiled from `ptx`: the names the module does
    define and the usual cause. A __global__ function without extern "C" gets a C++ (mangled) name in the PTX, e.g.
    `_Z10vector_addPKfS0_Pfx`, and the driver looks names up exactly as written."""
    entries = ptx_entries(ptx)
    lines = [f"no kernel named {name!r} in the compiled module."]
    if not entries:
        lines.append(
            "The module defines no kernels at all (no `.visible .entry` in its PTX): is the function __global__?"
        )
        return "\n".join(lines)
    lines.append("The module's kernels (the `.entry` names in its PTX) are:")
    for entry, readable in zip(entries, _demangle(entries)):
        lines.append(f"    {entry}" + (f"    = {readable}" if readable != entry else ""))
    mangled = [e for e in entries if e.startswith("_Z") and name in e]
    if mangled:
        lines.append(
            f'{mangled[0]!r} is {name!r} with a C++ mangled name. Fix: declare the kernel extern "C" '
            f'(extern "C" __global__ void {name}(...)), or ask NVRTC for the lowered name '
            "(nvrtcAddNameExpression before compiling, nvrtcGetLoweredName after)."
        )
    else:
        lines.append(f'Check the spelling, and that {name!r} is declared extern "C" __global__ in the source.')
    return "\n".join(lines)
