/*
 * rowwise_emulate.c — runs the chapter's two exercise files on the CPU.
 *
 * online_softmax.h: one POSIX thread per lane of one warp.
 *
 * A warp of 32 threads shares an exchange array and a barrier. RW_SHFL_XOR(v, mask) is imitated as the hardware
 * does it: every lane writes its value, the warp waits, every lane reads the value of lane ^ mask, the warp waits
 * again. The warp walks the rows one after the other, as the rung-2 kernel does with a warp per row.
 *
 * Entry points (called from Python through ctypes, rowwise/emulate.py); each returns 0, or -1 for a bad argument:
 *   rw_emulate_softmax(x, y, rows, n)                   the warp-per-row softmax of a rows x n float matrix
 *   rw_emulate_combine(max, sum, width, out_max, out_sum)   rw_warp_combine on 32 lanes' pairs, every lane's answer
 *   rw_emulate_add(max, sum, x, &out_max, &out_sum)     rw_online_add on one pair
 *   rw_emulate_merge(a_max, a_sum, b_max, b_sum, &max, &sum)   rw_merge
 *
 * two_stage.h: stage 1 with one POSIX thread per row group (they finish in whatever order they do), then stage 2.
 *   rw_emulate_dweight(products, rows, n, groups, partials, out)   the two stages on a rows x n float matrix
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include <online_softmax.h> /* <...>: EXERCISE=1 builds put exercises/ first on the include path */
#include <two_stage.h>

enum { SOFTMAX, COMBINE };

typedef struct {
    int kind, width;
    const float *x, *in_max, *in_sum;
    float *y, *out_max, *out_sum;
    int64_t rows, n;
    float exchange[RW_WARP_SIZE];
    pthread_barrier_t barrier;
} warp_t;

typedef struct {
    warp_t *warp;
    int lane;
} lane_t;

static _Thread_local lane_t *self;

float rw_emu_shfl_xor(float value, int mask) {
    warp_t *warp = self->warp;
    warp->exchange[self->lane] = value;
    pthread_barrier_wait(&warp->barrier);
    const float received = warp->exchange[(self->lane ^ mask) & (RW_WARP_SIZE - 1)];
    pthread_barrier_wait(&warp->barrier);
    return received;
}

static void *run_lane(void *arg) {
    self = (lane_t *)arg;
    warp_t *warp = self->warp;
    const int lane = self->lane;
    if (warp->kind == COMBINE) {
        rw_max_sum s = {warp->in_max[lane], warp->in_sum[lane]};
        s = rw_warp_combine(s, warp->width);
        warp->out_max[lane] = s.max;
        warp->out_sum[lane] = s.sum;
        return NULL;
    }
    for (int64_t r = 0; r < warp->rows; r++) { /* the same rows in every lane: the shuffles stay in step */
        const float *xr = warp->x + r * warp->n;
        rw_max_sum s = rw_max_sum_empty();
        for (int64_t i = lane; i < warp->n; i += RW_WARP_SIZE) s = rw_online_add(s, xr[i]);
        s = rw_warp_combine(s, RW_WARP_SIZE);
        const float inverse = 1.0f / s.sum;
        for (int64_t i = lane; i < warp->n; i += RW_WARP_SIZE)
            warp->y[r * warp->n + i] = rw_exp(xr[i] - s.max) * inverse;
    }
    return NULL;
}

static int run_warp(warp_t *warp) {
    lane_t lanes[RW_WARP_SIZE];
    pthread_t ids[RW_WARP_SIZE];
    pthread_barrier_init(&warp->barrier, NULL, RW_WARP_SIZE);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    int started = 0;
    for (; started < RW_WARP_SIZE; started++) {
        lanes[started].warp = warp;
        lanes[started].lane = started;
        if (pthread_create(&ids[started], &attr, run_lane, &lanes[started]) != 0) break;
    }
    pthread_attr_destroy(&attr);
    if (started < RW_WARP_SIZE) abort(); /* the others would wait at the barrier for ever */
    for (int t = 0; t < started; t++) pthread_join(ids[t], NULL);
    pthread_barrier_destroy(&warp->barrier);
    return 0;
}

int rw_emulate_softmax(const float *x, float *y, int64_t rows, int64_t n) {
    if (x == NULL || y == NULL || rows < 0 || n < 0) return -1;
    warp_t warp = {.kind = SOFTMAX, .width = RW_WARP_SIZE, .x = x, .y = y, .rows = rows, .n = n};
    return run_warp(&warp);
}

int rw_emulate_combine(const float *in_max, const float *in_sum, int width, float *out_max, float *out_sum) {
    if (in_max == NULL || in_sum == NULL || out_max == NULL || out_sum == NULL) return -1;
    if (width < 1 || width > RW_WARP_SIZE || (width & (width - 1)) != 0) return -1;
    warp_t warp = {
        .kind = COMBINE, .width = width, .in_max = in_max, .in_sum = in_sum, .out_max = out_max, .out_sum = out_sum};
    return run_warp(&warp);
}

int rw_emulate_add(float max, float sum, float x, float *out_max, float *out_sum) {
    if (out_max == NULL || out_sum == NULL) return -1;
    rw_max_sum s = {max, sum};
    s = rw_online_add(s, x);
    *out_max = s.max;
    *out_sum = s.sum;
    return 0;
}

int rw_emulate_merge(float a_max, float a_sum, float b_max, float b_sum, float *out_max, float *out_sum) {
    if (out_max == NULL || out_sum == NULL) return -1;
    rw_max_sum a = {a_max, a_sum}, b = {b_max, b_sum};
    const rw_max_sum r = rw_merge(a, b);
    *out_max = r.max;
    *out_sum = r.sum;
    return 0;
}

/* ---- two_stage.h ------------------------------------------------------------------------------------------------ */
typedef struct {
    const float *products;
    float *partials;
    int64_t rows, n, group, groups;
} group_t;

static void *run_group(void *arg) {
    const group_t *g = (const group_t *)arg;
    rw_stage1(g->products, g->rows, g->n, g->group, g->groups, g->partials + g->group * g->n);
    return NULL;
}

int rw_emulate_dweight(const float *products, int64_t rows, int64_t n, int64_t groups, float *partials, float *out) {
    if (products == NULL || partials == NULL || out == NULL || rows < 0 || n < 0 || groups < 1 || groups > 256)
        return -1;
    group_t work[256];
    pthread_t ids[256];
    int64_t started = 0;
    for (; started < groups; started++) {
        work[started] = (group_t){products, partials, rows, n, started, groups};
        if (pthread_create(&ids[started], NULL, run_group, &work[started]) != 0) break;
    }
    for (int64_t t = 0; t < started; t++) pthread_join(ids[t], NULL);
    if (started < groups) return -1;
    for (int64_t c = 0; c < n; c++) out[c] = rw_stage2(partials, groups, n, c);
    return 0;
}
