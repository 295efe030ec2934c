/*
 * rowwise_cpu_impl.h — the body of the CPU ops, written once for float and once for double: rowwise_cpu.c includes
 * this file twice, with REAL set to the element type and SUFFIX to the name's ending (f32, f64).
 *
 * One row at a time, in double: two passes for the statistics (the mean first, then the squares of x - mean), a
 * third for the output. That is the reference the GPU kernels are checked against, so it is written for accuracy,
 * not speed.
 */
#define RW_CAT_(a, b) a##b
#define RW_CAT(a, b) RW_CAT_(a, b)
#define RW_NAME(name) RW_CAT(name, SUFFIX)

void RW_NAME(rowwise_softmax_cpu_)(const REAL *x, REAL *y, int64_t rows, int64_t n) {
    for (int64_t r = 0; r < rows; r++) {
        const REAL *xr = x + r * n;
        REAL *yr = y + r * n;
        double max = -INFINITY;
        for (int64_t i = 0; i < n; i++)
            if (xr[i] > max) max = xr[i]; /* a NaN never wins a comparison: it reaches the sum below */
        double sum = 0.0;
        for (int64_t i = 0; i < n; i++) sum += exp((double)xr[i] - max); /* all -inf: exp(NaN), as torch gives */
        for (int64_t i = 0; i < n; i++) yr[i] = (REAL)(exp((double)xr[i] - max) / sum);
    }
}

void RW_NAME(rowwise_softmax_backward_cpu_)(const REAL *y, const REAL *dy, REAL *dx, int64_t rows, int64_t n) {
    for (int64_t r = 0; r < rows; r++) {
        const REAL *yr = y + r * n, *dyr = dy + r * n;
        double dot = 0.0;
        for (int64_t i = 0; i < n; i++) dot += (double)yr[i] * dyr[i];
        for (int64_t i = 0; i < n; i++) dx[r * n + i] = (REAL)(yr[i] * (dyr[i] - dot));
    }
}

/* mean and 1/sqrt(var + eps) of one row, var = mean((x - mean)^2): two passes, so a large mean costs no digits. */
static void RW_NAME(row_moments_)(const REAL *xr, int64_t n, double eps, double *mean, double *rstd) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) sum += xr[i];
    const double m = sum / (double)n;
    double squares = 0.0;
    for (int64_t i = 0; i < n; i++) squares += ((double)xr[i] - m) * ((double)xr[i] - m);
    *mean = m;
    *rstd = 1.0 / sqrt(squares / (double)n + eps);
}

void RW_NAME(rowwise_layer_norm_cpu_)(const REAL *x, const REAL *w, const REAL *b, double eps, REAL *y, REAL *mean,
                                      REAL *rstd, int64_t rows, int64_t n) {
    for (int64_t r = 0; r < rows; r++) {
        double m = NAN, s = NAN;
        if (n > 0) RW_NAME(row_moments_)(x + r * n, n, eps, &m, &s);
        mean[r] = (REAL)m;
        rstd[r] = (REAL)s;
        for (int64_t i = 0; i < n; i++) {
            double v = ((double)x[r * n + i] - m) * s;
            if (w != NULL) v *= w[i];
            if (b != NULL) v += b[i];
            y[r * n + i] = (REAL)v;
        }
    }
}

/* xhat = (x - mean) rstd, g = dy w:  dx = rstd (g - mean(g) - xhat mean(g xhat)). */
void RW_NAME(rowwise_layer_norm_backward_cpu_)(const REAL *dy, const REAL *x, const REAL *w, const REAL *mean,
                                               const REAL *rstd, REAL *dx, REAL *dw, REAL *db, int64_t rows,
                                               int64_t n) {
    double *sum_w = NULL, *sum_b = NULL;
    if (dw != NULL) sum_w = calloc((size_t)n + 1, sizeof(double));
    if (db != NULL) sum_b = calloc((size_t)n + 1, sizeof(double));
    for (int64_t r = 0; r < rows; r++) {
        const REAL *xr = x + r * n, *dyr = dy + r * n;
        const double m = mean[r], s = rstd[r];
        double sum_g = 0.0, sum_gx = 0.0;
        for (int64_t i = 0; i < n; i++) {
            const double xhat = ((double)xr[i] - m) * s, g = (double)dyr[i] * (w != NULL ? w[i] : 1.0);
            sum_g += g;
            sum_gx += g * xhat;
            if (sum_w != NULL) sum_w[i] += (double)dyr[i] * xhat;
            if (sum_b != NULL) sum_b[i] += dyr[i];
        }
        const double mean_g = sum_g / (double)n, mean_gx = sum_gx / (double)n;
        for (int64_t i = 0; i < n; i++) {
            const double xhat = ((double)xr[i] - m) * s, g = (double)dyr[i] * (w != NULL ? w[i] : 1.0);
            dx[r * n + i] = (REAL)(s * (g - mean_g - xhat * mean_gx));
        }
    }
    for (int64_t i = 0; i < n; i++) {
        if (sum_w != NULL) dw[i] = (REAL)sum_w[i];
        if (sum_b != NULL) db[i] = (REAL)sum_b[i];
    }
    free(sum_w);
    free(sum_b);
}

void RW_NAME(rowwise_rms_norm_cpu_)(const REAL *x, const REAL *w, double eps, REAL *y, REAL *rstd, int64_t rows,
                                    int64_t n) {
    for (int64_t r = 0; r < rows; r++) {
        const REAL *xr = x + r * n;
        double squares = 0.0;
        for (int64_t i = 0; i < n; i++) squares += (double)xr[i] * xr[i];
        const double s = n > 0 ? 1.0 / sqrt(squares / (double)n + eps) : NAN;
        rstd[r] = (REAL)s;
        for (int64_t i = 0; i < n; i++) y[r * n + i] = (REAL)((double)xr[i] * s * (w != NULL ? w[i] : 1.0));
    }
}

/* xhat = x rstd, g = dy w:  dx = rstd (g - xhat mean(g xhat)). */
void RW_NAME(rowwise_rms_norm_backward_cpu_)(const REAL *dy, const REAL *x, const REAL *w, const REAL *rstd, REAL *dx,
                                             REAL *dw, int64_t rows, int64_t n) {
    double *sum_w = dw != NULL ? calloc((size_t)n + 1, sizeof(double)) : NULL;
    for (int64_t r = 0; r < rows; r++) {
        const REAL *xr = x + r * n, *dyr = dy + r * n;
        const double s = rstd[r];
        double sum_gx = 0.0;
        for (int64_t i = 0; i < n; i++) {
            const double xhat = (double)xr[i] * s;
            sum_gx += (double)dyr[i] * (w != NULL ? w[i] : 1.0) * xhat;
            if (sum_w != NULL) sum_w[i] += (double)dyr[i] * xhat;
        }
        const double mean_gx = sum_gx / (double)n;
        for (int64_t i = 0; i < n; i++) {
            const double xhat = (double)xr[i] * s, g = (double)dyr[i] * (w != NULL ? w[i] : 1.0);
            dx[r * n + i] = (REAL)(s * (g - xhat * mean_gx));
        }
    }
    for (int64_t i = 0; sum_w != NULL && i < n; i++) dw[i] = (REAL)sum_w[i];
    free(sum_w);
}

#undef RW_NAME
#undef RW_CAT
#undef RW_CAT_
