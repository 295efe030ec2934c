/*
 * norm_emulate.c — runs the block-sum helpers of norm_blocks.h on the CPU, one POSIX thread per CUDA thread.
 *
 * A "block" of nthreads threads shares `shared` (its shared memory) and a barrier (__syncthreads). Each group of 32
 * threads is a "warp" with its own barrier and an exchange array through which __shfl_down_sync is imitated:
 * every lane writes its value, the warp waits, every lane reads the value of lane + offset, the warp waits again.
 * The result is what the helpers compute when threads really run at the same time — a missing barrier can show as
 * a wrong sum here too, though not every time (races are timing-dependent; racecheck is the tool on the GPU).
 *
 * Entry points (called from Python through ctypes, see norm_diff/emulate.py); each returns 0, or -1 for a bad
 * argument or a thread that could not start:
 *   norm_emulate_tree_sum(values, nthreads, &sum)       norm_block_tree_sum, values[t] is thread t's value
 *   norm_emulate_warp_sum(values, &sum)                 norm_warp_sum over one warp of 32
 *   norm_emulate_shuffle_sum(values, nthreads, &sum)    norm_block_shuffle_sum
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdlib.h>

#include <norm_blocks.h> /* <...>: EXERCISE=1 builds put exercises/ first on the include path */

#define MAX_THREADS 1024

enum { TREE, WARP, SHUFFLE };

typedef struct {
    int kind, nthreads;
    const double *values;
    double shared[MAX_THREADS]; /* the block's shared memory */
    double exchange[MAX_THREADS];
    pthread_barrier_t block_barrier;
    pthread_barrier_t warp_barriers[MAX_THREADS / NORM_WARP_SIZE];
    double result; /* thread 0's answer */
} block_t;

typedef struct {
    block_t *block;
    int tid;
} thread_t;

static _Thread_local thread_t *self; /* which emulated thread is running */

void norm_emu_syncthreads(void) {
    pthread_barrier_wait(&self->block->block_barrier);
}

double norm_emu_shfl_down(double value, int offset) {
    block_t *block = self->block;
    const int tid = self->tid, lane = tid % NORM_WARP_SIZE;
    pthread_barrier_t *warp = &block->warp_barriers[tid / NORM_WARP_SIZE];
    block->exchange[tid] = value;
    pthread_barrier_wait(warp);
    /* Like the hardware: a lane whose source lies past the warp's end gets its own value back. */
    const double received = lane + offset < NORM_WARP_SIZE ? block->exchange[tid + offset] : value;
    pthread_barrier_wait(warp);
    return received;
}

static void *run_thread(void *arg) {
    self = (thread_t *)arg;
    block_t *block = self->block;
    const int tid = self->tid;
    double sum = 0.0;
    switch (block->kind) {
        case TREE:
            block->shared[tid] = block->values[tid];
            sum = norm_block_tree_sum(block->shared, tid, block->nthreads);
            break;
        case WARP:
            sum = norm_warp_sum(block->values[tid]);
            break;
        case SHUFFLE:
            sum = norm_block_shuffle_sum(block->values[tid], block->shared, tid, block->nthreads);
            break;
    }
    if (tid == 0) block->result = sum;
    return NULL;
}

static int emulate(int kind, const double *values, int nthreads, double *result) {
    if (values == NULL || result == NULL || nthreads < NORM_WARP_SIZE || nthreads > MAX_THREADS ||
        nthreads % NORM_WARP_SIZE != 0) {
        return -1;
    }
    block_t *block = calloc(1, sizeof *block);
    thread_t *threads = calloc((size_t)nthreads, sizeof *threads);
    pthread_t *ids = calloc((size_t)nthreads, sizeof *ids);
    int status = -1, started = 0;
    if (block == NULL || threads == NULL || ids == NULL) goto done;
    block->kind = kind;
    block->nthreads = nthreads;
    block->values = values;
    pthread_barrier_init(&block->block_barrier, NULL, (unsigned)nthreads);
    for (int w = 0; w < nthreads / NORM_WARP_SIZE; w++) {
        pthread_barrier_init(&block->warp_barriers[w], NULL, NORM_WARP_SIZE);
    }
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024); /* a thousand threads: keep their stacks small */
    for (; started < nthreads; started++) {
        threads[started].block = block;
        threads[started].tid = started;
        if (pthread_create(&ids[started], &attr, run_thread, &threads[started]) != 0) break;
    }
    pthread_attr_destroy(&attr);
    if (started < nthreads) abort(); /* the others would wait at the barrier for ever */
    for (int t = 0; t < started; t++) pthread_join(ids[t], NULL);
    pthread_barrier_destroy(&block->block_barrier);
    for (int w = 0; w < nthreads / NORM_WARP_SIZE; w++) pthread_barrier_destroy(&block->warp_barriers[w]);
    *result = block->result;
    status = 0;
done:
    free(ids);
    free(threads);
    free(block);
    return status;
}

int norm_emulate_tree_sum(const double *values, int nthreads, double *result) {
    return emulate(TREE, values, nthreads, result);
}

int norm_emulate_warp_sum(const double *values, double *result) {
    return emulate(WARP, values, NORM_WARP_SIZE, result);
}

int norm_emulate_shuffle_sum(const double *values, int nthreads, double *result) {
    return emulate(SHUFFLE, values, nthreads, result);
}
