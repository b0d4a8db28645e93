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

/* The same per-item code: each thread calls the range function on its
 * static block. */
static void par_calls(uint64_t *out, int heavy, size_t n, int calls, void *ctx)
{
    (void)ctx;
    for (int c = 0; c < calls; c++) {
#pragma omp parallel num_threads(2)
        {
            int id = omp_get_thread_num(), nt = omp_get_num_threads();
            size_t b = n * (size_t)id / (size_t)nt, e = n * (size_t)(id + 1) / (size_t)nt;
            (heavy ? bw_range_heavy : bw_range_cheap)(out, b, e);
        }
    }
}

int main(int argc, char **argv)
{
    int quick = bw_arg_quick(argc, argv);
    int reps = quick ? 3 : 7;
    uint64_t s[16];
    bw_print_info();
    int fn = 30;
    double serial = bw_time_fib_serial(fn, s, reps);   /* before any thread */
    printf("RESULT fib30_serial %.2f ms\n", serial / 1e6);
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
        char row[32];
        snprintf(row, sizeof row, "fib30_%dt", threads);
        bw_print_fib(row, (double)bw_median(s, reps), serial);
    }

    bw_pfor_table(quick, reps, par_calls, NULL);

    /* Wake: the team's second thread runs an empty piece after 5 ms idle;
     * thread 0 waits for it with the wait loop of every contender (bench_wait.h). */
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
                BENCH_WAIT_UNTIL(atomic_load_explicit(&g_flag, memory_order_acquire));
                t1 = bw_now_ns();
            }
        }
        lat[i] = t1 - t0;
    }
    printf("RESULT wake_park %.2f us\n", (double)bw_median(lat, trips) / 1000.0);
    free(lat);
    return 0;
}
