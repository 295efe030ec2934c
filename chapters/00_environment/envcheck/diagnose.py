"""Gather the CUDA-related versions on this machine and explain every mismatch among them.

`gather_facts()` reads the machine; `diagnose(facts)` is pure logic over a Facts record, so the tests can feed it
made-up combinations (a driver too old for torch, nvcc 12 beside torch built for CUDA 13, ...).
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field

from course.build import shared_cxx_runtime

from envcheck.compat import Version, driver_can_run_toolkit, extension_build_compatible


@dataclass
class Facts:
    torch_version: str
    torch_cuda: str | None = None  # torch.version.cuda; None for a CPU-only build of torch
    cudnn: int | None = None  # torch.backends.cudnn.version()
    driver_version: str | None = None  # e.g. "580.95.05" (nvidia-smi)
    driver_cuda: str | None = None  # the newest CUDA the driver supports, e.g. "13.0" (cuDriverGetVersion)
    gpus: list[tuple[str, tuple[int, int]]] = field(default_factory=list)  # (name, compute capability)
    torch_arches: list[str] = field(default_factory=list)  # torch.cuda.get_arch_list(): ["sm_90", ...]
    nvcc_version: str | None = None  # "13.0"
    nvcc_path: str | None = None
    cuda_home: str | None = None
    arch_list_env: str | None = None  # TORCH_CUDA_ARCH_LIST
    cxx: str | None = None  # the C++ compiler torch builds extensions with: $CXX, or c++
    cxx_path: str | None = None  # where that compiler is (None: not found)
    cxx_shared_runtime: bool | None = None  # does it link the shared libstdc++.so, the C++ runtime torch uses?


@dataclass
class Finding:
    level: str  # "ok", "info", "warning" or "error"
    topic: str
    message: str
    fix: str = ""


def arch_entry_runs_on(entry: str, capability: tuple[int, int]) -> bool:
    """Does code built for one TORCH_CUDA_ARCH_LIST entry run on a GPU of this compute capability?

    "9.0": machine code for exactly 9.0. "9.0a": 9.0 plus its architecture-specific instructions (wgmma...), still
    exactly 9.0. "10.0f": the 10.x family, 10.0 and newer. "8.0+PTX": also PTX, which the driver compiles for any
    newer GPU when the program loads."""
    ptx = entry.endswith("+PTX")
    base = entry.removesuffix("+PTX")
    suffix = base[-1] if base[-1:] in ("a", "f") else ""
    try:
        major, minor = (int(part) for part in base.removesuffix(suffix).split("."))
    except ValueError:
        return False
    if (major, minor) == capability:
        return True
    if suffix == "f":
        return major == capability[0] and minor <= capability[1]
    return ptx and not suffix and (major, minor) <= capability


def _run(command: list[str]) -> str:
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def _driver_cuda_version() -> str | None:
    """cuDriverGetVersion through libcuda itself; it needs no cuInit and no GPU, only the driver library."""
    try:
        libcuda = ctypes.CDLL(os.environ.get("COURSE_LIBCUDA") or "libcuda.so.1")
    except OSError:
        return None
    version = ctypes.c_int(0)
    if libcuda.cuDriverGetVersion(ctypes.byref(version)) != 0:
        return None
    return str(Version.parse(version.value))


def gather_facts() -> Facts:
    import torch

    facts = Facts(torch_version=torch.__version__, torch_cuda=torch.version.cuda)
    if torch.backends.cudnn.is_available():
        facts.cudnn = torch.backends.cudnn.version()
    facts.driver_cuda = _driver_cuda_version()
    if shutil.which("nvidia-smi"):
        facts.driver_version = (
            _run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]).split("\n")[0].strip() or None
        )
    if torch.cuda.is_available():
        facts.gpus = [
            (torch.cuda.get_device_name(i), torch.cuda.get_device_capability(i))
            for i in range(torch.cuda.device_count())
        ]
        facts.torch_arches = torch.cuda.get_arch_list()
    facts.cuda_home = os.environ.get("CUDA_HOME")
    facts.arch_list_env = os.environ.get("TORCH_CUDA_ARCH_LIST")
    home_nvcc = os.path.join(facts.cuda_home, "bin", "nvcc") if facts.cuda_home else None
    facts.nvcc_path = home_nvcc if home_nvcc and os.path.exists(home_nvcc) else shutil.which("nvcc")
    if facts.nvcc_path:
        match = re.search(r"release (\d+\.\d+)", _run([facts.nvcc_path, "--version"]))
        facts.nvcc_version = match.group(1) if match else None
    facts.cxx = os.environ.get("CXX") or "c++"  # torch.utils.cpp_extension's choice
    facts.cxx_path = shutil.which(facts.cxx)
    if facts.cxx_path:
        facts.cxx_shared_runtime = shared_cxx_runtime(facts.cxx_path)
    return facts


def _arch_of(capability: tuple[int, int]) -> str:
    return f"sm_{capability[0]}{capability[1]}"


def diagnose(f: Facts) -> list[Finding]:
    found: list[Finding] = []
    add = lambda *args: found.append(Finding(*args))  # noqa: E731

    torch_cuda = Version.parse(f.torch_cuda) if f.torch_cuda else None
    nvcc = Version.parse(f.nvcc_version) if f.nvcc_version else None
    driver_cuda = Version.parse(f.driver_cuda) if f.driver_cuda else None

    if torch_cuda is None:
        add(
            "error",
            "torch",
            f"torch {f.torch_version} is a CPU-only build: it cannot use a GPU at all.",
            "Install a CUDA build of torch (see pytorch.org's install selector) that your driver supports.",
        )
    else:
        add("ok", "torch", f"torch {f.torch_version} was built with CUDA {torch_cuda}.")

    if driver_cuda is None:
        add(
            "info",
            "driver",
            "No NVIDIA driver found (libcuda.so.1 is missing): no GPU work can run here. "
            "CUDA code still compiles, and GPU tests are skipped.",
            "On a GPU machine, install the NVIDIA driver; `nvidia-smi` should then list the GPU.",
        )
    else:
        add("ok", "driver", f"Driver {f.driver_version or '?'} supports CUDA up to {driver_cuda}.")
        if torch_cuda is not None and not driver_can_run_toolkit(driver_cuda, torch_cuda):
            add(
                "error",
                "driver",
                f"The driver supports CUDA up to {driver_cuda}, but torch was built with CUDA "
                f"{torch_cuda}: torch.cuda.is_available() will be False ('driver too old').",
                f"Update the NVIDIA driver to one that supports CUDA {torch_cuda}, or install a torch built for "
                f"CUDA {driver_cuda} or older.",
            )
        if nvcc is not None and not driver_can_run_toolkit(driver_cuda, nvcc):
            add(
                "warning",
                "driver",
                f"nvcc is CUDA {nvcc} but the driver supports only up to {driver_cuda}: "
                "programs you build with it will fail with 'the provided PTX was compiled with an unsupported "
                "toolchain' or 'CUDA driver version is insufficient'.",
                f"Update the driver, or use a CUDA {driver_cuda.major}.x toolkit.",
            )

    if nvcc is None:
        add(
            "warning",
            "nvcc",
            "nvcc (the CUDA compiler) was not found: CUDA extensions cannot be built.",
            "Install the CUDA toolkit matching torch's CUDA major version and set CUDA_HOME (e.g. /usr/local/cuda).",
        )
    elif torch_cuda is not None:
        if not extension_build_compatible(torch_cuda, nvcc):
            add(
                "error",
                "nvcc",
                f"nvcc is CUDA {nvcc} but torch was built with CUDA {torch_cuda}: building an "
                "extension fails with 'The detected CUDA version mismatches the version that was used to compile "
                "PyTorch'.",
                f"Use a CUDA {torch_cuda.major}.x toolkit (point CUDA_HOME at it), or a torch built for CUDA "
                f"{nvcc.major}.x.",
            )
        elif nvcc != torch_cuda:
            add(
                "info",
                "nvcc",
                f"nvcc {nvcc} and torch's CUDA {torch_cuda} differ only in the minor version: "
                "extensions build (torch prints a warning) and run.",
            )
        else:
            add("ok", "nvcc", f"nvcc {nvcc} matches torch's CUDA {torch_cuda}.")

    if f.cuda_home is None:
        if nvcc is not None:
            add(
                "warning",
                "CUDA_HOME",
                f"CUDA_HOME is not set; torch will guess the toolkit from {f.nvcc_path}. "
                "If that nvcc is a wrapper script (e.g. /usr/local/bin/nvcc), linking fails with "
                "'cannot find -lcudart'.",
                "export CUDA_HOME=/usr/local/cuda (the folder holding bin/nvcc).",
            )
    elif not os.path.exists(os.path.join(f.cuda_home, "bin", "nvcc")):
        add(
            "error",
            "CUDA_HOME",
            f"CUDA_HOME={f.cuda_home} holds no bin/nvcc.",
            "Point CUDA_HOME at the toolkit's root, the folder that contains bin/nvcc and include/cuda.h.",
        )

    if f.cxx is not None:
        if f.cxx_path is None:
            add(
                "warning",
                "C++ compiler",
                f"The C++ compiler {f.cxx} was not found: no extension can be built (torch compiles with $CXX, "
                "or c++ when CXX is not set).",
                "Install g++ (e.g. apt install g++), or set CXX to a C++ compiler.",
            )
        elif f.cxx_shared_runtime is False:
            add(
                "error",
                "C++ compiler",
                f"{f.cxx} has only the static C++ runtime (`{f.cxx} -print-file-name=libstdc++.so` prints a bare "
                "name, not a path): every extension it links gets its own copy of libstdc++, beside the "
                "libstdc++.so.6 torch uses, and the first number formatted into a failing TORCH_CHECK message "
                "crashes the process with a segmentation fault (SIGSEGV).",
                "Build with a compiler that has the shared runtime: export CXX=/usr/bin/g++ (the course's make and "
                "course.build switch to g++ from PATH by themselves, and say so).",
            )
        else:
            add("ok", "C++ compiler", f"{f.cxx} links extensions against the shared C++ runtime, as torch does.")

    for name, capability in f.gpus:
        arch = _arch_of(capability)
        if f.torch_arches:
            compute = f"compute_{capability[0]}{capability[1]}"
            if arch not in f.torch_arches and compute not in f.torch_arches:
                add(
                    "error",
                    "GPU",
                    f"{name} is {arch}, but this torch holds kernels only for "
                    f"{', '.join(f.torch_arches)}: ops fail with 'no kernel image is available for execution on "
                    "the device'.",
                    "Install a torch build that supports this GPU generation.",
                )
            else:
                add("ok", "GPU", f"{name} ({arch}) is supported by this torch build.")
        if f.arch_list_env:
            entries = [a.strip() for a in re.split(r"[ ;]", f.arch_list_env) if a.strip()]
            if not any(arch_entry_runs_on(entry, tuple(capability)) for entry in entries):
                add(
                    "warning",
                    "TORCH_CUDA_ARCH_LIST",
                    f"TORCH_CUDA_ARCH_LIST={f.arch_list_env} leaves out this "
                    f"GPU's {capability[0]}.{capability[1]}: extensions you build will not run on it.",
                    f"Add {capability[0]}.{capability[1]}, or unset it to build for the visible GPU.",
                )

    if f.cudnn is not None:
        major, minor = f.cudnn // 10000, (f.cudnn // 100) % 100
        add("ok", "cuDNN", f"cuDNN {major}.{minor} (ships inside torch's wheels; only convolution-style ops use it).")
    return found


def _compiler_text(facts: Facts) -> str:
    if facts.cxx is None:
        return "n/a"
    if facts.cxx_path is None:
        return f"{facts.cxx}: not found"
    runtime = {True: "shared libstdc++", False: "static libstdc++ only", None: "?"}[facts.cxx_shared_runtime]
    return f"{facts.cxx} ({facts.cxx_path}, {runtime})"


def report(facts: Facts, findings: list[Finding]) -> str:
    rows = [
        ("torch", facts.torch_version),
        ("torch.version.cuda", facts.torch_cuda or "none (CPU build)"),
        ("cuDNN", str(facts.cudnn) if facts.cudnn else "none"),
        ("NVIDIA driver", facts.driver_version or ("present" if facts.driver_cuda else "none")),
        ("driver's CUDA (driver API)", facts.driver_cuda or "none"),
        ("GPUs", "; ".join(f"{n} (sm_{c[0]}{c[1]})" for n, c in facts.gpus) or "none visible"),
        ("torch's GPU architectures", " ".join(facts.torch_arches) or "n/a"),
        ("nvcc (toolkit)", f"{facts.nvcc_version} at {facts.nvcc_path}" if facts.nvcc_path else "not found"),
        ("CUDA_HOME", facts.cuda_home or "not set"),
        ("TORCH_CUDA_ARCH_LIST", facts.arch_list_env or "not set"),
        ("C++ compiler ($CXX or c++)", _compiler_text(facts)),
    ]
    width = max(len(k) for k, _ in rows)
    lines = [f"{key:<{width}}  {value}" for key, value in rows]
    lines.append("")
    marks = {"ok": "ok  ", "info": "info", "warning": "WARN", "error": "FAIL"}
    for finding in findings:
        lines.append(f"[{marks[finding.level]}] {finding.topic}: {finding.message}")
        if finding.fix and finding.level in ("warning", "error", "info"):
            lines.append(f"       fix: {finding.fix}")
    return "\n".join(lines)
