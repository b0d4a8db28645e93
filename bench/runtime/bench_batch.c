/*
 * bench_batch.c - handing a frame's jobs over (issue 40): n empty tasks
 * spawned and waited for, n = 1,000 and 100,000, as
 *   - a loop of dagrt_spawn (2 threads: the main thread and 1 worker),
 *   - one dagrt_spawn_batch of the same tasks (the same runtime),
 *   - oneTBB's task_group, a loop of run() then wait() (an arena of 2),
 *   - Taskflow's silent_async, a loop then wait_for_all() (2 workers),
 * each timed from the first spawn to the end of the wait, about 200,000
 * tasks a sample, the contenders alternating round by round in one
 * process, medians of the rounds: ns a task and the ratios to the batch.
 * A peer whose library was not found at build time prints no row (its
 * line says so). usage: bench_batch [--quick]
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dagrt.h"
#include "workloads.h"

int bb_tbb_setup(int threads);
uint64_t bb_tbb_loop(size_t n, int inner);
void bb_tbb_teardown(void);
int bb_tf_setup(int threads);
uint64_t bb_tf_loop(size_t n, int inner);
void bb_tf_teardown(void);

static void noop(void *p) { (void)p; }

static void noop_range(void *arg, size_t b, size_t e)
{
    (void)arg;
    (void)b;
    (void)e;
}

static dagrt_task_desc desc[100000];

int main(int argc, char **argv)
{
    int reps = bw_arg_quick(argc, argv) ? 3 : 7;
    bw_print_info();
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 1;
    cfg.seed = 1;
    dagrt *rt = dagrt_create(&cfg);
    if (!rt) {
        fprintf(stderr, "bench_batch: dagrt_create failed\n");
        return 1;
    }
    bool tbb = bb_tbb_setup(2) != 0, tf = bb_tf_setup(2) != 0;
    printf("INFO threads dagrt: main + 1 worker; oneTBB: arena of 2 (caller takes part); "
           "Taskflow: 2 workers (caller waits)\n");
    if (!tbb)
        printf("INFO oneTBB not built (no libtbb-dev found at setup, or -Dbench_peers=disabled): its rows are skipped\n");
    if (!tf)
        printf("INFO Taskflow not built (no snapshot, or -Dbench_peers=disabled): its rows are skipped\n");
    for (size_t i = 0; i < 100000; i++)
        desc[i] = (dagrt_task_desc){noop, NULL};
    static const size_t sizes[2] = {1000, 100000};
    for (int k = 0; k < 2; k++) {
        size_t n = sizes[k];
        int inner = (int)(200000 / n);
        uint64_t loop[16], batch[16], tb[16], tw[16];
        for (int r = 0; r < reps + 1; r++) {   /* round 0 warms every contender up */
            dagrt_group g;
            dagrt_group_init(&g);
            uint64_t t0 = bw_now_ns();
            for (int i = 0; i < inner; i++) {
                for (size_t j = 0; j < n; j++)
                    dagrt_spawn(rt, &g, noop, NULL);
                dagrt_group_wait(rt, &g);
            }
            uint64_t t1 = bw_now_ns();
            for (int i = 0; i < inner; i++) {
                dagrt_spawn_batch(rt, &g, desc, n, 0);
                dagrt_group_wait(rt, &g);
            }
            uint64_t t2 = bw_now_ns();
            uint64_t tbb_ns = tbb ? bb_tbb_loop(n, inner) : 0;
            uint64_t tf_ns = tf ? bb_tf_loop(n, inner) : 0;
            if (r > 0) {
                loop[r - 1] = t1 - t0;
                batch[r - 1] = t2 - t1;
                tb[r - 1] = tbb_ns;
                tw[r - 1] = tf_ns;
            }
        }
        double per = (double)n * inner;
        double b = (double)bw_median(batch, reps) / per;
        double l = (double)bw_median(loop, reps) / per;
        printf("RESULT batch_%zu_dagrt_batch %.1f ns/task\n", n, b);
        printf("RESULT batch_%zu_dagrt_loop %.1f ns/task\n", n, l);
        printf("RESULT batch_%zu_loop_vs_batch %.2f x\n", n, l / b);
        if (tbb) {
            double t = (double)bw_median(tb, reps) / per;
            printf("RESULT batch_%zu_tbb_task_group %.1f ns/task\n", n, t);
            printf("RESULT batch_%zu_tbb_vs_batch %.2f x\n", n, t / b);
        }
        if (tf) {
            double t = (double)bw_median(tw, reps) / per;
            printf("RESULT batch_%zu_taskflow_silent_async %.1f ns/task\n", n, t);
            printf("RESULT batch_%zu_taskflow_vs_batch %.2f x\n", n, t / b);
        }
    }
    /* The asynchronous range: the call alone (what the caller pays). */
    size_t items = 1000000;
    uint64_t call[16];
    for (int r = 0; r < reps; r++) {
        dagrt_group g;
        dagrt_group_init(&g);
        dagrt_range_job j;
        uint64_t t0 = bw_now_ns();
        dagrt_parallel_for_async(rt, &g, &j, 0, items, 0, noop_range, NULL);
        uint64_t t1 = bw_now_ns();
        dagrt_group_wait(rt, &g);
        call[r] = t1 - t0;
    }
    double c = (double)bw_median(call, reps);
    printf("RESULT pfor_async_submit %.0f ns/call = %.6f ns/item (%zu items)\n", c, c / (double)items,
           items);
    bb_tbb_teardown();
    bb_tf_teardown();
    dagrt_destroy(rt);
    return 0;
}
