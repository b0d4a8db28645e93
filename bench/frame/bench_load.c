/*
 * bench_load.c - busy-looping processes for bench_frame --load. A process,
 * not a thread: the scheduler sees what it sees beside a game, another
 * program's thread that never blocks. Each child dies with its parent
 * (PR_SET_PDEATHSIG), so a killed benchmark leaves no spinning process.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include "bench_load.h"

#define MAX_LOAD 16

static pid_t kids[MAX_LOAD];
static int n_kids;

/* The child's whole life: only system calls that are safe after fork() in a
 * threaded program, then arithmetic on one word of its own stack. */
static void busy(pid_t parent)
{
#if defined(__linux__)
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    if (getppid() != parent)
        _exit(0);
    volatile uint64_t x = 1;
    for (;;)
        x = x * UINT64_C(6364136223846793005) + 1;
}

int bench_load_start(int n)
{
    pid_t me = getpid();
    if (n > MAX_LOAD)
        n = MAX_LOAD;
    for (int i = 0; i < n; i++) {
        pid_t p = fork();
        if (p == 0)
            busy(me);
        if (p < 0) {
            bench_load_stop();
            return -1;
        }
        kids[n_kids++] = p;
    }
    return 0;
}

/* CPU seconds a process has used: utime + stime of /proc/PID/stat (fields
 * 14 and 15, in clock ticks of 1/100 s on Linux). -1 where not readable. */
static double proc_cpu_s(pid_t pid)
{
#if defined(__linux__)
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* After the command's closing parenthesis: field 3 onwards. */
    char *p = NULL;
    for (char *q = buf; *q; q++)
        if (*q == ')')
            p = q;
    unsigned long ut = 0, st = 0;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
        return -1;
    return (double)(ut + st) / 100.0;
#else
    (void)pid;
    return -1;
#endif
}

void bench_load_sample(bench_cpu_sample *s)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    s->wall_s = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    s->self_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    s->load_s = 0;
    for (int i = 0; i < n_kids; i++) {
        double c = proc_cpu_s(kids[i]);
        if (c < 0) {
            s->load_s = -1;
            return;
        }
        s->load_s += c;
    }
}

void bench_load_add(bench_cpu_sample *total, const bench_cpu_sample *a, const bench_cpu_sample *b)
{
    total->wall_s += b->wall_s - a->wall_s;
    total->self_s += b->self_s - a->self_s;
    if (total->load_s >= 0)
        total->load_s = a->load_s < 0 || b->load_s < 0 ? -1 : total->load_s + b->load_s - a->load_s;
}

void bench_load_cpu_header(void)
{
    printf("\nCPUs had during the timed runs (CPU s / wall s; the load's at a 10 ms tick):\n");
    printf("%-22s %12s %12s %12s\n", "contender", "this process", "the load", "together");
}

void bench_load_cpu_row(const char *name, const bench_cpu_sample *t)
{
    if (t->wall_s <= 0)
        return;
    double self = t->self_s / t->wall_s;
    if (t->load_s < 0) {
        printf("%-22s %12.2f %12s %12s\n", name, self, "-", "-");
        return;
    }
    double load = t->load_s / t->wall_s;
    printf("%-22s %12.2f %12.2f %12.2f\n", name, self, load, self + load);
}

void bench_load_stop(void)
{
    for (int i = 0; i < n_kids; i++) {
        kill(kids[i], SIGKILL);
        waitpid(kids[i], NULL, 0);
    }
    n_kids = 0;
}
