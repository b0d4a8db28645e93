/*
 * bench_blocking.c - the blocking workload: 10 batches of 256 tasks; every
 * 4th task (25%) waits D (50 us / 600 us / 2 ms) for an event that a timer
 * thread sets, the others compute for about 10 us. Run three ways, side by
 * side in one process:
 *   fiber  - all tasks DAGRT_SPAWN_FIBER; a waiting task suspends and its
 *            worker runs other tasks meanwhile;
 *   hold   - plain tasks; a waiting task blocks its thread on a condition
 *            variable (what a plain thread pool does);
 *   help   - plain tasks waiting with dagrt_event_wait, which helps: the
 *            thread runs other tasks nested on its stack while it waits.
 * Two task-executing threads: one worker plus the main thread, which helps
 * while it waits for each batch. Prints ms per run of 10 batches (median
 * and best of the runs) and the ratio hold/fiber.
 * usage: bench_blocking [runs]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "dagrt.h"

enum { BATCHES = 10, TASKS = 256 };
enum mode { FIBER, HOLD, HELP };
static const char *const mode_name[] = { "fiber", "hold", "help" };

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------ the timer */

typedef struct treq {
    uint64_t deadline;
    dagrt_event *ev;
} treq;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;        /* timer: new request */
    pthread_cond_t fired;     /* hold-mode waiters */
    treq q[TASKS];            /* FIFO: every delay is equal, so FIFO is deadline order */
    int head, tail;
    bool stop;
} T = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, {{0, 0}}, 0, 0, false };

static void timer_arm(dagrt_event *ev, uint64_t delay_ns)
{
    pthread_mutex_lock(&T.mu);
    T.q[T.tail % TASKS] = (treq){ now_ns() + delay_ns, ev };
    T.tail++;
    pthread_cond_signal(&T.cv);
    pthread_mutex_unlock(&T.mu);
}

static void *timer_main(void *arg)
{
    (void)arg;
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);   /* wake on time, not 50 us late */
    pthread_mutex_lock(&T.mu);
    for (;;) {
        while (!T.stop && T.head == T.tail)
            pthread_cond_wait(&T.cv, &T.mu);
        if (T.stop)
            break;
        treq r = T.q[T.head % TASKS];
        pthread_mutex_unlock(&T.mu);
        struct timespec ts = { (time_t)(r.deadline / 1000000000u), (long)(r.deadline % 1000000000u) };
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {}
        pthread_mutex_lock(&T.mu);
        T.head++;
        dagrt_event_set(r.ev);
        pthread_cond_broadcast(&T.fired);
    }
    pthread_mutex_unlock(&T.mu);
    return NULL;
}

/* ------------------------------------------------------------ the tasks */

static volatile uint64_t sink;
static long work_iters;   /* calibrated: ~10 us */

static void compute(void)
{
    uint64_t x = 88172645463325252u;
    for (long i = 0; i < work_iters; i++)
        x = x * 6364136223846793005u + 1442695040888963407u;
    sink = x;
}

typedef struct job {
    dagrt *rt;
    enum mode mode;
    uint64_t delay;
    dagrt_event ev[TASKS];
    atomic_int done;
} job;

typedef struct targ { job *j; int i; } targ;

static void task(void *p)
{
    targ *a = p;
    job *j = a->j;
    if (a->i % 4 != 0) {
        compute();
    } else {
        dagrt_event *ev = &j->ev[a->i];
        timer_arm(ev, j->delay);
        if (j->mode == HOLD) {
            pthread_mutex_lock(&T.mu);
            while (!dagrt_event_is_set(ev))
                pthread_cond_wait(&T.fired, &T.mu);
            pthread_mutex_unlock(&T.mu);
        } else {
            dagrt_event_wait(j->rt, ev);
        }
    }
    atomic_fetch_add_explicit(&j->done, 1, memory_order_relaxed);
}

static double run(dagrt *rt, enum mode m, uint64_t delay)
{
    static job j;
    static targ args[TASKS];
    j.rt = rt;
    j.mode = m;
    j.delay = delay;
    uint64_t t0 = now_ns();
    for (int b = 0; b < BATCHES; b++) {
        atomic_store(&j.done, 0);
        for (int i = 0; i < TASKS; i++) {
            dagrt_event_init(&j.ev[i], false);
            args[i] = (targ){ &j, i };
        }
        dagrt_group g;
        dagrt_group_init(&g);
        for (int i = 0; i < TASKS; i++)
            if (dagrt_spawn_ex(rt, &g, task, &args[i], m == FIBER ? DAGRT_SPAWN_FIBER : 0)) {
                fprintf(stderr, "spawn failed\n");
                exit(1);
            }
        dagrt_group_wait(rt, &g);
        if (atomic_load(&j.done) != TASKS) { fprintf(stderr, "lost tasks\n"); exit(1); }
    }
    return (double)(now_ns() - t0) / 1e6;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 5;
    if (runs < 1 || runs > 32) return 2;
    /* Calibrate ~10 us of work. */
    work_iters = 1000;
    for (;;) {
        uint64_t t0 = now_ns();
        compute();
        uint64_t dt = now_ns() - t0;
        if (dt > 2000000) { work_iters = (long)((double)work_iters * 10000.0 / (double)dt); break; }
        work_iters *= 4;
    }
    pthread_t tt;
    pthread_create(&tt, NULL, timer_main, NULL);
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 1;               /* + the main thread: 2 task threads */
    dagrt *rt = dagrt_create(&cfg);
    if (!rt) return 1;

    static const uint64_t delays[] = { 50000, 600000, 2000000 };
    printf("blocking workload: %d batches x %d tasks, 25%% wait D on a timer event, "
           "75%% compute ~10 us; 1 worker + main thread; ms per run (%d runs)\n",
           BATCHES, TASKS, runs);
    printf("%-8s %-6s %10s %10s %12s\n", "D", "mode", "median ms", "best ms", "hold/this");
    for (size_t d = 0; d < sizeof delays / sizeof delays[0]; d++) {
        double t[3][32];
        for (int m = 0; m < 3; m++) run(rt, (enum mode)m, delays[d]);   /* warm-up */
        for (int r = 0; r < runs; r++)
            for (int m = 0; m < 3; m++) t[m][r] = run(rt, (enum mode)m, delays[d]);
        double med[3], best[3];
        for (int m = 0; m < 3; m++) {
            qsort(t[m], (size_t)runs, sizeof(double), cmp_d);
            med[m] = t[m][runs / 2];
            best[m] = t[m][0];
        }
        for (int m = 0; m < 3; m++)
            printf("%-8s %-6s %10.2f %10.2f %12.2f\n",
                   d == 0 ? "50us" : d == 1 ? "600us" : "2ms", mode_name[m],
                   med[m], best[m], med[HOLD] / med[m]);
    }
    dagrt_destroy(rt);
    pthread_mutex_lock(&T.mu);
    T.stop = true;
    pthread_cond_signal(&T.cv);
    pthread_mutex_unlock(&T.mu);
    pthread_join(tt, NULL);
    return 0;
}
