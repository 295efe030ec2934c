"""The chapter's Python demo (`make run`): NVRTC from Python, then (with a GPU) ReLU on torch tensors."""

import time

import torch

import nvrtc_relu
from nvrtc_relu import compiler


def main() -> None:
    major, minor = nvrtc_relu.nvrtc_version()
    print(f"\n== Python: NVRTC {major}.{minor} through cuda.bindings.nvrtc ==")
    compiler.compile_source.cache_clear()
    start = time.perf_counter()
    ptx = nvrtc_relu.compile_ptx(arch="compute_90")
    first = time.perf_counter() - start
    start = time.perf_counter()
    nvrtc_relu.compile_ptx(arch="compute_90")
    cached = time.perf_counter() - start
    print(f"kernels.cu -> PTX for compute_90: {len(ptx)} characters, entries {nvrtc_relu.ptx_entries(ptx)}")
    print(f"first compile {first * 1e3:.1f} ms, cached {cached * 1e6:.1f} µs")

    broken = 'extern "C" __global__ void broken(float *y) {\n    y[0] = 1.0f\n}\n'
    try:
        nvrtc_relu.compile_ptx(broken, name="broken.cu")
    except nvrtc_relu.CompileError as error:
        print(f"A syntax error raises CompileError with NVRTC's log:\n{error.log.strip()}")

    reason = nvrtc_relu.driver_skip_reason()
    if reason or not torch.cuda.is_available():
        print(f"SKIPPED the launches: {reason or 'no CUDA device visible'}")
        return

    print(f"\n== launches on {torch.cuda.get_device_name()} ==")
    x = torch.randn(1_000_003, device="cuda", requires_grad=True)
    start = time.perf_counter()
    nvrtc_relu.kernels(x.get_device())
    elapsed_ms = (time.perf_counter() - start) * 1e3
    print(f"NVRTC compile for {nvrtc_relu.ops.device_arch(x.get_device())} + cuModuleLoadData: {elapsed_ms:.1f} ms")
    start = time.perf_counter()
    y = nvrtc_relu.relu(x)
    torch.cuda.synchronize()
    elapsed_ms = (time.perf_counter() - start) * 1e3
    print(f"first call of the op: {elapsed_ms:.1f} ms (custom_op imports torch._dynamo on its first call)")
    grad = torch.randn_like(x)
    y.backward(grad)
    x_ref = x.detach().clone().requires_grad_()
    torch.relu(x_ref).backward(grad)
    print(f"forward  max |nvrtc - torch.relu| = {(y - torch.relu(x_ref)).abs().max().item()}")
    print(f"backward max |nvrtc - torch|      = {(x.grad - x_ref.grad).abs().max().item()}")
    core = nvrtc_relu.relu_forward_core(x.detach())
    print(f"cuda.core launch path agrees: {torch.equal(core, y.detach())}")

    from nvrtc_relu.cupy_side import cupy_skip_reason, relu_forward_cupy

    why = cupy_skip_reason()
    if why:
        print(f"SKIPPED CuPy RawKernel: {why}")
    else:
        print(f"CuPy RawKernel agrees: {torch.equal(relu_forward_cupy(x.detach()), y.detach())}")

    n = 1 << 20
    xs = torch.full((n,), -1.0, device="cuda")
    src = torch.rand(n, device="cuda") + 0.5
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(50_000_000)
        xs.copy_(src)
        wrong = nvrtc_relu.pitfall_relu_default_stream(xs)
        right = nvrtc_relu.relu_forward(xs)
    torch.cuda.synchronize()
    print(
        f"PITFALL launch on stream 0: {(wrong != torch.relu(src)).float().mean().item():.0%} of outputs wrong; "
        f"on the current stream: {(right != torch.relu(src)).float().mean().item():.0%}"
    )


if __name__ == "__main__":
    main()
