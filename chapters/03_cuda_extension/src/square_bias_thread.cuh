/*
 * square_bias_thread.cuh — the per-thread code of chapter 03's kernels that the exercises ask for: the grid-stride
 * index with its bounds check (EXERCISE 1) and the fused backward (EXERCISE 2). square_bias_kernels.cu includes it
 * inside its anonymous namespace, after Acc, to_acc/from_acc, Pack and GridPos; the kernels and the CPU emulation
 * (square_bias_emulate_*) both run this code.
 *
 * The build finds this file through the include path: under EXERCISE=1 the exercises/ copy comes first.
 */

// ---- EXERCISE 1: the index and the bounds check -------------------------------------------------------------------
// Call f(i) for every i in [0, count) that belongs to this thread: its global index first, then every
// "number of threads in the grid" further, never reaching count. All arithmetic in int64_t: a grid of 2^20 threads
// walking 2^32 elements must not overflow.
template <typename F>
__host__ __device__ inline void grid_stride_for_each(int64_t count, GridPos p, const F &f) {
    const int64_t stride = p.grid_dim * p.block_dim;
    for (int64_t i = p.block * p.block_dim + p.thread; i < count; i += stride) f(i);
}

// ---- EXERCISE 2: the fused backward ------------------------------------------------------------------------------
// grad_x = 2 x grad_y, computed in acc_t<T>, rounded once. Each pack or element is read once and written once.
template <typename T>
struct GradXPacked {
    const Pack<T> *grad_y, *x;
    Pack<T> *grad_x;
    __host__ __device__ void operator()(int64_t v) const {
        const Pack<T> g = grad_y[v], xv = x[v];
        Pack<T> out;
        for (int j = 0; j < Pack<T>::size; ++j) out.v[j] = from_acc<T>(2 * to_acc(xv.v[j]) * to_acc(g.v[j]));
        grad_x[v] = out;
    }
};

template <typename T>
struct GradXScalar {
    const T *grad_y, *x;
    T *grad_x;
    int64_t offset;
    __host__ __device__ void operator()(int64_t k) const {
        const int64_t i = offset + k;
        grad_x[i] = from_acc<T>(2 * to_acc(x[i]) * to_acc(grad_y[i]));
    }
};

// One thread's share of the broadcast backward: column `col` of the rows first_row, first_row + row_stride, ...
// below `rows`. Writes grad_x there and returns the sum of grad_y over those rows (in acc_t<T>).
template <typename T>
__host__ __device__ inline acc_t<T> backward_column(const T *grad_y, const T *x, T *grad_x, int64_t rows, int64_t b_n,
                                                    int64_t col, int64_t first_row, int64_t row_stride) {
    acc_t<T> sum = 0;
    for (int64_t r = first_row; r < rows; r += row_stride) {
        const int64_t i = r * b_n + col;
        const acc_t<T> g = to_acc(grad_y[i]);
        grad_x[i] = from_acc<T>(2 * to_acc(x[i]) * g);
        sum += g;
    }
    return sum;
}
