/* bench_omp.c - the runtime workloads with OpenMP tasks (gcc -fopenmp).
 * 2 threads: the team of 2 (the calling thread is thread 0). */
#define _GNU_SOURCE
#include <omp.h>
#include <stdatomic.h>
#include <stdint.h>

#include "workloads.h"

BW_DEFINE_RANGES

static void tree_node(int d)
{
    if (d == 0)
        return;
#pragma omp task
    tree_node(d - 1);
#pragma omp task
    tree_node(d - 1);
#pragma omp taskwait
}

static long fib_task(int n)
{
    if (n < 2)
        return n;
    long x, y;
#pragma omp task shared(x)
    x = fib_task(n - 1);
#pragma omp task shared(y)
    y = fib_task(n - 2);
#pragma omp taskwait
    return x + y;
}

static _Atomic int g_flag;

int main(int argc, char **argv)
{
    int quick = bw_arg_quick(argc, argv);
    int reps = quick ? 3 : 7;
    uint64_t s[16];
    omp_set_dynamic(0);

    int depth = 19;
    double nodes = (double)((1L << (depth + 1)) - 1);
    for (int r = -1; r < reps; r++) {
        uint64_t t0 = bw_now_ns();
#pragma omp parallel num_threads(2)
#pragma omp single
        tree_node(depth);
        if (r >= 0)
            s[r] = bw_now_ns() - t0;
    }
    printf("RESULT spawn_tree %.1f Mtasks/s\n", nodes / ((double)bw_median(s, reps) / 1e3));

    int fn = 30;
    double serial = bw_time_fib_serial(fn, s, reps);
    printf("RESULT fib30_serial %.2f ms\n", serial / 1e6);
    for (int threads = 1; threads <= 2; threads++) {
        for (int r = 0; r < reps; r++) {
            long res = 0;
            uint64_t t0 = bw_now_ns();
#pragma omp parallel num_threads(threads)
#pragma omp single
            res = fib_task(fn);
            s[r] = bw_now_ns() - t0;
            if (res != bw_fib_serial(fn))
                fprintf(stderr, "fib wrong\n");
        }
        printf("RESULT fib30_%dt %.2f x_serial\n", threads, (double)bw_median(s, reps) / serial);
    }

    size_t maxn = bw_pfor_sizes[2];
    uint64_t *out = calloc(maxn, sizeof *out);
    bw_calibrate(out, 100000);
    for (int kind = 0; kind < 2; kind++) {
        for (int si = 0; si < 3; si++) {
            size_t n = bw_pfor_sizes[si];
            int calls = bw_pfor_calls(n, kind ? 6.0 : 0.5);
            if (quick)
                calls = calls / 4 + 1;
            uint64_t sp[16], sl[16];
            for (int r = 0; r < reps; r++) {
                uint64_t t0 = bw_now_ns();
                for (int c = 0; c < calls; c++)
                    (kind ? bw_range_heavy : bw_range_cheap)(out, 0, n);
                sl[r] = bw_now_ns() - t0;
                t0 = bw_now_ns();
                for (int c = 0; c < calls; c++) {
                    /* The same per-item code: each thread calls the range
                     * function on its static block. */
#pragma omp parallel num_threads(2)
                    {
                        int id = omp_get_thread_num(), nt = omp_get_num_threads();
                        size_t b = n * (size_t)id / (size_t)nt, e = n * (size_t)(id + 1) / (size_t)nt;
                        (kind ? bw_range_heavy : bw_range_cheap)(out, b, e);
                    }
                }
                sp[r] = bw_now_ns() - t0;
            }
            double plain = (double)bw_median(sl, reps), par = (double)bw_median(sp, reps);
            printf("RESULT pfor_%s_%zu %.2f x_plain (plain %.1f ns/item)\n",
                   kind ? "6ns" : "0.5ns", n, plain / par, plain / calls / (double)n);
        }
    }
    free(out);

    /* Wake: the team's second thread runs an empty piece after 5 ms idle. */
    int trips = quick ? 400 : 10000;
    uint64_t *lat = malloc(sizeof(uint64_t) * (size_t)trips);
    for (int i = 0; i < trips; i++) {
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
        atomic_store(&g_flag, 0);
        uint64_t t0 = bw_now_ns(), t1 = 0;
#pragma omp parallel num_threads(2)
        {
            if (omp_get_thread_num() == 1)
                atomic_store_explicit(&g_flag, 1, memory_order_release);
            else {
                while (!atomic_load_explicit(&g_flag, memory_order_acquire))
                    ;
                t1 = bw_now_ns();
            }
        }
        lat[i] = t1 - t0;
    }
    printf("RESULT wake_park %.2f us\n", (double)bw_median(lat, trips) / 1000.0);
    free(lat);
    return 0;
}
