"""The Python exercise, checked without a GPU: the grid size and the kernel arguments handed to cuLaunchKernel.

`from nvrtc_relu import launch` is nvrtc_relu/launch.py, or the student's exercises/launch.py under EXERCISE=1
(nvrtc_relu/__init__.py calls course.build.exercises_first). With a GPU, every op test runs its `launch` too.
"""

import ctypes
import math
import re
from pathlib import Path

import pytest
from course.build import exercise_mode
from nvrtc_relu import compiler, launch

CHAPTER_DIR = Path(__file__).resolve().parents[1]


def test_the_exercise_replaces_the_module():
    folder = "exercises" if exercise_mode() else "nvrtc_relu"
    assert Path(launch.__file__).resolve() == CHAPTER_DIR / folder / "launch.py"


@pytest.mark.parametrize("n", [0, 1, 3, 4, 5, 1023, 1024, 1025, 1000003, 2**33 + 3, 2**45])
@pytest.mark.parametrize("items", [1, 4])
@pytest.mark.parametrize("block", [128, 256, 1024])
def test_grid(n, items, block):
    assert launch.grid_for(n, items, block) == min(math.ceil(math.ceil(n / items) / block), 2**31 - 1)


def _declared_parameters() -> dict[str, list[str]]:
    """kernel name -> its parameters as src/kernels.cu declares them, e.g. ['float *__restrict__ y', ...]."""
    found = re.findall(r'extern "C" __global__ void (\w+)\(([^)]*)\)', compiler.kernels_source())
    return {name: [p.strip() for p in parameters.split(",")] for name, parameters in found}


def _c_type(declaration: str) -> type:
    if "*" in declaration:
        return ctypes.c_void_p  # a device pointer: the tensor's data_ptr()
    if declaration.startswith("long long"):
        return ctypes.c_longlong
    raise AssertionError(f"the test does not know the C type of {declaration!r}")


@pytest.mark.parametrize("name", ["vector_add", "relu_forward", "relu_backward"])
def test_parameter_types_match_the_kernels(name):
    """One C type per parameter of the kernel, in its order: cuLaunchKernel copies that many bytes per argument,
    and the driver cannot check them."""
    declared = _declared_parameters()[name]
    want = tuple(_c_type(p) for p in declared)
    assert launch.PARAMETER_TYPES[name] == want, f"{name}({', '.join(declared)})"


@pytest.mark.parametrize("name", ["vector_add", "relu_forward", "relu_backward"])
def test_kernel_arguments(name):
    count = len(_declared_parameters()[name])
    values = tuple(0x7F00_0000_0000 + 0x100 * i for i in range(count - 1)) + (2**33 + 5,)  # pointers..., n
    arguments, types = launch.kernel_arguments(name, *values)
    assert arguments == values and len(types) == count
    # The bytes the kernel reads for each argument, as cuda.bindings writes them: 8 bytes, little-endian.
    for value, c_type in zip(arguments, types):
        assert bytes(c_type(value)) == value.to_bytes(8, "little")
    with pytest.raises(TypeError, match=f"kernel {name} takes {count} arguments, got {count - 1}"):
        launch.kernel_arguments(name, *values[:-1])
