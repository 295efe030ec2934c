/*
 * square_bias_thread.cuh — the per-thread code of chapter 03's kernels that the exercises ask for: the grid-stride
 * index with its bounds check (EXERCISE 1) and the fused backward (EXERCISE 2). square_bias_kernels.cu includes it
 * inside its anonymous namespace, after Acc, to_acc/from_acc, Pack and GridPos; the kernels and the CPU emulation
 * (square_bias_emulate_*) both run this code.
 *
 * EXERCISE COPY: fill in the bodies marked TODO, then `EXERCISE=1 make test`. tests/test_emulation.py runs your
 * per-thread code on the CPU (no GPU needed); the GPU tests run it for real.
 *
 * The build finds this file through the include path: under EXERCISE=1 the exercises/ copy comes first.
 */

// Until the TODOs are filled in, some helpers are never called: nvcc would warn (#177) about each.
#pragma nv_diag_suppress 177

// ---- EXERCISE 1: the index and the bounds check -------------------------------------------------------------------
// Call f(i) for every i in [0, count) that belongs to this thread: its global index first, then every
// "number of threads in the grid" further, never reaching count. All arithmetic in int64_t: a grid of 2^20 threads
// walking 2^32 elements must not overflow.
template <typename F>
__host__ __device__ inline void grid_stride_for_each(int64_t count, GridPos p, const F &f) {
    // TODO (about 2 lines): this thread's global index from p.block, p.block_dim and p.thread; the number of threads
    //      in the grid as the stride; a loop calling f(i) while i < count (the bounds check).
    (void)count;
    (void)p;
    (void)f;
}

// ---- EXERCISE 2: the fused backward ------------------------------------------------------------------------------
// grad_x = 2 x grad_y, computed in acc_t<T>, rounded once. Each pack or element is read once and written once.
template <typename T>
struct GradXPacked {
    const Pack<T> *grad_y, *x;
    Pack<T> *grad_x;
    __host__ __device__ void operator()(int64_t v) const {
        // TODO (about 4 lines): load pack v of grad_y and of x (one 16-byte load each), compute every element of
        //      the output pack as from_acc<T>(2 * to_acc(x) * to_acc(grad_y)), store it with one 16-byte store.
        //      ForwardPacked above is the model.
        (void)v;
    }
};

template <typename T>
struct GradXScalar {
    const T *grad_y, *x;
    T *grad_x;
    int64_t offset;
    __host__ __device__ void operator()(int64_t k) const {
        // TODO (about 2 lines): element i = offset + k; grad_x[i] = 2 x[i] grad_y[i], computed in acc_t<T>.
        (void)k;
    }
};

// One thread's share of the broadcast backward: column `col` of the rows first_row, first_row + row_stride, ...
// below `rows`. Writes grad_x there and returns the sum of grad_y over those rows (in acc_t<T>).
template <typename T>
__host__ __device__ inline acc_t<T> backward_column(const T *grad_y, const T *x, T *grad_x, int64_t rows, int64_t b_n,
                                                    int64_t col, int64_t first_row, int64_t row_stride) {
    // TODO (about 8 lines): for rows r = first_row, first_row + row_stride, ... below rows: the element
    //      i = r * b_n + col; read grad_y[i] once (as acc_t<T>), write grad_x[i] = 2 x[i] grad_y[i], and add
    //      grad_y[i] to a running sum in acc_t<T>. Return the sum. Use int64_t for r and i.
    (void)grad_y, (void)x, (void)grad_x, (void)rows, (void)b_n, (void)col, (void)first_row, (void)row_stride;
    return 0;
}
