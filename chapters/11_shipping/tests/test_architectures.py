"""Every recent GPU: the CUDA library carries SASS for each promised architecture and PTX for the newest.

`cuobjdump --list-elf` lists the cubins (one per SASS architecture) inside the library, `--list-ptx` the PTX."""

import re
import subprocess

import pytest

from conftest import PROMISED_PTX, PROMISED_SASS, find_cuobjdump

CUOBJDUMP = find_cuobjdump()
needs_cuobjdump = pytest.mark.skipif(CUOBJDUMP is None, reason="cuobjdump not found (CUDA toolkit or triton)")


def listed(library, what):
    out = subprocess.run([CUOBJDUMP, f"--list-{what}", str(library)], capture_output=True, text=True, check=True)
    return sorted(set(re.findall(r"\.(sm_\d+)\.(?:cubin|ptx)", out.stdout)), key=lambda a: int(a[3:]))


@needs_cuobjdump
def test_sass_for_every_promised_architecture(unpacked):
    sass = listed(unpacked / "square_bias_wheel/_C_cuda.abi3.so", "elf")
    missing = [a for a in PROMISED_SASS if a not in sass]
    assert not missing, (
        f"the wheel has no SASS for {missing} (it has {sass}): a GPU of that architecture would fail with 'no kernel "
        "image is available for execution on the device'. Add it to src/cuda_architectures.txt"
    )


@needs_cuobjdump
def test_ptx_for_the_newest(unpacked):
    assert listed(unpacked / "square_bias_wheel/_C_cuda.abi3.so", "ptx") == PROMISED_PTX


@needs_cuobjdump
def test_the_cpu_library_has_no_gpu_code(unpacked):
    out = subprocess.run(
        [CUOBJDUMP, "--list-elf", str(unpacked / "square_bias_wheel/_C.abi3.so")], capture_output=True, text=True
    )
    assert "cubin" not in out.stdout


def test_this_nvcc_can_build_every_promised_architecture():
    """The truth beside the list: the nvcc that builds the wheel knows each promised architecture (nvcc 13.0 dropped
    sm_50 to sm_72, and kept sm_75)."""
    from torch.utils.cpp_extension import CUDA_HOME

    out = subprocess.run([f"{CUDA_HOME}/bin/nvcc", "--list-gpu-code"], capture_output=True, text=True, check=True)
    known = out.stdout.split()
    assert [a for a in PROMISED_SASS if a not in known] == []
