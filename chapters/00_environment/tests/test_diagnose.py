"""The diagnosis: each made-up mismatch is flagged with an explanation and a fix; a healthy machine is all ok."""

import pytest
from envcheck import Facts, diagnose
from envcheck.diagnose import arch_entry_runs_on, report

H100 = ("NVIDIA H100 80GB HBM3", (9, 0))


def healthy(**changes) -> Facts:
    facts = Facts(
        torch_version="2.11.0+cu130",
        torch_cuda="13.0",
        cudnn=91300,
        driver_version="580.95.05",
        driver_cuda="13.0",
        gpus=[H100],
        torch_arches=["sm_80", "sm_90", "sm_100"],
        nvcc_version="13.0",
        nvcc_path="/usr/local/cuda/bin/nvcc",
        cuda_home="/usr/local/cuda",
        arch_list_env=None,
        cxx="c++",
        cxx_path="/usr/bin/c++",
        cxx_shared_runtime=True,
    )
    for key, value in changes.items():
        setattr(facts, key, value)
    return facts


def levels(facts, topic):
    return [f.level for f in diagnose(facts) if f.topic == topic]


def test_healthy_machine_has_no_problems(monkeypatch):
    monkeypatch.setattr("os.path.exists", lambda path: True)
    findings = diagnose(healthy())
    assert [f for f in findings if f.level in ("warning", "error")] == []


def test_driver_too_old_for_torch():
    findings = [f for f in diagnose(healthy(driver_cuda="12.4", driver_version="550.54.14")) if f.level == "error"]
    assert any("torch was built with CUDA 13.0" in f.message and "Update the NVIDIA driver" in f.fix for f in findings)


def test_driver_too_old_for_nvcc_is_a_warning():
    findings = diagnose(healthy(driver_cuda="12.8", torch_cuda="12.8", nvcc_version="13.0"))
    assert "warning" in [f.level for f in findings if f.topic == "driver"]


def test_nvcc_major_mismatch_is_an_error():
    findings = diagnose(healthy(nvcc_version="12.8"))
    [error] = [f for f in findings if f.topic == "nvcc"]
    assert error.level == "error" and "mismatches the version" in error.message


def test_nvcc_minor_difference_is_only_information():
    assert levels(healthy(nvcc_version="13.1", driver_cuda="13.1"), "nvcc") == ["info"]


def test_missing_nvcc_says_what_to_install():
    [finding] = [f for f in diagnose(healthy(nvcc_version=None, nvcc_path=None)) if f.topic == "nvcc"]
    assert finding.level == "warning" and "CUDA toolkit" in finding.fix


def test_cpu_only_torch():
    assert "error" in levels(healthy(torch_cuda=None, gpus=[], torch_arches=[]), "torch")


def test_no_driver_is_information_not_failure():
    findings = diagnose(healthy(driver_cuda=None, driver_version=None, gpus=[], torch_arches=[]))
    assert levels(healthy(driver_cuda=None, driver_version=None, gpus=[], torch_arches=[]), "driver") == ["info"]
    assert not [f for f in findings if f.level == "error"]


def test_gpu_without_kernel_image():
    findings = diagnose(healthy(gpus=[("NVIDIA B200", (10, 0))], torch_arches=["sm_80", "sm_90"]))
    assert any("no kernel image is available" in f.message for f in findings if f.level == "error")


def test_arch_list_missing_the_gpu():
    assert "warning" in levels(healthy(arch_list_env="8.0;8.6"), "TORCH_CUDA_ARCH_LIST")
    assert "warning" not in levels(healthy(arch_list_env="8.0 9.0+PTX"), "TORCH_CUDA_ARCH_LIST")
    # the GPU machine sets 9.0a: sm_90a code is H100 code (plus wgmma and friends), not a different GPU's
    assert "warning" not in levels(healthy(arch_list_env="9.0a"), "TORCH_CUDA_ARCH_LIST")
    assert "warning" not in levels(healthy(arch_list_env="8.0+PTX"), "TORCH_CUDA_ARCH_LIST")  # PTX, compiled on load


def test_cuda_home_without_nvcc(tmp_path):
    assert levels(healthy(cuda_home=str(tmp_path)), "CUDA_HOME") == ["error"]


def test_cuda_home_unset_warns_about_wrappers():
    [finding] = [f for f in diagnose(healthy(cuda_home=None)) if f.topic == "CUDA_HOME"]
    assert "cannot find -lcudart" in finding.message


