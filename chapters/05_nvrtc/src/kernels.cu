// kernels.cu — the CUDA C that this chapter compiles at run time with NVRTC, from C (src/nvrtc_demo.c) and from
// Python (nvrtc_relu/compiler.py). Nothing compiles this file ahead of time.
//
// What they compute (float32, n elements, 64-bit indices):
//   vector_add(c, a, b, n)             c[i] = a[i] + b[i]
//   relu_forward(y, x, n)              y[i] = max(x[i], 0)              (NaN stays NaN, as in torch.relu)
//   relu_backward(gx, gy, x, n)        gx[i] = x[i] <= 0 ? 0 : gy[i]    (0 at x == 0, gy at NaN: as PyTorch)
//
// How the work is split: a 1-D grid of 1-D blocks and a grid-stride loop, so any grid covers any n. The ReLU
// kernels move 4 floats per thread per step with one 16-byte load/store (float4) when every pointer is 16-byte
// aligned, then do the last n % 4 elements one by one; with a misaligned pointer they do every element one by one.
// The launcher plans ceil(n / 4) threads for them (vector_add: n threads).
//
// extern "C" keeps the names unmangled, so cuModuleGetFunction finds "relu_forward" by that name.

extern "C" __global__ void vector_add(float *__restrict__ c, const float *__restrict__ a, const float *__restrict__ b,
                                      long long n) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) c[i] = a[i] + b[i];
}

__device__ __forceinline__ float relu1(float v) {
    return v <= 0.0f ? 0.0f : v;
}  // NaN <= 0 is false: NaN stays
__device__ __forceinline__ float relu_grad1(float g, float v) {
    return v <= 0.0f ? 0.0f : g;
}  // written as the forward's test, not `v > 0 ? g : 0`: that one sends NaN to 0 where PyTorch passes g
__device__ __forceinline__ bool aligned16(const void *p) {
    return ((unsigned long long)p & 15ull) == 0;
}

extern "C" __global__ void relu_forward(float *__restrict__ y, const float *__restrict__ x, long long n) {
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long stride = (long long)gridDim.x * blockDim.x;
    long long done = 0;
    if (aligned16(x) && aligned16(y)) {
        const long long n4 = n / 4;
        const float4 *x4 = reinterpret_cast<const float4 *>(x);
        float4 *y4 = reinterpret_cast<float4 *>(y);
        for (long long i = first; i < n4; i += stride) {
            float4 v = x4[i];
            v.x = relu1(v.x);
            v.y = relu1(v.y);
            v.z = relu1(v.z);
            v.w = relu1(v.w);
            y4[i] = v;
        }
        done = n4 * 4;
    }
    for (long long i = done + first; i < n; i += stride) y[i] = relu1(x[i]);
}

extern "C" __global__ void relu_backward(float *__restrict__ gx, const float *__restrict__ gy,
                                         const float *__restrict__ x, long long n) {
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long stride = (long long)gridDim.x * blockDim.x;
    long long done = 0;
    if (aligned16(gx) && aligned16(gy) && aligned16(x)) {
        const long long n4 = n / 4;
        const float4 *gy4 = reinterpret_cast<const float4 *>(gy);
        const float4 *x4 = reinterpret_cast<const float4 *>(x);
        float4 *gx4 = reinterpret_cast<float4 *>(gx);
        for (long long i = first; i < n4; i += stride) {
            const float4 g = gy4[i];
            const float4 v = x4[i];
            gx4[i] =
                make_float4(relu_grad1(g.x, v.x), relu_grad1(g.y, v.y), relu_grad1(g.z, v.z), relu_grad1(g.w, v.w));
        }
        done = n4 * 4;
    }
    for (long long i = done + first; i < n; i += stride) gx[i] = relu_grad1(gy[i], x[i]);
}
