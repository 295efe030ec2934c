"""The compiler's resource report for every kernel of the chapter: registers, spills, shared memory.

    python -m matmul.ptxas [--nvcc PATH] [--arch sm_90] [--out build/ptxas-report.txt]      (make ptxas-report)

nvcc -Xptxas -v prints, for each kernel, the registers a thread uses, the bytes spilled to local memory (slow:
a spill is a load or store to memory behind L1) and the static shared memory. A register count caps occupancy: an
SM has 65,536 registers, so 256 threads of 128 registers fill half of it (2 blocks per SM), of 255 registers all
of it (1 block). No GPU is needed: this runs wherever nvcc does.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

CHAPTER = Path(__file__).resolve().parents[1]
COMMON_INCLUDE = CHAPTER.parents[1] / "common" / "include"


@dataclass(frozen=True)
class KernelResources:
    name: str  # demangled, without the anonymous namespace
    registers: int
    spill_stores: int
    spill_loads: int
    shared_bytes: int  # static shared memory (rung 7-8 use dynamic shared memory: 0 here)

    @property
    def function(self) -> str:
        """The kernel's name without template arguments or parameters: "pipelined_kernel"."""
        found = re.search(r"(\w+)\s*[<(]", self.name)
        return found.group(1) if found else self.name

    @property
    def spills(self) -> int:
        return self.spill_stores + self.spill_loads


# The kernel files, and the targets each is built for: rung 11 (matmul_hopper.cu) for sm_90a only, as the Makefile
# builds it (None: the --arch given, as torch's build uses TORCH_CUDA_ARCH_LIST).
SOURCES = {
    "matmul_kernels.cu": None,
    "matmul_tensor.cu": None,
    "matmul_hopper.cu": ["-std=c++17", "-gencode=arch=compute_90a,code=sm_90a"],
}


def compile_report(nvcc: str, arch: str = "sm_90", source: Path | None = None) -> str:
    """nvcc's -Xptxas -v output for one kernels file (default: the fp32 ladder's), compiled to an object that is thrown
    away."""
    source = source or CHAPTER / "src" / "matmul_kernels.cu"
    targets = SOURCES.get(source.name) or [f"-arch={arch}"]
    command = [nvcc, "-O3", "--use_fast_math", *targets, "-Xptxas", "-v", "-c", str(source), "-o", "/dev/null"]
    command += ["-I", str(COMMON_INCLUDE), "-I", str(CHAPTER / "src")]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"nvcc failed:\n{result.stderr[-3000:]}")
    return result.stderr


def _demangle(names: list[str]) -> list[str]:
    tool = shutil.which("c++filt")
    if tool is None:
        return names
    out = subprocess.run([tool], input="\n".join(names), capture_output=True, text=True).stdout.splitlines()
    if len(out) != len(names):
        return names
    layouts = {"(Layout)0": "kContigK", "(Layout)1": "kContigMN", "(Layout)2": "kScalar"}
    cleaned = []
    for name in out:
        name = name.replace("(anonymous namespace)::", "")
        for code, layout in layouts.items():
            name = name.replace(code, layout)
        cleaned.append(name)
    return cleaned


def parse(report: str) -> list[KernelResources]:
    """The kernels of a -Xptxas -v report, in the order ptxas compiled them."""
    entries: list[dict] = []
    for line in report.splitlines():
        found = re.search(r"Compiling entry function '(\S+)'", line)
        if found:
            entries.append({"mangled": found.group(1), "registers": 0, "stores": 0, "loads": 0, "shared": 0})
            continue
        if not entries:
            continue
        spill = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if spill:
            entries[-1]["stores"], entries[-1]["loads"] = int(spill.group(1)), int(spill.group(2))
        used = re.search(r"Used (\d+) registers", line)
        if used:
            entries[-1]["registers"] = int(used.group(1))
            shared = re.search(r"(\d+) bytes smem", line)
            entries[-1]["shared"] = int(shared.group(1)) if shared else 0
    names = _demangle([e["mangled"] for e in entries])
    return [KernelResources(n, e["registers"], e["stores"], e["loads"], e["shared"]) for n, e in zip(names, entries)]


def table(kernels: list[KernelResources]) -> str:
    lines = [f"{'registers':>9} {'spilled bytes':>13} {'static smem':>11}  kernel"]
    for k in sorted(kernels, key=lambda k: k.name):
        lines.append(f"{k.registers:>9} {k.spills:>13} {k.shared_bytes:>11}  {k.name[:110]}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    kernels = [k for name in SOURCES for k in parse(compile_report(args.nvcc, args.arch, CHAPTER / "src" / name))]
    text = table(kernels)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
        print(f"\n(saved to {args.out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