def test_compiler_with_only_the_static_cxx_runtime_is_an_error():
    """The cause found on the course's GPU machine: CXX=/opt/gcc/bin/g++ has only libstdc++.a, so every extension
    carries its own C++ runtime and a failing TORCH_CHECK that formats a number crashes the process."""
    facts = healthy(cxx="/opt/gcc/bin/g++", cxx_path="/opt/gcc/bin/g++", cxx_shared_runtime=False)
    [finding] = [f for f in diagnose(facts) if f.topic == "C++ compiler"]
    assert finding.level == "error"
    assert "-print-file-name=libstdc++.so" in finding.message and "SIGSEGV" in finding.message
    assert "CXX=/usr/bin/g++" in finding.fix
    assert "static libstdc++ only" in report(facts, diagnose(facts))


def test_compiler_with_the_shared_runtime_is_ok():
    assert levels(healthy(), "C++ compiler") == ["ok"]


def test_missing_compiler_says_what_to_install():
    [finding] = [
        f for f in diagnose(healthy(cxx="g++", cxx_path=None, cxx_shared_runtime=None)) if f.topic == "C++ compiler"
    ]
    assert finding.level == "warning" and "g++" in finding.fix


def _fake_compiler(folder, prints: str) -> str:
    """A stand-in for a C++ compiler that answers `-print-file-name=libstdc++.so` with `prints`."""
    path = folder / "fake-g++"
    path.write_text(f"#!/bin/sh\necho '{prints}'\n")
    path.chmod(0o755)
    return str(path)


@pytest.mark.parametrize(
    "prints, shared",
    [
        ("libstdc++.so", False),  # a bare name: the compiler has no shared libstdc++ (/opt/gcc on the GPU machine)
        ("/usr/lib/gcc/x86_64-linux-gnu/13/libstdc++.so", True),  # a path: it links the shared runtime
    ],
)
def test_gather_facts_asks_the_compiler_named_by_cxx(prints, shared, tmp_path, monkeypatch):
    compiler = _fake_compiler(tmp_path, prints)
    monkeypatch.setenv("CXX", compiler)
    from envcheck import gather_facts

    facts = gather_facts()
    assert (facts.cxx, facts.cxx_path, facts.cxx_shared_runtime) == (compiler, compiler, shared)
    assert levels(facts, "C++ compiler") == (["ok"] if shared else ["error"])


def test_gather_facts_without_the_compiler(monkeypatch):
    monkeypatch.setenv("CXX", "no-such-compiler-anywhere")
    from envcheck import gather_facts

    facts = gather_facts()
    assert facts.cxx_path is None and facts.cxx_shared_runtime is None
    assert levels(facts, "C++ compiler") == ["warning"]


def test_report_lists_every_fact_and_finding():
    facts = healthy(driver_cuda="12.4")
    text = report(facts, diagnose(facts))
    for expected in ("torch.version.cuda", "13.0", "NVIDIA H100", "[FAIL] driver", "fix:"):
        assert expected in text


@pytest.mark.parametrize("strict", [False, True])
def test_strict_mode_exits_1_on_errors(strict, monkeypatch, capsys):
    import contextlib
    import runpy
    import sys

    monkeypatch.setattr(sys.modules["envcheck.diagnose"], "gather_facts", lambda: healthy(torch_cuda=None))
    monkeypatch.setattr(sys, "argv", ["envcheck", "--strict"] if strict else ["envcheck"])
    with pytest.raises(SystemExit, match="1") if strict else contextlib.nullcontext():
        runpy.run_module("envcheck", run_name="__main__")
    assert "[FAIL] torch" in capsys.readouterr().out


@pytest.mark.parametrize(
    "entry, capability, runs",
    [
        ("9.0", (9, 0), True),
        ("9.0a", (9, 0), True),
        ("9.0a", (10, 0), False),  # architecture-specific code runs on that architecture only
        ("8.0", (9, 0), False),
        ("8.0+PTX", (9, 0), True),  # the driver compiles the PTX for the newer GPU
        ("10.0+PTX", (9, 0), False),  # PTX never runs on an older GPU
        ("10.0f", (10, 3), True),  # family-specific: the 10.x family from 10.0 on
        ("10.0f", (12, 0), False),
        ("nonsense", (9, 0), False),
    ],
)
def test_arch_entry_runs_on(entry, capability, runs):
    assert arch_entry_runs_on(entry, capability) is runs
